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
//!
//! A large plain copy ([`HELP_FROM`] bytes and more) is shared: the receiver publishes its
//! destination, claims, wakes the sender, and copies [`CHUNK`]-byte pieces; the sender, waiting
//! for the hand-over to end, copies pieces too ([`PendingSend::help`]), each piece taken by one
//! side only ([`Chunks`]). The receiver ends the copy only once every piece is copied, so the
//! sender writes the receive buffer only while the receive that borrows it is still running.
//! Ranks are threads, each on a core of its own when there are enough: two cores copy at once
//! (one core alone is held back by how many cache misses it can have in flight).

use super::endpoint::Envelope;
pub(crate) use super::handoff::SendOutcome;
use super::handoff::{Chunks, Handoff};
use super::mailbox::Mailbox;
use super::message::{ElemType, ErasedVec};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// Plain copies of at least this many bytes are shared between receiver and sender.
pub(crate) const HELP_FROM: usize = 256 << 10;

/// The piece of a shared copy that one side takes at a time.
const CHUNK: usize = 64 << 10;

#[derive(Debug)]
struct Shared {
    handoff: Handoff,
    ptr: *const u8,
    bytes: usize,
    /// The pieces of a shared copy (none below [`HELP_FROM`] bytes).
    chunks: Chunks,
    /// Where a shared copy goes: set by the receiver before it claims (null: the copy is not
    /// shared, as a typed read is not).
    dst: AtomicPtr<u8>,
    /// A synchronous send's (MPI_Ssend): the receiver copies it only once a receive matches
    /// it, never earlier to release the sender (see `Endpoint::queue`).
    synchronous: bool,
    /// A send to another process that MPI reads straight from the sender's buffer (see
    /// [`PendingSend::remote`]): no ticket, and it cannot be withdrawn.
    remote: bool,
}

// SAFETY: `ptr` is only dereferenced while the state is COPYING, during which the sender keeps
// the buffer alive and unmodified (it waits for DONE); the buffer holds `T: Datatype` values,
// which are `Sync`. `dst` is written through only for a piece taken from `chunks` while the
// state is COPYING, and the receiver, which borrows the buffer there, returns only once every
// piece is done.
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
    wake: Mailbox,
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
    wake: Mailbox,
    synchronous: bool,
) -> (PendingSend, Ticket) {
    let pieces = if bytes >= HELP_FROM {
        bytes.div_ceil(CHUNK)
    } else {
        0
    };
    let shared = Arc::new(Shared {
        handoff: Handoff::new(),
        ptr,
        bytes,
        chunks: Chunks::new(pieces),
        dst: AtomicPtr::new(std::ptr::null_mut()),
        synchronous,
        remote: false,
    });
    (
        PendingSend {
            shared: shared.clone(),
        },
        Ticket { shared, wake },
    )
}

impl PendingSend {
    /// The sender's side of a send that MPI reads straight from the sender's buffer (the MPI
    /// transport's direct path, `Wire::send_direct`): in the reading state from the start, as
    /// if a receiver had claimed it, until the link sees MPI complete the request
    /// ([`PendingSend::complete_remote`]). MPI cannot take back a send it has started, so
    /// [`PendingSend::cancel`] does not withdraw it: whoever drops it unfinished waits for MPI.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))] // made by the MPI link alone
    pub(crate) fn remote() -> PendingSend {
        let shared = Arc::new(Shared {
            handoff: Handoff::new(),
            ptr: std::ptr::null(),
            bytes: 0,
            chunks: Chunks::new(0),
            dst: AtomicPtr::new(std::ptr::null_mut()),
            synchronous: false,
            remote: true,
        });
        let claimed = shared.handoff.claim();
        debug_assert!(claimed, "a new hand-over is pending");
        PendingSend { shared }
    }

    /// Whether this is a send MPI reads from the sender's buffer (see [`PendingSend::remote`]).
    pub(crate) fn is_remote(&self) -> bool {
        self.shared.remote
    }

    /// Marks a remote send delivered: MPI completed its request, so the buffer is the
    /// sender's again.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))] // called by the MPI link alone
    pub(crate) fn complete_remote(&self) {
        debug_assert!(self.shared.remote);
        self.shared.handoff.complete();
    }

    pub(crate) fn outcome(&self) -> SendOutcome {
        self.shared.handoff.outcome()
    }

    /// Copies pieces of a shared copy that the receiver has begun and nobody has taken yet, if
    /// any (see the module docs): for the sender while it waits for the hand-over to end.
    pub(crate) fn help(&self) {
        let s = &*self.shared;
        if s.chunks.count() == 0 || !s.handoff.copying() {
            return;
        }
        let dst = s.dst.load(Ordering::Relaxed);
        if dst.is_null() {
            return; // a typed read: not shared
        }
        while let Some(c) = s.chunks.take() {
            let _piece = Piece(&s.chunks);
            crate::fault::panic_point("rendezvous: sender's piece");
            // SAFETY: `c` is ours alone (`take`), the state is COPYING, so the receiver that
            // published `dst` for `bytes` bytes is copying and ends only after this piece is
            // finished; our own buffer holds `bytes` bytes and we are waiting on it.
            unsafe { s.copy_piece(dst, c) };
        }
    }

