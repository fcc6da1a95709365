//! The sweep of `collective_reduce.rs` and `collective_reduce_ops.rs`: a sequential reference
//! for one rank count and element count, and a run of every form of every reduction collective
//! (reduce, allreduce, scan, exscan — each also in place — reduce_scatter,
//! reduce_scatter_block) with every algorithm, `Auto` included, against it.
//!
//! The reference folds the ranks' inputs in rank order with a plain closure of the test's own,
//! never with rpar's operator, so a wrong operator fails as a wrong algorithm does. Integer
//! results must be identical; float results identical bit for bit where every bracketing is
//! exact, else within the rounding bound [`Reference::within_rounding`] derives. Roots: 0, 1,
//! `p / 2` and `p - 1`.

use super::roots;
use rpar::{Allreduce, Bcast, Comm, Datatype, Error, Loc, ReduceOp, ReduceScatter, Scan};
use std::fmt::Debug;
use std::ops::Range;

#[allow(unused_imports)] // each test file uses the part it needs
pub(crate) use crate::common::reduction::{ALLREDUCES, REDUCES};

pub(crate) const SCANS: [Scan; 3] = [Scan::Auto, Scan::Linear, Scan::RecursiveDoubling];
pub(crate) const REDUCE_SCATTERS: [ReduceScatter; 4] = [
    ReduceScatter::Auto,
    ReduceScatter::RecursiveHalving,
    ReduceScatter::Pairwise,
    ReduceScatter::Ring,
];

/// (`Ring`, a non-commutative operator) is left out of every sweep: allreduce's and
/// reduce_scatter's `Ring` is being changed from running the pairwise exchange for such an
/// operator to refusing it with `Error::InvalidArgument`, and what it does with one is
/// asserted neither way here.
pub(crate) fn ring_with_non_commutative_op<T: Copy>(is_ring: bool, op: &impl ReduceOp<T>) -> bool {
    is_ring && !op.is_commutative()
}

/// Which forms a sweep runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Forms {
    /// Every form, the in-place ones included.
    All,
    /// Only the forms with a separate send buffer: for the largest counts, where the in-place
    /// forms (the same algorithms, on the caller's buffer) would double the sweep's time.
    NotInPlace,
}

/// An element type the sweeps compare: exactly (floats bit for bit), or within a bound.
pub(crate) trait Element: Datatype + Debug + Sync {
    /// Whether `self` is `want` exactly; for floats, bit for bit.
    fn identical(&self, want: &Self) -> bool;

    /// Whether `self` is within `bound` of `want` (for the types without rounding: identical).
    fn within(&self, want: &Self, bound: f64) -> bool {
        let _ = bound;
        self.identical(want)
    }
}

macro_rules! exact_element {
    ($($ty:ty),*) => {$(
        impl Element for $ty {
            fn identical(&self, want: &Self) -> bool {
                self == want
            }
        }
    )*};
}
exact_element!(u64, i64, bool, [u64; 2]);

impl Element for f64 {
    fn identical(&self, want: &Self) -> bool {
        self.to_bits() == want.to_bits()
    }
    fn within(&self, want: &Self, bound: f64) -> bool {
        (self - want).abs() <= bound
    }
}

impl Element for [f64; 2] {
    fn identical(&self, want: &Self) -> bool {
        self[0].identical(&want[0]) && self[1].identical(&want[1])
    }
}

impl Element for Loc<f64, usize> {
    fn identical(&self, want: &Self) -> bool {
        self.value.identical(&want.value) && self.index == want.index
    }
}

/// The sequential reference for one (rank count, element count): every rank's input, the
/// inclusive prefixes in rank order, how close a result must come to them, and the uneven
/// reduce_scatter counts.
pub(crate) struct Reference<T> {
    inputs: Vec<Vec<T>>,
    /// `prefixes[i]`: the inputs of ranks `0..=i` folded in rank order.
    prefixes: Vec<Vec<T>>,
    /// `None`: results must be identical to the prefixes; `Some(b)`: element `k` of a result
    /// standing for prefix `i` must be within `b[i][k]` of it.
    bounds: Option<Vec<Vec<f64>>>,
    /// reduce_scatter's counts: weights 0, 1, 2, 0, 1, 2, …, the rest to the last rank.
    counts: Vec<usize>,
}

