//! Reduce (MPI_Reduce): every rank's vector combined elementwise with an operator, the result at
//! one root rank. The dual of one-to-all broadcast (Grama, Gupta, Karypis and Kumar,
//! "Introduction to Parallel Computing", 2nd ed., section 4.1).
//!
//! Costs for `p` ranks and `n` bytes per rank (Hockney alpha-beta, gamma per byte combined):
//!
//! - **linear**: the root receives from every rank in turn: `(p-1)(alpha + n beta + n gamma)`.
//! - **binomial tree** (the hypercube reduction): `ceil(log2 p)(alpha + n beta + n gamma)`. For a
//!   non-commutative operator the tree is rooted at rank 0, whose subtrees are contiguous rank
//!   ranges, and rank 0 forwards the result to the root (`+ alpha + n beta`).
//! - **Rabenseifner** (reduce-scatter by recursive halving, then a binomial gather;
//!   R. Rabenseifner, "Optimization of collective reduction operations", ICCS 2004; Thakur,
//!   Rabenseifner and Gropp, IJHPCA 19(1), 2005): `2 log2(p) alpha + 2 (p-1)/p n beta +
//!   (p-1)/p n gamma` for a power of two, plus a fold (`alpha + n beta + n gamma`) otherwise.

use super::layout::{check_len, check_root, recv_exact, Named};
use super::op::{check_blocks, ReduceOp};
use super::reduce_scatter::{halve, Fold};
use super::scratch::Scratch;
use super::select::{dispatched, resolve, Native};
use super::shared;
use super::tags;
use super::Channel;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Result};

const CALL: &str = "reduce";

/// Reduce algorithms, for [`Comm::using`] and
/// [`Comm::using`].
///
/// An MPI library picks among such algorithms inside MPI_Reduce; MPICH lets the user fix the choice
/// with `MPIR_CVAR_REDUCE_INTRA_ALGORITHM`, as the `_with` forms do here.
///
/// Each variant's cost is for `p` ranks and `n` the bytes of each rank's vector:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` picks by the rank count `p` and the bytes `n` of each rank's input (the [table of every
/// operation's defaults](crate#default-algorithms)): in-process, where the ranks share memory,
/// `SharedMemory`; elsewhere (recordings; on MPI, `Auto` runs `MPI_Reduce` for a predefined
/// operator) [`Reduce::select`] (the operator's commutativity does not change the choice: every
/// algorithm gets the rank-ordered result for a non-commutative operator):
///
/// | p | n | choice |
/// |---|---|---|
/// | ≤ 8 | any | `Linear` |
/// | > 8 | < 8 KiB | `Linear` |
/// | > 8 | ≥ 8 KiB | `Binomial` |
///
/// Tuned on the 2-core development machine. Shared memory against the message-passing rule,
/// medians of 7 runs with nothing else running (microseconds; 4 and 8 ranks oversubscribe the
/// cores): 8 B 0.22 / 0.42 (2 ranks), 1.3 / 18 (4), 1.8 / 100 (8), 17 / 554 (64);
/// 64 KiB 14 / 45, 35 / 43, 68 / 90, 735 / 1903; 256 KiB 42 / 39, 74 / 94, 149 / 239; 1 MiB
/// 100 / 86 (2 ranks), 189 / 430, 629 / 898. Without shared memory the total work and the
/// number of thread wake-ups count more than the critical path: the root draining `p-1` queued
/// messages beat the tree up to 8 ranks at every size and for small messages up to 32 ranks;
/// Rabenseifner's parallel bandwidth does not pay off on 2 cores, so it is never the default
/// here (it is on machines with a core per rank).
///
/// ```
/// use rpar::{Reduce, Sum};
/// let r = rpar::run(5, |world| world.using(Reduce::Binomial).reduce(&[world.rank() as u32; 3][..], Sum, 2))?;
/// assert_eq!(r[2], Some(vec![10, 10, 10]));
/// assert_eq!(r[0], None);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive] // room for more algorithms (e.g. shared-memory ones)
pub enum Reduce {
    /// The default: `SharedMemory` in-process, else [`Reduce::select`].
    #[default]
    Auto,
    /// The root receives from every other rank.
    /// Cost: `(p-1)(alpha + n beta + n gamma)`.
    Linear,
    /// Binomial tree (hypercube reduction).
    /// Cost: `ceil(log2 p)(alpha + n beta + n gamma)`.
    Binomial,
    /// Reduce-scatter by recursive halving, then a binomial gather to the root.
    /// Cost: `2 log2(p) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma` for p a power of two, plus
    /// a fold (`alpha + n beta + n gamma`) otherwise.
    Rabenseifner,
    /// Through shared memory (in-process ranks only; elsewhere the message-passing default):
    /// small vectors are posted (their ranks return at once) and the root combines them all in
    /// rank order; large ones are combined in place block by block, each rank taking `1/p` of
    /// the vector, and the root collects the blocks.
    /// Cost, with `c` one synchronisation: small `c + (p - 1) n (beta + gamma)` at the root,
    /// large `2c + 2 n beta + n gamma` at the root.
    SharedMemory,
}

