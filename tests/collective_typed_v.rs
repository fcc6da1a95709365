//! The v-collectives on committed derived datatypes (gatherv_typed, scatterv_typed,
//! allgatherv_typed, alltoallv_typed) against a sequential reference, on every algorithm of
//! the byte v-collective underneath, for p in 1..=9, 16 and 33 and several roots: per-pair
//! counts that include 0, non-contiguous types (a matrix column resized to one element, so that
//! successive elements interleave, and a vector resized to leave a hole), displacements out of
//! rank order with gaps that must stay untouched; the reference places each value by the
//! element positions the test computes itself, not by packing. Then a derived struct with
//! padding, and the errors: a signature mismatch of one pair (the same error on every rank),
//! counts of the wrong length, overlapping receive blocks (by element position, and by bytes
//! only, for interleaved columns), a type or a block reaching outside its buffer — each rank
//! gets an error, promptly.

mod common;

use common::{check, each_rank, every_rank_count, roots, within};
use common::{ALLGATHER, ALLTOALL, GATHER, SCATTER};
use rpar::prelude::*;
use rpar::{Alltoall, CommittedType, Error, TypeMap, Typed};
use std::time::Duration;

const RANKS: &[usize] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 33];
/// Rows of the matrices whose columns are sent.
const ROWS: usize = 3;

/// One f64.
fn one() -> CommittedType {
    f64::type_map().commit()
}

/// The value at index `x` of rank `rank`'s send buffer.
fn value(rank: usize, x: usize) -> f64 {
    (rank * 100_000 + x) as f64
}

/// How many f64 values rank `i` sends rank `j` (a multiple of every kind's values per
/// element: 0, 6 or 12).
fn values(i: usize, j: usize, seed: usize) -> usize {
    6 * ((i + 2 * j + seed) % 3)
}

/// The element types the sweeps use, all of f64.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// One f64: element `k` is value `k`.
    One,
    /// A column of a `ROWS x n` row-major matrix, resized to one value: element `k` is
    /// column `k` (interleaved with its neighbours: its true extent exceeds its extent).
    Column,
    /// Values 0 and 2 of every four (a vector resized to 4 values): a hole and a tail.
    Spread,
}

use Kind::{Column, One, Spread};

/// Pairs of (send, receive) kinds the sweeps try.
const PAIRS: &[(Kind, Kind)] = &[
    (One, Column),
    (Column, Spread),
    (Spread, One),
    (Column, Column),
];

impl Kind {
    /// Values per element.
    fn per(self) -> usize {
        match self {
            One => 1,
            Column => ROWS,
            Spread => 2,
        }
    }

    /// The committed type for a buffer of `n` element positions, and that buffer's length.
    fn ty(self, n: usize) -> (CommittedType, usize) {
        let f = f64::type_map();
        let n = n.max(1);
        match self {
            One => (f.commit(), n),
            Column => {
                let col = TypeMap::vector(ROWS, 1, n as isize, &f).unwrap();
                (col.resized(0, 8).unwrap().commit(), ROWS * n)
            }
            Spread => {
                let v = TypeMap::vector(2, 1, 2, &f).unwrap();
                (v.resized(0, 32).unwrap().commit(), 4 * n)
            }
        }
    }

    /// The buffer indices element `k` touches, in type-map order, in a buffer of `n` positions.
    fn idx(self, n: usize, k: usize) -> Vec<usize> {
        let n = n.max(1);
        match self {
            One => vec![k],
            Column => (0..ROWS).map(|row| k + row * n).collect(),
            Spread => vec![4 * k, 4 * k + 2],
        }
    }
}

/// One side of a call as the test lays it out: blocks of `counts` elements of `kind`.
struct TSide {
    kind: Kind,
    ty: CommittedType,
    /// Element positions the buffer has room for.
    n: usize,
    len: usize,
    counts: Vec<usize>,
    displs: Vec<usize>,
}

