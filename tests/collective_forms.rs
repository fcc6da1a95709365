//! The forms of the collectives beyond the plain ones, against a sequential reference: the
//! in-place forms (MPI_IN_PLACE) of gatherv, scatterv, allgatherv, alltoallv, reduce_scatter
//! and reduce_scatter_block; the v-forms with displacements on the receiving side
//! (allgatherv_into, alltoallv_into) and their bounds checks; the owned forms (gather_owned,
//! alltoall_owned), which must move every `Vec` rather than copy it; the refusal of `Ring` for
//! non-commutative operators; user counts that overflow, which must be errors, not panics;
//! counts that are wrong but add up to right totals, which every algorithm must refuse rather
//! than put one rank's data in another's block; and zero-sized elements, which must cost
//! nothing per element, however many.
//!
//! Every algorithm of each family, for the rank counts in [`RANKS`] (powers of two and not,
//! the fold of recursive doubling, the 2-D torus), with uneven counts that include empty
//! blocks, and two layouts of the blocks: back to back in rank order, and in reverse rank order
//! with a gap before each block (the gaps must be left untouched).

mod common;

use common::{check, every_rank_count, roots, under_valgrind, within};
use common::{ALLGATHER, ALLTOALL, BCAST, GATHER, SCATTER};
use rpar::{Alltoall, Error, ReduceScatter, Sum, UserOp};
use std::time::Duration;

const RANKS: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 9, 16];

const REDUCE_SCATTER: &[ReduceScatter] = &[
    ReduceScatter::Auto,
    ReduceScatter::RecursiveHalving,
    ReduceScatter::Pairwise,
    ReduceScatter::Ring,
];

/// What a receive buffer holds where no block goes: it must still be there afterwards.
const UNTOUCHED: u64 = u64::MAX;

/// Element `i` of the block that rank `from` contributes (to rank `to`, for alltoall).
fn value(from: usize, to: usize, i: usize) -> u64 {
    ((from as u64) << 40) ^ ((to as u64) << 20) ^ (i as u64).wrapping_mul(0x9e37_79b9)
}

/// Uneven block lengths with empty ones: 0 to 3 elements.
fn count(i: usize, j: usize) -> usize {
    (2 * i + j + 1) % 4
}

/// Uneven blocks with empty ones, one per rank `i`: `count(i, salt)` elements, element `k`
/// being `element(i, k)`. Returns the counts and the blocks.
fn uneven(
    p: usize,
    salt: usize,
    element: impl Fn(usize, usize) -> u64,
) -> (Vec<usize>, Vec<Vec<u64>>) {
    let counts: Vec<usize> = (0..p).map(|i| count(i, salt)).collect();
    let blocks = (0..p)
        .map(|i| (0..counts[i]).map(|k| element(i, k)).collect())
        .collect();
    (counts, blocks)
}

/// Where the blocks of `counts` lie: back to back in rank order (`reversed: false`), or in
/// reverse rank order with a one-element gap before each block. Returns the displacements and
/// the buffer length.
fn layout(counts: &[usize], reversed: bool) -> (Vec<usize>, usize) {
    let p = counts.len();
    let mut displs = vec![0; p];
    let mut at = 0;
    let order: Vec<usize> = if reversed {
        (0..p).rev().collect()
    } else {
        (0..p).collect()
    };
    for i in order {
        at += usize::from(reversed);
        displs[i] = at;
        at += counts[i];
    }
    (displs, at)
}

/// The buffer a receive of `blocks[i]` at `displs[i]` must leave (the rest untouched).
fn placed(blocks: &[Vec<u64>], displs: &[usize], len: usize) -> Vec<u64> {
    let mut buf = vec![UNTOUCHED; len];
    for (block, &d) in blocks.iter().zip(displs) {
        buf[d..d + block.len()].copy_from_slice(block);
    }
    buf
}

