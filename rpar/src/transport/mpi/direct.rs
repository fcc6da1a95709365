//! Direct receives: receives that MPI matches itself, straight into the receive buffer — the
//! fast path of a receive from a known source with a known tag on the MPI transport.
//!
//! One is posted (`MPI_Irecv` on the tag of the channel's live direct class, `classes.rs`)
//! only when the receiver knows that class, its elements are values of the receive's own type
//! and the buffer holds its bound; the endpoint posts it only when rpar's own queues hold
//! nothing the receive would take first (`Endpoint::recv_direct` for a blocking receive,
//! `Endpoint::post_direct` for a non-blocking one, which may follow others of its channel).
//! Then the next message MPI matches is the channel's next message: a bare one of the class,
//! at most the bound (the whole of rpar's checks — signature, truncation — were made once,
//! against the class), or the marker that retires the class, which leaves the buffer untouched
//! (the receive then goes the ordinary way, and so do the ones posted behind it, which are
//! cancelled). A receive is settled — complete, or cancelled and waited for — before its buffer
//! may go: a blocking one by [`DirectRecv`]'s `Drop`, a non-blocking one by its request or, if
//! that was leaked, its scope; so MPI never writes into a buffer its owner has freed.
//!
//! A blocking receive of a collective call (rpar's own algorithms) whose channel has a direct
//! class of the receiver's kind of call takes its message through MPI's matching too, into the
//! link's staging buffer: the message's call number follows its payload, and only the
//! receiver's own number makes it the receive's (copied into the buffer). Another number — a
//! later call's message, or a program whose processes called different collectives — puts the
//! message back into rpar's queues, as if probed, where the ordinary receive and the mismatch
//! check see it; being the channel's next message, it keeps its place.

use super::classes::{self, Incoming, SEQ_BYTES};
use super::link::{bare_call_message, split_call, Wire};
use crate::transport::{CallKey, ElemType, Header, Message};
use crate::Result;
use ::mpi::ffi;
use ::mpi::traits::AsRaw;

/// A posted direct receive; see the module. Its owner settles it before its buffer goes: a
/// blocking receive through [`DirectRecv`], a non-blocking one through the endpoint's posted
/// receives (`Endpoint::post_direct`), which its scope settles at the latest.
#[derive(Debug)]
pub(crate) struct DirectPost {
    request: ffi::MPI_Request,
    /// The sending process and the class received.
    from: usize,
    class: u32,
    /// The size of an element of the receive's type.
    size: usize,
}

impl DirectPost {
    /// The sending process and the id of the class it receives: the receives of one class
    /// take its messages in post order.
    pub(crate) fn class(&self) -> (usize, u32) {
        (self.from, self.class)
    }
}

/// A blocking direct receive: cancelled and waited for if dropped unfinished.
struct DirectRecv<'w> {
    wire: &'w Wire,
    post: Option<DirectPost>,
}

/// How a direct receive ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direct {
    /// This many elements arrived in the buffer.
    Received(usize),
    /// The class was retired: nothing arrived, receive the ordinary way.
    Retired,
}

impl Wire {
    /// Receives the next message of the channel of `header` (context, source, tag) from world
    /// rank `from` straight into the `capacity` elements of `elem` at `dst`, if the channel has
    /// a live direct class that fits (see [`Wire::post_direct`]): the count received, or `None`
    /// where it has none or the class was retired meanwhile (nothing received). `idle(round)`
    /// runs after each test that finds the receive unfinished; its error cancels the receive.
    ///
    /// # Safety
    ///
    /// As [`Wire::post_direct`], for this call.
    pub(crate) unsafe fn recv_direct(
        &self,
        from: usize,
        header: &Header,
        buffer: (ElemType, *mut u8, usize),
        idle: impl FnMut(u32) -> Result<()>,
        put_back: impl FnOnce(Header, Message),
    ) -> Result<Option<usize>> {
        if let Some(call) = header.call {
            // SAFETY: the caller's guarantees.
            return unsafe { self.recv_direct_call(from, (header, call), buffer, idle, put_back) };
        }
        // SAFETY: the caller's guarantees; the receive is settled before `wait_direct` returns.
        let post = unsafe { self.post_direct(from, header, buffer, usize::MAX) };
        Ok(match self.wait_direct(post, idle)? {
            Some(Direct::Received(count)) => Some(count),
            _ => None,
        })
    }

