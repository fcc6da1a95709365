//! The collective API: one method per MPI collective on [`Comm`], the form of the call in its
//! argument types (MPI's `sendbuf`/`recvbuf`, `MPI_IN_PLACE`, derived datatypes and the
//! `v`-forms' counts and displacements) and the algorithm in [`Comm::using`].
//!
//! A call's `args` is one of:
//!
//! | `args` | what | result |
//! |---|---|---|
//! | `&x` (a value, a slice, a `Vec`) | the send buffer; rpar allocates the receive buffer | a new `Vec` (or value) |
//! | `(&x, &mut y)` | send and receive buffers (MPI's `sendbuf, recvbuf`) | `()` |
//! | [`InPlace(&mut y)`](InPlace) | `MPI_IN_PLACE`: the data is taken from, and left in, `y` | `()` |
//! | `x` (an owned `Vec`) | the send buffer, moved (no copy where the algorithm can move it) | a new `Vec` |
//! | [`Typed::new(&x, &ty, n)`](Typed) | `n` elements of the committed datatype `ty` in `x` | as the plain form |
//! | [`Varying::new(&mut y, &counts, &displs)`](Varying) | the `v`-forms: block `i` of `counts[i]` elements at `displs[i]` | `()` |
//! | [`Counts(&counts)`](Counts) | a `v`-form's receive side that rpar allocates, blocks packed | a new `Vec` |
//!
//! Each method's documentation lists the forms it takes. Every form checks its lengths
//! against the others' on every rank before anything moves (a wrong length is
//! [`Error::InvalidArgument`](crate::Error::InvalidArgument) everywhere), and runs the same
//! algorithms: the one chosen with [`Comm::using`], else `Auto`'s.
//!
//! This module is the API layer: argument handling and dispatch. The algorithms and the checks
//! of each form live with their family (`bcast.rs`, `gather.rs`, …, `typed.rs`, `typed_v.rs`).

use super::op::ReduceOp;
use super::scan::Prefix;
use super::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Scan, Scatter,
    Shift,
};
use crate::comm::{Buffer, BufferMut};
use crate::datatype::{CommittedType, Datatype};
use crate::{Comm, Error, Result};

/// `MPI_IN_PLACE`: the buffer holds this rank's contribution and receives its result (for a
/// rooted collective: at the root; elsewhere it is the send buffer, as MPI has it).
///
/// ```
/// use rpar::{InPlace, Sum};
/// let got = rpar::run(3, |world| {
///     let mut v = [world.rank() as u32, 1];
///     world.allreduce(InPlace(&mut v[..]), Sum)?;
///     Ok(v)
/// })?;
/// assert_eq!(got, vec![[3, 3]; 3]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct InPlace<B>(pub B);

/// `count` elements of a committed derived datatype `ty` in `buf` (MPI's `buf, count,
/// datatype` with a derived datatype): `buf` is a slice (`&[T]` to send, `&mut [T]` to
/// receive) whose start is the datatype's displacement 0.
///
/// ```
/// use rpar::{Datatype, TypeMap, Typed};
/// // the diagonal of a 3 x 3 matrix
/// let diagonal = TypeMap::vector(3, 1, 4, &i32::type_map())?.commit();
/// let got = rpar::run(3, |world| {
///     let mut m = if world.rank() == 1 { [1, 0, 0, 0, 5, 0, 0, 0, 9] } else { [0; 9] };
///     world.bcast(Typed::new(&mut m[..], &diagonal, 1), 1)?;
///     Ok(m)
/// })?;
/// assert_eq!(got[0], [1, 0, 0, 0, 5, 0, 0, 0, 9]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct Typed<'t, B> {
    pub(crate) buf: B,
    pub(crate) ty: &'t CommittedType,
    pub(crate) count: usize,
    /// The element of `buf` at the type's displacement 0 (MPI's `&buf[origin]`).
    pub(crate) origin: usize,
}

impl<'t, S> Typed<'t, S> {
    /// `count` elements of `ty` in `buf` (`&x` to send, `&mut x` to receive; `x` a slice, a
    /// `Vec` or a value).
    pub fn new<X: ViewBuf<Slice = S>>(buf: X, ty: &'t CommittedType, count: usize) -> Self {
        Typed {
            buf: buf.slice(),
            ty,
            count,
            origin: 0,
        }
    }

    /// The same view with the type's displacement 0 at element `origin` of the buffer (MPI's
    /// `&buf[origin]`), so that types with negative displacements fit: point-to-point only
    /// (collectives take displacement 0 at the buffer's start: slice the buffer instead).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap, Typed};
    /// let backwards = TypeMap::vector(3, 1, -1, &u8::type_map())?.commit();
    /// let got = rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         world.send(Typed::new(&[1u8, 2, 3], &backwards, 1).at(2), 1, 0)?;
    ///     }
    ///     Ok(if world.rank() == 1 { world.recv::<u8>(0, 0)?.0 } else { vec![] })
    /// })?;
    /// assert_eq!(got[1], [3, 2, 1]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn at(self, origin: usize) -> Self {
        Typed { origin, ..self }
    }

    /// MPI_Alltoallw's side: rank `i`'s block is `counts[i]` elements of `types[i]` starting at
    /// byte `displs[i]` of `buf` (bytes, as in MPI_Alltoallw, so blocks of any type can sit
    /// anywhere). Taken by [`Comm::alltoall`] with such a view on each side.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap, Typed};
    /// let (one, pair) = (i32::type_map().commit(), TypeMap::contiguous(2, &i32::type_map())?.commit());
    /// let got = rpar::run(2, |world| {
    ///     let r = world.rank() as i32;
    ///     let send = [10 * r, 10 * r + 1, 10 * r + 2];
    ///     // rank 0 sends one i32 to 0 and a pair to 1; rank 1 sends a pair to 0 and one to 1
    ///     let (types, counts, displs) = if r == 0 {
    ///         ([&one, &pair], [1, 1], [0, 4])
    ///     } else {
    ///         ([&pair, &one], [1, 1], [0, 8])
    ///     };
    ///     let mut recv = [-1i32; 3];
    ///     // receive in the same layout: from 0 at 0, from 1 after
    ///     let (rtypes, rdispls) = if r == 0 { ([&one, &pair], [0, 4]) } else { ([&pair, &one], [0, 8]) };
    ///     world.alltoall((
    ///         Typed::per_rank(&send[..], &types, &counts, &displs),
    ///         Typed::per_rank(&mut recv[..], &rtypes, &counts, &rdispls),
    ///     ))?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got[0], [0, 10, 11]);
    /// assert_eq!(got[1], [1, 2, 12]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn per_rank<'c, X: ViewBuf<Slice = S>>(
        buf: X,
        types: &'c [&'t CommittedType],
        counts: &'c [usize],
        displs: &'c [usize],
    ) -> PerRank<'t, 'c, S> {
        PerRank {
            buf: buf.slice(),
            types,
            counts,
            displs,
        }
    }

    /// Blocks of elements of `ty` in `buf`, rank `i`'s `counts[i]` of them at `displs[i]`
    /// extents of `ty` (the typed `v`-forms, MPI_Gatherv & co. with a derived datatype).
    pub fn varying<'c, X: ViewBuf<Slice = S>>(
        buf: X,
        ty: &'t CommittedType,
        counts: &'c [usize],
        displs: &'c [usize],
    ) -> Varying<'c, Typed<'t, S>> {
        Varying {
            buf: Typed {
                buf: buf.slice(),
                ty,
                count: 0,
                origin: 0,
            },
            counts,
            displs: Some(displs),
        }
    }
}

