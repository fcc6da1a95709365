//! Matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv): a probe that takes the
//! message it finds out of matching, so that no other receive — of another thread of the
//! program, or of a library on the same communicator — can take it between the probe and the
//! receive.

use super::delivery::{deliver_into, deliver_vec, undelivered, RawRecvBuf};
use super::{BufferMut, Comm, Status};
use crate::datatype::Datatype;
use crate::transport::{Endpoint, Matched};
use crate::Result;
use std::rc::Rc;

/// A message taken by [`MatchedMessage::probe`] or [`MatchedMessage::iprobe`] (MPI_Message): only
/// [`MatchedMessage::recv`] or [`MatchedMessage::recv_into`] can receive it. Dropped without
/// being received, it goes back to its place in the queue (no message is lost). A probe of
/// [`PROC_NULL`](crate::PROC_NULL) gives the empty message (MPI_MESSAGE_NO_PROC), whose
/// receive completes at once with [`Status::null`].
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         return world.send(&[3u16, 4, 5][..], 1, 9);
///     }
///     let msg = rpar::MatchedMessage::probe(&world, rpar::ANY_SOURCE, rpar::ANY_TAG)?;
///     assert_eq!((msg.status().source, msg.status().tag, msg.status().count), (0, 9, 3));
///     let mut buf = vec![0u16; msg.status().count]; // sized from the probe
///     let st = msg.recv_into(&mut buf[..])?;
///     assert_eq!((buf, st.count), (vec![3, 4, 5], 3));
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct MatchedMessage {
    ep: Rc<Endpoint>,
    /// `None` for MPI_MESSAGE_NO_PROC, and once received.
    message: Option<Matched>,
    status: Status,
    bytes: usize,
}

impl MatchedMessage {
    /// Waits for a message on `comm` from `source` (or [`ANY_SOURCE`](crate::ANY_SOURCE)) with
    /// `tag` (or [`ANY_TAG`](crate::ANY_TAG)) and takes it out of matching (MPI_Mprobe).
    ///
    /// # Errors
    ///
    /// As [`Comm::probe`].
    pub fn probe(comm: &Comm, source: usize, tag: i32) -> Result<MatchedMessage> {
        let _span = comm.receive_span("mprobe", source, tag);
        let taken = comm.take_matched(source, tag, true)?;
        Ok(taken.expect("a blocking matched probe returns a message"))
    }

    /// As [`MatchedMessage::probe`], but returns `None` at once if no matching message is there
    /// (MPI_Improbe).
    ///
    /// # Errors
    ///
    /// As [`Comm::iprobe`].
    pub fn iprobe(comm: &Comm, source: usize, tag: i32) -> Result<Option<MatchedMessage>> {
        comm.take_matched(source, tag, false)
    }
}

impl Comm {
    fn take_matched(&self, source: usize, tag: i32, block: bool) -> Result<Option<MatchedMessage>> {
        let ep = self.endpoint().clone();
        let Some(pattern) = self.pattern(self.p2p_context(), source, tag)? else {
            return Ok(Some(MatchedMessage {
                ep,
                message: None,
                status: Status::null(),
                bytes: 0,
            }));
        };
        let Some(m) = ep.take_matching(&pattern, block)? else {
            return Ok(None);
        };
        self.accept_arrival(&m)?;
        let status = Status::of(m.header.source as usize, m.header.tag, m.message.count);
        let bytes = m.message.bytes();
        Ok(Some(MatchedMessage {
            ep,
            message: Some(m),
            status,
            bytes,
        }))
    }
}

impl MatchedMessage {
    /// Its source, tag, and count in the sender's elements (as [`Comm::probe`] says).
    pub fn status(&self) -> Status {
        self.status
    }

    /// Its size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Receives it into `buf` (MPI_Mrecv).
    ///
    /// # Errors
    ///
    /// As [`Comm::recv_into`]: on [`Error::Truncated`](crate::Error::Truncated) or
    /// [`Error::TypeMismatch`](crate::Error::TypeMismatch) the message goes back to its place in
    /// the queue, where any receive may take it.
    pub fn recv_into<B: BufferMut + ?Sized>(mut self, buf: &mut B) -> Result<Status> {
        let Some(mut m) = self.message.take() else {
            return Ok(Status::null());
        };
        // SAFETY: `buf` is exclusively borrowed for this call.
        match unsafe { deliver_into(&mut m, RawRecvBuf::of(buf.as_elems_mut())) } {
            Ok(status) => Ok(status),
            Err(failure) => Err(undelivered(failure, m, &self.ep)),
        }
    }

    /// Receives it as a new `Vec` (MPI_Mrecv into a buffer of the message's size).
    ///
    /// # Errors
    ///
    /// As [`MatchedMessage::recv_into`].
    pub fn recv<T: Datatype>(mut self) -> Result<(Vec<T>, Status)> {
        let Some(mut m) = self.message.take() else {
            return Ok((Vec::new(), Status::null()));
        };
        match deliver_vec(&mut m) {
            Ok(got) => Ok(got),
            Err(failure) => Err(undelivered(failure, m, &self.ep)),
        }
    }
}

impl Drop for MatchedMessage {
    fn drop(&mut self) {
        if let Some(m) = self.message.take() {
            self.ep.put_back(m);
        }
    }
}
