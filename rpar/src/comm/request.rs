//! Non-blocking operations and their requests (MPI_Isend, MPI_Irecv, MPI_Wait, MPI_Test, …).
//!
//! Soundness: a [`Request`] that receives into a borrowed buffer holds that borrow for its whole
//! life, and the buffer is written only inside `wait`/`test` on the request itself — never in
//! the background. A request that is leaked with `mem::forget` therefore never writes into memory
//! that was freed; its message simply stays claimed. Sends from borrowed buffers that are not
//! copied at once exist only inside [`Comm::scope`](super::Comm::scope), which waits for them.

use super::delivery::{deliver_into, undelivered, RawRecvBuf};
use super::p2p::{check_send_tag, eager_data, finish_rendezvous, SendTarget};
use super::{Buffer, BufferMut, Comm, Status};
use crate::datatype::Datatype;
use crate::transport::Data;
use crate::transport::{ElemType, Endpoint, ErasedVec, Message, PendingSend, SendOutcome, SlotId};
use crate::{Error, Result};
use std::marker::PhantomData;
use std::rc::Rc;

/// A pending non-blocking operation (MPI_Request). Complete it with [`Request::wait`] or
/// [`Request::test`], or several with [`wait_all`], [`wait_any`], [`test_all`]. Dropping an
/// incomplete receive request cancels it (its message, if it had one, stays receivable).
pub struct Request<'a> {
    ep: Rc<Endpoint>,
    state: State,
    _buf: PhantomData<&'a mut [u8]>,
}

enum State {
    Done(Status),
    Recv {
        slot: SlotId,
        buf: RawRecvBuf,
    },
    Send {
        pending: PendingSend,
        to: SendTarget,
        status: Status,
    },
    Finished,
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Done(s) => format!("done {s:?}"),
            State::Recv { .. } => "receiving".into(),
            State::Send { .. } => "sending".into(),
            State::Finished => "finished".into(),
        };
        f.debug_struct("Request").field("state", &state).finish()
    }
}

impl Comm {
    /// Starts a send and returns at once (MPI_Isend). The data is copied now, so `buf` is free
    /// again immediately; for large messages without that copy use [`Comm::scope`].
    pub fn isend<B: Buffer + ?Sized>(
        &self,
        buf: &B,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'static>> {
        let elems = buf.as_elems();
        let _span = self.span("isend", Some(dest), Some(tag), std::mem::size_of_val(elems));
        check_send_tag(tag)?;
        self.endpoint().check_live()?;
        self.check_rank(dest)?;
        let message = Message {
            elem: ElemType::of::<B::Elem>(),
            count: elems.len(),
            data: eager_data(elems),
        };
        self.posted_send(message, dest, tag)
    }

    /// Starts a send of an owned `Vec`, which moves to the receiver without a copy.
    pub fn isend_owned<T: Datatype>(
        &self,
        data: Vec<T>,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'static>> {
        check_send_tag(tag)?;
        self.endpoint().check_live()?;
        self.check_rank(dest)?;
        let message = Message {
            elem: ElemType::of::<T>(),
            count: data.len(),
            data: Data::Owned(ErasedVec::new(data)),
        };
        self.posted_send(message, dest, tag)
    }

    fn posted_send(&self, message: Message, dest: usize, tag: i32) -> Result<Request<'static>> {
        let status = Status {
            source: self.rank(),
            tag,
            count: message.count,
        };
        self.post_message(self.p2p_context(), message, dest, tag)?;
        Ok(Request::done(self.endpoint().clone(), status))
    }

    /// Starts a receive into `buf` (MPI_Irecv). The request borrows `buf` until it completes.
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
    pub fn irecv_into<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
        source: usize,
        tag: i32,
    ) -> Result<Request<'a>> {
        let pattern = self.pattern(self.p2p_context(), source, tag)?;
        self.endpoint().check_live()?;
        let slot = self.endpoint().post(pattern);
        Ok(Request {
            ep: self.endpoint().clone(),
            state: State::Recv {
                slot,
                buf: RawRecvBuf::of(buf.as_elems_mut()),
            },
            _buf: PhantomData,
        })
    }
}

