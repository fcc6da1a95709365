//! Timing of the data-movement collectives, every algorithm: bcast, allgather, alltoall,
//! gather, scatter and barrier, at 2, 4 and 8 ranks and 8 B, 64 KiB and 1 MiB per rank (per
//! block for alltoall).
//!
//! The method is that of `shared/peers/peer_bench.c`, which times MPICH and Open MPI on the
//! same machine: buffers allocated once; after a barrier, `iters` calls back to back; a
//! rank's figure is its mean time per call, a repetition's figure the slowest rank's; printed
//! is the median of 7 repetitions, in microseconds.
//!
//! `cargo bench --bench collective_move [-- FILTER...]`: only the lines whose operation or
//! algorithm name contains one of the filters (e.g. `-- bcast allgather`);
//! `RPAR_BENCH_BYTES=8,65536` and `RPAR_BENCH_RANKS=4,8` narrow the sizes and rank counts.

use rpar::{Allgather, Alltoall, Barrier, Bcast, Comm, Gather, Scatter};
use std::time::Instant;

const RANKS: &[usize] = &[2, 4, 8];
const BYTES: &[usize] = &[8, 64 * 1024, 1 << 20];
const REPS: usize = 7;

/// Calls per repetition (as peer_bench.c: 2000, 200 and 20).
fn iterations(bytes: usize) -> usize {
    if bytes <= 8 {
        2000
    } else if bytes <= 64 * 1024 {
        200
    } else {
        20
    }
}

/// One rank's benchmark: called once per rank to set up its buffers, it returns the call to
/// time.
type Setup<'a> = dyn Fn(&Comm) -> Box<dyn FnMut(&Comm) -> rpar::Result<()>> + Send + Sync + 'a;

/// The median over repetitions of the slowest rank's mean time per call, in microseconds.
fn time(p: usize, iters: usize, setup: &Setup<'_>) -> f64 {
    let per_rank = rpar::run(p, |w| {
        let mut op = setup(&w);
        op(&w)?; // warm-up
        let mut reps = Vec::with_capacity(REPS);
        for _ in 0..REPS {
            w.barrier()?;
            let start = Instant::now();
            for _ in 0..iters {
                op(&w)?;
            }
            reps.push(start.elapsed().as_secs_f64() * 1e6 / iters as f64);
        }
        Ok(reps)
    })
    .expect("benchmark run failed");
    let mut slowest: Vec<f64> = (0..REPS)
        .map(|i| per_rank.iter().map(|t| t[i]).fold(0.0, f64::max))
        .collect();
    slowest.sort_by(f64::total_cmp);
    slowest[REPS / 2]
}

fn report(filters: &[String], op: &str, alg: &str, p: usize, bytes: usize, setup: &Setup<'_>) {
    let wanted = |name: &str| filters.iter().any(|f| name.contains(f.as_str()));
    if !filters.is_empty() && !wanted(op) && !wanted(alg) {
        return;
    }
    let us = time(p, iterations(bytes), setup);
    println!("{op:<10} {alg:<18} p={p:<2} {bytes:>8} B {us:>12.2} us");
}

fn list(var: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(var)
        .map(|v| v.split(',').filter_map(|b| b.trim().parse().ok()).collect())
        .unwrap_or_else(|_| default.to_vec())
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    for p in list("RPAR_BENCH_RANKS", RANKS) {
        for bytes in list("RPAR_BENCH_BYTES", BYTES) {
            let n = (bytes / 8).max(1);
            for alg in [
                Bcast::Auto,
                Bcast::Linear,
                Bcast::Binomial,
                Bcast::Pipeline,
                Bcast::ScatterAllgather,
                Bcast::Torus,
            ] {
                report(&filters, "bcast", &format!("{alg:?}"), p, bytes, &|_| {
                    let mut buf = vec![1u64; n];
                    Box::new(move |w| w.using(alg).bcast(&mut buf, 0))
                });
            }
            for alg in [
                Allgather::Auto,
                Allgather::Ring,
                Allgather::RecursiveDoubling,
                Allgather::Pairwise,
                Allgather::Bruck,
                Allgather::Torus,
            ] {
                report(
                    &filters,
                    "allgather",
                    &format!("{alg:?}"),
                    p,
                    bytes,
                    &|_| {
                        let (send, mut recv) = (vec![1u64; n], vec![0u64; n * p]);
                        Box::new(move |w| w.using(alg).allgather((&send[..], &mut recv)))
                    },
                );
            }
            for alg in [
                Alltoall::Auto,
                Alltoall::Linear,
                Alltoall::Pairwise,
                Alltoall::Bruck,
                Alltoall::Hypercube,
            ] {
                report(&filters, "alltoall", &format!("{alg:?}"), p, bytes, &|_| {
                    let (send, mut recv) = (vec![1u64; n * p], vec![0u64; n * p]);
                    Box::new(move |w| w.using(alg).alltoall((&send[..], &mut recv)))
                });
            }
            for alg in [Gather::Auto, Gather::Linear, Gather::Binomial] {
                report(&filters, "gather", &format!("{alg:?}"), p, bytes, &|_| {
                    let (send, mut recv) = (vec![1u64; n], vec![0u64; n * p]);
                    Box::new(move |w| w.using(alg).gather((&send[..], &mut recv), 0))
                });
            }
            for alg in [Scatter::Auto, Scatter::Linear, Scatter::Binomial] {
                report(&filters, "scatter", &format!("{alg:?}"), p, bytes, &|_| {
                    let (send, mut recv) = (vec![1u64; n * p], vec![0u64; n]);
                    Box::new(move |w| w.using(alg).scatter((&send, &mut recv), 0))
                });
            }
        }
        for alg in [
            Barrier::Auto,
            Barrier::Central,
            Barrier::Dissemination,
            Barrier::Tree,
        ] {
            report(&filters, "barrier", &format!("{alg:?}"), p, 8, &|_| {
                Box::new(move |w| w.using(alg).barrier())
            });
        }
    }
}
