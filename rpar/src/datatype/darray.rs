//! MPI_Type_create_darray: the part of a distributed array (HPF's block, cyclic(k) and
//! undistributed dimensions over a process grid) that one process owns, as a [`TypeMap`].
//!
//! Semantics of MPI-4.0 §5.1.4 as MPICH implements them (`MPIR_Type_block`,
//! `MPIR_Type_cyclic`): the process grid is row-major whatever the array's `order`; in each
//! dimension a process owns, for `Block(b)`, the indices `[c b, min((c + 1) b, n))` (`b`
//! defaults to `ceil(n / p)`, and `b p >= n` is required), for `Cyclic(k)`, the blocks
//! `[c k + j p k, … + k)` cut at `n` (`k` defaults to 1), and for `Undistributed` all of them (with one
//! process in that dimension). The type holds the owned elements in array order, with lower
//! bound 0 and the extent of the whole array. `tests/datatype_oracle.rs` checks this against
//! MPICH.

use super::{Combiner, Order, TypeMap};
use crate::{Error, Result};

const CALL: &str = "MPI_Type_create_darray";

/// How one dimension of a [`TypeMap::darray`] is distributed over the processes of the grid
/// (MPI's `array_of_distribs` and `array_of_dargs`; an argument of `None` is
/// `MPI_DISTRIBUTE_DFLT_DARG`).
///
/// ```
/// use rpar::{Datatype, Distribution, Order, TypeMap};
/// // 10 elements over 3 processes, cyclic in blocks of 2: process 1 owns 2, 3, 8, 9
/// let t = TypeMap::darray(3, 1, &[10], &[Distribution::Cyclic(Some(2))], &[3], Order::C,
///                         &u8::type_map())?;
/// assert_eq!(t.to_string(), "{(u8, 2), (u8, 3), (u8, 8), (u8, 9)}");
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Contiguous blocks, one per process (MPI_DISTRIBUTE_BLOCK), of the given size or, for
    /// `None` (MPI_DISTRIBUTE_DFLT_DARG), `ceil(n / p)`.
    Block(Option<usize>),
    /// Blocks dealt to the processes in turn (MPI_DISTRIBUTE_CYCLIC), of the given size or,
    /// for `None` (MPI_DISTRIBUTE_DFLT_DARG), 1.
    Cyclic(Option<usize>),
    /// Not distributed (MPI_DISTRIBUTE_NONE): every process of the dimension (there must be
    /// one) owns all of it.
    Undistributed,
}

impl Distribution {
    /// MPICH's number of the distribution (`MPI_DISTRIBUTE_BLOCK` = 121, `_CYCLIC` = 122,
    /// `_NONE` = 123) and of its argument (`MPI_DISTRIBUTE_DFLT_DARG` = -49767), for
    /// [`Combiner::integers`].
    pub(super) fn codes(self) -> (isize, isize) {
        let darg = |d: Option<usize>| d.map_or(-49767, |d| d as isize);
        match self {
            Distribution::Block(d) => (121, darg(d)),
            Distribution::Cyclic(d) => (122, darg(d)),
            Distribution::Undistributed => (123, -49767),
        }
    }
}

/// An error of a constructor that darray calls, as darray's own.
fn as_darray(e: Error) -> Error {
    match e {
        Error::InvalidArgument { message, .. } => Error::invalid(CALL, message),
        other => other,
    }
}

/// The indices of a dimension of `n` elements that coordinate `c` of `p` owns, as runs
/// `(length, first index)` in increasing order.
fn owned(
    d: usize,
    dist: Distribution,
    n: usize,
    p: usize,
    c: usize,
) -> Result<Vec<(usize, usize)>> {
    let bad = |what: String| Error::invalid(CALL, format!("dimension {d}: {what}"));
    match dist {
        Distribution::Undistributed if p != 1 => Err(bad(format!(
            "expected 1 process for an undistributed dimension (MPI_DISTRIBUTE_NONE), got {p}"
        ))),
        Distribution::Undistributed => Ok(vec![(n, 0)]),
        Distribution::Block(b) => {
            let b = match b {
                Option::None => n.div_ceil(p),
                Some(0) => return Err(bad("expected a block size >= 1, got 0".into())),
                Some(b) if b.checked_mul(p).is_none_or(|all| all < n) => {
                    return Err(bad(format!(
                        "expected blocks that cover the dimension (block * processes >= size), \
                         got blocks of {b} for {p} processes and {n} elements"
                    )))
                }
                Some(b) => b,
            };
            let start = c.saturating_mul(b);
            let len = n.saturating_sub(start).min(b);
            Ok(if len == 0 { vec![] } else { vec![(len, start)] })
        }
        Distribution::Cyclic(k) => {
            let k = match k {
                Option::None => 1,
                Some(0) => return Err(bad("expected a cyclic block size >= 1, got 0".into())),
                Some(k) => k,
            };
            let Some(period) = k.checked_mul(p) else {
                return Err(bad(format!(
                    "{p} processes of blocks of {k} overflow usize"
                )));
            };
            let mut runs = Vec::new();
            let mut start = c.saturating_mul(k);
            while start < n {
                runs.push(((n - start).min(k), start));
                start = start.saturating_add(period);
            }
            Ok(runs)
        }
    }
}

