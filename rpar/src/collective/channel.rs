//! [`Channel`]: the point-to-point primitives that every collective algorithm is written
//! against — and nothing else. A `Comm` provides them on its collective context; other
//! implementations can record an algorithm's communication schedule (for the cost model and the
//! network simulator) or run it over MPI, with the algorithm's code unchanged.

use super::select::Label;
use crate::datatype::Datatype;
use crate::trace::RankTrace;
use crate::{Comm, Error, Result};
use std::any::TypeId;

/// The partners of one [`Channel::sendrecv`] and the tag of both its messages (MPI_Sendrecv's
/// arguments but the buffers; a collective exchange tags what it sends and what it receives
/// alike).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Partners {
    /// The rank sent to.
    pub(crate) dest: usize,
    /// The rank received from.
    pub(crate) source: usize,
    /// The tag of both messages.
    pub(crate) tag: i32,
}

/// Point-to-point messaging as collective algorithms see it: ranks `0..size()` of one group,
/// tagged messages, FIFO between each pair.
#[allow(dead_code)] // most methods are used by the algorithm families that land beside it
pub(crate) trait Channel {
    /// This rank.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Blocking send of a slice (copied, or handed over by rendezvous if large).
    fn send<T: Datatype>(&self, data: &[T], dest: usize, tag: i32) -> Result<()>;
    /// Send of an owned buffer, which moves to the receiver.
    fn send_owned<T: Datatype>(&self, data: Vec<T>, dest: usize, tag: i32) -> Result<()>;
    /// Blocking receive into `buf`; returns the number of elements received.
    fn recv_into<T: Datatype>(&self, buf: &mut [T], source: usize, tag: i32) -> Result<usize>;
    /// Blocking receive of a whole message as a new `Vec`.
    fn recv_vec<T: Datatype>(&self, source: usize, tag: i32) -> Result<Vec<T>>;
    /// Send and receive at once (no deadlock when both sides call it); returns elements received.
    fn sendrecv<T, U>(&self, send: &[T], recv: &mut [U], with: Partners) -> Result<usize>
    where
        T: Datatype,
        U: Datatype;
    /// Notes that the algorithm now combines `bytes` bytes locally (a reduction step). Does
    /// nothing on a `Comm`; a schedule recorder (`sim::Recorder`) records it, so the simulator
    /// can charge gamma per byte. Call it where an algorithm applies its operator.
    #[inline]
    fn local_reduction(&self, bytes: usize) {
        let _ = bytes;
    }
    /// Notes that the collective call in progress runs `algorithm`, decided now (`Auto`, or a
    /// `SharedMemory` that cannot run here, resolved), and returns it. On a `Comm` that records
    /// a trace the call's span then shows it; otherwise (no trace, a schedule recorder) it
    /// only returns it. Call it where a family dispatches to the algorithm it runs.
    #[inline]
    fn runs<L: Label>(&self, algorithm: L) -> L {
        algorithm
    }
}

/// [`Channel::runs`] on a `Comm` that records a trace (out of line: with tracing off a call
/// pays the test of the trace only).
#[cold]
#[inline(never)]
fn report_run<L: Label>(trace: &RankTrace, algorithm: L) {
    trace.runs(TypeId::of::<L::Family>(), algorithm.label());
}

impl Comm {
    /// A message of a collective call that this rank's receive does not take (another type
    /// signature, more data): the ranks' calls disagree, and the others' cannot complete
    /// either — everyone's error, which aborts the run (`Endpoint::collective_failure`).
    fn disagreement<R>(&self, received: Result<R>) -> Result<R> {
        received.map_err(|e| match e {
            Error::TypeMismatch { .. } | Error::Truncated { .. } => {
                self.endpoint().collective_failure(e)
            }
            e => e,
        })
    }
}

/// A `Comm`'s `Channel` messages belong to a collective call: that call's trace span is where
/// they show (they have no spans of their own), and its record is what the mismatch check
/// compares. A message sent or received outside one would be an arrow between empty tracks in
/// Perfetto, so every caller runs inside `Comm::collective` (checked in debug builds).
#[inline]
fn debug_check_in_collective(comm: &Comm) {
    debug_assert!(
        comm.endpoint().collective().is_some(),
        "a Channel message on a Comm outside any collective call (wrap the caller in Comm::collective)"
    );
}

impl Channel for Comm {
    #[inline]
    fn rank(&self) -> usize {
        Comm::rank(self)
    }

    #[inline]
    fn size(&self) -> usize {
        Comm::size(self)
    }

    fn send<T: Datatype>(&self, data: &[T], dest: usize, tag: i32) -> Result<()> {
        debug_check_in_collective(self);
        self.send_in(self.collective_context(), data, dest, tag)
    }

    #[inline]
    fn local_reduction(&self, bytes: usize) {
        if let Some(t) = self.endpoint().trace() {
            t.reduction(bytes);
        }
    }

    fn send_owned<T: Datatype>(&self, data: Vec<T>, dest: usize, tag: i32) -> Result<()> {
        debug_check_in_collective(self);
        self.send_owned_in(self.collective_context(), data, dest, tag)
    }

    fn recv_into<T: Datatype>(&self, buf: &mut [T], source: usize, tag: i32) -> Result<usize> {
        debug_check_in_collective(self);
        let received = self.recv_into_in(self.collective_context(), buf, source, tag);
        Ok(self.disagreement(received)?.count)
    }

    fn recv_vec<T: Datatype>(&self, source: usize, tag: i32) -> Result<Vec<T>> {
        debug_check_in_collective(self);
        let received = self.recv_in(self.collective_context(), source, tag);
        Ok(self.disagreement(received)?.0)
    }

    fn sendrecv<T, U>(&self, send: &[T], recv: &mut [U], with: Partners) -> Result<usize>
    where
        T: Datatype,
        U: Datatype,
    {
        debug_check_in_collective(self);
        let Partners { dest, source, tag } = with;
        let ctx = self.collective_context();
        let received = self.sendrecv_in(ctx, send, dest, tag, recv, source, tag);
        Ok(self.disagreement(received)?.count)
    }

    #[inline]
    fn runs<L: Label>(&self, algorithm: L) -> L {
        if let Some(trace) = self.endpoint().trace() {
            report_run(trace, algorithm);
        }
        algorithm
    }
}