#[test]
fn allgatherv_into_and_in_place_place_every_block() {
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        let (counts, blocks) = uneven(p, 0, |i, k| value(i, 0, k));
        for reversed in [false, true] {
            let (displs, len) = layout(&counts, reversed);
            let want = placed(&blocks, &displs, len);
            for &algorithm in ALLGATHER {
                let what =
                    || format!("allgatherv {algorithm:?} p={p} rank={r} reversed={reversed}");
                let mut recv = vec![UNTOUCHED; len];
                world
                    .using(algorithm)
                    .allgather((&blocks[r], rpar::Varying::new(&mut recv, &counts, &displs)))?;
                check(&recv, &want, what)?;
                let mut buf = vec![UNTOUCHED; len];
                buf[displs[r]..displs[r] + counts[r]].copy_from_slice(&blocks[r]);
                world
                    .using(algorithm)
                    .allgather(rpar::InPlace(rpar::Varying::new(
                        &mut buf, &counts, &displs,
                    )))?;
                check(&buf, &want, what)?;
            }
        }
        Ok(())
    });
}

#[test]
fn gatherv_in_place_leaves_the_roots_block_and_places_the_others() {
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        let (counts, blocks) = uneven(p, 1, |i, k| value(i, 1, k));
        for reversed in [false, true] {
            let (displs, len) = layout(&counts, reversed);
            let want = placed(&blocks, &displs, len);
            for root in roots(p) {
                for &algorithm in GATHER {
                    let mut buf = if r == root {
                        let mut buf = vec![UNTOUCHED; len];
                        buf[displs[r]..displs[r] + counts[r]].copy_from_slice(&blocks[r]);
                        buf
                    } else {
                        blocks[r].clone()
                    };
                    world.using(algorithm).gather(
                        rpar::InPlace(rpar::Varying::new(&mut buf, &counts, &displs)),
                        root,
                    )?;
                    let want = if r == root { &want } else { &blocks[r] };
                    check(&buf, want, || {
                        format!("gatherv_in_place {algorithm:?} p={p} root={root} rank={r}")
                    })?;
                }
            }
        }
        Ok(())
    });
}

#[test]
fn scatterv_in_place_gives_every_rank_its_block() {
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        let (counts, blocks) = uneven(p, 2, |i, k| value(2, i, k));
        for reversed in [false, true] {
            let (displs, len) = layout(&counts, reversed);
            let send = placed(&blocks, &displs, len);
            for root in roots(p) {
                for &algorithm in SCATTER {
                    let mut buf = if r == root {
                        send.clone()
                    } else {
                        vec![0; counts[r]]
                    };
                    world.using(algorithm).scatter(
                        rpar::InPlace(rpar::Varying::new(&mut buf, &counts, &displs)),
                        root,
                    )?;
                    let want = if r == root { &send } else { &blocks[r] };
                    check(&buf, want, || {
                        format!("scatterv_in_place {algorithm:?} p={p} root={root} rank={r}")
                    })?;
                }
            }
        }
        Ok(())
    });
}

#[test]
fn alltoallv_into_and_in_place_place_every_block() {
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        // what rank i sends rank j: count(i, j) elements (not symmetric)
        let send_counts: Vec<usize> = (0..p).map(|j| count(r, j)).collect();
        let recv_counts: Vec<usize> = (0..p).map(|i| count(i, r)).collect();
        let sent: Vec<Vec<u64>> = (0..p)
            .map(|j| (0..send_counts[j]).map(|k| value(r, j, k)).collect())
            .collect();
        let received: Vec<Vec<u64>> = (0..p)
            .map(|i| (0..recv_counts[i]).map(|k| value(i, r, k)).collect())
            .collect();
        // the send blocks in reverse order with gaps, the receive blocks both ways
        let (send_displs, send_len) = layout(&send_counts, true);
        let send = placed(&sent, &send_displs, send_len);
        for reversed in [false, true] {
            let (recv_displs, recv_len) = layout(&recv_counts, reversed);
            let want = placed(&received, &recv_displs, recv_len);
            for &algorithm in ALLTOALL {
                let mut recv = vec![UNTOUCHED; recv_len];
                let got = world.using(algorithm).alltoall((
                    rpar::Varying::new(&send[..], &send_counts, &send_displs),
                    rpar::Varying::new(&mut recv, &recv_counts, &recv_displs),
                ));
                if algorithm == Alltoall::Hypercube && !p.is_power_of_two() {
                    assert!(matches!(got, Err(Error::InvalidArgument { .. })));
                    continue;
                }
                got?;
                check(&recv, &want, || {
                    format!("alltoallv_into {algorithm:?} p={p} rank={r} reversed={reversed}")
                })?;
            }
        }
        // in place: what i and j exchange must be as long both ways
        let counts: Vec<usize> = (0..p).map(|j| (r + j) % 3).collect();
        let (displs, len) = layout(&counts, true);
        let mine: Vec<Vec<u64>> = (0..p)
            .map(|j| (0..counts[j]).map(|k| value(r, j, k)).collect())
            .collect();
        let theirs: Vec<Vec<u64>> = (0..p)
            .map(|i| (0..counts[i]).map(|k| value(i, r, k)).collect())
            .collect();
        let want = placed(&theirs, &displs, len);
        for &algorithm in ALLTOALL {
            if algorithm == Alltoall::Hypercube && !p.is_power_of_two() {
                continue;
            }
            let mut buf = placed(&mine, &displs, len);
            world
                .using(algorithm)
                .alltoall(rpar::InPlace(rpar::Varying::new(
                    &mut buf, &counts, &displs,
                )))?;
            check(&buf, &want, || {
                format!("alltoallv_in_place {algorithm:?} p={p} rank={r}")
            })?;
        }
        Ok(())
    });
}

