//! Allreduce (MPI_Allreduce): every rank gets the elementwise reduction of all ranks' vectors.
//! The lecture's all-to-all reduction on the hypercube (Grama et al., "Introduction to Parallel
//! Computing", 2nd ed., section 4.3) and the algorithms of MPICH (Thakur, Rabenseifner and
//! Gropp, "Optimization of collective communication operations in MPICH", IJHPCA 19(1), 2005).
//!
//! Costs for `p` ranks and `n` bytes per rank (Hockney alpha-beta, gamma per byte combined):
//!
//! - **recursive doubling**: `log2 p` pairwise exchanges of the whole vector:
//!   `log2(p)(alpha + n beta + n gamma)`; a non-power of two first folds its `r = p - 2^k` extra
//!   ranks into their neighbours and unfolds at the end (`+ 2 alpha + 2 n beta + n gamma`).
//! - **ring** (reduce-scatter along the ring, then allgather along it; Patarasuk and Yuan,
//!   "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009):
//!   `2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma`. Commutative operators only: its
//!   partial results wrap around the ring, so a non-commutative operator is refused.
//! - **Rabenseifner** (reduce-scatter by recursive halving, allgather by recursive doubling;
//!   R. Rabenseifner, ICCS 2004): `2 log2(p) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma`, plus
//!   the fold for a non-power of two.
//! - **reduce + broadcast** (reduce to rank 0 by the message-passing rule of [`Reduce`]'s
//!   table, then a binomial broadcast): with the binomial reduce
//!   `2 ceil(log2 p)(alpha + n beta) + ceil(log2 p) n gamma`, with the linear one
//!   `(p - 1 + ceil(log2 p))(alpha + n beta) + (p-1) n gamma`. Moves `2 (p-1) n` bytes in all,
//!   like the ring, in fewer messages.
//!
//! For a non-commutative operator every algorithm but the ring combines adjacent rank groups
//! only, lower on the left, so it gets the rank-ordered result; all ranks get bitwise the same
//! result. The ring refuses such an operator
//! ([`Error::InvalidArgument`](crate::Error::InvalidArgument)) rather than run another algorithm
//! than the one chosen.

use super::allgather;
use super::bcast::{bcast, Bcast};
use super::layout::{check_len, sendrecv_exact, Named};
use super::op::{check_blocks, ReduceOp};
use super::reduce::{even_slots, reduce_run, Reduce, Reduction};
use super::reduce_scatter::{halve, require_commutative, ring, Fold};
use super::scratch::Scratch;
use super::select::{dispatched, resolve, Native};
use super::shared;
use super::tags;
use super::Channel;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Result};

const CALL: &str = "allreduce";

