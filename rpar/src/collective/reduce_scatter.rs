//! Reduce-scatter (MPI_Reduce_scatter, MPI_Reduce_scatter_block): the reduction of every rank's
//! vector, cut into blocks, block `i` left at rank `i`. Also the building blocks that the
//! Rabenseifner reduce and allreduce share with it: the fold of a non-power-of-two rank count
//! and recursive halving over "slots".
//!
//! Costs for `p` ranks and `n` bytes in all (Hockney alpha-beta plus gamma per byte combined;
//! Thakur, Rabenseifner and Gropp, "Optimization of collective communication operations in
//! MPICH", IJHPCA 19(1), 2005, section 4.3):
//!
//! - **recursive halving**: `log2 p` rounds, the data halved each round:
//!   `log2(p) alpha + (p-1)/p n (beta + gamma)` for a power of two; otherwise a fold of the
//!   `r = p - 2^floor(log2 p)` extra ranks first and an unfold last (`+ 2 alpha + n beta + n gamma`).
//!   Blocks are first laid out in bit-reversed order so that the halving with increasing distance,
//!   which combines only adjacent rank groups and so keeps non-commutative operators in rank
//!   order, leaves each rank its own block.
//! - **pairwise exchange**: `p-1` rounds; in round `k` rank `i` sends block `i+k` to rank `i+k` and
//!   receives its own block from rank `i-k`: `(p-1) alpha + (p-1)/p n beta + n gamma` (p > 2).
//!   Keeps a lower and a higher partial result, so it gives the rank-ordered result for any
//!   operator; their final combine puts one more block's reduction on the critical path than
//!   each rank does (`cost::Algorithm::PairwiseReduceScatter`, checked against the simulator).
//! - **ring**: `p-1` rounds between neighbours, a block's partial result travels `i+1 → … → i`:
//!   `(p-1) alpha + (p-1)/p n (beta + gamma)`. Its partial results wrap around the ring, so it
//!   takes commutative operators only: a non-commutative one is refused
//!   ([`Error::InvalidArgument`]), never run by another algorithm than the one chosen.

use super::layout::{recv_exact, sendrecv_exact, Named};
use super::op::{check_blocks, ReduceOp};
use super::scratch::Scratch;
use super::select::dispatched;
use super::tags;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Error, Result};
use std::ops::Range;

/// The call the algorithms' errors name (reduce_scatter_block runs the same code).
const CALL: &str = "reduce_scatter";

/// Reduce-scatter algorithms, for [`Comm::using`] and
/// [`Comm::using`].
///
/// An MPI library picks among such algorithms inside MPI_Reduce_scatter and
/// MPI_Reduce_scatter_block; MPICH lets the user fix the choice with
/// `MPIR_CVAR_REDUCE_SCATTER_INTRA_ALGORITHM`, as the `_with` forms do here.
///
/// Each variant's cost is for `p` ranks and `n` the bytes of the whole vector:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` picks by [`ReduceScatter::select`] (the [table of every operation's
/// defaults](crate#default-algorithms); reduce-scatter has no shared-memory algorithm): a pure
/// function of the rank count `p`, the total bytes `n` of each rank's input, and the operator's
/// commutativity (which changes no choice: `Ring`, the one algorithm that would reorder a
/// non-commutative operator's operands, is never the default):
///
/// | p | n | commutative | choice |
/// |---|---|---|---|
/// | any | < 16 KiB | any | `RecursiveHalving` |
/// | any | ≥ 16 KiB | any | `Pairwise` |
///
/// Tuned on the 2-core development machine with 2 to 8 ranks oversubscribing the cores
/// (8 B, 64 KiB, 1 MiB): `log2 p` rounds win for short vectors; for long ones the pairwise
/// exchange, which moves each block once straight to its owner, beat the ring (same volume,
/// but every step waits on a neighbour's previous step) and recursive halving (which also
/// moves the fold's data).
///
/// ```
/// use rpar::{ReduceScatter, Sum};
/// let mine = rpar::run(3, |world| {
///     let data = [1u32, 2, 3, 4, 5, 6];
///     world.using(ReduceScatter::Pairwise).reduce_scatter((&data[..], rpar::Counts(&[1, 2, 3])), Sum)
/// })?;
/// assert_eq!(mine, vec![vec![3], vec![6, 9], vec![12, 15, 18]]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive] // room for more algorithms (e.g. shared-memory ones)
pub enum ReduceScatter {
    /// The default: chosen by [`ReduceScatter::select`].
    #[default]
    Auto,
    /// Recursive halving with the fold for non-powers of two (bit-reversed block layout).
    /// Cost: `log2(p) alpha + (p-1)/p n (beta + gamma)` for p a power of two (n the bytes in
    /// all), plus `2 alpha + n beta + n gamma` for the fold otherwise.
    RecursiveHalving,
    /// Pairwise exchange, `p-1` rounds.
    /// Cost: `(p-1) alpha + (p-1)/p n beta + n gamma` for p > 2 (n the bytes in all).
    Pairwise,
    /// Ring between neighbours, `p-1` rounds. Commutative operators only: its partial results
    /// wrap around the ring, so it refuses a non-commutative operator with
    /// [`Error::InvalidArgument`].
    /// Cost: `(p-1) alpha + (p-1)/p n (beta + gamma)` (n the bytes in all).
    Ring,
}

