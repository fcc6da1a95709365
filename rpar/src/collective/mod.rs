//! Collective operations. This file holds the tags of the internal messages and the table of
//! every operation's default algorithm; the algorithm families live one per file beside it (each
//! with its algorithm enum, its own table and its `select`), `select.rs` layers the rules.
//!
//! Collectives run on the communicator's collective context through the same point-to-point
//! code as users' messages, so user traffic can never match them.
//!
//! # Defaults
//!
//! An explicitly chosen algorithm runs as chosen (or refuses with an error: a `Hypercube` on a
//! rank count that is not a power of two, a `Ring` reduction with a non-commutative operator).
//! `Auto` is decided by three rules, the first that applies:
//!
//! 1. **On the MPI transport** `Auto` runs MPI's own `MPI_Barrier`, `MPI_Bcast`,
//!    `MPI_Allgather` (not in place), `MPI_Alltoall`, and `MPI_Reduce` and `MPI_Allreduce` for
//!    predefined operators.
//! 2. **In-process**, where the communicator's ranks share an arena and the element type's
//!    alignment fits it, the forms with equal blocks of barrier, bcast, reduce, allreduce,
//!    allgather and alltoall run `SharedMemory`.
//! 3. **Everywhere else** (and for an explicit `SharedMemory` where it cannot run), the family's
//!    `select(ranks, bytes, commutative)`: a pure function of the operation, the rank count `p`,
//!    the bytes `m` (as the row says), whether `p` is a power of two, and the operator's
//!    commutativity, tuned on the 2-core development machine:
//!
//! | operation | `bytes` (`m`) | `select` |
//! |---|---|---|
//! | barrier ([`Barrier`]) | ignored | `p <= 2` or `p >= 16`: `Central`; else `Dissemination` |
//! | bcast ([`Bcast`]) | the message | `p <= 2`: `Linear`; else `Binomial` |
//! | gather ([`Gather`]), gatherv, gather_owned | one block (gatherv: unknown) | `Linear` |
//! | scatter(v) ([`Scatter`]) | ignored (the receivers do not know it) | `p <= 8`: `Linear`; else `Binomial` |
//! | allgather(v) ([`Allgather`]) | one block (allgatherv: the mean) | `p m < 64 KiB`: `Ring`; `p` a power of two: `RecursiveDoubling`; else `Torus` |
//! | alltoall ([`Alltoall`]) | one block | `p >= 16` and `m <= 256 B`: `Bruck`; `m <= 32 KiB`: `Linear`; else `Pairwise` |
//! | alltoallv | — | `Pairwise` |
//! | alltoall_owned | — | `Linear` |
//! | reduce ([`Reduce`]) | one rank's vector | `p <= 8` or `m < 8 KiB`: `Linear`; else `Binomial` |
//! | allreduce ([`Allreduce`]) | one rank's vector | `m < 4 KiB`: `RecursiveDoubling`; else `ReduceBcast` |
//! | reduce_scatter(_block) ([`ReduceScatter`]) | one rank's whole input | `m < 16 KiB`: `RecursiveHalving`; else `Pairwise` |
//! | scan, exscan ([`Scan`]) | one rank's vector | `p > 8` and `m < 8 KiB`: `RecursiveDoubling`; else `Linear` |
//! | shift_circular ([`Shift`]) | what each rank sends | `Direct` |
//!
//! Commutativity changes no choice: every default keeps a non-commutative operator's rank order
//! (`Ring`, the one reduction algorithm that would not, is never a default). The typed forms
//! (`bcast_typed`, …) run the byte collective's `Auto` on the packed data. Each family's own
//! table, with the measurements behind it, is on its enum.

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod channel;
mod gather;
mod layout;
mod op;
mod reduce;
mod reduce_scatter;
mod scan;
mod scatter;
mod scratch;
mod select;
mod shared;
mod shift;
mod typed;

pub use allgather::Allgather;
pub use allreduce::Allreduce;
pub use alltoall::Alltoall;
pub use barrier::Barrier;
pub use bcast::Bcast;
pub(crate) use channel::Channel;
// the algorithm code itself, for recording schedules (`sim::record_collective`)
pub(crate) use allgather::allgather as allgather_algorithm;
pub(crate) use allreduce::allreduce_run as allreduce_algorithm;
pub(crate) use alltoall::alltoall_uniform as alltoall_algorithm;
pub(crate) use barrier::barrier as barrier_algorithm;
pub(crate) use bcast::bcast as bcast_algorithm;
pub(crate) use gather::gather_uniform as gather_algorithm;
pub use gather::Gather;
pub(crate) use layout::{zeroed_vec, Named};
pub use op::{
    BAnd, BOr, BXor, LAnd, LOr, LXor, Loc, Max, MaxLoc, Min, MinLoc, Predefined, Prod, ReduceOp,
    Sum, UserOp,
};
pub(crate) use reduce::reduce_run as reduce_algorithm;
pub use reduce::Reduce;
pub(crate) use reduce_scatter::reduce_scatter_run as reduce_scatter_algorithm;
pub use reduce_scatter::ReduceScatter;
pub use scan::Scan;
pub(crate) use scan::{prefix as scan_algorithm, Prefix};
pub(crate) use scatter::scatter_uniform as scatter_algorithm;
pub use scatter::Scatter;
pub(crate) use select::Label;
pub(crate) use shift::shift as shift_algorithm;
pub use shift::Shift;

/// Tags of collective traffic (on the collective context, invisible to user receives).
pub(crate) mod tags {
    /// `Comm::split`.
    pub(crate) const SPLIT: i32 = 1;
    /// `Comm::dup`.
    pub(crate) const DUP: i32 = 2;
    // Ranges reserved for the algorithm families (each file takes tags from its own range):
    // 100..=199 reductions (reduce, allreduce, scan, exscan, reduce_scatter);
    // 200..=299 data movement (bcast, gather, scatter, allgather, alltoall, shift);
    // 300..=399 barrier algorithms; 400..=499 topology (neighbourhood collectives).
}
