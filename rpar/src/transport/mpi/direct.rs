//! [`DirectRecv`]: a receive that MPI matches itself, straight into the receive buffer — the
//! fast path of a blocking receive from a known source with a known tag on the MPI transport.
//!
//! It is posted (`MPI_Irecv` on the tag of the channel's live direct class, `classes.rs`) only
//! when the receiver knows that class, its elements are values of the receive's own type and
//! the buffer holds its bound; the endpoint posts it only when rpar's own queues hold nothing
//! the receive would take first (`Endpoint::recv_direct`). Then the next message MPI matches is
//! the channel's next message: a bare one of the class, at most the bound (the whole of rpar's
//! checks — signature, truncation — were made once, against the class), or the marker that
//! retires the class, which leaves the buffer untouched (the receive then goes the ordinary
//! way). A receive dropped before it completes (an abort, an unwind) is cancelled and waited
//! for, so that MPI never writes into a buffer its owner has freed.

use super::classes::{self, Channel, Incoming};
use super::link::Wire;
use crate::transport::{ElemType, Header};
use crate::Result;
use ::mpi::ffi;
use ::mpi::traits::AsRaw;

/// A posted direct receive; see the module.
struct DirectRecv<'w> {
    wire: &'w Wire,
    request: ffi::MPI_Request,
    /// The sending process and the class received.
    from: usize,
    class: u32,
    /// The size of an element of the receive's type.
    size: usize,
    /// Whether the request completed (MPI freed it).
    done: bool,
}

/// How a direct receive ended.
enum Direct {
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
        mut idle: impl FnMut(u32) -> Result<()>,
    ) -> Result<Option<usize>> {
        // SAFETY: the caller's guarantees; the receive is dropped before this returns.
        let Some(mut recv) = (unsafe { self.post_direct(from, &Channel::of(header), buffer) })
        else {
            return Ok(None);
        };
        for round in 0u32.. {
            match recv.test()? {
                Some(Direct::Received(count)) => return Ok(Some(count)),
                Some(Direct::Retired) => return Ok(None),
                None => idle(round)?,
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
        direct_class(&classes, from, &Channel::of(header), elem).map(|(_, bound)| bound)
    }

    /// Posts a receive of the next message of `channel` from world rank `from` straight into
    /// the `capacity` elements of `elem` at `dst`, if that channel has a live direct class whose
    /// elements are values of `elem` and whose bound `capacity` holds; `None` otherwise.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `capacity` elements of `elem`, and stay so until the
    /// returned receive is dropped. The caller must know that the channel's next message is the
    /// one to receive: nothing of it queued by rpar, and no posted receive of rpar's that
    /// would match it first.
    unsafe fn post_direct(
        &self,
        from: usize,
        channel: &Channel,
        (elem, dst, capacity): (ElemType, *mut u8, usize),
    ) -> Option<DirectRecv<'_>> {
        let classes = self.incoming_classes.borrow();
        let (class, bound) = direct_class(&classes, from, channel, elem)?;
        if bound > capacity {
            return None;
        }
        let bytes = i32::try_from(bound.checked_mul(elem.size)?).ok()?;
        let mut request = std::mem::MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `dst` holds `capacity` >= `bound` elements, `bytes` bytes (the caller, who
        // keeps it until the receive is dropped, and `Drop` cancels and waits for it); a bare
        // message of the class has at most `bound` elements of its type, so MPI never writes
        // past them. The communicator is the link's, alive as long as `self`.
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
        Some(DirectRecv {
            wire: self,
            request,
            from,
            class,
            size: elem.size,
            done: false,
        })
    }
}

/// The live direct class of `channel` from world rank `from`, if its elements are values of
/// `elem`: its number and bound.
fn direct_class(
    classes: &Incoming,
    from: usize,
    channel: &Channel,
    elem: ElemType,
) -> Option<(u32, usize)> {
    let (class, known) = classes.direct(from, channel)?;
    (known.stand_in.plain?.id == elem.id).then_some((class, known.bound?))
}

impl DirectRecv<'_> {
    /// Whether the receive completed (a pass of MPI's progress engine): how, if it did. A
    /// message of a length that is no whole number of elements is an error of the sender's.
    fn test(&mut self) -> Result<Option<Direct>> {
        let Some(bytes) = self.completed(false) else {
            return Ok(None);
        };
        if bytes == 0 {
            return Ok(Some(Direct::Retired));
        }
        if !bytes.is_multiple_of(self.size) {
            return Err(super::wire::malformed());
        }
        Ok(Some(Direct::Received(bytes / self.size)))
    }

    /// Tests the request (with `wait`, waits for it): the bytes received, once complete. A
    /// marker (no bytes) retires the class here, however the receive ends.
    fn completed(&mut self, wait: bool) -> Option<usize> {
        let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
        let mut flag = 1;
        // SAFETY: `request` is this receive's live request (not `done`); MPI fills the status
        // when it completes and frees the request.
        unsafe {
            match wait {
                true => ffi::MPI_Wait(&mut self.request, status.as_mut_ptr()),
                false => ffi::MPI_Test(&mut self.request, &mut flag, status.as_mut_ptr()),
            };
        }
        if flag == 0 {
            return None;
        }
        self.done = true;
        // SAFETY: the request completed, so MPI filled the status.
        let status = unsafe { status.assume_init() };
        let (mut cancelled, mut bytes) = (0, 0);
        // SAFETY: `status` is a completed receive's. Only a wait follows a cancel (`Drop`): a
        // receive that a test finds complete was not cancelled.
        unsafe {
            if wait {
                ffi::MPI_Test_cancelled(&status, &mut cancelled);
            }
            ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut bytes);
        }
        if cancelled != 0 {
            return None;
        }
        if bytes == 0 {
            self.wire
                .incoming_classes
                .borrow_mut()
                .retire(self.from, self.class);
        }
        Some(bytes.max(0) as usize)
    }
}

impl Drop for DirectRecv<'_> {
    /// Cancels an unfinished receive and waits until MPI is done with it: after this, MPI no
    /// longer writes into the buffer. (A message that arrived before the cancel is received and
    /// lost with the receive: this happens only when the run is aborting.)
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // SAFETY: `request` is this receive's live request; MPI_Cancel marks it, and the wait
        // in `completed` completes and frees it.
        unsafe { ffi::MPI_Cancel(&mut self.request) };
        let _ = self.completed(true);
    }
}