impl ReduceScatter {
    /// The algorithm `Auto` runs for `ranks` ranks, `bytes` bytes of input per rank and an
    /// operator that is `commutative` or not (the table above), for both forms. No MPI
    /// routine: an MPI library makes this choice inside MPI_Reduce_scatter (in MPICH, what
    /// `MPIR_CVAR_REDUCE_SCATTER_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::ReduceScatter;
    /// assert_eq!(ReduceScatter::select(8, 64, true), ReduceScatter::RecursiveHalving);
    /// assert_eq!(ReduceScatter::select(8, 1 << 20, true), ReduceScatter::Pairwise);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> ReduceScatter {
        let _ = (ranks, commutative); // the crossover did not move with p; all keep rank order
        if bytes < 16 * 1024 {
            ReduceScatter::RecursiveHalving
        } else {
            ReduceScatter::Pairwise
        }
    }
}

impl Comm {
    /// The in-place forms ([`Comm::reduce_scatter_in_place`] of `counts`, and for `None`
    /// [`Comm::reduce_scatter_block_in_place`]) with the algorithm given: the reduce-scatter of
    /// `buf`, this rank's block then copied to its front.
    pub(crate) fn reduce_scatter_in_place_with<T: Datatype, O: ReduceOp<T>>(
        &self,
        buf: &mut [T],
        counts: Option<&[usize]>,
        op: &O,
        algorithm: ReduceScatter,
    ) -> Result<()> {
        let mine = self.reduce_scatter_with(buf, counts, op, algorithm)?;
        buf[..mine.len()].copy_from_slice(&mine);
        Ok(())
    }

