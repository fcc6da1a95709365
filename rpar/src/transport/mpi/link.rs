//! [`Wire`]: one process's link to the others on the MPI transport, for one run. Every rpar
//! message to another process is one MPI message on a communicator of the run's own (a
//! duplicate of `MPI_COMM_WORLD`): with its header on one tag, or — a message of a class its
//! receiver knows (`classes.rs`) — its payload alone on its class's tag. rpar's own matching
//! (context, source, tag, posted and unexpected queues) runs on top; the receiver probes on any
//! tag, so MPI's ordering between each pair of processes gives rpar's.
//!
//! Sends never wait for a receive: a small message goes eagerly with `MPI_Send` from a buffer
//! the link reuses (see [`SMALL_BYTES`]), a larger one with `MPI_Isend` of a buffer the link owns
//! until MPI is done with it; and every wait of the process receives whatever has arrived
//! (`MPI_Improbe` + `MPI_Mrecv`), so two processes sending to each other never wait on each
//! other — as in-process.
//!
//! A large borrowed send of a type gap-free in memory ([`DIRECT_BYTES`] and more) goes straight
//! from the sender's buffer: the first of its class as its header alone, its bytes as a second
//! MPI message on a tag of its own on the link's second communicator; the later ones as the
//! bytes alone on the class's tag. The receiver takes them straight into the receive buffer once
//! a receive matches ([`RemotePayload`]). The send completes, like a rendezvous, when MPI is
//! done with the buffer; the receiving process never holds the bytes back (see the payload's
//! module).

use super::classes::{self, Class, SEQ_BYTES};
use super::sends::{Kept, Sends, SMALL_BYTES};
use super::stand_ins::{StandIn, StandIns};
use super::wire::{append_header, decode, malformed, whole_elements, Contents};
use super::RemotePayload;
use crate::datatype::{engine, CommittedType, Compiled};
use crate::transport::{
    CallKey, Data, ElemType, ErasedVec, Header, Message, PendingSend, SendOutcome, TypedData,
    TypedSource, INLINE_BYTES,
};
use crate::{Error, Result};
use ::mpi::datatype::Equivalence;
use ::mpi::ffi;
use ::mpi::point_to_point::Source;
use ::mpi::raw::AsRawMut;
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::traits::AsRaw;
use std::cell::RefCell;

/// The tag of every rpar message on the run's communicator.
const TAG: i32 = 7;

/// The tag of the acknowledgement of a synchronous send (its 4-byte number), on the link's
/// second communicator: MPI_Ssend itself would complete when this process takes the message
/// from MPI, before rpar's own matching has found a receive for it.
const ACK_TAG: i32 = 8;

/// The first tag of the payloads that travel apart from their headers (see
/// [`Wire::send_borrowed`]), on the link's second communicator: each takes the next tag from here
/// up to `MPI_TAG_UB`, per destination, then the count wraps.
const FIRST_PAYLOAD_TAG: i32 = 16;

/// Borrowed sends of at least this many bytes, of a type gap-free in memory, go straight from
/// the sender's buffer (a header, then the bytes as an MPI message of their own); smaller ones
/// are copied into the one message. Not tuned: osu measures 1 KiB (packed, unchanged by the
/// direct path) and 64 KiB (direct, 0.34x -> 0.74x of MPICH's latency), nothing between.
const DIRECT_BYTES: usize = 8 << 10;

/// Messages of at most this many bytes (header included) arrive in a buffer the link reuses,
/// and their payload is copied out of it: every message sent with `MPI_Send` (at most
/// [`SMALL_BYTES`]) and the packed ones up to twice that; a larger one arrives in a buffer of its
/// own, which its payload keeps.
const REUSED_BYTES: usize = 2 * SMALL_BYTES;

/// Whether `count` elements of `elem` travel straight from their memory, as an MPI message of
/// their own: large enough ([`DIRECT_BYTES`]), gap-free in memory (their bytes are their
/// packed bytes), and few enough bytes for one MPI count.
fn goes_apart(elem: ElemType, count: usize) -> bool {
    let bytes = elem.size * count;
    elem.dense && (DIRECT_BYTES..=i32::MAX as usize).contains(&bytes)
}

