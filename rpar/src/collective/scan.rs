//! Prefix reductions: inclusive scan (MPI_Scan, rank `i` gets `x0 ∘ … ∘ xi`) and exclusive scan
//! (MPI_Exscan, rank `i > 0` gets `x0 ∘ … ∘ x(i-1)`). The lecture's prefix sums (Grama et al.,
//! "Introduction to Parallel Computing", 2nd ed., section 4.3, Algorithm 4.9).
//!
//! Costs for `p` ranks and `n` bytes per rank (Hockney alpha-beta, gamma per byte combined):
//!
//! - **linear chain**: rank `i` receives the prefix from `i-1`, combines, passes it on:
//!   `(p-1)(alpha + n beta + n gamma)` from first to last rank.
//! - **recursive doubling** (hypercube prefix sums; for any `p`, partners beyond the last rank
//!   skipped, as in MPICH): `ceil(log2 p)(alpha + n beta + 2 n gamma)`. Each rank keeps the
//!   reduction of its aligned group and its own prefix; the group of a lower partner is
//!   prepended, a higher one appended, so non-commutative operators keep rank order.

use super::layout::{recv_exact, sendrecv_exact, Named};
use super::op::{check_blocks, ReduceOp};
use super::reduce::Reduction;
use super::scratch::Scratch;
use super::select::dispatched;
use super::tags;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Result};

/// The call the algorithms' errors name (exscan runs the same code).
const CALL: &str = "scan";

/// Scan and exscan algorithms, for [`Comm::using`].
///
/// An MPI library picks among such algorithms inside MPI_Scan and MPI_Exscan; MPICH lets the user
/// fix the choice with `MPIR_CVAR_SCAN_INTRA_ALGORITHM`, as the `_with` forms do here.
///
/// Each variant's cost is for `p` ranks and `n` the bytes of each rank's vector:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` picks by [`Scan::select`] (a row of the [table of every operation's
/// defaults](crate#default-algorithms)), a pure function of the rank count `p` and the bytes `n`
/// of each rank's vector:
///
/// | p | n | choice |
/// |---|---|---|
/// | ≤ 8 | any | `Linear` |
/// | > 8 | < 8 KiB | `RecursiveDoubling` |
/// | > 8 | ≥ 8 KiB | `Linear` |
///
/// Tuned on the 2-core development machine with ranks oversubscribing the cores: the chain does
/// `p-1` combines in all against `p log2 p` for recursive doubling, which wins only for short
/// vectors on many ranks, where the chain's `p-1` hops in sequence dominate.
///
/// ```
/// use rpar::{Scan, Sum};
/// let r = rpar::run(4, |world| world.using(Scan::Linear).scan(&(world.rank() + 1), Sum))?;
/// assert_eq!(r, vec![1, 3, 6, 10]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive] // room for more algorithms (e.g. shared-memory ones)
pub enum Scan {
    /// The default: chosen by [`Scan::select`].
    #[default]
    Auto,
    /// The prefix travels along the chain of ranks `0 → 1 → … → p-1`.
    /// Cost: `(p-1)(alpha + n beta + n gamma)` from first to last rank.
    Linear,
    /// Recursive doubling (hypercube prefix sums), for any `p`.
    /// Cost: `ceil(log2 p)(alpha + n beta + 2 n gamma)`.
    RecursiveDoubling,
}

impl Scan {
    /// The algorithm `Auto` runs for `ranks` ranks, `bytes` bytes per rank and an operator that
    /// is `commutative` or not (the table above), for scan and exscan. No MPI routine: an MPI
    /// library makes this choice inside MPI_Scan and MPI_Exscan (in MPICH, what
    /// `MPIR_CVAR_SCAN_INTRA_ALGORITHM=auto` and `MPIR_CVAR_EXSCAN_INTRA_ALGORITHM=auto` leave
    /// to its tuning).
    ///
    /// ```
    /// use rpar::Scan;
    /// assert_eq!(Scan::select(4, 8, true), Scan::Linear);
    /// assert_eq!(Scan::select(16, 8, false), Scan::RecursiveDoubling);
    /// assert_eq!(Scan::select(16, 1 << 20, false), Scan::Linear);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Scan {
        let _ = commutative; // both algorithms keep rank order at the same cost
        if ranks > 8 && bytes < 8 * 1024 {
            Scan::RecursiveDoubling
        } else {
            Scan::Linear
        }
    }
}