impl Reduce {
    /// The message-passing algorithm `Auto` runs for `ranks` ranks, `bytes` bytes of input per
    /// rank and an operator that is `commutative` or not, where the ranks share no memory (the
    /// table above). No MPI routine: an MPI library makes this choice inside MPI_Reduce (in
    /// MPICH, what `MPIR_CVAR_REDUCE_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Reduce;
    /// assert_eq!(Reduce::select(8, 1 << 20, true), Reduce::Linear);
    /// assert_eq!(Reduce::select(16, 8, false), Reduce::Linear);
    /// assert_eq!(Reduce::select(16, 1 << 20, false), Reduce::Binomial);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Reduce {
        let _ = commutative; // every algorithm keeps rank order
        if ranks <= 8 || bytes < 8 * 1024 {
            Reduce::Linear
        } else {
            Reduce::Binomial
        }
    }
}

impl Comm {
    /// [`Comm::reduce`] in every form, with the algorithm given (what the forms run with the
    /// one chosen by [`Comm::using`]): one reduce call, as a collective call of its own (traced,
    /// and checked against the other ranks' calls), of `send` into the root's `acc` (ignored
    /// elsewhere), or with `send` `None` of `acc` in place (the root's form of MPI_IN_PLACE).
    pub(crate) fn reduce_with<T: Datatype, O: ReduceOp<T>>(
        &self,
        send: Option<&[T]>,
        acc: &mut [T],
        op: &O,
        root: usize,
        algorithm: Reduce,
    ) -> Result<()> {
        if let (Some(send), true) = (send, self.rank() == root) {
            // checked before the call, as `Comm::allreduce_with` checks
            let what = "root's receive buffer (as long as its send buffer)";
            check_len(acc.len(), send.len(), what, CALL)?;
        }
        let bytes = std::mem::size_of_val(send.unwrap_or(acc));
        let call = Call::new("reduce").root(root).reduction::<O>().bytes(bytes);
        self.collective(call, &algorithm, || {
            check_blocks(op, send.unwrap_or(acc).len(), "reduce")?;
            if let (Reduce::Auto, Some(native), Some(mpi_op)) =
                (algorithm, self.native(), op.predefined())
            {
                check_root(self, root)?;
                if native.reduce(send, acc, mpi_op, root)? {
                    self.runs(Native::<Reduce>::of());
                    return Ok(());
                }
            }
            let shm = shared::available::<T>(self);
            let chosen = resolve(algorithm, shm, self.size(), bytes, op.is_commutative());
            if chosen == Reduce::SharedMemory {
                check_root(self, root)?;
                return shared::reduce(self, send, acc, op, root);
            }
            // the message-passing algorithms combine in place: into the root's `acc`, and
            // elsewhere into a scratch copy (the other ranks' `acc` is not theirs to use);
            // `reduce_run` checks the root
            match send {
                None => reduce_run(self, acc, op, root, chosen),
                Some(send) if self.rank() == root => {
                    acc.copy_from_slice(send);
                    reduce_run(self, acc, op, root, chosen)
                }
                Some(send) => {
                    let mut copy = Scratch::new(send, send.len());
                    copy.copy_from_slice(send);
                    reduce_run(self, &mut copy, op, root, chosen)
                }
            }
        })
    }
}

/// Runs `algorithm`; afterwards `acc` holds the result at `root` (scratch elsewhere).
pub(crate) fn reduce_run<C: Named, T: Datatype, O: ReduceOp<T>>(
    ch: &C,
    acc: &mut [T],
    op: &O,
    root: usize,
    algorithm: Reduce,
) -> Result<()> {
    let p = ch.size();
    if root >= p {
        return Err(crate::Error::RankOutOfRange {
            rank: root,
            size: p,
        });
    }
    let bytes = std::mem::size_of_val(acc);
    let chosen = dispatched(ch, algorithm, bytes, op.is_commutative());
    let run = Reduction { ch, acc, op };
    match chosen {
        Reduce::Linear => run.linear(root),
        Reduce::Auto | Reduce::SharedMemory | Reduce::Binomial => run.binomial(root),
        Reduce::Rabenseifner => run.rabenseifner_reduce(root),
    }
}