/// Affine map `x -> a x + b` as `[a, b]`, `compose(f, g)` = f then g: associative, not
/// commutative.
fn compose(f: [u64; 2], g: [u64; 2]) -> [u64; 2] {
    [
        f[0].wrapping_mul(g[0]),
        f[1].wrapping_mul(g[0]).wrapping_add(g[1]),
    ]
}

#[test]
fn reduce_scatter_in_place_leaves_the_block_at_the_front() {
    let affine = UserOp::non_commutative(compose);
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        let counts: Vec<usize> = (0..p).map(|i| count(i, 3)).collect();
        let n: usize = counts.iter().sum();
        let input = |rank: usize| -> Vec<[u64; 2]> {
            (0..n)
                .map(|i| [value(rank, 0, i) | 1, value(rank, 1, i)])
                .collect()
        };
        let total: Vec<[u64; 2]> = (0..n)
            .map(|i| (0..p).map(|rank| input(rank)[i]).reduce(compose).unwrap())
            .collect();
        let sum_total: Vec<u64> = (0..n)
            .map(|i| (0..p).fold(0u64, |a, rank| a.wrapping_add(input(rank)[i][1])))
            .collect();
        let start: usize = counts[..r].iter().sum();
        let own = start..start + counts[r];
        let block = n / p;
        for &algorithm in REDUCE_SCATTER {
            let what = || format!("reduce_scatter_in_place {algorithm:?} p={p} rank={r}");
            // a commutative operator, on the second words: every algorithm runs it
            let words: Vec<u64> = input(r).iter().map(|x| x[1]).collect();
            let mut sums = words.clone();
            world.using(algorithm).reduce_scatter(
                rpar::InPlace(rpar::Varying::packed(&mut sums, &counts)),
                Sum,
            )?;
            let mut want = words.clone();
            want[..counts[r]].copy_from_slice(&sum_total[own.clone()]);
            check(&sums, &want, what)?; // the block at the front, the rest as it was
                                        // the non-commutative one: rank order, or the ring's refusal
            let mut buf = input(r);
            let got = world.using(algorithm).reduce_scatter(
                rpar::InPlace(rpar::Varying::packed(&mut buf, &counts)),
                affine,
            );
            let mut blocks = input(r)[..block * p].to_vec();
            let got_block = world
                .using(algorithm)
                .reduce_scatter(rpar::InPlace(&mut blocks), affine);
            if algorithm == ReduceScatter::Ring {
                for got in [got, got_block] {
                    match got {
                        Err(Error::InvalidArgument { message, .. })
                            if message.contains("Pairwise") => {}
                        other => return Err(Error::user(format!("{}: {other:?}", what()))),
                    }
                }
                continue;
            }
            got?;
            got_block?;
            check(
                &buf[..counts[r]].to_vec(),
                &total[own.clone()].to_vec(),
                what,
            )?;
            let own_block = r * block..(r + 1) * block;
            check(&blocks[..block].to_vec(), &total[own_block].to_vec(), what)?;
        }
        Ok(())
    });
}

