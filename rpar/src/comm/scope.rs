//! [`Scope`]: non-blocking sends from borrowed buffers without a copy, made sound by waiting for
//! all of them at the end of the scope (as `std::thread::scope` does for threads).

use super::p2p::{check_send_tag, Offer};
use super::request::About;
use super::{span_on, Buffer, BufferMut, Comm, Receives, Request, Status, UNKNOWN};
use crate::Result;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// A scope for zero-copy non-blocking operations; see [`Comm::scope`]. What MPI asks of the
/// programmer — not to touch the buffer of an `MPI_Isend` before its `MPI_Wait` — the borrow
/// checker enforces here: the buffers stay borrowed until the scope ends, and the scope does not
/// end before every send started in it is complete.
///
/// ```
/// let got = rpar::run(4, |world| {
///     let (r, p) = (world.rank(), world.size());
///     let blocks: Vec<Vec<u64>> = (0..p).map(|d| vec![(10 * r + d) as u64; 8192]).collect();
///     let mut sum = 0;
///     world.scope(|s| {
///         for d in (0..p).filter(|&d| d != r) {
///             s.isend(&blocks[d][..], d, 0)?; // 64 KiB each, not copied by the sender
///         }
///         for _ in 1..p {
///             sum += world.recv::<u64>(rpar::ANY_SOURCE, 0)?.0[0];
///         }
///         Ok(())
///     })?; // every send is complete here: `blocks` may be dropped or changed
///     Ok(sum)
/// })?;
/// assert_eq!(got, [60, 53, 46, 39]); // rank d gets 10 r + d from every other rank r
/// # Ok::<(), rpar::Error>(())
/// ```
pub struct Scope<'scope, 'env: 'scope> {
    comm: &'env Comm,
    pending: RefCell<Vec<Offer<'env>>>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("pending_sends", &self.pending.borrow().len())
            .finish()
    }
}

impl Comm {
    /// Runs `f` with a [`Scope`] in which `isend` does not copy its buffer: large messages are
    /// copied once, straight from it into the receiver's buffer. All sends started in the scope
    /// are complete when `scope` returns, so the borrowed buffers are free again. The MPI
    /// equivalent is MPI_Isend … MPI_Waitall, with the wait made impossible to forget.
    ///
    /// # Errors
    ///
    /// [`Error::PeerFinished`](crate::Error::PeerFinished) if the receiver of a large
    /// send started in the scope finished without receiving it, or
    /// [`Error::Aborted`](crate::Error::Aborted) if another rank failed while the scope waited
    /// for its sends; else the error `f` returned (the scope waits for its sends either way).
    /// A panic in `f` withdraws the pending sends and is resumed.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let other = 1 - world.rank();
    ///     let out = vec![world.rank() as f64; 1 << 16];
    ///     let mut inc = vec![0.0f64; 1 << 16];
    ///     world.scope(|s| {
    ///         let r = s.irecv_into(&mut inc[..], other, 0)?;
    ///         s.isend(&out[..], other, 0)?;
    ///         r.wait()?;
    ///         Ok(())
    ///     })?;
    ///     assert!(inc.iter().all(|&x| x == other as f64));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn scope<'env, F, R>(&'env self, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        let scope = Scope {
            comm: self,
            pending: RefCell::new(Vec::new()),
            _scope: PhantomData,
            _env: PhantomData,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        let pending = scope.pending.take();
        match outcome {
            Ok(result) => {
                // the scope's own wait for its sends (MPI_Waitall), if it has any
                let _span = match &pending[..] {
                    [] => None,
                    _ => {
                        let ep = self.endpoint();
                        span_on(ep, "scope_wait", self.id, UNKNOWN, Receives::Nothing)
                    }
                };
                // the first error ends the wait: the offers after it are withdrawn as they drop
                pending.into_iter().try_for_each(Offer::finish).and(result)
            }
            Err(panic) => {
                pending.into_iter().for_each(Offer::abandon);
                resume_unwind(panic)
            }
        }
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Starts a send of `buf`, which stays borrowed until the scope ends (MPI_Isend). The request
    /// need not be waited for: the scope waits for every send at its end.
    ///
    /// Cost: up to 32 KiB, `buf` is copied now and the request is complete at once; above, it
    /// is copied once, by the receiver, straight into its own buffer (in-process; on the MPI
    /// transport MPI sends it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTag`](crate::Error::InvalidTag) for a negative tag,
    /// [`Error::RankOutOfRange`](crate::Error::RankOutOfRange) for a `dest` that is not a rank,
    /// [`Error::Aborted`](crate::Error::Aborted) if the run was aborted; waiting for it, those of
    /// [`Request::wait`].
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let big = vec![world.rank() as u8; 1 << 20];
    ///     let mut inc = vec![0u8; 1 << 20];
    ///     world.scope(|s| {
    ///         let sent = s.isend(&big[..], 1 - world.rank(), 0)?;
    ///         world.recv_into(&mut inc[..], 1 - world.rank(), 0)?;
    ///         assert_eq!(sent.wait()?.count, 1 << 20);
    ///         Ok(())
    ///     })?;
    ///     assert!(inc.iter().all(|&b| b == 1 - world.rank() as u8));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn isend<B: Buffer + ?Sized>(
        &'scope self,
        buf: &'scope B,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'scope>> {
        let comm = self.comm;
        let elems = buf.as_elems();
        let bytes = std::mem::size_of_val(elems);
        let _span = comm.span("isend", Some(dest), Some(tag), bytes);
        check_send_tag(tag)?;
        let status = Status {
            source: comm.rank(),
            tag,
            count: elems.len(),
        };
        let about = About::of(comm, dest, tag, Some(bytes));
        // SAFETY: `buf` is borrowed for 'scope, and the scope finishes (or withdraws) every
        // pending rendezvous before it returns, on every path including a panic.
        let offer = unsafe { comm.post_send(comm.p2p_context(), elems, dest, tag)? };
        Ok(match offer {
            None => Request::done(comm.endpoint().clone(), status, about),
            Some(offer) => {
                let (pending, to) = (offer.pending().clone(), offer.target());
                self.pending.borrow_mut().push(offer);
                Request::rendezvous(comm.endpoint().clone(), pending, to, status, about)
            }
        })
    }

