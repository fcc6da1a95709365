//! [`Scope`]: non-blocking sends from borrowed buffers without a copy, made sound by waiting for
//! all of them at the end of the scope (as `std::thread::scope` does for threads).

use super::nonblocking::Operation;
use super::p2p::{check_send_tag, Mode, Offer};
use super::request::About;
use super::{span_on, Buffer, BufferMut, Comm, Receives, Request, Status, UNKNOWN};
use crate::{
    AllgatherArgs, AlltoallArgs, BcastBuf, GatherArgs, ReduceArgs, ReduceOp, ReduceScatterArgs,
    Result, ScatterArgs,
};
use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::rc::Rc;

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
    /// The non-blocking collectives started in the scope: completed before it ends.
    operations: RefCell<Vec<Rc<Operation>>>,
    /// The scope's number: its receives that MPI receives straight into their buffers are
    /// settled before it ends, their requests leaked or not (see `Endpoint::close_scope`).
    id: u64,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("pending_sends", &self.pending.borrow().len())
            .field("collectives", &self.operations.borrow().len())
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
            operations: RefCell::new(Vec::new()),
            id: self.endpoint().open_scope(),
            _scope: PhantomData,
            _env: PhantomData,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        // a leaked request's direct receive: cancelled, what it had put back
        self.endpoint().close_scope(scope.id);
        let pending = scope.pending.take();
        let operations = scope.operations.take();
        match outcome {
            Ok(result) => {
                // the scope's own wait for its sends and collectives (MPI_Waitall), if it has any
                let _span = match (&pending[..], &operations[..]) {
                    ([], []) => None,
                    _ => {
                        let ep = self.endpoint();
                        span_on(ep, "scope_wait", self.id, UNKNOWN, Receives::Nothing)
                    }
                };
                // the first error ends the wait: the collectives after it are unwound, the
                // offers withdrawn as they drop
                let mut operations = operations.into_iter();
                let finished = operations.by_ref().try_for_each(|op| op.finish());
                operations.for_each(|op| op.abandon());
                finished
                    .and_then(|()| pending.into_iter().try_for_each(Offer::finish))
                    .and(result)
            }
            Err(panic) => {
                operations.iter().for_each(|op| op.abandon());
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
        self.isend_in_mode("isend", buf, (dest, tag), Mode::Standard)
    }

    /// A scoped send in `mode` (standard or synchronous), named `name` in a trace.
    pub(crate) fn isend_in_mode<B: Buffer + ?Sized>(
        &'scope self,
        name: &'static str,
        buf: &'scope B,
        (dest, tag): (usize, i32),
        mode: Mode,
    ) -> Result<Request<'scope>> {
        let comm = self.comm;
        let elems = buf.as_elems();
        let bytes = std::mem::size_of_val(elems);
        let _span = comm.span(name, Some(dest), Some(tag), bytes);
        check_send_tag(tag)?;
        let status = Status::of_send(comm.rank(), dest, tag, elems.len());
        let about = About::of(comm, dest, tag, Some(bytes));
        if mode == Mode::Synchronous {
            // to another process: packed at once, complete when the receiver's acknowledgement
            // comes back (as `Comm::issend`'s), so the scope keeps nothing for it
            if let Some(sync) = comm.send_remote_synchronous(elems, dest, tag)? {
                let to = (comm.p2p_context(), dest, tag);
                return Ok(Request::acknowledged(
                    comm.endpoint().clone(),
                    sync,
                    to,
                    status,
                ));
            }
        }
        // SAFETY: `buf` is borrowed for 'scope, and the scope finishes (or withdraws) every
        // pending rendezvous before it returns, on every path including a panic.
        let offer =
            unsafe { comm.post_send_in_mode(comm.p2p_context(), elems, (dest, tag), mode)? };
        Ok(match offer {
            None => Request::done(comm.endpoint().clone(), status, about),
            Some(offer) => {
                let (pending, to) = (offer.pending().clone(), offer.target());
                self.pending.borrow_mut().push(offer);
                Request::rendezvous(comm.endpoint().clone(), (pending, to), None, status, about)
            }
        })
    }

    /// Starts a receive into `buf` (MPI_Irecv), as [`Comm::irecv_into`], but with `buf` borrowed
    /// for the whole scope, so that the scope's own sends can be started after it. Wait for it
    /// inside the scope: dropping it unfinished cancels it.
    ///
    /// Cost on the MPI transport: once a channel (source and tag) has carried a message, a
    /// receive of it of up to 16 KiB goes to MPI as an `MPI_Irecv` straight into `buf`, filled
    /// in the background as a C program's is (the scope guarantees that `buf` outlives it, even
    /// if the request is leaked); [`Comm::irecv_into`]'s request may be leaked while its buffer
    /// is freed, so it is received by rpar, from inside `wait` or `test`.
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
        self.comm.irecv_posting(buf, source, tag, Some(self.id))
    }

    /// Starts the collective `run` on a view of the scope's communicator numbered for this call
    /// (see `comm/nonblocking.rs`): the request is complete once it has run to its end.
    pub(crate) fn start(
        &'scope self,
        run: impl FnOnce(&Comm) -> Result<()> + 'scope,
    ) -> Result<Request<'scope>> {
        let comm = self.comm;
        comm.endpoint().check_live()?;
        let call = comm.for_call(comm.reserve_call());
        self.start_operation(move || run(&call))
    }

    /// Starts `run` (a collective on views made for it: see [`Scope::start`]) as a non-blocking
    /// operation of this scope.
    pub(crate) fn start_operation(
        &'scope self,
        run: impl FnOnce() -> Result<()> + 'scope,
    ) -> Result<Request<'scope>> {
        let ep = self.comm.endpoint();
        // SAFETY: `run` borrows for 'scope at most, and the scope keeps the operation and
        // completes (or, on a panic, unwinds) it before it returns (`Comm::scope`).
        let op = unsafe { Operation::start(ep, run)? };
        self.operations.borrow_mut().push(op.clone());
        Ok(Request::of_operation(ep.clone(), op))
    }

    /// Starts a barrier (MPI_Ibarrier): the request completes once every rank has started it.
    ///
    /// # Errors
    ///
    /// [`Error::Aborted`](crate::Error::Aborted) if the run was aborted; completing it, those of
    /// [`Comm::barrier`].
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     world.scope(|s| {
    ///         let arrived = s.ibarrier()?;
    ///         // … work that needs no other rank …
    ///         arrived.wait()?;
    ///         Ok(())
    ///     })
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ibarrier(&'scope self) -> Result<Request<'scope>> {
        self.start(|comm| comm.barrier())
    }

    /// Starts a broadcast (MPI_Ibcast) of `buf` (`&mut x` or a [`Typed`](crate::Typed) view),
    /// which stays borrowed until the scope ends; read it once the request is complete.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::bcast`], when the request completes.
    ///
    /// ```
    /// let got = rpar::run(4, |world| {
    ///     let mut x = [world.rank() as u32; 2];
    ///     world.scope(|s| s.ibcast(&mut x[..], 3)?.wait().map(drop))?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(got, vec![[3, 3]; 4]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ibcast<B: BcastBuf + 'scope>(
        &'scope self,
        buf: B,
        root: usize,
    ) -> Result<Request<'scope>> {
        self.start(move |comm| comm.bcast(buf, root))
    }

    /// Starts a reduction to `root` (MPI_Ireduce), of the forms of [`Comm::reduce`] that write
    /// into the caller's buffers: `(&x, &mut y)` and [`InPlace`](crate::InPlace)`(&mut y)`.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::reduce`], when the request completes.
    ///
    /// ```
    /// use rpar::Sum;
    /// let got = rpar::run(3, |world| {
    ///     let (mine, mut sum) = ([world.rank() as u64, 1], [0u64; 2]);
    ///     world.scope(|s| s.ireduce((&mine[..], &mut sum[..]), Sum, 0)?.wait().map(drop))?;
    ///     Ok(sum)
    /// })?;
    /// assert_eq!(got[0], [3, 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ireduce<A, O>(&'scope self, args: A, op: O, root: usize) -> Result<Request<'scope>>
    where
        A: ReduceArgs<Somewhere = ()> + 'scope,
        O: ReduceOp<A::Elem> + 'scope,
    {
        self.start(move |comm| comm.reduce(args, op, root))
    }

    /// Starts an allreduce (MPI_Iallreduce), of the forms of [`Comm::allreduce`] that write into
    /// the caller's buffers: `(&x, &mut y)` and [`InPlace`](crate::InPlace)`(&mut y)`.
    ///
    /// In-process the default algorithm posts this rank's contribution at once: the others can
    /// complete while this rank computes, and its own result is combined at its next `test` or
    /// `wait` (the overlap `cargo run --release --example osu` measures).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::allreduce`], when the request completes.
    ///
    /// ```
    /// use rpar::{InPlace, Sum};
    /// let got = rpar::run(4, |world| {
    ///     let mut total = [world.rank() as u64];
    ///     world.scope(|s| {
    ///         let mut req = s.iallreduce(InPlace(&mut total[..]), Sum)?;
    ///         let mut work = 0u64;
    ///         while req.test()?.is_none() {
    ///             work += 1; // computing while the others combine
    ///         }
    ///         Ok(work)
    ///     })?;
    ///     Ok(total[0])
    /// })?;
    /// assert_eq!(got, vec![6; 4]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn iallreduce<A, O>(&'scope self, args: A, op: O) -> Result<Request<'scope>>
    where
        A: ReduceArgs<Everywhere = ()> + 'scope,
        O: ReduceOp<A::Elem> + 'scope,
    {
        self.start(move |comm| comm.allreduce(args, op))
    }

    /// Starts an inclusive prefix reduction (MPI_Iscan), forms as [`Scope::iallreduce`]'s.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::scan`], when the request completes.
    ///
    /// ```
    /// use rpar::Sum;
    /// let got = rpar::run(3, |world| {
    ///     let (mine, mut prefix) = (world.rank() as u8 + 1, 0u8);
    ///     world.scope(|s| s.iscan((&mine, &mut prefix), Sum)?.wait().map(drop))?;
    ///     Ok(prefix)
    /// })?;
    /// assert_eq!(got, [1, 3, 6]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn iscan<A, O>(&'scope self, args: A, op: O) -> Result<Request<'scope>>
    where
        A: ReduceArgs<Everywhere = ()> + 'scope,
        O: ReduceOp<A::Elem> + 'scope,
    {
        self.start(move |comm| comm.scan(args, op))
    }

    /// Starts an exclusive prefix reduction (MPI_Iexscan), forms as [`Scope::iallreduce`]'s
    /// (rank 0's receive buffer is left untouched).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::exscan`], when the request completes.
    ///
    /// ```
    /// use rpar::Sum;
    /// let got = rpar::run(3, |world| {
    ///     let (mine, mut before) = (world.rank() as u8 + 1, 0u8);
    ///     world.scope(|s| s.iexscan((&mine, &mut before), Sum)?.wait().map(drop))?;
    ///     Ok(before)
    /// })?;
    /// assert_eq!(got, [0, 1, 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn iexscan<A, O>(&'scope self, args: A, op: O) -> Result<Request<'scope>>
    where
        A: ReduceArgs<Somewhere = ()> + 'scope,
        O: ReduceOp<A::Elem> + 'scope,
    {
        self.start(move |comm| comm.exscan(args, op))
    }

    /// Starts a reduce-scatter (MPI_Ireduce_scatter_block, MPI_Ireduce_scatter), of the in-place
    /// forms of [`Comm::reduce_scatter`].
    ///
    /// # Errors
    ///
    /// Those of [`Comm::reduce_scatter`], when the request completes.
    ///
    /// ```
    /// use rpar::{InPlace, Sum};
    /// let got = rpar::run(2, |world| {
    ///     let mut v = [1u32, 2, 3, 4];
    ///     world.scope(|s| s.ireduce_scatter(InPlace(&mut v[..]), Sum)?.wait().map(drop))?;
    ///     Ok([v[0], v[1]])
    /// })?;
    /// assert_eq!(got, [[2, 4], [6, 8]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ireduce_scatter<A, O>(&'scope self, args: A, op: O) -> Result<Request<'scope>>
    where
        A: ReduceScatterArgs<Output = ()> + 'scope,
        O: ReduceOp<A::Elem> + 'scope,
    {
        self.start(move |comm| comm.reduce_scatter(args, op))
    }

    /// Starts a gather (MPI_Igather, MPI_Igatherv), of the forms of [`Comm::gather`] that write
    /// into the caller's buffers (`(&x, &mut all)`, `InPlace`, the `Varying` and `Typed` ones).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::gather`], when the request completes.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let (mine, mut all) = (world.rank() as u8, [0u8; 3]);
    ///     world.scope(|s| s.igather((&mine, &mut all[..]), 1)?.wait().map(drop))?;
    ///     Ok(all)
    /// })?;
    /// assert_eq!(got[1], [0, 1, 2]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn igather<A>(&'scope self, args: A, root: usize) -> Result<Request<'scope>>
    where
        A: GatherArgs<Output = ()> + 'scope,
    {
        self.start(move |comm| comm.gather(args, root))
    }

    /// Starts a scatter (MPI_Iscatter, MPI_Iscatterv), of the forms of [`Comm::scatter`] that
    /// write into the caller's buffers.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::scatter`], when the request completes.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let (all, mut mine) = ([10u8, 11, 12], [0u8; 1]);
    ///     world.scope(|s| s.iscatter((&all[..], &mut mine[..]), 0)?.wait().map(drop))?;
    ///     Ok(mine[0])
    /// })?;
    /// assert_eq!(got, [10, 11, 12]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn iscatter<A>(&'scope self, args: A, root: usize) -> Result<Request<'scope>>
    where
        A: ScatterArgs<Output = ()> + 'scope,
    {
        self.start(move |comm| comm.scatter(args, root))
    }

    /// Starts an allgather (MPI_Iallgather, MPI_Iallgatherv), of the forms of
    /// [`Comm::allgather`] that write into the caller's buffers.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::allgather`], when the request completes.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let (mine, mut all) = (world.rank() as u8, [0u8; 3]);
    ///     world.scope(|s| s.iallgather((&mine, &mut all[..]))?.wait().map(drop))?;
    ///     Ok(all)
    /// })?;
    /// assert_eq!(got, vec![[0, 1, 2]; 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn iallgather<A>(&'scope self, args: A) -> Result<Request<'scope>>
    where
        A: AllgatherArgs<Output = ()> + 'scope,
    {
        self.start(move |comm| comm.allgather(args))
    }

    /// Starts an all-to-all (MPI_Ialltoall, MPI_Ialltoallv, and with per-rank derived datatypes
    /// MPI_Ialltoallw's typed `v`-form), of the forms of [`Comm::alltoall`] that write into the
    /// caller's buffers.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::alltoall`], when the request completes.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let (send, mut recv) = ([world.rank() as u8; 3], [0u8; 3]);
    ///     world.scope(|s| s.ialltoall((&send[..], &mut recv[..]))?.wait().map(drop))?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got, vec![[0, 1, 2]; 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ialltoall<A>(&'scope self, args: A) -> Result<Request<'scope>>
    where
        A: AlltoallArgs<Output = ()> + 'scope,
    {
        self.start(move |comm| comm.alltoall(args))
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