/// MPI_Alltoallw's side: block `i` is `counts[i]` elements of `types[i]` at byte `displs[i]` of
/// `buf` (see [`Typed::per_rank`]).
#[derive(Debug)]
pub struct PerRank<'t, 'c, S> {
    pub(crate) buf: S,
    pub(crate) types: &'c [&'t CommittedType],
    pub(crate) counts: &'c [usize],
    /// In bytes, as MPI_Alltoallw's.
    pub(crate) displs: &'c [usize],
}

/// A buffer of elements laid out one after another: a slice, a `Vec` or an array, as the
/// receive buffers of the collectives that move blocks (gather, scatter, allgather, alltoall)
/// and the buffers of [`Typed`] and [`Varying`] views take them. (Where a single value may be
/// a buffer — sends, receives, reductions — an array `[T; N]` is one element of its own type;
/// here it is `N` elements of `T`.) Sealed.
pub trait Blocks: sealed::Sealed {
    /// The element type.
    type Elem: Datatype;
    /// The elements.
    fn elems(&self) -> &[Self::Elem];
    /// The elements, to write.
    fn elems_mut(&mut self) -> &mut [Self::Elem];
}

impl<T: Datatype> Blocks for [T] {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self
    }
    fn elems_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T: Datatype> Blocks for Vec<T> {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self
    }
    fn elems_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T: Datatype, const N: usize> Blocks for [T; N] {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self
    }
    fn elems_mut(&mut self) -> &mut [T] {
        self
    }
}

/// A buffer a view is made of ([`Typed::new`], [`Varying::new`]): `&x` to send or `&mut x` to
/// receive, for `x` a slice, a `Vec` or an array ([`Blocks`]). Sealed.
pub trait ViewBuf: sealed::Sealed {
    /// The elements: `&[T]` or `&mut [T]`.
    type Slice;
    #[doc(hidden)]
    fn slice(self) -> Self::Slice;
}

impl<'a, B: Blocks + ?Sized> ViewBuf for &'a B {
    type Slice = &'a [B::Elem];
    fn slice(self) -> &'a [B::Elem] {
        self.elems()
    }
}

impl<'a, B: Blocks + ?Sized> ViewBuf for &'a mut B {
    type Slice = &'a mut [B::Elem];
    fn slice(self) -> &'a mut [B::Elem] {
        self.elems_mut()
    }
}

/// The blocks of a `v`-form (MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoallv,
/// MPI_Reduce_scatter): rank `i`'s block is `counts[i]` elements starting at element
/// `displs[i]` of `buf`; blocks may come in any order and leave gaps (left untouched), but
/// receive blocks may not overlap.
///
/// ```
/// use rpar::Varying;
/// let got = rpar::run(3, |world| {
///     let mine = vec![world.rank() as u8; world.rank() + 1]; // rank r sends r + 1 values
///     let (counts, displs) = ([1, 2, 3], [5, 3, 0]);         // blocks in reverse order
///     let mut all = [9u8; 6];
///     world.allgather((&mine[..], Varying::new(&mut all[..], &counts, &displs)))?;
///     Ok(all)
/// })?;
/// assert_eq!(got[0], [2, 2, 2, 1, 1, 0]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct Varying<'c, B> {
    pub(crate) buf: B,
    pub(crate) counts: &'c [usize],
    displs: Option<&'c [usize]>,
}

impl<'c, S> Varying<'c, S> {
    /// Block `i` of `counts[i]` elements at element `displs[i]` of `buf` (`&x` to send,
    /// `&mut x` to receive).
    pub fn new<X: ViewBuf<Slice = S>>(buf: X, counts: &'c [usize], displs: &'c [usize]) -> Self {
        Varying {
            buf: buf.slice(),
            counts,
            displs: Some(displs),
        }
    }

    /// Blocks of `counts[i]` elements one after another from the start of `buf` (the
    /// displacements are the running sums of the counts).
    pub fn packed<X: ViewBuf<Slice = S>>(buf: X, counts: &'c [usize]) -> Self {
        Varying {
            buf: buf.slice(),
            counts,
            displs: None,
        }
    }

    /// The displacements: as given, or the running sums of the counts.
    pub(crate) fn displs(&self) -> Result<std::borrow::Cow<'c, [usize]>> {
        match self.displs {
            Some(d) => Ok(d.into()),
            None => {
                let mut at = 0usize;
                let mut displs = Vec::with_capacity(self.counts.len());
                for &c in self.counts {
                    displs.push(at);
                    at = at.checked_add(c).ok_or_else(|| {
                        Error::invalid("Varying::packed", "the counts add up past usize::MAX")
                    })?;
                }
                Ok(displs.into())
            }
        }
    }
}

/// The receive side of a `v`-form that rpar allocates: rank `i`'s block of `counts[i]`
/// elements, one after another (MPI's `recvcounts` with packed displacements); the call
/// returns the new `Vec`.
///
/// ```
/// use rpar::Counts;
/// let got = rpar::run(3, |world| {
///     let mine = vec![world.rank() as u8; world.rank() + 1];
///     world.allgather((&mine[..], Counts(&[1, 2, 3])))
/// })?;
/// assert_eq!(got[2], [0, 1, 1, 2, 2, 2]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Counts<'c>(pub &'c [usize]);

mod sealed {
    /// Only the forms of this module take part (see its documentation).
    pub trait Sealed {}
    impl<B: ?Sized> Sealed for &B {}
    impl<B: ?Sized> Sealed for &mut B {}
    impl<A, B> Sealed for (A, B) {}
    impl<B> Sealed for super::InPlace<B> {}
    impl<T> Sealed for Vec<T> {}
    impl<T> Sealed for [T] {}
    impl<T, const N: usize> Sealed for [T; N] {}
    impl<B> Sealed for super::Typed<'_, B> {}
    impl<B> Sealed for super::Varying<'_, B> {}
    impl<S> Sealed for super::PerRank<'_, '_, S> {}
}

