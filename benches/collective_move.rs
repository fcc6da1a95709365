//! Timing of the data-movement collectives, every algorithm: bcast, allgather, alltoall,
//! gather, scatter, barrier, at 2, 4 and 8 ranks and 8 B, 64 KiB and 1 MiB per rank (per block
//! for alltoall). Prints one line per case: the median over the iterations of slowest rank's
//! time for one call, each call started right after a barrier.
//!
//! `cargo bench --bench collective_move [-- FILTER...]`: only the lines whose operation or
//! algorithm name contains one of the filters (e.g. `-- bcast allgather`);
//! `RPAR_BENCH_BYTES=8,65536` and `RPAR_BENCH_RANKS=4,8` narrow the sizes and rank counts.
//! The buffers are allocated inside the timed call (as a program that uses the returning
//! forms would), the receive buffers with `vec![0; n]`.

use rpar::{Allgather, Alltoall, Barrier, Bcast, Comm, Gather, Scatter};
use std::time::{Duration, Instant};

const RANKS: &[usize] = &[2, 4, 8];
const BYTES: &[usize] = &[8, 64 * 1024, 1 << 20];

/// Iterations for a message size: fewer for the large ones.
fn iterations(bytes: usize) -> usize {
    if bytes >= 1 << 20 {
        30
    } else if bytes >= 64 * 1024 {
        100
    } else {
        400
    }
}

/// Runs `op` on `p` ranks `iters` times, each call right after a barrier, and returns the
/// median over the calls of the slowest rank's time for that call.
fn time(p: usize, iters: usize, op: impl Fn(&Comm) -> rpar::Result<()> + Send + Sync) -> Duration {
    let per_rank = rpar::run(p, |w| {
        op(&w)?; // warm-up
        let mut t = Vec::with_capacity(iters);
        for _ in 0..iters {
            w.barrier()?;
            let start = Instant::now();
            op(&w)?;
            t.push(start.elapsed());
        }
        Ok(t)
    })
    .expect("benchmark run failed");
    let mut slowest: Vec<Duration> = (0..iters)
        .map(|i| per_rank.iter().map(|t| t[i]).max().unwrap_or_default())
        .collect();
    slowest.sort();
    slowest[iters / 2]
}

fn report(
    filters: &[String],
    op: &str,
    alg: &str,
    p: usize,
    bytes: usize,
    f: impl Fn() -> Duration,
) {
    if !filters.is_empty()
        && !filters
            .iter()
            .any(|f| op.contains(f.as_str()) || alg.contains(f.as_str()))
    {
        return;
    }
    let d = f();
    println!(
        "{op:<10} {alg:<18} p={p:<2} {bytes:>8} B  {:>10.2} us",
        d.as_secs_f64() * 1e6
    );
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let bytes_wanted: Vec<usize> = std::env::var("RPAR_BENCH_BYTES")
        .map(|v| v.split(',').filter_map(|b| b.trim().parse().ok()).collect())
        .unwrap_or_else(|_| BYTES.to_vec());
    let ranks_wanted: Vec<usize> = std::env::var("RPAR_BENCH_RANKS")
        .map(|v| v.split(',').filter_map(|b| b.trim().parse().ok()).collect())
        .unwrap_or_else(|_| RANKS.to_vec());
    for &p in &ranks_wanted {
        for &bytes in &bytes_wanted {
            let n = bytes / 8;
            let iters = iterations(bytes);
            for alg in [
                Bcast::Auto,
                Bcast::Linear,
                Bcast::Binomial,
                Bcast::Pipeline,
                Bcast::ScatterAllgather,
                Bcast::Torus,
            ] {
                report(&filters, "bcast", &format!("{alg:?}"), p, bytes, || {
                    time(p, iters, |w| {
                        let mut buf = vec![w.rank() as u64; n];
                        w.bcast_with(&mut buf, 0, alg)
                    })
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
                report(&filters, "allgather", &format!("{alg:?}"), p, bytes, || {
                    time(p, iters, |w| {
                        w.allgather_with(&vec![1u64; n][..], alg).map(drop)
                    })
                });
            }
            for alg in [
                Alltoall::Auto,
                Alltoall::Linear,
                Alltoall::Pairwise,
                Alltoall::Bruck,
                Alltoall::Hypercube,
            ] {
                report(&filters, "alltoall", &format!("{alg:?}"), p, bytes, || {
                    time(p, iters, |w| {
                        w.alltoall_with(&vec![1u64; n * p][..], alg).map(drop)
                    })
                });
            }
            for alg in [Gather::Auto, Gather::Linear, Gather::Binomial] {
                report(&filters, "gather", &format!("{alg:?}"), p, bytes, || {
                    time(p, iters, |w| {
                        w.gather_with(&vec![1u64; n][..], 0, alg).map(drop)
                    })
                });
            }
            for alg in [Scatter::Auto, Scatter::Linear, Scatter::Binomial] {
                report(&filters, "scatter", &format!("{alg:?}"), p, bytes, || {
                    time(p, iters, |w| {
                        let send = if w.rank() == 0 {
                            vec![1u64; n * p]
                        } else {
                            Vec::new()
                        };
                        w.scatter_with(&send, 0, alg).map(drop)
                    })
                });
            }
        }
        for alg in [Barrier::Central, Barrier::Dissemination, Barrier::Tree] {
            report(&filters, "barrier", &format!("{alg:?}"), p, 0, || {
                time(p, 400, |w| w.barrier_with(alg))
            });
        }
    }
}
