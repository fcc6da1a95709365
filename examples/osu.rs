//! OSU-style micro-benchmarks of rpar, printing JSON lines in exactly the form that
//! `shared/peers/run.sh` prints for MPICH and Open MPI (`peer`, `figure`, `ranks`, `bytes`,
//! `value`), so that all three sit side by side.
//!
//! Run: `cargo run --release --example osu -- --json` (add `--quick` for fewer iterations;
//! without `--json` the same figures as a table, with a progress bar on a terminal: the whole
//! run takes minutes).
//! On the MPI transport (built with `--features mpi`, started by `mpiexec -n P`) it prints the
//! figures of a P-rank job as `"peer":"rpar-mpi"`: point-to-point when P is 2, the collectives
//! on P ranks.
//! Figures, timed as `shared/peers/peer_bench.c` times them: ping-pong latency (half round
//! trip); streaming bandwidth (loops of a window of 64 sends, 16 at 4 MiB, and an
//! acknowledgement: the sender's are non-blocking and waited for together; the receiver takes
//! them into one buffer, as the peers' do — they post all the window's receives on one buffer,
//! which two pending receives in rpar cannot borrow both, so it receives them one after
//! another while the sends are all in flight); owned-`Vec` bandwidth, in the same loops and
//! windows;
//! allreduce (out of place, as the peers'), bcast, allgather and alltoall at 8 B, 64 KiB and
//! 1 MiB per rank on 2, 4 and 8 ranks, and (rpar only) at 8 B and 64 KiB on 64 ranks and at
//! 8 B on 256 ranks; each the median of 7 repetitions, like the peers' program. Pack throughput
//! is `examples/pack_bench.rs`.
//!
//! `--latency-only` prints the four latencies alone, in seconds (a machine whose speed changes
//! from one second to the next is measured by many short runs side by side).
//! `--allreduce`, `--bcast`, `--allgather`, `--alltoall` time one of rpar's own algorithms
//! instead of the default choice (on MPI, MPI's own collective): beside MPICH run with
//! `MPIR_CVAR_<OP>_INTRA_ALGORITHM` set to the same algorithm, as `bench/algorithms.sh` does.

use clap::Parser;
use common::algorithms::{allgather_named, allreduce_named, alltoall_named, bcast_named};
use common::{median, Progress};
use rpar::{Allgather, Allreduce, Alltoall, Bcast, Comm, Max, Result, Sum};
use std::time::Instant;

mod common;

const REPS: usize = 7;

/// Where every benchmark buffer starts: on a page boundary, as OSU's own benchmarks allocate
/// theirs (and as the peers' one large `malloc` each, served by `mmap`, starts at the same
/// place in its page on both processes). How fast the kernel copies a message between two
/// processes (UCX's CMA under MPICH) depends on where the two buffers start in their pages:
/// with `vec!` buffers wherever the heap put them (a size the allocator serves from the heap
/// once an earlier one was freed), rpar on MPICH took 110 us or 455 us for the same 1 MiB
/// ping-pong from one run to the next.
const PAGE: usize = 4096;

/// Bytes past the page boundary where every buffer starts (`--page-offset`: a multiple of
/// [`WIDEST`] below [`PAGE`]).
static OFFSET: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The widest element of a benchmark buffer (`f64`): every buffer can start at a multiple.
const WIDEST: usize = 8;

/// `--page-offset`: a number of bytes below [`PAGE`], a multiple of [`WIDEST`].
fn page_offset(text: &str) -> Result<usize, String> {
    let bytes: usize = text.parse().map_err(|e| format!("{e}"))?;
    if bytes >= PAGE || !bytes.is_multiple_of(WIDEST) {
        return Err(format!(
            "expected a multiple of {WIDEST} bytes below {PAGE}, got {bytes}"
        ));
    }
    Ok(bytes)
}

/// `len` copies of a value, starting `offset` bytes past a page boundary ([`PAGE`]).
struct PageAligned<T> {
    storage: Vec<T>,
    start: usize,
    len: usize,
}

impl<T: Clone> PageAligned<T> {
    fn new(value: T, len: usize) -> Self {
        let size = std::mem::size_of::<T>().max(1);
        let spare = 2 * PAGE / size;
        let storage = vec![value; len + spare];
        let offset = OFFSET.load(std::sync::atomic::Ordering::Relaxed) / size;
        let start = storage.as_ptr().align_offset(PAGE).min(PAGE / size) + offset;
        PageAligned {
            storage,
            start,
            len,
        }
    }
}

