//! The v-collectives on committed derived datatypes (MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv
//! and MPI_Alltoallv with a send and a receive datatype): the forms of [`Comm::gather`],
//! [`Comm::scatter`], [`Comm::allgather`] and [`Comm::alltoall`] that take a [`Typed`] buffer
//! and a [`Varying`] one of [`Typed`] (the impls of their argument traits are here). Each
//! rank's block has a count of its own, and a block's displacement counts in extents of the
//! side's type, as in MPI: rank `i`'s block of a varying side is `counts[i]` elements whose
//! displacement 0 is `displs[i] * extent(type)` bytes into the buffer (which must be in it). Displacements may come in any order and blocks may be empty; bytes outside the
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

use super::forms::{AllgatherArgs, AlltoallArgs, GatherArgs, ScatterArgs, Typed, Varying};
use super::layout::{offsets_of_counts, zeroed_vec};
use super::typed::{Blocks, Flow, Side, TypedCall};
use super::{Allgather, Alltoall, Gather, Scatter};
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

/// A side that is not read at this rank (MPI ignores it).
fn unread<'a, T>(buf: &'a [T], ty: &'a CommittedType) -> Side<'a, T> {
    Side {
        buf,
        ty,
        blocks: None,
    }
}

impl<'c, T: Datatype> Varying<'c, Typed<'_, &[T]>> {
    /// This buffer as a varying side with displacements `displs` (its own, resolved), named
    /// `what` in errors, if read here; else a side not read.
    fn side<'a>(&'a self, displs: &'a [usize], what: &'static str, read: bool) -> Side<'a, T> {
        let (buf, ty) = (self.buf.buf, self.buf.ty);
        if read {
            varying((buf, ty, self.counts, displs), what)
        } else {
            unread(buf, ty)
        }
    }
}

impl<'c, T: Datatype> Varying<'c, Typed<'_, &mut [T]>> {
    /// This buffer as a varying side with displacements `displs` (its own, resolved), named
    /// `what` in errors, if read here; else a side not read.
    fn side<'a>(&'a self, displs: &'a [usize], what: &'static str, read: bool) -> Side<'a, T> {
        let (buf, ty) = (&*self.buf.buf, self.buf.ty);
        if read {
            varying((buf, ty, self.counts, displs), what)
        } else {
            unread(buf, ty)
        }
    }
}

impl<T: Datatype, U: Datatype> GatherArgs for (Typed<'_, &[T]>, Varying<'_, Typed<'_, &mut [U]>>) {
    type Output = ();
    fn gather(self, comm: &Comm, root: usize) -> Result<()> {
        let (send, recv) = self;
        let displs = recv.displs()?;
        comm.typed_call("gatherv_typed", Some(root), |call: TypedCall<Gather>| {
            let sides = (
                send.side(Some(1)),
                recv.side(&displs, "receive", call.is_root),
            );
            let flow = Flow::To(root);
            comm.typed_prologue_v(call.name, &sides.0, &sides.1, flow, |i| [false, i == root])?;
            let packed = send.ty.pack_to_vec(send.buf, send.count)?;
            let algorithm = call.algorithm;
            if !call.is_root {
                return comm.gatherv_into_with(
                    Some(&packed[..]),
                    &mut [],
                    (&[], &[]),
                    root,
                    algorithm,
                );
            }
            let (ty, counts) = (recv.buf.ty, recv.counts);
            let layout = Packed::of(ty, counts, call.name)?;
            let mut gathered = zeroed_vec::<u8>(layout.total(), call.name)?;
            let blocks = (&layout.counts[..], &layout.displs[..]);
            comm.gatherv_into_with(Some(&packed[..]), &mut gathered, blocks, root, algorithm)?;
            unpack_blocks(&gathered, (recv.buf.buf, ty, counts, &displs), call.name)
        })
    }
}

impl<T: Datatype, U: Datatype> ScatterArgs for (Varying<'_, Typed<'_, &[T]>>, Typed<'_, &mut [U]>) {
    type Output = ();
    fn scatter(self, comm: &Comm, root: usize) -> Result<()> {
        let (send, recv) = self;
        let displs = send.displs()?;
        comm.typed_call("scatterv_typed", Some(root), |call: TypedCall<Scatter>| {
            let sides = (send.side(&displs, "send", call.is_root), recv.side(Some(1)));
            let flow = Flow::From(root);
            comm.typed_prologue_v(call.name, &sides.0, &sides.1, flow, |i| [i == root, false])?;
            let algorithm = call.algorithm;
            let mine = if call.is_root {
                let (packed, layout) = sides.0.pack_blocks(call.name)?;
                let blocks = (&layout.counts[..], &layout.displs[..]);
                comm.scatterv_with(&packed, blocks.0, blocks.1, root, algorithm)?
            } else {
                comm.scatterv_with::<u8>(&[], &[], &[], root, algorithm)?
            };
            recv.ty.unpack(&mine, &mut 0, recv.buf, recv.count)
        })
    }
}

impl<T: Datatype, U: Datatype> AllgatherArgs
    for (Typed<'_, &[T]>, Varying<'_, Typed<'_, &mut [U]>>)
{
    type Output = ();
    fn allgather(self, comm: &Comm) -> Result<()> {
        let (send, recv) = self;
        let displs = recv.displs()?;
        comm.typed_call("allgatherv_typed", None, |call: TypedCall<Allgather>| {
            let sides = (send.side(Some(1)), recv.side(&displs, "receive", true));
            comm.typed_prologue_v(call.name, &sides.0, &sides.1, Flow::All, |_| [false, true])?;
            let packed = send.ty.pack_to_vec(send.buf, send.count)?;
            let (ty, counts) = (recv.buf.ty, recv.counts);
            let layout = Packed::of(ty, counts, call.name)?;
            let gathered = comm.allgatherv_with(&packed[..], &layout.counts, call.algorithm)?;
            unpack_blocks(&gathered, (recv.buf.buf, ty, counts, &displs), call.name)
        })
    }
}

impl<T: Datatype, U: Datatype> AlltoallArgs
    for (
        Varying<'_, Typed<'_, &[T]>>,
        Varying<'_, Typed<'_, &mut [U]>>,
    )
{
    type Output = ();
    fn alltoall(self, comm: &Comm) -> Result<()> {
        let (send, recv) = self;
        let (send_displs, recv_displs) = (send.displs()?, recv.displs()?);
        comm.typed_call("alltoallv_typed", None, |call: TypedCall<Alltoall>| {
            let sides = (
                send.side(&send_displs, "send", true),
                recv.side(&recv_displs, "receive", true),
            );
            comm.typed_prologue_v(call.name, &sides.0, &sides.1, Flow::All, |_| [true, true])?;
            let (packed, sent) = sides.0.pack_blocks(call.name)?;
            let (ty, counts) = (recv.buf.ty, recv.counts);
            let got = Packed::of(ty, counts, call.name)?;
            let exchanged = comm.alltoallv_with(
                &packed[..],
                &sent.counts,
                &sent.displs,
                &got.counts,
                call.algorithm,
            )?;
            unpack_blocks(
                &exchanged,
                (recv.buf.buf, ty, counts, &recv_displs),
                call.name,
            )
        })
    }
}
