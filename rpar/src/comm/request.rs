//! Non-blocking operations and their requests (MPI_Isend, MPI_Irecv, MPI_Wait, MPI_Test, …).
//!
//! Soundness: a [`Request`] that receives into a borrowed buffer holds that borrow for its whole
//! life, and the buffer is written only inside `wait`/`test` on the request itself — never in
//! the background. A request that is leaked with `mem::forget` therefore never writes into memory
//! that was freed; its message simply stays claimed. Sends from borrowed buffers that are not
//! copied at once exist only inside [`Comm::scope`](super::Comm::scope), which waits for them.

use super::buffer::SendBuf;
use super::delivery::{deliver_into, undelivered, RawRecvBuf};
use super::nonblocking::Operation;
use super::p2p::{check_send_tag, eager_data, finish_rendezvous, SendTarget};
use super::{end_poll, known, span_on, BufferMut, Comm, Receives, Status, UNKNOWN};
use crate::datatype::Datatype;
use crate::trace::Span;
use crate::transport::{Data, SlotEnd, Waiting};
use crate::transport::{
    ElemType, Endpoint, ErasedVec, Message, PendingSend, Progress, SendOutcome, SlotId,
};
use crate::{Error, Result};
use std::marker::PhantomData;
use std::rc::Rc;

/// A pending non-blocking operation (MPI_Request). Complete it with [`Request::wait`] or
/// [`Request::test`], or several with [`wait_all`], [`wait_any`], [`wait_some`], [`test_all`],
/// [`test_any`], [`test_some`]. Dropping an
/// incomplete receive request cancels it (MPI_Cancel + MPI_Request_free; its message, if it had
/// one, stays receivable). A receive request borrows its buffer until it is dropped, so the
/// buffer is read after the request is gone; a request from [`Comm::isend`] is complete at once.
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 1 {
///         return world.send(&42u64, 0, 0);
///     }
///     let mut x = 0u64;
///     let status = {
///         let mut req = world.irecv_into(&mut x, 1, 0)?;
///         loop {
///             if let Some(status) = req.test()? {
///                 break status;
///             }
///             // … compute while the message is on its way …
///         }
///     }; // the request is dropped here: `x` is free again
///     assert_eq!((x, status.source), (42, 1));
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub struct Request<'a> {
    ep: Rc<Endpoint>,
    state: State,
    /// What the request is about, for its trace spans; only when tracing (boxed: with
    /// tracing off a request is one word larger, written once, and its calls test that word
    /// for their spans).
    about: Option<Box<About>>,
    _buf: PhantomData<&'a mut [u8]>,
}

/// Which requests a call's span is about: one, or several (then its subject is known only once
/// one completes).
#[derive(Debug, Clone, Copy)]
enum Of {
    This,
    Several,
}

/// What a request is about, for the trace spans of the calls on it: the peer (a send's
/// destination, a receive's source or [`ANY_SOURCE`](crate::ANY_SOURCE)), the tag (or
/// [`ANY_TAG`](crate::ANY_TAG)), the bytes of a send, and the communicator. (What a receive
/// gets, its message tells its span: see `RankTrace::receive_span`.)
#[derive(Debug, Clone, Copy)]
pub(crate) struct About {
    peer: usize,
    tag: i32,
    bytes: Option<usize>,
    communicator: u32,
}

impl About {
    /// What a request on `comm` for `peer`, `tag` and `bytes` is about, if tracing is on.
    #[inline]
    pub(crate) fn of(
        comm: &Comm,
        peer: usize,
        tag: i32,
        bytes: Option<usize>,
    ) -> Option<Box<About>> {
        comm.endpoint().trace()?;
        Some(About::boxed(comm, peer, tag, bytes))
    }

    #[cold]
    #[inline(never)]
    fn boxed(comm: &Comm, peer: usize, tag: i32, bytes: Option<usize>) -> Box<About> {
        let communicator = comm.id;
        Box::new(About {
            peer,
            tag,
            bytes,
            communicator,
        })
    }

    /// A trace span on `ep` for a call named `name` on the request `about` (nothing when
    /// tracing is off, and then `about` is `None`), or on several requests of which it is the
    /// first; one that `receives` a message is described by that message when it arrives. In
    /// the hot paths' form, as `Comm::span`: one test.
    #[inline]
    fn span<'e>(
        about: &Option<Box<About>>,
        ep: &'e Endpoint,
        name: &'static str,
        of: Of,
        receives: Receives,
    ) -> Option<Span<'e>> {
        about.as_deref()?.open_span(ep, name, of, receives)
    }

    #[cold]
    #[inline(never)]
    fn open_span<'e>(
        &self,
        ep: &'e Endpoint,
        name: &'static str,
        of: Of,
        receives: Receives,
    ) -> Option<Span<'e>> {
        let subject = match of {
            Of::This => {
                let (peer, tag) = known(self.peer, self.tag);
                (peer, tag, self.bytes)
            }
            Of::Several => UNKNOWN,
        };
        span_on(ep, name, self.communicator, subject, receives)
    }

    /// Gives `span` (of a call on several requests) what this one, now complete, is about
    /// (for a receive, its message will tell more as the span ends).
    fn describe(&self, span: &mut Span<'_>) {
        let (peer, tag) = known(self.peer, self.tag);
        span.describe(peer, tag, self.bytes);
    }
}

