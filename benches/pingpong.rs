//! Ping-pong latency (8 B) and bandwidth (1 MiB) between two ranks, next to a raw crossbeam
//! channel ping-pong between two threads measured in the same run: the floor that rpar's
//! in-process transport is built on. Run: `cargo bench --bench pingpong`.

#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::{Duration, Instant};

/// `iters` round trips of `bytes` between rank 0 and rank 1; the time rank 0 measured.
fn rpar_pingpong(bytes: usize, iters: u64) -> Duration {
    let times = rpar::run(2, |w| {
        let mut buf = vec![0u8; bytes];
        w.barrier()?;
        let start = Instant::now();
        for _ in 0..iters {
            if w.rank() == 0 {
                w.send(&buf[..], 1, 0)?;
                w.recv_into(&mut buf[..], 1, 0)?;
            } else {
                w.recv_into(&mut buf[..], 0, 0)?;
                w.send(&buf[..], 0, 0)?;
            }
        }
        Ok(start.elapsed())
    })
    .expect("ping-pong run");
    times[0]
}

/// The same exchange over two raw crossbeam channels between two threads (8-byte payloads).
fn crossbeam_pingpong(iters: u64) -> Duration {
    let (to_b, from_a) = crossbeam_channel::unbounded::<[u8; 8]>();
    let (to_a, from_b) = crossbeam_channel::unbounded::<[u8; 8]>();
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..iters {
                let m = from_a.recv().unwrap();
                to_a.send(m).unwrap();
            }
        });
        let start = Instant::now();
        for _ in 0..iters {
            to_b.send([1; 8]).unwrap();
            from_b.recv().unwrap();
        }
        start.elapsed()
    })
}

fn latency(c: &mut Criterion) {
    let mut g = c.benchmark_group("latency_8B_roundtrip");
    g.bench_function("rpar", |b| b.iter_custom(|n| rpar_pingpong(8, n)));
    g.bench_function("crossbeam_channel", |b| b.iter_custom(crossbeam_pingpong));
    g.finish();
}

fn bandwidth(c: &mut Criterion) {
    let mut g = c.benchmark_group("bandwidth_roundtrip");
    for bytes in [64usize << 10, 1 << 20] {
        g.throughput(Throughput::Bytes(2 * bytes as u64));
        g.bench_with_input(BenchmarkId::new("rpar", bytes), &bytes, |b, &bytes| {
            b.iter_custom(|n| rpar_pingpong(bytes, n))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = latency, bandwidth
}
criterion_main!(benches);
