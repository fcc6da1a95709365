//! [`Wire`]: one process's link to the others on the MPI transport, for one run. Every rpar
//! message to another process is one MPI message on a communicator of the run's own (a
//! duplicate of `MPI_COMM_WORLD`), with one tag; rpar's own matching (context, source, tag,
//! posted and unexpected queues) runs on top, so MPI's ordering between each pair of processes
//! gives rpar's.
//!
//! Sends are non-blocking (`MPI_Isend` of a buffer the link owns until MPI is done with it), and
//! every wait of the process receives whatever has arrived (`MPI_Improbe` + `MPI_Mrecv`), so
//! two processes sending large messages to each other never wait on each other — as in-process.

use super::wire::{append_header, decode, dense_map, Signature};
use crate::datatype::{engine, CommittedType};
use crate::transport::{Data, ElemType, Header, Message, TypedData, TypedSource};
use crate::{Error, Result};
use ::mpi::datatype::Equivalence;
use ::mpi::ffi;
use ::mpi::point_to_point::Source;
use ::mpi::raw::AsRawMut;
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::traits::AsRaw;
use std::cell::RefCell;
use std::collections::HashMap;

/// The tag of every rpar message on the run's communicator.
const TAG: i32 = 7;

/// The tag of the acknowledgement of a synchronous send (its 4-byte number), on the same
/// communicator: MPI_Ssend itself would complete when this process takes the message from MPI,
/// before rpar's own matching has found a receive for it.
const ACK_TAG: i32 = 8;

/// A send MPI has not finished with: its request and the buffer it reads.
struct Outgoing {
    request: ffi::MPI_Request,
    _buffer: Vec<u8>,
}

/// One process's link to the other processes of a run.
pub(crate) struct Wire {
    comm: SimpleCommunicator,
    outgoing: RefCell<Vec<Outgoing>>,
    /// Committed stand-ins for the senders' types, by signature.
    arrived: RefCell<HashMap<Signature, CommittedType>>,
    /// The last number given to a synchronous send of this process.
    last_sync: std::cell::Cell<u32>,
    /// Synchronous sends of this process whose acknowledgement has not arrived: while there
    /// is none, no acknowledgement can come, and [`Wire::poll`] does not probe for one.
    awaited: std::cell::Cell<usize>,
    /// Acknowledgements that arrived and were not yet taken, by the send's number.
    acked: RefCell<std::collections::HashSet<u32>>,
    /// Whether an acknowledgement arrived since [`Wire::acknowledged_since`] last looked.
    new_ack: std::cell::Cell<bool>,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("rank", &self.comm.rank())
            .field("sends in flight", &self.outgoing.borrow().len())
            .finish()
    }
}

impl Wire {
    /// The link for a new run: duplicates `MPI_COMM_WORLD` (collective over all processes), so
    /// that no message of an earlier run can match this one's.
    pub(crate) fn new() -> Wire {
        Wire {
            comm: super::setup::world().duplicate(),
            outgoing: RefCell::default(),
            arrived: RefCell::default(),
            last_sync: std::cell::Cell::new(0),
            awaited: std::cell::Cell::new(0),
            acked: RefCell::default(),
            new_ack: std::cell::Cell::new(false),
        }
    }