enum State {
    /// Complete, its status not yet taken by a call on several requests.
    Done(Status),
    /// Inactive (MPI_REQUEST_NULL): completed by [`wait_any`], [`test_any`], [`wait_some`] or
    /// [`test_some`], which took its status and left it in its place in the list.
    Null,
    Recv {
        slot: SlotId,
        buf: RawRecvBuf,
    },
    Send {
        pending: PendingSend,
        to: SendTarget,
        status: Status,
        /// The copy a synchronous `isend` offers from, if the request owns it (a scoped send
        /// offers from the caller's buffer).
        copy: Option<ErasedVec>,
    },
    /// A synchronous send to another process (MPI transport): complete when the receiving
    /// process acknowledges its number `sync`.
    Acked {
        sync: u32,
        to: SendTarget,
        status: Status,
    },
    /// A non-blocking collective (its scope keeps the operation too).
    Collective(Rc<Operation>),
    Finished,
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Done(s) => format!("done {s:?}"),
            State::Null => "inactive".into(),
            State::Recv { .. } => "receiving".into(),
            State::Send { .. } | State::Acked { .. } => "sending".into(),
            State::Collective(_) => "collective".into(),
            State::Finished => "finished".into(),
        };
        f.debug_struct("Request").field("state", &state).finish()
    }
}