impl TypeMap {
    /// The elements that process `rank` of `size` owns of a `gsizes` array of `old`, stored
    /// in `order`, distributed over a row-major `psizes` process grid as `distribs` say
    /// (MPI_Type_create_darray). The result has lower bound 0 and the extent of the whole
    /// array, like a [`subarray`](TypeMap::subarray); its elements are in array order.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `gsizes`, `distribs` and `psizes` are empty or of
    /// different lengths, `size` is not the product of `psizes` or `rank` is not below it, a
    /// size is 0, an undistributed dimension has more than one process, a block or cyclic
    /// size is 0, blocks do not cover their dimension, or a displacement or bound does not fit
    /// in `isize`.
    ///
    /// ```
    /// use rpar::{Datatype, Distribution::*, Order, TypeMap};
    /// // a 4 x 4 matrix of f64 in 2 x 2 blocks over a 2 x 2 grid: rank 1 owns the top-right block
    /// let t = TypeMap::darray(4, 1, &[4, 4], &[Block(None), Block(None)], &[2, 2], Order::C,
    ///                         &f64::type_map())?;
    /// let at: Vec<isize> = t.entries().iter().map(|&(_, d)| d / 8).collect();
    /// assert_eq!(at, [2, 3, 6, 7]);
    /// assert_eq!((t.lb(), t.extent()), (0, 16 * 8));
    /// // blocks that do not cover the dimension are an error
    /// assert!(TypeMap::darray(2, 0, &[10], &[Block(Some(4))], &[2], Order::C, &f64::type_map())
    ///     .is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn darray(
        size: usize,
        rank: usize,
        gsizes: &[usize],
        distribs: &[Distribution],
        psizes: &[usize],
        order: Order,
        old: &TypeMap,
    ) -> Result<TypeMap> {
        let n = gsizes.len();
        if n == 0 || distribs.len() != n || psizes.len() != n {
            return Err(Error::invalid(
                CALL,
                format!(
                    "expected gsizes, distribs and psizes of one length >= 1, got {}, {} and {}",
                    n,
                    distribs.len(),
                    psizes.len()
                ),
            ));
        }
        let grid = psizes.iter().try_fold(1usize, |a, &p| a.checked_mul(p));
        if grid != Some(size) || rank >= size {
            return Err(Error::invalid(
                CALL,
                format!(
                    "expected size = the product of psizes {psizes:?} and rank < size, got size \
                     {size} and rank {rank}"
                ),
            ));
        }
        if let Some(d) = (0..n).find(|&d| gsizes[d] == 0 || psizes[d] == 0) {
            return Err(Error::invalid(
                CALL,
                format!(
                    "dimension {d}: expected a size and a process count >= 1, got {} and {}",
                    gsizes[d], psizes[d]
                ),
            ));
        }
        // row-major coordinates of `rank` in the grid, whatever the array's order
        let mut coords = vec![0; n];
        let mut rest = rank;
        for d in (0..n).rev() {
            coords[d] = rest % psizes[d];
            rest /= psizes[d];
        }
        let runs = (0..n)
            .map(|d| owned(d, distribs[d], gsizes[d], psizes[d], coords[d]))
            .collect::<Result<Vec<_>>>()?;
        let overflow = || Error::invalid(CALL, "a displacement or bound overflows isize");
        // dimensions from the fastest-varying to the slowest; each step places the runs of one
        // dimension of copies of the type so far, which spans one index of that dimension
        let dims: Vec<usize> = match order {
            Order::C => (0..n).rev().collect(),
            Order::Fortran => (0..n).collect(),
        };
        let mut t = old.clone();
        let mut step = old.extent(); // bytes between successive indices of dimension d
        for &d in &dims {
            let blocks = runs[d]
                .iter()
                .map(|&(len, first)| {
                    isize::try_from(first)
                        .ok()
                        .and_then(|f| f.checked_mul(step))
                        .map(|at| (len, at))
                        .ok_or_else(overflow)
                })
                .collect::<Result<Vec<_>>>()?;
            let unit = t.resized(0, step).map_err(as_darray)?;
            t = Self::hindexed(&blocks, &unit).map_err(as_darray)?;
            step = isize::try_from(gsizes[d])
                .ok()
                .and_then(|g| g.checked_mul(step))
                .ok_or_else(overflow)?;
        }
        let t = t.resized(0, step).map_err(as_darray)?;
        Ok(t.built_by(Combiner::Darray {
            size,
            rank,
            gsizes: gsizes.to_vec(),
            distribs: distribs.to_vec(),
            psizes: psizes.to_vec(),
            order,
            inner: old.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::BasicType::U8;
    use Distribution::{Block, Cyclic};

    fn owned_by(size: usize, rank: usize, dist: Distribution, n: usize) -> Vec<usize> {
        let t = TypeMap::darray(
            size,
            rank,
            &[n],
            &[dist],
            &[size],
            Order::C,
            &TypeMap::basic(U8),
        )
        .unwrap();
        t.entries().iter().map(|&(_, d)| d as usize).collect()
    }

    #[test]
    fn every_element_has_exactly_one_owner() {
        for n in [1, 5, 10, 17] {
            for p in 1..=5 {
                for dist in [Block(None), Cyclic(None), Cyclic(Some(3)), Block(Some(n))] {
                    let mut all: Vec<usize> =
                        (0..p).flat_map(|r| owned_by(p, r, dist, n)).collect();
                    all.sort_unstable();
                    assert_eq!(all, (0..n).collect::<Vec<_>>(), "{dist:?} n={n} p={p}");
                }
            }
        }
    }

    #[test]
    fn default_blocks_round_up_and_the_last_owner_may_own_less() {
        assert_eq!(owned_by(3, 0, Block(None), 10), [0, 1, 2, 3]);
        assert_eq!(owned_by(3, 2, Block(None), 10), [8, 9]);
        assert_eq!(owned_by(4, 3, Block(None), 5), Vec::<usize>::new()); // blocks of 2: none left
        assert_eq!(owned_by(3, 2, Cyclic(None), 10), [2, 5, 8]);
    }
}
