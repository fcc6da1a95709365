//! A run on the MPI transport: this process is one rank (its MPI rank in `MPI_COMM_WORLD`).
//! It runs the program on the thread that initialised MPI when that thread alone may call it
//! (`MPI_THREAD_SINGLE`, asked for from the main thread: `setup.rs`), else on a thread of its
//! own (as in-process), sends its result to the other
//! processes and gets theirs, so the caller sees the results of all ranks as in-process. A run
//! of fewer ranks than the job has processes runs on the first ones; the others wait for it
//! and get its results too. A failure — an error or a panic — ends the whole job with
//! `MPI_Abort`, after printing the rank's message. A traced run writes a file per process and,
//! from rank 0, one of the whole job on rank 0's clock (`transport::mpi::clock`).

use super::affinity::allowed_cores;
use super::results::{exchange, RunResult};
use super::{RunReport, Universe};
use crate::comm::Comm;
use crate::error::Warning;
use crate::trace::{chrome_trace_bytes, with_infix, write_merged_trace, Event, RankTrace};
use crate::transport::mpi::{clock, setup};
use crate::transport::{Endpoint, Fabric, NativeComm, Placement, Wire};
use crate::{Error, Result};
use ::mpi::Threading;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

/// Runs `program` as this process's rank of the MPI job.
pub(super) fn run<F, R>(universe: &Universe, program: F) -> Result<RunReport<R>>
where
    F: Fn(Comm) -> Result<R> + Sync,
    R: RunResult,
{
    let level = setup::ensure_initialized()?;
    let (rank, processes) = setup::world_rank_and_size();
    setup::check_launcher(processes)?;
    let n = match universe.ranks {
        0 => processes,
        n if n <= processes => n,
        n => {
            return Err(Error::invalid(
                "Universe::run on MPI",
                format!(
                    "a run of at most {processes} ranks (the MPI job's processes), got one of \
                     {n}: start the job with mpiexec -n {n}"
                ),
            ))
        }
    };
    let body = || run_rank(universe, (rank, processes), n, &program);
    if level < Threading::Serialized {
        // MPI allows calls from the thread that initialised it only: run right here
        return on_init_thread(universe.stack_size, body);
    }
    std::thread::scope(|s| {
        let mut builder = std::thread::Builder::new().name(format!("rpar-rank-{rank}"));
        if let Some(bytes) = universe.stack_size {
            builder = builder.stack_size(bytes);
        }
        let handle = builder.spawn_scoped(s, body).map_err(|e| {
            Error::invalid(
                "Universe::run on MPI",
                format!("could not start the thread of rank {rank}: {e}"),
            )
        })?;
        handle.join().unwrap_or_else(|_| {
            Err(Error::invalid(
                "Universe::run on MPI",
                "the rank thread was lost",
            ))
        })
    })
}

/// Runs `body` on this thread, which must be the one that initialised MPI (below
/// `MPI_THREAD_SERIALIZED` no other may call it), on a stack of `stack_size` bytes if given (a
/// coroutine's on this thread, as a rank thread of that size would have).
fn on_init_thread<R>(stack_size: Option<usize>, body: impl FnOnce() -> Result<R>) -> Result<R> {
    if !setup::on_init_thread() {
        return Err(Error::invalid(
            "Universe::run on MPI",
            "a run from the thread that initialised MPI (at MPI_THREAD_SINGLE, the one thread \
             that calls MPI), got one from another thread: start runs from the process's main \
             thread, or initialise MPI at MPI_THREAD_SERIALIZED first",
        ));
    }
    let ran = match stack_size {
        None => body(),
        Some(bytes) => on_stack(bytes, body),
    };
    crate::comm::modes::forget_attached();
    ran
}

/// Runs `body` on a stack of `bytes` bytes on this thread (a coroutine's).
fn on_stack<R>(bytes: usize, body: impl FnOnce() -> Result<R>) -> Result<R> {
    let stack = corosensei::stack::DefaultStack::new(bytes).map_err(|e| {
        Error::invalid(
            "Universe::run on MPI",
            format!("a stack of {bytes} bytes for the rank could not be made: {e}"),
        )
    })?;
    // (a panic in `body` comes back out here, as from a thread's join)
    corosensei::on_stack(stack, body)
}