/// What [`Comm::bcast`] takes: `&mut x` or a [`Typed`] receive buffer. Sealed.
pub trait BcastBuf: sealed::Sealed {
    #[doc(hidden)]
    fn bcast(self, comm: &Comm, root: usize) -> Result<()>;
}

/// What the reductions take ([`Comm::reduce`], [`Comm::allreduce`], [`Comm::scan`],
/// [`Comm::exscan`]): `&x`, `(&x, &mut y)`, [`InPlace`]`(&mut y)` or an owned `Vec`. Sealed.
pub trait ReduceArgs: sealed::Sealed {
    /// The element type.
    type Elem: Datatype;
    /// What every rank gets from `allreduce` and `scan`: a new value or `Vec` of the send
    /// buffer's shape, nothing (the result is in the caller's buffer), or the owned `Vec`.
    type Everywhere;
    /// What `reduce` (at its root) and `exscan` (but on rank 0) give: the same, in an
    /// `Option` where the result is new.
    type Somewhere;
    #[doc(hidden)]
    fn allreduce<O: ReduceOp<Self::Elem>>(self, comm: &Comm, op: O) -> Result<Self::Everywhere>;
    #[doc(hidden)]
    fn reduce<O: ReduceOp<Self::Elem>>(
        self,
        comm: &Comm,
        op: O,
        root: usize,
    ) -> Result<Self::Somewhere>;
    #[doc(hidden)]
    fn scan<O: ReduceOp<Self::Elem>>(self, comm: &Comm, op: O) -> Result<Self::Everywhere>;
    #[doc(hidden)]
    fn exscan<O: ReduceOp<Self::Elem>>(self, comm: &Comm, op: O) -> Result<Self::Somewhere>;
}

/// What [`Comm::reduce_scatter`] takes. Sealed.
pub trait ReduceScatterArgs: sealed::Sealed {
    /// The element type.
    type Elem: Datatype;
    /// A new `Vec` of this rank's block, or nothing (in place).
    type Output;
    #[doc(hidden)]
    fn reduce_scatter<O: ReduceOp<Self::Elem>>(self, comm: &Comm, op: O) -> Result<Self::Output>;
}

/// What [`Comm::gather`] takes. Sealed.
pub trait GatherArgs: sealed::Sealed {
    /// What the call returns: `Some` new `Vec` at the root, or nothing (the caller's buffer).
    type Output;
    #[doc(hidden)]
    fn gather(self, comm: &Comm, root: usize) -> Result<Self::Output>;
}

/// What [`Comm::scatter`] takes. Sealed.
pub trait ScatterArgs: sealed::Sealed {
    /// What the call returns: a new `Vec` of this rank's block, or nothing.
    type Output;
    #[doc(hidden)]
    fn scatter(self, comm: &Comm, root: usize) -> Result<Self::Output>;
}

/// What [`Comm::allgather`] takes. Sealed.
pub trait AllgatherArgs: sealed::Sealed {
    /// What the call returns: a new `Vec` of every block, or nothing.
    type Output;
    #[doc(hidden)]
    fn allgather(self, comm: &Comm) -> Result<Self::Output>;
}

/// What [`Comm::alltoall`] takes. Sealed.
pub trait AlltoallArgs: sealed::Sealed {
    /// What the call returns: a new `Vec` (or `Vec` of `Vec`s), or nothing.
    type Output;
    #[doc(hidden)]
    fn alltoall(self, comm: &Comm) -> Result<Self::Output>;
}

/// What [`Comm::shift_circular`] takes. Sealed.
pub trait ShiftArgs: sealed::Sealed {
    /// A new `Vec` of what came in.
    type Output;
    #[doc(hidden)]
    fn shift(self, comm: &Comm, q: isize) -> Result<Self::Output>;
}

// ---- bcast ------------------------------------------------------------------------------

impl<B: BufferMut + ?Sized> BcastBuf for &mut B {
    fn bcast(self, comm: &Comm, root: usize) -> Result<()> {
        comm.bcast_with(self, root, comm.chosen::<Bcast>())
    }
}

// ---- reductions ---------------------------------------------------------------------------

impl<B: Buffer + ?Sized> ReduceArgs for &B {
    type Elem = B::Elem;
    type Everywhere = B::Owned;
    type Somewhere = Option<B::Owned>;
    fn allreduce<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<B::Owned> {
        let mut acc = self.as_elems().to_vec();
        comm.allreduce_with(None, &mut acc, &op, comm.chosen::<Allreduce>())?;
        Ok(B::to_owned_shape(acc))
    }
    fn reduce<O: ReduceOp<B::Elem>>(
        self,
        comm: &Comm,
        op: O,
        root: usize,
    ) -> Result<Option<B::Owned>> {
        let (data, algorithm) = (self.as_elems(), comm.chosen::<Reduce>());
        if comm.rank() != root {
            comm.reduce_with(Some(data), &mut [], &op, root, algorithm)?;
            return Ok(None);
        }
        let mut acc = data.to_vec();
        comm.reduce_with(None, &mut acc, &op, root, algorithm)?;
        Ok(Some(B::to_owned_shape(acc)))
    }
    fn scan<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<B::Owned> {
        let mut acc = self.as_elems().to_vec();
        comm.scan_with(&mut acc, &op, comm.chosen::<Scan>(), Prefix::Inclusive)?;
        Ok(B::to_owned_shape(acc))
    }
    fn exscan<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<Option<B::Owned>> {
        let mut acc = self.as_elems().to_vec();
        let defined = comm.scan_with(&mut acc, &op, comm.chosen::<Scan>(), Prefix::Exclusive)?;
        Ok(defined.then(|| B::to_owned_shape(acc)))
    }
}

