//! One clock for a traced multi-process job, and one trace file of it.
//!
//! Each process records its trace against its own clock. At the start of a traced run every
//! process puts its clock on rank 0's: rank 0 starts its trace clock, notes the wall-clock time
//! of that start and tells each process in turn, which starts its own clock then. A process on
//! rank 0's machine shares its wall clock: the difference of the two wall-clock starts is the
//! offset, exactly. A process on another machine, whose wall clock may be off by milliseconds,
//! measures: rank 0 answers `ROUNDS` pings with its trace clock's reading, and the process
//! takes the ping with the shortest round trip and counts rank 0's reading as taken halfway
//! through it (the error is at most half that round trip, as MPI tracers have it). At the end
//! the processes send their traces to rank 0, which writes them as one file.
//! `RPAR_TRACE_CLOCK=ping` makes every process measure, on one machine too.
//!
//! The traffic is plain MPI with a tag of its own (`CLOCK_TAG`). At the start it travels on the
//! run's communicator before any process looks there for rpar's messages (each process polls
//! only once its own exchange with rank 0 is over, and rank 0's ends last). At the end it
//! travels on a duplicate of the run's communicator: a process that has ended its run sends its
//! trace while rank 0 may still be polling the run's communicator with a probe of any tag for
//! the run's last messages, which would take the trace for one of rpar's messages.

use ::mpi::point_to_point::{Destination, Source};
use ::mpi::topology::{Communicator, Process, SimpleCommunicator};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The tag of this module's messages on the run's communicator (rpar's are 7 and 8).
const CLOCK_TAG: i32 = 9;

/// Pings per process: the shortest round trip among them gives the offset.
const ROUNDS: usize = 16;

/// The nanoseconds since `epoch`.
fn since(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

/// Now on the wall clock, in nanoseconds since 1970.
fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Starts this process's trace clock on rank 0's: the returned instant is when rank 0's clock
/// read zero, as far as this process can tell (collective over `comm`: every process calls it).
pub(crate) fn aligned_epoch(comm: &SimpleCommunicator) -> Instant {
    let (rank, size) = (comm.rank(), comm.size());
    let (epoch, wall) = (Instant::now(), wall_ns());
    let host = crate::processor_name().into_bytes();
    if rank == 0 {
        for other in 1..size {
            let peer = comm.process_at_rank(other);
            peer.send_with_tag(&wall, CLOCK_TAG); // start your clock
            peer.send_with_tag(&host[..], CLOCK_TAG);
            let (pings, _) = peer.receive_with_tag::<u32>(CLOCK_TAG);
            for _ in 0..pings {
                let (_ping, _) = peer.receive_with_tag::<u8>(CLOCK_TAG);
                peer.send_with_tag(&since(epoch), CLOCK_TAG);
            }
        }
        return epoch;
    }
    let root = comm.process_at_rank(0);
    let (their_wall, _) = root.receive_with_tag::<u64>(CLOCK_TAG);
    let (their_host, _) = root.receive_vec_with_tag::<u8>(CLOCK_TAG);
    // after rank 0's start: the offset is not negative
    let (epoch, wall) = (Instant::now(), wall_ns());
    // RPAR_TRACE_CLOCK=ping measures on one machine too (to see the measured path at work)
    let measure = std::env::var_os("RPAR_TRACE_CLOCK").is_some_and(|v| v == "ping");
    let offset = if their_host == host && !measure {
        root.send_with_tag(&0u32, CLOCK_TAG);
        wall.saturating_sub(their_wall)
    } else {
        root.send_with_tag(&(ROUNDS as u32), CLOCK_TAG);
        measured_offset(&root, epoch)
    };
    epoch
        .checked_sub(Duration::from_nanos(offset))
        .unwrap_or(epoch)
}

/// Rank 0's clock at this process's `epoch`, by the ping with the shortest round trip.
fn measured_offset(root: &Process<'_>, epoch: Instant) -> u64 {
    let mut best: Option<(u64, u64)> = None; // (round trip, offset)
    for _ in 0..ROUNDS {
        let sent = since(epoch);
        root.send_with_tag(&0u8, CLOCK_TAG);
        let (theirs, _) = root.receive_with_tag::<u64>(CLOCK_TAG);
        let trip = since(epoch) - sent;
        let offset = theirs.saturating_sub(sent + trip / 2);
        if best.is_none_or(|(shortest, _)| trip < shortest) {
            best = Some((trip, offset));
        }
    }
    best.map_or(0, |(_, offset)| offset)
}

/// Sends this process's serialised trace to rank 0, which gets every process's in rank order
/// (`None` elsewhere), on a duplicate of `run` (the run's communicator, which rank 0 may still
/// poll for the run's messages). Collective over `run`.
pub(crate) fn gather_traces(run: &SimpleCommunicator, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
    let comm = run.duplicate();
    if comm.rank() != 0 {
        comm.process_at_rank(0).send_with_tag(&mine[..], CLOCK_TAG);
        return None;
    }
    let mut all = vec![mine];
    for other in 1..comm.size() {
        let (theirs, _) = comm
            .process_at_rank(other)
            .receive_vec_with_tag::<u8>(CLOCK_TAG);
        all.push(theirs);
    }
    Some(all)
}