/// One process's link to the other processes of a run.
pub(crate) struct Wire {
    /// Every message: full ones on [`TAG`], bare ones of a class on their class's tag
    /// (`classes.rs`). The receiver probes it on any tag.
    pub(super) comm: SimpleCommunicator,
    /// What the probe on any tag must not take: payloads apart from their headers and the
    /// acknowledgements of synchronous sends.
    side: SimpleCommunicator,
    /// The classes of messages to each process.
    outgoing_classes: RefCell<Vec<classes::Outgoing>>,
    /// The classes of messages from other processes.
    pub(super) incoming_classes: RefCell<classes::Incoming>,
    /// How many classes a destination may have: [`classes::MOST_CLASSES`], none if `MPI_TAG_UB`
    /// is too small for their tags (`classes::limit`).
    class_limit: u32,
    outgoing: RefCell<Sends>,
    /// Committed stand-ins for the senders' types.
    stand_ins: RefCell<StandIns>,
    /// The buffer that messages of at most [`REUSED_BYTES`] arrive in.
    received: RefCell<Vec<u8>>,
    /// The buffer that a direct receive of a collective call's message takes it into, with
    /// its call's number after it (`direct.rs`), between two such receives.
    pub(super) staging: RefCell<Vec<u8>>,
    /// The last number given to a synchronous send of this process.
    last_sync: std::cell::Cell<u32>,
    /// Synchronous sends of this process whose acknowledgement has not arrived: while there
    /// is none, no acknowledgement can come, and [`Wire::poll`] does not probe for one.
    awaited: std::cell::Cell<usize>,
    /// Acknowledgements that arrived and were not yet taken, by the send's number.
    acked: RefCell<std::collections::HashSet<u32>>,
    /// Whether an acknowledgement arrived or a send straight from a sender's buffer completed
    /// since [`Wire::progressed_since`] last looked.
    progressed: std::cell::Cell<bool>,
    /// The last payload tag given, by destination process (see [`FIRST_PAYLOAD_TAG`]).
    payload_tags: RefCell<Vec<i32>>,
    /// The largest tag MPI allows (`MPI_TAG_UB`).
    tag_ub: i32,
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
        let comm = super::setup::world().duplicate();
        let side = super::setup::world().duplicate();
        let tag_ub = tag_ub(&comm);
        let size = comm.size() as usize;
        Wire {
            side,
            outgoing_classes: RefCell::new(
                (0..size)
                    .map(|_| classes::Outgoing::new(classes::generations(tag_ub)))
                    .collect(),
            ),
            incoming_classes: RefCell::default(),
            class_limit: classes::limit(tag_ub),
            outgoing: RefCell::default(),
            stand_ins: RefCell::default(),
            received: RefCell::default(),
            staging: RefCell::default(),
            last_sync: std::cell::Cell::new(0),
            awaited: std::cell::Cell::new(0),
            acked: RefCell::default(),
            progressed: std::cell::Cell::new(false),
            payload_tags: RefCell::new(vec![FIRST_PAYLOAD_TAG - 1; comm.size() as usize]),
            tag_ub,
            comm,
        }
    }

    /// The run's communicator (the same group as `MPI_COMM_WORLD`).
    pub(crate) fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// Sends `count` elements of `elem` at `src` to world rank `to`, from a buffer the caller
    /// lends: straight from it if large and gap-free in memory, returning the sender's side of
    /// the send (it completes when MPI is done with the buffer), else packed into a buffer of
    /// the link's (`None`: complete now). A message of a class the receiver knows goes without
    /// its header (`classes.rs`). A synchronous send (`sync` not 0) is always packed, with its
    /// header: its acknowledgement says when a receive matched it.
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `count` elements of `elem`; if this returns a pending
    /// send, they must stay alive and unmodified until its outcome is no longer pending (the
    /// link completes it; [`Wire::wait_sent`] waits for it).
    pub(crate) unsafe fn send_borrowed(
        &self,
        to: usize,
        header: &Header,
        message: (ElemType, usize),
        src: *const u8,
        sync: u32,
    ) -> Result<Option<PendingSend>> {
        // SAFETY: the caller's guarantee on `src`.
        unsafe { self.send_from(to, header, message, src, (sync, None)) }
    }

    /// Sends the vector `v` of `count` elements of `elem` that an owned send gave up to world
    /// rank `to`, as [`Wire::send_borrowed`] sends a lent buffer: straight from its elements
    /// if large and gap-free in memory — the link then keeps the vector until MPI is done with
    /// it, and nobody waits — else packed (it is dropped here).
    pub(crate) fn send_owned(
        &self,
        to: usize,
        header: &Header,
        (elem, count): (ElemType, usize),
        v: ErasedVec,
    ) -> Result<()> {
        let src = v.as_ptr();
        // SAFETY: `v` holds `count` elements of `elem` at `src`, in a heap block that does not
        // move with it; a send that reads them after this returns keeps `v` (`file_direct`).
        unsafe { self.send_from(to, header, (elem, count), src, (0, Some(v))) }.map(drop)
    }

    /// [`Wire::send_borrowed`], and with `owned` the vector whose elements `src` points to,
    /// kept until MPI is done with them by a send straight from them.
    ///
    /// # Safety
    ///
    /// As [`Wire::send_borrowed`]; with `owned`, `src` must point into it.
    unsafe fn send_from(
        &self,
        to: usize,
        header: &Header,
        (elem, count): (ElemType, usize),
        src: *const u8,
        (sync, owned): (u32, Option<ErasedVec>),
    ) -> Result<Option<PendingSend>> {
        let compiled = (elem.compiled)();
        let plan = self.outgoing_classes.borrow_mut()[to].plan(
            header,
            (compiled, count),
            self.class_limit,
            sync == 0,
        );
        if let Some(retired) = plan.retire {
            self.send_marker(to, retired);
        }
        let class = match plan.class {
            Class::Known(n) => {
                // the bytes alone, on the class's tag
                let tag = classes::tag_of(n);
                if let Some(call) = header.call {
                    // a collective call's (small: `classes::plan`): its sequence number after
                    // the bytes
                    // SAFETY: the caller's guarantee on `src`.
                    let mut buf = unsafe { self.packed(SEQ_BYTES, (elem, count), compiled, src) };
                    buf.extend_from_slice(&call.seq().to_le_bytes());
                    return self.isend(to, buf, tag).map(|()| None);
                }
                let bytes = elem.size * count;
                if elem.dense && bytes <= SMALL_BYTES {
                    // SAFETY: `src` holds `count` elements of a type gap-free in memory, their
                    // packed bytes (the caller); MPI_Send is done with them when it returns.
                    unsafe {
                        ffi::MPI_Send(
                            src.cast(),
                            bytes as i32,
                            ffi::RSMPI_UINT8_T,
                            to as i32,
                            tag,
                            self.comm.as_raw(),
                        )
                    };
                    return Ok(None);
                }
                if !goes_apart(elem, count) {
                    // SAFETY: the caller's guarantee on `src`.
                    let buf = unsafe { self.packed(0, (elem, count), compiled, src) };
                    return self.isend(to, buf, tag).map(|()| None);
                }
                // SAFETY: as for a payload apart, below, on the class's tag.
                let request =
                    unsafe { self.isend_raw(&self.comm, to, src, elem.size * count, tag)? };
                return Ok(self.file_direct(request, owned));
            }
            Class::New(n, direct) => classes::encode(n, direct),
            Class::None => 0,
        };
        if sync != 0 || !goes_apart(elem, count) {
            let contents = Contents {
                sync,
                class,
                ..Contents::of(count, &compiled.signature)
            };
            // SAFETY: the caller's guarantee on `src`.
            return unsafe { self.send_plain(to, header, (elem, count), compiled, src, contents) }
                .map(|()| None);
        }
        let payload_tag = self.payload_tag(to);
        let mut buf = self.outgoing.borrow_mut().buffer(64);
        let contents = Contents {
            payload_tag: payload_tag as u32,
            class,
            ..Contents::of(count, &compiled.signature)
        };
        append_header(&mut buf, header, contents);
        self.isend(to, buf, TAG)?;
        // SAFETY: `src` holds `count` elements, their bytes (a gap-free type: its elements are
        // their packed bytes, `goes_apart`), which the caller keeps until the pending send is
        // complete: it is completed only once MPI completes this request (`progress_sends`).
        let request =
            unsafe { self.isend_raw(&self.side, to, src, elem.size * count, payload_tag)? };
        Ok(self.file_direct(request, owned))
    }

    /// Files a send straight from its sender's memory: for a lent buffer, the sender's side,
    /// complete when MPI is done with the request; for an owned vector, nothing (the link keeps
    /// the vector until then, and nobody waits for it).
    fn file_direct(
        &self,
        request: ffi::MPI_Request,
        owned: Option<ErasedVec>,
    ) -> Option<PendingSend> {
        let Some(v) = owned else {
            let sent = PendingSend::remote();
            self.keep_in_flight(request, Kept::Lent(sent.clone()));
            return Some(sent);
        };
        // nobody waits for an owned send: kept like a packed buffer of the link's
        self.keep_in_flight(request, Kept::Owned(v));
        None
    }

    /// Files a send MPI has started with what it keeps alive; with many in flight, forgets
    /// those MPI has finished (one `MPI_Testsome`).
    fn keep_in_flight(&self, request: ffi::MPI_Request, kept: Kept) {
        let mut out = self.outgoing.borrow_mut();
        out.push(request, kept);
        if out.len() > 64 {
            drop(out);
            self.progress_sends();
        }
    }

    /// The tag of the next payload to `to` that travels apart from its header.
    fn payload_tag(&self, to: usize) -> i32 {
        let mut tags = self.payload_tags.borrow_mut();
        let next = match tags[to] {
            last if last >= self.tag_ub => FIRST_PAYLOAD_TAG,
            last => last + 1,
        };
        tags[to] = next;
        next
    }

    /// Waits until MPI is done with a send straight from the sender's buffer (for a send
    /// dropped unfinished: MPI cannot take a started send back). Only MPI is driven: the
    /// receiving process takes the bytes at its next call, whatever it waits for.
    pub(crate) fn wait_sent(&self, sent: &PendingSend) {
        while sent.outcome() == SendOutcome::Pending {
            self.progress_sends();
            std::thread::yield_now();
        }
    }

    /// `count` elements of `elem` (compiled: `compiled`) at `src`, packed by the element's type
    /// map (one copy; padding is not read) into a buffer of the link's with `spare` bytes more
    /// room (for a header).
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `count` elements of `elem`.
    unsafe fn packed(
        &self,
        spare: usize,
        (elem, count): (ElemType, usize),
        compiled: &Compiled,
        src: *const u8,
    ) -> Vec<u8> {
        let bytes = compiled.size * count;
        let mut buf = self.outgoing.borrow_mut().buffer(bytes + spare);
        // SAFETY: `buf` has room for `bytes` bytes; `src` holds `count` elements (caller), whose
        // data bytes are exactly what the compiled map names; the elements of a type gap-free
        // in memory order are their packed bytes.
        unsafe {
            if elem.dense {
                std::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), bytes);
            } else {
                engine::gather(compiled, count, src, buf.as_mut_ptr());
            }
            buf.set_len(bytes);
        }
        buf
    }

    /// Sends `count` elements of `elem` (compiled: `compiled`) at `src` to world rank `to` with
    /// their header (`header`, `contents`): packed by the element's type map (one copy; padding
    /// is not read).
    ///
    /// # Safety
    ///
    /// `src` must be valid for reads of `count` elements of `elem`.
    unsafe fn send_plain(
        &self,
        to: usize,
        header: &Header,
        (elem, count): (ElemType, usize),
        compiled: &Compiled,
        src: *const u8,
        contents: Contents<'_>,
    ) -> Result<()> {
        // SAFETY: the caller's guarantee on `src`.
        let mut buf = unsafe { self.packed(64, (elem, count), compiled, src) };
        append_header(&mut buf, header, contents);
        self.isend(to, buf, TAG)
    }

    /// [`Wire::send_plain`] of a message made for the in-process mailbox, its data at `src`.
    ///
    /// # Safety
    ///
    /// As [`Wire::send_plain`].
    unsafe fn send_made(
        &self,
        to: usize,
        header: &Header,
        (elem, count): (ElemType, usize),
        src: *const u8,
    ) -> Result<()> {
        let compiled = (elem.compiled)();
        let contents = Contents::of(count, &compiled.signature);
        // SAFETY: the caller's guarantee on `src`.
        unsafe { self.send_plain(to, header, (elem, count), compiled, src, contents) }
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
        self.unclassed(to, header);
        let bytes = ty.pack_size(count);
        let mut buf = self.outgoing.borrow_mut().buffer(bytes + 64);
        // SAFETY: the caller guarantees the source bytes; `buf` has room for the packed bytes.
        unsafe {
            engine::gather(&ty.inner, count, start, buf.as_mut_ptr());
            buf.set_len(bytes);
        }
        append_header(&mut buf, header, Contents::of(count, &ty.inner.signature));
        self.isend(to, buf, TAG)
    }

    /// Sends a message already made for the in-process mailbox (inline, owned or packed).
    /// An owned vector goes as [`Wire::send_owned`] sends it; everything else is packed with
    /// its full header.
    pub(crate) fn send_message(&self, to: usize, header: &Header, m: Message) -> Result<()> {
        let Message { elem, count, data } = m;
        match data {
            Data::Owned(v) => self.send_owned(to, header, (elem, count), v),
            data => {
                self.unclassed(to, header);
                self.send_packed(to, header, Message { elem, count, data })
            }
        }
    }

    /// Sends a message made for the in-process mailbox packed, with its full header.
    fn send_packed(&self, to: usize, header: &Header, m: Message) -> Result<()> {
        let Message { elem, count, data } = m;
        match data {
            // SAFETY: an inline payload holds `count` elements of `elem`.
            Data::Inline(buf) => unsafe { self.send_made(to, header, (elem, count), buf.as_ptr()) },
            // SAFETY: an owned buffer holds `count` elements of `elem`.
            Data::Owned(v) => unsafe { self.send_made(to, header, (elem, count), v.as_ptr()) },
            Data::Borrowed(ticket) => match ticket.into_owned(elem, count) {
                // SAFETY: as for an owned buffer.
                Some(v) => unsafe { self.send_made(to, header, (elem, count), v.as_ptr()) },
                None => Err(Error::invalid("send", "the run is aborting")),
            },
            Data::Empty => Ok(()),
            Data::Typed(mut t) => {
                t.release();
                let TypedSource::Packed(mut buf) = t.source else {
                    return Err(Error::invalid("send", "the run is aborting"));
                };
                append_header(
                    &mut buf,
                    header,
                    Contents::of(t.count, &t.ty.inner.signature),
                );
                self.isend(to, buf, TAG)
            }
        }
    }

    /// Before a message to `to` that carries its full header and no class: retires the direct
    /// class of its channel, if it has one (`classes.rs`).
    fn unclassed(&self, to: usize, header: &Header) {
        if let Some(retired) = self.outgoing_classes.borrow_mut()[to].unclassed(header) {
            self.send_marker(to, retired);
        }
    }

    /// Sends the marker that retires direct class `class` to `to`: an empty message on its tag.
    fn send_marker(&self, to: usize, class: u32) {
        // SAFETY: no bytes are read; MPI_Send of an empty message is done when it returns.
        unsafe {
            ffi::MPI_Send(
                std::ptr::null(),
                0,
                ffi::RSMPI_UINT8_T,
                to as i32,
                classes::tag_of(class),
                self.comm.as_raw(),
            )
        };
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
        self.isend_on(&self.side, to, sync.to_le_bytes().to_vec(), ACK_TAG)
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

    /// Whether an acknowledgement arrived or a send straight from a sender's buffer completed
    /// since the last call (so that a wait re-checks what it waits for).
    pub(crate) fn progressed_since(&self) -> bool {
        self.progressed.replace(false)
    }

    /// Receives the acknowledgements that have arrived (see [`ACK_TAG`]); no MPI call while
    /// none is awaited.
    fn take_acks(&self) {
        while self.awaited.get() > 0 {
            let Some((msg, _)) = self
                .side
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
            self.progressed.set(true);
        }
    }

    /// Sends a message whose buffer the link owns: a small one at once (see [`SMALL_BYTES`]),
    /// keeping the buffer for the next, a larger one started and filed until MPI is done.
    fn isend(&self, to: usize, buffer: Vec<u8>, tag: i32) -> Result<()> {
        self.isend_on(&self.comm, to, buffer, tag)
    }

    /// [`Wire::isend`] on `comm`, one of the link's two communicators.
    fn isend_on(
        &self,
        comm: &SimpleCommunicator,
        to: usize,
        buffer: Vec<u8>,
        tag: i32,
    ) -> Result<()> {
        if buffer.len() <= SMALL_BYTES {
            // SAFETY: `buffer` holds its bytes (fewer than i32::MAX); MPI_Send is done with
            // them when it returns.
            unsafe {
                ffi::MPI_Send(
                    buffer.as_ptr().cast(),
                    buffer.len() as i32,
                    ffi::RSMPI_UINT8_T,
                    to as i32,
                    tag,
                    comm.as_raw(),
                )
            };
            self.outgoing.borrow_mut().recycle(buffer);
            return Ok(());
        }
        // SAFETY: `buffer` holds its bytes and moves into `outgoing` below, which keeps it
        // alive and unmoved (a Vec's heap block does not move) until MPI completes the request.
        let request = unsafe { self.isend_raw(comm, to, buffer.as_ptr(), buffer.len(), tag)? };
        self.keep_in_flight(request, Kept::Bytes(buffer));
        Ok(())
    }

    /// `MPI_Isend` of `len` bytes at `buf` to world rank `to` on `tag` of `comm` (one of the
    /// link's): the request. More than `i32::MAX` bytes is an error.
    ///
    /// # Safety
    ///
    /// `buf` must hold `len` readable bytes that stay alive and unmodified until MPI completes
    /// the request (the caller files it in `outgoing`).
    unsafe fn isend_raw(
        &self,
        comm: &SimpleCommunicator,
        to: usize,
        buf: *const u8,
        len: usize,
        tag: i32,
    ) -> Result<ffi::MPI_Request> {
        let len = i32::try_from(len).map_err(|_| {
            Error::invalid(
                "send on the MPI transport",
                format!("a message of at most {} bytes, got {len}", i32::MAX),
            )
        })?;
        let mut request = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: the caller's guarantee on `buf`; the communicator is the link's, valid until
        // the link is dropped after `finish`, which waits for every request.
        unsafe {
            ffi::MPI_Isend(
                buf.cast(),
                len,
                ffi::RSMPI_UINT8_T,
                to as i32,
                tag,
                comm.as_raw(),
                request.as_mut_ptr(),
            );
            Ok(request.assume_init())
        }
    }

    /// Forgets the sends MPI has finished; the senders of those straight from their buffers
    /// learn it (and a wait looks again).
    fn progress_sends(&self) {
        if self.outgoing.borrow_mut().progress() {
            self.progressed.set(true);
        }
    }

    /// The next message that has arrived from another process, if any: of a Rust type when an
    /// element is one value of a basic type, else of a committed type with the sender's
    /// signature.
    pub(crate) fn poll(&self) -> Result<Option<(Header, Message)>> {
        // the sends of buffers the link owns are tested only when many are in flight (see
        // `isend`) and at the end: a test is a pass of MPI's progress engine
        if self.outgoing.borrow().awaited() {
            self.progress_sends();
        }
        self.take_acks();
        let Some((msg, status)) = self.comm.any_process().immediate_matched_probe() else {
            return Ok(None);
        };
        let len = status.count(u8::equivalent_datatype()).max(0) as usize;
        let from = status.source_rank();
        let handle = msg.as_raw();
        // the handle is this function's to receive (rsmpi's wrapper would insist on it)
        std::mem::forget(msg);
        if let Some(class) = classes::of_tag(status.tag()) {
            let known = self
                .incoming_classes
                .borrow()
                .get(from as usize, class)
                .cloned()
                .ok_or_else(malformed)?;
            if len == 0 && known.bound.is_some() {
                // the marker that retires a direct class
                RemotePayload::matched(handle, 0).receive();
                self.incoming_classes
                    .borrow_mut()
                    .retire(from as usize, class);
                return Ok(None);
            }
            let classes::Known {
                header, stand_in, ..
            } = known;
            if let Some(call) = header.call {
                return self.bare_call(handle, len, (header, call), stand_in);
            }
            let Some(count) = whole_elements(len, stand_in.ty.size()) else {
                return Err(malformed());
            };
            if len > REUSED_BYTES {
                // left in MPI until a receive matches it: straight into the receive buffer then
                let payload = RemotePayload::matched(handle, len);
                let message = typed_message(stand_in.ty, count, TypedSource::Remote(payload), None);
                return Ok(Some((header, message)));
            }
            let mut buffer = self.received.borrow_mut();
            // SAFETY: the handle is the probe's, received once here.
            unsafe { receive_matched(handle, len, &mut buffer) };
            let message = arrived(stand_in, count, Bytes::Here(&buffer), None);
            return Ok(Some((header, message)));
        }
        if status.tag() != TAG {
            return Err(malformed());
        }
        // a small message into the link's own buffer (no allocation), a larger one into a
        // buffer of its own, which its payload keeps
        let mut reused = self.received.borrow_mut();
        let mut own = Vec::new();
        let buffer: &mut Vec<u8> = if len <= REUSED_BYTES {
            &mut reused
        } else {
            &mut own
        };
        // SAFETY: the handle is the probe's, received once here.
        unsafe { receive_matched(handle, len, buffer) };
        let d = decode(buffer, &mut self.stand_ins.borrow_mut())?;
        let bytes = d.stand_in.ty.pack_size(d.count);
        // the payload's bytes are here, or (travelling apart) none are
        let here = if d.payload_tag == 0 { bytes } else { 0 };
        if d.payload_len != here {
            return Err(Error::invalid(
                "the MPI transport",
                format!(
                    "a message of {} bytes for {} elements of {} bytes",
                    d.payload_len,
                    d.count,
                    d.stand_in.ty.size()
                ),
            ));
        }
        if d.class != 0 {
            let (class, direct) = classes::decode(d.class);
            let known = classes::Known {
                header: d.header,
                stand_in: d.stand_in.clone(),
                bound: direct.then_some(d.count),
            };
            self.incoming_classes
                .borrow_mut()
                .define(from as usize, class, known);
        }
        let ack = (d.sync != 0).then_some((from as usize, d.sync));
        let payload = if d.payload_tag != 0 {
            let tag = i32::try_from(d.payload_tag).map_err(|_| malformed())?;
            Bytes::Apart(RemotePayload::new(self.side.as_raw(), from, tag, bytes))
        } else if len <= REUSED_BYTES {
            Bytes::Here(&buffer[..d.payload_len])
        } else {
            own.truncate(d.payload_len);
            Bytes::Own(own)
        };
        let message = arrived(d.stand_in, d.count, payload, ack);
        Ok(Some((d.header, message)))
    }

    /// The bare message `handle` of `len` bytes of a collective call's class, whose header is
    /// `header` but for the call's sequence number, which follows the payload (`classes.rs`).
    fn bare_call(
        &self,
        handle: ffi::MPI_Message,
        len: usize,
        class: (Header, CallKey),
        stand_in: StandIn,
    ) -> Result<Option<(Header, Message)>> {
        let mut buffer = self.received.borrow_mut();
        // SAFETY: the handle is the probe's, received once here.
        unsafe { receive_matched(handle, len, &mut buffer) };
        let (payload, seq) = split_call(&buffer)?;
        bare_call_message(payload, seq, class, stand_in).map(Some)
    }

    /// Ends the run on this process: waits until MPI is done with every send, receiving
    /// meanwhile (another process may wait for this one to take a large message), then waits for
    /// every process to get here (`MPI_Ibarrier`), and returns what arrived and was never
    /// received, for the leak report.
    pub(crate) fn finish(&self) -> Vec<(Header, Message)> {
        let mut left = Vec::new();
        let take = |left: &mut Vec<(Header, Message)>| {
            while let Ok(Some((h, mut m))) = self.poll() {
                if let Data::Typed(t) = &mut m.data {
                    t.release(); // a payload apart: received now, while the link lives
                }
                left.push((h, m));
            }
        };
        while !self.outgoing.borrow().is_empty() {
            self.progress_sends();
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

/// Where the packed bytes of an arrived message are.
enum Bytes<'a> {
    /// In the link's reused buffer.
    Here(&'a [u8]),
    /// In a buffer of their own.
    Own(Vec<u8>),
    /// Still in MPI.
    Apart(RemotePayload),
}

/// The message of `count` elements of the sender's type (`stand_in`) whose packed bytes are
/// `bytes`, with the acknowledgement its synchronous send is owed (`ack`).
fn arrived(
    stand_in: StandIn,
    count: usize,
    bytes: Bytes<'_>,
    ack: Option<(usize, u32)>,
) -> Message {
    let here = match &bytes {
        Bytes::Here(b) => Some(*b),
        Bytes::Own(v) => Some(v.as_slice()),
        Bytes::Apart(_) => None,
    };
    if let (Some(elem), Some(payload), None) = (stand_in.plain, here, ack) {
        // values of one basic type, here, and no acknowledgement owed: a plain message, as
        // in-process (its receive checks and copies it as any plain message)
        let data = if payload.len() <= INLINE_BYTES {
            Data::inline(payload)
        } else {
            // SAFETY: `fill` gets room for `count` values, `payload.len()` bytes, the
            // payload's length.
            Data::Owned(ErasedVec::filled_with(elem, count, |dst| unsafe {
                std::ptr::copy_nonoverlapping(payload.as_ptr(), dst, payload.len())
            }))
        };
        return Message { elem, count, data };
    }
    let source = match bytes {
        Bytes::Here(b) => TypedSource::Packed(b.to_vec()),
        Bytes::Own(v) => TypedSource::Packed(v),
        Bytes::Apart(p) => TypedSource::Remote(p),
    };
    typed_message(stand_in.ty, count, source, ack)
}

/// The payload and the call's sequence number of the bytes of a collective call's bare
/// message (`classes.rs`).
pub(super) fn split_call(bytes: &[u8]) -> Result<(&[u8], u32)> {
    match bytes.split_last_chunk::<SEQ_BYTES>() {
        Some((payload, seq)) => Ok((payload, u32::from_le_bytes(*seq))),
        None => Err(malformed()),
    }
}

/// The message whose packed bytes are `payload`, a bare one of a collective call's class
/// (whose header is `header` but for the call's sequence number, `seq`), with its header.
pub(super) fn bare_call_message(
    payload: &[u8],
    seq: u32,
    (mut header, call): (Header, CallKey),
    stand_in: StandIn,
) -> Result<(Header, Message)> {
    let count = whole_elements(payload.len(), stand_in.ty.size()).ok_or_else(malformed)?;
    header.call = Some(call.with_seq(seq));
    Ok((header, arrived(stand_in, count, Bytes::Here(payload), None)))
}

/// A message of `count` elements of the committed type `ty` from `source`.
fn typed_message(
    ty: CommittedType,
    count: usize,
    source: TypedSource,
    ack: Option<(usize, u32)>,
) -> Message {
    Message {
        elem: ElemType::typed(),
        count,
        data: Data::Typed(Box::new(TypedData {
            ty,
            count,
            source,
            ack: std::cell::Cell::new(ack),
        })),
    }
}

/// Receives the matched message `handle` of `len` bytes into `buffer` (its contents replaced).
///
/// # Safety
///
/// `handle` must be a matched message of `len` bytes (`MPI_Improbe`'s) not yet received.
unsafe fn receive_matched(handle: ffi::MPI_Message, len: usize, buffer: &mut Vec<u8>) {
    buffer.clear();
    buffer.reserve(len);
    // SAFETY: `buffer` has room for the `len` bytes of the message (the caller), all of which
    // MPI writes; after it they are initialised. Not zeroing the buffer first saves a pass.
    unsafe {
        RemotePayload::matched(handle, len).receive_into(buffer.as_mut_ptr());
        buffer.set_len(len);
    }
}

/// `MPI_TAG_UB` of `comm`: the largest tag it allows (at least 32767, MPI says).
fn tag_ub(comm: &SimpleCommunicator) -> i32 {
    let mut value: *mut i32 = std::ptr::null_mut();
    let mut flag = 0;
    // SAFETY: MPI_TAG_UB is a predefined attribute of every communicator; MPI_Comm_get_attr
    // stores a pointer to its value (an int MPI keeps) in `value` and sets `flag`.
    unsafe {
        ffi::MPI_Comm_get_attr(
            comm.as_raw(),
            ffi::MPI_TAG_UB as i32,
            (&mut value as *mut *mut i32).cast(),
            &mut flag,
        );
    }
    if flag == 0 || value.is_null() {
        return 32767;
    }
    // SAFETY: MPI gave a pointer to the attribute's int, valid while MPI is initialised.
    unsafe { *value }.max(FIRST_PAYLOAD_TAG)
}
