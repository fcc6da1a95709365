//! The time of one small call on 2 ranks, robust to a machine whose speed changes from one
//! second to the next, timed as `bench/small_calls/peer_small_calls.c` times MPI's: an 8-byte
//! ping-pong (`send`, `recv_into` from the known source; the half round trip), an 8-byte
//! `bcast` from rank 0 and an 8-byte `allreduce` (`Sum` of one `u64`), each in chunks of 1000
//! calls from a barrier (a collective's chunk is the slower rank's). The figure is the 10th
//! percentile of the chunks' times per call, the median beside it: a pause of the machine spoils
//! the chunks it falls in, not the figure, so that two builds run a minute apart can be
//! compared to a few percent (osu's means over one loop cannot).
//!
//! On the MPI transport (`--features mpi`, `mpiexec -n 2`) `bench/mpi_small_calls.sh` runs it
//! beside the C program; in-process (`cargo run --release --example small_calls`) it runs on 2
//! threads. `--bcast` and `--allreduce` time one of rpar's own algorithms instead of the default
//! choice (on MPI, MPI's own collective): beside the C program on MPICH with
//! `MPIR_CVAR_<OP>_INTRA_ALGORITHM` set to the same algorithm (`PEER_ENV` of the script).

mod common;
use clap::Parser;
use common::algorithms::{allreduce_named, bcast_named};
use rpar::{Allreduce, Bcast, Comm, Result, Sum};
use std::time::Instant;

/// One small call's time on 2 ranks: ping-pong, bcast, allreduce of 8 bytes.
#[derive(Parser, Debug)]
#[command(about)]
struct Args {
    /// Chunks of 1000 calls per figure.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    chunks: u32,
    /// Print JSON lines in the form of shared/peers/run.sh (else a table).
    #[arg(long)]
    json: bool,
    /// The bcast algorithm: auto, linear, binomial, pipeline, scatter-allgather, shared-memory.
    #[arg(long, default_value = "auto", value_parser = bcast_named)]
    bcast: Bcast,
    /// The allreduce algorithm: auto, recursive-doubling, ring, rabenseifner, reduce-bcast,
    /// shared-memory.
    #[arg(long, default_value = "auto", value_parser = allreduce_named)]
    allreduce: Allreduce,
}

/// Calls per chunk.
const CALLS: usize = 1000;

/// The figures, each timed by one chunk of its calls.
const FIGURES: [&str; 3] = ["pingpong_us", "bcast_us", "allreduce_us"];

/// One chunk of [`CALLS`] calls of `figure`, in microseconds per call (per half round trip for
/// the ping-pong), the slower rank's.
fn chunk(w: &Comm, figure: &str) -> Result<f64> {
    let send = [1u64];
    let mut recv = [0u64];
    // the call chosen before the clock starts, as the C program's switch on an int is cheap
    let call: &dyn Fn(&mut [u64]) -> Result<()> = match (figure, w.rank()) {
        ("pingpong_us", 0) => &|recv| {
            w.send(&send[..], 1, 1)?;
            w.recv_into(recv, 1, 1).map(drop)
        },
        ("pingpong_us", _) => &|recv| {
            w.recv_into(&mut *recv, 0, 1)?;
            w.send(&send[..], 0, 1)
        },
        ("bcast_us", _) => &|recv| w.bcast(recv, 0),
        _ => &|recv| w.allreduce((&send[..], recv), Sum),
    };
    w.barrier()?;
    let t0 = Instant::now();
    for _ in 0..CALLS {
        call(&mut recv[..])?;
    }
    let per_call = match figure {
        "pingpong_us" => 2 * CALLS,
        _ => CALLS,
    };
    let local = t0.elapsed().as_secs_f64() * 1e6 / per_call as f64;
    w.allreduce(&local, rpar::Max)
}

/// The 10th percentile and the median of `figure`'s chunks.
fn figure(w: &Comm, figure: &str, chunks: u32) -> Result<(f64, f64)> {
    chunk(w, figure)?; // warm-up
    let mut times = (0..chunks)
        .map(|_| chunk(w, figure))
        .collect::<Result<Vec<_>>>()?;
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 10], times[times.len() / 2]))
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let figures = rpar::run(2, |w| {
        // the algorithms chosen once, outside the timed loops
        let bcast = w.using(args.bcast);
        let w = bcast.using(args.allreduce);
        FIGURES
            .iter()
            .map(|f| figure(&w, f, args.chunks))
            .collect::<Result<Vec<_>>>()
    });
    common::report("small_calls", figures, |figures, peer| {
        for (name, (p10, median)) in FIGURES.iter().zip(figures) {
            match args.json {
                true => println!(
                    "{{\"peer\":\"{peer}\",\"figure\":\"{name}\",\"bytes\":8,\"value\":{p10:.4},\"median\":{median:.4}}}"
                ),
                false => println!("{peer:<9} {name:<13} 8 B  10th percentile {p10:>8.4} us  median {median:>8.4} us"),
            }
        }
    })
}
