//! The collectives on committed derived datatypes (bcast_typed, gather_typed, scatter_typed,
//! allgather_typed, alltoall_typed) against a sequential reference, on every algorithm of the
//! byte collective underneath: columns of row-major matrices gathered into rows and into the
//! columns of another matrix, scattered back, allgathered and exchanged (a distributed
//! transpose), and a derived struct with padding; then MPI's signature rule (a mismatch is an
//! error on every rank, promptly, also when only the counts differ) and the bounds checks (a
//! rank whose buffer does not fit its type fails before anything moves, and the others are told
//! which rank); and what MPI ignores (a non-root's receive side of a gather, its send side of
//! a scatter) is not read.

mod common;

use common::{check, each_rank, every_rank_count, roots, within};
use common::{ALLGATHER, ALLTOALL, BCAST, GATHER, SCATTER};
use rpar::prelude::*;
use rpar::{Alltoall, CommittedType, Error, TypeMap};
use std::time::Duration;

const RANKS: &[usize] = &[1, 2, 3, 4, 5, 8];
/// Each rank's matrix: `ROWS x COLS`, row-major.
const ROWS: usize = 3;
const COLS: usize = 8;

/// Element `(row, col)` of rank `rank`'s matrix.
fn entry(rank: usize, row: usize, col: usize) -> f64 {
    (rank * 1000 + row * COLS + col) as f64
}

fn matrix(rank: usize) -> Vec<f64> {
    (0..ROWS * COLS)
        .map(|i| entry(rank, i / COLS, i % COLS))
        .collect()
}

/// One column of a `ROWS x COLS` matrix (from its first element).
fn column() -> CommittedType {
    TypeMap::vector(ROWS, 1, COLS as isize, &f64::type_map())
        .unwrap()
        .commit()
}

/// A column whose extent is one element, so that successive elements are successive columns.
fn columns() -> CommittedType {
    TypeMap::vector(ROWS, 1, COLS as isize, &f64::type_map())
        .unwrap()
        .resized(0, 8)
        .unwrap()
        .commit()
}

/// `ROWS` contiguous doubles: a column received as a row.
fn row() -> CommittedType {
    TypeMap::contiguous(ROWS, &f64::type_map())
        .unwrap()
        .commit()
}

#[test]
fn bcast_of_a_column_lands_in_the_column_only() {
    let (col, rows) = (column(), row());
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        for root in roots(p) {
            for &algorithm in BCAST {
                let k = (root + 3) % COLS;
                // the root sends its column k; odd ranks receive it into column 1 of a zero
                // matrix, even ones as a row
                let mut m = if r == root {
                    matrix(r)
                } else {
                    vec![0.0; ROWS * COLS]
                };
                let want: Vec<f64> = if r == root {
                    matrix(r)
                } else if r % 2 == 1 {
                    (0..ROWS * COLS)
                        .map(|i| {
                            if i % COLS == 1 {
                                entry(root, i / COLS, k)
                            } else {
                                0.0
                            }
                        })
                        .collect()
                } else {
                    let mut v = vec![0.0; ROWS * COLS];
                    for (i, x) in v.iter_mut().take(ROWS).enumerate() {
                        *x = entry(root, i, k);
                    }
                    v
                };
                let (buf, ty) = match (r == root, r % 2) {
                    (true, _) => (&mut m[k..], &col),
                    (false, 1) => (&mut m[1..], &col),
                    (false, _) => (&mut m[..], &rows),
                };
                world
                    .using(algorithm)
                    .bcast(rpar::Typed::new(buf, ty, 1), root)?;
                check(&m, &want, || {
                    format!("bcast_typed {algorithm:?} p={p} root={root} rank={r}")
                })?;
            }
        }
        Ok(())
    });
}

