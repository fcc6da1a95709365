//! Rendezvous for large borrowed sends: the sender publishes a pointer to its buffer and waits;
//! the receiver copies straight from it into the receive buffer (one copy in all) and wakes it.
//!
//! The state machine (one `AtomicU8`) makes the hand-over safe whatever happens first:
//!
//! ```text
//! PENDING --receiver claims--> COPYING --copy done--> DONE      (sender may return)
//! PENDING --sender gives up (abort)--> CANCELLED              (receiver will not read)
//! PENDING --ticket dropped unread (receiver finished)--> DROPPED (sender gets an error)
//! ```
//!
//! The sender never returns while the state is COPYING, so its buffer outlives every read.

use super::endpoint::Envelope;
use super::handoff::Handoff;
pub(crate) use super::handoff::SendOutcome;
use super::message::{ElemType, ErasedVec};
use crossbeam::channel::Sender;
use std::sync::Arc;

#[derive(Debug)]
struct Shared {
    handoff: Handoff,
    ptr: *const u8,
    bytes: usize,
}

// SAFETY: `ptr` is only dereferenced by the receiver while it holds the COPYING state, during
// which the sender keeps the buffer alive and unmodified (it waits for DONE); the buffer holds
// `T: Datatype` values, which are `Sync`.
unsafe impl Send for Shared {}
// SAFETY: as above; all other fields are atomics or immutable.
unsafe impl Sync for Shared {}

/// The sender's half: kept by the blocked `send` (or the scope of a scoped `isend`).
#[derive(Debug, Clone)]
pub(crate) struct PendingSend {
    shared: Arc<Shared>,
}

/// The receiver's half, travelling in the envelope.
#[derive(Debug)]
pub(crate) struct Ticket {
    shared: Arc<Shared>,
    wake: Sender<Envelope>,
}

/// Publishes `bytes` bytes at `ptr` for a receiver; `wake` is the sender's own mailbox.
///
/// # Safety
///
/// The caller must keep the `bytes` bytes at `ptr` alive and unmodified until
/// [`PendingSend::outcome`] is no longer `Pending`, or [`PendingSend::cancel`] has returned.
pub(crate) unsafe fn publish(
    ptr: *const u8,
    bytes: usize,
    wake: Sender<Envelope>,
) -> (PendingSend, Ticket) {
    let shared = Arc::new(Shared {
        handoff: Handoff::new(),
        ptr,
        bytes,
    });
    (
        PendingSend {
            shared: shared.clone(),
        },
        Ticket { shared, wake },
    )
}

impl PendingSend {
    pub(crate) fn outcome(&self) -> SendOutcome {
        self.shared.handoff.outcome()
    }

    /// Withdraws the offer. Afterwards the receiver no longer reads the buffer: if it was in the
    /// middle of copying, this waits (briefly) until it is done. Returns the final outcome.
    pub(crate) fn cancel(&self) -> SendOutcome {
        self.shared.handoff.cancel()
    }
}

impl Ticket {
    /// The sender's side of this hand-over.
    pub(crate) fn sender(&self) -> PendingSend {
        PendingSend {
            shared: self.shared.clone(),
        }
    }

    /// Copies the sender's bytes to `dst` and releases the sender. Returns false if the sender
    /// withdrew the offer (the run is aborting), in which case nothing was copied.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of [`Ticket::bytes`] bytes and not overlap the source.
    pub(crate) unsafe fn copy_to(self, dst: *mut u8) -> bool {
        let bytes = self.shared.bytes;
        // SAFETY: `read_with` hands the published pointer, valid for `bytes` bytes; the caller
        // guarantees `dst`.
        unsafe { self.read_with(|src| std::ptr::copy_nonoverlapping(src, dst, bytes)) }
    }

    /// Runs `read` on the sender's published pointer while the sender is held, then releases
    /// it: the hook for copies that are not one `memcpy` (derived datatypes read the sender's
    /// buffer segment by segment). Returns false, without calling `read`, if the sender
    /// withdrew the offer.
    ///
    /// # Safety
    ///
    /// `read` may only read the bytes the sender published for (for a derived datatype: the
    /// bytes its type names, which the sender checked lie in its buffer), and must not panic.
    pub(crate) unsafe fn read_with(self, read: impl FnOnce(*const u8)) -> bool {
        if !self.shared.handoff.claim() {
            return false;
        }
        // in the COPYING state the sender keeps its buffer alive and unmodified (publish's
        // contract), so `read` sees it whole
        read(self.shared.ptr);
        self.shared.handoff.complete();
        let _ = self.wake.send(Envelope::Wake);
        // `self` is dropped here with the state DONE: Drop does nothing more.
        true
    }

    /// Copies the data into a fresh owned buffer (used when the message is matched while the
    /// receiver is busy elsewhere, so that the sender is not held up). `None` if withdrawn.
    pub(crate) fn into_owned(self, elem: ElemType, count: usize) -> Option<ErasedVec> {
        let mut ok = false;
        let v = ErasedVec::filled_with(elem, count, |dst| {
            // SAFETY: `filled_with` hands a fresh allocation of count * elem.size bytes, which is
            // the size of the published buffer.
            ok = unsafe { self.copy_to(dst) };
        });
        ok.then_some(v)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.shared.handoff.drop_unread() {
            let _ = self.wake.send(Envelope::Wake);
        }
    }
}
