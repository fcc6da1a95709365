//! Blocking point-to-point messaging and probe (MPI_Send, MPI_Recv, MPI_Sendrecv, MPI_Probe …).
//!
//! Every call has an internal `*_in` form that takes the context, so that collectives run the
//! very same code on the communicator's collective context.

use super::buffer::{RecvBuf, SendBuf};
use super::delivery::{deliver_into, deliver_vec, undelivered, RawRecvBuf};
use super::{
    end_poll, known, span_on, Buffer, BufferMut, Comm, Probed, Receives, Status, ANY_SOURCE,
    ANY_TAG, PROC_NULL, TAG_UB,
};
use crate::datatype::Datatype;
use crate::trace::Span;
use crate::transport::{
    publish, CallKey, Data, ElemType, Endpoint, ErasedVec, Header, Message, Pattern, PendingSend,
    SendOutcome, Ticket, Waiting, INLINE_BYTES, RENDEZVOUS_BYTES,
};
use crate::{Error, Result};

/// The most bytes a [`Comm::recv`] allocates for a receive straight from MPI (the bound of the
/// channel's direct class, whatever the message's count): past it, the message is probed first
/// and its `Vec` sized exactly, rather than allocating a bound that may be far larger.
const DIRECT_VEC_BYTES: usize = 64 << 10;

#[inline]
pub(crate) fn check_send_tag(tag: i32) -> Result<()> {
    if (0..=TAG_UB).contains(&tag) {
        Ok(())
    } else {
        Err(Error::InvalidTag { tag, max: TAG_UB })
    }
}

