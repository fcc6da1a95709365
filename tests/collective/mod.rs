//! What the collective tests (`collective_move.rs`, `collective_reduce.rs`,
//! `collective_reduce_ops.rs`) share: the sweeps' rank counts, element counts and roots, and
//! the sweep of every reduction collective ([`reduction`]).
//!
//! Every algorithm of every operation runs against a sequential reference on every rank count
//! 1..=33 and 64 with 0, 1, 7 and 1000 elements ([`COUNTS`]), and with [`LARGE`] elements on
//! the rank counts of [`LARGE_RANKS`]; roots 0, 1, `p / 2` and `p - 1` ([`roots`]).

#![allow(dead_code)] // each test file uses the part it needs

pub(crate) mod reduction;

#[allow(unused_imports)] // each test file uses the part it needs
pub(crate) use crate::common::{mix, roots};

/// Element counts per rank of the sweeps over every rank count.
pub(crate) const COUNTS: [usize; 4] = [0, 1, 7, 1000];

/// The element count of the large sweeps: long messages (the rendezvous path, many pipeline
/// segments and shared-memory blocks).
pub(crate) const LARGE: usize = 100_000;

/// The rank counts that also get [`LARGE`] elements: one rank, two, three (a fold of a
/// non-power of two), a power of two, a non-power of two above 16, 33 (`2^5 + 1`) and 64.
pub(crate) const LARGE_RANKS: [usize; 7] = [1, 2, 3, 8, 20, 33, 64];

/// The rank counts of the full sweeps: 1..=33 and 64.
pub(crate) fn every_rank_count() -> impl Iterator<Item = usize> {
    (1..=33).chain([64])
}
