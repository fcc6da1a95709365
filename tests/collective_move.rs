//! Every algorithm of every data-movement collective (bcast, gather(v), scatter(v),
//! allgather(v), alltoall(v), circular shift, barrier), `Auto` included, against a sequential
//! reference.
//!
//! Rank counts 1..=33 and 64 with element counts per rank (per block for alltoall) 0, 1, 7 and
//! 1000 ([`COUNTS`]); 100000 elements ([`LARGE`]) on the rank counts in [`LARGE_RANKS`]. Where
//! the data grow with `p * p * n` — allgather(v), whose every rank gets `p * n` elements, and
//! alltoall(v), whose every rank sends `p` blocks of `n` — the large case has `n = 100000 / p`,
//! so that each rank's whole result is about 100000 elements (at 64 ranks 100000 per block
//! would be 3.2 GB in all). Roots: 0, 1, `p / 2` and `p - 1`. Results must be identical to
//! the reference (integers).
//!
//! Each rank count is one run, in which every rank computes the expected result itself and
//! checks it, so that the threads are started once per rank count.

mod collective;
mod common;

use collective::{every_rank_count, roots, COUNTS, LARGE, LARGE_RANKS};
use rpar::{Allgather, Alltoall, Barrier, Bcast, Comm, Error, Gather, Scatter, Shift};
use std::sync::atomic::{AtomicUsize, Ordering};

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
const SHIFT: [Shift; 3] = [Shift::Auto, Shift::Direct, Shift::GrayCode];

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

/// `got` unwrapped, after checking that it is `Some` exactly at the root.
fn only_at_root<V>(got: Option<V>, rank: usize, root: usize, what: &str) -> Option<V> {
    assert_eq!(
        got.is_some(),
        rank == root,
        "{what}: a result at rank {rank} (root {root})"
    );
    got
}