impl<T: Element> Reference<T> {
    /// The reference for `p` ranks of `n` elements each, element `i` of rank `r` being
    /// `input(r, i)`, prefixes folded with `fold(lower, higher)`.
    pub(crate) fn new(
        p: usize,
        n: usize,
        fold: impl Fn(T, T) -> T,
        input: impl Fn(usize, usize) -> T,
    ) -> Self {
        let inputs: Vec<Vec<T>> = (0..p)
            .map(|r| (0..n).map(|i| input(r, i)).collect())
            .collect();
        let mut prefixes: Vec<Vec<T>> = Vec::with_capacity(p);
        for x in &inputs {
            let next = match prefixes.last() {
                Some(acc) => acc.iter().zip(x).map(|(&a, &b)| fold(a, b)).collect(),
                None => x.clone(),
            };
            prefixes.push(next);
        }
        let weight: usize = (0..p).map(|i| i % 3).sum::<usize>().max(1);
        let mut counts: Vec<usize> = (0..p).map(|i| n * (i % 3) / weight).collect();
        counts[p - 1] += n - counts.iter().sum::<usize>();
        Reference {
            inputs,
            prefixes,
            bounds: None,
            counts,
        }
    }

    fn n(&self) -> usize {
        self.inputs[0].len()
    }

    /// Checks `got` against elements `range` of prefix `prefix`.
    fn agrees(
        &self,
        got: &[T],
        prefix: usize,
        range: Range<usize>,
        what: impl FnOnce() -> String,
    ) -> rpar::Result<()> {
        let bounds = self.bounds.as_ref().map(|b| &b[prefix][range.clone()]);
        compare(got, &self.prefixes[prefix][range], bounds, what)
    }
}

impl Reference<f64> {
    /// For sums of arbitrary floats, whose bracketing changes the rounding: a sum of `m` terms
    /// computed in any order is within `gamma(m - 1) * sum |x|` of the exact sum, `gamma(k) =
    /// k u / (1 - k u)`, `u = EPSILON / 2` the unit roundoff (Higham, "Accuracy and Stability of
    /// Numerical Algorithms", 2nd ed., section 4.2). The algorithm's result and the rank-ordered
    /// reference are both such sums, so they differ by at most `2 gamma(m - 1) sum |x|`, which
    /// `m * EPSILON * sum |x|` bounds with room to spare for the rounding of `sum |x|` itself
    /// (here `m <= 64`, so `m u < 1e-14`). A result that misses or doubles one rank's
    /// contribution is off by that term, which the tests' inputs keep far beyond this bound.
    pub(crate) fn within_rounding(mut self) -> Self {
        let mut bounds = Vec::with_capacity(self.inputs.len());
        let mut magnitude = vec![0.0f64; self.n()];
        for (i, x) in self.inputs.iter().enumerate() {
            for (m, v) in magnitude.iter_mut().zip(x) {
                *m += v.abs();
            }
            let terms = (i + 1) as f64;
            bounds.push(magnitude.iter().map(|m| terms * f64::EPSILON * m).collect());
        }
        self.bounds = Some(bounds);
        self
    }
}

/// Checks `got` against `want` (within `bounds`, elementwise, where given) without printing
/// huge vectors; an error names the first difference.
fn compare<T: Element>(
    got: &[T],
    want: &[T],
    bounds: Option<&[f64]>,
    what: impl FnOnce() -> String,
) -> rpar::Result<()> {
    let agree = |k: usize| match bounds {
        Some(b) => got[k].within(&want[k], b[k]),
        None => got[k].identical(&want[k]),
    };
    if got.len() == want.len() {
        match (0..got.len()).find(|&k| !agree(k)) {
            None => return Ok(()),
            Some(k) => {
                return Err(Error::user(format!(
                    "{}: element {k} is {:?}, expected {:?}{}",
                    what(),
                    got[k],
                    want[k],
                    bounds.map_or(String::new(), |b| format!(" within {:e}", b[k]))
                )))
            }
        }
    }
    Err(Error::user(format!(
        "{}: got {} elements, expected {}",
        what(),
        got.len(),
        want.len()
    )))
}

