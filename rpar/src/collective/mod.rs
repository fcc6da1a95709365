//! Collective operations. This file holds the tags of the internal messages and the barrier;
//! the algorithm families live one per file beside it.
//!
//! Collectives run on the communicator's collective context through the same point-to-point
//! code as users' messages, so user traffic can never match them.

mod allreduce;
mod barrier;
mod channel;
mod op;
mod reduce;
mod reduce_scatter;
mod scan;
mod scratch;

pub use allreduce::Allreduce;
pub(crate) use channel::Channel;
pub use op::{
    BAnd, BOr, BXor, LAnd, LOr, LXor, Loc, Max, MaxLoc, Min, MinLoc, Prod, ReduceOp, Sum, UserOp,
};
pub use reduce::Reduce;
pub use reduce_scatter::ReduceScatter;
pub use scan::Scan;

/// Tags of collective traffic (on the collective context, invisible to user receives).
pub(crate) mod tags {
    /// `Comm::split`.
    pub(crate) const SPLIT: i32 = 1;
    /// `Comm::dup`.
    pub(crate) const DUP: i32 = 2;
    /// `Comm::barrier`.
    pub(crate) const BARRIER: i32 = 3;
    // Ranges reserved for the algorithm families (each file takes tags from its own range):
    // 100..=199 reductions (reduce, allreduce, scan, exscan, reduce_scatter);
    // 200..=299 data movement (bcast, gather, scatter, allgather, alltoall, shift);
    // 300..=399 barrier algorithms; 400..=499 topology (neighbourhood collectives).
}
