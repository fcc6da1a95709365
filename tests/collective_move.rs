//! Every algorithm of every data-movement collective (bcast, gather(v), scatter(v),
//! allgather(v), alltoall(v), circular shift, barrier) against a sequential reference.
//!
//! Rank counts: 1..=33 and 64. Element counts per rank (per block for alltoall): 0, 1 and 7
//! for every rank count; 1000 for the rank counts in [`MEDIUM`]; 100000 for those in
//! [`LARGE`] — the large counts only where they add something (power of two and not, odd and
//! even, the torus grids 2x2 and 2x4) and keep the file fast in debug builds. Roots: 0, 1,
//! `p / 2` and `p - 1`. Results must be identical to the reference (integers).
//!
//! Each rank count is one run, in which every rank computes the expected result itself and
//! checks it, so that the threads are started once per rank count.

use rpar::{Allgather, Alltoall, Barrier, Bcast, Comm, Error, Gather, Scatter, Shift};
use std::sync::atomic::{AtomicUsize, Ordering};

const MEDIUM: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 33, 64];
const LARGE: &[usize] = &[2, 3, 4, 8];

const BCAST: &[Bcast] = &[
    Bcast::Auto,
    Bcast::Linear,
    Bcast::Binomial,
    Bcast::Pipeline,
    Bcast::ScatterAllgather,
    Bcast::Torus,
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
];
const ALLTOALL: &[Alltoall] = &[
    Alltoall::Auto,
    Alltoall::Linear,
    Alltoall::Pairwise,
    Alltoall::Bruck,
    Alltoall::Hypercube,
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

fn roots(p: usize) -> Vec<usize> {
    let mut r = vec![0, 1 % p, p / 2, p - 1];
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

fn run_all(test: impl Fn(&Comm, usize) -> rpar::Result<()> + Send + Sync) {
    for p in rank_counts() {
        rpar::run(p, |world| test(&world, p)).unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn bcast_every_algorithm() {
    run_all(|w, p| {
        for &alg in BCAST {
            for n in sizes(p) {
                for root in roots(p) {
                    let mut buf = if w.rank() == root {
                        block(root, n)
                    } else {
                        vec![0; n]
                    };
                    w.bcast_with(&mut buf, root, alg)?;
                    same(
                        &buf,
                        &block(root, n),
                        format_args!("{alg:?} n={n} root={root}"),
                    );
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

#[test]
fn gather_every_algorithm_and_form() {
    run_all(|w, p| {
        let r = w.rank();
        for &alg in GATHER {
            for n in sizes(p) {
                let all: Vec<u64> = (0..p).flat_map(|i| block(i, n)).collect();
                for root in roots(p) {
                    let ctx = format_args!("{alg:?} n={n} root={root}");
                    let got = w.gather_with(&block(r, n)[..], root, alg)?;
                    assert_eq!(got.is_some(), r == root);
                    if let Some(got) = got {
                        same(&got, &all, ctx);
                    }
                    let mut buf = if r == root {
                        let mut b = vec![0; n * p];
                        b[root * n..(root + 1) * n].copy_from_slice(&block(root, n));
                        b
                    } else {
                        block(r, n)
                    };
                    w.gather_in_place_with(&mut buf, root, alg)?;
                    if r == root {
                        same(
                            &buf,
                            &all,
                            format_args!("in place {alg:?} n={n} root={root}"),
                        );
                    }
                    // gatherv, blocks back to back and then reversed with gaps
                    let counts: Vec<usize> = (0..p).map(|i| vcount(i, n)).collect();
                    let vall: Vec<u64> = (0..p).flat_map(|i| block(i, counts[i])).collect();
                    let got = w.gatherv_with(&block(r, counts[r])[..], &counts, root, alg)?;
                    if let Some(got) = got {
                        same(
                            &got,
                            &vall,
                            format_args!("gatherv {alg:?} n={n} root={root}"),
                        );
                    }
                    let mut displs = vec![0; p];
                    let mut at = 0;
                    for i in (0..p).rev() {
                        displs[i] = at;
                        at += counts[i] + 1;
                    }
                    let mut recv = vec![u64::MAX; at];
                    w.gatherv_into_with(
                        &block(r, counts[r])[..],
                        &mut recv,
                        &counts,
                        &displs,
                        root,
                        alg,
                    )?;
                    if r == root {
                        for i in 0..p {
                            let got = &recv[displs[i]..displs[i] + counts[i]];
                            same(
                                got,
                                &block(i, counts[i]),
                                format_args!("gatherv_into {alg:?} rank {i}"),
                            );
                            assert_eq!(recv[displs[i] + counts[i]], u64::MAX, "gap overwritten");
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
    run_all(|w, p| {
        let r = w.rank();
        for &alg in SCATTER {
            for n in sizes(p) {
                let all: Vec<u64> = (0..p).flat_map(|i| block(i, n)).collect();
                for root in roots(p) {
                    let send = if r == root { all.clone() } else { Vec::new() };
                    let got = w.scatter_with(&send, root, alg)?;
                    same(
                        &got,
                        &block(r, n),
                        format_args!("{alg:?} n={n} root={root}"),
                    );
                    let got = w.scatter_owned_with(send.clone(), root, alg)?;
                    same(
                        &got,
                        &block(r, n),
                        format_args!("owned {alg:?} n={n} root={root}"),
                    );
                    let mut mine = vec![0; n];
                    w.scatter_into_with(&send, &mut mine, root, alg)?;
                    same(
                        &mine,
                        &block(r, n),
                        format_args!("into {alg:?} n={n} root={root}"),
                    );
                    let mut buf = if r == root { all.clone() } else { vec![0; n] };
                    w.scatter_in_place_with(&mut buf, root, alg)?;
                    let got = if r == root {
                        &buf[r * n..(r + 1) * n]
                    } else {
                        &buf[..]
                    };
                    same(
                        got,
                        &block(r, n),
                        format_args!("in place {alg:?} n={n} root={root}"),
                    );
                    assert!(
                        r != root || buf == all,
                        "in place: the root's buffer changed"
                    );
                    // scatterv from blocks in reverse order with gaps
                    let counts: Vec<usize> = (0..p).map(|i| vcount(i, n)).collect();
                    let mut displs = vec![0; p];
                    let mut vsend = Vec::new();
                    for i in (0..p).rev() {
                        displs[i] = vsend.len();
                        vsend.extend(block(i, counts[i]));
                        vsend.push(u64::MAX);
                    }
                    let got = w.scatterv_with(&vsend, &counts, &displs, root, alg)?;
                    same(
                        &got,
                        &block(r, counts[r]),
                        format_args!("scatterv {alg:?} n={n} root={root}"),
                    );
                }
            }
        }
        Ok(())
    });
}

#[test]
fn allgather_every_algorithm_and_form() {
    run_all(|w, p| {
        let r = w.rank();
        for &alg in ALLGATHER {
            for n in sizes(p) {
                let all: Vec<u64> = (0..p).flat_map(|i| block(i, n)).collect();
                let got = w.allgather_with(&block(r, n)[..], alg)?;
                same(&got, &all, format_args!("{alg:?} n={n}"));
                let mut buf = vec![0; n * p];
                buf[r * n..(r + 1) * n].copy_from_slice(&block(r, n));
                w.allgather_in_place_with(&mut buf, alg)?;
                same(&buf, &all, format_args!("in place {alg:?} n={n}"));
                let counts: Vec<usize> = (0..p).map(|i| vcount(i, n)).collect();
                let vall: Vec<u64> = (0..p).flat_map(|i| block(i, counts[i])).collect();
                let got = w.allgatherv_with(&block(r, counts[r])[..], &counts, alg)?;
                same(&got, &vall, format_args!("allgatherv {alg:?} n={n}"));
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

/// Element `i` of the block that rank `from` sends to rank `to`.
fn value2(from: usize, to: usize, i: usize) -> u64 {
    value(from, i) ^ ((to as u64) << 20)
}

#[test]
fn alltoall_every_algorithm_and_form() {
    run_all(|w, p| {
        let r = w.rank();
        for &alg in ALLTOALL {
            for n in sizes(p).into_iter().filter(|&n| n < 100_000 || p <= 4) {
                let send: Vec<u64> = (0..p)
                    .flat_map(|j| (0..n).map(move |i| value2(r, j, i)))
                    .collect();
                let want: Vec<u64> = (0..p)
                    .flat_map(|j| (0..n).map(move |i| value2(j, r, i)))
                    .collect();
                let got = w.alltoall_with(&send, alg);
                if alg == Alltoall::Hypercube && !p.is_power_of_two() {
                    assert!(matches!(got, Err(Error::InvalidArgument { .. })), "{got:?}");
                    continue;
                }
                same(&got?, &want, format_args!("{alg:?} n={n}"));
                let mut buf = send.clone();
                w.alltoall_in_place_with(&mut buf, alg)?;
                same(&buf, &want, format_args!("in place {alg:?} n={n}"));
                // alltoallv: rank i sends (i + 2j) % 3 + n - (j % 2) * n elements to rank j,
                // blocks laid out in reverse order with a gap after each
                let count = |from: usize, to: usize| (from + 2 * to) % 3 + (to % 2) * n;
                let send_counts: Vec<usize> = (0..p).map(|j| count(r, j)).collect();
                let mut send_displs = vec![0; p];
                let mut vsend = Vec::new();
                for j in (0..p).rev() {
                    send_displs[j] = vsend.len();
                    vsend.extend((0..send_counts[j]).map(|i| value2(r, j, i)));
                    vsend.push(u64::MAX);
                }
                let recv_counts: Vec<usize> = (0..p).map(|i| count(i, r)).collect();
                let vwant: Vec<u64> = (0..p)
                    .flat_map(|i| (0..recv_counts[i]).map(move |k| value2(i, r, k)))
                    .collect();
                let got =
                    w.alltoallv_with(&vsend, &send_counts, &send_displs, &recv_counts, alg)?;
                same(&got, &vwant, format_args!("alltoallv {alg:?} n={n}"));
            }
        }
        Ok(())
    });
}

#[test]
fn shift_circular_every_algorithm() {
    run_all(|w, p| {
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
    // ranks that disagree on the size of a broadcast
    let err = rpar::run(2, |w| {
        let mut buf = vec![0u32; 3 + w.rank()];
        w.bcast_with(&mut buf, 0, Bcast::Linear)
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("contributed 3 elements where 4"),
        "{err}"
    );
    // a root out of range
    let err = rpar::run(2, |w| w.gather(&1u8, 2).map(|_| ())).unwrap_err();
    assert!(matches!(err, Error::RankFailed { .. }), "{err}");
}