impl Comm {
    /// Starts a send and returns at once (MPI_Isend), with a request that is already
    /// complete: the data is copied now (for `&x` or a [`Typed`](crate::Typed) view, packed) or
    /// moved (an owned `Vec`), so the buffer is free again at once. For large messages without
    /// that copy use [`Comm::scope`].
    ///
    /// `buf`: as [`Comm::send`]'s.
    ///
    /// Cost: one copy of `buf` now and one into the receiver's buffer, except that a
    /// [`Comm::recv`] of the same element type takes over the copy of a message of more than
    /// 32 bytes; an owned `Vec` moves with no copy in-process.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTag`] for a negative tag, [`Error::RankOutOfRange`] for a `dest`
    /// that is not a rank of the communicator, [`Error::Aborted`] if the run was aborted; for a
    /// typed view, those of its layout (see [`Comm::send`]).
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let me = world.rank() as u32;
    ///     let mut reqs = Vec::new();
    ///     for dest in (0..world.size()).filter(|&d| d != world.rank()) {
    ///         reqs.push(world.isend(&[me; 3][..], dest, 0)?);  // copied
    ///     }
    ///     reqs.push(world.isend(vec![me; 2], world.rank(), 1)?); // moved, to itself
    ///     rpar::wait_all(reqs)?; // complete already
    ///     let mut sum = world.recv::<u32>(world.rank(), 1)?.0.iter().sum::<u32>();
    ///     for _ in 1..world.size() {
    ///         sum += world.recv::<u32>(rpar::ANY_SOURCE, 0)?.0.iter().sum::<u32>();
    ///     }
    ///     Ok(sum)
    /// })?;
    /// assert_eq!(got, [9, 8, 7]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn isend<S: SendBuf>(&self, buf: S, dest: usize, tag: i32) -> Result<Request<'static>> {
        buf.isend(self, dest, tag)
    }

    /// A send of a copy of `elems` (what [`Comm::isend`] of `&x` runs).
    pub(crate) fn isend_copied<T: Datatype>(
        &self,
        elems: &[T],
        dest: usize,
        tag: i32,
    ) -> Result<Request<'static>> {
        let _span = self.span("isend", Some(dest), Some(tag), std::mem::size_of_val(elems));
        check_send_tag(tag)?;
        let message = Message {
            elem: ElemType::of::<T>(),
            count: elems.len(),
            data: eager_data(elems),
        };
        self.posted_send(message, dest, tag)
    }

    /// A send of an owned `Vec`, moved (what [`Comm::isend`] of a `Vec` runs).
    pub(crate) fn isend_moved<T: Datatype>(
        &self,
        data: Vec<T>,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'static>> {
        let bytes = std::mem::size_of_val(&data[..]);
        let _span = self.span("isend_owned", Some(dest), Some(tag), bytes);
        check_send_tag(tag)?;
        let message = Message {
            elem: ElemType::of::<T>(),
            count: data.len(),
            data: Data::Owned(ErasedVec::new(data)),
        };
        self.posted_send(message, dest, tag)
    }

    /// Posts `message` to `dest` (checked here: a request of [`PROC_NULL`](crate::PROC_NULL)
    /// is complete with [`Status::null`]) and returns its completed request.
    fn posted_send(&self, message: Message, dest: usize, tag: i32) -> Result<Request<'static>> {
        self.posted_send_in_mode(message, (dest, tag), false)
    }

    /// As `posted_send`, with `ready` for a ready-mode send (MPI_Irsend).
    pub(crate) fn posted_send_in_mode(
        &self,
        message: Message,
        (dest, tag): (usize, i32),
        ready: bool,
    ) -> Result<Request<'static>> {
        let about = About::of(self, dest, tag, Some(message.bytes()));
        if dest == crate::PROC_NULL {
            return Ok(Request::done(
                self.endpoint().clone(),
                Status::null(),
                about,
            ));
        }
        self.endpoint().check_live()?;
        self.check_rank(dest)?;
        let status = Status::of(self.rank(), tag, message.count);
        self.post_in_mode(self.p2p_context(), message, (dest, tag), ready)?;
        Ok(Request::done(self.endpoint().clone(), status, about))
    }

    /// Starts a receive into `buf` (MPI_Irecv). The request borrows `buf` until it is dropped;
    /// the message is written into `buf` by the `wait` or `test` that completes it.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a `source` that is neither a rank nor
    /// [`ANY_SOURCE`](crate::ANY_SOURCE), [`Error::InvalidTag`] for a negative tag other than
    /// [`ANY_TAG`](crate::ANY_TAG), [`Error::Aborted`] if the run was aborted; completing it, those
    /// of [`Request::wait`].
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let other = 1 - world.rank();
    ///     let mut got = [0u64; 2];
    ///     let req = world.irecv_into(&mut got[..], other, 0)?;
    ///     world.send(&[world.rank() as u64; 2][..], other, 0)?;
    ///     let status = req.wait()?;
    ///     assert_eq!((status.count, got), (2, [other as u64; 2]));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn irecv_into<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
        source: usize,
        tag: i32,
    ) -> Result<Request<'a>> {
        self.irecv_posting(buf, source, tag, None)
    }

    /// [`Comm::irecv_into`]; for a receive of a scope (`scoped`: the scope's number, see
    /// `Endpoint::open_scope`; the scope settles the receive before it ends), posted straight
    /// to MPI where the transport allows it (see `Endpoint::post_direct`).
    #[inline]
    pub(crate) fn irecv_posting<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
        source: usize,
        tag: i32,
        scoped: Option<u64>,
    ) -> Result<Request<'a>> {
        let about = About::of(self, source, tag, None);
        let _span = About::span(
            &about,
            self.endpoint(),
            "irecv",
            Of::This,
            Receives::Nothing,
        );
        let Some(pattern) = self.pattern(self.p2p_context(), source, tag)? else {
            return Ok(Request::done(
                self.endpoint().clone(),
                Status::null(),
                about,
            ));
        };
        let ep = self.endpoint();
        ep.check_live()?;
        let buf = RawRecvBuf::of(buf.as_elems_mut());
        let direct = match scoped {
            Some(scope) if source != crate::ANY_SOURCE && ep.wire().is_some() => {
                let target = (buf.elem, buf.ptr, buf.capacity);
                // SAFETY: `buf` is borrowed for 'a, which outlives the scope, and the slot is
                // settled before the scope ends: by the request's completion or `Drop`, or if
                // the request is leaked, by the scope's end (`Endpoint::close_scope`).
                unsafe { ep.post_direct((pattern, scope), self.group[source], target) }
            }
            _ => None,
        };
        let slot = direct.unwrap_or_else(|| ep.post(pattern));
        Ok(Request {
            ep: ep.clone(),
            state: State::Recv { slot, buf },
            about,
            _buf: PhantomData,
        })
    }
}

impl<'a> Request<'a> {
    pub(crate) fn done(ep: Rc<Endpoint>, status: Status, about: Option<Box<About>>) -> Self {
        Request {
            ep,
            state: State::Done(status),
            about,
            _buf: PhantomData,
        }
    }

    /// The request of the non-blocking collective `op`.
    pub(crate) fn of_operation(ep: Rc<Endpoint>, op: Rc<Operation>) -> Self {
        Request {
            ep,
            state: State::Collective(op),
            about: None,
            _buf: PhantomData,
        }
    }

