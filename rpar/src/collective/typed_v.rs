//! The v-collectives on committed derived datatypes (MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv
//! and MPI_Alltoallv with a send and a receive datatype): [`Comm::gatherv_typed`],
//! [`Comm::scatterv_typed`], [`Comm::allgatherv_typed`], [`Comm::alltoallv_typed`] and their
//! `_with` forms. Each rank's block has a count of its own, and a block's displacement counts
//! in extents of the side's type, as in MPI: rank `i`'s block of a varying side is `counts[i]`
//! elements whose displacement 0 is `displs[i] * extent(type)` bytes into the buffer (which must
//! be in it). Displacements may come in any order and blocks may be empty; bytes outside the
//! receive blocks are left as they were.
//!
//! The three steps of the typed collectives in `typed.rs`, whose pieces these reuse:
//!
//! 1. every rank checks the sides it reads (a non-root's receive side of a gatherv and its send
//!    side of a scatterv are ignored, as MPI ignores them): a count and a displacement per
//!    rank, every block in its buffer and on values of its basic types, and on a receive side
//!    that no byte is written twice (MPI calls that erroneous; send blocks may overlap);
//! 2. the ranks compare, for every pair, what rank `i` sends rank `j` with what `j` receives
//!    from `i` (MPI's rule, per pair now that the counts differ): each rank puts the
//!    fingerprints of its types and its per-rank counts into one allgather, so that every rank
//!    sees every mismatch and every other rank's failed check and returns the same error;
//! 3. the blocks travel packed, as bytes, through the byte v-collective of the same family
//!    with the chosen algorithm (rank `i`'s block `counts[i] * size(type)` bytes), and each
//!    receiver unpacks them into place.
//!
//! So the cost is that of the byte v-collective, one pack and one unpack of each rank's blocks,
//! and the signature check: an allgather of 72 bytes per rank plus `8 p` per varying side.

use super::layout::{offsets_of_counts, zeroed_vec};
use super::typed::{Blocks, Flow, Side};
use super::{Allgather, Alltoall, Gather, Scatter};
use crate::comm::Call;
use crate::datatype::{CommittedType, Datatype};
use crate::{Comm, Result};

/// The blocks of a packed stream that holds every rank's block of a varying side one after
/// another in rank order: their byte counts and displacements, for the byte v-collective.
struct Packed {
    counts: Vec<usize>,
    displs: Vec<usize>,
}

impl Packed {
    /// The layout of `counts[i]` elements of `ty` for each rank `i`, back to back (the side's
    /// check in the prologue has bounded them; an overflow here is still an error, not a wrap).
    fn of(ty: &CommittedType, counts: &[usize], call: &'static str) -> Result<Packed> {
        let counts = counts
            .iter()
            .map(|&n| {
                n.checked_mul(ty.size()).ok_or_else(|| {
                    crate::Error::invalid(
                        call,
                        format!("{n} elements of {} bytes overflow usize", ty.size()),
                    )
                })
            })
            .collect::<Result<Vec<usize>>>()?;
        let mut displs = offsets_of_counts(&counts, call)?;
        displs.pop();
        Ok(Packed { counts, displs })
    }

    /// Bytes in all.
    fn total(&self) -> usize {
        self.displs.last().map_or(0, |&d| d) + self.counts.last().map_or(0, |&n| n)
    }
}

impl<T: Datatype> Side<'_, T> {
    /// Packs every rank's block of this varying side, in rank order, into one stream.
    fn pack_blocks(&self, call: &'static str) -> Result<(Vec<u8>, Packed)> {
        let counts = self.counts().unwrap_or(&[]);
        let layout = Packed::of(self.ty, counts, call)?;
        let mut out = zeroed_vec::<u8>(layout.total(), call)?;
        let mut position = 0;
        for i in self.nonempty() {
            let base = self.block_base(i, call)?;
            self.ty
                .pack_from_byte(call, self.buf, base, counts[i], &mut out, &mut position)?;
        }
        Ok((out, layout))
    }
}

/// Unpacks `packed`, every rank's block of the varying side `(buf, ty, counts, displs)` one
/// after another in rank order, into place.
fn unpack_blocks<U: Datatype>(
    packed: &[u8],
    (buf, ty, counts, displs): (&mut [U], &CommittedType, &[usize], &[usize]),
    call: &'static str,
) -> Result<()> {
    let side = varying((&*buf, ty, counts, displs), "receive");
    let blocks: Vec<(usize, usize)> = side
        .nonempty()
        .map(|i| Ok((side.block_base(i, call)?, counts[i])))
        .collect::<Result<_>>()?;
    let mut position = 0;
    for (base, n) in blocks {
        ty.unpack_to_byte(call, packed, &mut position, buf, base, n)?;
    }
    Ok(())
}