impl<T> std::ops::Deref for PageAligned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.storage[self.start..self.start + self.len]
    }
}

impl<T> std::ops::DerefMut for PageAligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// OSU-style micro-benchmarks of rpar: latency, bandwidth and collectives beside MPICH's and
/// Open MPI's figures.
#[derive(Parser, Debug)]
#[command(name = "osu")]
struct Args {
    /// Print JSON lines in the form of shared/peers/run.sh (for bench/compare.sh), no progress.
    #[arg(long)]
    json: bool,
    /// Fewer iterations (1/20 of each count): a quick check, not a measurement.
    #[arg(long)]
    quick: bool,
    /// Only the point-to-point latencies (8 B to 1 MiB, a few seconds): to run many times over,
    /// beside the peers, on a machine whose speed changes from one second to the next.
    #[arg(long)]
    latency_only: bool,
    /// The share of each count run on 4 and 8 ranks (oversubscribed on 2 cores), as the peers'
    /// program takes it: 0.2 (Open MPI's in `shared/peers/run.sh`); 0.01 is MPICH's there,
    /// which `bench/compare.sh` passes under MPICH's `mpiexec` so that both run as many calls.
    #[arg(long, default_value_t = 0.2)]
    oversubscribed_scale: f64,
    /// Bytes past a page boundary where every buffer starts (0: on the page, as OSU's own
    /// benchmarks; 16: where the peers' large `malloc`s start, served by `mmap`).
    #[arg(long, default_value_t = 0, value_parser = page_offset)]
    page_offset: usize,
    /// The allreduce algorithm: auto, recursive-doubling, ring, rabenseifner, reduce-bcast,
    /// shared-memory.
    #[arg(long, default_value = "auto", value_parser = allreduce_named)]
    allreduce: Allreduce,
    /// The bcast algorithm: auto, linear, binomial, pipeline, scatter-allgather, shared-memory.
    #[arg(long, default_value = "auto", value_parser = bcast_named)]
    bcast: Bcast,
    /// The allgather algorithm: auto, ring, recursive-doubling, pairwise, bruck, shared-memory.
    #[arg(long, default_value = "auto", value_parser = allgather_named)]
    allgather: Allgather,
    /// The alltoall algorithm: auto, linear, pairwise, bruck, hypercube, shared-memory.
    #[arg(long, default_value = "auto", value_parser = alltoall_named)]
    alltoall: Alltoall,
}

/// The algorithm of each timed collective family.
#[derive(Debug, Clone, Copy)]
struct Algorithms {
    allreduce: Allreduce,
    bcast: Bcast,
    allgather: Allgather,
    alltoall: Alltoall,
}

struct Opts {
    scale: f64,
    json: bool,
    latency_only: bool,
    progress: Progress,
    algorithms: Algorithms,
}

impl Opts {
    fn iters(&self, n: usize) -> usize {
        ((n as f64 * self.scale) as usize).max(1)
    }
}

/// Prints one figure: a JSON line as `shared/peers/run.sh` prints them, or a table row.
fn emit(o: &Opts, figure: &str, ranks: Option<usize>, bytes: usize, value: f64) {
    if !rpar::is_main_process() {
        return;
    }
    let peer = common::peer();
    if o.json {
        let ranks = ranks.map_or(String::new(), |r| format!("\"ranks\":{r},"));
        println!("{{\"peer\":\"{peer}\",\"figure\":\"{figure}\",{ranks}\"bytes\":{bytes},\"value\":{value:.3}}}");
    } else {
        let ranks = ranks.unwrap_or(2);
        o.progress
            .suspend(|| println!("{peer:<9} {figure:<26} {ranks:>5} {bytes:>9} {value:>12.3}"));
    }
}

