//! Pack throughput of strided vector types, measured the way `shared/peers/peer_bench.c`
//! measures MPICH's `MPI_Pack`, so the figures sit beside MPICH's: one rank packs every other
//! double of a 32 MiB array (`vector(2M, 1, 2, f64)`) and blocks of 4 doubles out of 8
//! (`vector(512K, 4, 8, f64)`), 16 MiB of packed data each; median of 7 repetitions, GB/s =
//! packed bytes / seconds / 1e9. Prints one JSON line per figure (and, on stderr, a plain
//! memcpy of the same bytes, the local limit).
//!
//! Run: `cargo run --release --example pack_bench` (`-- --quick`: 1/32 of the size, for the
//! test suite). Checks every packed byte once and exits non-zero if one is wrong.

use rpar::prelude::*;
use std::time::Instant;

const REPS: usize = 7;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Packs `src` with `ty` REPS times into `out`; returns the median GB/s.
fn bench(ty: &CommittedType, src: &[f64], out: &mut [u8]) -> Result<f64> {
    let mut rates = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let mut pos = 0;
        let t0 = Instant::now();
        ty.pack(src, 1, out, &mut pos)?;
        let dt = t0.elapsed().as_secs_f64();
        rates.push(pos as f64 / dt / 1e9);
    }
    Ok(median(rates))
}

fn main() -> Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let n: usize = if quick { 64 << 10 } else { 2 << 20 };
    let src: Vec<f64> = (0..2 * n).map(|i| i as f64).collect();
    let mut out = vec![0u8; 8 * n];
    let figures = [
        (
            "pack_vector_stride2_GBps",
            TypeMap::vector(n, 1, 2, &f64::type_map())?.commit(),
        ),
        (
            "pack_vector_4of8_GBps",
            TypeMap::vector(n / 4, 4, 8, &f64::type_map())?.commit(),
        ),
    ];
    for (figure, ty) in &figures {
        let value = bench(ty, &src, &mut out)?;
        let (len, stride) = if figure.contains("4of8") {
            (4, 8)
        } else {
            (1, 2)
        };
        let wrong = out.chunks_exact(8).enumerate().find(|&(k, b)| {
            let want = ((k / len) * stride + k % len) as f64;
            f64::from_ne_bytes(b.try_into().expect("8 bytes")) != want
        });
        if let Some((k, _)) = wrong {
            return Err(Error::user(format!("{figure}: packed double {k} is wrong")));
        }
        println!(
            "{{\"peer\":\"rpar\",\"figure\":\"{figure}\",\"bytes\":{},\"value\":{value:.3}}}",
            out.len()
        );
    }
    let mut rates = Vec::with_capacity(REPS);
    let src_bytes: &[u8] = &vec![1u8; out.len()];
    for _ in 0..REPS {
        let t0 = Instant::now();
        out.copy_from_slice(src_bytes);
        rates.push(out.len() as f64 / t0.elapsed().as_secs_f64() / 1e9);
    }
    eprintln!(
        "memcpy of the same {} bytes: {:.3} GB/s",
        out.len(),
        median(rates)
    );
    Ok(())
}