/// Allreduce algorithms, for [`Comm::using`] and
/// [`Comm::using`].
///
/// An MPI library picks among such algorithms inside MPI_Allreduce; MPICH lets the user fix the
/// choice with `MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM`, as the `_with` forms do here.
///
/// Each variant's cost is for `p` ranks and `n` the bytes of each rank's vector:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` picks by the rank count `p` and the bytes `n` of each rank's vector (the [table of every
/// operation's defaults](crate#default-algorithms)): in-process, where the ranks share memory,
/// `SharedMemory`; elsewhere (recordings; on MPI, `Auto` runs `MPI_Allreduce` for a predefined
/// operator) [`Allreduce::select`]. Commutativity does not change the choice: `Ring`, the one
/// algorithm that would reorder a non-commutative operator's operands (and refuses it), is never
/// the default.
///
/// | p | n | choice |
/// |---|---|---|
/// | any | < 4 KiB | `RecursiveDoubling` |
/// | any | ≥ 4 KiB | `ReduceBcast` |
///
/// Tuned on the 2-core development machine. Shared memory against the message-passing rule,
/// medians of 7 runs with nothing else running (microseconds; 4 and 8 ranks oversubscribe the
/// cores): 8 B 0.32 / 0.64 (2 ranks), 3.7 / 13.9 (4), 11.3 / 73.8 (8), 175 / 1538 (64);
/// 64 KiB 16 / 27, 33 / 62, 107 / 293, 1263 / 2804; 1 MiB 143-148 / 121-148 (2 ranks: a tie
/// within the noise), 288 / 2109, 721 / 2362. Without shared memory, for small vectors the
/// `log2 p` rounds of recursive doubling win; beyond a few KiB reduce + broadcast moves and
/// combines the least data (recursive doubling moves `p log2 p n` bytes); ring and
/// Rabenseifner, which need a core per rank to pay off, were never the fastest here.
///
/// ```
/// use rpar::{Allreduce, Sum};
/// for algorithm in [Allreduce::RecursiveDoubling, Allreduce::Ring, Allreduce::Rabenseifner,
///                   Allreduce::ReduceBcast] {
///     let r = rpar::run(3, |world| world.using(algorithm).allreduce(&[world.rank() as u8, 1][..], Sum))?;
///     assert_eq!(r, vec![vec![3, 3]; 3]);
/// }
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive] // room for more algorithms (e.g. shared-memory ones)
pub enum Allreduce {
    /// The default: `SharedMemory` in-process, else [`Allreduce::select`].
    #[default]
    Auto,
    /// Recursive doubling (hypercube all-reduce), with the fold for non-powers of two.
    /// Cost: `log2(p)(alpha + n beta + n gamma)`, plus `2 alpha + 2 n beta + n gamma` for the
    /// fold when p is not a power of two.
    RecursiveDoubling,
    /// Reduce-scatter and allgather around the ring. Commutative operators only: its partial
    /// results wrap around the ring, so it refuses a non-commutative operator with
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument).
    /// Cost: `2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma`.
    Ring,
    /// Reduce-scatter by recursive halving, allgather by recursive doubling.
    /// Cost: `2 log2(p) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma`, plus the fold when p is
    /// not a power of two.
    Rabenseifner,
    /// Reduce to rank 0 (by the message-passing rule of [`Reduce`]'s table), then binomial
    /// broadcast.
    /// Cost, with the binomial reduce: `2 ceil(log2 p)(alpha + n beta) + ceil(log2 p) n gamma`.
    ReduceBcast,
    /// Through shared memory (in-process ranks only; elsewhere the message-passing default):
    /// small vectors are posted and every rank combines them all; large ones are reduced block
    /// by block in place, each rank combining `1/p` of the vector, then copied.
    /// Cost, with `c` one synchronisation: small `c + p n (beta + gamma)`, large
    /// `2c + 2 n beta + n gamma` per rank.
    SharedMemory,
}

impl Allreduce {
    /// The message-passing algorithm `Auto` runs for `ranks` ranks, `bytes` bytes per rank, and
    /// an operator that is `commutative` or not, where the ranks share no memory (the table
    /// above). No MPI routine: an MPI library makes this choice inside MPI_Allreduce (in MPICH,
    /// what `MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Allreduce;
    /// assert_eq!(Allreduce::select(4, 8, true), Allreduce::RecursiveDoubling);
    /// assert_eq!(Allreduce::select(64, 1 << 20, false), Allreduce::ReduceBcast);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Allreduce {
        // the crossover did not move with p; neither choice reorders operands
        let _ = (ranks, commutative);
        if bytes < 4 * 1024 {
            Allreduce::RecursiveDoubling
        } else {
            Allreduce::ReduceBcast
        }
    }
}

impl Comm {
    /// [`Comm::allreduce`] in every form, with the algorithm given (what the forms run with the
    /// one chosen by [`Comm::using`]): one allreduce call, as a collective call of its own
    /// (traced, and checked against the other ranks' calls), of `send` into `acc`, or with
    /// `send` `None` of `acc` in place.
    pub(crate) fn allreduce_with<T: Datatype, O: ReduceOp<T>>(
        &self,
        send: Option<&[T]>,
        acc: &mut [T],
        op: &O,
        algorithm: Allreduce,
    ) -> Result<()> {
        if let Some(send) = send {
            // checked before the collective call: inside its closure, the check kept the
            // closure from being inlined into the in-place forms in the release build (an
            // 8-byte allreduce_in_place on one rank: 45 instructions more, by callgrind)
            let what = "receive buffer (as long as the send buffer)";
            check_len(acc.len(), send.len(), what, CALL)?;
        }
        let bytes = std::mem::size_of_val(send.unwrap_or(acc));
        let call = Call::new("allreduce").reduction::<O>().bytes(bytes);
        self.collective(call, &algorithm, || {
            check_blocks(op, send.unwrap_or(acc).len(), "allreduce")?;
            if let (Allreduce::Auto, Some(native), Some(mpi_op)) =
                (algorithm, self.native(), op.predefined())
            {
                if native.allreduce(send, acc, mpi_op)? {
                    self.runs(Native::<Allreduce>::of());
                    return Ok(());
                }
            }
            let shm = shared::available::<T>(self);
            let chosen = resolve(algorithm, shm, self.size(), bytes, op.is_commutative());
            if chosen == Allreduce::SharedMemory {
                return shared::allreduce(self, send, acc, op);
            }
            if let Some(send) = send {
                acc.copy_from_slice(send); // the message-passing algorithms combine in place
            }
            allreduce_run(self, acc, op, chosen)
        })
    }
}