impl TSide {
    /// Blocks in reverse rank order, with an empty element position before each: out of order,
    /// with gaps.
    fn scattered(kind: Kind, counts: Vec<usize>) -> TSide {
        let mut displs = vec![0; counts.len()];
        let mut at = 0;
        for i in (0..counts.len()).rev() {
            at += 1;
            displs[i] = at;
            at += counts[i];
        }
        TSide::new(kind, counts, displs, at)
    }

    /// One block of `count` elements from position 0.
    fn single(kind: Kind, count: usize) -> TSide {
        TSide::new(kind, vec![count], vec![0], count)
    }

    fn new(kind: Kind, counts: Vec<usize>, displs: Vec<usize>, n: usize) -> TSide {
        let (ty, len) = kind.ty(n);
        TSide {
            kind,
            ty,
            n,
            len,
            counts,
            displs,
        }
    }

    /// The buffer indices of block `b`, in the order its values travel.
    fn indices(&self, b: usize) -> Vec<usize> {
        (0..self.counts[b])
            .flat_map(|k| self.kind.idx(self.n, self.displs[b] + k))
            .collect()
    }

    /// Rank `rank`'s send buffer.
    fn send_buffer(&self, rank: usize) -> Vec<f64> {
        (0..self.len).map(|x| value(rank, x)).collect()
    }

    /// The values of block `b` of rank `rank`'s send buffer.
    fn sent(&self, rank: usize, b: usize) -> Vec<f64> {
        self.indices(b)
            .into_iter()
            .map(|x| value(rank, x))
            .collect()
    }

    /// Puts `values` where block `b` of this receive side takes them.
    fn place(&self, buf: &mut [f64], b: usize, values: &[f64]) {
        let at = self.indices(b);
        assert_eq!(at.len(), values.len(), "the test's own counts disagree");
        for (x, &v) in at.into_iter().zip(values) {
            buf[x] = v;
        }
    }
}

/// Counts in elements of `kind` for the given numbers of values.
fn elements(kind: Kind, vals: impl Iterator<Item = usize>) -> Vec<usize> {
    vals.map(|v| v / kind.per()).collect()
}

#[test]
fn gatherv_and_scatterv_against_a_sequential_reference() {
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        for root in roots(p) {
            for (seed, &(sk, rk)) in PAIRS.iter().enumerate() {
                let v = |i: usize, j: usize| values(i, j, seed + root);
                // gatherv: rank i sends v(i, root) values as one block
                let sends: Vec<TSide> = (0..p)
                    .map(|i| TSide::single(sk, v(i, root) / sk.per()))
                    .collect();
                let recv = TSide::scattered(rk, elements(rk, (0..p).map(|i| v(i, root))));
                let mut want = vec![-1.0; recv.len];
                for (i, s) in sends.iter().enumerate() {
                    recv.place(&mut want, i, &s.sent(i, 0));
                }
                let mine = &sends[r];
                let buf = mine.send_buffer(r);
                for &algorithm in GATHER {
                    let send = (&buf[..], &mine.ty, mine.counts[0]);
                    if r != root {
                        // MPI ignores a non-root's receive arguments
                        let ignored: (&mut [f64], _, &[usize], &[usize]) =
                            (&mut [], &recv.ty, &[], &[]);
                        world.using(algorithm).gather(
                            (
                                rpar::Typed::new(send.0, send.1, send.2),
                                rpar::Typed::varying(ignored.0, ignored.1, ignored.2, ignored.3),
                            ),
                            root,
                        )?;
                        continue;
                    }
                    let mut got = vec![-1.0; recv.len];
                    let into = (&mut got[..], &recv.ty, &recv.counts[..], &recv.displs[..]);
                    world.using(algorithm).gather(
                        (
                            rpar::Typed::new(send.0, send.1, send.2),
                            rpar::Typed::varying(into.0, into.1, into.2, into.3),
                        ),
                        root,
                    )?;
                    check(&got, &want, || {
                        format!("gatherv_typed {algorithm:?} {sk:?}->{rk:?} p={p} root={root}")
                    })?;
                }
                // scatterv: the root sends rank j v(root, j) values, received as one block
                let send = TSide::scattered(sk, elements(sk, (0..p).map(|j| v(root, j))));
                let mine = TSide::single(rk, v(root, r) / rk.per());
                let mut want = vec![-1.0; mine.len];
                mine.place(&mut want, 0, &send.sent(root, r));
                let buf = send.send_buffer(root);
                for &algorithm in SCATTER {
                    let mut got = vec![-1.0; mine.len];
                    let into = (&mut got[..], &mine.ty, mine.counts[0]);
                    if r == root {
                        let from = (&buf[..], &send.ty, &send.counts[..], &send.displs[..]);
                        world.using(algorithm).scatter(
                            (
                                rpar::Typed::varying(from.0, from.1, from.2, from.3),
                                rpar::Typed::new(into.0, into.1, into.2),
                            ),
                            root,
                        )?;
                    } else {
                        // MPI ignores a non-root's send arguments
                        let ignored: (&[f64], _, &[usize], &[usize]) = (&[], &send.ty, &[], &[]);
                        world.using(algorithm).scatter(
                            (
                                rpar::Typed::varying(ignored.0, ignored.1, ignored.2, ignored.3),
                                rpar::Typed::new(into.0, into.1, into.2),
                            ),
                            root,
                        )?;
                    }
                    check(&got, &want, || {
                        format!(
                            "scatterv_typed {algorithm:?} {sk:?}->{rk:?} p={p} root={root} \
                             rank={r}"
                        )
                    })?;
                }
            }
        }
        Ok(())
    });
}