#[test]
fn owned_forms_move_every_vec() {
    every_rank_count(RANKS, |world| {
        let (p, r) = (world.size(), world.rank());
        let addr = |v: &Vec<u64>| v.as_ptr() as usize;
        for &algorithm in GATHER {
            for root in roots(p) {
                let mine: Vec<u64> = (0..r + 1).map(|k| value(r, root, k)).collect();
                // every rank's address, to compare with where the root finds the data
                let sent_at = world.allgather(&addr(&mine))?;
                let got = world.using(algorithm).gather(mine, root)?;
                let what = || format!("gather_owned {algorithm:?} p={p} root={root} rank={r}");
                match got {
                    None if r != root => {}
                    Some(all) if r == root => {
                        for (i, v) in all.iter().enumerate() {
                            let want: Vec<u64> = (0..i + 1).map(|k| value(i, root, k)).collect();
                            check(v, &want, what)?;
                            check(&addr(v), &sent_at[i], || format!("{}: copied", what()))?;
                        }
                    }
                    other => return Err(Error::user(format!("{}: {other:?}", what()))),
                }
            }
        }
        for &algorithm in ALLTOALL {
            let send: Vec<Vec<u64>> = (0..p)
                .map(|j| (0..count(r, j) + 1).map(|k| value(r, j, k)).collect())
                .collect();
            let sent_at: Vec<usize> = send.iter().map(addr).collect();
            // entry (i, j): where rank i's Vec for rank j lies
            let all_sent_at = world.allgather(&sent_at[..])?;
            let got = world.using(algorithm).alltoall(send);
            if algorithm == Alltoall::Hypercube && !p.is_power_of_two() {
                assert!(matches!(got, Err(Error::InvalidArgument { .. })));
                continue;
            }
            let got = got?;
            let what = || format!("alltoall_owned {algorithm:?} p={p} rank={r}");
            check(&got.len(), &p, what)?;
            for (i, v) in got.iter().enumerate() {
                let want: Vec<u64> = (0..count(i, r) + 1).map(|k| value(i, r, k)).collect();
                check(v, &want, what)?;
                check(&addr(v), &all_sent_at[i * p + r], || {
                    format!("{}: copied", what())
                })?;
            }
        }
        Ok(())
    });
}

/// The error a run returns for its first failing rank.
fn failure(err: Error) -> Error {
    match err {
        Error::RankFailed { source, .. } => *source,
        other => other,
    }
}

fn refused_with<R: std::fmt::Debug>(result: rpar::Result<R>, words: &[&str]) {
    match result.map_err(failure) {
        Err(Error::InvalidArgument { message, .. })
            if words.iter().all(|w| message.contains(w)) => {}
        other => panic!("expected InvalidArgument saying {words:?}, got {other:?}"),
    }
}

