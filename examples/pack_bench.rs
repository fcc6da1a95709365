//! Pack throughput of strided vector types, measured the way `shared/peers/peer_bench.c`
//! measures MPICH's `MPI_Pack`, so the figures sit beside MPICH's: one rank packs every other
//! double of a 32 MiB array (`vector(2M, 1, 2, f64)`) and blocks of 4 doubles out of 8
//! (`vector(512K, 4, 8, f64)`), 16 MiB of packed data each; median of 7 repetitions, GB/s =
//! packed bytes / seconds / 1e9. Prints one JSON line per figure, and one for a plain memcpy of
//! as many bytes from the start of the array into the same output (`copy_GBps`, the local
//! limit, in the form peer_bench.c prints it, so that `bench/table.py` fills that row for rpar).
//!
//! `-- --rounds N` repeats the whole (both figures, then the memcpy) N times and reports the
//! medians over rounds, and on stderr each figure's ratio to the memcpy of its own round: on a
//! loaded machine that ratio is steadier than the rates.
//!
//! Run: `cargo run --release --example pack_bench` (`-- --quick`: 1/32 of the size, for the
//! test suite). Checks every packed byte and exits non-zero if one is wrong.

use clap::Parser;
use common::median;
use rpar::prelude::*;
use std::time::Instant;

mod common;

const REPS: usize = 7;

/// Pack throughput of the two strided vector types of the peers' benchmark, as JSON lines.
#[derive(Parser, Debug)]
#[command(name = "pack_bench")]
struct Args {
    /// 1/32 of the size (512 KiB packed per figure), for the test suite.
    #[arg(long)]
    quick: bool,
    /// Repeat the whole this many times and report the medians over rounds.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    rounds: u64,
}

/// Runs `f` once and returns its rate in GB/s for `bytes` bytes.
fn rate(bytes: usize, f: impl FnOnce() -> Result<()>) -> Result<f64> {
    let t0 = Instant::now();
    f()?;
    Ok(bytes as f64 / t0.elapsed().as_secs_f64() / 1e9)
}

/// Checks that `out` holds the doubles `vector(_, len, stride, f64)` packs from `0, 1, 2, …`.
fn check(figure: &str, out: &[u8], len: usize, stride: usize) -> Result<()> {
    let wrong = out.chunks_exact(8).enumerate().find(|&(k, b)| {
        let want = ((k / len) * stride + k % len) as f64;
        f64::from_ne_bytes(b.try_into().expect("8 bytes")) != want
    });
    match wrong {
        Some((k, _)) => Err(Error::user(format!("{figure}: packed double {k} is wrong"))),
        None => Ok(()),
    }
}

fn main() -> Result<()> {
    let Args { quick, rounds } = Args::parse();
    let n: usize = if quick { 64 << 10 } else { 2 << 20 };
    let src: Vec<f64> = (0..2 * n).map(|i| i as f64).collect();
    let mut out = vec![0u8; 8 * n];
    // SAFETY: the first out.len() (= half of `src`'s) bytes of initialised f64s, viewed as u8
    // (alignment 1) while `src` is only read: what peer_bench.c's memcpy copies.
    let src_bytes: &[u8] =
        unsafe { std::slice::from_raw_parts(src.as_ptr().cast::<u8>(), out.len()) };
    // (figure, type, block length and stride in doubles)
    let figures = [
        (
            "pack_vector_stride2_GBps",
            TypeMap::vector(n, 1, 2, &f64::type_map())?.commit(),
            (1, 2),
        ),
        (
            "pack_vector_4of8_GBps",
            TypeMap::vector(n / 4, 4, 8, &f64::type_map())?.commit(),
            (4, 8),
        ),
    ];
    // the figures and the memcpy take turns, 7 repetitions each, so that on a loaded machine
    // each round sees one load: rates[i][round] is the median of a round
    let mut rates = vec![Vec::new(); figures.len() + 1];
    for _ in 0..rounds {
        for (i, (figure, ty, (len, stride))) in figures.iter().enumerate() {
            let mut round = Vec::with_capacity(REPS);
            for _ in 0..REPS {
                let mut pos = 0;
                round.push(rate(out.len(), || ty.pack(&src, 1, &mut out, &mut pos))?);
            }
            check(figure, &out, *len, *stride)?;
            rates[i].push(median(round));
        }
        let mut round = Vec::with_capacity(REPS);
        for _ in 0..REPS {
            round.push(rate(out.len(), || {
                out.copy_from_slice(src_bytes);
                Ok(())
            })?);
        }
        rates[figures.len()].push(median(round));
    }
    let memcpy = &rates[figures.len()];
    for (i, (figure, ..)) in figures.iter().enumerate() {
        let ratio = median(rates[i].iter().zip(memcpy).map(|(p, c)| p / c));
        print_figure(figure, out.len(), median(rates[i].iter().copied()));
        eprintln!("{figure}: {ratio:.2}x the memcpy of the same round (median over rounds)");
    }
    print_figure("copy_GBps", out.len(), median(memcpy.iter().copied()));
    Ok(())
}

/// One JSON line, as `shared/peers/peer_bench.c` prints its figures.
fn print_figure(figure: &str, bytes: usize, value: f64) {
    println!(
        "{{\"peer\":\"rpar\",\"figure\":\"{figure}\",\"bytes\":{bytes},\"value\":{value:.3}}}"
    );
}
