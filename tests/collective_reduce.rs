//! Every algorithm of every reduction collective (reduce, allreduce, scan, exscan, each also in
//! place, reduce_scatter, reduce_scatter_block), `Auto` included, against a sequential
//! reference (the sweep of `collective/reduction.rs`), with
//!
//! - integers: wrapping `Sum` on `u64`, and the composition of affine maps `x -> a x + b`
//!   modulo 2^64, which is associative but not commutative, so any reordering shows; results
//!   identical to the reference;
//! - floats (`f64`): `Sum` of dyadic values, whose every bracketing is exact, and the
//!   composition of affine maps with `a = ±1` and dyadic `b`, exact as well (non-commutative):
//!   results bit for bit the rank-ordered ones; and `Sum` of arbitrary floats: within the
//!   rounding bound of [`Reference::within_rounding`], and bitwise the same on every rank for
//!   allreduce.
//!
//! Element counts 0, 1, 7 and 1000 for every rank count 1..=33 and 64, every form; 100000 for
//! the rank counts in [`LARGE_RANKS`], the forms with a send buffer ([`Forms::NotInPlace`]).
//! Roots 0, 1, `p / 2` and `p - 1`. (`Ring`, non-commutative operator) is left out (see
//! `ring_with_non_commutative_op`).

mod collective;
mod common;

use collective::reduction::{run_sweep, sweep, Forms, Reference};
use collective::{every_rank_count, mix, COUNTS, LARGE, LARGE_RANKS};
use rpar::{Sum, UserOp};

/// Affine map `x -> a x + b` as `[a, b]`; `compose(f, g)` applies `f` first, then `g`.
fn compose(f: [u64; 2], g: [u64; 2]) -> [u64; 2] {
    [
        f[0].wrapping_mul(g[0]),
        f[1].wrapping_mul(g[0]).wrapping_add(g[1]),
    ]
}

/// [`compose`] on `f64`.
fn compose_f64(f: [f64; 2], g: [f64; 2]) -> [f64; 2] {
    [f[0] * g[0], f[1] * g[0] + g[1]]
}

/// Zero elements have no order to get wrong: the commutative sweeps cover them.
fn nonzero(counts: &[usize]) -> Vec<usize> {
    counts.iter().copied().filter(|&n| n > 0).collect()
}

fn integers(p: usize, counts: &[usize], forms: Forms) {
    sweep(p, counts, forms, &Sum, u64::wrapping_add, |r, i| {
        mix(r, i, 1)
    });
    let affine = UserOp::non_commutative(compose);
    sweep(p, &nonzero(counts), forms, &affine, compose, |r, i| {
        [mix(r, i, 2) | 1, mix(r, i, 3)]
    });
}

/// A dyadic value in `[-1024, 1024)` with ten bits after the point: sums of up to 64 of them
/// need at most 27 significant bits, so every bracketing is exact in `f64`.
fn dyadic(r: usize, i: usize, salt: u64) -> f64 {
    ((mix(r, i, salt) % (1 << 21)) as i64 - (1 << 20)) as f64 / 1024.0
}

/// An arbitrary float: a full mantissa, either sign, magnitudes up to `2^9` over 20 binades.
fn arbitrary(r: usize, i: usize) -> f64 {
    let unit = (mix(r, i, 7) >> 11) as f64 / (1u64 << 53) as f64 - 0.5; // [-0.5, 0.5)
    let unit = if unit == 0.0 { 0.25 } else { unit };
    unit * f64::powi(2.0, (mix(r, i, 8) % 21) as i32 - 10)
}

fn floats(p: usize, counts: &[usize], forms: Forms) {
    sweep(
        p,
        counts,
        forms,
        &Sum,
        |a: f64, b| a + b,
        |r, i| dyadic(r, i, 4),
    );
    // `a = ±1` keeps every product exact; the sign flips make the order matter
    let affine = UserOp::non_commutative(compose_f64);
    sweep(p, &nonzero(counts), forms, &affine, compose_f64, |r, i| {
        let a = if mix(r, i, 5) & 1 == 0 { 1.0 } else { -1.0 };
        [a, dyadic(r, i, 6)]
    });
    let rounded: Vec<Reference<f64>> = counts
        .iter()
        .map(|&n| Reference::new(p, n, |a, b| a + b, arbitrary).within_rounding())
        .collect();
    run_sweep(p, &rounded, &Sum, forms);
}

#[test]
fn integers_every_rank_count() {
    for p in every_rank_count() {
        integers(p, &COUNTS, Forms::All);
    }
}

#[test]
fn integers_hundred_thousand_elements() {
    for p in LARGE_RANKS {
        integers(p, &[LARGE], Forms::NotInPlace);
    }
}

#[test]
fn floats_every_rank_count() {
    for p in every_rank_count() {
        floats(p, &COUNTS, Forms::All);
    }
}

#[test]
fn floats_hundred_thousand_elements() {
    for p in LARGE_RANKS {
        floats(p, &[LARGE], Forms::NotInPlace);
    }
}