/// Half round trip of `m` bytes between ranks 0 and 1, in microseconds (rank 0's view).
fn latency(w: &Comm, m: usize, iters: usize) -> Result<f64> {
    let sbuf = PageAligned::new(1u8, m);
    let mut rbuf = PageAligned::new(0u8, m);
    w.barrier()?;
    let t0 = Instant::now();
    for _ in 0..iters {
        if w.rank() == 0 {
            w.send(&sbuf[..], 1, 1)?;
            w.recv_into(&mut rbuf[..], 1, 1)?;
        } else {
            w.recv_into(&mut rbuf[..], 0, 1)?;
            w.send(&sbuf[..], 0, 1)?;
        }
    }
    Ok(t0.elapsed().as_secs_f64() / iters as f64 / 2.0 * 1e6)
}

/// The shape of the streaming bandwidth at `m` bytes, the peers': (window, loops), a window of
/// 64 messages (16 at 4 MiB), 40 loops (5 from 1 MiB).
fn stream_shape(o: &Opts, m: usize) -> (usize, usize) {
    let window = if m == 4 << 20 { 16 } else { 64 };
    (window, o.iters(if m >= 1 << 20 { 5 } else { 40 }))
}

/// The rate in GB/s of a stream of messages of `m` bytes, median of 7 repetitions: each
/// `loops` calls of `one_loop` (a window of `window` messages and its acknowledgement), timed
/// from a barrier, then `after`, untimed. Both work on `state`.
fn stream_rate<S>(
    w: &Comm,
    m: usize,
    (window, loops): (usize, usize),
    state: &mut S,
    one_loop: impl Fn(&mut S) -> Result<()>,
    after: impl Fn(&mut S) -> Result<()>,
) -> Result<f64> {
    let mut t = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        w.barrier()?;
        let t0 = Instant::now();
        for _ in 0..loops {
            one_loop(state)?;
        }
        t.push((m * window * loops) as f64 / t0.elapsed().as_secs_f64() / 1e9);
        after(state)?;
    }
    Ok(median(t))
}

/// Streaming bandwidth in GB/s: `loops` times, rank 0 starts `window` sends of `m` bytes
/// (zero-copy, scoped) and waits for them, rank 1 receives them one after another into one
/// buffer (the peers' `window` receives all name one buffer), then acknowledges with 1 byte.
fn bandwidth(w: &Comm, m: usize, shape: (usize, usize)) -> Result<f64> {
    let sbuf = PageAligned::new(1u8, m);
    // the receiver's buffer, filled so that its pages are there before the timed part, as the
    // peers' memset does
    let mut rbuf = PageAligned::new(0xffu8, if w.rank() == 1 { m } else { 0 });
    let one_loop = |rbuf: &mut PageAligned<u8>| {
        let mut ack = [0u8; 1];
        if w.rank() == 0 {
            w.scope(|s| {
                for _ in 0..shape.0 {
                    s.isend(&sbuf[..], 1, 2)?;
                }
                Ok(())
            })?;
            w.recv_into(&mut ack[..], 1, 3)?;
        } else {
            for _ in 0..shape.0 {
                w.recv_into(&mut rbuf[..], 0, 2)?;
            }
            w.send(&ack[..], 0, 3)?;
        }
        Ok(())
    };
    stream_rate(w, m, shape, &mut rbuf, one_loop, |_| Ok(()))
}

/// Owned-`Vec` streaming bandwidth in GB/s: the loops and windows of [`bandwidth`], but each
/// message is a `Vec` that moves to the receiver (`send_owned` / `recv`). The buffers are made
/// before the first repetition; after each, untimed, the receiver hands them back.
fn owned_bandwidth(w: &Comm, m: usize, (window, loops): (usize, usize)) -> Result<f64> {
    let messages = window * loops;
    let pool: Vec<Vec<u8>> = if w.rank() == 0 {
        (0..messages).map(|_| vec![1u8; m]).collect()
    } else {
        Vec::new()
    };
    // (rank 0's buffers to send, rank 1's received)
    let mut buffers = (pool, Vec::with_capacity(messages));
    let one_loop = |(pool, received): &mut (Vec<Vec<u8>>, Vec<Vec<u8>>)| {
        let mut ack = [0u8; 1];
        if w.rank() == 0 {
            for v in pool.drain(pool.len() - window..) {
                w.send(v, 1, 4)?;
            }
            w.recv_into(&mut ack[..], 1, 5)?;
        } else {
            for _ in 0..window {
                received.push(w.recv::<u8>(0, 4)?.0);
            }
            w.send(&ack[..], 0, 5)?;
        }
        Ok(())
    };
    let hand_back = |(pool, received): &mut (Vec<Vec<u8>>, Vec<Vec<u8>>)| {
        if w.rank() == 0 {
            for _ in 0..messages {
                pool.push(w.recv::<u8>(1, 6)?.0);
            }
        } else {
            for v in received.drain(..) {
                w.send(v, 0, 6)?;
            }
        }
        Ok(())
    };
    stream_rate(w, m, (window, loops), &mut buffers, one_loop, hand_back)
}