impl<B, R> ReduceArgs for (&B, &mut R)
where
    B: Buffer + ?Sized,
    R: BufferMut<Elem = B::Elem> + ?Sized,
{
    type Elem = B::Elem;
    type Everywhere = ();
    type Somewhere = ();
    fn allreduce<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<()> {
        let (send, recv) = (self.0.as_elems(), self.1.as_elems_mut());
        comm.allreduce_with(Some(send), recv, &op, comm.chosen::<Allreduce>())
    }
    fn reduce<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O, root: usize) -> Result<()> {
        let (send, recv) = (self.0.as_elems(), self.1.as_elems_mut());
        comm.reduce_with(Some(send), recv, &op, root, comm.chosen::<Reduce>())
    }
    fn scan<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<()> {
        let (send, recv) = (self.0.as_elems(), self.1.as_elems_mut());
        into_same_length("scan", send.len(), recv.len())?;
        recv.copy_from_slice(send);
        InPlace(recv).scan(comm, op)
    }
    fn exscan<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<()> {
        let (send, recv) = (self.0.as_elems(), self.1.as_elems_mut());
        into_same_length("exscan", send.len(), recv.len())?;
        if let Some(v) = send.exscan(comm, op)? {
            recv.copy_from_slice(&v);
        }
        Ok(())
    }
}

/// Checks that a receive buffer is as long as the send buffer, for the forms that need it.
fn into_same_length(call: &'static str, send: usize, recv: usize) -> Result<()> {
    if send == recv {
        return Ok(());
    }
    Err(Error::invalid(
        call,
        format!("the receive buffer has {recv} elements, {send} were expected (the send buffer's)"),
    ))
}

impl<B: BufferMut + ?Sized> ReduceArgs for InPlace<&mut B> {
    type Elem = B::Elem;
    type Everywhere = ();
    type Somewhere = ();
    fn allreduce<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<()> {
        comm.allreduce_with(None, self.0.as_elems_mut(), &op, comm.chosen::<Allreduce>())
    }
    fn reduce<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O, root: usize) -> Result<()> {
        let algorithm = comm.chosen::<Reduce>();
        if comm.rank() == root {
            comm.reduce_with(None, self.0.as_elems_mut(), &op, root, algorithm)
        } else {
            comm.reduce_with(Some(self.0.as_elems()), &mut [], &op, root, algorithm)
        }
    }
    fn scan<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<()> {
        let algorithm = comm.chosen::<Scan>();
        comm.scan_with(self.0.as_elems_mut(), &op, algorithm, Prefix::Inclusive)
            .map(drop)
    }
    fn exscan<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<()> {
        let algorithm = comm.chosen::<Scan>();
        comm.scan_with(self.0.as_elems_mut(), &op, algorithm, Prefix::Exclusive)
            .map(drop)
    }
}

impl<T: Datatype> ReduceArgs for Vec<T> {
    type Elem = T;
    type Everywhere = Vec<T>;
    type Somewhere = Option<Vec<T>>;
    fn allreduce<O: ReduceOp<T>>(mut self, comm: &Comm, op: O) -> Result<Vec<T>> {
        InPlace(&mut self[..]).allreduce(comm, op)?;
        Ok(self)
    }
    fn reduce<O: ReduceOp<T>>(mut self, comm: &Comm, op: O, root: usize) -> Result<Option<Vec<T>>> {
        InPlace(&mut self[..]).reduce(comm, op, root)?;
        Ok((comm.rank() == root).then_some(self))
    }
    fn scan<O: ReduceOp<T>>(mut self, comm: &Comm, op: O) -> Result<Vec<T>> {
        InPlace(&mut self[..]).scan(comm, op)?;
        Ok(self)
    }
    fn exscan<O: ReduceOp<T>>(self, comm: &Comm, op: O) -> Result<Option<Vec<T>>> {
        self[..].exscan(comm, op)
    }
}

impl<B: Buffer + ?Sized> ReduceScatterArgs for &B {
    type Elem = B::Elem;
    type Output = Vec<B::Elem>;
    fn reduce_scatter<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<Vec<B::Elem>> {
        let data = self.as_elems();
        comm.reduce_scatter_with(data, None, &op, comm.chosen::<ReduceScatter>())
    }
}

impl<B: Buffer + ?Sized> ReduceScatterArgs for (&B, Counts<'_>) {
    type Elem = B::Elem;
    type Output = Vec<B::Elem>;
    fn reduce_scatter<O: ReduceOp<B::Elem>>(self, comm: &Comm, op: O) -> Result<Vec<B::Elem>> {
        let (data, counts) = (self.0.as_elems(), Some(self.1 .0));
        comm.reduce_scatter_with(data, counts, &op, comm.chosen::<ReduceScatter>())
    }
}

impl<R: Blocks + ?Sized> ReduceScatterArgs for InPlace<&mut R> {
    type Elem = R::Elem;
    type Output = ();
    fn reduce_scatter<O: ReduceOp<R::Elem>>(self, comm: &Comm, op: O) -> Result<()> {
        let buf = self.0.elems_mut();
        comm.reduce_scatter_in_place_with(buf, None, &op, comm.chosen::<ReduceScatter>())
    }
}

impl<T: Datatype> ReduceScatterArgs for InPlace<Varying<'_, &mut [T]>> {
    type Elem = T;
    type Output = ();
    fn reduce_scatter<O: ReduceOp<T>>(self, comm: &Comm, op: O) -> Result<()> {
        let v = self.0;
        if v.displs.is_some() {
            return Err(Error::invalid(
                "reduce_scatter",
                "in place, the blocks are packed in rank order (MPI_Reduce_scatter has no \
                 displacements): use Varying::packed",
            ));
        }
        let counts = Some(v.counts);
        comm.reduce_scatter_in_place_with(v.buf, counts, &op, comm.chosen::<ReduceScatter>())
    }
}

/// The forms whose impls gather, scatter, allgather and alltoall share but for the names: a
/// send buffer and a receive buffer of blocks `(&x, &mut y)`, the blocks in place
/// `InPlace(&mut y)`, varying blocks in place `InPlace(Varying::new(&mut y, …))`, and for
/// allgather and alltoall (`new:`) a new `Vec` of all blocks from `&x`. Each hands its buffers,
/// the root for the rooted families, and the algorithm chosen to the family's method for that
/// form.
macro_rules! block_forms {
    ($Args:ident :: $method:ident ($($root:ident)?) as $Family:ident:
        $into:ident, $v_into:ident $(; new: $new:ident)?) => {
        $(
            impl<B: Buffer + ?Sized> $Args for &B {
                type Output = Vec<B::Elem>;
                fn $method(self, comm: &Comm) -> Result<Vec<B::Elem>> {
                    comm.$new(self, comm.chosen::<$Family>())
                }
            }
        )?

        impl<B: Buffer + ?Sized, R: Blocks<Elem = B::Elem> + ?Sized> $Args for (&B, &mut R) {
            type Output = ();
            fn $method(self, comm: &Comm $(, $root: usize)?) -> Result<()> {
                let (send, recv) = (self.0.as_elems(), self.1.elems_mut());
                comm.$into(Some(send), recv, $($root,)? comm.chosen::<$Family>())
            }
        }

        impl<R: Blocks + ?Sized> $Args for InPlace<&mut R> {
            type Output = ();
            fn $method(self, comm: &Comm $(, $root: usize)?) -> Result<()> {
                comm.$into(None, self.0.elems_mut(), $($root,)? comm.chosen::<$Family>())
            }
        }

        impl<T: Datatype> $Args for InPlace<Varying<'_, &mut [T]>> {
            type Output = ();
            fn $method(self, comm: &Comm $(, $root: usize)?) -> Result<()> {
                let v = self.0;
                let blocks = (v.counts, &v.displs()?[..]);
                comm.$v_into(None, v.buf, blocks, $($root,)? comm.chosen::<$Family>())
            }
        }
    };
}

