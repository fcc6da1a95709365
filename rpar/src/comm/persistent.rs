//! Persistent requests (MPI_Send_init, MPI_Recv_init, MPI_Start, MPI_Startall; the other
//! modes' `_init` through [`Comm::using`](super::Comm::using) a [`SendMode`]): a send or receive whose arguments
//! are bound once and which is started many times.
//!
//! A [`Persistent`] holds its buffer mutably borrowed for its whole life, and each
//! [`Persistent::start`] returns a [`Request`] that borrows the persistent request, so it
//! cannot be started again (or its buffer touched) while that request is active — what MPI
//! calls erroneous is a compile error here. Between two starts the buffer is reached through
//! [`Persistent::buffer_mut`], as an MPI program writes its buffer between MPI_Wait and
//! MPI_Start.

use super::{BufferMut, Comm, Request, SendMode};
use crate::datatype::Datatype;
use crate::Result;

/// A persistent request: a send or receive bound to its buffer, peer and tag, started with
/// [`Persistent::start`] (MPI_Start) or [`start_all`] (MPI_Startall), as often as needed.
///
/// ```
/// let got = rpar::run(2, |world| {
///     let other = 1 - world.rank();
///     let mut out = [0u64; 4];
///     let mut inc = [0u64; 4];
///     let mut send = rpar::Persistent::send(&world, &mut out[..], other, 0)?;
///     let mut recv = rpar::Persistent::recv(&world, &mut inc[..], other, 0)?;
///     let mut sums = Vec::new();
///     for step in 0..3u64 {
///         send.buffer_mut().fill(step * 10 + world.rank() as u64); // between starts
///         let requests = rpar::start_all([&mut send, &mut recv])?;
///         rpar::wait_all(requests)?;
///         sums.push(recv.buffer().iter().sum::<u64>());
///     }
///     Ok(sums)
/// })?;
/// assert_eq!(got[0], [4, 44, 84]); // rank 1's 1, 11, 21, four times
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct Persistent<'a, T: Datatype> {
    comm: &'a Comm,
    buf: &'a mut [T],
    /// The send's mode, `None` for a receive.
    mode: Option<SendMode>,
    peer: usize,
    tag: i32,
}

impl<'a, T: Datatype> Persistent<'a, T> {
    /// A persistent standard-mode send of `buf` to `dest` on `comm` (MPI_Send_init); see
    /// [`Persistent`]. Arguments are checked here, as MPI checks them at init.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`](crate::Error::RankOutOfRange) for a `dest` that is neither
    /// a rank nor [`PROC_NULL`](crate::PROC_NULL), [`Error::InvalidTag`](crate::Error::InvalidTag)
    /// for a negative tag.
    pub fn send<B: BufferMut<Elem = T> + ?Sized>(
        comm: &'a Comm,
        buf: &'a mut B,
        dest: usize,
        tag: i32,
    ) -> Result<Self> {
        Persistent::new(
            comm,
            buf.as_elems_mut(),
            Some(SendMode::Standard),
            dest,
            tag,
        )
    }

    /// A persistent receive on `comm` into `buf` from `source` (or [`ANY_SOURCE`](crate::ANY_SOURCE))
    /// with `tag` (or [`ANY_TAG`](crate::ANY_TAG)) (MPI_Recv_init); see [`Persistent`].
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`](crate::Error::RankOutOfRange) and
    /// [`Error::InvalidTag`](crate::Error::InvalidTag) as for [`Comm::recv`].
    pub fn recv<B: BufferMut<Elem = T> + ?Sized>(
        comm: &'a Comm,
        buf: &'a mut B,
        source: usize,
        tag: i32,
    ) -> Result<Self> {
        Persistent::new(comm, buf.as_elems_mut(), None, source, tag)
    }

    /// A persistent send in `mode` (`Some`) or receive (`None`), its arguments checked now, as
    /// MPI checks them at init.
    pub(crate) fn new(
        comm: &'a Comm,
        buf: &'a mut [T],
        mode: Option<SendMode>,
        peer: usize,
        tag: i32,
    ) -> Result<Self> {
        if mode.is_none() {
            comm.pattern(comm.p2p_context(), peer, tag)?;
        } else {
            super::p2p::check_send_tag(tag)?;
            if peer != crate::PROC_NULL {
                comm.check_rank(peer)?;
            }
        }
        Ok(Persistent {
            comm,
            buf,
            mode,
            peer,
            tag,
        })
    }
}

impl<T: Datatype> Persistent<'_, T> {
    /// Starts the operation (MPI_Start). The request borrows this persistent request until it
    /// is completed and dropped; then it may be started again.
    ///
    /// # Errors
    ///
    /// Those of the non-blocking call it starts ([`ModeSends::isend`](super::ModeSends::isend)
    /// or [`Comm::irecv_into`]).
    pub fn start(&mut self) -> Result<Request<'_>> {
        let (comm, peer, tag) = (self.comm, self.peer, self.tag);
        match self.mode {
            Some(mode) => comm.using(mode).isend(&*self.buf, peer, tag),
            None => comm.irecv_into(&mut *self.buf, peer, tag),
        }
    }

    /// The buffer, to read what the last receive brought.
    pub fn buffer(&self) -> &[T] {
        self.buf
    }

    /// The buffer, to write what the next send takes.
    pub fn buffer_mut(&mut self) -> &mut [T] {
        self.buf
    }

    /// The mode of a persistent send; `None` for a receive.
    pub fn mode(&self) -> Option<SendMode> {
        self.mode
    }
}

/// Starts every persistent request of `list` (e.g. `[&mut a, &mut b]`), in order
/// (MPI_Startall); the requests in the
/// same order, for [`wait_all`](crate::wait_all) and the others.
///
/// # Errors
///
/// The first error of a start; the requests started before it are dropped (a receive among
/// them is cancelled).
pub fn start_all<'p, 'a: 'p, T: Datatype + 'a>(
    list: impl IntoIterator<Item = &'p mut Persistent<'a, T>>,
) -> Result<Vec<Request<'p>>> {
    list.into_iter().map(|p| p.start()).collect()
}
