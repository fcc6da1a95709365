//! MPI's send modes as a value, as the algorithm of a collective is one:
//! `world.using(SendMode::Synchronous).send(&x, dest, tag)` is MPI_Ssend, `.isend` MPI_Issend,
//! `.send_init` MPI_Ssend_init; likewise [`SendMode::Buffered`] (MPI_Bsend, with
//! [`buffer_attach`] and [`buffer_detach`]) and [`SendMode::Ready`] (MPI_Rsend).
//!
//! A synchronous send is a rendezvous whatever its size, marked so that the receiver copies it
//! only once a receive matches it (a standard rendezvous may be copied out early to release
//! its sender: see `Endpoint::queue`). A ready send carries its mode in the header, and a
//! receive that finds it in the unexpected queue reports it (`comm::check_ready`). A buffered
//! send is copied at once, as a non-blocking send of `&x` is, once the attached buffer is
//! found to hold it.
//!
//! On the MPI transport a synchronous send to another process carries a number, and the
//! receiving process acknowledges it when one of its receives matches the message (MPI_Ssend
//! itself would complete when that process takes the message from MPI, before rpar's own
//! matching): the send waits for the acknowledgement. The ready-mode mark travels in the
//! header to other processes too.

use super::p2p::{check_send_tag, eager_data, Mode};
use super::{Buffer, BufferMut, Comm, Persistent, Request, Scope, Status, PROC_NULL};
use crate::transport::{publish, Data, ElemType, ErasedVec, Message};
use crate::{Error, Result};
use std::cell::RefCell;

/// The bytes a buffered send takes in the attached buffer beyond its data (MPI_BSEND_OVERHEAD,
/// MPICH's value on 64-bit systems): size the buffer as the sum of `bytes + BSEND_OVERHEAD`
/// over the messages it must hold at once.
pub const BSEND_OVERHEAD: usize = 96;

/// MPI's send modes, a choice for [`Comm::using`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SendMode {
    /// MPI_Send: small messages are copied and the send returns; large ones are handed over
    /// when the receiver takes them (or copied out early so that the sender need not wait).
    Standard,
    /// MPI_Ssend: complete only once a receive has matched the message, whatever its size.
    /// Two ranks that both send synchronously to each other before receiving wait for each
    /// other: [`Error::Deadlock`], as MPI would hang.
    Synchronous,
    /// MPI_Bsend: copied at once, provided the buffer attached with [`buffer_attach`] can hold
    /// `bytes + BSEND_OVERHEAD` ([`Error::InvalidArgument`], MPI_ERR_BUFFER, if none is
    /// attached or it is too small). rpar keeps the copy in its own queue, so the space is
    /// free again when the call returns (as in MPICH for an eager-size message).
    Buffered,
    /// MPI_Rsend: the receive must already be posted. rpar checks it: a receive that finds
    /// the message waiting in its queue, because no receive was posted when it arrived, fails
    /// with [`Error::InvalidArgument`] (MPI calls the program erroneous). The check never
    /// reports a correct program; it can miss a late receive posted before the receiver next
    /// looked at its mailbox.
    Ready,
}

/// Sends of one mode on a communicator: what [`Comm::using`] gives for a [`SendMode`] (MPI_Ssend,
/// MPI_Bsend, MPI_Rsend and their `I` and `_init` forms).
///
/// ```
/// use rpar::SendMode::{Buffered, Synchronous};
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         world.using(Synchronous).send(&7u32, 1, 0)?; // returns once rank 1 has matched it
///         rpar::buffer_attach(vec![0; 8 + rpar::BSEND_OVERHEAD])?;
///         world.using(Buffered).send(&[1u32, 2][..], 1, 1)?; // copied into the buffer's room
///         rpar::buffer_detach()?;
///     } else {
///         assert_eq!(world.recv::<u32>(0, 0)?.0, [7]);
///         assert_eq!(world.recv::<u32>(0, 1)?.0, [1, 2]);
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ModeSends<'c> {
    comm: &'c Comm,
    mode: SendMode,
}

