//! Collective operations. `tags.rs` holds the tags of the internal messages; the algorithm
//! families live one per file beside it (each with its algorithm enum, its own table and its
//! `select`), `select.rs` layers the rules.
//!
//! Collectives run on the communicator's collective context through the same point-to-point
//! code as users' messages, so user traffic can never match them.
//!
//! # Defaults
//!
//! The rules that decide what `Auto` runs, and the table of every operation's default, are in
//! the crate root's rustdoc (`lib.rs`, "Default algorithms"), where docs.rs shows them;
//! `select.rs` applies the rules, and each family's `select` is its row of the table.

mod allgather;
mod allreduce;
mod alltoall;
mod alltoallw;
mod barrier;
mod bcast;
mod buffer_op;
mod channel;
mod forms;
mod gather;
pub(crate) mod layout;
mod op;
mod reduce;
mod reduce_scatter;
mod scan;
mod scatter;
mod scratch;
mod select;
mod shared;
mod shift;
pub(crate) mod tags;
mod typed;
mod typed_v;
mod using;

pub use allgather::Allgather;
pub use allreduce::Allreduce;
pub use alltoall::Alltoall;
pub use barrier::Barrier;
pub use bcast::Bcast;
pub(crate) use channel::{Channel, Partners};
// the algorithm code itself, for recording schedules (`sim::record_collective`)
pub(crate) use allgather::allgather as allgather_algorithm;
pub(crate) use allreduce::allreduce_run as allreduce_algorithm;
pub(crate) use alltoall::alltoall_uniform as alltoall_algorithm;
pub(crate) use alltoallw::{
    check_entries as check_alltoallw_entries, check_side as check_alltoallw_side,
    mismatch as alltoallw_mismatch, verdict as alltoallw_verdict, VERDICT as ALLTOALLW_VERDICT,
};
pub(crate) use barrier::barrier as barrier_algorithm;
pub(crate) use bcast::bcast as bcast_algorithm;
pub use buffer_op::BufferOp;
pub(crate) use forms::PerRank;
pub use forms::{
    AllgatherArgs, AlltoallArgs, BcastBuf, Blocks, Counts, GatherArgs, InPlace, ReduceArgs,
    ReduceScatterArgs, ScatterArgs, ShiftArgs, Typed, Varying, ViewBuf,
};
pub(crate) use gather::gather_uniform as gather_algorithm;
pub use gather::Gather;
pub(crate) use layout::{zeroed_vec, Named};
pub use op::{
    reduce_local, BAnd, BOr, BXor, LAnd, LOr, LXor, Loc, Max, MaxLoc, Min, MinLoc, Predefined,
    Prod, ReduceOp, Sum, UserOp,
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
pub use shift::{gray_code, gray_code_inverse, Shift};
pub(crate) use typed::Fingerprint;
pub(crate) use using::Choices;
pub use using::{Choice, CollectiveAlgorithm, Using};