/// `got` if it is `Some` exactly where `expected`, else an error saying which it was.
fn present<V>(
    got: Option<V>,
    expected: bool,
    what: impl FnOnce() -> String,
) -> rpar::Result<Option<V>> {
    if got.is_some() == expected {
        Ok(got)
    } else {
        let (want, was) = if expected {
            ("Some", "None")
        } else {
            ("None", "Some")
        };
        Err(Error::user(format!(
            "{}: expected {want}, got {was}",
            what()
        )))
    }
}

/// Every form of every reduction collective (of `forms`) with every algorithm on this rank,
/// checked against `re`.
pub(crate) fn every_algorithm<T: Element, O: ReduceOp<T>>(
    world: &Comm,
    re: &Reference<T>,
    op: &O,
    forms: Forms,
) -> rpar::Result<()> {
    let (r, n) = (world.rank(), re.n());
    let on = OnRank {
        world,
        re,
        op,
        in_place: forms == Forms::All,
        p: world.size(),
        r,
        n,
        mine: &re.inputs[r][..],
    };
    on.reduce_forms()?;
    on.allreduce_forms()?;
    on.prefix_forms()?;
    on.reduce_scatter_forms()
}

/// One rank's part of a sweep: its communicator, the reference, the operator, whether to run
/// the in-place forms; the rank count, this rank, the element count and this rank's input.
struct OnRank<'a, T, O> {
    world: &'a Comm,
    re: &'a Reference<T>,
    op: &'a O,
    in_place: bool,
    p: usize,
    r: usize,
    n: usize,
    mine: &'a [T],
}

impl<T: Element, O: ReduceOp<T>> OnRank<'_, T, O> {
    /// What a check is about: the form, the algorithm, and where in the sweep.
    fn what(&self, form: &str, algorithm: impl Debug) -> String {
        let (p, n, r) = (self.p, self.n, self.r);
        format!("{form} {algorithm:?} p={p} n={n} rank={r}")
    }

    /// reduce and (if `in_place`) reduce_in_place, every algorithm and root.
    fn reduce_forms(&self) -> rpar::Result<()> {
        let (re, r, total) = (self.re, self.r, self.p - 1);
        for algorithm in REDUCES {
            for root in roots(self.p) {
                let ctx = |form: &str| self.what(&format!("{form} root={root}"), algorithm);
                let got = self
                    .world
                    .using(algorithm)
                    .reduce(self.mine, self.op, root)?;
                if let Some(v) = present(got, r == root, || ctx("reduce"))? {
                    re.agrees(&v, total, 0..self.n, || ctx("reduce"))?;
                }
                if !self.in_place {
                    continue;
                }
                let mut buf = self.mine.to_vec();
                self.world
                    .using(algorithm)
                    .reduce(rpar::InPlace(&mut buf[..]), self.op, root)?;
                if r == root {
                    re.agrees(&buf, total, 0..self.n, || ctx("reduce_in_place"))?;
                } else {
                    // elsewhere the buffer is only read
                    compare(&buf, self.mine, None, || ctx("reduce_in_place, non-root"))?;
                }
            }
        }
        Ok(())
    }

    /// allreduce and (if `in_place`) allreduce_in_place, every algorithm.
    fn allreduce_forms(&self) -> rpar::Result<()> {
        let (re, world, total) = (self.re, self.world, self.p - 1);
        // where rounding may differ, every rank still gets bitwise the same result
        let rounded = re.bounds.is_some();
        for algorithm in ALLREDUCES {
            if ring_with_non_commutative_op(algorithm == Allreduce::Ring, self.op) {
                continue;
            }
            let ctx = |form: &str| self.what(form, algorithm);
            let got = world.using(algorithm).allreduce(self.mine, self.op)?;
            re.agrees(&got, total, 0..self.n, || ctx("allreduce"))?;
            if rounded {
                same_on_every_rank(world, &got, || ctx("allreduce"))?;
            }
            if !self.in_place {
                continue;
            }
            let mut buf = self.mine.to_vec();
            world
                .using(algorithm)
                .allreduce(rpar::InPlace(&mut buf[..]), self.op)?;
            re.agrees(&buf, total, 0..self.n, || ctx("allreduce_in_place"))?;
            if rounded {
                same_on_every_rank(world, &buf, || ctx("allreduce_in_place"))?;
            }
        }
        Ok(())
    }

    /// scan and exscan, and (if `in_place`) scan_in_place and exscan_in_place, every algorithm.
    fn prefix_forms(&self) -> rpar::Result<()> {
        let (re, world, r, all) = (self.re, self.world, self.r, 0..self.n);
        for algorithm in SCANS {
            let ctx = |form: &str| self.what(form, algorithm);
            let got = world.using(algorithm).scan(self.mine, self.op)?;
            re.agrees(&got, r, all.clone(), || ctx("scan"))?;
            let got = world.using(algorithm).exscan(self.mine, self.op)?;
            if let Some(v) = present(got, r > 0, || ctx("exscan"))? {
                re.agrees(&v, r - 1, all.clone(), || ctx("exscan"))?;
            }
            if !self.in_place {
                continue;
            }
            let mut buf = self.mine.to_vec();
            world
                .using(algorithm)
                .scan(rpar::InPlace(&mut buf[..]), self.op)?;
            re.agrees(&buf, r, all.clone(), || ctx("scan_in_place"))?;
            let mut buf = self.mine.to_vec();
            world
                .using(algorithm)
                .exscan(rpar::InPlace(&mut buf[..]), self.op)?;
            if r > 0 {
                re.agrees(&buf, r - 1, all.clone(), || ctx("exscan_in_place"))?;
            } else {
                // rank 0 keeps its own values
                compare(&buf, self.mine, None, || ctx("exscan_in_place at rank 0"))?;
            }
        }
        Ok(())
    }

    /// reduce_scatter (uneven counts, some zero) and reduce_scatter_block, every algorithm.
    fn reduce_scatter_forms(&self) -> rpar::Result<()> {
        let (re, world, p, r) = (self.re, self.world, self.p, self.r);
        let start: usize = re.counts[..r].iter().sum();
        let block = self.n / p;
        for algorithm in REDUCE_SCATTERS {
            if ring_with_non_commutative_op(algorithm == ReduceScatter::Ring, self.op) {
                continue;
            }
            let got = world
                .using(algorithm)
                .reduce_scatter((self.mine, rpar::Counts(&re.counts)), self.op)?;
            re.agrees(&got, p - 1, start..start + re.counts[r], || {
                let counts = &re.counts;
                self.what(&format!("reduce_scatter counts={counts:?}"), algorithm)
            })?;
            let mine = &self.mine[..block * p];
            let got = world.using(algorithm).reduce_scatter(mine, self.op)?;
            re.agrees(&got, p - 1, r * block..(r + 1) * block, || {
                self.what("reduce_scatter_block", algorithm)
            })?;
        }
        Ok(())
    }
}