impl<'c> ModeSends<'c> {
    /// The sends of `mode` on `comm`.
    pub(crate) fn new(comm: &'c Comm, mode: SendMode) -> Self {
        ModeSends { comm, mode }
    }

    /// Sends `buf` to `dest` in this mode and returns when the mode says (see [`SendMode`]).
    ///
    /// # Errors
    ///
    /// As [`Comm::send`], and those of the mode (see [`SendMode`]).
    ///
    /// ```
    /// use rpar::SendMode::Ready;
    /// rpar::run(2, |world| {
    ///     let mut x = 0u8;
    ///     if world.rank() == 1 {
    ///         let req = world.irecv_into(&mut x, 0, 0)?; // posted first
    ///         world.send(&0u8, 0, 1)?; // then rank 0 is told it may send
    ///         req.wait()?;
    ///         assert_eq!(x, 9);
    ///     } else {
    ///         world.recv_into(&mut 0u8, 1, 1)?;
    ///         world.using(Ready).send(&9u8, 1, 0)?;
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn send<B: Buffer + ?Sized>(&self, buf: &B, dest: usize, tag: i32) -> Result<()> {
        let (comm, elems) = (self.comm, buf.as_elems());
        let mode = match self.mode {
            SendMode::Standard => return comm.send(buf, dest, tag),
            SendMode::Buffered => return self.isend(buf, dest, tag).map(drop),
            SendMode::Synchronous => Mode::Synchronous,
            SendMode::Ready => Mode::Ready,
        };
        let _span = comm.span(
            span_name(self.mode, false),
            Some(dest),
            Some(tag),
            std::mem::size_of_val(elems),
        );
        check_send_tag(tag)?;
        if mode == Mode::Synchronous {
            if let Some(sync) = comm.send_remote_synchronous(elems, dest, tag)? {
                let to = (comm.p2p_context(), dest, tag);
                let status = Status::of(comm.rank(), tag, elems.len());
                let sent = Request::acknowledged(comm.endpoint().clone(), sync, to, status);
                return sent.wait().map(drop);
            }
        }
        // SAFETY: `elems` is borrowed for this whole call and the offer is finished (or, on an
        // unwind, dropped) before it returns.
        match unsafe { comm.post_send_in_mode(comm.p2p_context(), elems, (dest, tag), mode)? } {
            None => Ok(()),
            Some(offer) => offer.finish(),
        }
    }

    /// Starts a send of `buf` to `dest` in this mode (MPI_Isend, MPI_Issend, MPI_Ibsend,
    /// MPI_Irsend). `buf` is copied now, so it is free again at once; the request of a
    /// synchronous send completes once a receive has matched the message (dropped unfinished,
    /// MPI_Request_free, it still delivers, from a copy then never freed); the others are
    /// complete at once. [`Scope::issend`] sends synchronously from `buf` itself.
    ///
    /// # Errors
    ///
    /// As [`Comm::isend`], and those of the mode (see [`SendMode`]).
    ///
    /// ```
    /// use rpar::SendMode::Synchronous;
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         let mut sent = world.using(Synchronous).isend(&[1u16, 2][..], 1, 0)?;
    ///         assert_eq!(sent.test()?, None); // rank 1 has not received yet
    ///         world.send(&0u8, 1, 1)?; // now it may
    ///         assert_eq!(sent.wait()?.count, 2);
    ///     } else {
    ///         world.recv_into(&mut 0u8, 0, 1)?;
    ///         assert_eq!(world.recv::<u16>(0, 0)?.0, [1, 2]);
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn isend<B: Buffer + ?Sized>(
        &self,
        buf: &B,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'static>> {
        let (comm, elems) = (self.comm, buf.as_elems());
        let bytes = std::mem::size_of_val(elems);
        match self.mode {
            SendMode::Standard => comm.isend(buf, dest, tag),
            SendMode::Buffered => {
                check_send_tag(tag)?;
                if dest != PROC_NULL {
                    fits_attached(bytes)?;
                }
                comm.isend(buf, dest, tag)
            }
            SendMode::Ready => {
                let _span = comm.span(span_name(self.mode, true), Some(dest), Some(tag), bytes);
                check_send_tag(tag)?;
                let message = Message {
                    elem: ElemType::of::<B::Elem>(),
                    count: elems.len(),
                    data: eager_data(elems),
                };
                comm.posted_send_in_mode(message, (dest, tag), true)
            }
            SendMode::Synchronous => issend(comm, elems, dest, tag),
        }
    }

