//! MPI's other send modes: synchronous ([`Comm::ssend`], [`Comm::issend`]), ready
//! ([`Comm::rsend`], [`Comm::irsend`]) and buffered ([`Comm::bsend`], [`Comm::ibsend`], with
//! [`Comm::buffer_attach`] and [`Comm::buffer_detach`]).
//!
//! A synchronous send is a rendezvous whatever its size, marked so that the receiver copies it
//! only once a receive matches it (a standard rendezvous may be copied out early to release
//! its sender: see `Endpoint::queue`). A ready send carries its mode in the header, and a
//! receive that finds it in the unexpected queue reports it (`comm::check_ready`). A buffered
//! send is copied at once, as a non-blocking send of `&x` is, once the attached buffer is
//! found to hold it.
//!
//! On the MPI transport a synchronous send to another process goes as a standard one (MPI's
//! own eager or rendezvous protocol; rpar receives every message as it arrives, so MPI's
//! synchronous mode would not wait for rpar's match): only in-process does `ssend` wait for
//! the match. The ready-mode mark travels in the header to other processes too.

use super::p2p::{check_send_tag, eager_data, Mode};
use super::{Buffer, Comm, Request, Scope, Status, PROC_NULL};
use crate::transport::{publish, Data, ElemType, ErasedVec, Message};
use crate::{Error, Result};

/// The bytes a buffered send takes in the attached buffer beyond its data (MPI_BSEND_OVERHEAD,
/// MPICH's value on 64-bit systems): size the buffer as the sum of `bytes + BSEND_OVERHEAD`
/// over the messages it must hold at once.
pub const BSEND_OVERHEAD: usize = 96;

impl Comm {
    /// Sends `buf` to `dest` in synchronous mode (MPI_Ssend): returns only once the receiver
    /// has matched it with a receive, whatever its size (a standard [`Comm::send`] of a small
    /// message returns as soon as it is copied).
    ///
    /// # Errors
    ///
    /// As [`Comm::send`]; two ranks that both `ssend` to each other before receiving wait for
    /// each other: [`Error::Deadlock`], as MPI would hang.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         world.ssend(&7u32, 1, 0)?; // returns once rank 1 has matched it
    ///     } else {
    ///         assert_eq!(world.recv::<u32>(0, 0)?.0, [7]);
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ssend<B: Buffer + ?Sized>(&self, buf: &B, dest: usize, tag: i32) -> Result<()> {
        self.send_in_mode("ssend", buf.as_elems(), (dest, tag), Mode::Synchronous)
    }

    /// Sends `buf` to `dest` in ready mode (MPI_Rsend): the receive must already be posted.
    /// rpar checks it: a receive that finds the message waiting in its queue, because no
    /// receive was posted when it arrived, fails with [`Error::InvalidArgument`] (MPI calls
    /// the program erroneous). The check never reports a correct program; it can miss a late
    /// receive posted before the receiver next looked at its mailbox. On both transports.
    ///
    /// # Errors
    ///
    /// As [`Comm::send`].
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let mut x = 0u8;
    ///     if world.rank() == 1 {
    ///         let req = world.irecv_into(&mut x, 0, 0)?; // posted first
    ///         world.send(&0u8, 0, 1)?; // then rank 0 is told it may send
    ///         req.wait()?;
    ///         assert_eq!(x, 9);
    ///     } else {
    ///         world.recv_into(&mut 0u8, 1, 1)?;
    ///         world.rsend(&9u8, 1, 0)?;
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn rsend<B: Buffer + ?Sized>(&self, buf: &B, dest: usize, tag: i32) -> Result<()> {
        self.send_in_mode("rsend", buf.as_elems(), (dest, tag), Mode::Ready)
    }

    /// A blocking send in `mode`.
    fn send_in_mode<T: crate::Datatype>(
        &self,
        name: &'static str,
        elems: &[T],
        (dest, tag): (usize, i32),
        mode: Mode,
    ) -> Result<()> {
        let _span = self.span(name, Some(dest), Some(tag), std::mem::size_of_val(elems));
        check_send_tag(tag)?;
        let context = self.p2p_context();
        // SAFETY: `elems` is borrowed for this whole call and the offer is finished (or, on an
        // unwind, dropped) before it returns.
        match unsafe { self.post_send_in_mode(context, elems, (dest, tag), mode)? } {
            None => Ok(()),
            Some(offer) => offer.finish(),
        }
    }

    /// Starts a synchronous send (MPI_Issend): the request completes once the receiver has
    /// matched the message. `buf` is copied now, so it is free again at once; [`Scope::issend`]
    /// sends from `buf` itself. Dropping the request unfinished still delivers the message
    /// (MPI_Request_free), from a copy then never freed.
    ///
    /// # Errors
    ///
    /// As [`Comm::isend`]; completing it, as [`Request::wait`] of a send.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         let mut sent = world.issend(&[1u16, 2][..], 1, 0)?;
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
    pub fn issend<B: Buffer + ?Sized>(
        &self,
        buf: &B,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'static>> {
        let elems = buf.as_elems();
        let bytes = std::mem::size_of_val(elems);
        let _span = self.span("issend", Some(dest), Some(tag), bytes);
        check_send_tag(tag)?;
        let ep = self.endpoint();
        if dest == PROC_NULL {
            return Ok(Request::done(ep.clone(), Status::null(), None));
        }
        ep.check_live()?;
        self.check_rank(dest)?;
        if ep.wire_to(self.group[dest]).is_some() {
            return self.isend(buf, dest, tag); // another process: MPI's standard send
        }
        let status = Status::of(self.rank(), tag, elems.len());
        let copy = ErasedVec::new(elems.to_vec());
        let mailbox = ep.fabric().mailbox(ep.world_rank()).clone();
        // SAFETY: the copy's heap block stays where it is, unmodified, until the hand-over
        // ends: the request owns it until then, and if the request is dropped or leaked
        // before, the block is never freed (see `Request`'s `Drop`).
        let (pending, ticket) = unsafe { publish(copy.as_ptr(), bytes, mailbox, true) };
        let (elem, count) = (ElemType::of::<B::Elem>(), elems.len());
        let data = Data::Borrowed(ticket);
        let context = self.p2p_context();
        self.post_message(context, Message { elem, count, data }, dest, tag)?;
        let to = (context, dest, tag);
        Ok(Request::rendezvous_from(
            ep.clone(),
            (pending, to),
            copy,
            status,
            None,
        ))
    }