#[test]
fn gather_and_scatter_of_columns_against_a_sequential_reference() {
    let (col, rows) = (column(), row());
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        let mine = matrix(r);
        let k = r % COLS; // rank r's column
        for root in roots(p) {
            for &algorithm in GATHER {
                let what = || format!("gather_typed {algorithm:?} p={p} root={root} rank={r}");
                // into rows: row i of the result is rank i's column
                let mut got = vec![-1.0; if r == root { p * ROWS } else { 0 }];
                world.using(algorithm).gather(
                    (
                        rpar::Typed::new(&mine[k..], &col, 1),
                        rpar::Typed::new(&mut got[..], &rows, 1),
                    ),
                    root,
                )?;
                if r == root {
                    let want: Vec<f64> = (0..p * ROWS)
                        .map(|i| entry(i / ROWS, i % ROWS, (i / ROWS) % COLS))
                        .collect();
                    check(&got, &want, what)?;
                }
                // into the columns of a ROWS x p matrix: column i is rank i's column
                let mut m = vec![-1.0; if r == root { ROWS * p } else { 0 }];
                let by_column = TypeMap::vector(ROWS, 1, p as isize, &f64::type_map())?
                    .resized(0, 8)?
                    .commit();
                world.using(algorithm).gather(
                    (
                        rpar::Typed::new(&mine[k..], &col, 1),
                        rpar::Typed::new(&mut m[..], &by_column, 1),
                    ),
                    root,
                )?;
                if r == root {
                    let want: Vec<f64> = (0..ROWS * p)
                        .map(|i| entry(i % p, i / p, (i % p) % COLS))
                        .collect();
                    check(&m, &want, what)?;
                }
            }
            for &algorithm in SCATTER {
                let what = || format!("scatter_typed {algorithm:?} p={p} root={root} rank={r}");
                // the root's columns 0..p (of a ROWS x p' matrix with p' = max(p, COLS)), one
                // to each rank, into column 2 of a zero matrix
                let wide = p.max(COLS);
                let send: Vec<f64> = (0..ROWS * wide).map(|i| (root * 1000 + i) as f64).collect();
                let spread = TypeMap::vector(ROWS, 1, wide as isize, &f64::type_map())?
                    .resized(0, 8)?
                    .commit();
                let mut m = vec![0.0; ROWS * COLS];
                world.using(algorithm).scatter(
                    (
                        rpar::Typed::new(&send[..], &spread, 1),
                        rpar::Typed::new(&mut m[2..], &col, 1),
                    ),
                    root,
                )?;
                let want: Vec<f64> = (0..ROWS * COLS)
                    .map(|i| {
                        if i % COLS == 2 {
                            send[(i / COLS) * wide + r]
                        } else {
                            0.0
                        }
                    })
                    .collect();
                check(&m, &want, what)?;
            }
        }
        Ok(())
    });
}

#[test]
fn allgather_and_alltoall_of_columns() {
    let (col, cols) = (column(), columns());
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        let mine = matrix(r);
        for &algorithm in ALLGATHER {
            // rank i's column i % COLS into column i of a ROWS x p matrix everywhere
            let by_column = TypeMap::vector(ROWS, 1, p as isize, &f64::type_map())?
                .resized(0, 8)?
                .commit();
            let mut m = vec![-1.0; ROWS * p];
            let k = r % COLS;
            world.using(algorithm).allgather((
                rpar::Typed::new(&mine[k..], &col, 1),
                rpar::Typed::new(&mut m[..], &by_column, 1),
            ))?;
            let want: Vec<f64> = (0..ROWS * p)
                .map(|i| entry(i % p, i / p, (i % p) % COLS))
                .collect();
            check(&m, &want, || {
                format!("allgather_typed {algorithm:?} p={p} rank={r}")
            })?;
        }
        if p > COLS {
            return Ok(());
        }
        for &algorithm in ALLTOALL {
            // a distributed transpose: rank r sends rank j its column j, received as row j
            let mut got = vec![-1.0; p * ROWS];
            let result = world.using(algorithm).alltoall((
                rpar::Typed::new(&mine[..], &cols, 1),
                rpar::Typed::new(&mut got[..], &row(), 1),
            ));
            if algorithm == Alltoall::Hypercube && !p.is_power_of_two() {
                assert!(matches!(result, Err(Error::InvalidArgument { .. })));
                continue;
            }
            result?;
            let want: Vec<f64> = (0..p * ROWS)
                .map(|i| entry(i / ROWS, i % ROWS, r))
                .collect();
            check(&got, &want, || {
                format!("alltoall_typed {algorithm:?} p={p} rank={r}")
            })?;
        }
        Ok(())
    });
}