/// Whether an algorithm that `needs_power_of_two` ranks was refused on `p` ranks, which must
/// happen, with `InvalidArgument`, exactly where `p` is not a power of two.
fn refused<T>(got: &rpar::Result<T>, needs_power_of_two: bool, p: usize) -> bool {
    if !needs_power_of_two || p.is_power_of_two() {
        return false; // the caller checks the result
    }
    match got {
        Err(Error::InvalidArgument { .. }) => true,
        Err(e) => panic!("on {p} ranks: expected InvalidArgument, got {e}"),
        Ok(_) => panic!("ran on {p} ranks, which is not a power of two"),
    }
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

/// `blocks` laid out by [`reversed_with_gaps`], the gaps `u64::MAX`; and the displacements.
fn laid_out(blocks: &[Vec<u64>]) -> (Vec<u64>, Vec<usize>) {
    let counts: Vec<usize> = blocks.iter().map(Vec::len).collect();
    let (displs, len) = reversed_with_gaps(&counts);
    let mut buf = vec![u64::MAX; len];
    for (b, &at) in blocks.iter().zip(&displs) {
        buf[at..at + b.len()].copy_from_slice(b);
    }
    (buf, displs)
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
    /// The v-blocks laid out in reverse rank order with gaps (scatterv's send buffer), and
    /// their displacements there (also gatherv's).
    vlaid: Vec<u64>,
    vdispls: Vec<usize>,
    /// Alltoall's data, for the tests that ask for them ([`Case::with_exchange`]).
    exchange: Option<Exchange>,
}

impl Case {
    fn new(p: usize, n: usize) -> Case {
        let blocks: Vec<Vec<u64>> = (0..p).map(|i| block(i, n)).collect();
        let counts: Vec<usize> = (0..p).map(|i| vcount(i, n)).collect();
        let vblocks: Vec<Vec<u64>> = (0..p).map(|i| block(i, counts[i])).collect();
        let (vlaid, vdispls) = laid_out(&vblocks);
        Case {
            n,
            vlaid,
            vdispls,
            all: blocks.concat(),
            blocks,
            vall: vblocks.concat(),
            counts,
            vblocks,
            exchange: None,
        }
    }

    fn with_exchange(p: usize, n: usize) -> Case {
        let mut c = Case::new(p, n);
        c.exchange = Some(Exchange::new(&c, p));
        c
    }
}

/// How the sweeps make a [`Case`] for `p` ranks and `n` elements.
type MakeCase = fn(usize, usize) -> Case;

/// Runs `test` on `p` ranks with the cases of `counts`.
fn run_cases(
    p: usize,
    counts: &[usize],
    make: MakeCase,
    test: &(impl Fn(&Comm, usize, &[Case]) -> rpar::Result<()> + Sync),
) {
    let cases: Vec<Case> = counts.iter().map(|&n| make(p, n)).collect();
    rpar::run(p, |world| test(&world, p, &cases)).unwrap_or_else(|e| panic!("p = {p}: {e}"));
}

/// Runs `test` on every rank count with the cases of [`COUNTS`].
fn on_every_rank_count(
    make: MakeCase,
    test: impl Fn(&Comm, usize, &[Case]) -> rpar::Result<()> + Sync,
) {
    for p in every_rank_count() {
        run_cases(p, &COUNTS, make, &test);
    }
}

/// Runs `test` on each of [`LARGE_RANKS`] with one case of `n(p)` elements.
fn on_large_rank_counts(
    n: fn(usize) -> usize,
    make: MakeCase,
    test: impl Fn(&Comm, usize, &[Case]) -> rpar::Result<()> + Sync,
) {
    for p in LARGE_RANKS {
        run_cases(p, &[n(p)], make, &test);
    }
}

/// [`LARGE`] elements on every rank count.
fn large_count(_p: usize) -> usize {
    LARGE
}

/// [`LARGE`] elements in all: `LARGE / p` per rank (per block).
fn large_in_all(p: usize) -> usize {
    LARGE / p
}

fn bcast(w: &Comm, p: usize, cases: &[Case]) -> rpar::Result<()> {
    for &alg in BCAST {
        for c in cases {
            for root in roots(p) {
                let mut buf = if w.rank() == root {
                    c.blocks[root].clone()
                } else {
                    vec![0; c.n]
                };
                w.using(alg).bcast(&mut buf, root)?;
                let ctx = format_args!("{alg:?} n={} root={root}", c.n);
                same(&buf, &c.blocks[root], ctx);
            }
        }
        // a single value and an element type of odd size
        let mut one = if w.rank() == p - 1 { 42u16 } else { 0 };
        w.using(alg).bcast(&mut one, p - 1)?;
        assert_eq!(one, 42, "{alg:?} single value");
        let want: Vec<[u8; 3]> = (0..77).map(|i| [i as u8, 1, 2]).collect();
        let mut odd = if w.rank() == 0 {
            want.clone()
        } else {
            vec![[0; 3]; 77]
        };
        w.using(alg).bcast(&mut odd, 0)?;
        assert_eq!(odd, want, "{alg:?} [u8; 3]");
    }
    Ok(())
}

#[test]
fn bcast_every_algorithm() {
    on_every_rank_count(Case::new, bcast);
}

#[test]
fn bcast_every_algorithm_large() {
    on_large_rank_counts(large_count, Case::new, bcast);
}

fn gather(w: &Comm, p: usize, cases: &[Case]) -> rpar::Result<()> {
    let r = w.rank();
    for &alg in GATHER {
        for c in cases {
            let n = c.n;
            let displs = &c.vdispls;
            for root in roots(p) {
                let ctx = format!("{alg:?} n={n} root={root}");
                let got = w.using(alg).gather(&c.blocks[r][..], root)?;
                if let Some(got) = only_at_root(got, r, root, &ctx) {
                    same(&got, &c.all, format_args!("{ctx}"));
                }
                // other ranks' receive buffers are ignored: left as they were
                let mut recv = vec![u64::MAX; if r == root { n * p } else { 3 }];
                w.using(alg).gather((&c.blocks[r][..], &mut recv), root)?;
                if r == root {
                    same(&recv, &c.all, format_args!("into {ctx}"));
                } else {
                    assert!(recv.iter().all(|&v| v == u64::MAX), "into {ctx}: written");
                }
                let mut buf = if r == root {
                    let mut b = vec![0; n * p];
                    b[root * n..(root + 1) * n].copy_from_slice(&c.blocks[root]);
                    b
                } else {
                    c.blocks[r].clone()
                };
                w.using(alg).gather(rpar::InPlace(&mut buf), root)?;
                if r == root {
                    same(&buf, &c.all, format_args!("in place {ctx}"));
                } else {
                    same(&buf, &c.blocks[r], format_args!("in place, the sent {ctx}"));
                }
                let got = w
                    .using(alg)
                    .gather((&c.vblocks[r][..], rpar::Counts(&c.counts)), root)?;
                if let Some(got) = only_at_root(got, r, root, &format!("gatherv {ctx}")) {
                    same(&got, &c.vall, format_args!("gatherv {ctx}"));
                }
                let mut recv = vec![u64::MAX; if r == root { c.vlaid.len() } else { 3 }];
                let mine = &c.vblocks[r][..];
                w.using(alg).gather(
                    (mine, rpar::Varying::new(&mut recv, &c.counts, displs)),
                    root,
                )?;
                if r != root {
                    assert!(recv.iter().all(|&v| v == u64::MAX), "gatherv_into {ctx}");
                    continue;
                }
                same(&recv, &c.vlaid, format_args!("gatherv_into {ctx}"));
            }
        }
    }
    Ok(())
}

#[test]
fn gather_every_algorithm_and_form() {
    on_every_rank_count(Case::new, gather);
}

#[test]
fn gather_every_algorithm_and_form_large() {
    on_large_rank_counts(large_count, Case::new, gather);
}

fn scatter(w: &Comm, p: usize, cases: &[Case]) -> rpar::Result<()> {
    let r = w.rank();
    for &alg in SCATTER {
        for c in cases {
            let n = c.n;
            for root in roots(p) {
                let ctx = format!("{alg:?} n={n} root={root}");
                let send = if r == root { c.all.clone() } else { Vec::new() };
                let got = w.using(alg).scatter(&send, root)?;
                same(&got, &c.blocks[r], format_args!("{ctx}"));
                let got = w.using(alg).scatter(send.clone(), root)?;
                same(&got, &c.blocks[r], format_args!("owned {ctx}"));
                let mut mine = vec![0; n];
                w.using(alg).scatter((&send, &mut mine), root)?;
                same(&mine, &c.blocks[r], format_args!("into {ctx}"));
                let mut buf = if r == root { send } else { vec![0; n] };
                w.using(alg).scatter(rpar::InPlace(&mut buf), root)?;
                if r == root {
                    same(&buf, &c.all, format_args!("in place, root's buffer {ctx}"));
                } else {
                    same(&buf, &c.blocks[r], format_args!("in place {ctx}"));
                }
                // the send buffer is read at the root only
                let vsend = if r == root { &c.vlaid[..] } else { &[] };
                let got = w
                    .using(alg)
                    .scatter(rpar::Varying::new(vsend, &c.counts, &c.vdispls), root)?;
                same(&got, &c.vblocks[r], format_args!("scatterv {ctx}"));
            }
        }
    }
    Ok(())
}

#[test]
fn scatter_every_algorithm_and_form() {
    on_every_rank_count(Case::new, scatter);
}

#[test]
fn scatter_every_algorithm_and_form_large() {
    on_large_rank_counts(large_count, Case::new, scatter);
}

fn allgather(w: &Comm, p: usize, cases: &[Case]) -> rpar::Result<()> {
    let r = w.rank();
    for &alg in ALLGATHER {
        for c in cases {
            let n = c.n;
            let got = w.using(alg).allgather(&c.blocks[r][..])?;
            same(&got, &c.all, format_args!("{alg:?} n={n}"));
            let mut buf = vec![0; n * p];
            buf[r * n..(r + 1) * n].copy_from_slice(&c.blocks[r]);
            w.using(alg).allgather(rpar::InPlace(&mut buf))?;
            same(&buf, &c.all, format_args!("in place {alg:?} n={n}"));
            let mut recv = vec![u64::MAX; n * p];
            w.using(alg).allgather((&c.blocks[r][..], &mut recv))?;
            same(&recv, &c.all, format_args!("into {alg:?} n={n}"));
            let got = w
                .using(alg)
                .allgather((&c.vblocks[r][..], rpar::Counts(&c.counts)))?;
            same(&got, &c.vall, format_args!("allgatherv {alg:?} n={n}"));
        }
        let got = w.using(alg).allgather(&(r as u8))?;
        assert_eq!(
            got,
            (0..p as u8).collect::<Vec<_>>(),
            "{alg:?} single value"
        );
    }
    Ok(())
}

#[test]
fn allgather_every_algorithm_and_form() {
    on_every_rank_count(Case::new, allgather);
}

#[test]
fn allgather_every_algorithm_and_form_large() {
    on_large_rank_counts(large_in_all, Case::new, allgather);
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
        let (vsend, send_displs) = (0..p)
            .map(|i| laid_out(&(0..p).map(|j| piece(i, j, count(i, j))).collect::<Vec<_>>()))
            .unzip();
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

fn alltoall(w: &Comm, p: usize, cases: &[Case]) -> rpar::Result<()> {
    let r = w.rank();
    for &alg in ALLTOALL {
        for c in cases {
            let Some(x) = &c.exchange else {
                panic!("alltoall's cases are made by Case::with_exchange");
            };
            let ctx = format!("{alg:?} n={}", c.n);
            let got = w.using(alg).alltoall(&x.send[r]);
            if refused(&got, alg == Alltoall::Hypercube, p) {
                continue;
            }
            same(&got?, &x.want[r], format_args!("{ctx}"));
            let mut buf = x.send[r].clone();
            w.using(alg).alltoall(rpar::InPlace(&mut buf))?;
            same(&buf, &x.want[r], format_args!("in place {ctx}"));
            let mut recv = vec![u64::MAX; buf.len()];
            w.using(alg).alltoall((&x.send[r][..], &mut recv))?;
            same(&recv, &x.want[r], format_args!("into {ctx}"));
            let (sc, sd, rc) = (&x.send_counts[r], &x.send_displs[r], &x.recv_counts[r]);
            let got = w
                .using(alg)
                .alltoall((rpar::Varying::new(&x.vsend[r], sc, sd), rpar::Counts(rc)))?;
            same(&got, &x.vwant[r], format_args!("alltoallv {ctx}"));
        }
    }
    Ok(())
}

#[test]
fn alltoall_every_algorithm_and_form() {
    on_every_rank_count(Case::with_exchange, alltoall);
}

#[test]
fn alltoall_every_algorithm_and_form_large() {
    on_large_rank_counts(large_in_all, Case::with_exchange, alltoall);
}

/// Shifts by 0, ±1, `p - 1`, `p`, `2p + 1` and a few more (3, `p + 2`, `-p - 5`) of the
/// cases' blocks and of blocks whose sizes differ between ranks.
fn shift(w: &Comm, p: usize, cases: &[Case]) -> rpar::Result<()> {
    let r = w.rank();
    let pi = p as isize;
    for q in [0, 1, -1, 3, pi - 1, pi, pi + 2, 2 * pi + 1, -pi - 5] {
        let from = (r as isize - q).rem_euclid(pi) as usize;
        for c in cases {
            let ctx = format!("q={q} n={}", c.n);
            shifted(w, &c.blocks[r], &c.blocks[from], q, &ctx)?;
        }
        let uneven = |rank: usize| block(rank, rank % 5 + 1);
        shifted(w, &uneven(r), &uneven(from), q, &format!("q={q} uneven"))?;
    }
    Ok(())
}

/// Shifts `mine` by `q` with every algorithm (`GrayCode` where `p` is a power of two,
/// elsewhere its `InvalidArgument`) and in the borrowed and owned forms; each must get `want`.
fn shifted(w: &Comm, mine: &[u64], want: &[u64], q: isize, ctx: &str) -> rpar::Result<()> {
    for alg in SHIFT {
        let got = w.using(alg).shift_circular(mine.to_vec(), q);
        if refused(&got, alg == Shift::GrayCode, w.size()) {
            continue;
        }
        same(&got?, want, format_args!("{alg:?} {ctx}"));
    }
    let got = w.shift_circular(mine, q)?;
    same(&got, want, format_args!("borrowed {ctx}"));
    let got = w.shift_circular(mine.to_vec(), q)?;
    same(&got, want, format_args!("owned {ctx}"));
    Ok(())
}

#[test]
fn shift_circular_every_algorithm() {
    on_every_rank_count(Case::new, shift);
}

#[test]
fn shift_circular_every_algorithm_large() {
    on_large_rank_counts(large_count, Case::new, shift);
}

#[test]
fn barrier_every_algorithm_separates_rounds() {
    for p in every_rank_count() {
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
                w.using(alg).barrier()?;
                let seen = arrived.load(Ordering::SeqCst);
                // everyone of this round has arrived, and nobody can have passed the second
                // barrier below (which waits for this rank too)
                assert_eq!(seen, (round + 1) * p, "{alg:?} round {round}");
                w.using(alg).barrier()?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn mismatched_arguments_are_errors() {
    // counts of the wrong length: every rank refuses at once
    let err = rpar::run(3, |w| {
        w.allgather((&[1u8][..], rpar::Counts(&[1, 1]))).map(|_| ())
    })
    .unwrap_err();
    assert!(err.to_string().contains("counts has 2 entries"), "{err}");
    let err = rpar::run(2, |w| {
        w.alltoall((
            rpar::Varying::new(&[1u8, 2][..], &[1, 1], &[0, 5]),
            rpar::Counts(&[1, 1]),
        ))
        .map(|_| ())
    })
    .unwrap_err();
    assert!(err.to_string().contains("does not fit"), "{err}");
    // a send buffer that does not split into p blocks: the root refuses, the others are
    // released by the abort
    let err = rpar::run(3, |w| w.scatter(&[1u8; 4][..], 0).map(|_| ())).unwrap_err();
    assert!(
        err.to_string().contains("not a multiple of the 3 ranks"),
        "{err}"
    );
    // ranks that disagree on the size of a broadcast: the error names the root by its rank
    let err = rpar::run(3, |w| {
        let mut buf = vec![0u32; 3 + usize::from(w.rank() == 2)];
        w.using(Bcast::Linear).bcast(&mut buf, 1)
    })
    .unwrap_err();
    // the collective-call check catches it first, from the sizes the ranks declare
    let Error::CollectiveMismatch { calls, .. } = &err else {
        panic!("expected a collective mismatch, got {err}");
    };
    let text = format!("{calls:?}");
    assert!(
        text.contains("(2, \"bcast(root 1, 16 bytes) as collective call #0\")")
            && text.contains("bcast(root 1, 12 bytes)"),
        "{text}"
    );
    // a receive buffer of the wrong length
    let err = rpar::run(2, |w| {
        w.alltoall((&[1u8, 2][..], &mut [0u8; 3][..])).map(|_| ())
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