impl<'a> Request<'a> {
    pub(crate) fn done(ep: Rc<Endpoint>, status: Status) -> Self {
        Request {
            ep,
            state: State::Done(status),
            _buf: PhantomData,
        }
    }

    pub(crate) fn rendezvous(
        ep: Rc<Endpoint>,
        pending: PendingSend,
        to: SendTarget,
        status: Status,
    ) -> Self {
        Request {
            ep,
            state: State::Send {
                pending,
                to,
                status,
            },
            _buf: PhantomData,
        }
    }

    /// Blocks until the operation completes (MPI_Wait).
    pub fn wait(mut self) -> Result<Status> {
        loop {
            if let Some(status) = self.poll(true)? {
                return Ok(status);
            }
        }
    }

    /// Completes the operation if it can without blocking (MPI_Test): `Some(status)` once done.
    pub fn test(&mut self) -> Result<Option<Status>> {
        self.ep.check_live()?;
        self.poll(false)
    }

    /// One step: with `block`, waits for this request's message (receive) or delivery (send).
    fn poll(&mut self, block: bool) -> Result<Option<Status>> {
        match &self.state {
            State::Done(status) => Ok(Some(*status)),
            State::Finished => Err(Error::invalid(
                "Request::wait",
                "the request has already completed",
            )),
            State::Recv { slot, buf } => {
                let (slot, buf) = (*slot, *buf);
                let matched = if block {
                    Some(self.ep.wait_slot(slot)?)
                } else {
                    self.ep.test_slot(slot)?
                };
                let Some(mut m) = matched else {
                    return Ok(None);
                };
                self.ep.flow_in(&m.header);
                // the slot is gone now: whatever happens, this request no longer owns one
                self.state = State::Finished;
                let ep = &self.ep;
                // SAFETY: `buf` is the buffer this request borrows for 'a, still live and
                // exclusively ours because the request is.
                let status = match unsafe { deliver_into(&mut m, buf) } {
                    Ok(status) => status,
                    Err(failure) => return Err(undelivered(failure, m, ep)),
                };
                self.state = State::Done(status);
                Ok(Some(status))
            }
            State::Send {
                pending,
                to,
                status,
            } => {
                if !block && pending.outcome() == SendOutcome::Pending {
                    return Ok(None);
                }
                let (pending, to, status) = (pending.clone(), *to, *status);
                self.state = State::Finished;
                finish_rendezvous(&self.ep, &pending, to)?;
                self.state = State::Done(status);
                Ok(Some(status))
            }
        }
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if let State::Recv { slot, .. } = self.state {
            self.ep.cancel_slot(slot);
        }
        // a pending scoped send is waited for by its scope
    }
}

/// Waits for all requests (MPI_Waitall); the statuses in the same order.
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
    requests.into_iter().map(Request::wait).collect()
}

/// Waits until one of the requests completes (MPI_Waitany), removes it from the list and returns
/// its index and status.
pub fn wait_any(requests: &mut Vec<Request<'_>>) -> Result<(usize, Status)> {
    let Some(first) = requests.first() else {
        return Err(Error::invalid(
            "wait_any",
            "expected at least one request, got none",
        ));
    };
    let ep = first.ep.clone();
    loop {
        ep.check_live()?;
        for i in 0..requests.len() {
            if let Some(status) = requests[i].poll(false)? {
                requests.remove(i);
                return Ok((i, status));
            }
        }
        ep.wait_progress()?;
    }
}

/// Completes what it can without blocking (MPI_Testall): `Some(statuses)` once all are done.
pub fn test_all(requests: &mut [Request<'_>]) -> Result<Option<Vec<Status>>> {
    let mut statuses = Vec::with_capacity(requests.len());
    for r in requests.iter_mut() {
        match r.test()? {
            Some(s) => statuses.push(s),
            None => return Ok(None),
        }
    }
    Ok(Some(statuses))
}