    /// Withdraws the offer. Afterwards the receiver no longer reads the buffer: if it was in the
    /// middle of copying, this waits (briefly) until it is done. Returns the final outcome.
    /// A remote send is never withdrawn (MPI has it): its outcome so far, without waiting.
    pub(crate) fn cancel(&self) -> SendOutcome {
        if self.shared.remote {
            return self.outcome();
        }
        self.shared.handoff.cancel()
    }
}

impl Ticket {
    /// Whether the sender withdrew it (see `Handoff::withdrawn`).
    pub(crate) fn withdrawn(&self) -> bool {
        self.shared.handoff.withdrawn()
    }

    /// Whether a synchronous send offered it: see [`publish`].
    pub(crate) fn synchronous(&self) -> bool {
        self.shared.synchronous
    }

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
        let s = &*self.shared;
        if s.chunks.count() == 0 {
            let bytes = s.bytes;
            // SAFETY: `read_with` hands the published pointer, valid for `bytes` bytes; the
            // caller guarantees `dst`.
            return unsafe { self.read_with(|src| std::ptr::copy_nonoverlapping(src, dst, bytes)) };
        }
        // published before the claim, whose `AcqRel` the sender's `copying` reads after
        s.dst.store(dst, Ordering::Relaxed);
        if !s.handoff.claim() {
            return false;
        }
        let _claimed = Claimed(&self);
        // the sender may be waiting: it copies pieces too once it looks
        let _ = self.wake.send(Envelope::Wake);
        while let Some(c) = s.chunks.take() {
            let _piece = Piece(&s.chunks);
            crate::fault::panic_point("rendezvous: receiver's piece");
            // SAFETY: piece `c` is ours alone; the state is COPYING, so the sender keeps its
            // buffer, and the caller guarantees `dst` for `bytes` bytes.
            unsafe { s.copy_piece(dst, c) };
        }
        true
    }

    /// Runs `read` on the sender's published pointer while the sender is held, then releases
    /// it: the hook for copies that are not one `memcpy` (derived datatypes read the sender's
    /// buffer segment by segment). Returns false, without calling `read`, if the sender
    /// withdrew the offer.
    ///
    /// # Safety
    ///
    /// `read` may only read the bytes the sender published for (for a derived datatype: the
    /// bytes its type names, which the sender checked lie in its buffer).
    pub(crate) unsafe fn read_with(self, read: impl FnOnce(*const u8)) -> bool {
        if !self.shared.handoff.claim() {
            return false;
        }
        let _claimed = Claimed(&self);
        crate::fault::panic_point("rendezvous: receiver's read");
        // in the COPYING state the sender keeps its buffer alive and unmodified (publish's
        // contract), so `read` sees it whole
        read(self.shared.ptr);
        true
    }

    /// Copies the data into a fresh owned buffer (used when the message is matched while the
    /// receiver is busy elsewhere, so that the sender is not held up). `None` if withdrawn.
    pub(crate) fn into_owned(self, elem: ElemType, count: usize) -> Option<ErasedVec> {
        let mut ok = false;
        let v = ErasedVec::filled_with(elem, count, |dst| {
            // SAFETY: `filled_with` hands a fresh allocation of count * elem.size bytes (a
            // dangling pointer for none), which is the size of the published buffer.
            ok = unsafe { self.copy_to(dst) };
        });
        ok.then_some(v)
    }
}

impl Shared {
    /// Copies piece `c` of the published bytes to the same place in `dst`.
    ///
    /// # Safety
    ///
    /// The state must be COPYING, piece `c` taken by the caller, and `dst` valid for writes of
    /// `bytes` bytes that nobody else touches but through other pieces.
    unsafe fn copy_piece(&self, dst: *mut u8, c: usize) {
        let at = c * CHUNK;
        let len = CHUNK.min(self.bytes - at);
        // SAFETY: `at + len <= bytes` for a piece below `count`; the source is the published
        // buffer (alive while COPYING), the destination the caller's; they do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(at), dst.add(at), len) };
    }
}

/// A claimed hand-over, ended when dropped: the sender may then reuse its buffer, and is woken
/// to see it. Before that, the pieces of a shared copy that nobody has taken yet are taken (none
/// are left, unless the receiver is unwinding from a panic mid-copy: then they stay uncopied),
/// and it waits until every piece is finished — so that the sender, which may be copying one,
/// writes the receive buffer only while the receive that borrows it is still running, even
/// when that receive unwinds.
struct Claimed<'a>(&'a Ticket);

impl Drop for Claimed<'_> {
    fn drop(&mut self) {
        let s = &*self.0.shared;
        while s.chunks.take().is_some() {
            s.chunks.finish();
        }
        let backoff = crossbeam_utils::Backoff::new();
        while !s.chunks.all_done() {
            backoff.snooze(); // the sender is finishing its last piece
        }
        s.handoff.complete();
        let _ = self.0.wake.send(Envelope::Wake);
        // the ticket drops later with the state DONE: its Drop does nothing more
    }
}

/// A piece of a shared copy taken from [`Chunks`]: finished when dropped, copied or not (a side
/// unwinding from a panic mid-piece still lets the other side's wait for every piece end).
struct Piece<'a>(&'a Chunks);

impl Drop for Piece<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.shared.handoff.drop_unread() {
            let _ = self.wake.send(Envelope::Wake);
        }
    }
}