    /// The request of a rendezvous: offered from the caller's buffer (`copy` `None`, a scoped
    /// send, whose scope keeps the offer), or from a `copy` it owns until the hand-over ends.
    pub(crate) fn rendezvous(
        ep: Rc<Endpoint>,
        (pending, to): (PendingSend, SendTarget),
        copy: Option<ErasedVec>,
        status: Status,
        about: Option<Box<About>>,
    ) -> Self {
        Request {
            ep,
            state: State::Send {
                pending,
                to,
                status,
                copy,
            },
            about,
            _buf: PhantomData,
        }
    }

    /// The request of a synchronous send to another process, numbered `sync`.
    pub(crate) fn acknowledged(
        ep: Rc<Endpoint>,
        sync: u32,
        to: SendTarget,
        status: Status,
    ) -> Request<'static> {
        Request {
            ep,
            state: State::Acked { sync, to, status },
            about: None,
            _buf: PhantomData,
        }
    }

    /// Blocks until the operation completes (MPI_Wait), and returns its status.
    ///
    /// # Errors
    ///
    /// For a receive: [`Error::Truncated`] if the message does not fit the buffer and
    /// [`Error::TypeMismatch`] if its type signature differs — the message then stays queued
    /// for another receive; for a large send started in a [`Comm::scope`],
    /// [`Error::PeerFinished`] if the receiver finished without receiving it; for both,
    /// [`Error::Aborted`] if another rank failed and [`Error::Deadlock`] if every rank is
    /// blocked; [`Error::InvalidArgument`] if an earlier [`Request::test`] of it failed.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         return world.send(&[1u8, 2, 3][..], 1, 0);
    ///     }
    ///     let mut two = [0u8; 2];
    ///     let err = world.irecv_into(&mut two[..], 0, 0)?.wait().unwrap_err();
    ///     assert!(matches!(err, rpar::Error::Truncated { needed: 3, capacity: 2, .. }));
    ///     let mut three = [0u8; 3];
    ///     let st = world.irecv_into(&mut three[..], 0, 0)?.wait()?; // the message was kept
    ///     assert_eq!((st.count, three), (3, [1, 2, 3]));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn wait(mut self) -> Result<Status> {
        if self.is_null() {
            return Ok(Status::empty()); // nothing to complete: no span
        }
        let _span = About::span(
            &self.about,
            &self.ep,
            "wait",
            Of::This,
            Receives::OneMessage,
        );
        loop {
            if let Some(status) = self.state.poll(&self.ep, true)? {
                return Ok(status);
            }
        }
    }

    /// Completes the operation if it can without blocking (MPI_Test): `Some(status)` once done,
    /// and the same status again on every later call (where MPI would have freed the request).
    ///
    /// # Errors
    ///
    /// Those of [`Request::wait`], except [`Error::Deadlock`]. After an error the
    /// request is spent: testing or waiting for it again is [`Error::InvalidArgument`].
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 1 {
    ///         world.recv::<u8>(0, 1)?; // until rank 0 says go
    ///         return world.send(&7i32, 0, 0);
    ///     }
    ///     let mut x = 0i32;
    ///     let mut req = world.irecv_into(&mut x, 1, 0)?;
    ///     assert_eq!(req.test()?, None); // rank 1 has not sent yet
    ///     world.send(&0u8, 1, 1)?;
    ///     let status = loop {
    ///         if let Some(status) = req.test()? {
    ///             break status;
    ///         }
    ///     };
    ///     assert_eq!(req.test()?, Some(status));
    ///     drop(req);
    ///     assert_eq!(x, 7);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn test(&mut self) -> Result<Option<Status>> {
        let span = match About::span(
            &self.about,
            &self.ep,
            "test",
            Of::This,
            Receives::OneMessage,
        ) {
            // testing a request that is complete already completes nothing: no span
            Some(s) if self.is_done() => {
                s.discard();
                None
            }
            span => span,
        };
        self.ep.check_live()?;
        let polled = self.state.poll(&self.ep, false);
        end_poll(span, &polled, |_, _| {});
        polled
    }

    /// Asks for the operation to be cancelled (MPI_Cancel). Complete the request as usual
    /// afterwards; its status then says whether it was ([`Status::is_cancelled`]):
    ///
    /// - a receive is cancelled if no message has matched it yet (what has arrived is looked
    ///   at first), and then receives nothing;
    /// - a send is cancelled if no receive has taken its message yet, and the message is then
    ///   as if never sent — this holds for a send still handed over from the sender's memory
    ///   (a synchronous [`ModeSends::isend`](crate::ModeSends::isend), and in a
    ///   [`Comm::scope`] a [`Scope::isend`](crate::Scope::isend) of more than 32 KiB or a
    ///   [`Scope::issend`](crate::Scope::issend)); a send that was copied when it started
    ///   ([`Comm::isend`], a buffered or ready one) completed then,
    ///   and cancelling it does nothing, as MPI allows for a completed send; across MPI
    ///   processes every send is copied at once;
    /// - a complete or inactive request is not changed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a non-blocking collective (MPI does not allow cancelling
    /// one); [`Error::Aborted`] if the run was aborted.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         let mut x = 0u32;
    ///         let mut req = world.irecv_into(&mut x, 1, 5)?; // rank 1 never sends on tag 5
    ///         req.cancel()?;
    ///         assert!(req.wait()?.is_cancelled());
    ///         let synchronous = world.using(rpar::SendMode::Synchronous);
    ///         let mut sent = synchronous.isend(&[1u8; 4][..], 1, 6)?; // never received
    ///         sent.cancel()?;
    ///         assert!(sent.wait()?.is_cancelled());
    ///     }
    ///     world.barrier()
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn cancel(&mut self) -> Result<()> {
        self.ep.check_live()?;
        let cancelled = match &self.state {
            State::Recv { slot, .. } => self.ep.cancel_unmatched(*slot)?,
            State::Send { pending, .. } => {
                pending.outcome() == SendOutcome::Pending
                    && pending.cancel() == SendOutcome::Withdrawn
            }
            State::Collective(_) => {
                return Err(Error::invalid(
                    "Request::cancel",
                    "a point-to-point request; a non-blocking collective cannot be cancelled \
                     (MPI_Cancel of one is erroneous)",
                ))
            }
            // across processes a synchronous send is with MPI already: not withdrawn
            State::Acked { .. } | State::Done(_) | State::Null | State::Finished => false,
        };
        if cancelled {
            // an owned copy is no longer read once the offer is withdrawn
            self.state = State::Done(Status::cancelled());
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        matches!(self.state, State::Done(_) | State::Null)
    }

    /// Whether the request is inactive (MPI_REQUEST_NULL): [`wait_any`], [`test_any`],
    /// [`wait_some`] and [`test_some`] leave the requests they complete in the list this way,
    /// so that indices stay those of the list as given. Waiting for or testing an inactive
    /// request returns an empty status at once (source [`ANY_SOURCE`](crate::ANY_SOURCE), tag
    /// [`ANY_TAG`](crate::ANY_TAG), count 0), as MPI does for MPI_REQUEST_NULL.
    pub fn is_null(&self) -> bool {
        matches!(self.state, State::Null)
    }

    /// The posted receive this request completes, if it is a pending receive.
    fn slot(&self) -> Option<SlotId> {
        match self.state {
            State::Recv { slot, .. } => Some(slot),
            _ => None,
        }
    }

    /// Completes the request if it can without blocking, and then leaves it inactive
    /// (MPI_REQUEST_NULL): the status, or `None` if it is still pending or already inactive.
    fn take_if_done(&mut self) -> Result<Option<Status>> {
        if self.is_null() {
            return Ok(None);
        }
        let polled = self.state.poll(&self.ep, false)?;
        if polled.is_some() {
            self.state = State::Null;
        }
        Ok(polled)
    }
}