/// A varying side: rank `i`'s block `counts[i]` elements from `displs[i]` extents in.
fn varying<'a, T>(
    (buf, ty, counts, displs): (&'a [T], &'a CommittedType, &'a [usize], &'a [usize]),
    what: &'static str,
) -> Side<'a, T> {
    Side {
        buf,
        ty,
        blocks: Some(Blocks::Varying {
            counts,
            displs,
            what,
        }),
    }
}

/// A side of one block of `count` elements from the buffer's start, if read here.
fn single<'a, T>((buf, ty, count): (&'a [T], &'a CommittedType, usize), read: bool) -> Side<'a, T> {
    Side {
        buf,
        ty,
        blocks: read.then_some(Blocks::Uniform { count, blocks: 1 }),
    }
}

/// A side that is not read at this rank (MPI ignores it).
fn unread<'a, T>(buf: &'a [T], ty: &'a CommittedType) -> Side<'a, T> {
    Side {
        buf,
        ty,
        blocks: None,
    }
}

impl Comm {
    /// Gathers blocks of different lengths of derived datatypes at `root` (MPI_Gatherv with
    /// derived datatypes): rank `i` sends `send_count` elements laid out by `send_ty` in its
    /// `send`, and they land at the root as `recv_counts[i]` elements of `recv_ty` whose
    /// displacement 0 is `displs[i] * recv_ty.extent()` bytes into `recv`; `recv`, `recv_ty`,
    /// `recv_counts` and `displs` are read at the root only. What rank `i` sends must have the
    /// type signature of what the root receives from it (MPI's rule). Displacements may come in
    /// any order, blocks may be empty, and elements of `recv` outside the blocks are left as
    /// they were.
    ///
    /// Cost: that of [`Comm::gatherv_into`] of the packed bytes, one pack per rank and one
    /// unpack at the root, and the signature check (an allgather of 72 bytes per rank and
    /// `8 p` more from the root); at the root, for a receive type whose elements reach past
    /// their extent (a resized column), the overlap check sorts the byte pieces of all the
    /// blocks (O(b log b), `b` pieces).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`](crate::Error::RankOutOfRange) on every rank for a bad `root`;
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) at the root if `recv_counts` or
    /// `displs` has not one entry per rank, if a block starts outside `recv` or two receive blocks
    /// write the same byte (MPI calls such a call erroneous), and
    /// [`Error::BufferOutOfBounds`](crate::Error::BufferOutOfBounds) or `InvalidArgument` at a
    /// rank whose type reaches outside its buffer or lands on padding or a value of another type
    /// — all checked before anything moves, the other ranks getting an `InvalidArgument` naming
    /// the rank; [`Error::TypeMismatch`](crate::Error::TypeMismatch) on every rank if what a rank
    /// sends does not have the signature of what the root receives from it; and, as for every
    /// collective, [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) if the ranks
    /// call different collectives and [`Error::Aborted`](crate::Error::Aborted) if another rank
    /// fails during the call.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // rank r sends the first r + 1 entries of column 0 of its 3 x 2 matrix; the root puts
    /// // them into rows of a 3 x 4 matrix, the last rank's first
    /// let one = i32::type_map().commit();
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank() as i32;
    ///     let m = [r, 0, 10 + r, 0, 20 + r, 0];
    ///     let first = TypeMap::vector(r as usize + 1, 1, 2, &i32::type_map())?.commit();
    ///     let mut rows = [-1i32; 12];
    ///     world.gatherv_typed(&m, &first, 1, &mut rows, &one, &[1, 2, 3], &[8, 4, 0], 0)?;
    ///     Ok(rows)
    /// })?;
    /// assert_eq!(got[0], [2, 12, 22, -1, 1, 11, -1, -1, 0, -1, -1, -1]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)] // MPI_Gatherv's own argument list
    pub fn gatherv_typed<T: Datatype, U: Datatype>(
        &self,
        send: &[T],
        send_ty: &CommittedType,
        send_count: usize,
        recv: &mut [U],
        recv_ty: &CommittedType,
        recv_counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<()> {
        let send = (send, send_ty, send_count);
        let recv = (recv, recv_ty, recv_counts, displs);
        self.gatherv_typed_with(send, recv, root, self.chosen::<Gather>())
    }

    /// [`Comm::gatherv_typed`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn gatherv_typed_with<T: Datatype, U: Datatype>(
        &self,
        (send, send_ty, send_count): (&[T], &CommittedType, usize),
        (recv, recv_ty, recv_counts, displs): (&mut [U], &CommittedType, &[usize], &[usize]),
        root: usize,
        algorithm: Gather,
    ) -> Result<()> {
        const CALL: &str = "gatherv_typed";
        self.collective(Call::new(CALL).root(root), &algorithm, || {
            super::layout::check_root(self, root)?;
            let is_root = self.rank() == root;
            let sides = (
                single((send, send_ty, send_count), true),
                if is_root {
                    varying((&*recv, recv_ty, recv_counts, displs), "receive")
                } else {
                    unread(&*recv, recv_ty)
                },
            );
            let flow = Flow::To(root);
            self.typed_prologue_v(CALL, &sides.0, &sides.1, flow, |i| [false, i == root])?;
            let packed = send_ty.pack_to_vec(send, send_count)?;
            if !is_root {
                return self.gatherv_into_with(&packed[..], &mut [], &[], &[], root, algorithm);
            }
            let layout = Packed::of(recv_ty, recv_counts, CALL)?;
            let mut gathered = zeroed_vec::<u8>(layout.total(), CALL)?;
            let blocks = (&layout.counts[..], &layout.displs[..]);
            self.gatherv_into_with(
                &packed[..],
                &mut gathered,
                blocks.0,
                blocks.1,
                root,
                algorithm,
            )?;
            unpack_blocks(&gathered, (recv, recv_ty, recv_counts, displs), CALL)
        })
    }

    /// Scatters blocks of different lengths of derived datatypes from `root` (MPI_Scatterv with
    /// derived datatypes): rank `i` gets the root's `send_counts[i]` elements of `send_ty` whose
    /// displacement 0 is `displs[i] * send_ty.extent()` bytes into `send`, and receives them as
    /// `recv_count` elements of `recv_ty` in its `recv`; `send`, `send_ty`, `send_counts` and
    /// `displs` are read at the root only. What the root sends rank `i` must have the type
    /// signature of what `i` receives (MPI's rule). Send blocks may overlap (an element may be
    /// sent to several ranks).
    ///
    /// Cost: that of [`Comm::scatterv`] of the packed bytes, one pack at the root and one
    /// unpack per rank, and the signature check (an allgather of 72 bytes per rank and `8 p`
    /// more from the root).
    ///
    /// # Errors
    ///
    /// As [`Comm::gatherv_typed`], with the roles of send and receive exchanged (but send
    /// blocks may overlap).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // columns of the root's 3 x 3 matrix (a column resized to one element, so that
    /// // displacement k is column k): column 2 to rank 0, column 0 to rank 1, columns 0 and 1
    /// // to rank 2 (send blocks may overlap), each received as contiguous values
    /// let column = TypeMap::vector(3, 1, 3, &u8::type_map())?.resized(0, 1)?.commit();
    /// let one = u8::type_map().commit();
    /// let got = rpar::run(3, |world| {
    ///     let m: Vec<u8> = (0..9).collect(); // read at the root only
    ///     let n = if world.rank() == 2 { 6 } else { 3 };
    ///     let mut mine = vec![0u8; n];
    ///     world.scatterv_typed(&m, &column, &[1, 1, 2], &[2, 0, 0], &mut mine, &one, n, 0)?;
    ///     Ok(mine)
    /// })?;
    /// assert_eq!(got, vec![vec![2, 5, 8], vec![0, 3, 6], vec![0, 3, 6, 1, 4, 7]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)] // MPI_Scatterv's own argument list
    pub fn scatterv_typed<T: Datatype, U: Datatype>(
        &self,
        send: &[T],
        send_ty: &CommittedType,
        send_counts: &[usize],
        displs: &[usize],
        recv: &mut [U],
        recv_ty: &CommittedType,
        recv_count: usize,
        root: usize,
    ) -> Result<()> {
        let send = (send, send_ty, send_counts, displs);
        let recv = (recv, recv_ty, recv_count);
        self.scatterv_typed_with(send, recv, root, self.chosen::<Scatter>())
    }

    /// [`Comm::scatterv_typed`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn scatterv_typed_with<T: Datatype, U: Datatype>(
        &self,
        (send, send_ty, send_counts, displs): (&[T], &CommittedType, &[usize], &[usize]),
        (recv, recv_ty, recv_count): (&mut [U], &CommittedType, usize),
        root: usize,
        algorithm: Scatter,
    ) -> Result<()> {
        const CALL: &str = "scatterv_typed";
        self.collective(Call::new(CALL).root(root), &algorithm, || {
            super::layout::check_root(self, root)?;
            let is_root = self.rank() == root;
            let sides = (
                if is_root {
                    varying((send, send_ty, send_counts, displs), "send")
                } else {
                    unread(send, send_ty)
                },
                single((&*recv, recv_ty, recv_count), true),
            );
            let flow = Flow::From(root);
            self.typed_prologue_v(CALL, &sides.0, &sides.1, flow, |i| [i == root, false])?;
            let mine = if is_root {
                let (packed, layout) = sides.0.pack_blocks(CALL)?;
                let blocks = (&layout.counts[..], &layout.displs[..]);
                self.scatterv_with(&packed, blocks.0, blocks.1, root, algorithm)?
            } else {
                self.scatterv_with::<u8>(&[], &[], &[], root, algorithm)?
            };
            recv_ty.unpack(&mine, &mut 0, recv, recv_count)
        })
    }

    /// Gathers blocks of different lengths of derived datatypes on every rank (MPI_Allgatherv
    /// with derived datatypes): rank `i` sends `send_count` elements laid out by `send_ty` in
    /// its `send`, and every rank receives them as `recv_counts[i]` elements of `recv_ty` whose
    /// displacement 0 is `displs[i] * recv_ty.extent()` bytes into its `recv`. What rank `i`
    /// sends must have the type signature of what every rank receives from it (MPI's rule).
    /// Elements of `recv` outside the blocks are left as they were.
    ///
    /// Cost: that of [`Comm::allgatherv_into`] of the packed bytes, one pack and one unpack per
    /// rank, and the signature check (an allgather of `72 + 8 p` bytes per rank, and `p^2`
    /// comparisons on each).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) if `recv_counts` or `displs` has
    /// not one entry per rank, a block starts outside `recv` or two receive blocks write the same
    /// byte (MPI calls such a call erroneous), and
    /// [`Error::BufferOutOfBounds`](crate::Error::BufferOutOfBounds) or `InvalidArgument` if a type
    /// reaches outside its buffer or lands on padding or a value of another type — all checked
    /// before anything moves, the other ranks getting an `InvalidArgument` naming the rank;
    /// [`Error::TypeMismatch`](crate::Error::TypeMismatch) on every rank if what a rank sends does
    /// not have the signature of what another receives from it; and, as for every collective,
    /// [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) if the ranks call different
    /// collectives and [`Error::Aborted`](crate::Error::Aborted) if another rank fails during the
    /// call.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // rank r contributes r + 1 values, received into every other element (a value whose
    /// // extent is two), rank 1's block at element position 1, rank 2's at 3
    /// let one = u32::type_map().commit();
    /// let every_other = TypeMap::vector(1, 1, 1, &u32::type_map())?.resized(0, 8)?.commit();
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank();
    ///     let mine = vec![r as u32 + 1; r + 1];
    ///     let mut all = [0u32; 12];
    ///     world.allgatherv_typed(&mine, &one, r + 1, &mut all, &every_other, &[1, 2, 3], &[0, 1, 3])?;
    ///     Ok(all)
    /// })?;
    /// assert!(got.iter().all(|a| *a == [1, 0, 2, 0, 2, 0, 3, 0, 3, 0, 3, 0]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)] // MPI_Allgatherv's own argument list
    pub fn allgatherv_typed<T: Datatype, U: Datatype>(
        &self,
        send: &[T],
        send_ty: &CommittedType,
        send_count: usize,
        recv: &mut [U],
        recv_ty: &CommittedType,
        recv_counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        let send = (send, send_ty, send_count);
        let recv = (recv, recv_ty, recv_counts, displs);
        self.allgatherv_typed_with(send, recv, self.chosen::<Allgather>())
    }

    /// [`Comm::allgatherv_typed`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn allgatherv_typed_with<T: Datatype, U: Datatype>(
        &self,
        (send, send_ty, send_count): (&[T], &CommittedType, usize),
        (recv, recv_ty, recv_counts, displs): (&mut [U], &CommittedType, &[usize], &[usize]),
        algorithm: Allgather,
    ) -> Result<()> {
        const CALL: &str = "allgatherv_typed";
        self.collective(Call::new(CALL), &algorithm, || {
            let sides = (
                single((send, send_ty, send_count), true),
                varying((&*recv, recv_ty, recv_counts, displs), "receive"),
            );
            self.typed_prologue_v(CALL, &sides.0, &sides.1, Flow::All, |_| [false, true])?;
            let packed = send_ty.pack_to_vec(send, send_count)?;
            let layout = Packed::of(recv_ty, recv_counts, CALL)?;
            let gathered = self.allgatherv_with(&packed[..], &layout.counts, algorithm)?;
            unpack_blocks(&gathered, (recv, recv_ty, recv_counts, displs), CALL)
        })
    }

    /// Alltoall with blocks of different lengths of derived datatypes (MPI_Alltoallv with
    /// derived datatypes): `send_counts[j]` elements of `send_ty` whose displacement 0 is
    /// `send_displs[j] * send_ty.extent()` bytes into `send` go to rank `j`, which receives them
    /// as `recv_counts[i]` elements of `recv_ty` at `recv_displs[i] * recv_ty.extent()` bytes
    /// into its `recv` (`i` the sender). What rank `i` sends rank `j` must have the type
    /// signature of what `j` receives from `i` (MPI's rule). Send blocks may overlap; elements
    /// of `recv` outside the blocks are left as they were.
    ///
    /// Cost: that of [`Comm::alltoallv_into`] of the packed bytes, one pack and one unpack per
    /// rank, and the signature check (an allgather of `72 + 16 p` bytes per rank, and `p^2`
    /// comparisons on each).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::allgatherv_typed`], for the send counts and displacements as well.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // rank r sends j + 1 copies of 10 r + j to rank j, from a buffer with the blocks in
    /// // reverse order; every rank receives them in rank order
    /// let one = u8::type_map().commit();
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank();
    ///     let j = |j: usize| vec![(10 * r + j) as u8; j + 1];
    ///     let send: Vec<u8> = [j(2), j(1), j(0)].concat(); // blocks at 5, 3, 0
    ///     let n = r + 1; // what every rank sends here
    ///     let mut recv = [0u8; 9];
    ///     world.alltoallv_typed(&send, &one, &[1, 2, 3], &[5, 3, 0],
    ///                           &mut recv, &one, &[n; 3], &[0, n, 2 * n])?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got[1], [1, 1, 11, 11, 21, 21, 0, 0, 0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)] // MPI_Alltoallv's own argument list
    pub fn alltoallv_typed<T: Datatype, U: Datatype>(
        &self,
        send: &[T],
        send_ty: &CommittedType,
        send_counts: &[usize],
        send_displs: &[usize],
        recv: &mut [U],
        recv_ty: &CommittedType,
        recv_counts: &[usize],
        recv_displs: &[usize],
    ) -> Result<()> {
        let send = (send, send_ty, send_counts, send_displs);
        let recv = (recv, recv_ty, recv_counts, recv_displs);
        self.alltoallv_typed_with(send, recv, self.chosen::<Alltoall>())
    }

    /// [`Comm::alltoallv_typed`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn alltoallv_typed_with<T: Datatype, U: Datatype>(
        &self,
        (send, send_ty, send_counts, send_displs): (&[T], &CommittedType, &[usize], &[usize]),
        (recv, recv_ty, recv_counts, recv_displs): (&mut [U], &CommittedType, &[usize], &[usize]),
        algorithm: Alltoall,
    ) -> Result<()> {
        const CALL: &str = "alltoallv_typed";
        self.collective(Call::new(CALL), &algorithm, || {
            let sides = (
                varying((send, send_ty, send_counts, send_displs), "send"),
                varying((&*recv, recv_ty, recv_counts, recv_displs), "receive"),
            );
            self.typed_prologue_v(CALL, &sides.0, &sides.1, Flow::All, |_| [true, true])?;
            let (packed, sent) = sides.0.pack_blocks(CALL)?;
            let got = Packed::of(recv_ty, recv_counts, CALL)?;
            let exchanged = self.alltoallv_with(
                &packed[..],
                &sent.counts,
                &sent.displs,
                &got.counts,
                algorithm,
            )?;
            unpack_blocks(&exchanged, (recv, recv_ty, recv_counts, recv_displs), CALL)
        })
    }
}
