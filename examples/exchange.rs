//! A halo exchange between 2 ranks as an rpar program writes it, timed as
//! `bench/exchange/peer_exchange.c` times the C one, printing JSON lines in the form of
//! `shared/peers/run.sh`: each step, each rank posts receives of its two faces from the other
//! (tags 0 and 1, each into a buffer of its own) in a [`Comm::scope`], starts sends of its own
//! two, and waits for the receives (the scope waits for the sends). The figure is the time of
//! one step in microseconds, median of 7 repetitions of the mean over the steps, for faces of
//! 8 B, 1 KiB, 64 KiB and 1 MiB.
//!
//! On the MPI transport (`--features mpi`, `mpiexec -n 2`) the receives go to MPI straight into
//! their buffers once each channel's first message has told the receiver its class
//! (`transport/endpoint/direct.rs`), as the C program's `MPI_Irecv`s do: `bench/mpi_exchange.sh`
//! runs both. In-process (`cargo run --release --example exchange`) it runs on 2 threads.

mod common;
use clap::Parser;
use common::median;
use rpar::{Comm, Result};
use std::time::Instant;

/// A halo exchange between 2 ranks: pre-posted receives, sends, wait.
#[derive(Parser, Debug)]
#[command(about)]
struct Args {
    /// Fewer steps (a tenth).
    #[arg(long)]
    quick: bool,
    /// Print JSON lines (else a table).
    #[arg(long)]
    json: bool,
    /// One face size in bytes instead of the four.
    #[arg(long)]
    bytes: Option<usize>,
}

/// Repetitions of each size's timed loop.
const REPS: usize = 7;

/// The time of one exchange step with faces of `m` bytes, in microseconds: the median over
/// [`REPS`] repetitions of the mean over `steps` steps.
fn exchange(w: &Comm, m: usize, steps: usize) -> Result<f64> {
    let other = 1 - w.rank();
    let out = [vec![1u8; m], vec![2u8; m]];
    let mut faces = [vec![0u8; m], vec![0u8; m]];
    let mut times = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        w.barrier()?;
        let t0 = Instant::now();
        for _ in 0..steps {
            let [left, right] = &mut faces;
            w.scope(|s| {
                let from_left = s.irecv_into(&mut left[..], other, 0)?;
                let from_right = s.irecv_into(&mut right[..], other, 1)?;
                s.isend(&out[1][..], other, 0)?;
                s.isend(&out[0][..], other, 1)?;
                rpar::wait_all(vec![from_left, from_right]).map(drop)
            })?;
        }
        times.push(t0.elapsed().as_secs_f64() / steps as f64 * 1e6);
    }
    if faces[0][0] != 2 || faces[1][m - 1] != 1 {
        return Err(rpar::Error::user("the faces did not arrive"));
    }
    Ok(median(times))
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let figures = rpar::run(2, |w| {
        let mut out = Vec::new();
        let sizes = match args.bytes {
            Some(m) => vec![m.max(1)],
            None => vec![8usize, 1024, 65536, 1 << 20],
        };
        for m in sizes {
            let steps = match m {
                0..=1024 => 20000,
                1025..=65536 => 2000,
                _ => 200,
            };
            let steps = if args.quick { steps / 10 } else { steps };
            out.push((m, exchange(&w, m, steps)?));
        }
        Ok(out)
    });
    common::report("exchange", figures, |figures, peer| {
        for (m, us) in figures {
            match args.json {
                true => println!(
                    "{{\"peer\":\"{peer}\",\"figure\":\"exchange_us\",\"bytes\":{m},\"value\":{us:.3}}}"
                ),
                false => println!("{peer:<9} exchange_us {m:>9} B {us:>10.3} us"),
            }
        }
    })
}