    /// Starts a receive into `buf` (MPI_Irecv), as [`Comm::irecv_into`], but with `buf` borrowed
    /// for the whole scope, so that the scope's own sends can be started after it. Wait for it
    /// inside the scope: dropping it unfinished cancels it.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::irecv_into`].
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let (r, p) = (world.rank(), world.size());
    ///     let out = [r as f64; 4];
    ///     let mut from_left = [0.0f64; 4];
    ///     let status = world.scope(|s| {
    ///         let recv = s.irecv_into(&mut from_left[..], rpar::ANY_SOURCE, 0)?;
    ///         s.isend(&out[..], (r + 1) % p, 0)?;
    ///         recv.wait()
    ///     })?;
    ///     Ok((status.source, from_left[3]))
    /// })?;
    /// assert_eq!(got, [(2, 2.0), (0, 0.0), (1, 1.0)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn irecv_into<B: BufferMut + ?Sized>(
        &'scope self,
        buf: &'scope mut B,
        source: usize,
        tag: i32,
    ) -> Result<Request<'scope>> {
        self.comm.irecv_into(buf, source, tag)
    }

    /// The communicator of the scope, for code that is handed only the scope.
    ///
    /// ```
    /// use rpar::Scope;
    /// /// Starts sending `halo` to both neighbours on a ring.
    /// fn send_halo<'s>(s: &'s Scope<'s, '_>, halo: &'s [f64]) -> rpar::Result<()> {
    ///     let (r, p) = (s.comm().rank(), s.comm().size());
    ///     s.isend(halo, (r + 1) % p, 0)?;
    ///     s.isend(halo, (r + p - 1) % p, 1)?;
    ///     Ok(())
    /// }
    /// let got = rpar::run(3, |world| {
    ///     let (r, p) = (world.rank(), world.size());
    ///     let halo = vec![r as f64; 16];
    ///     world.scope(|s| send_halo(s, &halo))?;
    ///     let (left, _) = world.recv::<f64>((r + p - 1) % p, 0)?;
    ///     let (right, _) = world.recv::<f64>((r + 1) % p, 1)?;
    ///     Ok((left[0], right[0]))
    /// })?;
    /// assert_eq!(got, [(2.0, 1.0), (0.0, 2.0), (1.0, 0.0)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn comm(&self) -> &Comm {
        self.comm
    }
}
