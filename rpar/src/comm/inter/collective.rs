//! The collectives of an intercommunicator (MPI-4 §6.2.2): data moves from one group to the
//! other. Rooted ones ([`InterComm::bcast`], [`InterComm::reduce`], [`InterComm::gather`],
//! [`InterComm::scatter`]) name the root as MPI does: the root passes [`ROOT`], the other ranks
//! of its group [`PROC_NULL`] (they take no part in the data), and every rank of the other
//! group the root's rank in the root's group. The others ([`InterComm::barrier`],
//! [`InterComm::allreduce`], [`InterComm::allgather`], [`InterComm::alltoall`],
//! [`InterComm::reduce_scatter`]) give each group what the other group contributed.
//!
//! How: reductions and `bcast` are local collectives of each group and an exchange between
//! the groups' rank 0 (their leaders), as MPICH builds them; gather, scatter, allgather and
//! alltoall send each block straight from the rank that has it to the rank that wants it, on
//! the view across's collective context, so every `v`-form is as cheap as the plain one and no
//! leader holds a group's data. Every rank of both groups counts each call alike (the calls
//! across carry that count and are checked against each other, as on a [`Comm`]); the local
//! collectives inside one are calls of their own on the local communicator.
//!
//! The forms follow [`Comm`]'s: the argument types say them (`&x`, `(&x, Counts(&c))`,
//! `(&x, Varying::new(&mut all, &c, &d))`, …), with counts and displacements per rank of the
//! *remote* group. MPI has no `MPI_IN_PLACE` on an intercommunicator, and neither has this.

use super::{tags, InterComm, ROOT};
use crate::collective::layout::{
    block_len, check_blocks_fit, check_count, check_len, check_per_rank, check_recv_blocks,
    offsets_of_counts,
};
use crate::collective::{zeroed_vec, Counts, PerRank, ReduceOp, Varying};
use crate::comm::{Buffer, BufferMut, Call, Comm, PROC_NULL};
use crate::datatype::Datatype;
use crate::{Error, Result};
use std::borrow::Cow;

mod sealed {
    /// Only the forms of this module take part.
    pub trait Sealed {}
    impl<B: ?Sized> Sealed for &B {}
    impl<A, B> Sealed for (A, B) {}
    impl<A, B, C> Sealed for (A, B, C) {}
    impl<B> Sealed for crate::collective::Varying<'_, B> {}
}

