//! [`InterScope`]: the non-blocking collectives of an intercommunicator (MPI_Ibarrier,
//! MPI_Ibcast, … on an intercommunicator), started in [`InterComm::scope`] as
//! [`Comm::scope`](crate::Comm::scope) starts a plain communicator's.
//!
//! Each runs the blocking collective's own code (`collective.rs`) on a coroutine (see
//! `comm/nonblocking.rs`), on views of the intercommunicator numbered for that one call: the
//! view across takes the next call number of the traffic across, and the local view the next
//! two of the local group's (its collectives inside one call across are at most two: a reduce
//! and a broadcast or scatter, or two barriers). Every rank of a group reserves alike, whatever
//! its part in the call, so the numbers agree within each group; a number left unused is never
//! sent by anyone.

use super::InterComm;
use super::{InterAllgatherArgs, InterAlltoallArgs, InterGatherArgs};
use super::{InterReduceArgs, InterReduceScatterArgs, InterScatterArgs};
use crate::comm::{BufferMut, Request, Scope};
use crate::{ReduceOp, Result};

/// The local collectives one collective across may run in the local group: the call numbers
/// each non-blocking collective reserves on the local communicator (`InterScope::idup`
/// reserves its own number).
const LOCAL_CALLS: u32 = 2;

/// A scope for non-blocking collectives on an intercommunicator; see [`InterComm::scope`].
/// The buffers a collective started in it takes stay borrowed until the scope ends, and the
/// scope does not end before every collective started in it is complete (the requests need not
/// be waited for).
pub struct InterScope<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    inter: &'env InterComm,
}

impl std::fmt::Debug for InterScope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterScope")
            .field("inter", self.inter)
            .field("scope", self.scope)
            .finish()
    }
}