#[test]
fn allgatherv_and_alltoallv_against_a_sequential_reference() {
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        for (seed, &(sk, rk)) in PAIRS.iter().enumerate() {
            let v = |i: usize, j: usize| values(i, j, seed);
            // allgatherv: rank i sends v(i, 0) values to everyone
            let sends: Vec<TSide> = (0..p)
                .map(|i| TSide::single(sk, v(i, 0) / sk.per()))
                .collect();
            let recv = TSide::scattered(rk, elements(rk, (0..p).map(|i| v(i, 0))));
            let mut want = vec![-1.0; recv.len];
            for (i, s) in sends.iter().enumerate() {
                recv.place(&mut want, i, &s.sent(i, 0));
            }
            let buf = sends[r].send_buffer(r);
            for &algorithm in ALLGATHER {
                let mut got = vec![-1.0; recv.len];
                let send = (&buf[..], &sends[r].ty, sends[r].counts[0]);
                let into = (&mut got[..], &recv.ty, &recv.counts[..], &recv.displs[..]);
                world.using(algorithm).allgather((
                    rpar::Typed::new(send.0, send.1, send.2),
                    rpar::Typed::varying(into.0, into.1, into.2, into.3),
                ))?;
                check(&got, &want, || {
                    format!("allgatherv_typed {algorithm:?} {sk:?}->{rk:?} p={p} rank={r}")
                })?;
            }
            // alltoallv: rank i sends rank j v(i, j) values
            let sends: Vec<TSide> = (0..p)
                .map(|i| TSide::scattered(sk, elements(sk, (0..p).map(|j| v(i, j)))))
                .collect();
            let recv = TSide::scattered(rk, elements(rk, (0..p).map(|i| v(i, r))));
            let mut want = vec![-1.0; recv.len];
            for (i, s) in sends.iter().enumerate() {
                recv.place(&mut want, i, &s.sent(i, r));
            }
            let mine = &sends[r];
            let buf = mine.send_buffer(r);
            for &algorithm in ALLTOALL {
                let mut got = vec![-1.0; recv.len];
                let send = (&buf[..], &mine.ty, &mine.counts[..], &mine.displs[..]);
                let into = (&mut got[..], &recv.ty, &recv.counts[..], &recv.displs[..]);
                let result = world.using(algorithm).alltoall((
                    rpar::Typed::varying(send.0, send.1, send.2, send.3),
                    rpar::Typed::varying(into.0, into.1, into.2, into.3),
                ));
                if algorithm == Alltoall::Hypercube && !p.is_power_of_two() {
                    assert!(matches!(result, Err(Error::InvalidArgument { .. })));
                    continue;
                }
                result?;
                check(&got, &want, || {
                    format!("alltoallv_typed {algorithm:?} {sk:?}->{rk:?} p={p} rank={r}")
                })?;
            }
        }
        Ok(())
    });
}

