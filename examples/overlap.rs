//! How much of a non-blocking allreduce hides behind computation: OSU's osu_iallreduce method,
//! on rpar's `Scope::iallreduce`, printing JSON lines in the form of `shared/peers/run.sh` beside
//! `bench/overlap/peer_overlap.c`'s for MPICH and Open MPI (run all three: `bench/overlap.sh`).
//!
//! For each size: `pure` is the time of `iallreduce` + `wait`; then every rank starts the
//! allreduce, computes (a busy loop, no rpar call) for `pure`, and waits; overlap =
//! 100 (1 - (total - compute) / pure), clamped to 0..100. Median of 7 repetitions of the mean
//! over the iterations; rank 0's figures.
//!
//! Run: `cargo run --release --example overlap -- --json` (`--ranks 4`, `--quick`).

mod common;
use clap::Parser;
use rpar::{Comm, Result, Sum};
use std::time::{Duration, Instant};

/// OSU-style overlap of a non-blocking allreduce with computation.
#[derive(Parser, Debug)]
#[command(about)]
struct Args {
    /// Ranks (threads) in the run.
    #[arg(short = 'p', long, default_value_t = 2)]
    ranks: usize,
    /// Fewer iterations (a tenth).
    #[arg(long)]
    quick: bool,
    /// Print JSON lines only (for bench/overlap.sh).
    #[arg(long)]
    json: bool,
}

const REPS: usize = 7;
const SIZES: [usize; 3] = [8, 64 << 10, 1 << 20];

fn compute_for(d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// (pure time in us, overlap in %) at `bytes` bytes per rank, rank 0's.
fn measure(w: &Comm, bytes: usize, iters: usize) -> Result<(f64, f64)> {
    let send: Vec<f64> = (0..bytes / 8).map(|i| (w.rank() + i) as f64).collect();
    let mut recv = vec![0.0f64; send.len()];
    let (mut pure, mut overlap) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        w.barrier()?;
        let t0 = Instant::now();
        for _ in 0..iters {
            w.scope(|s| {
                s.iallreduce((&send[..], &mut recv[..]), Sum)?
                    .wait()
                    .map(drop)
            })?;
        }
        let p = t0.elapsed().as_secs_f64() / iters as f64;
        // every rank computes as long as rank 0's pure time
        let mut p0 = [p];
        w.bcast(&mut p0[..], 0)?;
        let spell = Duration::from_secs_f64(p0[0]);
        w.barrier()?;
        let (mut total, mut comp) = (0.0, 0.0);
        for _ in 0..iters {
            let a = Instant::now();
            w.scope(|s| {
                let req = s.iallreduce((&send[..], &mut recv[..]), Sum)?;
                let c0 = Instant::now();
                compute_for(spell);
                comp += c0.elapsed().as_secs_f64();
                req.wait().map(drop)
            })?;
            total += a.elapsed().as_secs_f64();
        }
        let (total, comp) = (total / iters as f64, comp / iters as f64);
        pure.push(p0[0] * 1e6);
        overlap.push((100.0 * (1.0 - (total - comp) / p0[0])).clamp(0.0, 100.0));
    }
    Ok((common::median(pure), common::median(overlap)))
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if !args.json {
        println!(
            "iallreduce overlap, {} ranks on {cores} core(s){}: OSU's method (see the file header)",
            args.ranks,
            if args.ranks > cores {
                " (ranks share cores)"
            } else {
                ""
            }
        );
    }
    let scale = if args.quick { 0.1 } else { 1.0 };
    let out = rpar::run(args.ranks, |w| {
        let mut rows = Vec::new();
        for bytes in SIZES {
            let iters =
                (((if bytes >= 1 << 20 { 50 } else { 500 }) as f64 * scale) as usize).max(1);
            rows.push(measure(&w, bytes, iters)?);
        }
        Ok(rows)
    });
    let rows = match out {
        Ok(rows) => rows.into_iter().next().unwrap_or_default(),
        Err(e) => {
            eprintln!("overlap: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    for (bytes, (pure, overlap)) in SIZES.into_iter().zip(rows) {
        let p = args.ranks;
        if args.json {
            println!("{{\"peer\":\"rpar\",\"figure\":\"iallreduce_us\",\"ranks\":{p},\"bytes\":{bytes},\"value\":{pure:.3}}}");
            println!("{{\"peer\":\"rpar\",\"figure\":\"iallreduce_overlap_pct\",\"ranks\":{p},\"bytes\":{bytes},\"value\":{overlap:.1}}}");
        } else {
            println!("{bytes:>8} B: iallreduce + wait {pure:>9.2} us, overlap {overlap:5.1} %");
        }
    }
    std::process::ExitCode::SUCCESS
}
