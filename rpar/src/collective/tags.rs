//! Tags of collective traffic (on the collective context, invisible to user receives), all in
//! one place so that no two families can take the same one: the communicator constructors' own,
//! then every algorithm family's, named after the family, each from its family's range:
//!
//! - 100..=199 reductions (reduce, allreduce, scan, exscan, reduce_scatter);
//! - 200..=299 data movement (bcast, gather, scatter, allgather, alltoall, shift);
//! - 300..=399 barrier algorithms;
//! - 400..=499 topology (neighbourhood collectives, in `topology::neighbor`).

/// `Comm::split`.
pub(crate) const SPLIT: i32 = 1;
/// `Comm::dup`.
pub(crate) const DUP: i32 = 2;
/// `Group::comm_create_group` (among the group's members, outside any collective call).
pub(crate) const CREATE_GROUP: i32 = 3;

// The reduce algorithms (MPI_Reduce), tags 100..=104.
pub(crate) const REDUCE_LINEAR: i32 = 100;
pub(crate) const REDUCE_BINOMIAL: i32 = 101;
pub(crate) const REDUCE_FORWARD: i32 = 102;
pub(crate) const REDUCE_FOLD: i32 = 103;
pub(crate) const REDUCE_GATHER: i32 = 104;
// The allreduce algorithms (MPI_Allreduce), tags 110..=113.
pub(crate) const ALLREDUCE_FOLD: i32 = 110;
pub(crate) const ALLREDUCE_UNFOLD: i32 = 111;
pub(crate) const ALLREDUCE_DOUBLING: i32 = 112;
pub(crate) const ALLREDUCE_ALLGATHER: i32 = 113;
// The scan algorithms (MPI_Scan and MPI_Exscan), tags 120..=121.
pub(crate) const SCAN_CHAIN: i32 = 120;
pub(crate) const SCAN_DOUBLING: i32 = 121;
// The reduce-scatter algorithms (MPI_Reduce_scatter, MPI_Reduce_scatter_block), tags 130..=134.
pub(crate) const REDUCE_SCATTER_FOLD: i32 = 130;
pub(crate) const REDUCE_SCATTER_HALVE: i32 = 131;
pub(crate) const REDUCE_SCATTER_UNFOLD: i32 = 132;
pub(crate) const REDUCE_SCATTER_PAIRWISE: i32 = 133;
pub(crate) const REDUCE_SCATTER_RING: i32 = 134;
// The bcast algorithms (MPI_Bcast), tags 200..=206.
pub(crate) const BCAST_LINEAR: i32 = 200;
pub(crate) const BCAST_BINOMIAL: i32 = 201;
pub(crate) const BCAST_PIPELINE: i32 = 202;
pub(crate) const BCAST_SCATTER: i32 = 203;
pub(crate) const BCAST_ALLGATHER: i32 = 204;
pub(crate) const BCAST_ROW: i32 = 205;
pub(crate) const BCAST_COLUMN: i32 = 206;
// The gather algorithms (MPI_Gather and MPI_Gatherv), tags 210..=213.
pub(crate) const GATHER_LINEAR: i32 = 210;
pub(crate) const GATHER_BINOMIAL: i32 = 211;
pub(crate) const GATHER_OWNED: i32 = 212;
pub(crate) const GATHER_LENGTHS: i32 = 213;
// The scatter algorithms (MPI_Scatter and MPI_Scatterv), tags 220..=222.
pub(crate) const SCATTER_LINEAR: i32 = 220;
pub(crate) const SCATTER_BINOMIAL: i32 = 221;
pub(crate) const SCATTER_COUNTS: i32 = 222;
// The allgather algorithms (MPI_Allgather and MPI_Allgatherv), tags 230..=236.
pub(crate) const ALLGATHER_RING: i32 = 230;
pub(crate) const ALLGATHER_DOUBLING: i32 = 231;
pub(crate) const ALLGATHER_PAIRWISE: i32 = 232;
pub(crate) const ALLGATHER_BRUCK: i32 = 233;
pub(crate) const ALLGATHER_ROW: i32 = 234;
pub(crate) const ALLGATHER_COLUMN: i32 = 235;
pub(crate) const ALLGATHER_LENGTHS: i32 = 236;
// The alltoall algorithms (MPI_Alltoall and MPI_Alltoallv), tags 240..=244.
pub(crate) const ALLTOALL_LINEAR: i32 = 240;
pub(crate) const ALLTOALL_PAIRWISE: i32 = 241;
pub(crate) const ALLTOALL_BRUCK: i32 = 242;
pub(crate) const ALLTOALL_HYPERCUBE: i32 = 243;
pub(crate) const ALLTOALL_LENGTHS: i32 = 244;
// The shift algorithms (circular shift), tags 250..=251.
pub(crate) const SHIFT_DIRECT: i32 = 250;
pub(crate) const SHIFT_GRAY: i32 = 251;
// The barrier algorithms (MPI_Barrier), tags 300..=303.
pub(crate) const BARRIER_CENTRAL: i32 = 300;
pub(crate) const BARRIER_DISSEMINATION: i32 = 301;
pub(crate) const BARRIER_TREE_UP: i32 = 302;
pub(crate) const BARRIER_TREE_DOWN: i32 = 303;
