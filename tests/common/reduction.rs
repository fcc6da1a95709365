//! The sequential references of the reduction tests (`collective_reduce.rs`,
//! `collective_into.rs`): every rank's input, made up deterministically, its reductions in rank
//! order, the operators (wrapping `Sum` on `u64`, and the composition of affine maps, which is
//! associative but not commutative) and the algorithm lists.

use rpar::{Allreduce, Datatype, Error, Reduce, ReduceOp};
use std::fmt::Debug;

/// Every reduce algorithm.
pub(crate) const REDUCES: [Reduce; 5] = [
    Reduce::Auto,
    Reduce::Linear,
    Reduce::Binomial,
    Reduce::Rabenseifner,
    Reduce::SharedMemory,
];

/// Every allreduce algorithm.
pub(crate) const ALLREDUCES: [Allreduce; 6] = [
    Allreduce::Auto,
    Allreduce::RecursiveDoubling,
    Allreduce::Ring,
    Allreduce::Rabenseifner,
    Allreduce::ReduceBcast,
    Allreduce::SharedMemory,
];

/// Affine map `x -> a x + b` as `[a, b]`; `compose(f, g)` applies `f` first, then `g`.
pub(crate) fn compose(f: [u64; 2], g: [u64; 2]) -> [u64; 2] {
    [
        f[0].wrapping_mul(g[0]),
        f[1].wrapping_mul(g[0]).wrapping_add(g[1]),
    ]
}

/// The sequential reference for one (rank count, element count): every rank's input, the
/// inclusive prefixes in rank order, and the uneven reduce_scatter counts.
pub(crate) struct Reference<T> {
    pub(crate) inputs: Vec<Vec<T>>,
    pub(crate) prefixes: Vec<Vec<T>>,
    pub(crate) counts: Vec<usize>,
}

impl<T: Datatype> Reference<T> {
    pub(crate) fn new<O: ReduceOp<T>>(
        p: usize,
        n: usize,
        op: &O,
        gen: impl Fn(usize, usize) -> T,
    ) -> Self {
        let inputs: Vec<Vec<T>> = (0..p)
            .map(|r| (0..n).map(|i| gen(r, i)).collect())
            .collect();
        let mut prefixes = vec![inputs[0].clone()];
        for x in &inputs[1..] {
            let mut next = prefixes.last().unwrap().clone();
            op.reduce_right(&mut next, x);
            prefixes.push(next);
        }
        // Uneven counts with zeros: weights 0, 1, 2, 0, 1, 2, …; the rest goes to the last rank.
        let weight: usize = (0..p).map(|i| i % 3).sum::<usize>().max(1);
        let mut counts: Vec<usize> = (0..p).map(|i| n * (i % 3) / weight).collect();
        counts[p - 1] += n - counts.iter().sum::<usize>();
        Reference {
            inputs,
            prefixes,
            counts,
        }
    }

    pub(crate) fn total(&self) -> &[T] {
        self.prefixes.last().unwrap()
    }
}

pub(crate) fn check<T: PartialEq + Debug>(
    got: &[T],
    want: &[T],
    what: impl FnOnce() -> String,
) -> rpar::Result<()> {
    if got == want {
        return Ok(());
    }
    let first = got.iter().zip(want).position(|(g, w)| g != w);
    Err(Error::user(format!(
        "{}: got {} elements, expected {}; first difference at {:?}",
        what(),
        got.len(),
        want.len(),
        first
    )))
}

/// Checks that a ring algorithm refused a non-commutative operator (it would reorder the
/// operands) with `InvalidArgument`.
pub(crate) fn refused<R>(got: rpar::Result<R>, what: impl FnOnce() -> String) -> rpar::Result<()> {
    match got {
        Err(Error::InvalidArgument { message, .. }) if message.contains("commutative") => Ok(()),
        Err(other) => Err(other),
        Ok(_) => Err(Error::user(format!(
            "{}: a non-commutative operator was not refused",
            what()
        ))),
    }
}