    /// Starts a ready-mode send (MPI_Irsend): `buf` is copied now and the request is complete;
    /// the receive must already be posted, as for [`Comm::rsend`], which says how it is
    /// checked.
    ///
    /// # Errors
    ///
    /// As [`Comm::isend`].
    pub fn irsend<B: Buffer + ?Sized>(
        &self,
        buf: &B,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'static>> {
        let elems = buf.as_elems();
        let _span = self.span(
            "irsend",
            Some(dest),
            Some(tag),
            std::mem::size_of_val(elems),
        );
        check_send_tag(tag)?;
        let message = Message {
            elem: ElemType::of::<B::Elem>(),
            count: elems.len(),
            data: eager_data(elems),
        };
        self.posted_send_in_mode(message, (dest, tag), true)
    }

    /// Sends `buf` in buffered mode (MPI_Bsend): copied at once, so it returns without waiting
    /// for the receiver, provided the buffer attached with [`Comm::buffer_attach`] can hold
    /// `bytes + BSEND_OVERHEAD`. rpar keeps the copy in its own queue, so the space is free
    /// again when the call returns (as in MPICH for an eager-size message).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (MPI_ERR_BUFFER) if no buffer is attached or it is too small
    /// for the message; otherwise as [`Comm::send`].
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         let x = [1.0f64; 100]; // 800 bytes
    ///         assert!(world.bsend(&x[..], 1, 0).is_err()); // nothing attached
    ///         world.buffer_attach(vec![0; 800 + rpar::BSEND_OVERHEAD])?;
    ///         world.bsend(&x[..], 1, 0)?;
    ///         assert!(world.bsend(&[0.0f64; 101][..], 1, 0).is_err()); // too large
    ///         assert_eq!(world.buffer_detach()?.len(), 800 + rpar::BSEND_OVERHEAD);
    ///     } else {
    ///         assert_eq!(world.recv::<f64>(0, 0)?.0.len(), 100);
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn bsend<B: Buffer + ?Sized>(&self, buf: &B, dest: usize, tag: i32) -> Result<()> {
        self.ibsend(buf, dest, tag).map(drop)
    }

    /// Starts a buffered send (MPI_Ibsend): as [`Comm::bsend`], with a request that is
    /// complete at once.
    ///
    /// # Errors
    ///
    /// As [`Comm::bsend`].
    pub fn ibsend<B: Buffer + ?Sized>(
        &self,
        buf: &B,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'static>> {
        let elems = buf.as_elems();
        check_send_tag(tag)?;
        if dest != PROC_NULL {
            self.fits_attached(std::mem::size_of_val(elems))?;
        }
        self.isend(buf, dest, tag)
    }

    /// Whether the attached buffer holds a buffered message of `bytes` bytes.
    fn fits_attached(&self, bytes: usize) -> Result<()> {
        let need = bytes.saturating_add(BSEND_OVERHEAD);
        match self.endpoint().attached.borrow().as_ref().map(Vec::len) {
            None => Err(Error::invalid(
                "bsend",
                format!(
                    "a buffered send of {bytes} bytes needs an attached buffer of at least \
                     {need} bytes (MPI_ERR_BUFFER), and no buffer is attached: call \
                     Comm::buffer_attach first"
                ),
            )),
            Some(have) if have < need => Err(Error::invalid(
                "bsend",
                format!(
                    "a buffered send of {bytes} bytes needs {need} bytes of the attached \
                     buffer ({bytes} + BSEND_OVERHEAD), but the buffer has {have} \
                     (MPI_ERR_BUFFER)"
                ),
            )),
            Some(_) => Ok(()),
        }
    }

    /// Attaches `buf` as this rank's buffer for buffered sends (MPI_Buffer_attach). One buffer
    /// per rank, for all its communicators, as MPI has one per process.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if a buffer is attached already (detach it first).
    pub fn buffer_attach(&self, buf: Vec<u8>) -> Result<()> {
        let mut attached = self.endpoint().attached.borrow_mut();
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
    }

    /// Detaches the buffer attached with [`Comm::buffer_attach`] and gives it back
    /// (MPI_Buffer_detach). The buffered messages have all left it already (see
    /// [`Comm::bsend`]), so this does not wait.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if no buffer is attached.
    pub fn buffer_detach(&self) -> Result<Vec<u8>> {
        self.endpoint()
            .attached
            .borrow_mut()
            .take()
            .ok_or_else(|| Error::invalid("buffer_detach", "no buffer is attached"))
    }
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
