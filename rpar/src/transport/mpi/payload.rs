//! [`RemotePayload`]: the bytes of a large message from another process that are still in MPI.
//! Either its header has arrived (and is matched by rpar like any message) and the bytes follow
//! as an MPI message of their own on a tag of their own, or the message is the bytes alone
//! (a message of a class its receiver knows, `classes.rs`), probed and not yet received. Both
//! are sent straight from the sender's buffer, and the receiver takes them straight into the
//! receive buffer once a receive matches: one copy in all, MPI's own (`Wire::send_borrowed` is
//! the sender's side).
//!
//! The sender's send completes only when these bytes are received, so the receiving endpoint
//! never leaves a payload waiting long for a receive that this rank is not completing now: one
//! matched to a posted receive nobody is waiting on is received into a buffer of its own at once
//! (`TypedData::release`), as an in-process rendezvous is copied out; one filed as unexpected
//! stays in MPI for a short grace of this rank's polls (a receive that comes meanwhile takes it
//! straight in), then is received likewise (`Endpoint::queue`); and one dropped unreceived (the
//! run ends) is received and discarded.

use ::mpi::ffi;

/// A large payload from another process, not yet received from MPI.
pub(crate) struct RemotePayload {
    /// Where the bytes are.
    at: Where,
    bytes: usize,
    /// Whether the bytes were received (else dropping receives and discards them).
    taken: bool,
}

/// Where the bytes of a [`RemotePayload`] are in MPI (not `Copy`: a matched message's handle
/// is received once).
#[derive(Debug)]
enum Where {
    /// Still to come, on `tag` of `comm` from `from`.
    Tagged {
        /// The link's communicator for payloads, alive as long as the link, which receives
        /// every payload it announced before it ends (`Wire::finish`).
        comm: ffi::MPI_Comm,
        /// The sender's rank in it.
        from: i32,
        /// The tag the bytes travel on (the sender chose it for this message alone).
        tag: i32,
    },
    /// Probed by `MPI_Improbe`: the handle of the matched message, which only this payload
    /// receives.
    Matched(ffi::MPI_Message),
}

// SAFETY: a payload belongs to the endpoint of the one rank of its process on the MPI transport
// and is received only by that rank's thread, the one that uses the link (whose `RefCell`s
// keep it to one thread); the communicator and message handles themselves are plain data.
unsafe impl Send for RemotePayload {}

impl std::fmt::Debug for RemotePayload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemotePayload")
            .field("at", &self.at)
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl RemotePayload {
    /// The payload of `bytes` bytes that process `from` sends on `tag` of `comm`.
    pub(crate) fn new(comm: ffi::MPI_Comm, from: i32, tag: i32, bytes: usize) -> Self {
        RemotePayload {
            at: Where::Tagged { comm, from, tag },
            bytes,
            taken: false,
        }
    }

    /// The payload that is the whole of the matched message `message` (`MPI_Improbe`'s), of
    /// `bytes` bytes. The payload owns the handle: it alone receives the message.
    pub(crate) fn matched(message: ffi::MPI_Message, bytes: usize) -> Self {
        RemotePayload {
            at: Where::Matched(message),
            bytes,
            taken: false,
        }
    }

    /// Receives the bytes into `dst`.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of the payload's bytes (the packed size its header
    /// gave, which the sender's send has: the sender never sends more than `i32::MAX` bytes
    /// this way, and MPI refuses a longer message than the count given rather than write it).
    pub(crate) unsafe fn receive_into(mut self, dst: *mut u8) {
        self.taken = true;
        // SAFETY: the caller gives `dst` for `bytes` bytes; the sender's `MPI_Isend` of exactly
        // these bytes on this tag is posted (with the header) and completes only through this
        // receive, or the matched message is these bytes; the communicator outlives every
        // payload (see `Where::Tagged`).
        unsafe { self.recv(dst) };
    }

    /// Receives the bytes into a buffer of their own.
    pub(crate) fn receive(self) -> Vec<u8> {
        let bytes = self.bytes;
        let mut v = Vec::with_capacity(bytes);
        // SAFETY: `v` has room for the payload's bytes, all of which MPI writes; after it
        // they are initialised.
        unsafe {
            self.receive_into(v.as_mut_ptr());
            v.set_len(bytes);
        }
        v
    }

    /// # Safety
    ///
    /// As [`RemotePayload::receive_into`].
    unsafe fn recv(&mut self, dst: *mut u8) {
        // SAFETY: as the caller's; the count fits an i32 (the sender's own check, or MPI's
        // count of a probed message). A matched handle is received once: MPI_Mrecv sets it to
        // MPI_MESSAGE_NULL, and `taken` keeps `Drop` from receiving again.
        unsafe {
            match &mut self.at {
                Where::Tagged { comm, from, tag } => ffi::MPI_Recv(
                    dst.cast(),
                    self.bytes as i32,
                    ffi::RSMPI_UINT8_T,
                    *from,
                    *tag,
                    *comm,
                    ffi::RSMPI_STATUS_IGNORE,
                ),
                Where::Matched(message) => ffi::MPI_Mrecv(
                    dst.cast(),
                    self.bytes as i32,
                    ffi::RSMPI_UINT8_T,
                    message,
                    ffi::RSMPI_STATUS_IGNORE,
                ),
            };
        }
    }
}

impl Drop for RemotePayload {
    /// A payload nobody received: received and discarded, so that its sender's send completes.
    fn drop(&mut self) {
        if self.taken {
            return;
        }
        self.taken = true;
        let mut scratch = Vec::<u8>::with_capacity(self.bytes);
        // SAFETY: `scratch` has room for the payload's bytes.
        unsafe { self.recv(scratch.as_mut_ptr()) };
    }
}