fn point_to_point(o: &Opts) -> Result<()> {
    let figures = rpar::run(2, |w| {
        let step = |what: String| {
            if w.rank() == 0 {
                o.progress.step(what);
            }
        };
        let mut out = Vec::new();
        for m in [8usize, 1024, 65536, 1 << 20] {
            step(format!("latency, {m} B"));
            let iters = o.iters(match m {
                0..=1024 => 20000,
                1025..=65536 => 2000,
                _ => 200,
            });
            let t = (0..REPS)
                .map(|_| latency(&w, m, iters))
                .collect::<Result<Vec<_>>>()?;
            out.push(("latency_us".to_string(), m, median(t)));
        }
        if o.latency_only {
            return Ok(out);
        }
        for m in [65536usize, 1 << 20, 4 << 20] {
            step(format!("bandwidth, {m} B"));
            let shape = stream_shape(o, m);
            out.push(("bandwidth_GBps".to_string(), m, bandwidth(&w, m, shape)?));
        }
        for m in [65536usize, 1 << 20, 4 << 20] {
            step(format!("owned-Vec bandwidth, {m} B"));
            let shape = stream_shape(o, m);
            let figure = "owned_vec_bandwidth_GBps".to_string();
            out.push((figure, m, owned_bandwidth(&w, m, shape)?));
        }
        Ok(out)
    })?;
    for (figure, m, v) in &figures[0] {
        emit(o, figure, None, *m, *v);
    }
    Ok(())
}

/// The collectives the peers measure, in their order.
const COLLECTIVES: [&str; 4] = ["allreduce_us", "bcast_us", "allgather_us", "alltoall_us"];

/// One call of collective `op` with `m` bytes per rank (the peers' definitions: allreduce of
/// m/8 doubles, bcast of m bytes from rank 0, allgather and alltoall of m bytes per rank).
fn collective(w: &Comm, op: &str, m: usize, bufs: &mut Bufs) -> Result<()> {
    match op {
        // out of place, as the peers' MPI_Allreduce(sbuf, rbuf, m/8, MPI_DOUBLE, MPI_SUM, …):
        // the send buffer is only read and the sums land in the receive buffer
        "allreduce_us" => w.allreduce((&bufs.doubles[..], &mut bufs.sums[..]), Sum),
        "bcast_us" => w.bcast(&mut bufs.send[..m], 0),
        "allgather_us" => w.allgather((&bufs.send[..m], &mut bufs.recv[..m * w.size()])),
        "alltoall_us" => w.alltoall((&bufs.send[..m * w.size()], &mut bufs.recv[..m * w.size()])),
        other => unreachable!("unknown collective {other}"),
    }
}

struct Bufs {
    doubles: PageAligned<f64>,
    sums: PageAligned<f64>,
    send: PageAligned<u8>,
    recv: PageAligned<u8>,
}

/// Mean time of one call in microseconds, the slowest rank's, median of 7 (as the peers).
fn time_collective(w: &Comm, op: &str, m: usize, iters: usize, a: Algorithms) -> Result<f64> {
    // the algorithms chosen once, outside the timed loops
    let allreduce = w.using(a.allreduce);
    let bcast = allreduce.using(a.bcast);
    let allgather = bcast.using(a.allgather);
    let w = allgather.using(a.alltoall);
    let p = w.size();
    let mut bufs = Bufs {
        doubles: PageAligned::new(1.0, (m / 8).max(1)),
        sums: PageAligned::new(0.0, (m / 8).max(1)),
        send: PageAligned::new(1u8, m * p),
        recv: PageAligned::new(0u8, m * p),
    };
    let mut t = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        w.barrier()?;
        let t0 = Instant::now();
        for _ in 0..iters {
            collective(&w, op, m, &mut bufs)?;
        }
        let local = t0.elapsed().as_secs_f64() / iters as f64 * 1e6;
        t.push(w.allreduce(&local, Max)?);
    }
    // the sums of p ones: what the timed allreduce must have left (the other figures' results
    // are bytes that nothing checks, as in the peers' program)
    if op == "allreduce_us" && bufs.sums.iter().any(|&s| s != p as f64) {
        return Err(rpar::Error::user(format!(
            "allreduce of {m} bytes on {p} ranks: sums {:?}…, expected {p}",
            &bufs.sums[..bufs.sums.len().min(4)]
        )));
    }
    Ok(median(t))
}