impl InterComm {
    /// Runs `f` with an [`InterScope`], in which the collectives of this intercommunicator
    /// start without waiting (MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce,
    /// MPI_Ireduce_scatter(_block), MPI_Igather(v), MPI_Iscatter(v), MPI_Iallgather(v),
    /// MPI_Ialltoall(v) on an intercommunicator). Each returns a [`Request`], waited for or
    /// tested alone or with others (`wait_all`, …); every collective started in the scope is
    /// complete when `scope` returns. Each takes the forms of its blocking call that write
    /// into the caller's buffers.
    ///
    /// # Errors
    ///
    /// The error `f` returned, or the first error of a collective the scope completes.
    ///
    /// ```
    /// use rpar::{Sum, ROOT};
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let (mine, mut sum) = ([world.rank() as u32], [0u32]);
    ///     let mut x = [world.rank() as u8; 2];
    ///     let root = if low { ROOT } else { 0 };
    ///     inter.scope(|s| {
    ///         let reduced = s.iallreduce((&mine[..], &mut sum[..]), Sum)?;
    ///         let sent = s.ibcast(&mut x[..], root)?; // world rank 0 to the others
    ///         rpar::wait_all(vec![reduced, sent])?;
    ///         Ok(())
    ///     })?;
    ///     Ok((sum[0], x))
    /// })?;
    /// assert_eq!(got, [(3, [0, 0]), (0, [0, 0]), (0, [0, 0])]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn scope<'env, F, R>(&'env self, f: F) -> Result<R>
    where
        F: for<'a, 'scope> FnOnce(&'a InterScope<'scope, 'env>) -> Result<R>,
    {
        self.remote
            .scope(|scope| f(&InterScope { scope, inter: self }))
    }
}

impl<'scope> InterScope<'scope, '_> {
    /// Starts `run` on views of the intercommunicator numbered for this call.
    fn start(
        &self,
        run: impl FnOnce(&InterComm) -> Result<()> + 'scope,
    ) -> Result<Request<'scope>> {
        self.start_with(LOCAL_CALLS, run)
    }

    /// [`InterScope::start`] for a call that runs up to `local_calls` local collectives.
    pub(super) fn start_with(
        &self,
        local_calls: u32,
        run: impl FnOnce(&InterComm) -> Result<()> + 'scope,
    ) -> Result<Request<'scope>> {
        let inter = self.inter;
        inter.local.endpoint().check_live()?;
        let across = inter.remote.reserve_call();
        let local = inter.local.reserve_call();
        for _ in 1..local_calls {
            inter.local.reserve_call();
        }
        let view = InterComm {
            local: inter.local.for_call(local),
            remote: inter.remote.for_call(across),
        };
        self.scope.start_operation(move || run(&view))
    }

    /// Starts a barrier across both groups (MPI_Ibarrier on an intercommunicator): complete
    /// once every rank of both groups has started it.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::barrier`], when the request completes.
    pub fn ibarrier(&self) -> Result<Request<'scope>> {
        self.start(|inter| inter.barrier())
    }

    /// Starts a broadcast to the other group (MPI_Ibcast on an intercommunicator); `root` as
    /// in [`InterComm::bcast`].
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::bcast`], when the request completes.
    pub fn ibcast<B: BufferMut + ?Sized>(
        &self,
        buf: &'scope mut B,
        root: usize,
    ) -> Result<Request<'scope>> {
        self.start(move |inter| inter.bcast(buf, root))
    }

    /// Starts a reduction of the other group's data to the root (MPI_Ireduce on an
    /// intercommunicator), of the form `(&x, &mut y)`.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::reduce`], when the request completes.
    pub fn ireduce<A, O>(&self, args: A, op: O, root: usize) -> Result<Request<'scope>>
    where
        A: InterReduceArgs<Somewhere = ()> + 'scope,
        O: ReduceOp<A::Elem> + 'scope,
    {
        self.start(move |inter| inter.reduce(args, op, root))
    }

    /// Starts an allreduce across (MPI_Iallreduce on an intercommunicator), of the form
    /// `(&x, &mut y)`: each group gets the other's reduction.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::allreduce`], when the request completes.
    pub fn iallreduce<A, O>(&self, args: A, op: O) -> Result<Request<'scope>>
    where
        A: InterReduceArgs<Everywhere = ()> + 'scope,
        O: ReduceOp<A::Elem> + 'scope,
    {
        self.start(move |inter| inter.allreduce(args, op))
    }

    /// Starts a reduce-scatter across (MPI_Ireduce_scatter_block, MPI_Ireduce_scatter on an
    /// intercommunicator), of the forms `(&x, &mut mine)` and `(&x, Counts(&c), &mut mine)`.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::reduce_scatter`], when the request completes.
    pub fn ireduce_scatter<A, O>(&self, args: A, op: O) -> Result<Request<'scope>>
    where
        A: InterReduceScatterArgs<Output = ()> + 'scope,
        O: ReduceOp<A::Elem> + 'scope,
    {
        self.start(move |inter| inter.reduce_scatter(args, op))
    }

    /// Starts a gather to the root (MPI_Igather, MPI_Igatherv on an intercommunicator), of the
    /// forms `(&x, &mut all)` and `(&x, Varying::new(&mut all, &c, &d))`.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::gather`], when the request completes.
    pub fn igather<A>(&self, args: A, root: usize) -> Result<Request<'scope>>
    where
        A: InterGatherArgs<Output = ()> + 'scope,
    {
        self.start(move |inter| inter.gather(args, root))
    }

    /// Starts a scatter from the root (MPI_Iscatter, MPI_Iscatterv on an intercommunicator),
    /// of the forms `(&all, &mut mine)` and `(Varying::new(&all, &c, &d), &mut mine)`.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::scatter`], when the request completes.
    pub fn iscatter<A>(&self, args: A, root: usize) -> Result<Request<'scope>>
    where
        A: InterScatterArgs<Output = ()> + 'scope,
    {
        self.start(move |inter| inter.scatter(args, root))
    }

    /// Starts an allgather across (MPI_Iallgather, MPI_Iallgatherv on an intercommunicator),
    /// of the forms `(&x, &mut all)` and `(&x, Varying::new(&mut all, &c, &d))`.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::allgather`], when the request completes.
    pub fn iallgather<A>(&self, args: A) -> Result<Request<'scope>>
    where
        A: InterAllgatherArgs<Output = ()> + 'scope,
    {
        self.start(move |inter| inter.allgather(args))
    }

    /// Starts an all-to-all across (MPI_Ialltoall, MPI_Ialltoallv, MPI_Ialltoallw on an
    /// intercommunicator), of the forms `(&x, &mut y)`,
    /// `(Varying::new(&x, …), Varying::new(&mut y, …))` and
    /// `(Typed::per_rank(&x, …), Typed::per_rank(&mut y, …))`.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::alltoall`], when the request completes.
    pub fn ialltoall<A>(&self, args: A) -> Result<Request<'scope>>
    where
        A: InterAlltoallArgs<Output = ()> + 'scope,
    {
        self.start(move |inter| inter.alltoall(args))
    }

    /// The intercommunicator of the scope.
    pub fn inter(&self) -> &InterComm {
        self.inter
    }
}
