//! [`Sends`]: the sends of one process that MPI has not finished with — their requests, the
//! buffers they read when the link owns them, and for a send straight from a sender's buffer
//! the sender's side, completed when MPI is done. All are tested at once with one
//! `MPI_Testsome`: each MPI call runs MPI's progress engine, so testing them one by one cost a
//! pass of it per send (a window of 64 large sends tested 128 requests at each of its sends).
//!
//! A small message is different: MPI sends it eagerly, so the link sends it with a blocking
//! `MPI_Send`, which returns as soon as the bytes are on their way, and its buffer becomes the
//! spare that the next small message is written into: no allocation, no request, no test (an
//! 8-byte ping-pong spent ~400 instructions per message on those, and one `MPI_Test` right
//! after `MPI_Isend` cost as much: MPICH runs its progress engine in it).

use crate::transport::{ErasedVec, PendingSend};
use ::mpi::ffi;

/// What a send in flight keeps alive until MPI is done with it.
pub(super) enum Kept {
    /// A buffer of the link's: the packed message.
    Bytes(#[allow(dead_code, reason = "held, never read")] Vec<u8>),
    /// The vector an owned send gave up: MPI reads its elements where they are.
    Owned(#[allow(dead_code, reason = "held, never read")] ErasedVec),
    /// A buffer its sender lends: the sender's side, completed when MPI is done (the sender
    /// may be waiting for it).
    Lent(PendingSend),
}

/// The sends of a process in flight.
#[derive(Default)]
pub(super) struct Sends {
    /// Their requests, for `MPI_Testsome` (completed ones become `MPI_REQUEST_NULL`).
    requests: Vec<ffi::MPI_Request>,
    /// What each keeps alive, in the same order.
    held: Vec<Kept>,
    /// `MPI_Testsome`'s answer: which requests completed.
    indices: Vec<i32>,
    /// How many are sends straight from a sender's buffer (someone may be waiting for them).
    direct: usize,
    /// The buffer of the last small send MPI finished at once, for the next message.
    spare: Vec<u8>,
}

/// Messages of at most this many bytes (header included) are sent with a blocking `MPI_Send`.
/// MPICH and Open MPI both send a message this small eagerly on shared memory and on networks
/// (Open MPI's smallest eager limit, shared memory's, is 4 KiB), so the send never waits for
/// the receiving process to match it, and while it waits for room in MPI's queues its progress
/// engine keeps taking in what arrives: two processes sending to each other never block each
/// other.
pub(super) const SMALL_BYTES: usize = 2 << 10;

impl Sends {
    /// Files a send MPI has started: its request, and the memory it reads if the link keeps
    /// it or the sender's side of a send from a lent buffer.
    pub(super) fn push(&mut self, request: ffi::MPI_Request, kept: Kept) {
        self.direct += usize::from(matches!(kept, Kept::Lent(_)));
        self.requests.push(request);
        self.held.push(kept);
    }

    /// An empty buffer with room for `capacity` bytes: for a small message, the spare one.
    pub(super) fn buffer(&mut self, capacity: usize) -> Vec<u8> {
        if capacity <= SMALL_BYTES {
            let mut buf = std::mem::take(&mut self.spare);
            buf.clear();
            buf.reserve(capacity);
            buf
        } else {
            Vec::with_capacity(capacity)
        }
    }

    /// Keeps the buffer of a small message MPI has sent as the spare, for the next one (unless
    /// it is much larger than a small message needs).
    pub(super) fn recycle(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() <= 2 * SMALL_BYTES {
            self.spare = buffer;
        }
    }

    pub(super) fn len(&self) -> usize {
        self.requests.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Whether a send straight from a sender's buffer is in flight: its sender may be waiting
    /// for it, so every poll of the link tests the sends.
    pub(super) fn awaited(&self) -> bool {
        self.direct > 0
    }

    /// Tests every send at once and forgets those MPI has finished, completing the senders of
    /// those straight from their buffers. Whether one of those completed.
    pub(super) fn progress(&mut self) -> bool {
        let n = self.requests.len();
        if n == 0 {
            return false;
        }
        self.indices.resize(n, 0);
        let mut completed = 0;
        // SAFETY: `requests` holds `n` live requests of this link (or MPI_REQUEST_NULL) and
        // `indices` room for `n` answers; MPI_Testsome frees the completed requests, setting
        // them to MPI_REQUEST_NULL, and writes `completed` indices.
        unsafe {
            ffi::MPI_Testsome(
                n as i32,
                self.requests.as_mut_ptr(),
                &mut completed,
                self.indices.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            );
        }
        if completed <= 0 {
            return false; // none, or MPI_UNDEFINED: no active request
        }
        let mut direct_done = false;
        let mut finished = vec![false; n];
        for &i in &self.indices[..completed as usize] {
            let i = i as usize;
            finished[i] = true;
            if let Kept::Lent(sent) = &self.held[i] {
                sent.complete_remote();
                self.direct -= 1;
                direct_done = true;
            }
        }
        keep_unfinished(&mut self.requests, &finished);
        keep_unfinished(&mut self.held, &finished);
        direct_done
    }
}

/// Keeps the items of `v` whose `finished` entry is false, in order.
fn keep_unfinished<T>(v: &mut Vec<T>, finished: &[bool]) {
    let mut at = finished.iter();
    v.retain(|_| !at.next().copied().unwrap_or(false));
}