fn collectives(o: &Opts, ranks: &[usize], sizes: &[usize], scale: f64) -> Result<()> {
    for &p in ranks {
        let figures = rpar::run(p, |w| {
            let mut out = Vec::new();
            for op in COLLECTIVES {
                for &m in sizes {
                    if w.rank() == 0 {
                        o.progress.step(format!("{op} on {p} ranks, {m} B"));
                    }
                    let base = match m {
                        0..=8 => 2000.0,
                        9..=65536 => 200.0,
                        _ => 20.0,
                    };
                    let iters = ((base * scale * o.scale) as usize).max(1);
                    out.push((
                        op.to_string(),
                        m,
                        time_collective(&w, op, m, iters, o.algorithms)?,
                    ));
                }
            }
            Ok(out)
        })?;
        for (op, m, v) in &figures[0] {
            emit(o, op, Some(p), *m, *v);
        }
    }
    Ok(())
}

/// The figures of a point-to-point run: 4 latencies, 3 bandwidths, 3 owned-Vec bandwidths.
const POINT_TO_POINT_FIGURES: usize = 10;

/// Of them, the latencies.
const LATENCY_FIGURES: usize = 4;

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    OFFSET.store(args.page_offset, std::sync::atomic::Ordering::Relaxed);
    let sizes = [8usize, 65536, 1 << 20];
    let job = rpar::mpi_processes();
    // in-process: point-to-point, then the collectives on 2, 4, 8, 64 (two sizes) and 256 ranks
    // (one size); on MPI: this job's size only
    let steps = match job {
        _ if args.latency_only => LATENCY_FIGURES,
        Some(2) => POINT_TO_POINT_FIGURES + COLLECTIVES.len() * sizes.len(),
        Some(_) => COLLECTIVES.len() * sizes.len(),
        None => POINT_TO_POINT_FIGURES + COLLECTIVES.len() * (3 * sizes.len() + 2 + 1),
    };
    let o = Opts {
        scale: if args.quick { 0.05 } else { 1.0 },
        json: args.json,
        latency_only: args.latency_only,
        progress: Progress::new("osu", steps as u64, args.json),
        algorithms: Algorithms {
            allreduce: args.allreduce,
            bcast: args.bcast,
            allgather: args.allgather,
            alltoall: args.alltoall,
        },
    };
    if !o.json && rpar::is_main_process() {
        println!(
            "{:<9} {:<26} {:>5} {:>9} {:>12}",
            "peer", "figure", "ranks", "bytes", "value"
        );
    }
    if args.latency_only {
        return exit_code(point_to_point(&o));
    }
    if let Some(p) = job {
        // on MPI: the figures of this job's size only (idle processes would skew the others)
        let scale = if p <= 2 {
            1.0
        } else {
            args.oversubscribed_scale
        };
        let run = if p == 2 { point_to_point(&o) } else { Ok(()) }
            .and_then(|()| collectives(&o, &[p], &sizes, scale));
        return exit_code(run);
    }
    let run = point_to_point(&o)
        // like the peers: 2 ranks at full count, 4 and 8 oversubscribed with fewer iterations
        .and_then(|()| collectives(&o, &[2], &sizes, 1.0))
        .and_then(|()| collectives(&o, &[4, 8], &sizes, args.oversubscribed_scale))
        // rpar only: many more ranks than cores
        .and_then(|()| collectives(&o, &[64], &[8, 65536], 0.02))
        .and_then(|()| collectives(&o, &[256], &[8], 0.02));
    exit_code(run)
}

fn exit_code(run: Result<()>) -> std::process::ExitCode {
    match run {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