/// A struct with padding between its fields: only the data travels.
#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Sample {
    id: u16,
    value: f64,
    flag: bool,
}

const UNSET: Sample = Sample {
    id: u16::MAX,
    value: -1.0,
    flag: false,
};

#[test]
fn structs_with_padding_by_their_type_map() {
    let sample = Sample::type_map().commit();
    // every other sample
    let every_other = TypeMap::vector(1, 1, 1, &Sample::type_map())
        .unwrap()
        .resized(0, 2 * std::mem::size_of::<Sample>() as isize)
        .unwrap()
        .commit();
    every_rank_count(&[1, 2, 3, 5], |world| {
        let (p, r) = (world.size(), world.rank());
        let of = |rank: usize, i: usize| Sample {
            id: (100 * rank + i) as u16,
            value: i as f64 / 2.0,
            flag: i % 2 == 1,
        };
        // rank i sends its samples 0, 2, .. 2 i (i + 1 of them); they land in rank order
        // with a gap before each block
        let mine: Vec<Sample> = (0..2 * r + 1).map(|i| of(r, i)).collect();
        let counts: Vec<usize> = (0..p).map(|i| i + 1).collect();
        let displs: Vec<usize> = (0..p).map(|i| i * (i + 1) / 2 + i + 1).collect();
        let n = displs[p - 1] + counts[p - 1];
        let mut want = vec![UNSET; n];
        for i in 0..p {
            for k in 0..=i {
                want[displs[i] + k] = of(i, 2 * k);
            }
        }
        for root in roots(p) {
            let mut got = vec![UNSET; n];
            world.gather(
                (
                    rpar::Typed::new(&mine, &every_other, r + 1),
                    rpar::Typed::varying(&mut got, &sample, &counts, &displs),
                ),
                root,
            )?;
            if r == root {
                check(&got, &want, || format!("gatherv_typed p={p} root={root}"))?;
            }
        }
        let mut got = vec![UNSET; n];
        world.allgather((
            rpar::Typed::new(&mine, &every_other, r + 1),
            rpar::Typed::varying(&mut got, &sample, &counts, &displs),
        ))?;
        check(&got, &want, || format!("allgatherv_typed p={p} rank={r}"))
    });
}

/// Each rank's error: every rank must have failed.
fn error_on_every_rank<R>(results: Vec<rpar::Result<R>>) -> Vec<Error> {
    results
        .into_iter()
        .enumerate()
        .map(|(r, result)| match result {
            Ok(_) => panic!("rank {r} did not fail"),
            Err(e) => e,
        })
        .collect()
}

/// Runs `f` on `p` ranks, promptly, and returns each rank's result of the call.
fn each_rank_within<R: Send + 'static>(
    p: usize,
    what: &'static str,
    f: impl Fn(&Comm) -> rpar::Result<R> + Sync + Send + 'static,
) -> Vec<rpar::Result<R>> {
    within(Duration::from_secs(60), what, move || each_rank(p, f))
}