/// Runs this process's part of a run of `n` ranks: the first `n` processes run the program;
/// the others only take part in setting it up and get its results.
fn run_rank<F, R>(
    universe: &Universe,
    (rank, processes): (usize, usize),
    n: usize,
    program: &F,
) -> Result<RunReport<R>>
where
    F: Fn(Comm) -> Result<R>,
    R: RunResult,
{
    let wire = Wire::new();
    let placement = Placement::Process {
        oversubscribed: setup::node_oversubscribed(wire.comm(), allowed_cores()),
    };
    let (fabric, mailboxes) = Fabric::new(processes, placement, universe.polling());
    let fabric = Arc::new(fabric);
    let rx = mailboxes
        .into_iter()
        .nth(rank)
        .expect("one mailbox per rank");
    let native = NativeComm::first_ranks(wire.comm(), n);
    let trace_path = universe.trace_file();
    // a traced run's processes share rank 0's clock (measured now, before any message of the
    // run), so that their traces merge into one
    let trace = trace_path
        .as_ref()
        .map(|_| RankTrace::new(rank, processes, clock::aligned_epoch(wire.comm())));
    let ep = Rc::new(Endpoint::new(rank, rx, fabric.clone(), trace, None).with_wire(wire));
    // results travel on a communicator of all processes, with a tag no collective uses
    let results_comm = Comm::world(ep.clone(), (0..processes).collect(), None);
    let outcome = match native.map(Rc::new) {
        Some(native) => {
            let world = Comm::world(ep.clone(), (0..n).collect(), Some(native.clone()));
            catch_unwind(AssertUnwindSafe(|| {
                let r = program(world)?;
                // the last calls of MPI's own collectives on the world, compared
                native.compare_calls(0)?;
                Ok(Some(r))
            }))
        }
        None => Ok(Ok(None)), // not one of the run's ranks
    };
    let mine = match outcome {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => setup::abort_job(
            rank,
            &Error::RankFailed {
                rank,
                source: Box::new(e),
            },
        ),
        Err(panic) => {
            let message = super::panic_message(&*panic);
            setup::abort_job(rank, &Error::RankPanicked { rank, message })
        }
    };
    // this rank's trace ends with its program: the exchange of results below is rpar's own
    let traced = ep.trace().map(|t| t.take());
    let results = match exchange(&results_comm, mine, n) {
        Ok(r) => r,
        Err(e) => setup::abort_job(rank, &e),
    };
    let mut warnings = ep.finish();
    if let Some(wire) = ep.wire() {
        for (h, m) in wire.finish() {
            warnings.push(Warning::Unreceived {
                to: rank,
                from: h.source as usize,
                tag: h.tag,
                communicator: h.context / 2,
                bytes: m.bytes(),
            });
        }
    }
    if let (Some(path), Some(events), Some(wire)) = (trace_path, traced, ep.wire()) {
        write_traces(&path, rank, events, wire)?;
    }
    if universe.strict && !warnings.is_empty() {
        return Err(Error::Leaks { warnings });
    }
    Ok(RunReport {
        results,
        warnings,
        matrix: None,
    })
}

/// Writes this process's trace to `path` with the infix `rank<r>`, and on rank 0 also the
/// whole job's, every process's events on rank 0's clock, to `path` itself. Collective over
/// the run's processes.
fn write_traces(path: &Path, rank: usize, events: (usize, Vec<Event>), wire: &Wire) -> Result<()> {
    let failed = |path: &Path, e: std::io::Error| {
        Error::invalid(
            "Universe::run on MPI",
            format!("could not write the trace to {}: {e}", path.display()),
        )
    };
    let own = with_infix(path, &format!("rank{rank}"));
    let bytes = chrome_trace_bytes(vec![events]);
    std::fs::write(&own, &bytes).map_err(|e| failed(&own, e))?;
    match clock::gather_traces(wire.comm(), bytes) {
        Some(all) => write_merged_trace(path, &all).map_err(|e| failed(path, e)),
        None => Ok(()),
    }
}
