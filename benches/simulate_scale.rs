//! How many ranks a whole-program simulation (`Universe::simulate`) takes on this machine, and
//! what it costs: for each rank count p (the arguments; default 1024 4096 16384), a program of
//! 10 steps — a little computation, a halo exchange of 8 KiB with both ring neighbours, an
//! allreduce of 8 bytes — runs simulated on a square-ish torus of p nodes. Prints the wall time
//! of the simulated run, the predicted time, the messages simulated, and this process's peak
//! resident memory so far (`VmHWM`: run one p per invocation for the peak of each).
//!
//! `cargo bench --bench simulate_scale -- 16384`. Where it stops: every rank is a thread, and
//! a thread takes 4 memory maps (`vm.max_map_count`, 65 530 by default: about 16 300 ranks) and
//! a pid (`kernel.pid_max`, 32 768 here); `Universe` refuses a run that does not fit before any
//! thread starts, naming the limit.

use rpar::cost::{Network, Params, Switching};
use rpar::sim::Simulator;
use rpar::{Comm, Result, Sum, Universe};
use std::time::Instant;

/// The simulated program: 10 steps of computation, a ring halo exchange and an allreduce.
fn program(world: Comm) -> Result<f64> {
    let (r, p) = (world.rank(), world.size());
    let (left, right) = ((r + p - 1) % p, (r + 1) % p);
    let mut halo = vec![r as f64; 1024];
    let mut from_left = vec![0.0; 1024];
    let mut total = 0.0;
    for step in 0..10 {
        let local: f64 = halo.iter().map(|x| x * 0.5 + step as f64).sum();
        world.sendrecv(&halo[..], right, 0, &mut from_left[..], left, 0)?;
        halo.copy_from_slice(&from_left);
        total += world.allreduce(&local, Sum)?;
    }
    Ok(total)
}

/// This process's peak resident memory in MiB (`VmHWM` of /proc/self/status; 0 elsewhere).
fn peak_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn main() -> Result<()> {
    let ranks: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let ranks = if ranks.is_empty() {
        vec![1024, 4096, 16384]
    } else {
        ranks
    };
    println!(
        "{:>7} {:>9} {:>10} {:>13} {:>10}",
        "ranks", "torus", "wall s", "predicted ms", "peak MiB"
    );
    for p in ranks {
        let mut dims = [0, 0];
        rpar::dims_create(p, &mut dims)?;
        let machine = Simulator::new(
            Network::torus(dims[0], dims[1]),
            Switching::CutThrough,
            Params::new(1e-6, 50e-9, 0.1e-9, 0.0),
        );
        let start = Instant::now();
        let run = Universe::new(p).simulate(&machine).run(program)?;
        let wall = start.elapsed().as_secs_f64();
        let expected: f64 = (0..10)
            .map(|step| {
                (0..p)
                    .map(|r| 1024.0 * (((r + p - step % p) % p) as f64 * 0.5 + step as f64))
                    .sum::<f64>()
            })
            .sum();
        assert!(
            run.results
                .iter()
                .all(|&t| (t - expected).abs() <= 1e-9 * expected.abs()),
            "wrong results on {p} ranks"
        );
        println!(
            "{:>7} {:>9} {:>10.1} {:>13.3} {:>10.0}   ({} messages)",
            p,
            format!("{}x{}", dims[0], dims[1]),
            wall,
            run.time * 1e3,
            peak_mib(),
            run.network.messages
        );
    }
    Ok(())
}