#[test]
fn a_mismatch_of_one_pair_is_the_same_error_on_every_rank() {
    const P: usize = 5;
    // alltoallv: rank 4 expects one more value from rank 2 than rank 2 sends it
    let got = each_rank_within(P, "alltoallv_typed with a mismatch", move |world| {
        let r = world.rank();
        let send = vec![1.0f64; 2 * P];
        let (sc, sd): (Vec<usize>, Vec<usize>) = (vec![2; P], (0..P).map(|j| 2 * j).collect());
        let mut rc = vec![2; P];
        if r == 4 {
            rc[2] = 3;
        }
        let rd: Vec<usize> = (0..P).map(|i| 3 * i).collect();
        let mut recv = vec![0.0f64; 3 * P];
        world.alltoall((
            rpar::Typed::varying(&send, &one(), &sc, &sd),
            rpar::Typed::varying(&mut recv, &one(), &rc, &rd),
        ))
    });
    let errors = error_on_every_rank(got);
    for e in &errors {
        match e {
            Error::TypeMismatch {
                source_rank: 2,
                expected,
                ..
            } => assert!(expected.contains("at rank 4"), "{e}"),
            other => panic!("{other}"),
        }
        assert_eq!(e.to_string(), errors[0].to_string());
    }
    // gatherv: the root receives every block as i64 where the ranks send f64 (the same bytes)
    let got = each_rank_within(P, "gatherv_typed with a mismatch", move |world| {
        let r = world.rank();
        let send = [r as f64; 2];
        let mut recv = vec![0i64; 2 * P];
        let (counts, displs): (Vec<usize>, Vec<usize>) =
            (vec![2; P], (0..P).map(|i| 2 * i).collect());
        world.gather(
            (
                rpar::Typed::new(&send, &one(), 2),
                rpar::Typed::varying(&mut recv, &i64::type_map().commit(), &counts, &displs),
            ),
            3,
        )
    });
    let errors = error_on_every_rank(got);
    for e in &errors {
        assert!(
            matches!(e, Error::TypeMismatch { source_rank: 0, .. }),
            "{e}"
        );
        assert_eq!(e.to_string(), errors[0].to_string());
    }
}

/// Checks that `rank` failed with an error `mine` accepts, and every other rank with an
/// `InvalidArgument` that names it.
fn failed_at<R: std::fmt::Debug>(
    results: Vec<rpar::Result<R>>,
    rank: usize,
    mine: impl Fn(&Error) -> bool,
) {
    for (r, e) in error_on_every_rank(results).into_iter().enumerate() {
        if r == rank {
            assert!(mine(&e), "rank {r}: {e:?}");
        } else {
            match &e {
                Error::InvalidArgument { message, .. } => {
                    assert!(
                        message.contains(&format!("rank {rank}")),
                        "rank {r}: {message}"
                    )
                }
                other => panic!("rank {r}: {other:?}"),
            }
        }
    }
}

fn invalid_saying(e: &Error, words: &str) -> bool {
    matches!(e, Error::InvalidArgument { message, .. } if message.contains(words))
}

#[test]
fn counts_of_the_wrong_length_are_an_error_on_every_rank() {
    const P: usize = 4;
    // the root of a gatherv passes one count too few
    let got = each_rank_within(P, "gatherv_typed with short counts", move |world| {
        let mut recv = vec![0.0f64; P];
        let counts = vec![1; if world.rank() == 2 { P - 1 } else { P }];
        let displs: Vec<usize> = (0..P).collect();
        world.gather(
            (
                rpar::Typed::new(&[1.0f64], &one(), 1),
                rpar::Typed::varying(&mut recv, &one(), &counts, &displs),
            ),
            2,
        )
    });
    failed_at(got, 2, |e| {
        invalid_saying(e, "receive counts has 3 entries")
    });
    // rank 1 of an alltoallv passes one send displacement too many
    let got = each_rank_within(P, "alltoallv_typed with long displs", move |world| {
        let send = vec![1.0f64; P + 1];
        let sd: Vec<usize> = (0..if world.rank() == 1 { P + 1 } else { P }).collect();
        let (counts, rd) = (vec![1; P], (0..P).collect::<Vec<_>>());
        let mut recv = vec![0.0f64; P];
        world.alltoall((
            rpar::Typed::varying(&send, &one(), &counts, &sd),
            rpar::Typed::varying(&mut recv, &one(), &counts, &rd),
        ))
    });
    failed_at(got, 1, |e| {
        invalid_saying(e, "send displacements has 5 entries")
    });
    // a scatterv's root passes no displacements at all
    let got = each_rank_within(P, "scatterv_typed without displs", move |world| {
        let mut recv = [0.0f64];
        let send = vec![1.0f64; P];
        world.scatter(
            (
                rpar::Typed::varying(&send, &one(), &[1; P], &[]),
                rpar::Typed::new(&mut recv, &one(), 1),
            ),
            0,
        )
    });
    failed_at(got, 0, |e| {
        invalid_saying(e, "send displacements has 0 entries")
    });
}