    /// [`Comm::reduce_scatter`] of `counts`, and for `None` [`Comm::reduce_scatter_block`]
    /// (`size()` equal blocks), with the algorithm given (what they run with the one chosen by
    /// [`Comm::using`], and what the in-place forms run inside): one reduce-scatter call on
    /// `data` as a collective call of its own (traced, checked against the other ranks').
    /// Returns this rank's block.
    pub(crate) fn reduce_scatter_with<T: Datatype, O: ReduceOp<T>>(
        &self,
        data: &[T],
        counts: Option<&[usize]>,
        op: &O,
        algorithm: ReduceScatter,
    ) -> Result<Vec<T>> {
        let name = match counts {
            Some(_) => "reduce_scatter",
            None => "reduce_scatter_block",
        };
        let call = Call::new(name)
            .reduction::<O>()
            .bytes(std::mem::size_of_val(data));
        self.collective(call, &algorithm, || {
            let p = self.size();
            let displs = match counts {
                Some(counts) => displacements(name, counts, p, data.len())?,
                None if data.len().is_multiple_of(p) => {
                    (0..=p).map(|i| i * (data.len() / p)).collect()
                }
                None => {
                    return Err(Error::invalid(
                        name,
                        format!(
                            "the input has {} elements, which is not a multiple of the {p} ranks",
                            data.len()
                        ),
                    ))
                }
            };
            for (i, w) in displs.windows(2).enumerate() {
                check_blocks(op, w[1] - w[0], name).map_err(|e| match e {
                    Error::InvalidArgument { call, message } => Error::InvalidArgument {
                        call,
                        message: format!("the block of rank {i}: {message}"),
                    },
                    other => other,
                })?;
            }
            reduce_scatter_run(self, data, &displs, op, algorithm)
        })
    }
}

/// Checks `counts` and returns their prefix sums (`p + 1` offsets).
fn displacements(call: &'static str, counts: &[usize], p: usize, len: usize) -> Result<Vec<usize>> {
    if counts.len() != p {
        return Err(Error::invalid(
            call,
            format!(
                "counts has {} entries but the communicator has {p} ranks",
                counts.len()
            ),
        ));
    }
    let mut displs = Vec::with_capacity(p + 1);
    let mut total = 0usize;
    displs.push(0);
    for &c in counts {
        total = total.saturating_add(c);
        displs.push(total);
    }
    if total != len {
        return Err(Error::invalid(
            call,
            format!("counts add up to {total} elements but the input has {len}"),
        ));
    }
    Ok(displs)
}

/// Reduce-scatter on any channel: this rank's block `displs[rank]..displs[rank + 1]` of the
/// reduction (what both `Comm` forms run, and what `sim::record_collective` records).
pub(crate) fn reduce_scatter_run<C: Named, T: Datatype, O: ReduceOp<T>>(
    ch: &C,
    data: &[T],
    displs: &[usize],
    op: &O,
    algorithm: ReduceScatter,
) -> Result<Vec<T>> {
    let bytes = std::mem::size_of_val(data);
    let run = Contribution {
        ch,
        data,
        displs,
        op,
    };
    match dispatched(ch, algorithm, bytes, op.is_commutative()) {
        ReduceScatter::Pairwise => run.pairwise(),
        ReduceScatter::Ring => {
            require_commutative(op, "reduce_scatter", "RecursiveHalving or Pairwise")?;
            let mut acc = Scratch::new(data, data.len());
            acc.copy_from_slice(data);
            ring(ch, &mut acc, displs, op)?;
            Ok(acc[block(displs, ch.rank())].to_vec())
        }
        ReduceScatter::Auto | ReduceScatter::RecursiveHalving => run.recursive_halving(),
    }
}

/// One rank's part in a reduce-scatter algorithm: the channel, its whole vector, the offsets of
/// the ranks' blocks in it (`p + 1`) and the operator. The algorithms are its methods.
struct Contribution<'a, C, T, O> {
    ch: &'a C,
    data: &'a [T],
    displs: &'a [usize],
    op: &'a O,
}

/// Refuses a non-commutative operator for the ring algorithms, whose partial results wrap
/// around the ring (so the operands would be combined out of rank order), naming the algorithms
/// of `call` that keep rank order.
pub(super) fn require_commutative<T: Copy, O: ReduceOp<T>>(
    op: &O,
    call: &'static str,
    ordered: &str,
) -> Result<()> {
    if op.is_commutative() {
        Ok(())
    } else {
        Err(Error::invalid(
            call,
            format!(
                "the Ring algorithm combines partial results in ring order, not rank order, so it \
                 needs a commutative operator; for a non-commutative one use {ordered} (or \
                 Auto), which keep rank order"
            ),
        ))
    }
}