    /// [`Wire::recv_direct`] of a message of the collective call `call` (the receiver's): MPI
    /// takes the channel's next message into the link's staging buffer, where its call's
    /// number follows its payload (`classes.rs`). If that is `call`'s number, the payload is
    /// copied into the receive buffer; else the message — a later call's of the same kind, or
    /// a mismatched program's — goes to rpar's queues through `put_back`, as if it had been
    /// probed, and nothing is received.
    ///
    /// # Safety
    ///
    /// As [`Wire::recv_direct`].
    #[inline(never)] // out of the point-to-point path
    unsafe fn recv_direct_call(
        &self,
        from: usize,
        (header, call): (&Header, CallKey),
        (elem, dst, capacity): (ElemType, *mut u8, usize),
        idle: impl FnMut(u32) -> Result<()>,
        put_back: impl FnOnce(Header, Message),
    ) -> Result<Option<usize>> {
        let classes = self.incoming_classes.borrow();
        // the stream's class: its messages are of the receiver's kind of call (they differ
        // at most in the call's number)
        let Some((class, bound)) = direct_class(&classes, from, header, elem) else {
            return Ok(None);
        };
        let Some(bytes) = bound.checked_mul(elem.size).map(|b| b + SEQ_BYTES) else {
            return Ok(None);
        };
        if bound > capacity {
            return Ok(None);
        }
        let Ok(len) = i32::try_from(bytes) else {
            return Ok(None);
        };
        drop(classes);
        let mut staging = std::mem::take(&mut *self.staging.borrow_mut());
        staging.clear();
        staging.reserve(bytes);
        // SAFETY: `staging` has room for `bytes` bytes and outlives the receive, which
        // `wait_direct` settles before it returns; a bare message of the class has at most
        // `bound` elements and the number, `bytes` bytes. Counted in bytes: the number follows
        // the elements.
        let post = unsafe { self.irecv_class((staging.as_mut_ptr(), len), (from, class), 1) };
        let Some(Direct::Received(received)) = self.wait_direct(Some(post), idle)? else {
            return Ok(None); // the marker: the class retired
        };
        // SAFETY: MPI wrote the `received` bytes of the message, at most `bytes`.
        unsafe { staging.set_len(received) };
        let (payload, seq) = split_call(&staging)?;
        let count = if seq == call.seq() {
            let count = super::wire::whole_elements(payload.len(), elem.size)
                .ok_or_else(super::wire::malformed)?;
            // SAFETY: `dst` holds `capacity` >= `bound` >= `count` elements (checked above;
            // the payload is at most `bound` elements' bytes), apart from the link's buffer.
            unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), dst, payload.len()) };
            Some(count)
        } else {
            let known = self.incoming_classes.borrow().get(from, class).cloned();
            let known = known.ok_or_else(super::wire::malformed)?;
            // of the receiver's kind of call (its stream's), with another number
            let class = (known.header, call);
            let (header, message) = bare_call_message(payload, seq, class, known.stand_in)?;
            put_back(header, message);
            None
        };
        *self.staging.borrow_mut() = staging;
        Ok(count)
    }

    /// Waits for the blocking direct receive `post`, if any, running `idle(round)` after each
    /// test that finds it unfinished: how it ended. It is settled when this returns, whatever
    /// happened (an error of `idle` cancels it).
    #[inline(always)] // on the path of every direct receive
    fn wait_direct(
        &self,
        post: Option<DirectPost>,
        mut idle: impl FnMut(u32) -> Result<()>,
    ) -> Result<Option<Direct>> {
        let mut recv = DirectRecv { wire: self, post };
        let Some(post) = &mut recv.post else {
            return Ok(None);
        };
        for round in 0u32.. {
            match self.test_direct(post) {
                Ok(None) => idle(round)?,
                settled => {
                    recv.post = None;
                    return settled;
                }
            }
        }
        unreachable!("the loop returns")
    }

    /// The bound of the live direct class of the channel of `header` from world rank `from`,
    /// if it has one whose elements are values of `elem`: how many elements a buffer for
    /// [`Wire::recv_direct`] must hold.
    pub(crate) fn direct_bound(
        &self,
        from: usize,
        header: &Header,
        elem: ElemType,
    ) -> Option<usize> {
        let classes = self.incoming_classes.borrow();
        direct_class(&classes, from, header, elem).map(|(_, bound)| bound)
    }

    /// Posts a receive of the next message of the channel of `header` from world rank `from`
    /// straight into the `capacity` elements of `elem` at `dst`, if that channel has a live
    /// direct class whose elements are values of `elem` and whose bound `capacity` holds, of at
    /// most `most_bytes`; `None` otherwise.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `capacity` elements of `elem` until the returned
    /// receive is settled: complete ([`Wire::test_direct`]) or cancelled
    /// ([`Wire::cancel_direct`]). The caller must know that the channel's next message not yet
    /// taken by such a receive is the one to receive: nothing of it queued by rpar, and no
    /// posted receive of rpar's that would match it first.
    pub(crate) unsafe fn post_direct(
        &self,
        from: usize,
        header: &Header,
        (elem, dst, capacity): (ElemType, *mut u8, usize),
        most_bytes: usize,
    ) -> Option<DirectPost> {
        let classes = self.incoming_classes.borrow();
        let (class, bound) = direct_class(&classes, from, header, elem)?;
        let bytes = bound.checked_mul(elem.size)?;
        if bound > capacity || bytes > most_bytes {
            return None;
        }
        let bytes = i32::try_from(bytes).ok()?;
        // SAFETY: `dst` holds `capacity` >= `bound` elements, `bytes` bytes, until the receive
        // is settled (the caller); a bare message of the class has at most `bound` elements of
        // its type, so MPI never writes past them.
        Some(unsafe { self.irecv_class((dst, bytes), (from, class), elem.size) })
    }

    /// Posts `MPI_Irecv` of at most `bytes` bytes into `dst` from world rank `from` on the tag
    /// of class `class`: the direct receive, counting what arrives in elements of `size` bytes.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `bytes` bytes until the receive is settled, and no
    /// message of the class may be longer.
    unsafe fn irecv_class(
        &self,
        (dst, bytes): (*mut u8, i32),
        (from, class): (usize, u32),
        size: usize,
    ) -> DirectPost {
        let mut request = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: the caller's guarantee on `dst`; the communicator is the link's, alive as
        // long as `self`.
        let request = unsafe {
            ffi::MPI_Irecv(
                dst.cast(),
                bytes,
                ffi::RSMPI_UINT8_T,
                from as i32,
                classes::tag_of(class),
                self.comm.as_raw(),
                request.as_mut_ptr(),
            );
            request.assume_init()
        };
        DirectPost {
            request,
            from,
            class,
            size,
        }
    }

    /// Whether the direct receive `post` completed (a pass of MPI's progress engine): how, if
    /// it did. Unless it returns `Ok(None)`, the receive is settled. A message of a length that
    /// is no whole number of elements is an error of the sender's.
    #[inline]
    pub(crate) fn test_direct(&self, post: &mut DirectPost) -> Result<Option<Direct>> {
        match self.complete(post, false) {
            Some(bytes) => self.received(post, bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Settles the direct receive `post` at once: cancels it and waits until MPI is done with
    /// it. How it ended if a message (or the marker) came before the cancel, `None` if it was
    /// cancelled.
    pub(crate) fn cancel_direct(&self, post: &mut DirectPost) -> Result<Option<Direct>> {
        // SAFETY: `request` is the post's live request (it is unsettled); MPI_Cancel marks
        // it, and the wait in `complete` completes and frees it.
        unsafe { ffi::MPI_Cancel(&mut post.request) };
        match self.complete(post, true) {
            Some(bytes) => self.received(post, bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Whether the class that `post` receives is still its channel's live direct class (a
    /// receive posted behind the one that took its marker waits for nothing).
    pub(crate) fn direct_is_live(&self, post: &DirectPost) -> bool {
        self.incoming_classes
            .borrow()
            .is_live_direct(post.from, post.class)
    }

    /// How a direct receive that received `bytes` ended. A marker (no bytes) retires its class.
    fn received(&self, post: &DirectPost, bytes: usize) -> Result<Direct> {
        if bytes == 0 {
            self.incoming_classes
                .borrow_mut()
                .retire(post.from, post.class);
            return Ok(Direct::Retired);
        }
        match super::wire::whole_elements(bytes, post.size) {
            Some(count) => Ok(Direct::Received(count)),
            None => Err(super::wire::malformed()),
        }
    }

    /// Tests the request of `post` (with `wait`, waits for it): the bytes received, once
    /// complete; `None` if it is unfinished or was cancelled.
    fn complete(&self, post: &mut DirectPost, wait: bool) -> Option<usize> {
        let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
        let mut flag = 1;
        // SAFETY: `request` is the post's live request (it is unsettled); MPI fills the status
        // when it completes and frees the request.
        unsafe {
            match wait {
                true => ffi::MPI_Wait(&mut post.request, status.as_mut_ptr()),
                false => ffi::MPI_Test(&mut post.request, &mut flag, status.as_mut_ptr()),
            };
        }
        if flag == 0 {
            return None;
        }
        // SAFETY: the request completed, so MPI filled the status.
        let status = unsafe { status.assume_init() };
        let (mut cancelled, mut bytes) = (0, 0);
        // SAFETY: `status` is a completed receive's. Only a wait follows a cancel: a receive
        // that a test finds complete was not cancelled.
        unsafe {
            if wait {
                ffi::MPI_Test_cancelled(&status, &mut cancelled);
            }
            ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut bytes);
        }
        (cancelled == 0).then_some(bytes.max(0) as usize)
    }
}

/// The live direct class of the stream of messages with `header` (`classes::Stream`) from
/// world rank `from`, if its elements are values of
/// `elem`: its id and bound.
fn direct_class(
    classes: &Incoming,
    from: usize,
    header: &Header,
    elem: ElemType,
) -> Option<(u32, usize)> {
    let (class, known) = classes.direct(from, header)?;
    (known.stand_in.plain?.id == elem.id).then_some((class, known.bound?))
}

impl Drop for DirectRecv<'_> {
    /// Settles an unfinished receive: after this, MPI no longer writes into the buffer. (A
    /// message that arrived before the cancel is received and lost with the receive: this
    /// happens only when the wait failed — the run aborting, or a malformed message from
    /// another process filed meanwhile.)
    fn drop(&mut self) {
        if let Some(post) = &mut self.post {
            let _ = self.wire.cancel_direct(post);
        }
    }
}