#[test]
fn overlapping_or_outside_receive_blocks_are_errors() {
    // blocks 0..2 and 1..3 overlap
    refused_with(
        rpar::run(2, |w| {
            let mut recv = [0u8; 4];
            w.allgather((
                &[1u8; 2][..],
                rpar::Varying::new(&mut recv[..], &[2, 2], &[0, 1]),
            ))
        }),
        &["overlap", "rank 0", "rank 1"],
    );
    refused_with(
        rpar::run(2, |w| {
            let mut buf = [0u8; 4];
            w.allgather(rpar::InPlace(rpar::Varying::new(
                &mut buf,
                &[2, 2],
                &[2, 3],
            )))
        }),
        &["does not fit", "rank 1"],
    );
    refused_with(
        rpar::run(2, |w| {
            let mut recv = [0u8; 4];
            w.alltoall((
                rpar::Varying::new(&[1u8, 2][..], &[1, 1], &[0, 1]),
                rpar::Varying::new(&mut recv[..], &[1, 1], &[3, 3]),
            ))
        }),
        &["overlap"],
    );
    refused_with(
        rpar::run(2, |w| {
            let mut recv = [0u8; 4];
            w.alltoall((
                rpar::Varying::new(&[1u8, 2][..], &[1, 1], &[0, 1]),
                rpar::Varying::new(&mut recv[..], &[1, 1], &[0, 4]),
            ))
        }),
        &["does not fit"],
    );
    // the send blocks may overlap: each is read, not written
    rpar::run(2, |w| {
        let mut recv = [0u8; 2];
        w.alltoall((
            rpar::Varying::new(&[7u8][..], &[1, 1], &[0, 0]),
            rpar::Varying::new(&mut recv[..], &[1, 1], &[0, 1]),
        ))?;
        assert_eq!(recv, [7, 7]);
        Ok(())
    })
    .unwrap();
    // at the root of a gatherv
    refused_with(
        rpar::run(3, |w| {
            let mut recv = [0u8; 6];
            w.gather(
                (
                    &[w.rank() as u8; 2][..],
                    rpar::Varying::new(&mut recv[..], &[2, 2, 2], &[0, 2, 3]),
                ),
                1,
            )
        }),
        &["overlap", "rank 1", "rank 2"],
    );
    refused_with(
        rpar::run(2, |w| {
            let mut buf = if w.rank() == 0 {
                vec![0u8; 2]
            } else {
                vec![1u8; 2]
            };
            w.gather(
                rpar::InPlace(rpar::Varying::new(&mut buf, &[1, 2], &[0, 1])),
                0,
            )
        }),
        &["does not fit"],
    );
}

#[test]
fn counts_that_overflow_are_errors_not_panics() {
    let huge = usize::MAX / 2 + 1;
    // prefix sums past usize::MAX
    refused_with(
        rpar::run(2, |w| {
            let mine = vec![0u8; [0, 1][w.rank()]];
            w.allgather((&mine, rpar::Counts(&[huge, huge]))).map(drop)
        }),
        &["add up to more than usize::MAX"],
    );
    refused_with(
        rpar::run(2, |w| {
            let mine = vec![0u8; [0, 1][w.rank()]];
            w.gather((&mine, rpar::Counts(&[huge, huge])), 0).map(drop)
        }),
        &["add up to more than usize::MAX"],
    );
    refused_with(
        rpar::run(2, |w| {
            w.alltoall((
                rpar::Varying::new(&[0u8][..], &[1, 0], &[0, 0]),
                rpar::Counts(&[huge, huge]),
            ))
            .map(drop)
        }),
        &["add up to more than usize::MAX"],
    );
    // a total that adds up but is no possible allocation
    refused_with(
        rpar::run(2, |w| {
            let mine = vec![0u64; [0, 1][w.rank()]];
            w.allgather((&mine, rpar::Counts(&[usize::MAX / 4, 1])))
                .map(drop)
        }),
        &["cannot be allocated"],
    );
    refused_with(
        rpar::run(1, |w| {
            w.alltoall((
                rpar::Varying::new(&[0u32][..], &[0], &[0]),
                rpar::Counts(&[usize::MAX / 2]),
            ))
            .map(drop)
        }),
        &["cannot be allocated"],
    );
}

#[test]
fn ring_refuses_a_non_commutative_operator_on_every_rank() {
    let affine = UserOp::non_commutative(compose);
    let got = rpar::run(4, |world| {
        let x = [[world.rank() as u64 + 2, 1]; 4];
        let ring = world.using(rpar::Allreduce::Ring).allreduce(&x[..], affine);
        let rs = world
            .using(ReduceScatter::Ring)
            .reduce_scatter(&x[..], affine);
        // the defaults keep rank order
        let auto = world.allreduce(&x[..], affine)?;
        Ok((ring.map(drop), rs.map(drop), auto))
    })
    .unwrap();
    let want = (0..4).map(|r| [r as u64 + 2, 1]).reduce(compose).unwrap();
    for (ring, rs, auto) in got {
        for refused in [ring, rs] {
            match refused {
                Err(Error::InvalidArgument { message, .. }) => {
                    assert!(message.contains("commutative"), "{message}")
                }
                other => panic!("Ring ran a non-commutative operator: {other:?}"),
            }
        }
        assert_eq!(auto, vec![want; 4]);
    }
}