/// Which prefix: including this rank's own contribution (scan) or not (exscan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prefix {
    /// MPI_Scan: ranks `0..=i`.
    Inclusive,
    /// MPI_Exscan: ranks `0..i`.
    Exclusive,
}

impl Comm {
    /// [`Comm::scan`] (`kind` inclusive) and [`Comm::exscan`] (exclusive) in every form, with
    /// the algorithm given (what the forms run with the one chosen by [`Comm::using`]): one
    /// scan or exscan call on `acc`, in place, as a collective call of its own (traced, checked
    /// against the other ranks'). Returns whether this rank's result is defined.
    pub(crate) fn scan_with<T: Datatype, O: ReduceOp<T>>(
        &self,
        acc: &mut [T],
        op: &O,
        algorithm: Scan,
        kind: Prefix,
    ) -> Result<bool> {
        let name = match kind {
            Prefix::Inclusive => "scan",
            Prefix::Exclusive => "exscan",
        };
        let call = Call::new(name)
            .reduction::<O>()
            .bytes(std::mem::size_of_val(acc));
        self.collective(call, &algorithm, || {
            check_blocks(op, acc.len(), name)?;
            prefix(self, acc, op, algorithm, kind)
        })
    }
}

/// Replaces `acc` by its prefix on any channel; returns whether it is defined (false only for
/// an exclusive prefix at rank 0, where `acc` is left unchanged).
pub(crate) fn prefix<C: Named, T: Datatype, O: ReduceOp<T>>(
    ch: &C,
    acc: &mut [T],
    op: &O,
    algorithm: Scan,
    kind: Prefix,
) -> Result<bool> {
    let bytes = std::mem::size_of_val(acc);
    let run = Reduction { ch, acc, op };
    match dispatched(ch, algorithm, bytes, op.is_commutative()) {
        Scan::Linear => run.chain(kind)?,
        Scan::Auto | Scan::RecursiveDoubling => run.doubling_prefix(kind)?,
    }
    Ok(kind == Prefix::Inclusive || ch.rank() > 0)
}

impl<C: Named, T: Datatype, O: ReduceOp<T>> Reduction<'_, C, T, O> {
    /// The linear chain: receive the prefix of ranks below, pass on the prefix including this rank.
    fn chain(self, kind: Prefix) -> Result<()> {
        let Reduction { ch, acc, op } = self;
        let (p, r) = (ch.size(), ch.rank());
        if r == 0 {
            if p > 1 {
                ch.send(acc, 1, tags::SCAN_CHAIN)?;
            }
            return Ok(());
        }
        let mut below = Scratch::new(acc, acc.len());
        recv_exact(ch, &mut below, r - 1, tags::SCAN_CHAIN, CALL)?;
        ch.local_reduction(std::mem::size_of_val(&acc[..]));
        op.reduce_left(&below, acc);
        if r + 1 < p {
            ch.send(acc, r + 1, tags::SCAN_CHAIN)?;
        }
        if kind == Prefix::Exclusive {
            acc.copy_from_slice(&below);
        }
        Ok(())
    }

    /// Recursive doubling: `partial` is the reduction of this rank's aligned group of `2 mask`
    /// ranks, `acc` the prefix so far.
    fn doubling_prefix(self, kind: Prefix) -> Result<()> {
        let Reduction { ch, acc, op } = self;
        let (p, r) = (ch.size(), ch.rank());
        let mut partial = Scratch::new(acc, acc.len());
        partial.copy_from_slice(acc);
        let mut tmp = Scratch::new(acc, acc.len());
        // For an exclusive prefix, nothing has arrived from below yet.
        let mut have_lower = kind == Prefix::Inclusive;
        let mut mask = 1;
        while mask < p {
            let partner = r ^ mask;
            if partner < p {
                let tag = tags::SCAN_DOUBLING;
                sendrecv_exact(ch, &partial, partner, &mut tmp, partner, tag, CALL)?;
                if partner < r {
                    ch.local_reduction(std::mem::size_of_val(&partial[..]));
                    op.reduce_left(&tmp, &mut partial);
                    if have_lower {
                        ch.local_reduction(std::mem::size_of_val(&acc[..]));
                        op.reduce_left(&tmp, acc);
                    } else {
                        acc.copy_from_slice(&tmp);
                        have_lower = true;
                    }
                } else {
                    ch.local_reduction(std::mem::size_of_val(&partial[..]));
                    op.reduce_right(&mut partial, &tmp);
                }
            }
            mask <<= 1;
        }
        Ok(())
    }
}