    /// A persistent send in this mode (MPI_Send_init, MPI_Ssend_init, MPI_Bsend_init,
    /// MPI_Rsend_init): see [`Persistent`], whose starts run [`ModeSends::isend`].
    ///
    /// # Errors
    ///
    /// As [`Persistent::send`].
    ///
    /// ```
    /// use rpar::SendMode::Synchronous;
    /// rpar::run(2, |world| {
    ///     let mut x = [world.rank() as u8; 3];
    ///     let other = 1 - world.rank();
    ///     let mut send = world.using(Synchronous).send_init(&mut x[..], other, 0)?;
    ///     let sent = send.start()?; // completes once the other rank has received
    ///     assert_eq!(world.recv::<u8>(other, 0)?.0, [other as u8; 3]);
    ///     sent.wait()?;
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn send_init<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
        dest: usize,
        tag: i32,
    ) -> Result<Persistent<'a, B::Elem>>
    where
        'c: 'a,
    {
        Persistent::new(self.comm, buf.as_elems_mut(), Some(self.mode), dest, tag)
    }
}

/// The trace name of a send in `mode` (blocking, or non-blocking with `immediate`).
fn span_name(mode: SendMode, immediate: bool) -> &'static str {
    match (mode, immediate) {
        (SendMode::Standard, false) => "send",
        (SendMode::Standard, true) => "isend",
        (SendMode::Synchronous, false) => "ssend",
        (SendMode::Synchronous, true) => "issend",
        (SendMode::Buffered, false) => "bsend",
        (SendMode::Buffered, true) => "ibsend",
        (SendMode::Ready, false) => "rsend",
        (SendMode::Ready, true) => "irsend",
    }
}

/// MPI_Issend of a copy of `elems`: a rendezvous from the copy, which the request owns.
fn issend<T: crate::Datatype>(
    comm: &Comm,
    elems: &[T],
    dest: usize,
    tag: i32,
) -> Result<Request<'static>> {
    let bytes = std::mem::size_of_val(elems);
    let _span = comm.span(
        span_name(SendMode::Synchronous, true),
        Some(dest),
        Some(tag),
        bytes,
    );
    check_send_tag(tag)?;
    let ep = comm.endpoint();
    if dest == PROC_NULL {
        return Ok(Request::done(ep.clone(), Status::null(), None));
    }
    ep.check_live()?;
    comm.check_rank(dest)?;
    let status = Status::of(comm.rank(), tag, elems.len());
    if let Some(sync) = comm.send_remote_synchronous(elems, dest, tag)? {
        let to = (comm.p2p_context(), dest, tag);
        return Ok(Request::acknowledged(ep.clone(), sync, to, status));
    }
    let copy = ErasedVec::new(elems.to_vec());
    let mailbox = ep.fabric().mailbox(ep.world_rank()).clone();
    // SAFETY: the copy's heap block stays where it is, unmodified, until the hand-over ends:
    // the request owns it until then, and if the request is dropped or leaked before, the
    // block is never freed (see `Request`'s `Drop`).
    let (pending, ticket) = unsafe { publish(copy.as_ptr(), bytes, mailbox, true) };
    let (elem, count) = (ElemType::of::<T>(), elems.len());
    let data = Data::Borrowed(ticket);
    let context = comm.p2p_context();
    comm.post_message(context, Message { elem, count, data }, dest, tag)?;
    let to = (context, dest, tag);
    Ok(Request::rendezvous(
        ep.clone(),
        (pending, to),
        Some(copy),
        status,
        None,
    ))
}