// ---- gather -------------------------------------------------------------------------------

block_forms!(
    GatherArgs::gather(root) as Gather:
    gather_into_with, gatherv_into_with
);

impl<B: Buffer + ?Sized> GatherArgs for &B {
    type Output = Option<Vec<B::Elem>>;
    fn gather(self, comm: &Comm, root: usize) -> Result<Self::Output> {
        comm.gather_with(self, root, comm.chosen::<Gather>())
    }
}

impl<B: Buffer + ?Sized> GatherArgs for (&B, Counts<'_>) {
    type Output = Option<Vec<B::Elem>>;
    fn gather(self, comm: &Comm, root: usize) -> Result<Self::Output> {
        comm.gatherv_with(self.0, self.1 .0, root, comm.chosen::<Gather>())
    }
}

impl<B: Buffer + ?Sized> GatherArgs for (&B, Varying<'_, &mut [B::Elem]>) {
    type Output = ();
    fn gather(self, comm: &Comm, root: usize) -> Result<()> {
        let v = self.1;
        let displs = v.displs()?;
        let blocks = (v.counts, &displs[..]);
        comm.gatherv_into_with(
            Some(self.0.as_elems()),
            v.buf,
            blocks,
            root,
            comm.chosen::<Gather>(),
        )
    }
}

impl<T: Datatype> GatherArgs for Vec<T> {
    type Output = Option<Vec<Vec<T>>>;
    fn gather(self, comm: &Comm, root: usize) -> Result<Self::Output> {
        comm.gather_owned_with(self, root, comm.chosen::<Gather>())
    }
}

// ---- scatter ------------------------------------------------------------------------------

block_forms!(
    ScatterArgs::scatter(root) as Scatter:
    scatter_into_with, scatterv_into_with
);

impl<T: Datatype> ScatterArgs for &[T] {
    type Output = Vec<T>;
    fn scatter(self, comm: &Comm, root: usize) -> Result<Vec<T>> {
        comm.scatter_with(self, root, comm.chosen::<Scatter>())
    }
}

impl<T: Datatype> ScatterArgs for &Vec<T> {
    type Output = Vec<T>;
    fn scatter(self, comm: &Comm, root: usize) -> Result<Vec<T>> {
        comm.scatter_with(self, root, comm.chosen::<Scatter>())
    }
}

impl<T: Datatype> ScatterArgs for Vec<T> {
    type Output = Vec<T>;
    fn scatter(self, comm: &Comm, root: usize) -> Result<Vec<T>> {
        comm.scatter_owned_with(self, root, comm.chosen::<Scatter>())
    }
}

impl<T: Datatype> ScatterArgs for Varying<'_, &[T]> {
    type Output = Vec<T>;
    fn scatter(self, comm: &Comm, root: usize) -> Result<Vec<T>> {
        let displs = self.displs()?;
        comm.scatterv_with(
            self.buf,
            self.counts,
            &displs,
            root,
            comm.chosen::<Scatter>(),
        )
    }
}

impl<T: Datatype, R: Blocks<Elem = T> + ?Sized> ScatterArgs for (Varying<'_, &[T]>, &mut R) {
    type Output = ();
    fn scatter(self, comm: &Comm, root: usize) -> Result<()> {
        let (v, recv) = (self.0, self.1.elems_mut());
        let blocks = (v.counts, &v.displs()?[..]);
        comm.scatterv_into_with(Some(v.buf), recv, blocks, root, comm.chosen::<Scatter>())
    }
}

// ---- allgather ----------------------------------------------------------------------------

block_forms!(
    AllgatherArgs::allgather() as Allgather:
    allgather_into_with, allgatherv_into_with; new: allgather_with
);

impl<T: Datatype> AllgatherArgs for Vec<T> {
    type Output = Vec<T>;
    fn allgather(self, comm: &Comm) -> Result<Vec<T>> {
        comm.allgather_with(&self[..], comm.chosen::<Allgather>())
    }
}

impl<B: Buffer + ?Sized> AllgatherArgs for (&B, Counts<'_>) {
    type Output = Vec<B::Elem>;
    fn allgather(self, comm: &Comm) -> Result<Vec<B::Elem>> {
        comm.allgatherv_with(self.0, self.1 .0, comm.chosen::<Allgather>())
    }
}

impl<B: Buffer + ?Sized> AllgatherArgs for (&B, Varying<'_, &mut [B::Elem]>) {
    type Output = ();
    fn allgather(self, comm: &Comm) -> Result<()> {
        let v = self.1;
        let displs = v.displs()?;
        let blocks = (v.counts, &displs[..]);
        comm.allgatherv_into_with(
            Some(self.0.as_elems()),
            v.buf,
            blocks,
            comm.chosen::<Allgather>(),
        )
    }
}

// ---- alltoall -----------------------------------------------------------------------------

block_forms!(
    AlltoallArgs::alltoall() as Alltoall:
    alltoall_into_with, alltoallv_into_with; new: alltoall_with
);

impl<T: Datatype> AlltoallArgs for Vec<Vec<T>> {
    type Output = Vec<Vec<T>>;
    fn alltoall(self, comm: &Comm) -> Result<Vec<Vec<T>>> {
        comm.alltoall_owned_with(self, comm.chosen::<Alltoall>())
    }
}

impl<T: Datatype> AlltoallArgs for (Varying<'_, &[T]>, Counts<'_>) {
    type Output = Vec<T>;
    fn alltoall(self, comm: &Comm) -> Result<Vec<T>> {
        let (s, Counts(recv_counts)) = self;
        let displs = s.displs()?;
        comm.alltoallv_with(
            s.buf,
            s.counts,
            &displs,
            recv_counts,
            comm.chosen::<Alltoall>(),
        )
    }
}

