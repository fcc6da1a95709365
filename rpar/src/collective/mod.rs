//! Collective operations. This file holds the tags of the internal messages and the barrier;
//! the algorithm families live one per file beside it.
//!
//! Collectives run on the communicator's collective context through the same point-to-point
//! code as users' messages, so user traffic can never match them.

mod barrier;

/// Tags of collective traffic (on the collective context, invisible to user receives).
pub(crate) mod tags {
    /// `Comm::split`.
    pub(crate) const SPLIT: i32 = 1;
    /// `Comm::dup`.
    pub(crate) const DUP: i32 = 2;
    /// `Comm::barrier`.
    pub(crate) const BARRIER: i32 = 3;
}