/// Whether every rank holds bitwise what rank 0 holds (rank 0's copy sent by a linear bcast).
fn same_on_every_rank<T: Element>(
    world: &Comm,
    mine: &[T],
    what: impl FnOnce() -> String,
) -> rpar::Result<()> {
    let mut first = mine.to_vec();
    world.using(Bcast::Linear).bcast(&mut first[..], 0)?;
    compare(mine, &first, None, || {
        format!("{}, against rank 0's result", what())
    })
}

/// Runs [`every_algorithm`] on `p` ranks for each of `refs` (all built for `p` ranks).
pub(crate) fn run_sweep<T: Element, O: ReduceOp<T> + Sync>(
    p: usize,
    refs: &[Reference<T>],
    op: &O,
    forms: Forms,
) {
    rpar::run(p, |world| {
        for re in refs {
            every_algorithm(&world, re, op, forms)?;
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{}, p = {p}: {e}", std::any::type_name::<O>()));
}

/// [`run_sweep`] with the references for the element counts `counts` (see [`Reference::new`]).
pub(crate) fn sweep<T: Element, O: ReduceOp<T> + Sync>(
    p: usize,
    counts: &[usize],
    forms: Forms,
    op: &O,
    fold: impl Fn(T, T) -> T + Copy,
    input: impl Fn(usize, usize) -> T + Copy,
) {
    let refs: Vec<Reference<T>> = counts
        .iter()
        .map(|&n| Reference::new(p, n, fold, input))
        .collect();
    run_sweep(p, &refs, op, forms);
}