/// Elements `displs[i]..displs[i + 1]`.
#[inline]
pub(super) fn block(displs: &[usize], i: usize) -> Range<usize> {
    displs[i]..displs[i + 1]
}

/// Borrows two disjoint ranges of `buf`, one to read and one to write.
pub(super) fn split_pair<T>(
    buf: &mut [T],
    read: Range<usize>,
    write: Range<usize>,
) -> (&[T], &mut [T]) {
    if read.start >= write.end {
        let (lo, hi) = buf.split_at_mut(read.start);
        (&hi[..read.len()], &mut lo[write])
    } else {
        debug_assert!(read.end <= write.start, "ranges overlap");
        let (lo, hi) = buf.split_at_mut(write.start);
        (&lo[read], &mut hi[..write.len()])
    }
}

/// The fold that reduces any rank count `p` to the largest power of two `p2 <= p`: of the first
/// `2 rem` ranks (`rem = p - p2`) each even rank hands its data to the odd rank above it, which
/// stands for both. Virtual ranks `0..p2` keep the order of the real ranks they stand for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fold {
    /// The largest power of two not above `p`.
    pub(super) p2: usize,
    /// `p - p2`.
    pub(super) rem: usize,
}

impl Fold {
    pub(super) fn new(p: usize) -> Self {
        let p2 = if p == 0 { 0 } else { 1 << p.ilog2() };
        Fold { p2, rem: p - p2 }
    }

    /// The virtual rank of real rank `r`, or `None` for an even rank that folded into `r + 1`.
    pub(super) fn virtual_of(&self, r: usize) -> Option<usize> {
        if r >= 2 * self.rem {
            Some(r - self.rem)
        } else if r % 2 == 1 {
            Some(r / 2)
        } else {
            None
        }
    }

    /// The real rank that virtual rank `v` runs on.
    pub(super) fn real_of(&self, v: usize) -> usize {
        if v < self.rem {
            2 * v + 1
        } else {
            v + self.rem
        }
    }

    /// `log2 p2`.
    pub(super) fn bits(&self) -> u32 {
        self.p2.trailing_zeros()
    }

    /// The fold step: an even rank below `2 rem` sends `acc` to the rank above and gets `None`;
    /// the odd one combines `lower ∘ acc`; every rank of the power of two gets its virtual rank.
    pub(super) fn fold_in<C: Named, T: Datatype, O: ReduceOp<T>>(
        &self,
        ch: &C,
        acc: &mut [T],
        op: &O,
        tag: i32,
        call: &'static str,
    ) -> Result<Option<usize>> {
        let r = ch.rank();
        if r < 2 * self.rem {
            if r.is_multiple_of(2) {
                ch.send(acc, r + 1, tag)?;
            } else {
                let mut lower = Scratch::new(acc, acc.len());
                recv_exact(ch, &mut lower, r - 1, tag, call)?;
                ch.local_reduction(std::mem::size_of_val(&acc[..]));
                op.reduce_left(&lower, acc);
            }
        }
        Ok(self.virtual_of(r))
    }

    /// The unfold step of an allreduce: the odd ranks below `2 rem` send the whole result to the
    /// even rank below, which receives it into `acc`.
    pub(super) fn unfold_out<C: Named, T: Datatype>(
        &self,
        ch: &C,
        acc: &mut [T],
        tag: i32,
        call: &'static str,
    ) -> Result<()> {
        let r = ch.rank();
        if r < 2 * self.rem {
            if r % 2 == 1 {
                ch.send(acc, r - 1, tag)?;
            } else {
                recv_exact(ch, acc, r + 1, tag, call)?;
            }
        }
        Ok(())
    }
}

