//! [`Universe::simulate`]: run a program for real and predict its time on a machine you do not
//! have (the records, the replay and the virtual trace are `sim::prediction`'s).

use super::{Recording, RunResult, Transport, Universe};
use crate::comm::Comm;
use crate::sim::{predict, Prediction, Simulator};
use crate::trace::{write_chrome_trace, Recorded};
use crate::{Error, Result};

/// A universe whose runs are simulated on a machine (see [`Universe::simulate`]).
#[derive(Debug, Clone)]
pub struct Simulation<'a> {
    universe: &'a Universe,
    machine: &'a Simulator,
}

impl Universe {
    /// Simulates this universe's runs on `machine`: [`Simulation::run`] runs the program for
    /// real — real data, real results, every check — and predicts how long it would take with
    /// each rank on its own node of `machine`'s network.
    ///
    /// Each rank keeps a virtual clock. What it computes between rpar calls advances it by the
    /// rank's own CPU time (times [`Simulator::cpu_scale`]): on this machine, where ranks may
    /// far outnumber the cores, CPU time does not count the waits for a core. Messages advance
    /// it as the simulator's network model says — startup, per-hop and per-byte times, the
    /// topology with its routing, links that carry one message at a time — and a receive
    /// completes at the later of its own clock and the message's arrival. Collectives run their
    /// message-passing algorithms (the shared-memory ones have no messages to time), chosen as
    /// `Auto` chooses them for a run without shared memory or as the program asks, and each
    /// of their reduction steps costs `gamma` per byte.
    ///
    /// What the run decided stands in the prediction: a receive from any source takes the
    /// message that came first in the run, and `rpar::wtime` reads the real clock. Sends are
    /// eager in the model (a synchronous send does not wait for its receive).
    ///
    /// With a trace file set ([`Universe::trace`] or `RPAR_TRACE`), the run on the virtual
    /// clock is written there instead of the real one: a Perfetto track per rank with its
    /// computation (`compute`) and its calls, and an arrow per message from its send to its
    /// receive. [`Prediction::calls`] gives each rank's calls on the virtual clock.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::Simulator;
    /// // a binomial broadcast of 8 bytes on a 16-node hypercube: log2 16 = 4 steps of alpha + 8 beta
    /// let cube = Simulator::new(Network::hypercube(4), Switching::CutThrough, Params::hockney(2e-6, 1e-9))
    ///     .cpu_scale(0.0); // count communication only
    /// let run = rpar::Universe::new(16).simulate(&cube).run(|world| {
    ///     let mut x = if world.rank() == 0 { 42u64 } else { 0 };
    ///     world.using(rpar::Bcast::Binomial).bcast(&mut x, 0)?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(run.results, [42; 16]);
    /// assert!((run.time - 4.0 * (2e-6 + 8e-9)).abs() < 1e-15);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn simulate<'a>(&'a self, machine: &'a Simulator) -> Simulation<'a> {
        Simulation {
            universe: self,
            machine,
        }
    }
}

impl Simulation<'_> {
    /// Runs `program` on the universe's ranks (threads of this process) and predicts its time
    /// on the machine (see [`Universe::simulate`]).
    ///
    /// # Errors
    ///
    /// Those of [`Universe::run`]; [`Error::InvalidArgument`] when the machine's network has
    /// fewer nodes than the universe has ranks, for [`Transport::Mpi`] (a simulation runs
    /// in-process), without the `trace` cargo feature (its hooks record what each rank does),
    /// or when a rank sent more messages than the simulation can tell apart (2^32 / p).
    pub fn run<F, R>(&self, program: F) -> Result<Prediction<R>>
    where
        F: Fn(Comm) -> Result<R> + Sync,
        R: RunResult,
    {
        const CALL: &str = "Universe::simulate";
        let universe = self.universe;
        if !cfg!(feature = "trace") {
            return Err(Error::invalid(
                CALL,
                "an rpar built with the `trace` cargo feature (on by default), got one without",
            ));
        }
        if universe.transport == Transport::Mpi {
            return Err(Error::invalid(
                CALL,
                "an in-process universe (a simulation runs every rank as a thread), got Transport::Mpi",
            ));
        }
        let nodes = self.machine.network().nodes();
        if universe.ranks > nodes {
            return Err(Error::invalid(
                CALL,
                format!(
                    "a network of at least {} nodes (one per rank), got one of {nodes}",
                    universe.ranks
                ),
            ));
        }
        let trace = universe.trace_file();
        let recording = Recording::Simulation {
            detailed: trace.is_some(),
        };
        let (report, records) = universe.run_threads(&program, recording)?;
        let mut programs = Vec::with_capacity(records.len());
        for (rank, Recorded { steps, lost }) in records.into_iter().enumerate() {
            if lost > 0 {
                return Err(Error::invalid(
                    CALL,
                    format!(
                        "at most {} messages per rank on {} ranks, got {} more from rank {rank}",
                        u32::MAX as usize / universe.ranks.max(1),
                        universe.ranks,
                        lost
                    ),
                ));
            }
            programs.push(steps);
        }
        let (prediction, events) = predict(
            self.machine,
            report.results,
            report.warnings,
            programs,
            trace.is_some(),
        )?;
        if let Some(path) = trace {
            write_chrome_trace(&path, events).map_err(|e| {
                Error::invalid(
                    CALL,
                    format!("could not write the trace to {}: {e}", path.display()),
                )
            })?;
        }
        Ok(prediction)
    }
}