#[test]
fn what_mpi_ignores_is_not_read() {
    // MPI ignores the receive arguments of a gather and the send arguments of a scatter at
    // the other ranks than the root: here they name other basic types, no buffer, and a count
    // whose bytes overflow usize
    let (col, rows) = (column(), row());
    let ignored = TypeMap::contiguous(2, &i64::type_map()).unwrap().commit();
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        let mine = matrix(r);
        let k = r % COLS;
        for root in roots(p) {
            for &algorithm in GATHER {
                let send = (&mine[k..], &col, 1);
                if r != root {
                    let recv: (&mut [i64], _, _) = (&mut [], &ignored, usize::MAX);
                    world.using(algorithm).gather(
                        (
                            rpar::Typed::new(send.0, send.1, send.2),
                            rpar::Typed::new(recv.0, recv.1, recv.2),
                        ),
                        root,
                    )?;
                    continue;
                }
                let mut got = vec![-1.0; p * ROWS];
                world.using(algorithm).gather(
                    (
                        rpar::Typed::new(send.0, send.1, send.2),
                        rpar::Typed::new(&mut got[..], &rows, 1),
                    ),
                    root,
                )?;
                let want: Vec<f64> = (0..p * ROWS)
                    .map(|i| entry(i / ROWS, i % ROWS, (i / ROWS) % COLS))
                    .collect();
                check(&got, &want, || {
                    format!("gather_typed {algorithm:?} p={p} root={root}")
                })?;
            }
            for &algorithm in SCATTER {
                let all: Vec<f64> = (0..p * ROWS).map(|i| (root * 1000 + i) as f64).collect();
                let mut m = vec![0.0; ROWS];
                let recv = (&mut m[..], &rows, 1);
                if r == root {
                    world.using(algorithm).scatter(
                        (
                            rpar::Typed::new(&all[..], &rows, 1),
                            rpar::Typed::new(recv.0, recv.1, recv.2),
                        ),
                        root,
                    )?;
                } else {
                    let send: (&[i64], _, _) = (&[], &ignored, usize::MAX);
                    world.using(algorithm).scatter(
                        (
                            rpar::Typed::new(send.0, send.1, send.2),
                            rpar::Typed::new(recv.0, recv.1, recv.2),
                        ),
                        root,
                    )?;
                }
                check(&m, &all[r * ROWS..(r + 1) * ROWS].to_vec(), || {
                    format!("scatter_typed {algorithm:?} p={p} root={root} rank={r}")
                })?;
            }
        }
        Ok(())
    });
}

/// A struct with padding between its fields: only the data travels.
#[derive(Datatype, Clone, Copy, Debug, PartialEq, Default)]
struct Sample {
    id: u16,
    value: f64,
    flag: bool,
}

#[test]
fn structs_with_padding_gathered_by_their_type_map() -> Result<(), Error> {
    let sample = Sample::type_map().commit();
    // every other sample of four
    let every_other = TypeMap::vector(2, 1, 2, &Sample::type_map())?.commit();
    let got = rpar::run(3, |world| {
        let r = world.rank() as u16;
        let mine: Vec<Sample> = (0..4)
            .map(|i| Sample {
                id: 10 * r + i,
                value: f64::from(i) / 2.0,
                flag: i % 2 == 1,
            })
            .collect();
        let mut all = vec![Sample::default(); 6];
        world.gather(
            (
                rpar::Typed::new(&mine, &every_other, 1),
                rpar::Typed::new(&mut all, &sample, 2),
            ),
            1,
        )?;
        let mut everywhere = vec![Sample::default(); 6];
        world.allgather((
            rpar::Typed::new(&mine, &every_other, 1),
            rpar::Typed::new(&mut everywhere, &sample, 2),
        ))?;
        Ok((all, everywhere))
    })
    .unwrap();
    let want: Vec<Sample> = (0..3u16)
        .flat_map(|r| {
            [0u16, 2].map(|i| Sample {
                id: 10 * r + i,
                value: f64::from(i) / 2.0,
                flag: false,
            })
        })
        .collect();
    assert_eq!(got[1].0, want);
    assert!(got.iter().all(|(_, e)| *e == want));
    Ok(())
}

fn error_on_every_rank<R>(results: Vec<rpar::Result<R>>) -> Vec<Error> {
    results
        .into_iter()
        .map(|r| match r {
            Ok(_) => panic!("a rank did not fail"),
            Err(e) => e,
        })
        .collect()
}

