//! Timing of every reduction algorithm (allreduce, reduce, reduce_scatter_block, scan) at
//! 8 B, 64 KiB and 1 MiB of `u64`s on 2, 4 and 8 ranks: the figures the `Auto` tables in
//! `rpar/src/collective/{allreduce,reduce,reduce_scatter,scan}.rs` were tuned with.
//!
//! One sample is the time from the first rank entering the call to the last rank leaving it
//! (ranks are threads, so one clock serves all); the figure is the median of many samples.
//!
//! ```text
//! cargo bench --bench reduction_timing                  # everything
//! cargo bench --bench reduction_timing -- allreduce     # one operation
//! RANKS=16,32 BYTES=8,65536 cargo bench --bench reduction_timing -- scan
//! ```

use rpar::{Allreduce, Comm, Max, Min, Reduce, ReduceScatter, Result, Scan, Sum};
use std::time::Instant;

/// One algorithm of one operation, run on a rank's `u64` vector.
type Call = fn(&Comm, &[u64]) -> Result<()>;

fn calls() -> Vec<(&'static str, &'static str, Call)> {
    vec![
        ("allreduce", "RecursiveDoubling", |w, x| {
            w.using(Allreduce::RecursiveDoubling)
                .allreduce(x, Sum)
                .map(drop)
        }),
        ("allreduce", "Ring", |w, x| {
            w.using(Allreduce::Ring).allreduce(x, Sum).map(drop)
        }),
        ("allreduce", "Rabenseifner", |w, x| {
            w.using(Allreduce::Rabenseifner).allreduce(x, Sum).map(drop)
        }),
        ("allreduce", "ReduceBcast", |w, x| {
            w.using(Allreduce::ReduceBcast).allreduce(x, Sum).map(drop)
        }),
        ("allreduce", "Auto", |w, x| w.allreduce(x, Sum).map(drop)),
        ("reduce", "Linear", |w, x| {
            w.using(Reduce::Linear).reduce(x, Sum, 0).map(drop)
        }),
        ("reduce", "Binomial", |w, x| {
            w.using(Reduce::Binomial).reduce(x, Sum, 0).map(drop)
        }),
        ("reduce", "Rabenseifner", |w, x| {
            w.using(Reduce::Rabenseifner).reduce(x, Sum, 0).map(drop)
        }),
        ("reduce", "Auto", |w, x| w.reduce(x, Sum, 0).map(drop)),
        ("reduce_scatter", "RecursiveHalving", |w, x| {
            rs(w, x, ReduceScatter::RecursiveHalving)
        }),
        ("reduce_scatter", "Pairwise", |w, x| {
            rs(w, x, ReduceScatter::Pairwise)
        }),
        ("reduce_scatter", "Ring", |w, x| {
            rs(w, x, ReduceScatter::Ring)
        }),
        ("reduce_scatter", "Auto", |w, x| {
            rs(w, x, ReduceScatter::Auto)
        }),
        ("scan", "Linear", |w, x| {
            w.using(Scan::Linear).scan(x, Sum).map(drop)
        }),
        ("scan", "RecursiveDoubling", |w, x| {
            w.using(Scan::RecursiveDoubling).scan(x, Sum).map(drop)
        }),
        ("scan", "Auto", |w, x| w.scan(x, Sum).map(drop)),
    ]
}

/// reduce_scatter_block of the largest multiple of `p` elements.
fn rs(world: &Comm, x: &[u64], algorithm: ReduceScatter) -> Result<()> {
    let whole = x.len() / world.size() * world.size();
    world
        .using(algorithm)
        .reduce_scatter(&x[..whole], Sum)
        .map(drop)
}

fn list(var: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(var)
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

/// Median time in microseconds of `call` on `p` ranks with `n` elements each.
fn median_us(p: usize, n: usize, call: Call) -> Result<f64> {
    let samples = if n <= 16 {
        1000
    } else if n <= 16_384 {
        100
    } else {
        30
    };
    let clock = Instant::now();
    let per_rank = rpar::run(p, |world| {
        let x: Vec<u64> = (0..n as u64).map(|i| i ^ world.rank() as u64).collect();
        call(&world, &x)?; // warm-up
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples {
            world.barrier()?;
            let start = clock.elapsed().as_secs_f64();
            call(&world, &x)?;
            let end = clock.elapsed().as_secs_f64();
            let first = world
                .using(Allreduce::RecursiveDoubling)
                .allreduce(&start, Min)?;
            let last = world
                .using(Allreduce::RecursiveDoubling)
                .allreduce(&end, Max)?;
            times.push(last - first);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[samples / 2] * 1e6)
    })?;
    Ok(per_rank[0])
}

fn main() -> Result<()> {
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let ranks = list("RANKS", &[2, 4, 8]);
    let bytes = list("BYTES", &[8, 64 << 10, 1 << 20]);
    let calls = calls();
    let mut ops: Vec<&str> = calls.iter().map(|c| c.0).collect();
    ops.dedup();
    for op in ops
        .into_iter()
        .filter(|op| only.is_empty() || only.iter().any(|o| o == op))
    {
        for &p in &ranks {
            for &b in &bytes {
                let mut line = format!("{op:<15} p={p:<3} {b:>8} B:");
                for (_, name, call) in calls.iter().filter(|c| c.0 == op) {
                    let us = median_us(p, (b / 8).max(1), *call)?;
                    line += &format!("  {name} {us:.1} us");
                }
                println!("{line}");
            }
        }
    }
    Ok(())
}