/// `v` with its lowest `bits` bits reversed.
pub(super) fn bit_reverse(v: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        v.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Recursive halving over `p2` slots (slot `s` is `acc[offs[s]..offs[s + 1]]`) among the virtual
/// ranks, with the distance doubling each round so that only adjacent rank groups combine (rank
/// order holds for non-commutative operators). Virtual rank `v` ends holding slot
/// `bit_reverse(v)`, reduced over all ranks. Returns where it left this rank (with the slot
/// ranges held before each round), for the mirror-image allgather or gather.
pub(super) fn halve<'a, C: Named, T: Datatype, O: ReduceOp<T>>(
    ch: &C,
    fold: &'a Fold,
    v: usize,
    acc: &mut [T],
    offs: &'a [usize],
    op: &O,
    call: &'static str,
) -> Result<Halved<'a>> {
    let (mut lo, mut hi) = (0, fold.p2);
    let mut history = Vec::with_capacity(fold.bits() as usize);
    let mut tmp = Scratch::new(acc, acc.len());
    let mut mask = 1;
    while mask < fold.p2 {
        let partner = v ^ mask;
        let mid = (lo + hi) / 2;
        history.push((lo, hi));
        let (keep, give) = if v & mask == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let keep_elems = offs[keep.0]..offs[keep.1];
        let give_elems = offs[give.0]..offs[give.1];
        let dest = fold.real_of(partner);
        let theirs = &mut tmp[..keep_elems.len()];
        let tag = tags::REDUCE_SCATTER_HALVE;
        sendrecv_exact(ch, &acc[give_elems], dest, theirs, dest, tag, call)?;
        if v < partner {
            ch.local_reduction(std::mem::size_of_val(theirs));
            op.reduce_right(&mut acc[keep_elems], theirs);
        } else {
            ch.local_reduction(std::mem::size_of_val(theirs));
            op.reduce_left(theirs, &mut acc[keep_elems]);
        }
        (lo, hi) = keep;
        mask <<= 1;
    }
    Ok(Halved {
        fold,
        v,
        offs,
        history,
        call,
    })
}

/// Where [`halve`] left this rank, which the mirror-image allgather ([`Halved::double`]) or
/// gather ([`Halved::gather_to`]) walks back: the fold, this rank's virtual rank, the slots'
/// offsets, the slot range it held before each round, and the call its errors name.
pub(super) struct Halved<'a> {
    fold: &'a Fold,
    v: usize,
    offs: &'a [usize],
    history: Vec<(usize, usize)>,
    call: &'static str,
}

impl Halved<'_> {
    /// The halving's rounds, last first (the order its mirror image runs them): each round's
    /// partner distance (`v ^ mask` is the partner) and the slot range held before it.
    fn rounds_back(&self) -> impl Iterator<Item = (usize, (usize, usize))> + '_ {
        let rounds = self.history.iter().enumerate().rev();
        rounds.map(|(k, &held)| (1 << k, held))
    }

    /// The allgather that mirrors [`halve`]: afterwards every virtual rank holds all slots.
    pub(super) fn double<C: Named, T: Datatype>(
        &self,
        ch: &C,
        acc: &mut [T],
        tag: i32,
    ) -> Result<()> {
        for (mask, (lo, hi)) in self.rounds_back() {
            let (offs, mid) = (self.offs, (lo + hi) / 2);
            let (mine, theirs) = if self.v & mask == 0 {
                (offs[lo]..offs[mid], offs[mid]..offs[hi])
            } else {
                (offs[mid]..offs[hi], offs[lo]..offs[mid])
            };
            let dest = self.fold.real_of(self.v ^ mask);
            let (send, recv) = split_pair(acc, mine, theirs);
            sendrecv_exact(ch, send, dest, recv, dest, tag, self.call)?;
        }
        Ok(())
    }

    /// The binomial gather that mirrors [`halve`]: afterwards virtual rank `vroot` holds all
    /// slots (the other ranks' buffers hold partial data).
    pub(super) fn gather_to<C: Named, T: Datatype>(
        &self,
        ch: &C,
        vroot: usize,
        acc: &mut [T],
        tag: i32,
    ) -> Result<()> {
        let Halved {
            fold,
            v,
            offs,
            call,
            ..
        } = *self;
        let mut held = (0, fold.p2);
        if let Some(&(lo, hi)) = self.history.last() {
            let mid = (lo + hi) / 2;
            held = if v & (fold.p2 >> 1) == 0 {
                (lo, mid)
            } else {
                (mid, hi)
            };
        }
        for (mask, (lo, hi)) in self.rounds_back() {
            let peer = fold.real_of(v ^ mask);
            if (v ^ vroot) & mask != 0 {
                return ch.send(&acc[offs[held.0]..offs[held.1]], peer, tag);
            }
            let other = if held.0 == lo {
                (held.1, hi)
            } else {
                (lo, held.0)
            };
            recv_exact(ch, &mut acc[offs[other.0]..offs[other.1]], peer, tag, call)?;
            held = (lo, hi);
        }
        Ok(())
    }
}

