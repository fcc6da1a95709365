//! Every algorithm of every data-movement collective (bcast, gather(v), scatter(v),
//! allgather(v), alltoall(v), circular shift, barrier) against a sequential reference.
//!
//! Rank counts: 1..=33 and 64. Element counts per rank (per block for alltoall): 0, 1 and 7
//! for every rank count; 1000 for the rank counts in [`MEDIUM`]; 100000 for those in
//! [`LARGE`] — the large counts only where they add something (they take the rendezvous
//! path and cut into many pipeline segments; power of two and not, the fold of recursive
//! doubling, the 2x2 torus) and keep the file fast in debug builds (alltoall's data grows with
//! `p * p * n`). Roots: 0, 1, `p / 2` and `p - 1`; for 1000 elements and more, `p / 2` and
//! `p - 1`. Results must be identical to the reference (integers).
//!
//! Each rank count is one run, in which every rank computes the expected result itself and
//! checks it, so that the threads are started once per rank count.

use rpar::{Allgather, Alltoall, Barrier, Bcast, Comm, Error, Gather, Scatter, Shift};
use std::sync::atomic::{AtomicUsize, Ordering};

const MEDIUM: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 33];
const LARGE: &[usize] = &[2, 3, 4];

const BCAST: &[Bcast] = &[
    Bcast::Auto,
    Bcast::Linear,
    Bcast::Binomial,
    Bcast::Pipeline,
    Bcast::ScatterAllgather,
    Bcast::Torus,
    Bcast::SharedMemory,
];
const GATHER: &[Gather] = &[Gather::Auto, Gather::Linear, Gather::Binomial];
const SCATTER: &[Scatter] = &[Scatter::Auto, Scatter::Linear, Scatter::Binomial];
const ALLGATHER: &[Allgather] = &[
    Allgather::Auto,
    Allgather::Ring,
    Allgather::RecursiveDoubling,
    Allgather::Pairwise,
    Allgather::Bruck,
    Allgather::Torus,
    Allgather::SharedMemory,
];
const ALLTOALL: &[Alltoall] = &[
    Alltoall::Auto,
    Alltoall::Linear,
    Alltoall::Pairwise,
    Alltoall::Bruck,
    Alltoall::Hypercube,
    Alltoall::SharedMemory,
];

fn rank_counts() -> impl Iterator<Item = usize> {
    (1..=33).chain([64])
}

fn sizes(p: usize) -> Vec<usize> {
    let mut n = vec![0, 1, 7];
    if MEDIUM.contains(&p) {
        n.push(1000);
    }
    if LARGE.contains(&p) {
        n.push(100_000);
    }
    n
}

/// Roots for `n` elements: 0, 1, `p / 2` and `p - 1`; only the last two for `n >= 1000`.
fn roots(p: usize, n: usize) -> Vec<usize> {
    let mut r = if n < 1000 {
        vec![0, 1 % p, p / 2, p - 1]
    } else {
        vec![p / 2, p - 1]
    };
    r.sort_unstable();
    r.dedup();
    r
}

/// Element `i` of rank `rank`'s data (distinct across ranks and positions).
fn value(rank: usize, i: usize) -> u64 {
    ((rank as u64) << 40) ^ (i as u64).wrapping_mul(0x9e37_79b9)
}

fn block(rank: usize, n: usize) -> Vec<u64> {
    (0..n).map(|i| value(rank, i)).collect()
}

/// The v-forms' count of rank `i` for base size `n`: uneven, some zero.
fn vcount(i: usize, n: usize) -> usize {
    if i % 4 == 1 {
        0
    } else {
        n + i % 3
    }
}

/// Checks without printing huge vectors.
fn same(got: &[u64], want: &[u64], what: std::fmt::Arguments<'_>) {
    if got != want {
        let first = got.iter().zip(want).position(|(a, b)| a != b);
        panic!(
            "{what}: got {} elements, expected {}; first difference at {first:?}",
            got.len(),
            want.len()
        );
    }
}