#[test]
fn overlapping_receive_blocks_are_an_error_on_every_rank() {
    const P: usize = 3;
    // rank 1's blocks of rank 0 and rank 2 share element position 1
    let got = each_rank_within(
        P,
        "allgatherv_typed with overlapping blocks",
        move |world| {
            let mut recv = vec![-1.0f64; 8];
            let displs = if world.rank() == 1 {
                [0, 3, 1]
            } else {
                [0, 2, 4]
            };
            let result = world.allgather((
                rpar::Typed::new(&[7.0f64; 2], &one(), 2),
                rpar::Typed::varying(&mut recv, &one(), &[2; P], &displs),
            ));
            assert!(recv.iter().all(|&x| x == -1.0), "written before the checks");
            result
        },
    );
    failed_at(got, 1, |e| invalid_saying(e, "overlap"));
    // interleaved columns of a 3 x 4 matrix: blocks at element positions 0 and 4 share no
    // position, but column 4 is column 0 one row down: they write the same bytes
    let column = TypeMap::vector(ROWS, 1, 4, &f64::type_map())
        .unwrap()
        .resized(0, 8)
        .unwrap()
        .commit();
    let three = TypeMap::contiguous(ROWS, &f64::type_map())
        .unwrap()
        .commit();
    let got = each_rank_within(2, "gatherv_typed with overlapping bytes", move |world| {
        let mut recv = vec![-1.0f64; 4 * ROWS + 4];
        let send = [1.0f64; ROWS];
        world.gather(
            (
                rpar::Typed::new(&send, &three, 1),
                rpar::Typed::varying(&mut recv, &column, &[1, 1], &[0, 4]),
            ),
            0,
        )
    });
    failed_at(got, 0, |e| invalid_saying(e, "twice"));
    // the same columns at positions 0 and 1 are fine
    let got = each_rank_within(2, "gatherv_typed with interleaved columns", move |world| {
        let column = TypeMap::vector(ROWS, 1, 4, &f64::type_map())?
            .resized(0, 8)?
            .commit();
        let three = TypeMap::contiguous(ROWS, &f64::type_map())?.commit();
        let mut recv = vec![-1.0f64; 4 * ROWS];
        let send = [world.rank() as f64; ROWS];
        world.gather(
            (
                rpar::Typed::new(&send, &three, 1),
                rpar::Typed::varying(&mut recv, &column, &[1, 1], &[0, 1]),
            ),
            0,
        )?;
        Ok(recv)
    });
    let want: Vec<f64> = (0..4 * ROWS)
        .map(|x| match x % 4 {
            0 => 0.0,
            1 => 1.0,
            _ => -1.0,
        })
        .collect();
    assert_eq!(got[0].as_ref().unwrap(), &want);
    // overlapping send blocks are fine (MPI reads an element twice)
    let got = each_rank_within(
        P,
        "alltoallv_typed with overlapping send blocks",
        move |world| {
            let r = world.rank() as f64;
            let send = [r, r + 0.5];
            let mut recv = vec![0.0f64; 2 * P];
            let (counts, rd) = ([2; P], [0, 2, 4]);
            world.alltoall((
                rpar::Typed::varying(&send, &one(), &counts, &[0; P]),
                rpar::Typed::varying(&mut recv, &one(), &counts, &rd),
            ))?;
            Ok(recv)
        },
    );
    for result in got {
        assert_eq!(result.unwrap(), [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]);
    }
}

