//! [`dims_create`] (MPI_Dims_create): a balanced grid shape for a number of ranks.
//!
//! The rule is MPICH's, found by checking it against MPICH 4.0.2 for every nnodes in 1..=4096
//! and 1 to 5 dims (`tests/oracle/`): of all ways to write the free part of nnodes as a
//! non-increasing product of the free dims, take the one whose largest and smallest factors are
//! closest; on a tie, the one with the largest smallest factor; then the lexicographically
//! smallest. Fixed (non-zero) entries are kept as given.

use crate::{Error, Result};

/// Fills the zero entries of `dims` with a grid shape for `nnodes` ranks that is as balanced as
/// possible, in non-increasing order; non-zero entries are kept (MPI_Dims_create).
///
/// # Errors
///
/// [`Error::InvalidArgument`] if `nnodes` is 0 or not a multiple of the product of the
/// fixed entries. As in MPI (and MPICH), when every entry is fixed only that divisibility is
/// checked.
///
/// ```
/// let mut dims = [0; 2];
/// rpar::dims_create(72, &mut dims)?;
/// assert_eq!(dims, [9, 8]);
/// let mut dims = [0, 3, 0];
/// rpar::dims_create(24, &mut dims)?;
/// assert_eq!(dims, [4, 3, 2]);
/// assert!(rpar::dims_create(10, &mut [3, 0]).is_err()); // 10 is not a multiple of 3
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn dims_create(nnodes: usize, dims: &mut [usize]) -> Result<()> {
    if nnodes == 0 {
        return Err(Error::invalid(
            "dims_create",
            "nnodes must be at least 1, got 0",
        ));
    }
    let fixed: usize = dims.iter().filter(|&&d| d != 0).product();
    if !nnodes.is_multiple_of(fixed) {
        return Err(Error::invalid(
            "dims_create",
            format!(
                "nnodes {nnodes} is not a multiple of {fixed}, the product of the fixed dims {dims:?}"
            ),
        ));
    }
    let free = dims.iter().filter(|&&d| d == 0).count();
    if free == 0 {
        return Ok(());
    }
    let mut best = None;
    let mut current = Vec::with_capacity(free);
    let m = nnodes / fixed;
    search(m, free, m, &divisors(m), &mut current, &mut best);
    let (_, factors) = best.expect("every m >= 1 has the factorization m * 1 * … * 1");
    for (slot, f) in dims.iter_mut().filter(|d| **d == 0).zip(factors) {
        *slot = f;
    }
    Ok(())
}

/// The quality key of a factorization, smaller is better: spread, then minus the smallest
/// factor, then the factors themselves.
type Key = (usize, std::cmp::Reverse<usize>, Vec<usize>);

/// The divisors of `m`, largest first (trial division up to the square root).
fn divisors(m: usize) -> Vec<usize> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1;
    while d <= m / d {
        if m.is_multiple_of(d) {
            small.push(d);
            if d != m / d {
                large.push(m / d);
            }
        }
        d += 1;
    }
    large.extend(small.into_iter().rev());
    large
}

/// Tries every non-increasing factorization of `m` into `k` more factors, each at most `max`;
/// `divs` holds the divisors of the whole number, largest first (a superset of `m`'s).
fn search(
    m: usize,
    k: usize,
    max: usize,
    divs: &[usize],
    current: &mut Vec<usize>,
    best: &mut Option<(Key, Vec<usize>)>,
) {
    if k == 0 {
        if m == 1 {
            let (hi, lo) = (current[0], current[current.len() - 1]);
            let key = (hi - lo, std::cmp::Reverse(lo), current.clone());
            if best.as_ref().is_none_or(|(b, _)| key < *b) {
                *best = Some((key, current.clone()));
            }
        }
        return;
    }
    // The next factor f satisfies f^k >= m (the others are at most f) and f <= max.
    for &f in divs.iter().filter(|&&f| f <= max && m.is_multiple_of(f)) {
        if (f as u128)
            .checked_pow(k as u32)
            .is_some_and(|p| p < m as u128)
        {
            break;
        }
        current.push(f);
        search(m / f, k - 1, f, divs, current, best);
        current.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_examples() {
        for (n, want) in [
            (72, vec![9, 8]),
            (1800, vec![9, 8, 5, 5]),
            (126, vec![7, 3, 3, 2]),
            (360, vec![10, 6, 6]),
        ] {
            let mut dims = vec![0; want.len()];
            dims_create(n, &mut dims).unwrap();
            assert_eq!(dims, want, "nnodes {n}");
        }
    }

    #[test]
    fn zero_nnodes_and_empty_dims() {
        assert!(dims_create(0, &mut [0, 0]).is_err());
        dims_create(5, &mut []).unwrap();
    }

    #[test]
    fn many_divisors_and_many_dims_stay_cheap() {
        let mut dims = [0; 6];
        dims_create(720_720, &mut dims).unwrap();
        assert_eq!(dims.iter().product::<usize>(), 720_720);
        let mut dims = [0; 12];
        dims_create(1 << 20, &mut dims).unwrap();
        assert_eq!(dims, [4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2]);
        let mut dims = [0; 3];
        dims_create(1_000_000_007, &mut dims).unwrap(); // a prime
        assert_eq!(dims, [1_000_000_007, 1, 1]);
    }
}