impl<C: Named, T: Datatype, O: ReduceOp<T>> Contribution<'_, C, T, O> {
    /// Recursive-halving reduce-scatter with per-rank `displs`.
    fn recursive_halving(self) -> Result<Vec<T>> {
        let (ch, data, displs, op) = (self.ch, self.data, self.displs, self.op);
        let (p, r) = (ch.size(), ch.rank());
        let fold = Fold::new(p);
        // Virtual rank v's elements: the blocks of the real ranks it stands for.
        let vblock = |v: usize| {
            if v < fold.rem {
                displs[2 * v]..displs[2 * v + 2]
            } else {
                block(displs, v + fold.rem)
            }
        };
        // Slot s holds virtual block bit_reverse(s), so that the halving leaves v its own block.
        let mut acc = Scratch::new(data, data.len());
        let mut offs = Vec::with_capacity(fold.p2 + 1);
        offs.push(0);
        for s in 0..fold.p2 {
            let from = vblock(bit_reverse(s, fold.bits()));
            let at = offs[s];
            acc[at..at + from.len()].copy_from_slice(&data[from.clone()]);
            offs.push(at + from.len());
        }
        let Some(v) = fold.fold_in(ch, &mut acc, op, tags::REDUCE_SCATTER_FOLD, CALL)? else {
            // An even rank that folded: its block comes from the rank above.
            let mut mine = data[block(displs, r)].to_vec(); // replaced by the received block
            recv_exact(ch, &mut mine, r + 1, tags::REDUCE_SCATTER_UNFOLD, CALL)?;
            return Ok(mine);
        };
        halve(ch, &fold, v, &mut acc, &offs, op, CALL)?;
        let slot = bit_reverse(v, fold.bits());
        let held = offs[slot]..offs[slot + 1];
        let own = block(displs, r);
        // Where this rank's block starts inside the slot (after the even rank's, when folded).
        let start = held.start + (own.start - vblock(v).start);
        if r < 2 * fold.rem {
            let lower = block(displs, r - 1);
            let lower_start = held.start + (lower.start - vblock(v).start);
            ch.send(
                &acc[lower_start..lower_start + lower.len()],
                r - 1,
                tags::REDUCE_SCATTER_UNFOLD,
            )?;
        }
        Ok(acc[start..start + own.len()].to_vec())
    }

    /// Pairwise-exchange reduce-scatter: returns this rank's block, in rank order for any operator.
    fn pairwise(self) -> Result<Vec<T>> {
        let (ch, data, displs, op) = (self.ch, self.data, self.displs, self.op);
        let (p, r) = (ch.size(), ch.rank());
        // `low` = x_s ∘ … ∘ x_r over the sources s <= r seen so far; `high` likewise above r.
        let mut low = data[block(displs, r)].to_vec();
        let mut high: Option<Scratch<T>> = None;
        let mut tmp = Scratch::new(&low, low.len());
        for k in 1..p {
            let (dest, source) = ((r + k) % p, (r + p - k) % p);
            let tag = tags::REDUCE_SCATTER_PAIRWISE;
            sendrecv_exact(
                ch,
                &data[block(displs, dest)],
                dest,
                &mut tmp,
                source,
                tag,
                CALL,
            )?;
            // Sources come in the order r-1, …, 0, p-1, …, r+1: each is prepended.
            if source < r {
                ch.local_reduction(std::mem::size_of_val(&low[..]));
                op.reduce_left(&tmp, &mut low);
            } else if let Some(high) = high.as_mut() {
                ch.local_reduction(std::mem::size_of_val(&high[..]));
                op.reduce_left(&tmp, high);
            } else {
                let mut first = Scratch::new(&tmp, tmp.len());
                first.copy_from_slice(&tmp);
                high = Some(first);
            }
        }
        if let Some(high) = high {
            ch.local_reduction(std::mem::size_of_val(&low[..]));
            op.reduce_right(&mut low, &high);
        }
        Ok(low)
    }
}