#[test]
fn a_type_or_a_block_outside_its_buffer_is_an_error_on_every_rank() {
    const P: usize = 3;
    let column = TypeMap::vector(ROWS, 1, 4, &f64::type_map())
        .unwrap()
        .commit();
    let three = TypeMap::contiguous(ROWS, &f64::type_map())
        .unwrap()
        .commit();
    // rank 1's receive buffer of a scatterv ends a row early: its column reaches past it
    let got = each_rank_within(P, "scatterv_typed into a short buffer", move |world| {
        let r = world.rank();
        let mut recv = vec![-1.0f64; if r == 1 { 4 * (ROWS - 1) } else { 4 * ROWS }];
        let send = vec![1.0f64; P * ROWS];
        let result = world.scatter(
            (
                rpar::Typed::varying(&send, &three, &[1; P], &[0, 1, 2]),
                rpar::Typed::new(&mut recv, &column, 1),
            ),
            0,
        );
        assert!(recv.iter().all(|&x| x == -1.0), "written before the checks");
        result
    });
    failed_at(got, 1, |e| {
        matches!(
            e,
            Error::BufferOutOfBounds {
                call: "scatterv_typed",
                ..
            }
        )
    });
    // the root of a gatherv puts rank 2's block past the end of its buffer
    let got = each_rank_within(P, "gatherv_typed with a block outside", move |world| {
        let mut recv = vec![0.0f64; P];
        world.gather(
            (
                rpar::Typed::new(&[1.0f64], &one(), 1),
                rpar::Typed::varying(&mut recv, &one(), &[1; P], &[0, 1, 9]),
            ),
            0,
        )
    });
    failed_at(got, 0, |e| {
        invalid_saying(e, "block of rank 2 starts at displacement 9")
    });
    // a block that starts in the buffer but ends past it
    let got = each_rank_within(
        P,
        "alltoallv_typed with a block reaching out",
        move |world| {
            let send = vec![1.0f64; P];
            let sc = if world.rank() == 2 {
                [1, 1, 2]
            } else {
                [1, 1, 1]
            };
            let rc = [1, 1, if world.rank() == 2 { 2 } else { 1 }];
            let mut recv = vec![0.0f64; P + 1];
            world.alltoall((
                rpar::Typed::varying(&send, &one(), &sc, &[0, 1, 2]),
                rpar::Typed::varying(&mut recv, &one(), &rc, &[0, 1, 2]),
            ))
        },
    );
    failed_at(got, 2, |e| matches!(e, Error::BufferOutOfBounds { .. }));
}

/// Two fields of different basic types, no padding.
#[derive(Datatype, Clone, Copy, Debug, PartialEq, Default)]
struct Pair {
    a: u32,
    b: f32,
}