/// How the blocks from the remote group's ranks are received: the receive side of
/// [`InterComm::gather`] (at the root), [`InterComm::allgather`] and [`InterComm::alltoall`].
pub(super) enum Receive<'a, T> {
    /// A new `Vec` of equal blocks, one after another, their length what the senders send
    /// (which must be alike).
    Equal,
    /// A new `Vec` of blocks of `counts[i]` elements, one after another.
    Counts(&'a [usize]),
    /// Into `buf`, cut in equal blocks, one per remote rank.
    IntoEqual(&'a mut [T]),
    /// Into `buf`: block `i` of `counts[i]` elements at element `displs[i]`.
    Into {
        buf: &'a mut [T],
        counts: &'a [usize],
        displs: Cow<'a, [usize]>,
    },
}

impl<'a, T> Receive<'a, T> {
    /// The receive side of a `Varying` form.
    fn into_blocks(v: Varying<'a, &'a mut [T]>) -> Result<Self> {
        let displs = v.displs()?;
        Ok(Receive::Into {
            buf: v.buf,
            counts: v.counts,
            displs,
        })
    }
}

/// How a rank's data is cut into blocks for the remote group's ranks: the send side of
/// [`InterComm::scatter`] (at the root) and [`InterComm::alltoall`].
enum Cut<'a, T> {
    /// Equal blocks, one per remote rank, one after another.
    Equal(&'a [T]),
    /// Block `i` of `counts[i]` elements at element `displs[i]`.
    Blocks {
        buf: &'a [T],
        counts: &'a [usize],
        displs: Cow<'a, [usize]>,
    },
}

impl<'a, T> Cut<'a, T> {
    /// The send side of a `Varying` form.
    fn of_varying(v: Varying<'a, &'a [T]>) -> Result<Self> {
        let displs = v.displs()?;
        Ok(Cut::Blocks {
            buf: v.buf,
            counts: v.counts,
            displs,
        })
    }

    /// The `p` blocks, after checking that they are one per rank and fit.
    fn blocks(&self, p: usize, call: &'static str) -> Result<Vec<&'a [T]>> {
        match *self {
            Cut::Equal(all) => {
                let n = block_len(all.len(), p, "send", call)?;
                Ok((0..p).map(|j| &all[j * n..(j + 1) * n]).collect())
            }
            Cut::Blocks {
                buf,
                counts,
                ref displs,
            } => {
                check_per_rank(counts.len(), p, "the send counts", call)?;
                check_per_rank(displs.len(), p, "the send displacements", call)?;
                check_blocks_fit(counts, displs, buf.len(), "send", call)?;
                Ok((0..p)
                    .map(|j| &buf[displs[j]..displs[j] + counts[j]])
                    .collect())
            }
        }
    }
}

/// What [`InterComm::gather`] takes: `&x` (equal blocks: the root gets a new `Vec`),
/// `(&x, &mut all)` (equal blocks into the root's buffer), `(&x, Counts(&counts))` (the root
/// gets a new `Vec` of `counts[i]` from remote rank `i`) and
/// `(&x, Varying::new(&mut all, &counts, &displs))` (into the root's buffer). Sealed.
pub trait InterGatherArgs: sealed::Sealed {
    /// What the call returns: `Some` new `Vec` at the root, or nothing.
    type Output;
    #[doc(hidden)]
    fn gather(self, inter: &InterComm, root: usize) -> Result<Self::Output>;
}

/// What [`InterComm::scatter`] takes: `&all` (equal blocks: each receiver gets a new `Vec`),
/// `Varying::new(&all, &counts, &displs)` (block `i` to remote rank `i`: a new `Vec`), and
/// either of them paired with `&mut mine` (received into). Sealed.
pub trait InterScatterArgs: sealed::Sealed {
    /// What the call returns: a new `Vec` (empty in the root's group), or nothing.
    type Output;
    #[doc(hidden)]
    fn scatter(self, inter: &InterComm, root: usize) -> Result<Self::Output>;
}

/// What [`InterComm::allgather`] takes: `&x` (equal blocks: a new `Vec`), `(&x, &mut all)`,
/// `(&x, Counts(&counts))` and `(&x, Varying::new(&mut all, &counts, &displs))`. Sealed.
pub trait InterAllgatherArgs: sealed::Sealed {
    /// What the call returns: a new `Vec`, or nothing.
    type Output;
    #[doc(hidden)]
    fn allgather(self, inter: &InterComm) -> Result<Self::Output>;
}

/// What [`InterComm::alltoall`] takes: `&x` (one equal block per remote rank: a new `Vec`),
/// `(&x, &mut y)`, `(Varying::new(&x, &counts, &displs), Counts(&recv_counts))` and
/// `(Varying::new(&x, …), Varying::new(&mut y, …))`, and with a derived datatype, count and
/// byte displacement per remote rank on each side (MPI_Alltoallw)
/// `(Typed::per_rank(&x, &types, &counts, &displs), Typed::per_rank(&mut y, …))`. Sealed.
pub trait InterAlltoallArgs: sealed::Sealed {
    /// What the call returns: a new `Vec`, or nothing.
    type Output;
    #[doc(hidden)]
    fn alltoall(self, inter: &InterComm) -> Result<Self::Output>;
}

/// What [`InterComm::reduce`] and [`InterComm::allreduce`] take: `&x` (a value, a slice or a
/// `Vec`: the result is new, of its shape) or `(&x, &mut y)` (into `y`, as long as `x`). Sealed.
pub trait InterReduceArgs: sealed::Sealed {
    /// The element type.
    type Elem: Datatype;
    /// What `allreduce` returns: a new value or `Vec`, or nothing.
    type Everywhere;
    /// What `reduce` returns: the same, in an `Option` (`Some` at the root) where it is new.
    type Somewhere;
    #[doc(hidden)]
    fn allreduce<O: ReduceOp<Self::Elem>>(
        self,
        inter: &InterComm,
        op: O,
    ) -> Result<Self::Everywhere>;
    #[doc(hidden)]
    fn reduce<O: ReduceOp<Self::Elem>>(
        self,
        inter: &InterComm,
        op: O,
        root: usize,
    ) -> Result<Self::Somewhere>;
}

/// What [`InterComm::reduce_scatter`] takes: `&x` (equal blocks: a new `Vec` of this rank's),
/// `(&x, Counts(&counts))` (block `i` of `counts[i]`, per rank of this group), and either with
/// a receive buffer: `(&x, &mut mine)`, `(&x, Counts(&counts), &mut mine)`. Sealed.
pub trait InterReduceScatterArgs: sealed::Sealed {
    /// The element type.
    type Elem: Datatype;
    /// What the call returns: a new `Vec`, or nothing.
    type Output;
    #[doc(hidden)]
    fn reduce_scatter<O: ReduceOp<Self::Elem>>(
        self,
        inter: &InterComm,
        op: O,
    ) -> Result<Self::Output>;
}

impl<B: Buffer + ?Sized> InterReduceArgs for &B {
    type Elem = B::Elem;
    type Everywhere = B::Owned;
    type Somewhere = Option<B::Owned>;
    fn allreduce<O: ReduceOp<B::Elem>>(self, inter: &InterComm, op: O) -> Result<B::Owned> {
        let mut out = self.as_elems().to_vec(); // overwritten with the other group's result
        inter.allreduce_in(self.as_elems(), &mut out, op)?;
        Ok(B::to_owned_shape(out))
    }
    fn reduce<O: ReduceOp<B::Elem>>(
        self,
        inter: &InterComm,
        op: O,
        root: usize,
    ) -> Result<Option<B::Owned>> {
        // the root's result, as long as its `send`; elsewhere none
        let mut out = match root {
            ROOT => self.as_elems().to_vec(),
            _ => Vec::new(),
        };
        let at_root = inter.reduce_in(self.as_elems(), &mut out, op, root)?;
        Ok(at_root.then(|| B::to_owned_shape(out)))
    }
}

impl<B, R> InterReduceArgs for (&B, &mut R)
where
    B: Buffer + ?Sized,
    R: BufferMut<Elem = B::Elem> + ?Sized,
{
    type Elem = B::Elem;
    type Everywhere = ();
    type Somewhere = ();
    fn allreduce<O: ReduceOp<B::Elem>>(self, inter: &InterComm, op: O) -> Result<()> {
        let (send, recv) = (self.0.as_elems(), self.1.as_elems_mut());
        check_len(
            recv.len(),
            send.len(),
            "receive buffer",
            "InterComm::allreduce",
        )?;
        inter.allreduce_in(send, recv, op)
    }
    fn reduce<O: ReduceOp<B::Elem>>(self, inter: &InterComm, op: O, root: usize) -> Result<()> {
        let (send, recv) = (self.0.as_elems(), self.1.as_elems_mut());
        inter.reduce_in(send, recv, op, root).map(drop)
    }
}

impl<B: Buffer + ?Sized> InterReduceScatterArgs for &B {
    type Elem = B::Elem;
    type Output = Vec<B::Elem>;
    fn reduce_scatter<O: ReduceOp<B::Elem>>(
        self,
        inter: &InterComm,
        op: O,
    ) -> Result<Self::Output> {
        inter.reduce_scatter_in(self.as_elems(), None, None, op)
    }
}

impl<B: Buffer + ?Sized> InterReduceScatterArgs for (&B, Counts<'_>) {
    type Elem = B::Elem;
    type Output = Vec<B::Elem>;
    fn reduce_scatter<O: ReduceOp<B::Elem>>(
        self,
        inter: &InterComm,
        op: O,
    ) -> Result<Self::Output> {
        inter.reduce_scatter_in(self.0.as_elems(), Some(self.1 .0), None, op)
    }
}

impl<B, R> InterReduceScatterArgs for (&B, &mut R)
where
    B: Buffer + ?Sized,
    R: BufferMut<Elem = B::Elem> + ?Sized,
{
    type Elem = B::Elem;
    type Output = ();
    fn reduce_scatter<O: ReduceOp<B::Elem>>(self, inter: &InterComm, op: O) -> Result<()> {
        let recv = Some(self.1.as_elems_mut());
        inter
            .reduce_scatter_in(self.0.as_elems(), None, recv, op)
            .map(drop)
    }
}

impl<B, R> InterReduceScatterArgs for (&B, Counts<'_>, &mut R)
where
    B: Buffer + ?Sized,
    R: BufferMut<Elem = B::Elem> + ?Sized,
{
    type Elem = B::Elem;
    type Output = ();
    fn reduce_scatter<O: ReduceOp<B::Elem>>(self, inter: &InterComm, op: O) -> Result<()> {
        let (send, counts, recv) = (
            self.0.as_elems(),
            Some(self.1 .0),
            Some(self.2.as_elems_mut()),
        );
        inter.reduce_scatter_in(send, counts, recv, op).map(drop)
    }
}

impl<B: Buffer + ?Sized> InterGatherArgs for &B {
    type Output = Option<Vec<B::Elem>>;
    fn gather(self, inter: &InterComm, root: usize) -> Result<Self::Output> {
        inter.gather_in(self.as_elems(), Receive::Equal, root)
    }
}

impl<B, R> InterGatherArgs for (&B, &mut R)
where
    B: Buffer + ?Sized,
    R: BufferMut<Elem = B::Elem> + ?Sized,
{
    type Output = ();
    fn gather(self, inter: &InterComm, root: usize) -> Result<()> {
        let recv = Receive::IntoEqual(self.1.as_elems_mut());
        inter.gather_in(self.0.as_elems(), recv, root).map(drop)
    }
}

impl<B: Buffer + ?Sized> InterGatherArgs for (&B, Counts<'_>) {
    type Output = Option<Vec<B::Elem>>;
    fn gather(self, inter: &InterComm, root: usize) -> Result<Self::Output> {
        inter.gather_in(self.0.as_elems(), Receive::Counts(self.1 .0), root)
    }
}

impl<B: Buffer + ?Sized> InterGatherArgs for (&B, Varying<'_, &mut [B::Elem]>) {
    type Output = ();
    fn gather(self, inter: &InterComm, root: usize) -> Result<()> {
        let recv = Receive::into_blocks(self.1)?;
        inter.gather_in(self.0.as_elems(), recv, root).map(drop)
    }
}

impl<T: Datatype> InterScatterArgs for &[T] {
    type Output = Vec<T>;
    fn scatter(self, inter: &InterComm, root: usize) -> Result<Vec<T>> {
        inter.scatter_in(Cut::Equal(self), None, root)
    }
}

impl<T: Datatype> InterScatterArgs for &Vec<T> {
    type Output = Vec<T>;
    fn scatter(self, inter: &InterComm, root: usize) -> Result<Vec<T>> {
        inter.scatter_in(Cut::Equal(self), None, root)
    }
}

impl<T: Datatype> InterScatterArgs for Varying<'_, &[T]> {
    type Output = Vec<T>;
    fn scatter(self, inter: &InterComm, root: usize) -> Result<Vec<T>> {
        inter.scatter_in(Cut::of_varying(self)?, None, root)
    }
}

impl<T: Datatype, R: BufferMut<Elem = T> + ?Sized> InterScatterArgs for (&[T], &mut R) {
    type Output = ();
    fn scatter(self, inter: &InterComm, root: usize) -> Result<()> {
        let recv = Some(self.1.as_elems_mut());
        inter.scatter_in(Cut::Equal(self.0), recv, root).map(drop)
    }
}

impl<T: Datatype, R: BufferMut<Elem = T> + ?Sized> InterScatterArgs
    for (Varying<'_, &[T]>, &mut R)
{
    type Output = ();
    fn scatter(self, inter: &InterComm, root: usize) -> Result<()> {
        let recv = Some(self.1.as_elems_mut());
        inter
            .scatter_in(Cut::of_varying(self.0)?, recv, root)
            .map(drop)
    }
}

impl<B: Buffer + ?Sized> InterAllgatherArgs for &B {
    type Output = Vec<B::Elem>;
    fn allgather(self, inter: &InterComm) -> Result<Vec<B::Elem>> {
        inter.allgather_in(self.as_elems(), Receive::Equal)
    }
}

impl<B, R> InterAllgatherArgs for (&B, &mut R)
where
    B: Buffer + ?Sized,
    R: BufferMut<Elem = B::Elem> + ?Sized,
{
    type Output = ();
    fn allgather(self, inter: &InterComm) -> Result<()> {
        let recv = Receive::IntoEqual(self.1.as_elems_mut());
        inter.allgather_in(self.0.as_elems(), recv).map(drop)
    }
}

impl<B: Buffer + ?Sized> InterAllgatherArgs for (&B, Counts<'_>) {
    type Output = Vec<B::Elem>;
    fn allgather(self, inter: &InterComm) -> Result<Vec<B::Elem>> {
        inter.allgather_in(self.0.as_elems(), Receive::Counts(self.1 .0))
    }
}

impl<B: Buffer + ?Sized> InterAllgatherArgs for (&B, Varying<'_, &mut [B::Elem]>) {
    type Output = ();
    fn allgather(self, inter: &InterComm) -> Result<()> {
        let recv = Receive::into_blocks(self.1)?;
        inter.allgather_in(self.0.as_elems(), recv).map(drop)
    }
}

impl<B: Buffer + ?Sized> InterAlltoallArgs for &B {
    type Output = Vec<B::Elem>;
    fn alltoall(self, inter: &InterComm) -> Result<Vec<B::Elem>> {
        inter.alltoall_in(Cut::Equal(self.as_elems()), Receive::Equal)
    }
}

impl<B, R> InterAlltoallArgs for (&B, &mut R)
where
    B: Buffer + ?Sized,
    R: BufferMut<Elem = B::Elem> + ?Sized,
{
    type Output = ();
    fn alltoall(self, inter: &InterComm) -> Result<()> {
        let (send, recv) = (
            Cut::Equal(self.0.as_elems()),
            Receive::IntoEqual(self.1.as_elems_mut()),
        );
        inter.alltoall_in(send, recv).map(drop)
    }
}

impl<T: Datatype, U: Datatype> InterAlltoallArgs
    for (PerRank<'_, '_, &[T]>, PerRank<'_, '_, &mut [U]>)
{
    type Output = ();
    fn alltoall(self, inter: &InterComm) -> Result<()> {
        inter.alltoallw_in(self.0, self.1)
    }
}

impl<T: Datatype> InterAlltoallArgs for (Varying<'_, &[T]>, Counts<'_>) {
    type Output = Vec<T>;
    fn alltoall(self, inter: &InterComm) -> Result<Vec<T>> {
        inter.alltoall_in(Cut::of_varying(self.0)?, Receive::Counts(self.1 .0))
    }
}

impl<T: Datatype> InterAlltoallArgs for (Varying<'_, &[T]>, Varying<'_, &mut [T]>) {
    type Output = ();
    fn alltoall(self, inter: &InterComm) -> Result<()> {
        let recv = Receive::into_blocks(self.1)?;
        inter.alltoall_in(Cut::of_varying(self.0)?, recv).map(drop)
    }
}

impl InterComm {
    /// Blocks until every rank of both groups has called it (MPI_Barrier on an
    /// intercommunicator). Collective over both groups.
    ///
    /// Cost: a barrier in each group, the leaders' exchange (`2 alpha`), and a barrier in each
    /// group again.
    ///
    /// # Errors
    ///
    /// As for every collective, [`Error::CollectiveMismatch`] and [`Error::Aborted`].
    ///
    /// ```
    /// rpar::run(5, |world| {
    ///     let low = world.rank() < 2;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 2 } else { 0 }, 0)?;
    ///     inter.barrier()
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn barrier(&self) -> Result<()> {
        self.across(Call::new("barrier"), || {
            self.in_local(|l| l.barrier())?;
            self.leaders_exchange(&[0u8; 0], &mut [0u8; 0])?;
            self.in_local(|l| l.barrier())
        })
    }

    /// Broadcasts from one rank of one group to every rank of the other group (MPI_Bcast on
    /// an intercommunicator): the root passes [`ROOT`], the other ranks of its group
    /// [`PROC_NULL`] (their buffers are not touched), and every rank of the other group the
    /// root's rank in the root's group. `buf`: a value, a slice or a `Vec` ([`BufferMut`]), of
    /// the same length at the root and the receivers.
    ///
    /// Cost: the root sends to the other group's rank 0 (`alpha + beta m` for `m` bytes), which
    /// broadcasts in its group.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a `root` that is neither [`ROOT`], [`PROC_NULL`] nor a
    /// rank of the remote group; [`Error::CollectiveMismatch`] if the root's buffer and the
    /// receivers' differ in size; as for every collective, [`Error::Aborted`].
    ///
    /// ```
    /// let got = rpar::run(4, |world| {
    ///     let low = world.rank() < 2;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 2 } else { 0 }, 0)?;
    ///     let mut x = [world.rank() as u32; 2];
    ///     // world rank 1 (rank 1 of the low group) broadcasts to the high group
    ///     let root = match (low, inter.rank()) {
    ///         (true, 1) => rpar::ROOT,
    ///         (true, _) => rpar::PROC_NULL,
    ///         (false, _) => 1,
    ///     };
    ///     inter.bcast(&mut x[..], root)?;
    ///     Ok(x)
    /// })?;
    /// assert_eq!(got, [[0, 0], [1, 1], [1, 1], [1, 1]]); // world rank 0 kept its own
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn bcast<B: BufferMut + ?Sized>(&self, buf: &mut B, root: usize) -> Result<()> {
        let elems = buf.as_elems_mut();
        let bytes = std::mem::size_of_val(elems);
        let ctx = self.remote.collective_context();
        match root {
            ROOT => self.across(Call::new("bcast").bytes(bytes), || {
                self.remote.send_in(ctx, elems, 0, tags::BCAST)
            }),
            PROC_NULL => self.across(Call::new("bcast"), || Ok(())),
            r => {
                self.remote.check_rank(r)?;
                self.across(Call::new("bcast").bytes(bytes), || {
                    if self.local.rank() == 0 {
                        let st = self.remote.recv_into_in(ctx, elems, r, tags::BCAST)?;
                        if st.count != elems.len() {
                            return Err(Error::invalid(
                                "InterComm::bcast",
                                format!(
                                    "the root sent {} elements, the receivers' buffers hold {}: \
                                     every buffer must hold as many as the root's",
                                    st.count,
                                    elems.len()
                                ),
                            ));
                        }
                    }
                    self.in_local(|l| l.bcast(&mut *elems, 0))
                })
            }
        }
    }

    /// Combines the data of every rank of the *other* group with `op`, and gives every rank
    /// of this group the result (MPI_Allreduce on an intercommunicator): each group gets the
    /// other's reduction, rank-ordered for a non-commutative operator. `send`: a value, a
    /// slice or a `Vec`, of the same length on every rank of both groups; the result has its
    /// shape, as [`Comm::allreduce`]`(&x, op)`'s.
    ///
    /// Cost: a reduce to rank 0 in each group, the leaders' exchange (`2 (alpha + beta m)`),
    /// and a broadcast in each group.
    ///
    /// # Errors
    ///
    /// [`Error::CollectiveMismatch`] if the ranks' lengths or operators differ; as for every
    /// collective, [`Error::Aborted`].
    ///
    /// ```
    /// let got = rpar::run(5, |world| {
    ///     let low = world.rank() < 2;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 2 } else { 0 }, 0)?;
    ///     inter.allreduce(&[world.rank() as u64, 1][..], rpar::Sum)
    /// })?;
    /// // the low group (world ranks 0, 1) gets the sum over 2, 3, 4, and back
    /// assert_eq!(got, [vec![9, 3], vec![9, 3], vec![1, 2], vec![1, 2], vec![1, 2]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn allreduce<A, O>(&self, args: A, op: O) -> Result<A::Everywhere>
    where
        A: InterReduceArgs,
        O: ReduceOp<A::Elem>,
    {
        args.allreduce(self, op)
    }

    /// Combines the data of every rank of the other group with `op` and gives the result to
    /// the root (MPI_Reduce on an intercommunicator): the root passes [`ROOT`], the other ranks
    /// of its group [`PROC_NULL`] (their `send` is ignored, as the root's is but for its
    /// length, which says how many elements the root expects), and the other group's ranks
    /// the root's rank, each with its data. Rank-ordered for a non-commutative operator.
    /// Returns `Some` result, shaped as `send`, at the root, `None` elsewhere.
    ///
    /// Cost: a reduce in the other group, then its rank 0 sends to the root (`alpha + beta m`).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a `root` that is neither [`ROOT`], [`PROC_NULL`] nor a
    /// rank of the remote group; [`Error::CollectiveMismatch`] if lengths or operators differ
    /// (the root's length included); as for every collective, [`Error::Aborted`].
    ///
    /// ```
    /// let got = rpar::run(4, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let root = if low { rpar::ROOT } else { 0 }; // world rank 0 gets the high group's sum
    ///     inter.reduce(&[world.rank() as u32, 1][..], rpar::Sum, root)
    /// })?;
    /// assert_eq!(got, [Some(vec![6, 3]), None, None, None]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn reduce<A, O>(&self, args: A, op: O, root: usize) -> Result<A::Somewhere>
    where
        A: InterReduceArgs,
        O: ReduceOp<A::Elem>,
    {
        args.reduce(self, op, root)
    }

    /// Gives the root every rank's block of the other group, in their rank order (MPI_Gather
    /// and MPI_Gatherv on an intercommunicator): the root passes [`ROOT`], the other ranks of
    /// its group [`PROC_NULL`], and the other group's ranks the root's rank, each with its
    /// block.
    ///
    /// `args`: `&x` (at the root a new `Vec` of the blocks, which must be alike in length),
    /// `(&x, Counts(&counts))` (at the root a new `Vec` of `counts[i]` elements from remote rank
    /// `i`), `(&x, Varying::new(&mut all, &counts, &displs))` (into the root's buffer). Only
    /// the root's receive side counts, only the other group's `x`.
    ///
    /// Cost: each rank of the other group sends its block to the root (`q alpha + beta m` at
    /// the root for `q` ranks and `m` bytes in all).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] as for [`InterComm::reduce`]; [`Error::InvalidArgument`] at
    /// the root for counts that are not one per remote rank, blocks that do not fit or
    /// overlap, or a block whose length is not the one expected; [`Error::Truncated`] for a
    /// block longer than its room; as for every collective, [`Error::CollectiveMismatch`] and
    /// [`Error::Aborted`].
    ///
    /// ```
    /// use rpar::{Counts, PROC_NULL, ROOT};
    /// let got = rpar::run(4, |world| {
    ///     let low = world.rank() < 2;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 2 } else { 0 }, 0)?;
    ///     // world rank 1 (rank 1 of the low group) gathers from world ranks 2 and 3
    ///     let root = match (low, inter.rank()) {
    ///         (true, 1) => ROOT,
    ///         (true, _) => PROC_NULL,
    ///         (false, _) => 1,
    ///     };
    ///     let mine = vec![world.rank() as u8; inter.rank() + 1]; // 1 and 2 values
    ///     inter.gather((&mine[..], Counts(&[1, 2])), root)
    /// })?;
    /// assert_eq!(got, [None, Some(vec![2, 3, 3]), None, None]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn gather<A: InterGatherArgs>(&self, args: A, root: usize) -> Result<A::Output> {
        args.gather(self, root)
    }

    /// Sends block `i` of the root's data to rank `i` of the other group (MPI_Scatter and
    /// MPI_Scatterv on an intercommunicator): the root passes [`ROOT`], the other ranks of its
    /// group [`PROC_NULL`], and the other group's ranks the root's rank.
    ///
    /// `args`: `&all` (one equal block per remote rank: each receiver gets a new `Vec`; the
    /// root's group an empty one), `Varying::new(&all, &counts, &displs)` (block `i` of
    /// `counts[i]` elements), or either paired with `&mut mine` (received into, which must be
    /// filled exactly). Only the root's send side counts, only the receivers' `mine`.
    ///
    /// Cost: the root sends each rank of the other group its block (`q alpha + beta m` at the
    /// root).
    ///
    /// # Errors
    ///
    /// As [`InterComm::gather`]'s, for the send side at the root (`all` not a multiple of the
    /// remote group's size, blocks that do not fit) and the receive side elsewhere.
    ///
    /// ```
    /// use rpar::{Varying, PROC_NULL, ROOT};
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let all: Vec<u16> = (10..15).collect();
    ///     let root = if low { ROOT } else { 0 };
    ///     let even = inter.scatter(&all[..4], root)?;                         // 2 each
    ///     let uneven = inter.scatter(Varying::new(&all[..], &[1, 3], &[4, 0]), root)?;
    ///     Ok((even, uneven))
    /// })?;
    /// assert_eq!(got[0], (vec![], vec![]));
    /// assert_eq!(got[1], (vec![10, 11], vec![14]));
    /// assert_eq!(got[2], (vec![12, 13], vec![10, 11, 12]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn scatter<A: InterScatterArgs>(&self, args: A, root: usize) -> Result<A::Output> {
        args.scatter(self, root)
    }

    /// Gives every rank the blocks of every rank of the other group, in their rank order
    /// (MPI_Allgather and MPI_Allgatherv on an intercommunicator).
    ///
    /// `args`: `&x` (a new `Vec` of the other group's blocks, which must be alike in length;
    /// the two groups' may differ), `(&x, Counts(&counts))` (`counts[i]` elements from remote
    /// rank `i`), `(&x, Varying::new(&mut all, &counts, &displs))`.
    ///
    /// Cost: every rank sends its block to every rank of the other group (`q` messages each
    /// way at every rank, for a remote group of `q`).
    ///
    /// # Errors
    ///
    /// As [`InterComm::gather`]'s, at every rank.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     inter.allgather(&[world.rank() as u8; 2][..])
    /// })?;
    /// assert_eq!(got, [vec![1, 1, 2, 2], vec![0, 0], vec![0, 0]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn allgather<A: InterAllgatherArgs>(&self, args: A) -> Result<A::Output> {
        args.allgather(self)
    }

    /// Sends block `j` of every rank's data to rank `j` of the other group: each rank gets
    /// one block from every rank of the other group, in their rank order (MPI_Alltoall and
    /// MPI_Alltoallv on an intercommunicator).
    ///
    /// `args`: `&x` (one equal block per remote rank: a new `Vec` of what comes, whose blocks
    /// must be alike in length), `(Varying::new(&x, &counts, &displs), Counts(&recv_counts))`,
    /// `(Varying::new(&x, …), Varying::new(&mut y, &recv_counts, &recv_displs))`; counts and
    /// displacements are per remote rank.
    ///
    /// Cost: every rank sends one block to every rank of the other group.
    ///
    /// # Errors
    ///
    /// As [`InterComm::gather`]'s and [`InterComm::scatter`]'s, at every rank.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let r = world.rank() as u8;
    ///     let send: Vec<u8> = (0..inter.remote_size() as u8).map(|j| 10 * r + j).collect();
    ///     inter.alltoall(&send[..])
    /// })?;
    /// assert_eq!(got, [vec![10, 20], vec![0], vec![1]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall<A: InterAlltoallArgs>(&self, args: A) -> Result<A::Output> {
        args.alltoall(self)
    }

    /// Combines the data of every rank of the other group with `op` and scatters the result
    /// over this group (MPI_Reduce_scatter_block and MPI_Reduce_scatter on an
    /// intercommunicator): every rank of both groups passes the same number of elements, `n`,
    /// and each rank gets its block of the other group's reduction.
    ///
    /// `args`: `&x` (equal blocks: a rank of a group of `g` gets a new `Vec` of `n / g`),
    /// `(&x, Counts(&counts))` (rank `i` of this group gets `counts[i]`; they add up to `n`),
    /// and either with this rank's block received into a buffer: `(&x, &mut mine)`,
    /// `(&x, Counts(&counts), &mut mine)`.
    ///
    /// Cost: a reduce in each group, the leaders' exchange (`2 (alpha + beta m)`), and a
    /// scatter in each group.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `n` is not a multiple of this group's size (or the counts'
    /// sum), or a receive buffer is not as long as this rank's block;
    /// [`Error::CollectiveMismatch`] if lengths or operators differ; as for every collective,
    /// [`Error::Aborted`].
    ///
    /// ```
    /// use rpar::Counts;
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let w = world.rank() as u32;
    ///     let even = inter.reduce_scatter(&[w, 10 * w][..], rpar::Sum)?;
    ///     let counts: &[usize] = if low { &[2] } else { &[0, 2] };
    ///     let uneven = inter.reduce_scatter((&[w, 10 * w][..], Counts(counts)), rpar::Sum)?;
    ///     Ok((even, uneven))
    /// })?;
    /// // world rank 0 gets the high group's sums; the high group splits rank 0's vector
    /// assert_eq!(got[0], (vec![3, 30], vec![3, 30]));
    /// assert_eq!(got[1], (vec![0], vec![]));
    /// assert_eq!(got[2], (vec![0], vec![0, 0]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn reduce_scatter<A, O>(&self, args: A, op: O) -> Result<A::Output>
    where
        A: InterReduceScatterArgs,
        O: ReduceOp<A::Elem>,
    {
        args.reduce_scatter(self, op)
    }

    /// The body of both forms of [`InterComm::allreduce`]: the other group's result into
    /// `recv`, as long as `send`.
    fn allreduce_in<T: Datatype, O: ReduceOp<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<()> {
        let call = Call::new("allreduce")
            .reduction::<O>()
            .bytes(std::mem::size_of_val(send));
        self.across(call, || {
            if let Some(mine) = self.in_local(|l| l.reduce(send, op, 0))? {
                self.leaders_exchange(&mine[..], recv)?;
            }
            self.in_local(|l| l.bcast(&mut *recv, 0))
        })
    }

    /// The body of both forms of [`InterComm::reduce`]: at the root the result into `recv`
    /// (whose length is the root's count), elsewhere `send` reduced; whether this is the root.
    fn reduce_in<T: Datatype, O: ReduceOp<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
        root: usize,
    ) -> Result<bool> {
        let call = Call::new("reduce").reduction::<O>();
        let ctx = self.remote.collective_context();
        match root {
            ROOT => self.across(call.bytes(std::mem::size_of_val(recv)), || {
                let st = self.remote.recv_into_in(ctx, recv, 0, tags::REDUCE)?;
                check_count(st.count, recv.len(), 0, "InterComm::reduce")?;
                Ok(true)
            }),
            PROC_NULL => self.across(call, || Ok(false)),
            r => {
                self.remote.check_rank(r)?;
                self.across(call.bytes(std::mem::size_of_val(send)), || {
                    if let Some(mine) = self.in_local(|l| l.reduce(send, op, 0))? {
                        self.remote.send_in(ctx, &mine[..], r, tags::REDUCE)?;
                    }
                    Ok(false)
                })
            }
        }
    }

    /// The body of every form of [`InterComm::reduce_scatter`]: `counts` per rank of this group
    /// (else equal blocks), `recv` this rank's block (else a new `Vec`).
    fn reduce_scatter_in<T: Datatype, O: ReduceOp<T>>(
        &self,
        send: &[T],
        counts: Option<&[usize]>,
        recv: Option<&mut [T]>,
        op: O,
    ) -> Result<Vec<T>> {
        const CALL: &str = "InterComm::reduce_scatter";
        let mine = match counts {
            None => block_len(send.len(), self.size(), "send", CALL)?,
            Some(c) => {
                check_per_rank(c.len(), self.size(), "the counts", CALL)?;
                let total = offsets_of_counts(c, CALL)?[c.len()];
                check_len(send.len(), total, "send buffer", CALL)?;
                c[self.rank()]
            }
        };
        if let Some(buf) = &recv {
            check_len(buf.len(), mine, "receive buffer", CALL)?;
        }
        let call = Call::new("reduce_scatter")
            .reduction::<O>()
            .bytes(std::mem::size_of_val(send));
        self.across(call, || {
            let reduced = self.in_local(|l| l.reduce(send, op, 0))?;
            // the other group's result, at the leader (elsewhere the scatter ignores it)
            let mut theirs = Vec::new();
            if let Some(reduced) = reduced {
                theirs = send.to_vec();
                self.leaders_exchange(&reduced[..], &mut theirs[..])?;
            }
            self.in_local(|l| match (counts, recv) {
                (None, None) => l.scatter(&theirs[..], 0),
                (None, Some(buf)) => l.scatter((&theirs[..], buf), 0).map(|()| Vec::new()),
                (Some(c), None) => l.scatter(Varying::packed(&theirs[..], c), 0),
                (Some(c), Some(buf)) => l
                    .scatter((Varying::packed(&theirs[..], c), buf), 0)
                    .map(|()| Vec::new()),
            })
        })
    }

    /// The body of every form of [`InterComm::gather`].
    fn gather_in<T: Datatype>(
        &self,
        send: &[T],
        recv: Receive<'_, T>,
        root: usize,
    ) -> Result<Option<Vec<T>>> {
        let call = Call::new("gather");
        match root {
            ROOT => self.across(call, || {
                self.receive_blocks(recv, tags::GATHER, "InterComm::gather")
                    .map(Some)
            }),
            PROC_NULL => self.across(call, || Ok(None)),
            r => {
                self.remote.check_rank(r)?;
                self.across(call, || {
                    let ctx = self.remote.collective_context();
                    self.remote.send_in(ctx, send, r, tags::GATHER)?;
                    Ok(None)
                })
            }
        }
    }

    /// The body of every form of [`InterComm::scatter`]: `recv` is the receivers' buffer,
    /// if they gave one (else they get a new `Vec`).
    fn scatter_in<T: Datatype>(
        &self,
        send: Cut<'_, T>,
        recv: Option<&mut [T]>,
        root: usize,
    ) -> Result<Vec<T>> {
        const CALL: &str = "InterComm::scatter";
        let call = Call::new("scatter");
        let ctx = self.remote.collective_context();
        match root {
            ROOT => {
                let blocks = send.blocks(self.remote_size(), CALL)?;
                self.across(call, || {
                    self.send_blocks(blocks.into_iter().enumerate(), tags::SCATTER)?;
                    Ok(Vec::new())
                })
            }
            PROC_NULL => self.across(call, || Ok(Vec::new())),
            r => {
                self.remote.check_rank(r)?;
                self.across(call, || match recv {
                    None => Ok(self.remote.recv_in(ctx, r, tags::SCATTER)?.0),
                    Some(buf) => {
                        let st = self.remote.recv_into_in(ctx, buf, r, tags::SCATTER)?;
                        check_count(st.count, buf.len(), r, CALL)?;
                        Ok(Vec::new())
                    }
                })
            }
        }
    }

    /// The body of every form of [`InterComm::allgather`].
    fn allgather_in<T: Datatype>(&self, send: &[T], recv: Receive<'_, T>) -> Result<Vec<T>> {
        self.across(Call::new("allgather"), || {
            let everyone = (0..self.remote_size()).map(|j| (j, send));
            self.send_blocks(everyone, tags::ALLGATHER)?;
            self.receive_blocks(recv, tags::ALLGATHER, "InterComm::allgather")
        })
    }

    /// The body of every form of [`InterComm::alltoall`].
    fn alltoall_in<T: Datatype>(&self, send: Cut<'_, T>, recv: Receive<'_, T>) -> Result<Vec<T>> {
        const CALL: &str = "InterComm::alltoall";
        let blocks = send.blocks(self.remote_size(), CALL)?;
        self.across(Call::new("alltoall"), || {
            self.send_blocks(blocks.into_iter().enumerate(), tags::ALLTOALL)?;
            self.receive_blocks(recv, tags::ALLTOALL, CALL)
        })
    }

    /// Sends each `(remote rank, block)` on the view across's collective context. A large
    /// block waits for its receiver, which takes it even while itself sending (a rank waiting
    /// in a send copies out what is offered to it), so all ranks may send before receiving.
    pub(super) fn send_blocks<'a, T: Datatype>(
        &self,
        blocks: impl Iterator<Item = (usize, &'a [T])>,
        tag: i32,
    ) -> Result<()> {
        let ctx = self.remote.collective_context();
        for (dest, block) in blocks {
            self.remote.send_in(ctx, block, dest, tag)?;
        }
        Ok(())
    }

    /// Receives one block from every rank of the remote group, in rank order, laid out as
    /// `recv` says; returns the new `Vec` (empty when received into the caller's buffer).
    pub(super) fn receive_blocks<T: Datatype>(
        &self,
        recv: Receive<'_, T>,
        tag: i32,
        call: &'static str,
    ) -> Result<Vec<T>> {
        let (ctx, q) = (self.remote.collective_context(), self.remote_size());
        match recv {
            Receive::Equal => {
                let mut all = Vec::new();
                let mut each = 0;
                for j in 0..q {
                    let (block, _) = self.remote.recv_in::<T>(ctx, j, tag)?;
                    if j == 0 {
                        each = block.len();
                        all = block;
                        all.reserve(each * (q - 1));
                    } else {
                        check_count(block.len(), each, j, call)?;
                        all.extend_from_slice(&block);
                    }
                }
                Ok(all)
            }
            Receive::IntoEqual(buf) => {
                let n = block_len(buf.len(), q, "receive", call)?;
                for j in 0..q {
                    let block = &mut buf[j * n..(j + 1) * n];
                    let st = self.remote.recv_into_in(ctx, block, j, tag)?;
                    check_count(st.count, n, j, call)?;
                }
                Ok(Vec::new())
            }
            Receive::Counts(counts) => {
                check_per_rank(counts.len(), q, "the receive counts", call)?;
                let at = offsets_of_counts(counts, call)?;
                let mut all = zeroed_vec(at[q], call)?;
                for (j, &c) in counts.iter().enumerate() {
                    let block = &mut all[at[j]..at[j + 1]];
                    let st = self.remote.recv_into_in(ctx, block, j, tag)?;
                    check_count(st.count, c, j, call)?;
                }
                Ok(all)
            }
            Receive::Into {
                buf,
                counts,
                displs,
            } => {
                check_per_rank(counts.len(), q, "the receive counts", call)?;
                check_per_rank(displs.len(), q, "the receive displacements", call)?;
                check_recv_blocks(counts, &displs, buf.len(), call)?;
                for (j, (&c, &d)) in counts.iter().zip(displs.iter()).enumerate() {
                    let st = self.remote.recv_into_in(ctx, &mut buf[d..d + c], j, tag)?;
                    check_count(st.count, c, j, call)?;
                }
                Ok(Vec::new())
            }
        }
    }

    /// Runs `f` as one collective call over both groups, on the view across (whose call count
    /// both groups keep alike): the messages across carry it; the local collectives inside it
    /// are calls of their own ([`InterComm::in_local`]).
    pub(super) fn across<R>(&self, call: Call, f: impl FnOnce() -> Result<R>) -> Result<R> {
        self.remote.collective(call, &"LeadersExchange", f)
    }

    /// Runs `f`, a collective of the local group, as a call of its own on `local`, not as part
    /// of the call across this runs in: collectives in one call share its count, so two of
    /// them in a row could take each other's messages.
    pub(super) fn in_local<R>(&self, f: impl FnOnce(&Comm) -> Result<R>) -> Result<R> {
        let ep = self.local.endpoint();
        let across = ep.set_collective(None);
        let r = f(&self.local);
        ep.set_collective(across);
        r
    }

    /// The leaders' exchange of a collective across (rank 0 of each group, with the other's
    /// rank 0): sends `mine`, receives `theirs`, which must come whole. Others do nothing.
    pub(super) fn leaders_exchange<T: Datatype>(&self, mine: &[T], theirs: &mut [T]) -> Result<()> {
        if self.local.rank() != 0 {
            return Ok(());
        }
        let ctx = self.remote.collective_context();
        let st = self
            .remote
            .sendrecv_in(ctx, mine, 0, tags::LEADERS, theirs, 0, tags::LEADERS)?;
        if st.count != theirs.len() {
            return Err(Error::invalid(
                "an intercommunicator collective",
                format!(
                    "the other group's leader sent {} elements, this group's expects {}",
                    st.count,
                    theirs.len()
                ),
            ));
        }
        Ok(())
    }
}
