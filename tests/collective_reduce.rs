//! Every algorithm of every reduction collective (reduce, allreduce, scan, exscan,
//! reduce_scatter, reduce_scatter_block) against a sequential reference, with a commutative
//! operator (wrapping `Sum` on `u64`) and a non-commutative one (composition of affine maps
//! `x -> a x + b` modulo 2^64, which is associative but not commutative, so any reordering or
//! rebracketing mistake shows).
//!
//! Sweep (chosen to keep the file well under a minute in debug on 2 shared cores):
//! element counts 0, 1 and 7 for every rank count 1..=33 and 64; 1000 elements for the rank
//! counts in `MEDIUM_RANKS`; 100000 elements for those in `LARGE_RANKS` (powers of two and not,
//! with and without the fold). Roots: 0, the middle rank and the last. The `Auto` variants,
//! which run one of the explicit algorithms, are checked in the larger sweeps only.

mod common;

use common::reduction::{check, compose, mix, refused, roots, Reference, ALLREDUCES, REDUCES};
use rpar::{Allreduce, Comm, Datatype, Error, Reduce, ReduceOp, ReduceScatter, Scan, Sum, UserOp};
use std::fmt::Debug;

const SMALL_COUNTS: [usize; 3] = [0, 1, 7];
const MEDIUM_RANKS: [usize; 8] = [2, 3, 5, 8, 12, 17, 32, 33];
const LARGE_RANKS: [usize; 4] = [1, 3, 4, 6];

const SCANS: [Scan; 3] = [Scan::Auto, Scan::Linear, Scan::RecursiveDoubling];
const REDUCE_SCATTERS: [ReduceScatter; 4] = [
    ReduceScatter::Auto,
    ReduceScatter::RecursiveHalving,
    ReduceScatter::Pairwise,
    ReduceScatter::Ring,
];

/// Runs every algorithm of every operation on one rank and checks it (`Ring` with a
/// non-commutative operator must refuse).
fn every_algorithm<T, O>(
    world: &Comm,
    refs: &[Reference<T>],
    op: &O,
    auto: bool,
) -> rpar::Result<()>
where
    T: Datatype + PartialEq + Debug,
    O: ReduceOp<T>,
{
    let (p, r) = (world.size(), world.rank());
    let roots = roots(p);
    // `Auto` runs one of the explicit algorithms; the sweeps with larger counts also check it.
    let skip = |auto_variant: bool| auto_variant && !auto;
    for re in refs {
        let mine = &re.inputs[r][..];
        let n = mine.len();
        for algorithm in REDUCES {
            if skip(algorithm == Reduce::Auto) {
                continue;
            }
            for &root in &roots {
                let got = world.reduce_with(mine, op, root, algorithm)?;
                let ctx = || format!("reduce {algorithm:?} p={p} n={n} root={root} rank={r}");
                match got {
                    Some(v) if r == root => check(&v, re.total(), ctx)?,
                    None if r != root => {}
                    _ => return Err(Error::user(format!("{}: wrong Some/None", ctx()))),
                }
            }
        }
        for algorithm in ALLREDUCES {
            if skip(algorithm == Allreduce::Auto) {
                continue;
            }
            let got = world.allreduce_with(mine, op, algorithm);
            if algorithm == Allreduce::Ring && !op.is_commutative() {
                refused(got, || format!("allreduce Ring p={p} n={n}"))?;
                continue;
            }
            check(&got?, re.total(), || {
                format!("allreduce {algorithm:?} p={p} n={n} rank={r}")
            })?;
        }
        let mut inplace = mine.to_vec();
        world.allreduce_in_place(&mut inplace[..], op)?;
        check(&inplace, re.total(), || {
            format!("allreduce_in_place p={p} n={n}")
        })?;
        for algorithm in SCANS {
            if skip(algorithm == Scan::Auto) {
                continue;
            }
            let got = world.scan_with(mine, op, algorithm)?;
            check(&got, &re.prefixes[r], || {
                format!("scan {algorithm:?} p={p} n={n} rank={r}")
            })?;
            let got = world.exscan_with(mine, op, algorithm)?;
            let ctx = || format!("exscan {algorithm:?} p={p} n={n} rank={r}");
            match got {
                Some(v) if r > 0 => check(&v, &re.prefixes[r - 1], ctx)?,
                None if r == 0 => {}
                _ => return Err(Error::user(format!("{}: wrong Some/None", ctx()))),
            }
        }
        let start: usize = re.counts[..r].iter().sum();
        let own = start..start + re.counts[r];
        let block = n / p;
        for algorithm in REDUCE_SCATTERS {
            if skip(algorithm == ReduceScatter::Auto) {
                continue;
            }
            if algorithm == ReduceScatter::Ring && !op.is_commutative() {
                let what = || format!("reduce_scatter Ring p={p} n={n}");
                refused(
                    world.reduce_scatter_with(mine, &re.counts, op, algorithm),
                    what,
                )?;
                let got = world.reduce_scatter_block_with(&mine[..block * p], op, algorithm);
                refused(got, what)?;
                continue;
            }
            let got = world.reduce_scatter_with(mine, &re.counts, op, algorithm)?;
            check(&got, &re.total()[own.clone()], || {
                format!(
                    "reduce_scatter {algorithm:?} p={p} n={n} rank={r} counts={:?}",
                    re.counts
                )
            })?;
            let got = world.reduce_scatter_block_with(&mine[..block * p], op, algorithm)?;
            check(&got, &re.total()[r * block..(r + 1) * block], || {
                format!("reduce_scatter_block {algorithm:?} p={p} n={n} rank={r}")
            })?;
        }
    }
    Ok(())
}

/// Both operators for `p` ranks and the given element counts.
fn sweep(p: usize, counts: &[usize], auto: bool) {
    let sum_refs: Vec<Reference<u64>> = counts
        .iter()
        .map(|&n| Reference::new(p, n, &Sum, |r, i| mix(r, i, 1)))
        .collect();
    let affine = UserOp::non_commutative(compose);
    // Zero elements have no order to get wrong: the commutative sweep covers them.
    let affine_refs: Vec<Reference<[u64; 2]>> = counts
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| Reference::new(p, n, &affine, |r, i| [mix(r, i, 2) | 1, mix(r, i, 3)]))
        .collect();
    rpar::run(p, |world| {
        every_algorithm(&world, &sum_refs, &Sum, auto)?;
        every_algorithm(&world, &affine_refs, &affine, auto)
    })
    .unwrap_or_else(|e| panic!("p = {p}: {e}"));
}

#[test]
fn small_counts_every_rank_count() {
    for p in (1..=33).chain([64]) {
        sweep(p, &SMALL_COUNTS, false);
    }
}

#[test]
fn thousand_elements() {
    for p in MEDIUM_RANKS {
        sweep(p, &[1000], true);
    }
}

#[test]
fn hundred_thousand_elements() {
    for p in LARGE_RANKS {
        sweep(p, &[100_000], true);
    }
}