impl Comm {
    /// Sends `buf` to rank `dest` with `tag` (MPI_Send). Returns once `buf` may be reused.
    ///
    /// `buf`: `&x` (a value, a slice, a `Vec`), an owned `Vec` (moved: the receiver of a
    /// [`Comm::recv`] gets this very allocation, no copy; MPI has no move), or
    /// [`Typed::new(&x, &ty, n)`](crate::Typed) for `n` elements of a committed derived
    /// datatype (MPI_Send with a datatype; [`Typed::at`](crate::Typed::at) for negative
    /// displacements).
    ///
    /// Small messages are copied and the call returns at once; large ones (over 32 KiB) are
    /// copied once, straight into the receiver's buffer, when the receiver takes them (a typed
    /// one segment by segment, with no pack buffer); an owned `Vec` returns at once.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a `dest` that is not a rank of the communicator,
    /// [`Error::InvalidTag`] for a negative tag, [`Error::Aborted`] if the run was aborted, and
    /// for large messages [`Error::PeerFinished`] if the receiver finished without receiving it
    /// or [`Error::Deadlock`] if every rank is blocked. A small message to a rank that has
    /// finished is no error: the run reports it as a [`Warning::Unreceived`](crate::Warning::Unreceived).
    /// For a typed view, [`Error::BufferOutOfBounds`] if the type would touch bytes outside
    /// the buffer and [`Error::InvalidArgument`] if an entry lands on padding or on a value of
    /// another basic type (both checked before anything is sent).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap, Typed};
    /// // column 1 of a 4 x 8 row-major matrix of f64
    /// let column = TypeMap::vector(4, 1, 8, &f64::type_map())?.commit();
    /// let got = rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         world.send(&[1, 2, 3][..], 1, 9)?;              // a slice, copied
    ///         world.send(vec![0u8; 1 << 20], 1, 8)?;         // a Vec, moved
    ///         let m: Vec<f64> = (0..32).map(f64::from).collect();
    ///         world.send(Typed::new(&m[1..], &column, 1), 1, 7)?; // a derived datatype
    ///         return Ok(vec![]);
    ///     }
    ///     let (a, _) = world.recv::<i32>(0, 9)?;
    ///     assert_eq!(world.recv::<u8>(0, 8)?.0.len(), 1 << 20);
    ///     let (col, _) = world.recv::<f64>(0, 7)?;
    ///     Ok(a.iter().map(|&x| f64::from(x)).chain(col).collect())
    /// })?;
    /// assert_eq!(got[1], [1.0, 2.0, 3.0, 1.0, 9.0, 17.0, 25.0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn send<S: SendBuf>(&self, buf: S, dest: usize, tag: i32) -> Result<()> {
        buf.send(self, dest, tag)
    }

    /// A blocking send of a borrowed slice (what [`Comm::send`] of `&x` runs).
    #[inline]
    pub(crate) fn send_borrowed<T: Datatype>(
        &self,
        elems: &[T],
        dest: usize,
        tag: i32,
    ) -> Result<()> {
        let _span = self.span("send", Some(dest), Some(tag), std::mem::size_of_val(elems));
        check_send_tag(tag)?;
        self.send_in(self.p2p_context(), elems, dest, tag)
    }

    /// A send of an owned `Vec`, moved (what [`Comm::send`] of a `Vec` runs).
    pub(crate) fn send_moved<T: Datatype>(
        &self,
        data: Vec<T>,
        dest: usize,
        tag: i32,
    ) -> Result<()> {
        let _span = self.span(
            "send_owned",
            Some(dest),
            Some(tag),
            std::mem::size_of_val(&data[..]),
        );
        check_send_tag(tag)?;
        self.send_owned_in(self.p2p_context(), data, dest, tag)
    }

    /// Receives a message from `source` (or [`ANY_SOURCE`]) with `tag` (or [`ANY_TAG`]) as a
    /// new `Vec` of however many elements it has (MPI_Probe + MPI_Recv).
    ///
    /// Cost: matching searches this rank's queue of unreceived messages in arrival order. The
    /// data is copied at most once: an owned `Vec<T>` the sender already made (with
    /// [`Comm::send`] of a `Vec`, or for a message of 33 bytes to 32 KiB) is taken over as it is.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a `source` that is neither a rank nor
    /// [`ANY_SOURCE`], [`Error::InvalidTag`] for a negative tag other than [`ANY_TAG`],
    /// [`Error::TypeMismatch`] if the message's type signature differs from `T`'s (it then stays
    /// queued), [`Error::Aborted`] if another rank failed, [`Error::Deadlock`] if every rank is
    /// blocked.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         return world.send(&[0.5f64, 1.5][..], 1, 4);
    ///     }
    ///     let err = world.recv::<i64>(0, 4).unwrap_err(); // same size, other type
    ///     assert!(matches!(err, rpar::Error::TypeMismatch { source_rank: 0, .. }));
    ///     let (v, st) = world.recv::<f64>(rpar::ANY_SOURCE, rpar::ANY_TAG)?; // still there
    ///     assert_eq!((v, st.source, st.tag, st.count), (vec![0.5, 1.5], 0, 4, 2));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn recv<T: Datatype>(&self, source: usize, tag: i32) -> Result<(Vec<T>, Status)> {
        let _span = self.receive_span("recv", source, tag);
        self.recv_in(self.p2p_context(), source, tag)
    }

    /// Receives a message into `buf` (MPI_Recv); returns its status (`count` = elements
    /// received, which may be fewer than `buf` holds).
    ///
    /// `buf`: `&mut x` (a value, a slice, a `Vec` of fixed length), or
    /// [`Typed::new(&mut x, &ty, n)`](crate::Typed) for `n` elements of a committed derived
    /// datatype (the message's type signature must be a prefix of the receive's, MPI's rule;
    /// `count` is then in elements of the type, [`UNDEFINED`](crate::UNDEFINED) for a part of
    /// one).
    ///
    /// # Errors
    ///
    /// As [`Comm::recv`], and [`Error::Truncated`] if the message does not fit — the
    /// message then stays queued and can be received with a larger buffer; for a typed view,
    /// those of its layout (see [`Comm::send`]).
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         world.send(&[1.5f64; 4][..], 1, 0)?;
    ///     } else {
    ///         let mut small = [0.0f64; 2];
    ///         let err = world.recv_into(&mut small[..], 0, 0).unwrap_err();
    ///         assert!(matches!(err, rpar::Error::Truncated { needed: 32, capacity: 16, .. }));
    ///         let mut big = [0.0f64; 8];
    ///         let st = world.recv_into(&mut big[..], 0, 0)?; // the message was not lost
    ///         assert_eq!(st.count, 4);
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn recv_into<R: RecvBuf>(&self, buf: R, source: usize, tag: i32) -> Result<Status> {
        buf.recv(self, source, tag)
    }

    /// A blocking receive into a slice (what [`Comm::recv_into`] of `&mut x` runs).
    #[inline]
    pub(crate) fn recv_borrowed<T: Datatype>(
        &self,
        buf: &mut [T],
        source: usize,
        tag: i32,
    ) -> Result<Status> {
        let _span = self.receive_span("recv", source, tag);
        self.recv_into_in(self.p2p_context(), buf, source, tag)
    }

    /// Sends `send` to `dest` and receives into `recv` from `source` in one call
    /// (MPI_Sendrecv): safe against the deadlock of two ranks that both send first.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::send`] and [`Comm::recv_into`]; a bad `source` or `recv_tag`
    /// is refused before anything is sent.
    ///
    /// ```
    /// let got = rpar::run(4, |world| {
    ///     let (r, p) = (world.rank(), world.size());
    ///     let mut left = 0usize;
    ///     world.sendrecv(&r, (r + 1) % p, 0, &mut left, (r + p - 1) % p, 0)?;
    ///     Ok(left)
    /// })?;
    /// assert_eq!(got, vec![3, 0, 1, 2]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)] // MPI_Sendrecv's own argument list
    pub fn sendrecv<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        dest: usize,
        send_tag: i32,
        recv: &mut R,
        source: usize,
        recv_tag: i32,
    ) -> Result<Status> {
        let _span = self.span(
            "sendrecv",
            Some(dest),
            Some(send_tag),
            std::mem::size_of_val(send.as_elems()),
        );
        check_send_tag(send_tag)?;
        self.sendrecv_in(
            self.p2p_context(),
            send.as_elems(),
            dest,
            send_tag,
            recv.as_elems_mut(),
            source,
            recv_tag,
        )
    }

    /// Sends the contents of `buf` to `dest`, then receives into `buf` from `source`
    /// (MPI_Sendrecv_replace).
    ///
    /// Cost: one copy of `buf` before it is overwritten (MPI too uses a temporary buffer), and
    /// the receive's copy into it.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::sendrecv`]. On [`Error::Truncated`] or [`Error::TypeMismatch`]
    /// the send has been made and `buf` is unchanged.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let (r, p) = (world.rank(), world.size());
    ///     let mut v = [r as u32; 16];
    ///     let st = world.sendrecv_replace(&mut v[..], (r + 1) % p, 0, (r + p - 1) % p, 0)?;
    ///     assert_eq!((st.source, st.count), ((r + p - 1) % p, 16));
    ///     Ok(v[15])
    /// })?;
    /// assert_eq!(got, [2, 0, 1]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn sendrecv_replace<B: BufferMut + ?Sized>(
        &self,
        buf: &mut B,
        dest: usize,
        send_tag: i32,
        source: usize,
        recv_tag: i32,
    ) -> Result<Status> {
        let _span = self.span(
            "sendrecv_replace",
            Some(dest),
            Some(send_tag),
            std::mem::size_of_val(buf.as_elems()),
        );
        check_send_tag(send_tag)?;
        self.sendrecv_replace_in(
            self.p2p_context(),
            buf.as_elems_mut(),
            dest,
            send_tag,
            source,
            recv_tag,
        )
    }

    /// Waits for a matching message and returns its status and size without receiving it
    /// (MPI_Probe).
    ///
    /// Cost: a search of this rank's queue of unreceived messages, as for a receive.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] and [`Error::InvalidTag`] as for [`Comm::recv`];
    /// [`Error::Aborted`] if another rank failed, [`Error::Deadlock`] if every rank is blocked.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         world.send(&[7u16; 5][..], 1, 3)?;
    ///     } else {
    ///         let p = world.probe(rpar::ANY_SOURCE, rpar::ANY_TAG)?;
    ///         assert_eq!((p.status.source, p.status.tag, p.status.count, p.bytes), (0, 3, 5, 10));
    ///         let mut buf = vec![0u16; p.status.count];
    ///         world.recv_into(&mut buf, p.status.source, p.status.tag)?;
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn probe(&self, source: usize, tag: i32) -> Result<Probed> {
        let mut span = self.probe_span("probe", source, tag);
        let Some(pattern) = self.pattern(self.p2p_context(), source, tag)? else {
            return Ok(Probed::null());
        };
        let found = self.endpoint().probe(&pattern, true)?;
        let p = probed(found.expect("a blocking probe returns a message"));
        describe_probed(span.as_mut(), &p);
        Ok(p)
    }

    /// Like [`Comm::probe`], but returns `None` at once if no matching message is there
    /// (MPI_Iprobe).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] and [`Error::InvalidTag`] as for [`Comm::recv`];
    /// [`Error::Aborted`] if the run was aborted.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     if world.rank() == 1 {
    ///         world.recv::<u8>(0, 1)?; // until rank 0 says go
    ///         return world.send(&[5i16; 3][..], 0, 2);
    ///     }
    ///     assert_eq!(world.iprobe(1, rpar::ANY_TAG)?, None); // nothing sent yet
    ///     world.send(&0u8, 1, 1)?;
    ///     let p = loop {
    ///         if let Some(p) = world.iprobe(1, rpar::ANY_TAG)? {
    ///             break p;
    ///         }
    ///     };
    ///     assert_eq!((p.status.tag, p.status.count, p.bytes), (2, 3, 6));
    ///     assert_eq!(world.recv::<i16>(1, 2)?.0, [5, 5, 5]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn iprobe(&self, source: usize, tag: i32) -> Result<Option<Probed>> {
        let span = self.probe_span("iprobe", source, tag);
        let Some(pattern) = self.pattern(self.p2p_context(), source, tag)? else {
            return Ok(Some(Probed::null()));
        };
        let found = self
            .endpoint()
            .probe(&pattern, false)
            .map(|f| f.map(probed));
        // a probe that finds nothing leaves no span, so that a polling loop leaves one
        end_poll(span, &found, |s, p| describe_probed(Some(s), p));
        found
    }

    /// The span of a probe for `source` (or any) with `tag` (or any), completed by
    /// [`describe_probed`].
    #[inline]
    fn probe_span(&self, name: &'static str, source: usize, tag: i32) -> Option<Span<'_>> {
        let (peer, tag) = known(source, tag);
        let (ep, subject) = (self.endpoint(), (peer, tag, None));
        span_on(ep, name, self.id, subject, Receives::Nothing)
    }

    // ----- the context-taking forms, shared with the collectives -----

    /// What a receive or probe from `source` with `tag` on `context` matches: `None` for
    /// [`PROC_NULL`], whose receive completes at once with [`Status::null`]. The tag is checked
    /// either way.
    pub(crate) fn pattern(&self, context: u32, source: usize, tag: i32) -> Result<Option<Pattern>> {
        let tag = match tag {
            ANY_TAG => None,
            t if t < 0 => return Err(Error::InvalidTag { tag, max: TAG_UB }),
            t => Some(t),
        };
        if (source == ANY_SOURCE || tag.is_none()) && context == self.p2p_context() {
            self.check_promised(source == ANY_SOURCE, tag.is_none())?;
        }
        let source = match source {
            ANY_SOURCE => None,
            PROC_NULL => return Ok(None),
            _ => {
                self.check_rank(source)?;
                Some(source as u32)
            }
        };
        // collective traffic: the call receiving (see `Pattern::seq`)
        let seq = (context % 2 == 1)
            .then(|| self.endpoint().collective().map(|c| c.seq))
            .flatten();
        Ok(Some(Pattern {
            context,
            source,
            tag,
            seq,
        }))
    }

    /// The header of a message from this rank on `context` with `tag` (and, on the collective
    /// context, the collective call it belongs to).
    #[inline]
    pub(crate) fn header(&self, context: u32, tag: i32) -> Header {
        let ep = self.endpoint();
        Header {
            context,
            source: self.rank as u32,
            tag,
            // bit 31 is the ready-mode mark (`Header::flow`)
            flow: ep.trace().map_or(0, |t| t.flow_out() & !(1 << 31)),
            call: if context % 2 == 1 {
                ep.collective().as_ref().map(CallKey::from)
            } else {
                None
            },
        }
    }

    /// Hands a message to `dest` (through the lane or mailbox to it, see `Endpoint::deliver`;
    /// on the MPI transport, to `dest`'s process). A message to a rank that has finished is counted as never received (its
    /// rendezvous ticket, if any, is dropped and releases this rank).
    #[inline]
    pub(crate) fn post_message(
        &self,
        context: u32,
        message: Message,
        dest: usize,
        tag: i32,
    ) -> Result<()> {
        self.post_in_mode(context, message, (dest, tag), false)
    }

    /// As [`Comm::post_message`], marked as a ready-mode send if `ready` (see `Header::flow`).
    /// The header is made here, not passed in: moving it costs the hot path.
    pub(crate) fn post_in_mode(
        &self,
        context: u32,
        message: Message,
        (dest, tag): (usize, i32),
        ready: bool,
    ) -> Result<()> {
        let ep = self.endpoint();
        let to = self.group[dest];
        if let Some(row) = ep.matrix() {
            row.count(to, message.bytes());
        }
        let mut header = self.header(context, tag);
        if ready {
            header.set_ready(true);
        }
        if let Some(wire) = ep.wire_to(to) {
            return wire.send_message(to, &header, message);
        }
        ep.deliver(to, header, message);
        Ok(())
    }

    /// Sends `elems` to `dest`'s process on the MPI transport, if `dest` is another process:
    /// packed (one copy), or if large straight from `elems`, with an offer that must be
    /// finished before they are released (see `Wire::send_borrowed`). `None` if `dest` is in
    /// this process.
    ///
    /// # Safety
    ///
    /// As [`Comm::post_send`], for the offer this returns.
    unsafe fn send_remote<T: Datatype>(
        &self,
        context: u32,
        elems: &[T],
        (dest, tag): (usize, i32),
        (ready, sync): (bool, u32),
    ) -> Option<Result<Option<Offer<'_>>>> {
        let ep = self.endpoint();
        let to = self.group[dest];
        let wire = ep.wire_to(to)?;
        if let Some(row) = ep.matrix() {
            row.count(to, std::mem::size_of_val(elems));
        }
        let mut header = self.header(context, tag);
        header.set_ready(ready);
        let elem = (ElemType::of::<T>(), elems.len());
        // SAFETY: `elems` is `elems.len()` readable elements of `T`; a pending send returned
        // becomes the offer, which our caller keeps them for.
        let sent = unsafe { wire.send_borrowed(to, &header, elem, elems.as_ptr().cast(), sync) };
        let to = (context, dest, tag);
        Some(sent.map(|sent| sent.map(|pending| Offer { pending, ep, to })))
    }

    /// A synchronous send of `elems` to `dest` in another process (MPI transport), numbered
    /// so that the receiving process acknowledges it when a receive matches it: the number to
    /// wait for; `None` if `dest` is in this process (or `PROC_NULL`), and nothing was sent.
    pub(crate) fn send_remote_synchronous<T: Datatype>(
        &self,
        elems: &[T],
        dest: usize,
        tag: i32,
    ) -> Result<Option<u32>> {
        if dest == PROC_NULL {
            return Ok(None);
        }
        self.check_rank(dest)?;
        let Some(wire) = self.endpoint().wire_to(self.group[dest]) else {
            return Ok(None);
        };
        let sync = wire.sync_number();
        // SAFETY: a synchronous send is always packed: no offer comes back to keep `elems` for.
        let sent =
            unsafe { self.send_remote(self.p2p_context(), elems, (dest, tag), (false, sync)) };
        let offer = sent.expect("dest is in another process")?;
        debug_assert!(
            offer.is_none(),
            "a synchronous send to another process is packed"
        );
        Ok(Some(sync))
    }

    /// Posts a borrowed send: eager (copied now) when small, a rendezvous when large. The
    /// returned offer, if any, must be finished ([`Offer::finish`]) or dropped (which withdraws
    /// it) before `elems` is released.
    ///
    /// # Safety
    ///
    /// If this returns `Some`, the caller must keep `elems` alive and unmodified until the
    /// offer is finished or dropped, and must not leak it (`mem::forget`).
    pub(crate) unsafe fn post_send<T: Datatype>(
        &self,
        context: u32,
        elems: &[T],
        dest: usize,
        tag: i32,
    ) -> Result<Option<Offer<'_>>> {
        // SAFETY: passed on to our caller.
        unsafe { self.post_send_in_mode(context, elems, (dest, tag), Mode::Standard) }
    }

    /// As [`Comm::post_send`], in a send mode: a synchronous send is always a rendezvous
    /// (finished only once a receive matches it), a ready one carries its mode for the check.
    ///
    /// # Safety
    ///
    /// As [`Comm::post_send`].
    pub(crate) unsafe fn post_send_in_mode<T: Datatype>(
        &self,
        context: u32,
        elems: &[T],
        (dest, tag): (usize, i32),
        mode: Mode,
    ) -> Result<Option<Offer<'_>>> {
        if dest == PROC_NULL {
            return Ok(None);
        }
        self.endpoint().check_live()?;
        self.check_rank(dest)?;
        let ready = mode == Mode::Ready;
        // SAFETY: passed on to our caller (the offer's contract).
        if let Some(sent) = unsafe { self.send_remote(context, elems, (dest, tag), (ready, 0)) } {
            return sent;
        }
        let bytes = std::mem::size_of_val(elems);
        let elem = ElemType::of::<T>();
        let count = elems.len();
        let synchronous = mode == Mode::Synchronous;
        if bytes <= RENDEZVOUS_BYTES && !synchronous {
            let data = eager_data(elems);
            self.post_in_mode(context, Message { elem, count, data }, (dest, tag), ready)?;
            return Ok(None);
        }
        // SAFETY: the caller keeps `elems` alive and unmodified until the offer is finished or
        // withdrawn (this function's contract).
        let (offer, ticket) = unsafe {
            self.offer(
                elems.as_ptr().cast(),
                bytes,
                (context, dest, tag),
                synchronous,
            )
        };
        let data = Data::Borrowed(ticket);
        self.post_in_mode(context, Message { elem, count, data }, (dest, tag), ready)?;
        crate::fault::point("rendezvous: offered")?;
        Ok(Some(offer))
    }

    /// Publishes `bytes` bytes at `ptr` for the receiver of a send to `to`: the sender's
    /// [`Offer`] and the receiver's ticket, to travel in the message.
    ///
    /// # Safety
    ///
    /// As [`publish`]: the bytes stay alive and unmodified until the offer is finished or
    /// dropped (and it is not leaked).
    pub(crate) unsafe fn offer(
        &self,
        ptr: *const u8,
        bytes: usize,
        to: SendTarget,
        synchronous: bool,
    ) -> (Offer<'_>, Ticket) {
        let ep = self.endpoint();
        let own_mailbox = ep.fabric().mailbox(ep.world_rank()).clone();
        // SAFETY: passed on to our caller.
        let (pending, ticket) = unsafe { publish(ptr, bytes, own_mailbox, synchronous) };
        (Offer { pending, ep, to }, ticket)
    }

    pub(crate) fn send_in<T: Datatype>(
        &self,
        context: u32,
        elems: &[T],
        dest: usize,
        tag: i32,
    ) -> Result<()> {
        // SAFETY: `elems` is borrowed for this whole call and the offer is finished (or, on an
        // unwind, dropped) before it returns.
        match unsafe { self.post_send(context, elems, dest, tag)? } {
            None => Ok(()),
            Some(offer) => offer.finish(),
        }
    }

    pub(crate) fn send_owned_in<T: Datatype>(
        &self,
        context: u32,
        data: Vec<T>,
        dest: usize,
        tag: i32,
    ) -> Result<()> {
        if dest == PROC_NULL {
            return Ok(());
        }
        self.endpoint().check_live()?;
        self.check_rank(dest)?;
        let message = Message {
            elem: ElemType::of::<T>(),
            count: data.len(),
            data: Data::Owned(ErasedVec::new(data)),
        };
        self.post_message(context, message, dest, tag)
    }

    pub(crate) fn recv_in<T: Datatype>(
        &self,
        context: u32,
        source: usize,
        tag: i32,
    ) -> Result<(Vec<T>, Status)> {
        let Some(pattern) = self.pattern(context, source, tag)? else {
            return Ok((Vec::new(), Status::null()));
        };
        let ep = self.endpoint();
        if ep.wire().is_some() && source != ANY_SOURCE {
            if let Some(got) = self.recv_vec_direct(&pattern, source)? {
                return Ok(got);
            }
        }
        let mut m = ep.recv(&pattern)?;
        self.accept_arrival(&m)?;
        match deliver_vec(&mut m) {
            Ok(got) => Ok(got),
            Err(failure) => Err(undelivered(failure, m, ep)),
        }
    }

    /// [`Comm::recv_in`] straight into a new `Vec` by MPI's own matching, where the channel from
    /// `source`'s process has a direct class of `T` of at most [`DIRECT_VEC_BYTES`]; `None`
    /// where it does not apply (nothing received).
    fn recv_vec_direct<T: Datatype>(
        &self,
        pattern: &Pattern,
        source: usize,
    ) -> Result<Option<(Vec<T>, Status)>> {
        let (ep, from, elem) = (self.endpoint(), self.group[source], ElemType::of::<T>());
        let Some(bound) = ep.direct_bound(pattern, from, elem) else {
            return Ok(None);
        };
        if bound.saturating_mul(elem.size) > DIRECT_VEC_BYTES {
            return Ok(None);
        }
        let mut v = Vec::<T>::with_capacity(bound);
        let target = (elem, v.as_mut_ptr().cast(), bound);
        // SAFETY: `v` has room for `bound` elements, owned by this call.
        let Some(count) = (unsafe { ep.recv_direct(pattern, from, target)? }) else {
            return Ok(None);
        };
        // SAFETY: MPI wrote `count` <= `bound` elements' bytes; a direct class's elements are
        // values of a basic type of which every bit pattern is a value (`StandIn::plain`), `T`.
        unsafe { v.set_len(count) };
        let tag = pattern.tag.unwrap_or_default();
        Ok(Some((v, Status::of(source, tag, count))))
    }

    pub(crate) fn recv_into_in<T: Datatype>(
        &self,
        context: u32,
        buf: &mut [T],
        source: usize,
        tag: i32,
    ) -> Result<Status> {
        let Some(pattern) = self.pattern(context, source, tag)? else {
            return Ok(Status::null());
        };
        let ep = self.endpoint();
        if ep.wire().is_some() && source != ANY_SOURCE {
            let target = (ElemType::of::<T>(), buf.as_mut_ptr().cast(), buf.len());
            // SAFETY: `buf` is exclusively borrowed for this call.
            if let Some(count) = unsafe { ep.recv_direct(&pattern, self.group[source], target)? } {
                return Ok(Status::of(source, tag, count));
            }
        }
        let mut m = ep.recv(&pattern)?;
        self.accept_arrival(&m)?;
        // SAFETY: `buf` is exclusively borrowed for this call.
        match unsafe { deliver_into(&mut m, RawRecvBuf::of(buf)) } {
            Ok(status) => Ok(status),
            Err(failure) => Err(undelivered(failure, m, ep)),
        }
    }

    #[allow(clippy::too_many_arguments)] // MPI_Sendrecv's own argument list
    pub(crate) fn sendrecv_in<T: Datatype, U: Datatype>(
        &self,
        context: u32,
        send: &[T],
        dest: usize,
        send_tag: i32,
        recv: &mut [U],
        source: usize,
        recv_tag: i32,
    ) -> Result<Status> {
        // refuse bad arguments before sending
        self.pattern(context, source, recv_tag)?;
        // SAFETY: `send` is borrowed for this whole call; the offer is finished below, or
        // dropped on an unwind, before it returns.
        let offer = unsafe { self.post_send(context, send, dest, send_tag)? };
        let received = self.recv_into_in(context, recv, source, recv_tag);
        if let Some(offer) = offer {
            offer.finish()?;
        }
        received
    }

    pub(crate) fn sendrecv_replace_in<T: Datatype>(
        &self,
        context: u32,
        buf: &mut [T],
        dest: usize,
        send_tag: i32,
        source: usize,
        recv_tag: i32,
    ) -> Result<Status> {
        self.pattern(context, source, recv_tag)?;
        if std::mem::size_of_val(buf) <= INLINE_BYTES {
            // SAFETY: a message this small is always copied eagerly: no rendezvous to finish.
            let offer = unsafe { self.post_send(context, buf, dest, send_tag)? };
            debug_assert!(offer.is_none());
        } else {
            self.send_owned_in(context, buf.to_vec(), dest, send_tag)?;
        }
        self.recv_into_in(context, buf, source, recv_tag)
    }
}

