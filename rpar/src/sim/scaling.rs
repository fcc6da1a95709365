//! The predicted speedup and efficiency of one program over a list of rank counts
//! ([`scaling`]): the table of the lecture's scalability analysis, for a program rather than a
//! formula.

use std::fmt;

use super::engine::Simulator;
use crate::universe::RunResult;
use crate::{Comm, Result, Universe};

/// One rank count's predicted run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalingRow {
    /// Ranks p.
    pub ranks: usize,
    /// Predicted time T(p) in seconds.
    pub time: f64,
    /// T(1) / T(p).
    pub speedup: f64,
    /// T(1) / (p T(p)).
    pub efficiency: f64,
    /// The largest computing time of a rank, in seconds.
    pub compute: f64,
}

/// A program's predicted times over rank counts, against its one-rank run (see [`scaling`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    /// The predicted time of the one-rank run, T(1), in seconds.
    pub sequential: f64,
    /// One row per rank count asked for, in the order asked.
    pub rows: Vec<ScalingRow>,
}

/// Simulates `program` on `machine` once on one rank and once for each of `ranks`
/// ([`Universe::simulate`]), and tabulates the predicted time, speedup and efficiency.
///
/// # Errors
///
/// Those of [`Simulation::run`](crate::Simulation::run) for any of the runs.
///
/// ```
/// use rpar::cost::{Network, Params, Switching};
/// use rpar::sim::{scaling, Simulator};
/// let machine = Simulator::new(Network::hypercube(3), Switching::CutThrough, Params::hockney(1e-6, 1e-9));
/// // a sum of 8 blocks of 1000 terms, shared out among the ranks, then an allreduce
/// let table = scaling(&machine, &[2, 4, 8], |world| {
///     let blocks = (world.rank()..8).step_by(world.size());
///     let mine: u64 = blocks.map(|b| (b * 1000..(b + 1) * 1000).map(|x| x as u64).sum::<u64>()).sum();
///     world.allreduce(&mine, rpar::Sum)
/// })?;
/// assert_eq!(table.rows.len(), 3);
/// assert!(table.rows.iter().all(|r| r.time > 0.0 && r.efficiency > 0.0));
/// println!("{table}");
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn scaling<F, R>(machine: &Simulator, ranks: &[usize], program: F) -> Result<Scaling>
where
    F: Fn(Comm) -> Result<R> + Sync,
    R: RunResult,
{
    let time_on = |p: usize| -> Result<(f64, f64)> {
        let run = Universe::new(p).simulate(machine).run(&program)?;
        let compute = run.ranks.iter().map(|r| r.compute).fold(0.0, f64::max);
        Ok((run.time, compute))
    };
    let (sequential, _) = time_on(1)?;
    let rows = ranks
        .iter()
        .map(|&p| {
            let (time, compute) = time_on(p)?;
            Ok(ScalingRow {
                ranks: p,
                time,
                speedup: sequential / time,
                efficiency: sequential / (p as f64 * time),
                compute,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Scaling { sequential, rows })
}

impl fmt::Display for Scaling {
    /// The table: ranks, predicted time, the slowest rank's computation, speedup, efficiency.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>7} {:>12} {:>12} {:>8} {:>6}",
            "ranks", "time ms", "compute ms", "speedup", "eff"
        )?;
        writeln!(
            f,
            "{:>7} {:>12.3} {:>12.3} {:>8.2} {:>6.2}",
            1,
            self.sequential * 1e3,
            self.sequential * 1e3,
            1.0,
            1.0
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:>7} {:>12.3} {:>12.3} {:>8.2} {:>6.2}",
                r.ranks,
                r.time * 1e3,
                r.compute * 1e3,
                r.speedup,
                r.efficiency
            )?;
        }
        Ok(())
    }
}