/// The posted receives of a list of requests, marked as completed by the call running now
/// while it lives: a rendezvous that reaches one of them meanwhile is then left in the sender's
/// buffer for this call to copy straight into the receive buffer (any other matched receive's
/// is copied out at once, so that its sender is not held up: see `Endpoint::queue`).
struct Holding {
    ep: Rc<Endpoint>,
    slots: Vec<SlotId>,
}

impl Holding {
    fn new(ep: &Rc<Endpoint>, requests: &[Request<'_>]) -> Holding {
        let slots: Vec<SlotId> = requests.iter().filter_map(Request::slot).collect();
        ep.hold(slots.iter().copied(), 1);
        Holding {
            ep: ep.clone(),
            slots,
        }
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        self.ep.hold(self.slots.iter().copied(), -1);
    }
}

impl State {
    /// One step: with `block`, waits for the message (receive) or the delivery (send).
    fn poll(&mut self, ep: &Endpoint, block: bool) -> Result<Option<Status>> {
        match &*self {
            State::Done(status) => Ok(Some(*status)),
            State::Null => Ok(Some(Status::empty())),
            State::Finished => Err(Error::invalid(
                "Request::wait",
                "the request has already completed",
            )),
            State::Recv { slot, buf } => {
                let (slot, buf) = (*slot, *buf);
                let matched = if block {
                    Some(ep.wait_slot(slot)?)
                } else {
                    ep.test_slot(slot)?
                };
                let mut m = match matched {
                    None => return Ok(None),
                    Some(SlotEnd::Message(m)) => m,
                    Some(SlotEnd::Direct { source, tag, count }) => {
                        let status = Status::of(source, tag, count);
                        *self = State::Done(status);
                        return Ok(Some(status));
                    }
                    Some(SlotEnd::Lost(e)) => {
                        *self = State::Finished;
                        return Err(e);
                    }
                };
                ep.flow_in(&m);
                // the slot is gone now: whatever happens, this request no longer owns one
                *self = State::Finished;
                super::check_ready(&m)?;
                // SAFETY: `buf` is the buffer the request borrows for its lifetime, still live
                // and exclusively ours because the request is.
                let status = match unsafe { deliver_into(&mut m, buf) } {
                    Ok(status) => status,
                    Err(failure) => return Err(undelivered(failure, m, ep)),
                };
                *self = State::Done(status);
                Ok(Some(status))
            }
            &State::Acked { sync, to, status } => {
                let acked = if block {
                    let (context, dest, tag) = to;
                    ep.wait_ack(sync, Waiting::Send { context, dest, tag })?;
                    true
                } else {
                    ep.test_ack(sync)?
                };
                if !acked {
                    return Ok(None);
                }
                *self = State::Done(status);
                Ok(Some(status))
            }
            State::Collective(op) => {
                let op = op.clone();
                if block {
                    op.finish()?;
                } else {
                    ep.drain_ready()?;
                    op.advance();
                }
                let Some(outcome) = op.take() else {
                    return Ok(None);
                };
                *self = State::Finished;
                let status = outcome?;
                *self = State::Done(status);
                Ok(Some(status))
            }
            State::Send {
                pending,
                to,
                status,
                ..
            } => {
                if !block && pending.outcome() == SendOutcome::Pending {
                    return Ok(None);
                }
                let (pending, to, status) = (pending.clone(), *to, *status);
                // an owned copy lives until the hand-over has ended, delivered or withdrawn
                let State::Send { copy, .. } = std::mem::replace(self, State::Finished) else {
                    unreachable!("matched just above")
                };
                finish_rendezvous(ep, &pending, to)?;
                drop(copy);
                *self = State::Done(status);
                Ok(Some(status))
            }
        }
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        match &mut self.state {
            State::Recv { slot, .. } => self.ep.cancel_slot(*slot),
            // an unfinished synchronous `isend` dropped (MPI_Request_free of an active send): the message
            // is still delivered, from a copy that is then never freed — the receiver may read
            // it at any time (a leak, but no message lost and no freed memory read)
            State::Send { pending, copy, .. } if pending.outcome() == SendOutcome::Pending => {
                std::mem::forget(copy.take());
            }
            // a pending scoped send is waited for by its scope
            _ => {}
        }
    }
}

/// Waits for all requests (MPI_Waitall); the statuses in the same order (an inactive request's
/// is empty: see [`Request::is_null`]).
///
/// # Errors
///
/// The first error of a request, in list order (see [`Request::wait`]); the requests
/// after it are dropped, which cancels their receives.
///
/// ```
/// rpar::run(3, |world| {
///     if world.rank() == 0 {
///         let mut a = [0i32; 1];
///         let mut b = [0i32; 1];
///         let reqs = vec![world.irecv_into(&mut a[..], 1, 0)?, world.irecv_into(&mut b[..], 2, 0)?];
///         let statuses = rpar::wait_all(reqs)?;
///         assert_eq!((statuses[1].source, a[0] + b[0]), (2, 3));
///     } else {
///         world.send(&(world.rank() as i32), 0, 0)?;
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn wait_all(requests: Vec<Request<'_>>) -> Result<Vec<Status>> {
    let Some(ep) = requests.first().map(|r| r.ep.clone()) else {
        return Ok(Vec::new());
    };
    let _span = About::span(
        &requests[0].about,
        &ep,
        "wait_all",
        Of::Several,
        Receives::Nothing,
    );
    let _held = Holding::new(&ep, &requests);
    requests.into_iter().map(Request::wait).collect()
}

/// Waits until one of the active requests completes (MPI_Waitany) and returns its index in the
/// list as given and its status; the request is left inactive in its place
/// ([`Request::is_null`]), so indices are stable across calls, as in MPI. When several are
/// complete, the first in the list is taken. `None` — at once — if no request is active (an
/// empty list included): MPI's `MPI_UNDEFINED` index.
///
/// Cost: once at the start and each time a message arrives, the requests are tested in order
/// until one is complete; a test searches this rank's `r` posted receives: O(n r) a round.
///
/// # Errors
///
/// The errors of [`Request::wait`] for the request that failed (it stays in the list, spent).
///
/// ```
/// rpar::run(3, |world| {
///     match world.rank() {
///         0 => {
///             let (mut a, mut b) = (0u32, 0u32);
///             let mut reqs = vec![world.irecv_into(&mut a, 1, 0)?, world.irecv_into(&mut b, 2, 0)?];
///             let (i, st) = rpar::wait_any(&mut reqs)?.unwrap();
///             assert_eq!((i, st.source), (1, 2)); // rank 1 waits for rank 0's go
///             world.send(&0u8, 1, 1)?;
///             let (i, st) = rpar::wait_any(&mut reqs)?.unwrap();
///             assert_eq!((i, st.source), (0, 1)); // its index in the list as given
///             assert!(reqs.iter().all(rpar::Request::is_null));
///             assert_eq!(rpar::wait_any(&mut reqs)?, None); // none active: MPI_UNDEFINED
///             drop(reqs);
///             assert_eq!((a, b), (10, 20));
///         }
///         1 => {
///             world.recv::<u8>(0, 1)?;
///             world.send(&10u32, 0, 0)?;
///         }
///         _ => world.send(&20u32, 0, 0)?,
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn wait_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>> {
    let Some(first) = requests.iter().find(|r| !r.is_null()) else {
        return Ok(None);
    };
    let ep = first.ep.clone();
    let mut span = About::span(
        &first.about,
        &ep,
        "wait_any",
        Of::Several,
        Receives::OneMessage,
    );
    let _held = Holding::new(&ep, requests);
    loop {
        ep.check_live()?;
        if let Some((i, status)) = first_complete(requests)? {
            if let (Some(s), Some(about)) = (span.as_mut(), requests[i].about.as_deref()) {
                about.describe(s);
            }
            return Ok(Some((i, status)));
        }
        ep.wait_progress()?;
    }
}

/// The first active request that completes without blocking, left inactive: its index and
/// status.
fn first_complete(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>> {
    for (i, r) in requests.iter_mut().enumerate() {
        if let Some(status) = r.take_if_done()? {
            return Ok(Some((i, status)));
        }
    }
    Ok(None)
}

/// What [`test_any`] found (MPI_Testany's `flag` and `index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestAny {
    /// The request at this index (in the list as given) completed, with this status; it is
    /// now inactive (`flag` true).
    Completed(usize, Status),
    /// Active requests, none complete yet (`flag` false).
    NoneComplete,
    /// No active request (`flag` true, index `MPI_UNDEFINED`).
    NoneActive,
}

/// Completes one of the active requests if one can complete without blocking (MPI_Testany):
/// the first in the list, left inactive in its place (see [`wait_any`]).
///
/// # Errors
///
/// Those of [`Request::test`], for the request that failed.
///
/// ```
/// use rpar::TestAny;
/// rpar::run(2, |world| {
///     if world.rank() == 1 {
///         world.recv::<u8>(0, 1)?;
///         return world.send(&5u8, 0, 0);
///     }
///     let mut x = 0u8;
///     let mut reqs = [world.irecv_into(&mut x, 1, 0)?];
///     assert_eq!(rpar::test_any(&mut reqs)?, TestAny::NoneComplete);
///     world.send(&0u8, 1, 1)?;
///     let done = loop {
///         if let TestAny::Completed(i, st) = rpar::test_any(&mut reqs)? {
///             break (i, st.source);
///         }
///     };
///     assert_eq!(done, (0, 1));
///     assert_eq!(rpar::test_any(&mut reqs)?, TestAny::NoneActive);
///     drop(reqs);
///     assert_eq!(x, 5);
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn test_any(requests: &mut [Request<'_>]) -> Result<TestAny> {
    let Some(first) = requests.iter().find(|r| !r.is_null()) else {
        return Ok(TestAny::NoneActive);
    };
    let ep = first.ep.clone();
    ep.check_live()?;
    let _held = Holding::new(&ep, requests);
    Ok(match first_complete(requests)? {
        Some((i, status)) => TestAny::Completed(i, status),
        None => TestAny::NoneComplete,
    })
}

/// Waits until at least one active request completes (MPI_Waitsome), then completes every one
/// that can without blocking: their indices in the list as given (ascending) and statuses;
/// each is left inactive in its place. `None` — at once — if no request is active
/// (`outcount` MPI_UNDEFINED).
///
/// # Errors
///
/// Those of [`Request::wait`], for the first request that failed (the ones completed before
/// it in the same call are inactive: their statuses are lost, as MPI's are with
/// MPI_ERR_IN_STATUS).
///
/// ```
/// rpar::run(3, |world| {
///     if world.rank() > 0 {
///         return world.send(&(world.rank() as u8), 0, 0);
///     }
///     let (mut a, mut b) = (0u8, 0u8);
///     let mut reqs = vec![world.irecv_into(&mut a, 1, 0)?, world.irecv_into(&mut b, 2, 0)?];
///     let mut seen = Vec::new();
///     while let Some(done) = rpar::wait_some(&mut reqs)? {
///         seen.extend(done.into_iter().map(|(i, st)| (i, st.source)));
///     }
///     seen.sort_unstable();
///     assert_eq!(seen, [(0, 1), (1, 2)]);
///     drop(reqs);
///     assert_eq!((a, b), (1, 2));
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn wait_some(requests: &mut [Request<'_>]) -> Result<Option<Vec<(usize, Status)>>> {
    let Some(first) = requests.iter().find(|r| !r.is_null()) else {
        return Ok(None);
    };
    let ep = first.ep.clone();
    let _span = About::span(
        &first.about,
        &ep,
        "wait_some",
        Of::Several,
        Receives::Nothing,
    );
    let _held = Holding::new(&ep, requests);
    loop {
        ep.check_live()?;
        let done = all_complete(requests)?;
        if !done.is_empty() {
            return Ok(Some(done));
        }
        ep.wait_progress()?;
    }
}

/// Completes every active request that can without blocking (MPI_Testsome): their indices in
/// the list as given (ascending) and statuses, each left inactive in its place — possibly none;
/// `None` if no request is active (`outcount` MPI_UNDEFINED).
///
/// # Errors
///
/// Those of [`Request::test`], for the first request that failed.
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 1 {
///         return world.send(&[3u16; 2][..], 0, 0);
///     }
///     let mut got = [0u16; 2];
///     let mut reqs = [world.irecv_into(&mut got[..], 1, 0)?];
///     let done = loop {
///         let done = rpar::test_some(&mut reqs)?.expect("one request is active");
///         if !done.is_empty() {
///             break done;
///         }
///     };
///     assert_eq!((done[0].0, done[0].1.count), (0, 2));
///     assert_eq!(rpar::test_some(&mut reqs)?, None);
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn test_some(requests: &mut [Request<'_>]) -> Result<Option<Vec<(usize, Status)>>> {
    let Some(first) = requests.iter().find(|r| !r.is_null()) else {
        return Ok(None);
    };
    let ep = first.ep.clone();
    ep.check_live()?;
    let _held = Holding::new(&ep, requests);
    all_complete(requests).map(Some)
}

/// Every active request that completes without blocking, left inactive: indices and statuses.
fn all_complete(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Status)>> {
    let mut done = Vec::new();
    for (i, r) in requests.iter_mut().enumerate() {
        if let Some(status) = r.take_if_done()? {
            done.push((i, status));
        }
    }
    Ok(done)
}

/// Completes what it can without blocking (MPI_Testall): `Some(statuses)` once all are done,
/// in list order (an inactive request's is empty: see [`Request::is_null`]). Requests are
/// tested in order and the call stops at the first that is not complete; those completed stay
/// so, and later calls return their statuses again.
///
/// Cost: at most one test per request, each a search of this rank's `r` posted receives:
/// O(n r).
///
/// # Errors
///
/// Those of [`Request::test`], for the first request that fails.
///
/// ```
/// rpar::run(2, |world| {
///     let other = 1 - world.rank();
///     let mut got = [0i64; 2];
///     let (first, second) = got.split_at_mut(1);
///     let mut reqs = vec![
///         world.irecv_into(first, other, 0)?,
///         world.irecv_into(second, other, 1)?,
///     ];
///     world.send(&-1i64, other, 1)?;
///     world.send(&1i64, other, 0)?;
///     let statuses = loop {
///         if let Some(statuses) = rpar::test_all(&mut reqs)? {
///             break statuses;
///         }
///     };
///     drop(reqs);
///     assert_eq!((statuses[1].tag, got), (1, [1, -1]));
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn test_all(requests: &mut [Request<'_>]) -> Result<Option<Vec<Status>>> {
    let Some(ep) = requests.first().map(|r| r.ep.clone()) else {
        return Ok(Some(Vec::new()));
    };
    let span = About::span(
        &requests[0].about,
        &ep,
        "test_all",
        Of::Several,
        Receives::Nothing,
    );
    let _held = Holding::new(&ep, requests);
    let done = |requests: &[Request<'_>]| requests.iter().filter(|r| r.is_done()).count();
    let done_before = span.as_ref().map(|_| done(requests));
    let polled = test_each(requests);
    // a call that completed none of the requests leaves no span, as a test that completes
    // nothing (the requests each completed have a span of their own, inside this one)
    if let (Some(s), Ok(_), Some(before)) = (span, &polled, done_before) {
        if done(requests) == before {
            s.discard();
        }
    }
    polled
}

/// Tests the requests in order, up to the first that is not complete.
fn test_each(requests: &mut [Request<'_>]) -> Result<Option<Vec<Status>>> {
    let mut statuses = Vec::with_capacity(requests.len());
    for r in requests.iter_mut() {
        match r.test()? {
            Some(s) => statuses.push(s),
            None => return Ok(None),
        }
    }
    Ok(Some(statuses))
}
