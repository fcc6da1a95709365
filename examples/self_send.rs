//! The smallest point-to-point loop, for counting what one message costs: a single rank sends
//! 8 bytes to itself and receives them, again and again — with blocking `send` + `recv_into`,
//! or (`--nonblocking`) with `irecv_into` + `send` + `wait`. It checks every value it receives
//! and exits non-zero if one is wrong.
//!
//! `bench/trace_overhead.sh` counts its instructions under `valgrind --tool=callgrind`, built
//! with the `trace` feature (compiled in, `RPAR_TRACE` unset) and without it, to show what
//! tracing costs when it is off. One rank and no deadlock watch: nothing waits or polls, so the
//! count does not depend on timing.
//!
//! Run: `cargo run --release --example self_send -- [--nonblocking] [ITERATIONS]` (default
//! 100000).

use clap::Parser;
use rpar::{Error, Result, Universe};

/// One rank sends 8 bytes to itself and receives them, ITERATIONS times, checking each value.
#[derive(Parser, Debug)]
#[command(name = "self_send")]
struct Args {
    /// irecv_into + send + wait instead of send + recv_into.
    #[arg(long)]
    nonblocking: bool,
    /// How many send+recv pairs.
    #[arg(default_value_t = 100_000)]
    iterations: u64,
}

fn main() -> Result<()> {
    let Args {
        nonblocking,
        iterations,
    } = Args::parse();
    Universe::new(1).deadlock_detection(false).run(|world| {
        let mut got = u64::MAX;
        for i in 0..iterations {
            if nonblocking {
                let request = world.irecv_into(&mut got, 0, 0)?;
                world.send(&i, 0, 0)?;
                request.wait()?;
            } else {
                world.send(&i, 0, 0)?;
                world.recv_into(&mut got, 0, 0)?;
            }
            if got != i {
                return Err(Error::user(format!("sent {i}, received {got}")));
            }
        }
        Ok(())
    })?;
    println!("{iterations} self send+recv of 8 bytes: every value came back");
    Ok(())
}