pub(crate) fn allreduce_run<C: Named, T: Datatype, O: ReduceOp<T>>(
    ch: &C,
    acc: &mut [T],
    op: &O,
    algorithm: Allreduce,
) -> Result<()> {
    let bytes = std::mem::size_of_val(acc);
    let chosen = dispatched(ch, algorithm, bytes, op.is_commutative());
    let run = Reduction { ch, acc, op };
    match chosen {
        Allreduce::Auto | Allreduce::SharedMemory | Allreduce::RecursiveDoubling => {
            run.recursive_doubling()
        }
        Allreduce::Ring => run.ring_allreduce(),
        Allreduce::Rabenseifner => run.rabenseifner_allreduce(),
        Allreduce::ReduceBcast => {
            reduce_run(ch, run.acc, op, 0, Reduce::Auto)?;
            bcast(ch, run.acc, 0, Bcast::Binomial)
        }
    }
}

impl<C: Named, T: Datatype, O: ReduceOp<T>> Reduction<'_, C, T, O> {
    /// Recursive doubling over the power of two that the fold leaves.
    fn recursive_doubling(self) -> Result<()> {
        let Reduction { ch, acc, op } = self;
        folded(ch, acc, op, |fold, v, acc| {
            let mut tmp = Scratch::new(acc, acc.len());
            let mut mask = 1;
            while mask < fold.p2 {
                let partner = v ^ mask;
                let peer = fold.real_of(partner);
                let tag = tags::ALLREDUCE_DOUBLING;
                sendrecv_exact(ch, acc, peer, &mut tmp, peer, tag, CALL)?;
                ch.local_reduction(std::mem::size_of_val(&acc[..]));
                if v < partner {
                    op.reduce_right(acc, &tmp);
                } else {
                    op.reduce_left(&tmp, acc);
                }
                mask <<= 1;
            }
            Ok(())
        })
    }

    /// The ring reduce-scatter, then the ring allgather (commutative operators only).
    fn ring_allreduce(self) -> Result<()> {
        let Reduction { ch, acc, op } = self;
        require_commutative(op, CALL, "RecursiveDoubling, Rabenseifner or ReduceBcast")?;
        let displs = even_slots(acc.len(), ch.size(), op.block_len());
        ring(ch, acc, &displs, op)?; // rank r ends with block r of the sum
        allgather::ring(ch, acc, &displs, tags::ALLREDUCE_ALLGATHER)
    }

    /// Recursive halving, then the mirror-image recursive-doubling allgather.
    fn rabenseifner_allreduce(self) -> Result<()> {
        let Reduction { ch, acc, op } = self;
        folded(ch, acc, op, |fold, v, acc| {
            let offs = even_slots(acc.len(), fold.p2, op.block_len());
            let halved = halve(ch, fold, v, acc, &offs, op, CALL)?;
            halved.double(ch, acc, tags::ALLREDUCE_ALLGATHER)
        })
    }
}

/// Runs `reduce` (given the fold, this rank's virtual rank and its vector) on the power of two
/// ranks that the fold leaves, between the fold and the unfold.
fn folded<C: Named, T: Datatype, O: ReduceOp<T>>(
    ch: &C,
    acc: &mut [T],
    op: &O,
    reduce: impl FnOnce(&Fold, usize, &mut [T]) -> Result<()>,
) -> Result<()> {
    let fold = Fold::new(ch.size());
    if let Some(v) = fold.fold_in(ch, acc, op, tags::ALLREDUCE_FOLD, CALL)? {
        reduce(&fold, v, acc)?;
    }
    fold.unfold_out(ch, acc, tags::ALLREDUCE_UNFOLD, CALL)
}
