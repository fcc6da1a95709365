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