impl<T: Datatype> AlltoallArgs for (Varying<'_, &[T]>, Varying<'_, &mut [T]>) {
    type Output = ();
    fn alltoall(self, comm: &Comm) -> Result<()> {
        let (s, r) = self;
        let (sd, rd) = (s.displs()?, r.displs()?);
        let algorithm = comm.chosen::<Alltoall>();
        comm.alltoallv_into_with(
            Some((s.buf, (s.counts, &sd))),
            r.buf,
            (r.counts, &rd),
            algorithm,
        )
    }
}

impl<T: Datatype, U: Datatype> AlltoallArgs for (PerRank<'_, '_, &[T]>, PerRank<'_, '_, &mut [U]>) {
    type Output = ();
    fn alltoall(self, comm: &Comm) -> Result<()> {
        comm.alltoallw_with(self.0, self.1, comm.chosen::<Alltoall>())
    }
}

// ---- shift --------------------------------------------------------------------------------

impl<B: Buffer + ?Sized> ShiftArgs for &B {
    type Output = Vec<B::Elem>;
    fn shift(self, comm: &Comm, q: isize) -> Result<Vec<B::Elem>> {
        comm.shift_circular_with(self.as_elems().to_vec(), q, comm.chosen::<Shift>())
    }
}

impl<T: Datatype> ShiftArgs for Vec<T> {
    type Output = Vec<T>;
    fn shift(self, comm: &Comm, q: isize) -> Result<Vec<T>> {
        comm.shift_circular_with(self, q, comm.chosen::<Shift>())
    }
}

// ---- the methods --------------------------------------------------------------------------