/// Ring reduce-scatter, in place: afterwards `acc[block(displs, rank)]` is reduced over all
/// ranks (the other blocks hold partial results). Only for commutative operators.
pub(super) fn ring<C: Named, T: Datatype, O: ReduceOp<T>>(
    ch: &C,
    acc: &mut [T],
    displs: &[usize],
    op: &O,
) -> Result<()> {
    let (p, r) = (ch.size(), ch.rank());
    let (right, left) = ((r + 1) % p, (r + p - 1) % p);
    let largest = (0..p).map(|i| block(displs, i).len()).max().unwrap_or(0);
    let mut tmp = Scratch::new(acc, largest);
    for k in 0..p.saturating_sub(1) {
        let send = block(displs, (r + 2 * p - k - 1) % p);
        let recv = block(displs, (r + 2 * p - k - 2) % p);
        let into = &mut tmp[..recv.len()];
        let tag = tags::REDUCE_SCATTER_RING;
        sendrecv_exact(ch, &acc[send], right, into, left, tag, "reduce_scatter")?;
        ch.local_reduction(std::mem::size_of_val(into));
        op.reduce_left(into, &mut acc[recv]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_keeps_rank_order() {
        for p in 1..=40 {
            let fold = Fold::new(p);
            assert!(fold.p2.is_power_of_two() && fold.p2 <= p && 2 * fold.p2 > p);
            let reals: Vec<usize> = (0..fold.p2).map(|v| fold.real_of(v)).collect();
            assert!(reals.windows(2).all(|w| w[0] < w[1]));
            for (v, &r) in reals.iter().enumerate() {
                assert_eq!(fold.virtual_of(r), Some(v));
            }
        }
    }

    #[test]
    fn bit_reverse_is_an_involution() {
        assert_eq!(bit_reverse(0b001, 3), 0b100);
        assert_eq!(bit_reverse(0b110, 3), 0b011);
        assert_eq!(bit_reverse(0, 0), 0);
        for v in 0..16 {
            assert_eq!(bit_reverse(bit_reverse(v, 4), 4), v);
        }
    }

    #[test]
    fn split_pair_gives_disjoint_ranges() {
        let mut buf = [0, 1, 2, 3, 4, 5];
        let (r, w) = split_pair(&mut buf, 4..6, 0..2);
        assert_eq!(r, &[4, 5]);
        w.copy_from_slice(&[9, 9]);
        let (r, w) = split_pair(&mut buf, 0..1, 3..5);
        assert_eq!((r, w.len()), (&[9][..], 2));
    }

    #[test]
    fn bad_counts_are_refused() {
        assert!(displacements("t", &[1, 2], 3, 3).is_err());
        assert!(displacements("t", &[1, 2, 3], 3, 5).is_err());
        assert_eq!(
            displacements("t", &[1, 0, 2], 3, 3).unwrap(),
            vec![0, 1, 1, 3]
        );
    }
}