/// Checks that a run in which some ranks' counts are wrong failed, and failed for the counts:
/// with an [`Error::InvalidArgument`] or [`Error::Truncated`], or, for the forms whose calls
/// name the bytes of a block, an [`Error::CollectiveMismatch`] (never `Ok`, a hang or a
/// deadlock).
fn refused_for_counts<R: std::fmt::Debug>(result: rpar::Result<R>, what: impl Fn() -> String) {
    match result.map_err(failure) {
        Err(
            Error::InvalidArgument { .. }
            | Error::Truncated { .. }
            | Error::CollectiveMismatch { .. },
        ) => {}
        other => panic!("{}: expected a count error, got {other:?}", what()),
    }
}

/// The counts of `p` ranks, all `n`, but `n + 1` at rank `a` and `n - 1` at rank `b`: wrong
/// counts that add up to the right total.
fn compensating(p: usize, n: usize, (a, b): (usize, usize)) -> Vec<usize> {
    let mut counts = vec![n; p];
    counts[a] += 1;
    counts[b] -= 1;
    counts
}

/// The pairs of ranks `(a, b)` other than `skip` that [`compensating`] makes wrong on `p`
/// ranks: every pair on up to 5 ranks, on more the neighbours `(a, a + 1)` and `(a + 1, a)`
/// (cyclically), which share every group of consecutive blocks that an algorithm moves in one
/// message (a subtree, a row of the torus, a half of the hypercube).
fn wrong_pairs(p: usize, skip: usize) -> Vec<(usize, usize)> {
    let pairs: Vec<(usize, usize)> = if p <= 5 {
        (0..p)
            .flat_map(|a| (0..p).map(move |b| (a, b)))
            .filter(|&(a, b)| a != b)
            .collect()
    } else {
        (0..p)
            .flat_map(|a| [(a, (a + 1) % p), ((a + 1) % p, a)])
            .collect()
    };
    pairs
        .into_iter()
        .filter(|&(a, b)| a != skip && b != skip)
        .collect()
}

/// Rank counts for the wrong-count tests: the binomial tree's and the hypercube's subtrees,
/// recursive doubling's fold (5, 6), the torus's rows (6 = 2 x 3, 9 = 3 x 3).
const WRONG_RANKS: &[usize] = &[3, 4, 5, 6, 8, 9];

/// The runs of a wrong-count test: `(p, k)` for each of [`WRONG_RANKS`] and each rank `k` of
/// `ranks(p)` (the roots, or the rank whose counts are wrong). Under valgrind 4 and 6 ranks
/// and rank 0 only, which still have subtrees, halves of the hypercube, a fold of recursive
/// doubling and rows of the torus.
fn wrong_runs(ranks: impl Fn(usize) -> Vec<usize>) -> Vec<(usize, usize)> {
    if under_valgrind() {
        return vec![(4, 0), (6, 0)];
    }
    WRONG_RANKS
        .iter()
        .flat_map(|&p| ranks(p).into_iter().map(move |k| (p, k)))
        .collect()
}