/// The data of one element count `n` on `p` ranks, computed once and read by every rank.
struct Case {
    n: usize,
    /// `blocks[i]`: rank `i`'s `n` elements.
    blocks: Vec<Vec<u64>>,
    /// All blocks in rank order.
    all: Vec<u64>,
    /// The v-forms' counts, blocks and concatenation.
    counts: Vec<usize>,
    vblocks: Vec<Vec<u64>>,
    vall: Vec<u64>,
}

impl Case {
    fn new(p: usize, n: usize) -> Case {
        let blocks: Vec<Vec<u64>> = (0..p).map(|i| block(i, n)).collect();
        let counts: Vec<usize> = (0..p).map(|i| vcount(i, n)).collect();
        let vblocks: Vec<Vec<u64>> = (0..p).map(|i| block(i, counts[i])).collect();
        Case {
            n,
            all: blocks.concat(),
            blocks,
            vall: vblocks.concat(),
            counts,
            vblocks,
        }
    }
}

/// Runs `test` on every rank count, with the cases of that rank count.
fn run_all(test: impl Fn(&Comm, usize, &[Case]) -> rpar::Result<()> + Send + Sync) {
    for p in rank_counts() {
        let cases: Vec<Case> = sizes(p).into_iter().map(|n| Case::new(p, n)).collect();
        rpar::run(p, |world| test(&world, p, &cases)).unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn bcast_every_algorithm() {
    run_all(|w, p, cases| {
        for &alg in BCAST {
            for c in cases {
                for root in roots(p, c.n) {
                    let mut buf = if w.rank() == root {
                        c.blocks[root].clone()
                    } else {
                        vec![0; c.n]
                    };
                    w.bcast_with(&mut buf, root, alg)?;
                    let ctx = format_args!("{alg:?} n={} root={root}", c.n);
                    same(&buf, &c.blocks[root], ctx);
                }
            }
            // a single value and an element type of odd size
            let mut one = if w.rank() == p - 1 { 42u16 } else { 0 };
            w.bcast_with(&mut one, p - 1, alg)?;
            assert_eq!(one, 42, "{alg:?} single value");
            let want: Vec<[u8; 3]> = (0..77).map(|i| [i as u8, 1, 2]).collect();
            let mut odd = if w.rank() == 0 {
                want.clone()
            } else {
                vec![[0; 3]; 77]
            };
            w.bcast_with(&mut odd, 0, alg)?;
            assert_eq!(odd, want, "{alg:?} [u8; 3]");
        }
        Ok(())
    });
}

/// Displacements that lay blocks of `counts` out in reverse rank order with a one-element
/// gap after each; returns them and the buffer length.
fn reversed_with_gaps(counts: &[usize]) -> (Vec<usize>, usize) {
    let mut displs = vec![0; counts.len()];
    let mut at = 0;
    for i in (0..counts.len()).rev() {
        displs[i] = at;
        at += counts[i] + 1;
    }
    (displs, at)
}

#[test]
fn gather_every_algorithm_and_form() {
    run_all(|w, p, cases| {
        let r = w.rank();
        for &alg in GATHER {
            for c in cases {
                let n = c.n;
                let (displs, len) = reversed_with_gaps(&c.counts);
                for root in roots(p, c.n) {
                    let ctx = format!("{alg:?} n={n} root={root}");
                    let got = w.gather_with(&c.blocks[r][..], root, alg)?;
                    assert_eq!(got.is_some(), r == root);
                    if let Some(got) = got {
                        same(&got, &c.all, format_args!("{ctx}"));
                    }
                    let mut buf = if r == root {
                        let mut b = vec![0; n * p];
                        b[root * n..(root + 1) * n].copy_from_slice(&c.blocks[root]);
                        b
                    } else {
                        c.blocks[r].clone()
                    };
                    w.gather_in_place_with(&mut buf, root, alg)?;
                    if r == root {
                        same(&buf, &c.all, format_args!("in place {ctx}"));
                    }
                    let got = w.gatherv_with(&c.vblocks[r][..], &c.counts, root, alg)?;
                    if let Some(got) = got {
                        same(&got, &c.vall, format_args!("gatherv {ctx}"));
                    }
                    let mut recv = vec![u64::MAX; len];
                    let mine = &c.vblocks[r][..];
                    w.gatherv_into_with(mine, &mut recv, &c.counts, &displs, root, alg)?;
                    if r == root {
                        for i in 0..p {
                            let got = &recv[displs[i]..displs[i] + c.counts[i]];
                            same(
                                got,
                                &c.vblocks[i],
                                format_args!("gatherv_into {ctx} rank {i}"),
                            );
                            assert_eq!(recv[displs[i] + c.counts[i]], u64::MAX, "gap written");
                        }
                    }
                }
            }
        }
        Ok(())
    });
}

#[test]
fn scatter_every_algorithm_and_form() {
    run_all(|w, p, cases| {
        let r = w.rank();
        for &alg in SCATTER {
            for c in cases {
                let n = c.n;
                // scatterv's send buffer: blocks in reverse order with gaps
                let (displs, len) = reversed_with_gaps(&c.counts);
                let mut vsend = vec![u64::MAX; len];
                for i in 0..p {
                    vsend[displs[i]..displs[i] + c.counts[i]].copy_from_slice(&c.vblocks[i]);
                }
                for root in roots(p, c.n) {
                    let ctx = format!("{alg:?} n={n} root={root}");
                    let send = if r == root { c.all.clone() } else { Vec::new() };
                    let got = w.scatter_with(&send, root, alg)?;
                    same(&got, &c.blocks[r], format_args!("{ctx}"));
                    let got = w.scatter_owned_with(send.clone(), root, alg)?;
                    same(&got, &c.blocks[r], format_args!("owned {ctx}"));
                    let mut mine = vec![0; n];
                    w.scatter_into_with(&send, &mut mine, root, alg)?;
                    same(&mine, &c.blocks[r], format_args!("into {ctx}"));
                    let mut buf = if r == root { send } else { vec![0; n] };
                    w.scatter_in_place_with(&mut buf, root, alg)?;
                    if r == root {
                        same(&buf, &c.all, format_args!("in place, root's buffer {ctx}"));
                    } else {
                        same(&buf, &c.blocks[r], format_args!("in place {ctx}"));
                    }
                    let got = w.scatterv_with(&vsend, &c.counts, &displs, root, alg)?;
                    same(&got, &c.vblocks[r], format_args!("scatterv {ctx}"));
                }
            }
        }
        Ok(())
    });
}

#[test]
fn allgather_every_algorithm_and_form() {
    run_all(|w, p, cases| {
        let r = w.rank();
        for &alg in ALLGATHER {
            for c in cases {
                let n = c.n;
                let got = w.allgather_with(&c.blocks[r][..], alg)?;
                same(&got, &c.all, format_args!("{alg:?} n={n}"));
                let mut buf = vec![0; n * p];
                buf[r * n..(r + 1) * n].copy_from_slice(&c.blocks[r]);
                w.allgather_in_place_with(&mut buf, alg)?;
                same(&buf, &c.all, format_args!("in place {alg:?} n={n}"));
                let mut recv = vec![u64::MAX; n * p];
                w.allgather_into_with(&c.blocks[r][..], &mut recv, alg)?;
                same(&recv, &c.all, format_args!("into {alg:?} n={n}"));
                let got = w.allgatherv_with(&c.vblocks[r][..], &c.counts, alg)?;
                same(&got, &c.vall, format_args!("allgatherv {alg:?} n={n}"));
            }
            let got = w.allgather_with(&(r as u8), alg)?;
            assert_eq!(
                got,
                (0..p as u8).collect::<Vec<_>>(),
                "{alg:?} single value"
            );
        }
        Ok(())
    });
}

/// Alltoall data on `p` ranks with blocks of `n`: what each rank sends and should get, for
/// alltoall and for alltoallv (rank `i` sends `(i + 2j) % 3 + (j % 2) n` elements to rank
/// `j`, its blocks in reverse order with gaps).
struct Exchange {
    send: Vec<Vec<u64>>,
    want: Vec<Vec<u64>>,
    vsend: Vec<Vec<u64>>,
    send_counts: Vec<Vec<usize>>,
    send_displs: Vec<Vec<usize>>,
    recv_counts: Vec<Vec<usize>>,
    vwant: Vec<Vec<u64>>,
}

impl Exchange {
    fn new(c: &Case, p: usize) -> Exchange {
        // the block from rank `from` to rank `to`: rank `from`'s data, marked with `to`
        let piece = |from: usize, to: usize, len: usize| -> Vec<u64> {
            c.blocks[from][..len]
                .iter()
                .map(|v| v ^ ((to as u64) << 20))
                .collect()
        };
        let count = |from: usize, to: usize| ((from + 2 * to) % 3 + (to % 2) * c.n).min(c.n);
        let send = (0..p)
            .map(|i| (0..p).flat_map(|j| piece(i, j, c.n)).collect())
            .collect();
        let want = (0..p)
            .map(|j| (0..p).flat_map(|i| piece(i, j, c.n)).collect())
            .collect();
        let send_counts: Vec<Vec<usize>> = (0..p)
            .map(|i| (0..p).map(|j| count(i, j)).collect())
            .collect();
        let recv_counts = (0..p)
            .map(|j| (0..p).map(|i| count(i, j)).collect())
            .collect();
        let mut vsend = Vec::new();
        let mut send_displs = Vec::new();
        for (i, counts) in send_counts.iter().enumerate() {
            let (displs, len) = reversed_with_gaps(counts);
            let mut buf = vec![u64::MAX; len];
            for (j, &count) in counts.iter().enumerate() {
                let piece = piece(i, j, count);
                buf[displs[j]..displs[j] + piece.len()].copy_from_slice(&piece);
            }
            vsend.push(buf);
            send_displs.push(displs);
        }
        let vwant = (0..p)
            .map(|j| (0..p).flat_map(|i| piece(i, j, count(i, j))).collect())
            .collect();
        Exchange {
            send,
            want,
            vsend,
            send_counts,
            send_displs,
            recv_counts,
            vwant,
        }
    }
}

#[test]
fn alltoall_every_algorithm_and_form() {
    for p in rank_counts() {
        let cases: Vec<Case> = sizes(p).into_iter().map(|n| Case::new(p, n)).collect();
        let exchanges: Vec<Exchange> = cases.iter().map(|c| Exchange::new(c, p)).collect();
        rpar::run(p, |w| {
            let r = w.rank();
            for &alg in ALLTOALL {
                for (c, x) in cases.iter().zip(&exchanges) {
                    let ctx = format!("{alg:?} n={}", c.n);
                    let got = w.alltoall_with(&x.send[r], alg);
                    if alg == Alltoall::Hypercube && !p.is_power_of_two() {
                        assert!(matches!(got, Err(Error::InvalidArgument { .. })), "{got:?}");
                        continue;
                    }
                    same(&got?, &x.want[r], format_args!("{ctx}"));
                    let mut buf = x.send[r].clone();
                    w.alltoall_in_place_with(&mut buf, alg)?;
                    same(&buf, &x.want[r], format_args!("in place {ctx}"));
                    let mut recv = vec![u64::MAX; buf.len()];
                    w.alltoall_into_with(&x.send[r][..], &mut recv, alg)?;
                    same(&recv, &x.want[r], format_args!("into {ctx}"));
                    let (sc, sd, rc) = (&x.send_counts[r], &x.send_displs[r], &x.recv_counts[r]);
                    let got = w.alltoallv_with(&x.vsend[r], sc, sd, rc, alg)?;
                    same(&got, &x.vwant[r], format_args!("alltoallv {ctx}"));
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn shift_circular_every_algorithm() {
    run_all(|w, p, _| {
        let r = w.rank();
        let pi = p as isize;
        for alg in [Shift::Auto, Shift::Direct, Shift::GrayCode] {
            for q in [0, 1, -1, 3, pi, pi + 2, -pi - 5] {
                // sizes differ between ranks
                let mine = block(r, r % 5 + 1);
                let got = w.shift_circular_with(mine, q, alg);
                if alg == Shift::GrayCode && !p.is_power_of_two() {
                    assert!(matches!(got, Err(Error::InvalidArgument { .. })), "{got:?}");
                    continue;
                }
                let from = (r as isize - q).rem_euclid(pi) as usize;
                same(
                    &got?,
                    &block(from, from % 5 + 1),
                    format_args!("{alg:?} q={q}"),
                );
            }
        }
        let got = w.shift_circular(&[r as u32; 1000][..], 2)?;
        assert_eq!(got, vec![((r + 2 * p - 2) % p) as u32; 1000]);
        Ok(())
    });
}

#[test]
fn barrier_every_algorithm_separates_rounds() {
    for p in rank_counts() {
        let arrived = AtomicUsize::new(0);
        rpar::run(p, |w| {
            for (round, alg) in [
                Barrier::Auto,
                Barrier::Central,
                Barrier::Dissemination,
                Barrier::Tree,
                Barrier::SharedMemory,
            ]
            .into_iter()
            .cycle()
            .take(12)
            .enumerate()
            {
                arrived.fetch_add(1, Ordering::SeqCst);
                w.barrier_with(alg)?;
                let seen = arrived.load(Ordering::SeqCst);
                // everyone of this round has arrived, and nobody can have passed the second
                // barrier below (which waits for this rank too)
                assert_eq!(seen, (round + 1) * p, "{alg:?} round {round}");
                w.barrier_with(alg)?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn mismatched_arguments_are_errors() {
    // counts of the wrong length: every rank refuses at once
    let err = rpar::run(3, |w| w.allgatherv(&[1u8][..], &[1, 1]).map(|_| ())).unwrap_err();
    assert!(err.to_string().contains("counts has 2 entries"), "{err}");
    let err = rpar::run(2, |w| {
        w.alltoallv(&[1u8, 2][..], &[1, 1], &[0, 5], &[1, 1])
            .map(|_| ())
    })
    .unwrap_err();
    assert!(err.to_string().contains("does not fit"), "{err}");
    // a send buffer that does not split into p blocks: the root refuses, the others are
    // released by the abort
    let err = rpar::run(3, |w| w.scatter(&[1u8; 4], 0).map(|_| ())).unwrap_err();
    assert!(
        err.to_string().contains("not a multiple of the 3 ranks"),
        "{err}"
    );
    // ranks that disagree on the size of a broadcast: the error names the root by its rank
    let err = rpar::run(3, |w| {
        let mut buf = vec![0u32; 3 + usize::from(w.rank() == 2)];
        w.bcast_with(&mut buf, 1, Bcast::Linear)
    })
    .unwrap_err();
    let text = err.to_string();
    // (the collective-call check catches it first, from the sizes the ranks declare)
    assert!(
        text.contains("rank 1 contributed 3 elements where 4")
            || (text.contains("collective mismatch")
                && text.contains("16 bytes")
                && text.contains("12 bytes")),
        "{text}"
    );
    // a receive buffer of the wrong length
    let err = rpar::run(2, |w| {
        w.alltoall_into(&[1u8, 2][..], &mut [0u8; 3]).map(|_| ())
    });
    let text = err.unwrap_err().to_string();
    assert!(
        text.contains("the receive buffer has 3 elements, 2 were expected"),
        "{text}"
    );
    // a root out of range
    let err = rpar::run(2, |w| w.gather(&1u8, 2).map(|_| ())).unwrap_err();
    assert!(matches!(err, Error::RankFailed { .. }), "{err}");
}