    /// The run's communicator (the same group as `MPI_COMM_WORLD`).
    pub(crate) fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// Sends `count` elements of `elem` at `src` to world rank `to`: packed by the element's
    /// type map (one copy; padding is not read).
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `count` elements of `elem`.
    pub(crate) unsafe fn send_plain(
        &self,
        to: usize,
        header: &Header,
        elem: ElemType,
        count: usize,
        src: *const u8,
        sync: u32,
    ) -> Result<()> {
        let compiled = (elem.compiled)();
        let bytes = compiled.size * count;
        let mut buf = Vec::with_capacity(bytes + 64);
        // SAFETY: `buf` has room for `bytes` bytes; `src` holds `count` elements (caller), whose
        // data bytes are exactly what the compiled map names; the elements of a type gap-free
        // in memory order are their packed bytes.
        unsafe {
            if elem.dense {
                std::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), bytes);
            } else {
                engine::gather(&compiled, count, src, buf.as_mut_ptr());
            }
            buf.set_len(bytes);
        }
        append_header(&mut buf, header, count, &compiled.signature, sync);
        self.isend(to, buf, TAG)
    }

    /// Sends `count` elements of the committed type `ty` laid out from `start` to world rank
    /// `to`, packed (MPI's native format).
    ///
    /// # Safety
    ///
    /// Every byte `ty` names for `count` elements from `start` must be readable.
    pub(crate) unsafe fn send_typed(
        &self,
        to: usize,
        header: &Header,
        ty: &CommittedType,
        count: usize,
        start: *const u8,
    ) -> Result<()> {
        let bytes = ty.pack_size(count);
        let mut buf = Vec::with_capacity(bytes + 64);
        // SAFETY: the caller guarantees the source bytes; `buf` has room for the packed bytes.
        unsafe {
            engine::gather(&ty.inner, count, start, buf.as_mut_ptr());
            buf.set_len(bytes);
        }
        append_header(&mut buf, header, count, &ty.inner.signature, 0);
        self.isend(to, buf, TAG)
    }

    /// Sends a message already made for the in-process mailbox (inline, owned or packed).
    pub(crate) fn send_message(&self, to: usize, header: &Header, m: Message) -> Result<()> {
        let Message { elem, count, data } = m;
        match data {
            // SAFETY: an inline payload holds `count` elements of `elem`.
            Data::Inline(buf) => unsafe {
                self.send_plain(to, header, elem, count, buf.as_ptr(), 0)
            },
            // SAFETY: an owned buffer holds `count` elements of `elem`.
            Data::Owned(v) => unsafe { self.send_plain(to, header, elem, count, v.as_ptr(), 0) },
            Data::Borrowed(ticket) => match ticket.into_owned(elem, count) {
                // SAFETY: as for an owned buffer.
                Some(v) => unsafe { self.send_plain(to, header, elem, count, v.as_ptr(), 0) },
                None => Err(Error::invalid("send", "the run is aborting")),
            },
            Data::Empty => Ok(()),
            Data::Typed(mut t) => {
                t.release();
                let TypedSource::Packed(mut buf) = t.source else {
                    return Err(Error::invalid("send", "the run is aborting"));
                };
                append_header(&mut buf, header, t.count, &t.ty.inner.signature, 0);
                self.isend(to, buf, TAG)
            }
        }
    }

    /// A number for a synchronous send of this process, never 0 (0 says "no acknowledgement").
    pub(crate) fn sync_number(&self) -> u32 {
        let n = self.last_sync.get().wrapping_add(1).max(1);
        self.last_sync.set(n);
        self.awaited.set(self.awaited.get() + 1);
        n
    }

    /// Tells process `to` that a receive matched its synchronous send number `sync`.
    pub(crate) fn acknowledge(&self, to: usize, sync: u32) -> Result<()> {
        self.isend(to, sync.to_le_bytes().to_vec(), ACK_TAG)
    }

    /// Whether the acknowledgement of this process's synchronous send `sync` has arrived.
    /// Asking does not take it ([`Wire::forget_ack`] does): a wait may ask more than once.
    pub(crate) fn acked(&self, sync: u32) -> bool {
        self.acked.borrow().contains(&sync)
    }

    /// Forgets the acknowledgement of synchronous send `sync`, its send being complete.
    pub(crate) fn forget_ack(&self, sync: u32) {
        self.acked.borrow_mut().remove(&sync);
    }

    /// Whether an acknowledgement arrived since the last call (so that a wait re-checks what it
    /// waits for).
    pub(crate) fn acknowledged_since(&self) -> bool {
        self.new_ack.replace(false)
    }

    /// Receives the acknowledgements that have arrived (see [`ACK_TAG`]); no MPI call while
    /// none is awaited.
    fn take_acks(&self) {
        while self.awaited.get() > 0 {
            let Some((msg, _)) = self
                .comm
                .any_process()
                .immediate_matched_probe_with_tag(ACK_TAG)
            else {
                return;
            };
            let mut bytes = [0u8; 4];
            let mut msg = msg;
            // SAFETY: an acknowledgement is 4 bytes, matched by this probe; MPI_Mrecv writes
            // them into `bytes` and sets the message handle to MPI_MESSAGE_NULL.
            unsafe {
                ffi::MPI_Mrecv(
                    bytes.as_mut_ptr().cast(),
                    4,
                    ffi::RSMPI_UINT8_T,
                    msg.as_raw_mut(),
                    ffi::RSMPI_STATUS_IGNORE,
                );
            }
            self.acked.borrow_mut().insert(u32::from_le_bytes(bytes));
            self.awaited.set(self.awaited.get() - 1);
            self.new_ack.set(true);
        }
    }

    fn isend(&self, to: usize, buffer: Vec<u8>, tag: i32) -> Result<()> {
        let len = i32::try_from(buffer.len()).map_err(|_| {
            Error::invalid(
                "send on the MPI transport",
                format!(
                    "a message of at most {} bytes, got {}",
                    i32::MAX - 1024,
                    buffer.len()
                ),
            )
        })?;
        let mut request = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `buffer` holds `len` bytes and moves into `outgoing` below, which keeps it
        // alive and unmoved (a Vec's heap block does not move) until MPI completes the request;
        // the communicator is this run's, valid until the link is dropped after `finish`.
        let request = unsafe {
            ffi::MPI_Isend(
                buffer.as_ptr().cast(),
                len,
                ffi::RSMPI_UINT8_T,
                to as i32,
                tag,
                self.comm.as_raw(),
                request.as_mut_ptr(),
            );
            request.assume_init()
        };
        let mut out = self.outgoing.borrow_mut();
        out.push(Outgoing {
            request,
            _buffer: buffer,
        });
        if out.len() > 64 {
            drop(out);
            self.progress_sends();
        }
        Ok(())
    }

    /// Forgets the sends MPI has finished.
    fn progress_sends(&self) {
        self.outgoing.borrow_mut().retain_mut(|o| {
            let mut done = 0;
            // SAFETY: `o.request` is a live request of this link; MPI_Test sets `done` and, when
            // the request is complete, frees it.
            unsafe { ffi::MPI_Test(&mut o.request, &mut done, ffi::RSMPI_STATUS_IGNORE) };
            done == 0
        });
    }

    /// The next message that has arrived from another process, if any, as a message of a
    /// committed type with the sender's signature.
    pub(crate) fn poll(&self) -> Result<Option<(Header, Message)>> {
        if !self.outgoing.borrow().is_empty() {
            self.progress_sends();
        }
        self.take_acks();
        let Some((msg, status)) = self
            .comm
            .any_process()
            .immediate_matched_probe_with_tag(TAG)
        else {
            return Ok(None);
        };
        let count = status.count(u8::equivalent_datatype()).max(0);
        let len = count as usize;
        let mut buffer: Vec<u8> = Vec::with_capacity(len);
        let mut msg = msg;
        // SAFETY: `buffer` has room for the `len` bytes the probe reported and MPI_Mrecv writes
        // exactly them (the message was matched by this probe, so no other receive takes it);
        // after it they are initialised. Not zeroing the buffer first saves a pass over it.
        unsafe {
            ffi::MPI_Mrecv(
                buffer.as_mut_ptr().cast(),
                count,
                ffi::RSMPI_UINT8_T,
                msg.as_raw_mut(), // MPI_Mrecv sets it to MPI_MESSAGE_NULL, as rsmpi's drop wants
                ffi::RSMPI_STATUS_IGNORE,
            );
            buffer.set_len(len);
        }
        let d = decode(buffer)?;
        let known = self.arrived.borrow().get(&d.signature).cloned();
        let ty = match known {
            Some(ty) => ty,
            None => {
                let ty = dense_map(&d.signature)?.commit();
                self.arrived
                    .borrow_mut()
                    .insert(d.signature.clone(), ty.clone());
                ty
            }
        };
        if ty.pack_size(d.count) != d.payload.len() {
            return Err(Error::invalid(
                "the MPI transport",
                format!(
                    "a message of {} bytes for {} elements of {} bytes",
                    d.payload.len(),
                    d.count,
                    ty.size()
                ),
            ));
        }
        let message = Message {
            elem: ElemType::typed(),
            count: d.count,
            data: Data::Typed(Box::new(TypedData {
                ty,
                count: d.count,
                source: TypedSource::Packed(d.payload),
                ack: std::cell::Cell::new(
                    (d.sync != 0).then(|| (status.source_rank() as usize, d.sync)),
                ),
            })),
        };
        Ok(Some((d.header, message)))
    }

    /// Ends the run on this process: waits until MPI is done with every send, receiving
    /// meanwhile (another process may wait for this one to take a large message), then waits for
    /// every process to get here (`MPI_Ibarrier`), and returns what arrived and was never
    /// received, for the leak report.
    pub(crate) fn finish(&self) -> Vec<(Header, Message)> {
        let mut left = Vec::new();
        let take = |left: &mut Vec<_>| {
            while let Ok(Some(m)) = self.poll() {
                left.push(m);
            }
        };
        while !self.outgoing.borrow().is_empty() {
            take(&mut left);
            std::thread::yield_now();
        }
        let mut request = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: a non-blocking barrier on this run's communicator; the request is tested to
        // completion below.
        let mut request = unsafe {
            ffi::MPI_Ibarrier(self.comm.as_raw(), request.as_mut_ptr());
            request.assume_init()
        };
        loop {
            let mut done = 0;
            // SAFETY: `request` is the live barrier request; MPI_Test frees it when complete.
            unsafe { ffi::MPI_Test(&mut request, &mut done, ffi::RSMPI_STATUS_IGNORE) };
            take(&mut left);
            if done != 0 {
                break;
            }
            std::thread::yield_now();
        }
        left
    }
}