#[test]
fn gathers_whose_counts_cancel_out_are_errors() {
    // the review's case: 4 ranks, counts all 1, rank 2 sends 2 and rank 3 none
    for &algorithm in GATHER {
        refused_for_counts(
            rpar::run(4, |w| {
                let mine = vec![w.rank() as u8; [1, 1, 2, 0][w.rank()]];
                w.using(algorithm).gather((&mine, rpar::Counts(&[1; 4])), 0)
            }),
            || format!("gatherv {algorithm:?} p=4, rank 2 sends 2, rank 3 none"),
        );
    }
    for (p, root) in wrong_runs(roots) {
        for (a, b) in wrong_pairs(p, root) {
            let sends = compensating(p, 2, (a, b));
            for &algorithm in GATHER {
                let what = |form: &'static str| {
                    move || format!("{form} {algorithm:?} p={p} root={root} wrong {a}, {b}")
                };
                refused_for_counts(
                    rpar::run(p, |w| {
                        let mine = vec![7u16; sends[w.rank()]];
                        w.using(algorithm)
                            .gather((&mine, rpar::Counts(&vec![2; p])), root)
                    }),
                    what("gatherv"),
                );
                refused_for_counts(
                    rpar::run(p, |w| {
                        let r = w.rank();
                        let (displs, len) = layout(&vec![2; p], true);
                        let mut buf = if r == root {
                            vec![0u16; len]
                        } else {
                            vec![7; sends[r]]
                        };
                        w.using(algorithm).gather(
                            rpar::InPlace(rpar::Varying::new(&mut buf, &vec![2; p], &displs)),
                            root,
                        )
                    }),
                    what("gatherv_in_place"),
                );
                // the uniform forms: the call names the bytes of a block
                refused_for_counts(
                    rpar::run(p, |w| {
                        let mine = vec![7u16; sends[w.rank()]];
                        w.using(algorithm).gather(&mine[..], root)
                    }),
                    what("gather"),
                );
                refused_for_counts(
                    rpar::run(p, |w| {
                        let r = w.rank();
                        let mut buf = vec![7u16; if r == root { 2 * p } else { sends[r] }];
                        w.using(algorithm).gather(rpar::InPlace(&mut buf), root)
                    }),
                    what("gather_in_place"),
                );
            }
        }
    }
}

#[test]
fn allgathervs_whose_counts_cancel_out_are_errors() {
    for (p, victim) in wrong_runs(|p| (0..p).collect()) {
        for (a, b) in wrong_pairs(p, victim) {
            // every rank sends 2 elements; the victim's counts say 3 for a and 1 for b
            let counts = |r: usize| {
                if r == victim {
                    compensating(p, 2, (a, b))
                } else {
                    vec![2; p]
                }
            };
            for &algorithm in ALLGATHER {
                let what = |form: &'static str| {
                    move || format!("{form} {algorithm:?} p={p} victim={victim} wrong {a}, {b}")
                };
                refused_for_counts(
                    rpar::run(p, |w| {
                        let counts = counts(w.rank());
                        w.using(algorithm)
                            .allgather((&[5u32; 2][..], rpar::Counts(&counts)))
                    }),
                    what("allgatherv"),
                );
                // blocks in reverse order: the algorithm runs on a packed copy
                refused_for_counts(
                    rpar::run(p, |w| {
                        let r = w.rank();
                        let counts = counts(r);
                        let (displs, len) = layout(&counts, true);
                        let mut buf = vec![5u32; len];
                        w.using(algorithm)
                            .allgather(rpar::InPlace(rpar::Varying::new(
                                &mut buf, &counts, &displs,
                            )))?;
                        Ok(buf)
                    }),
                    what("allgatherv_in_place"),
                );
            }
        }
    }
}

#[test]
fn alltoallvs_whose_counts_cancel_out_are_errors() {
    for (p, victim) in wrong_runs(|p| (0..p).collect()) {
        for (a, b) in wrong_pairs(p, victim) {
            for &algorithm in ALLTOALL {
                if algorithm == Alltoall::Hypercube && !p.is_power_of_two() {
                    continue;
                }
                let what = |side: &'static str| {
                    move || {
                        format!(
                            "alltoallv {algorithm:?} p={p} victim={victim} {side} wrong \
                             {a}, {b}"
                        )
                    }
                };
                // blocks of 2 everywhere, but the victim expects 3 from a and 1 from b, or
                // sends 3 to a and 1 to b, who expect 2
                for (side, victim_sends) in [("receiving", false), ("sending", true)] {
                    refused_for_counts(
                        rpar::run(p, |w| {
                            let right = vec![2; p];
                            let wrong = if w.rank() == victim {
                                compensating(p, 2, (a, b))
                            } else {
                                right.clone()
                            };
                            let (sends, receives) = if victim_sends {
                                (&wrong, &right)
                            } else {
                                (&right, &wrong)
                            };
                            let (send_displs, _) = layout(sends, false);
                            let (recv_displs, len) = layout(receives, false);
                            let mut recv = vec![0u8; len];
                            w.using(algorithm).alltoall((
                                rpar::Varying::new(&[9u8; 64][..], sends, &send_displs),
                                rpar::Varying::new(&mut recv, receives, &recv_displs),
                            ))
                        }),
                        what(side),
                    );
                }
            }
        }
    }
}