impl Comm {
    /// Blocks until every rank of the communicator has called it (MPI_Barrier).
    ///
    /// Cost: that of the algorithm chosen (see [`Barrier`]): `Central` `2 (p - 1) alpha` on rank
    /// 0's links, `Dissemination` `ceil(log2 p) alpha`, `Tree` `2 ceil(log2 p) alpha`,
    /// `SharedMemory` one synchronisation.
    ///
    /// # Errors
    ///
    /// As for every collective, [`Error::CollectiveMismatch`] if the ranks call different
    /// collectives and [`Error::Aborted`](crate::Error::Aborted) if another rank fails.
    ///
    /// ```
    /// use rpar::Barrier;
    /// rpar::run(4, |world| world.barrier())?;
    /// rpar::run(5, |world| world.using(Barrier::Tree).barrier())?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn barrier(&self) -> Result<()> {
        self.barrier_with(self.chosen::<Barrier>())
    }

    /// Broadcasts the root's buffer to every rank (MPI_Bcast).
    ///
    /// `buf`: `&mut x` (a value, a slice, a `Vec`; every rank passes the same length), or
    /// [`Typed::new(&mut x, &ty, n)`](Typed) for `n` elements of a committed datatype (the
    /// ranks' types may differ where their type signatures agree, MPI's rule).
    ///
    /// Cost: that of the algorithm chosen (see [`Bcast`]; [`Comm::using`]), for `m` bytes:
    /// `Binomial` `ceil(log2 p)(alpha + beta m)`, `SharedMemory` `c + beta m` per reader.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`](crate::Error::RankOutOfRange) for a root out of range; for a
    /// typed buffer, [`Error::BufferOutOfBounds`](crate::Error::BufferOutOfBounds) if the type
    /// reaches past it and [`Error::TypeMismatch`](crate::Error::TypeMismatch) if the ranks'
    /// signatures disagree; as for every collective,
    /// [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) and
    /// [`Error::Aborted`](crate::Error::Aborted).
    ///
    /// ```
    /// use rpar::Bcast;
    /// let got = rpar::run(4, |world| {
    ///     let mut x = [world.rank() as u32; 3];
    ///     world.bcast(&mut x[..], 2)?;
    ///     world.using(Bcast::Pipeline).bcast(&mut x[..], 1)?; // the algorithm as a value
    ///     Ok(x)
    /// })?;
    /// assert_eq!(got, vec![[2; 3]; 4]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn bcast<B: BcastBuf>(&self, buf: B, root: usize) -> Result<()> {
        buf.bcast(self, root)
    }

    /// Combines every rank's data elementwise with `op` at `root` (MPI_Reduce).
    ///
    /// `args`: `&x` (the root gets `Some` new result of `x`'s shape, the others `None`),
    /// `(&x, &mut y)` (the result in the root's `y`), [`InPlace(&mut y)`](InPlace) (at the root
    /// `y` holds its data and then the result; elsewhere `y` is the data), or an owned `Vec`
    /// (reduced in place and returned at the root). Every rank passes the same length;
    /// non-commutative operators get the rank-ordered result.
    ///
    /// Cost: that of the algorithm chosen (see [`Reduce`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`](crate::Error::RankOutOfRange) for a root out of range,
    /// [`Error::InvalidArgument`] for a receive buffer of another length; as for every
    /// collective, [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) (other
    /// operators or lengths included) and [`Error::Aborted`](crate::Error::Aborted).
    ///
    /// ```
    /// use rpar::{InPlace, Max, Reduce, Sum};
    /// let got = rpar::run(4, |world| {
    ///     let r = world.rank() as u64;
    ///     let sum = world.reduce(&[r, 1][..], Sum, 0)?;           // Some([6, 4]) at rank 0
    ///     let mut most = [r];
    ///     world.reduce(InPlace(&mut most[..]), Max, 3)?;           // [3] at rank 3
    ///     let mut out = [0u64; 2];
    ///     world.using(Reduce::Binomial).reduce((&[r, 2 * r][..], &mut out[..]), Sum, 1)?;
    ///     Ok((sum, most, out))
    /// })?;
    /// assert_eq!(got[0].0, Some(vec![6, 4]));
    /// assert_eq!((got[3].1, got[1].2), ([3], [6, 12]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn reduce<A: ReduceArgs, O: ReduceOp<A::Elem>>(
        &self,
        args: A,
        op: O,
        root: usize,
    ) -> Result<A::Somewhere> {
        args.reduce(self, op, root)
    }

    /// Combines every rank's data elementwise with `op` and gives every rank the result
    /// (MPI_Allreduce).
    ///
    /// `args`: `&x` (a new result of `x`'s shape: a value for a value, a `Vec` for a slice),
    /// `(&x, &mut y)`, [`InPlace(&mut y)`](InPlace), or an owned `Vec` (reduced in place and
    /// returned). Every rank passes the same length; every rank gets bitwise the same result,
    /// rank-ordered for non-commutative operators.
    ///
    /// Cost: that of the algorithm chosen (see [`Allreduce`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a receive buffer of another length, and for
    /// [`Allreduce::Ring`] with a non-commutative operator; as for every collective,
    /// [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) and
    /// [`Error::Aborted`](crate::Error::Aborted).
    ///
    /// ```
    /// use rpar::{Allreduce, InPlace, Sum};
    /// let got = rpar::run(4, |world| {
    ///     let r = world.rank() as u64;
    ///     let total = world.allreduce(&r, Sum)?;                         // 6
    ///     let ring = world.using(Allreduce::Ring).allreduce(&[r, 1][..], Sum)?; // [6, 4]
    ///     let mut v = vec![r; 2];
    ///     world.allreduce(InPlace(&mut v[..]), Sum)?;
    ///     let owned = world.allreduce(vec![1u8; 3], Sum)?;              // the same Vec
    ///     Ok((total, ring, v, owned))
    /// })?;
    /// assert_eq!(got[1], (6, vec![6, 4], vec![6, 6], vec![4, 4, 4]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn allreduce<A: ReduceArgs, O: ReduceOp<A::Elem>>(
        &self,
        args: A,
        op: O,
    ) -> Result<A::Everywhere> {
        args.allreduce(self, op)
    }

    /// Inclusive prefix reduction: rank `r` gets `x0 ∘ x1 ∘ … ∘ xr` (MPI_Scan).
    ///
    /// `args`: as [`Comm::allreduce`]'s.
    ///
    /// Cost: that of the algorithm chosen (see [`Scan`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::allreduce`].
    ///
    /// ```
    /// use rpar::{InPlace, Sum};
    /// let got = rpar::run(4, |world| {
    ///     let prefix = world.scan(&(world.rank() as u32 + 1), Sum)?;
    ///     let mut v = [1u8, world.rank() as u8];
    ///     world.scan(InPlace(&mut v[..]), Sum)?;
    ///     Ok((prefix, v))
    /// })?;
    /// assert_eq!(got, vec![(1, [1, 0]), (3, [2, 1]), (6, [3, 3]), (10, [4, 6])]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn scan<A: ReduceArgs, O: ReduceOp<A::Elem>>(
        &self,
        args: A,
        op: O,
    ) -> Result<A::Everywhere> {
        args.scan(self, op)
    }

    /// Exclusive prefix reduction: rank `r > 0` gets `x0 ∘ … ∘ x(r-1)`; rank 0 gets nothing
    /// (MPI_Exscan, where rank 0's receive buffer is undefined: `None`, or left untouched).
    ///
    /// `args`: as [`Comm::reduce`]'s (`Some` result on every rank but 0).
    ///
    /// Cost: that of the algorithm chosen (see [`Scan`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::allreduce`].
    ///
    /// ```
    /// use rpar::Sum;
    /// let got = rpar::run(4, |world| world.exscan(&(world.rank() as u32 + 1), Sum))?;
    /// assert_eq!(got, vec![None, Some(1), Some(3), Some(6)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn exscan<A: ReduceArgs, O: ReduceOp<A::Elem>>(
        &self,
        args: A,
        op: O,
    ) -> Result<A::Somewhere> {
        args.exscan(self, op)
    }

    /// Combines every rank's vector elementwise with `op` and scatters the result: rank `i`
    /// gets block `i` (MPI_Reduce_scatter_block, MPI_Reduce_scatter).
    ///
    /// `args`: `&x` (blocks of `x.len() / p` elements each: a new `Vec` of this rank's block),
    /// `(&x, Counts(&counts))` (block `i` of `counts[i]` elements, packed: MPI_Reduce_scatter),
    /// [`InPlace(&mut x)`](InPlace) (this rank's block lands at the start of `x`), or
    /// `InPlace(Varying::packed(&mut x, &counts))`.
    ///
    /// Cost: that of the algorithm chosen (see [`ReduceScatter`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a length that is not `p` blocks or counts that are not
    /// one per rank or do not add up; as for every collective,
    /// [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) and
    /// [`Error::Aborted`](crate::Error::Aborted).
    ///
    /// ```
    /// use rpar::{Counts, Sum};
    /// let got = rpar::run(3, |world| {
    ///     let v: Vec<u32> = (0..6).collect();
    ///     let block = world.reduce_scatter(&v[..], Sum)?;                 // 2 each
    ///     let uneven = world.reduce_scatter((&v[..], Counts(&[1, 2, 3])), Sum)?;
    ///     Ok((block, uneven))
    /// })?;
    /// assert_eq!(got[1], (vec![6, 9], vec![3, 6]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn reduce_scatter<A: ReduceScatterArgs, O: ReduceOp<A::Elem>>(
        &self,
        args: A,
        op: O,
    ) -> Result<A::Output> {
        args.reduce_scatter(self, op)
    }

    /// Collects every rank's block at `root`, in rank order (MPI_Gather, MPI_Gatherv).
    ///
    /// `args`: `&x` (the root gets `Some` new `Vec` of all blocks, the others `None`; every rank
    /// sends as many elements), `(&x, &mut all)`, [`InPlace(&mut all)`](InPlace) (the root's
    /// own block is in place; elsewhere the buffer is the block sent), an owned `Vec` (moved:
    /// the root gets each rank's `Vec`), the `v`-forms `(&x, Counts(&counts))`,
    /// `(&x, Varying::new(&mut all, &counts, &displs))` and
    /// `InPlace(Varying::new(&mut all, &counts, &displs))`, and with derived datatypes
    /// `(Typed::new(&x, &ty, n), Typed::new(&mut all, &ty2, m))` and
    /// `(Typed::new(&x, &ty, n), Typed::varying(&mut all, &ty2, &counts, &displs))`. MPI ignores
    /// the receive side except at the root: elsewhere pass an empty one.
    ///
    /// Cost: that of the algorithm chosen (see [`Gather`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`](crate::Error::RankOutOfRange) for a root out of range,
    /// [`Error::InvalidArgument`] for a receive side that does not hold the blocks (a length,
    /// counts not one per rank, overlapping blocks), [`Error::TypeMismatch`](crate::Error::TypeMismatch)
    /// for typed sides whose signatures disagree; as for every collective,
    /// [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) and
    /// [`Error::Aborted`](crate::Error::Aborted).
    ///
    /// ```
    /// use rpar::{Counts, Varying};
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank() as u16;
    ///     let all = world.gather(&r, 0)?;                               // Some([0, 1, 2]) at 0
    ///     let mine = vec![r; world.rank() + 1];
    ///     let uneven = world.gather((&mine[..], Counts(&[1, 2, 3])), 2)?;
    ///     let mut spread = [9u16; 7];
    ///     let (counts, displs) = ([1, 2, 3], [6, 3, 0]);
    ///     world.gather((&mine[..], Varying::new(&mut spread[..], &counts, &displs)), 1)?;
    ///     Ok((all, uneven, spread))
    /// })?;
    /// assert_eq!(got[0].0, Some(vec![0, 1, 2]));
    /// assert_eq!(got[2].1, Some(vec![0, 1, 1, 2, 2, 2]));
    /// assert_eq!(got[1].2, [2, 2, 2, 1, 1, 9, 0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn gather<A: GatherArgs>(&self, args: A, root: usize) -> Result<A::Output> {
        args.gather(self, root)
    }

    /// Sends block `i` of the root's data to rank `i` (MPI_Scatter, MPI_Scatterv).
    ///
    /// `args`: `&all` (`p` equal blocks; every rank gets a new `Vec` of its block; elsewhere
    /// than the root the slice is ignored and may be empty), `(&all, &mut mine)`,
    /// [`InPlace(&mut all)`](InPlace) (at the root, its block stays in place; elsewhere the
    /// buffer receives the block), an owned `Vec` (the root's, moved into the blocks), the
    /// `v`-forms `Varying::new(&all, &counts, &displs)` (a new `Vec` of `counts[me]`),
    /// `(Varying::new(&all, &counts, &displs), &mut mine)` and
    /// `InPlace(Varying::new(&mut all, &counts, &displs))`, and with derived datatypes
    /// `(Typed::new(&all, &ty, n), Typed::new(&mut mine, &ty2, m))` and
    /// `(Typed::varying(&all, &ty, &counts, &displs), Typed::new(&mut mine, &ty2, m))`.
    ///
    /// Cost: that of the algorithm chosen (see [`Scatter`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// As [`Comm::gather`]'s, for the send side at the root and the receive side elsewhere.
    ///
    /// ```
    /// use rpar::Varying;
    /// let got = rpar::run(3, |world| {
    ///     let all: Vec<u8> = (0..6).collect();
    ///     let even = world.scatter(&all[..], 0)?;                       // 2 each
    ///     let uneven = world.scatter(Varying::new(&all[..], &[3, 1, 2], &[0, 3, 4]), 2)?;
    ///     Ok((even, uneven))
    /// })?;
    /// assert_eq!(got[1], (vec![2, 3], vec![3]));
    /// assert_eq!(got[2].1, vec![4, 5]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn scatter<A: ScatterArgs>(&self, args: A, root: usize) -> Result<A::Output> {
        args.scatter(self, root)
    }

    /// Gives every rank every rank's block, in rank order (MPI_Allgather, MPI_Allgatherv).
    ///
    /// `args`: as [`Comm::gather`]'s, with no root (every rank gets the result): `&x` (a new
    /// `Vec`), an owned `Vec`, `(&x, &mut all)`, [`InPlace(&mut all)`](InPlace) (each rank's
    /// block in place), `(&x, Counts(&counts))`, `(&x, Varying::new(&mut all, &counts,
    /// &displs))`, `InPlace(Varying::new(…))`, and the typed pairs.
    ///
    /// Cost: that of the algorithm chosen (see [`Allgather`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// As [`Comm::gather`]'s.
    ///
    /// ```
    /// use rpar::{Allgather, InPlace};
    /// let got = rpar::run(4, |world| {
    ///     let r = world.rank() as u32;
    ///     let all = world.using(Allgather::Ring).allgather(&[r, r][..])?;
    ///     let mut mine = [0u32; 4];
    ///     mine[world.rank()] = 10 * r;
    ///     world.allgather(InPlace(&mut mine[..]))?;
    ///     Ok((all, mine))
    /// })?;
    /// assert_eq!(got[3], (vec![0, 0, 1, 1, 2, 2, 3, 3], [0, 10, 20, 30]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn allgather<A: AllgatherArgs>(&self, args: A) -> Result<A::Output> {
        args.allgather(self)
    }

    /// Sends block `j` of every rank's data to rank `j`: rank `j` gets block `j` of every rank,
    /// in rank order (MPI_Alltoall, MPI_Alltoallv).
    ///
    /// `args`: `&x` (`p` equal blocks: a new `Vec`), `(&x, &mut y)`,
    /// [`InPlace(&mut y)`](InPlace), an owned `Vec<Vec<T>>` (block `j` moved to rank `j`), the
    /// `v`-forms `(Varying::new(&x, &counts, &displs), Counts(&recv_counts))`,
    /// `(Varying::new(&x, …), Varying::new(&mut y, …))` and `InPlace(Varying::new(&mut y, …))`,
    /// and with derived datatypes `(Typed::new(&x, &ty, n), Typed::new(&mut y, &ty2, m))` and
    /// `(Typed::varying(&x, &ty, …), Typed::varying(&mut y, &ty2, …))`.
    ///
    /// Cost: that of the algorithm chosen (see [`Alltoall`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// As [`Comm::gather`]'s.
    ///
    /// ```
    /// use rpar::{Counts, Varying};
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank() as u8;
    ///     let blocks = world.alltoall(&[r, r, r][..])?;                // one from each
    ///     // rank r sends j + 1 values to rank j
    ///     let send = [r; 6];
    ///     let (counts, displs) = ([1, 2, 3], [0, 1, 3]);
    ///     let mine = [world.rank() + 1; 3];
    ///     let uneven = world.alltoall((Varying::new(&send[..], &counts, &displs), Counts(&mine)))?;
    ///     Ok((blocks, uneven))
    /// })?;
    /// assert_eq!(got[2], (vec![0, 1, 2], vec![0, 0, 0, 1, 1, 1, 2, 2, 2]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall<A: AlltoallArgs>(&self, args: A) -> Result<A::Output> {
        args.alltoall(self)
    }

    /// The lecture's circular `q`-shift: rank `i` sends its data to rank `(i + q) mod p` and
    /// gets rank `(i - q) mod p`'s (not an MPI collective; MPI writes it as MPI_Sendrecv with
    /// the two neighbours).
    ///
    /// `args`: `&x` (copied) or an owned `Vec` (moved where the algorithm can).
    ///
    /// Cost: that of the algorithm chosen (see [`Shift`]; [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// As for every collective, [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch)
    /// (another `q` included) and [`Error::Aborted`](crate::Error::Aborted).
    ///
    /// ```
    /// use rpar::Shift;
    /// let got = rpar::run(4, |world| {
    ///     let moved = world.shift_circular(&world.rank(), 1)?;
    ///     let gray = world.using(Shift::GrayCode).shift_circular(vec![world.rank()], -1)?;
    ///     Ok((moved, gray))
    /// })?;
    /// assert_eq!(got[0], (vec![3], vec![1]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn shift_circular<A: ShiftArgs>(&self, args: A, q: isize) -> Result<A::Output> {
        args.shift(self, q)
    }
}