/// MPI's send modes, as the transport sees them (a buffered send is a standard one once its
/// space in the attached buffer is accounted for: see `comm/modes.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// MPI_Send: eager when small, else a rendezvous the receiver may copy out early.
    Standard,
    /// MPI_Ssend: complete only once a receive has matched it.
    Synchronous,
    /// MPI_Rsend: a receive must be posted already; the message says so, for the check.
    Ready,
}

/// Where a send goes: (context, destination rank in the communicator, tag).
pub(crate) type SendTarget = (u32, usize, i32);

/// A rendezvous this rank offered from a borrowed buffer: the buffer may be released only once
/// the offer is finished ([`Offer::finish`]) or withdrawn. Dropping an unfinished offer
/// withdraws it, waiting out a copy in progress — when the rank is unwinding from a panic,
/// after aborting the run, so that a receiver turned away reports this rank's panic rather than
/// a failure of its own.
#[derive(Debug)]
pub(crate) struct Offer<'a> {
    pending: PendingSend,
    ep: &'a Endpoint,
    to: SendTarget,
}

impl Offer<'_> {
    /// Waits until the receiver has the data, making progress meanwhile; on abort, withdraws
    /// the offer (see [`finish_rendezvous`]).
    pub(crate) fn finish(self) -> Result<()> {
        finish_rendezvous(self.ep, &self.pending, self.to)
        // dropped here, finished: nothing to withdraw
    }

    /// The sender's view of the hand-over, for a request that waits for it.
    pub(crate) fn pending(&self) -> &PendingSend {
        &self.pending
    }

    /// Where the offer goes.
    pub(crate) fn target(&self) -> SendTarget {
        self.to
    }

    /// Withdraws the offer because this rank is failing with a panic (caught by a scope, or
    /// unwinding): the run is aborted first if a receiver may still come for it.
    pub(crate) fn abandon(self) {
        self.withdraw(true);
    }

    fn withdraw(&self, panicking: bool) {
        if self.pending.outcome() != SendOutcome::Pending {
            return; // delivered, dropped or withdrawn already
        }
        if let Some(wire) = self.ep.wire().filter(|_| self.pending.is_remote()) {
            // MPI reads the buffer until its request completes and cannot give a started send
            // back: wait for it (the receiving process takes the bytes at its next call)
            wire.wait_sent(&self.pending);
            return;
        }
        if panicking {
            self.ep.fabric().abort_unwinding(self.ep.world_rank());
        }
        self.pending.cancel();
    }
}