#[test]
fn scatters_whose_counts_cancel_out_are_errors() {
    for (p, root) in wrong_runs(roots) {
        for (a, b) in wrong_pairs(p, root) {
            for &algorithm in SCATTER {
                let what = |form: &'static str| {
                    move || format!("{form} {algorithm:?} p={p} root={root} wrong {a}, {b}")
                };
                // the root's counts say 3 for a and 1 for b, whose buffers hold 2
                refused_for_counts(
                    rpar::run(p, |w| {
                        let counts = compensating(p, 2, (a, b));
                        let (displs, len) = layout(&counts, false);
                        let mut buf = vec![3u64; if w.rank() == root { len } else { 2 }];
                        w.using(algorithm).scatter(
                            rpar::InPlace(rpar::Varying::new(&mut buf, &counts, &displs)),
                            root,
                        )
                    }),
                    what("scatterv_in_place"),
                );
                // a's buffer holds 3 and b's 1 where the root's blocks are 2
                refused_for_counts(
                    rpar::run(p, |w| {
                        let r = w.rank();
                        let n = compensating(p, 2, (a, b))[r];
                        let mut buf = vec![3u64; if r == root { 2 * p } else { n }];
                        w.using(algorithm).scatter(rpar::InPlace(&mut buf), root)
                    }),
                    what("scatter_in_place"),
                );
            }
        }
    }
}

/// An element type without bytes (a `Datatype`, as every array of one is).
type Empty = [u8; 0];

#[test]
fn zero_sized_elements_cost_nothing_per_element() {
    // usize::MAX of them: a loop over the elements would not end
    const MANY: usize = usize::MAX;
    const TWO_HALVES: usize = MANY / 2 * 2;
    let got = within(Duration::from_secs(120), "collectives of [u8; 0]", || {
        rpar::run(2, |w| {
            let r = w.rank();
            let mut many = [[0u8; 0]; MANY];
            let mine: &[Empty] = if r == 0 { &many } else { &[] };
            let half = &many[..MANY / 2];
            // the lengths of what each call gives this rank
            let mut lens = Vec::new();
            for &algorithm in GATHER {
                let all = w
                    .using(algorithm)
                    .gather((mine, rpar::Counts(&[MANY, 0])), 0)?;
                lens.push(all.map_or(0, |a| a.len()));
                lens.push(w.using(algorithm).gather(half, 1)?.map_or(0, |a| a.len()));
            }
            for &algorithm in SCATTER {
                let theirs = w
                    .using(algorithm)
                    .scatter(rpar::Varying::new(mine, &[0, MANY], &[0, 0]), 0)?;
                lens.push(theirs.len());
            }
            for &algorithm in ALLGATHER {
                lens.push(
                    w.using(algorithm)
                        .allgather((mine, rpar::Counts(&[MANY, 0])))?
                        .len(),
                );
                lens.push(w.using(algorithm).allgather(half)?.len());
            }
            for &algorithm in ALLTOALL {
                // rank 0 sends MANY to rank 1
                let (sends, receives) = [([0, MANY], [0, 0]), ([0, 0], [MANY, 0])][r];
                let got = w.using(algorithm).alltoall((
                    rpar::Varying::new(mine, &sends, &[0, 0]),
                    rpar::Counts(&receives),
                ))?;
                lens.push(got.len());
            }
            for &algorithm in BCAST {
                w.using(algorithm).bcast(&mut many[..], 0)?;
            }
            Ok(lens)
        })
    })
    .unwrap();
    let rank = |gathered: [usize; 2], scattered, alltoall| {
        let mut lens = Vec::new();
        lens.extend(GATHER.iter().flat_map(|_| gathered));
        lens.extend(SCATTER.iter().map(|_| scattered));
        lens.extend(ALLGATHER.iter().flat_map(|_| [MANY, TWO_HALVES]));
        lens.extend(ALLTOALL.iter().map(|_| alltoall));
        lens
    };
    assert_eq!(got[0], rank([MANY, 0], 0, 0));
    assert_eq!(got[1], rank([0, TWO_HALVES], MANY, MANY));
}