#[test]
fn a_block_inside_an_element_must_land_on_the_field_it_names() {
    // blocks of u32 at u32 positions of a buffer of pairs: even positions are the `a`
    // fields, odd ones the `b` fields (f32)
    let got = each_rank_within(2, "allgatherv_typed into the fields of pairs", |world| {
        let u = u32::type_map().commit();
        let r = world.rank() as u32;
        let mut recv = [Pair::default(); 2];
        world.allgather((
            rpar::Typed::new(&[r + 1], &u, 1),
            rpar::Typed::varying(&mut recv, &u, &[1, 1], &[2, 0]),
        ))?;
        let mut untouched = [Pair::default(); 2];
        let bad = world.allgather((
            rpar::Typed::new(&[r + 1], &u, 1),
            rpar::Typed::varying(&mut untouched, &u, &[1, 1], &[0, 1]),
        ));
        Ok((recv, bad, untouched))
    });
    for result in got {
        let (recv, bad, untouched) = result.unwrap();
        let pair = |a| Pair { a, b: 0.0 };
        assert_eq!(recv, [pair(2), pair(1)]);
        match bad {
            Err(Error::InvalidArgument { message, .. }) => {
                assert!(message.contains("f32"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(untouched, [Pair::default(); 2]);
    }
}

/// MPI_Alltoallw: rank i sends rank j a block of (i + j) % 3 + 1 values, each pair by its own
/// type (single values, pairs, or a strided column), at byte displacements; against the same
/// exchange done by hand with point-to-point, and a pair whose types disagree.
#[test]
fn alltoallw_with_a_type_per_pair() {
    let single = f64::type_map().commit();
    let pair = TypeMap::contiguous(2, &f64::type_map()).unwrap().commit();
    let strided = TypeMap::vector(2, 1, 2, &f64::type_map()).unwrap().commit();
    every_rank_count(&[1, 2, 3, 4, 5], |world| {
        let (p, r) = (world.size(), world.rank());
        // block (i -> j) has n(i, j) values; sent as `single` x n, or `pair` x n/2 when even
        let n = |i: usize, j: usize| (i + j) % 3 + 1;
        let kind = |i: usize, j: usize| (i + 2 * j) % 3;
        let ty = |k: usize, values: usize| -> (&CommittedType, usize, usize) {
            // (type, count, bytes of buffer it spans)
            match (k, values % 2) {
                (1, 0) => (&pair, values / 2, values * 8),
                (2, 0) => (&strided, values / 2, values * 16),
                _ => (&single, values, values * 8),
            }
        };
        let value = |i: usize, j: usize, k: usize| (i * 1000 + j * 10 + k) as f64;
        // send buffer: blocks one after another at byte offsets
        let (mut send, mut stypes, mut scounts, mut sdispls) = (vec![], vec![], vec![], vec![]);
        for j in 0..p {
            let (t, c, span) = ty(kind(r, j), n(r, j));
            sdispls.push(send.len() * 8);
            let mut block = vec![-1.0f64; span / 8];
            let stride = if std::ptr::eq(t, &strided) { 2 } else { 1 };
            for k in 0..n(r, j) {
                block[k * stride] = value(r, j, k);
            }
            send.extend(block);
            stypes.push(t);
            scounts.push(c);
        }
        // receive: every block as single values, packed
        let (mut rtypes, mut rcounts, mut rdispls) = (vec![], vec![], vec![]);
        let mut at = 0;
        for i in 0..p {
            rtypes.push(&single);
            rcounts.push(n(i, r));
            rdispls.push(at * 8);
            at += n(i, r);
        }
        let mut recv = vec![0.0f64; at];
        world.alltoall((
            Typed::per_rank(&send[..], &stypes, &scounts, &sdispls),
            Typed::per_rank(&mut recv[..], &rtypes, &rcounts, &rdispls),
        ))?;
        let want: Vec<f64> = (0..p)
            .flat_map(|i| (0..n(i, r)).map(move |k| value(i, r, k)))
            .collect();
        check(&recv, &want, || format!("alltoallw p={p} rank={r}"))?;
        // the same, non-blocking
        let mut again = vec![0.0f64; at];
        world.scope(|s| {
            s.ialltoall((
                Typed::per_rank(&send[..], &stypes, &scounts, &sdispls),
                Typed::per_rank(&mut again[..], &rtypes, &rcounts, &rdispls),
            ))?
            .wait()
            .map(drop)
        })?;
        check(&again, &want, || format!("ialltoallw p={p} rank={r}"))
    });
    // rank 1 expects i64s from rank 0, which sends f64s: the same bytes, another signature
    let longs = i64::type_map().commit();
    let errors = each_rank_within(2, "alltoallw with a mismatch", move |world| {
        let r = world.rank();
        let send = [1.0f64, 2.0];
        let types = [&single, &single];
        let mut recv = [0.0f64; 2];
        let rtypes = if r == 1 {
            [&longs, &single]
        } else {
            [&single, &single]
        };
        world.alltoall((
            Typed::per_rank(&send[..], &types, &[1, 1], &[0, 8]),
            Typed::per_rank(&mut recv[..], &rtypes, &[1, 1], &[0, 8]),
        ))
    });
    for e in error_on_every_rank(errors) {
        assert!(
            matches!(e, Error::TypeMismatch { source_rank: 0, .. }),
            "{e}"
        );
    }
}