impl Drop for Offer<'_> {
    fn drop(&mut self) {
        self.withdraw(std::thread::panicking());
    }
}

/// Waits until a rendezvous send to `dest` is delivered, making progress meanwhile; on abort,
/// withdraws it (waiting out a copy in progress) so that the buffer is no longer read.
pub(crate) fn finish_rendezvous(
    ep: &Endpoint,
    pending: &PendingSend,
    (context, dest, tag): SendTarget,
) -> Result<()> {
    let waiting = Waiting::Send { context, dest, tag };
    crate::fault::point("rendezvous: waiting")?;
    let done = || {
        pending.help(); // a large copy the receiver has begun: copy pieces of it too
        pending.outcome() != SendOutcome::Pending
    };
    if let Err(err) = ep.wait_send(done, waiting) {
        if pending.cancel() != SendOutcome::Delivered {
            return Err(err);
        }
    }
    match pending.outcome() {
        // withdrawn: the send was cancelled (Request::cancel), so nothing is owed
        SendOutcome::Delivered | SendOutcome::Withdrawn => Ok(()),
        _ => Err(Error::PeerFinished {
            peer: dest,
            waiting_for: "was sending it a message it never received".into(),
        }),
    }
}

/// The payload of an eager send: inline if tiny, else an owned copy.
pub(crate) fn eager_data<T: Datatype>(elems: &[T]) -> Data {
    if std::mem::size_of_val(elems) <= INLINE_BYTES {
        Data::inline(elems)
    } else {
        Data::Owned(ErasedVec::new(elems.to_vec()))
    }
}

/// Gives the span of a probe what it found.
#[inline]
fn describe_probed(span: Option<&mut Span<'_>>, p: &Probed) {
    if let Some(s) = span {
        s.describe(Some(p.status.source), Some(p.status.tag), Some(p.bytes));
    }
}

fn probed((h, count, bytes): (Header, usize, usize)) -> Probed {
    Probed {
        status: Status::of(h.source as usize, h.tag, count),
        bytes,
    }
}