/// One rank's part in a reduction algorithm: the channel, the vector it combines in place and
/// the operator. The algorithms of reduce, allreduce and scan are its methods (each family's in
/// its own file), so each names only what its family adds (reduce's root, scan's kind).
pub(super) struct Reduction<'a, C, T, O> {
    pub(super) ch: &'a C,
    pub(super) acc: &'a mut [T],
    pub(super) op: &'a O,
}

impl<C: Named, T: Datatype, O: ReduceOp<T>> Reduction<'_, C, T, O> {
    /// The root receives every other rank's vector and combines them in rank order.
    fn linear(self, root: usize) -> Result<()> {
        let Reduction { ch, acc, op } = self;
        let (p, r) = (ch.size(), ch.rank());
        if r != root {
            return ch.send(acc, root, tags::REDUCE_LINEAR);
        }
        let mut tmp = Scratch::new(acc, acc.len());
        // Lower ranks are prepended from root-1 down to 0, higher ones appended.
        for s in (0..root).rev() {
            recv_exact(ch, &mut tmp, s, tags::REDUCE_LINEAR, CALL)?;
            ch.local_reduction(std::mem::size_of_val(&acc[..]));
            op.reduce_left(&tmp, acc);
        }
        for s in root + 1..p {
            recv_exact(ch, &mut tmp, s, tags::REDUCE_LINEAR, CALL)?;
            ch.local_reduction(std::mem::size_of_val(&acc[..]));
            op.reduce_right(acc, &tmp);
        }
        Ok(())
    }

    /// Binomial tree on ranks relative to the root (commutative), or rooted at rank 0 and then
    /// forwarded (non-commutative: the subtrees of rank 0's tree are contiguous rank ranges).
    fn binomial(self, root: usize) -> Result<()> {
        let Reduction { ch, acc, op } = self;
        let (p, r) = (ch.size(), ch.rank());
        let tree_root = if op.is_commutative() { root } else { 0 };
        let v = (r + p - tree_root) % p;
        let real = |v: usize| (v + tree_root) % p;
        let mut tmp = Scratch::new(acc, acc.len());
        let mut mask = 1;
        while mask < p {
            if v & mask != 0 {
                ch.send(acc, real(v - mask), tags::REDUCE_BINOMIAL)?;
                break;
            }
            if v + mask < p {
                recv_exact(ch, &mut tmp, real(v + mask), tags::REDUCE_BINOMIAL, CALL)?;
                ch.local_reduction(std::mem::size_of_val(&acc[..]));
                op.reduce_right(acc, &tmp);
            }
            mask <<= 1;
        }
        forward_to_root(ch, acc, tree_root, root)
    }

    /// Reduce-scatter by recursive halving, then a binomial gather of the slots to the root.
    fn rabenseifner_reduce(self, root: usize) -> Result<()> {
        let Reduction { ch, acc, op } = self;
        let fold = Fold::new(ch.size());
        let offs = even_slots(acc.len(), fold.p2, op.block_len());
        // A root that folded away is served by the rank above it, which forwards the result.
        let (gatherer, vroot) = match fold.virtual_of(root) {
            Some(vroot) => (root, vroot),
            None => (root + 1, root / 2),
        };
        if let Some(v) = fold.fold_in(ch, acc, op, tags::REDUCE_FOLD, CALL)? {
            let halved = halve(ch, &fold, v, acc, &offs, op, CALL)?;
            halved.gather_to(ch, vroot, acc, tags::REDUCE_GATHER)?;
        }
        forward_to_root(ch, acc, gatherer, root)
    }
}

/// Hands the result from rank `holder`, where an algorithm left it, to `root` (nothing if
/// they are the same rank).
fn forward_to_root<C: Named, T: Datatype>(
    ch: &C,
    acc: &mut [T],
    holder: usize,
    root: usize,
) -> Result<()> {
    let r = ch.rank();
    if holder != root && r == holder {
        ch.send(acc, root, tags::REDUCE_FORWARD)?;
    } else if holder != root && r == root {
        recv_exact(ch, acc, holder, tags::REDUCE_FORWARD, CALL)?;
    }
    Ok(())
}

/// The `p2` near-equal slots of `n` elements, each a whole number of blocks of `block`
/// elements (an operator's [`ReduceOp::block_len`], which `n` is a multiple of): offsets
/// `p2 + 1`.
pub(super) fn even_slots(n: usize, p2: usize, block: usize) -> Vec<usize> {
    let (units, block) = (n / block.max(1), block.max(1));
    (0..=p2)
        .map(|s| (s * (units / p2) + s.min(units % p2)) * block)
        .collect()
}