#[test]
fn signatures_that_disagree_are_an_error_on_every_rank() {
    let f64s = TypeMap::contiguous(ROWS, &f64::type_map())
        .unwrap()
        .commit();
    let i64s = TypeMap::contiguous(ROWS, &i64::type_map())
        .unwrap()
        .commit();
    let col = column();
    // rank 2 receives i64s where the others send f64s: the same bytes, other basic types
    let gathered = each_rank(4, |world| {
        let r = world.rank();
        let mine = matrix(r);
        let mut all = vec![0.0f64; 4 * ROWS];
        let mut ints = vec![0i64; 4 * ROWS];
        if r == 2 {
            world.gather(
                (
                    rpar::Typed::new(&mine, &col, 1),
                    rpar::Typed::new(&mut ints, &i64s, 1),
                ),
                2,
            )
        } else {
            world.gather(
                (
                    rpar::Typed::new(&mine, &col, 1),
                    rpar::Typed::new(&mut all, &f64s, 1),
                ),
                2,
            )
        }
    });
    // one rank's count is one element short
    let bcast = each_rank(4, |world| {
        let mut v = matrix(world.rank());
        let count = if world.rank() == 3 { ROWS - 1 } else { ROWS };
        let one = f64::type_map().commit();
        world.bcast(rpar::Typed::new(&mut v, &one, count), 0)
    });
    for e in error_on_every_rank(gathered) {
        assert!(
            matches!(e, Error::TypeMismatch { source_rank: 0, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("at rank 2"), "{e}");
    }
    for e in error_on_every_rank(bcast) {
        match e {
            Error::TypeMismatch {
                source_rank: 0,
                sent,
                expected,
            } => {
                assert!(sent.contains("3 basic values"), "{sent}");
                assert!(
                    expected.contains("2 basic values") && expected.contains("rank 3"),
                    "{expected}"
                );
            }
            other => panic!("{other}"),
        }
    }
}

#[test]
fn counts_that_disagree_over_the_same_basic_types_are_an_error_on_every_rank() {
    // every rank's type is f64 (the same basic-type sequence, the same primitive period): the
    // signatures differ only in their length, and so in their bytes; rank 3 passes one more
    const ODD: usize = 3;
    let one = f64::type_map().commit();
    let calls = ["bcast", "gather", "scatter", "allgather", "alltoall"];
    let got: Vec<Vec<rpar::Result<()>>> = within(
        Duration::from_secs(60),
        "typed collectives whose counts disagree",
        move || {
            (0..5)
                .map(|c| {
                    each_rank(4, |world| {
                        let n = if world.rank() == ODD { 3 } else { 2 };
                        let (mut buf, mut out) = (vec![1.0f64; 16], vec![0.0f64; 16]);
                        match c {
                            0 => world.bcast(rpar::Typed::new(&mut buf, &one, n), 0),
                            1 => world.gather(
                                (
                                    rpar::Typed::new(&buf, &one, n),
                                    rpar::Typed::new(&mut out, &one, 2),
                                ),
                                0,
                            ),
                            2 => world.scatter(
                                (
                                    rpar::Typed::new(&buf, &one, 2),
                                    rpar::Typed::new(&mut out, &one, n),
                                ),
                                0,
                            ),
                            3 => world.allgather((
                                rpar::Typed::new(&buf, &one, n),
                                rpar::Typed::new(&mut out, &one, 2),
                            )),
                            _ => world.alltoall((
                                rpar::Typed::new(&buf, &one, 2),
                                rpar::Typed::new(&mut out, &one, n),
                            )),
                        }
                    })
                })
                .collect()
        },
    );
    // per rank, each call's result
    let got: Vec<Vec<rpar::Result<()>>> = (0..4)
        .map(|r| got.iter().map(|by_rank| by_rank[r].clone()).collect())
        .collect();
    for (r, results) in got.into_iter().enumerate() {
        for (call, result) in calls.iter().zip(results) {
            match result {
                Err(Error::TypeMismatch {
                    source_rank,
                    sent,
                    expected,
                }) => assert!(
                    source_rank == ODD || expected.contains(&format!("rank {ODD}")),
                    "{call} at rank {r}: {sent} against {expected}"
                ),
                other => panic!("{call} at rank {r}: expected a type mismatch, got {other:?}"),
            }
        }
    }
}

#[test]
fn a_buffer_that_does_not_fit_fails_before_anything_moves() {
    let col = column();
    let got = rpar::run(3, |world| {
        let r = world.rank();
        // rank 1's buffer ends one row early: its column reaches past it
        let mut m = if r == 1 {
            vec![7.0; (ROWS - 1) * COLS]
        } else {
            matrix(r)
        };
        let result = world.bcast(rpar::Typed::new(&mut m, &col, 1), 0);
        Ok((result, m))
    })
    .unwrap();
    for (r, (result, m)) in got.into_iter().enumerate() {
        match (r, result) {
            (
                1,
                Err(Error::BufferOutOfBounds {
                    call: "bcast_typed",
                    ..
                }),
            ) => {
                assert!(m.iter().all(|&x| x == 7.0), "rank 1's buffer was written");
            }
            (_, Err(Error::InvalidArgument { message, .. })) => {
                assert!(message.contains("rank 1"), "{message}")
            }
            (r, other) => panic!("rank {r}: {other:?}"),
        }
    }
}