thread_local! {
    /// The buffer attached for buffered sends: one per rank (each rank is a thread; on the
    /// MPI transport, one per process, as MPI has).
    static ATTACHED: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// Forgets this thread's attached buffer at the end of a run on it: the next run on the thread
/// (on MPI, each run on the main thread) starts with none attached, as a new rank thread would.
#[cfg(feature = "mpi")]
pub(crate) fn forget_attached() {
    ATTACHED.with_borrow_mut(|a| *a = None);
}

/// Whether the attached buffer holds a buffered message of `bytes` bytes.
fn fits_attached(bytes: usize) -> Result<()> {
    let need = bytes.saturating_add(BSEND_OVERHEAD);
    match ATTACHED.with_borrow(|a| a.as_ref().map(Vec::len)) {
        None => Err(Error::invalid(
            "a buffered send",
            format!(
                "a buffered send of {bytes} bytes needs an attached buffer of at least {need} \
                 bytes (MPI_ERR_BUFFER), and no buffer is attached: call rpar::buffer_attach \
                 first"
            ),
        )),
        Some(have) if have < need => Err(Error::invalid(
            "a buffered send",
            format!(
                "a buffered send of {bytes} bytes needs {need} bytes of the attached buffer \
                 ({bytes} + BSEND_OVERHEAD), but the buffer has {have} (MPI_ERR_BUFFER)"
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// Attaches `buf` as this rank's buffer for buffered sends (MPI_Buffer_attach): one buffer per
/// rank, for all its communicators, as MPI has one per process. Call it inside a rank's
/// closure.
///
/// # Errors
///
/// [`Error::InvalidArgument`] if a buffer is attached already (detach it first).
///
/// ```
/// rpar::run(1, |_| {
///     rpar::buffer_attach(vec![0; 1024])?;
///     assert!(rpar::buffer_attach(vec![0; 8]).is_err()); // one at a time
///     assert_eq!(rpar::buffer_detach()?.len(), 1024);
///     assert!(rpar::buffer_detach().is_err()); // nothing attached now
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn buffer_attach(buf: Vec<u8>) -> Result<()> {
    ATTACHED.with_borrow_mut(|attached| {
        if let Some(old) = attached.as_ref() {
            return Err(Error::invalid(
                "buffer_attach",
                format!(
                    "a buffer of {} bytes is attached already: detach it before attaching \
                     another",
                    old.len()
                ),
            ));
        }
        *attached = Some(buf);
        Ok(())
    })
}

/// Detaches the buffer attached with [`buffer_attach`] and gives it back (MPI_Buffer_detach).
/// The buffered messages have all left it already (see [`SendMode::Buffered`]), so this does
/// not wait.
///
/// # Errors
///
/// [`Error::InvalidArgument`] if no buffer is attached.
pub fn buffer_detach() -> Result<Vec<u8>> {
    ATTACHED
        .with_borrow_mut(Option::take)
        .ok_or_else(|| Error::invalid("buffer_detach", "no buffer is attached"))
}

impl<'scope> Scope<'scope, '_> {
    /// Starts a synchronous send from `buf` itself (MPI_Issend), borrowed for the scope: the
    /// request completes once the receiver has matched the message. As [`Scope::isend`], the
    /// scope waits for it if it is not waited for.
    ///
    /// # Errors
    ///
    /// As [`Scope::isend`].
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let other = 1 - world.rank();
    ///     let out = [world.rank() as u8; 64];
    ///     let mut inc = [0u8; 64];
    ///     world.scope(|s| {
    ///         let sent = s.issend(&out[..], other, 0)?;
    ///         world.recv_into(&mut inc[..], other, 0)?; // each receives the other's
    ///         sent.wait()?;
    ///         Ok(())
    ///     })?;
    ///     assert_eq!(inc[0], other as u8);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn issend<B: Buffer + ?Sized>(
        &'scope self,
        buf: &'scope B,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'scope>> {
        self.isend_in_mode("issend", buf, (dest, tag), Mode::Synchronous)
    }
}
