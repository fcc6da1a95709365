//! [`dims_create`] (MPI_Dims_create): a balanced grid shape for a number of ranks.
//!
//! The rule is MPICH's, found by checking it against MPICH 4.0.2 for every nnodes in 1..=4096
//! and 1 to 5 dims (`tests/oracle/`): of all ways to write the free part of nnodes as a
//! non-increasing product of the free dims, take the one whose largest and smallest factors are
//! closest; on a tie, the one with the largest smallest factor; then the lexicographically
//! smallest. Fixed (non-zero) entries are kept as given. (MPI takes nnodes as an `int`; above
//! `i32::MAX` rpar keeps the same rule.)
//!
//! Any `usize` answers in milliseconds: the free part m is factored into primes
//! ([`factor`](super::factor): Miller-Rabin and Pollard's rho), its divisors are built from the
//! factorisation (at most 184 320 below 2^64), and the factors are searched largest first, each
//! level trying divisors in ascending order, so that of two factorisations with the same
//! (spread, smallest factor) the one found first is the lexicographically smallest.
//!
//! Once the largest factor `hi` is chosen, the rest of the rule is "largest smallest factor,
//! then lexicographically smallest", a sub-problem that depends only on (what is left to
//! split, how many factors, the bound on them): [`Search::largest_lo`] solves it exactly and
//! remembers the answer, since many prefixes (`41 · 38 · …` and `41 · 19 · 2 · …`) leave the
//! same one. Cuts, each sound on its own:
//! - the smallest of `j` factors of `r` is at most the `j`-th root of `r`, and that bound only
//!   shrinks as the factor before them grows, so a level stops at the first factor whose root
//!   bound cannot beat what is needed;
//! - a prime of `r` larger than the bound on the factors fits in none of them;
//! - fewer prime factors (with multiplicity) than factors means one factor is 1;
//! - at the top, a largest factor `hi` is only worth trying if its smallest factor could give a
//!   better (spread, smallest factor) than the best so far, which sets the threshold the
//!   sub-problem must beat; a sub-problem that cannot beat it is remembered as such.
//!
//! Measured (debug build, 2-core machine): the 184 320-divisor 18 401 055 938 125 660 800 in 1
//! to 64 dims, `usize::MAX`, the prime 2^61 - 1 and the product of the two largest primes below
//! 2^32 each answer in well under a second, most of it building the divisor list.

use super::factor;
use crate::{Error, Result};
use std::collections::HashMap;

/// Fills the zero entries of `dims` with a grid shape for `nnodes` ranks that is as balanced as
/// possible, in non-increasing order; non-zero entries are kept (MPI_Dims_create).
///
/// # Errors
///
/// [`Error::InvalidArgument`] if `nnodes` is 0, or not a multiple of the product of the
/// fixed entries, or that product overflows `usize` (then no `nnodes` is a multiple of it). As
/// in MPI (and MPICH), when every entry is fixed only that divisibility is checked.
///
/// ```
/// let mut dims = [0; 2];
/// rpar::dims_create(72, &mut dims)?;
/// assert_eq!(dims, [9, 8]);
/// let mut dims = [0, 3, 0];
/// rpar::dims_create(24, &mut dims)?;
/// assert_eq!(dims, [4, 3, 2]);
/// assert!(rpar::dims_create(10, &mut [3, 0]).is_err()); // 10 is not a multiple of 3
/// assert!(rpar::dims_create(4, &mut [1 << 40, 1 << 40, 0]).is_err()); // 2^80 overflows
/// let mut dims = [0; 3];
/// rpar::dims_create(usize::MAX, &mut dims)?; // 3 * 5 * 17 * 257 * 641 * 65537 * 6700417
/// assert_eq!(dims, [6_700_417, 2_471_055, 1_114_129]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn dims_create(nnodes: usize, dims: &mut [usize]) -> Result<()> {
    if nnodes == 0 {
        return Err(Error::invalid(
            "dims_create",
            "nnodes must be at least 1, got 0",
        ));
    }
    let fixed = dims
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let Some(fixed) = fixed else {
        return Err(Error::invalid(
            "dims_create",
            format!(
                "the product of the fixed dims {dims:?} overflows usize (its maximum is {}), so nnodes {nnodes} cannot be a multiple of it",
                usize::MAX
            ),
        ));
    };
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
    let m = nnodes / fixed;
    let factors = Search::new(m).best(free);
    for (slot, f) in dims.iter_mut().filter(|d| **d == 0).zip(factors) {
        *slot = f;
    }
    Ok(())
}

/// What is known of a sub-problem (split `rest` into `j` non-increasing factors, each at most
/// `max`): its exact answer, or a bound on it.
#[derive(Debug, Clone, Copy)]
enum Known {
    /// The largest smallest factor is `lo`; the lexicographically smallest factorisation that
    /// reaches it starts with `first`.
    Best { lo: usize, first: usize },
    /// Every factorisation's smallest factor is at most this (0: there is none).
    AtMost(usize),
}

/// The search of the module header, over the divisors of one number.
struct Search {
    /// The number to split.
    m: usize,
    /// Its prime factorisation, primes ascending.
    primes: Vec<(u64, u32)>,
    /// Its divisors ascending, with their largest prime and number of prime factors.
    divisors: Vec<factor::Divisor>,
    /// Sub-problems solved so far, by (rest, j, max).
    known: HashMap<(usize, usize, usize), Known>,
}

impl Search {
    fn new(m: usize) -> Self {
        let primes = factor::prime_factors(m as u64);
        Search {
            m,
            divisors: factor::divisors(&primes),
            primes,
            known: HashMap::new(),
        }
    }

    /// The divisor at `i` (a divisor of `m`, so it fits a `usize`).
    fn divisor(&self, i: usize) -> usize {
        self.divisors[i].value as usize
    }

    /// Whether a divisor `r` of `m` can be split into `j` factors of at most `max` whose
    /// smallest is greater than `need`, judged by its prime factors alone (a quick `false`
    /// saves the search).
    fn may_split(&self, r: usize, j: usize, max: usize, need: usize) -> bool {
        let Ok(i) = self.divisors.binary_search_by_key(&(r as u64), |d| d.value) else {
            return true; // not a divisor: no facts, no cut
        };
        let d = self.divisors[i];
        d.largest_prime as usize <= max && (need == 0 || d.primes as usize >= j)
    }

    /// The index of the first divisor `f` with `f^j >= rest`: the smallest the first of `j`
    /// non-increasing factors of `rest` can be.
    fn first_candidate(&self, rest: usize, j: usize) -> usize {
        self.divisors
            .partition_point(|d| pow(d.value as usize, j) < rest as u128)
    }

    /// The best factorisation of `m` into `k >= 1` non-increasing factors by the rule.
    fn best(&mut self, k: usize) -> Vec<usize> {
        let m = self.m;
        if k == 1 {
            return vec![m];
        }
        if let Some(primes) = self.one_prime_per_factor(k) {
            return primes;
        }
        // (hi, lo) of the best so far; m * 1 * … * 1 always exists
        let mut best: Option<(usize, usize)> = None;
        for i in self.first_candidate(m, k)..self.divisors.len() {
            let hi = self.divisor(i);
            // the smallest factor lo must make (hi - lo, -lo) smaller than the best's
            let need = best.map_or(0, |(bh, bl)| {
                let spread = bh - bl;
                match hi.checked_sub(spread) {
                    // lo > t shrinks the spread; lo = t ties it and needs lo > bl
                    Some(t) if t > bl => t - 1,
                    Some(t) => t,
                    None => 0,
                }
            });
            let rest = m / hi;
            if root(rest, k - 1) <= need {
                break; // and every larger hi: its need only grows, its root only shrinks
            }
            if !self.may_split(rest, k - 1, hi, need) {
                continue;
            }
            if let Some(lo) = self.largest_lo(rest, k - 1, hi, need) {
                best = Some((hi, lo));
            }
        }
        let Some((hi, _)) = best else {
            return [m]
                .into_iter()
                .chain(std::iter::repeat_n(1, k - 1))
                .collect();
        };
        // follow the remembered first factors down
        let mut factors = vec![hi];
        let (mut rest, mut max) = (m / hi, hi);
        for j in (1..k).rev() {
            if j == 1 {
                factors.push(rest);
                break;
            }
            let first = match self.known.get(&(rest, j, max)) {
                Some(&Known::Best { first, .. }) => first,
                _ => {
                    // not remembered as solved (cannot happen: it was, on the way to the best)
                    self.largest_lo(rest, j, max, 0);
                    match self.known.get(&(rest, j, max)) {
                        Some(&Known::Best { first, .. }) => first,
                        _ => rest,
                    }
                }
            };
            factors.push(first);
            rest /= first;
            max = first;
        }
        factors
    }

    /// With at least as many factors as `m` has prime factors (Ω(m), at most 63), the answer
    /// is those primes, largest first, then 1s: the largest factor cannot be below the largest
    /// prime, nor the second below the second largest (it is in some factor after the first),
    /// and so on, and one prime per factor reaches every bound. The search itself then only
    /// ever recurses fewer than 64 deep, however many dims are free.
    fn one_prime_per_factor(&self, k: usize) -> Option<Vec<usize>> {
        let omega: u32 = self.primes.iter().map(|&(_, e)| e).sum();
        if k < omega as usize {
            return None;
        }
        let mut primes = Vec::with_capacity(k);
        for &(p, e) in self.primes.iter().rev() {
            primes.extend(std::iter::repeat_n(p as usize, e as usize));
        }
        primes.resize(k, 1);
        Some(primes)
    }

    /// The largest smallest factor of a non-increasing factorisation of `rest` into `j >= 1`
    /// factors, each at most `max`, if it is greater than `need`; `None` if it is not (or there
    /// is no such factorisation). Remembers the answer, and which first factor reaches it first.
    fn largest_lo(&mut self, rest: usize, j: usize, max: usize, need: usize) -> Option<usize> {
        if j == 1 {
            return (rest <= max && rest > need).then_some(rest);
        }
        match self.known.get(&(rest, j, max)) {
            Some(&Known::Best { lo, .. }) => return (lo > need).then_some(lo),
            Some(&Known::AtMost(bound)) if bound <= need => return None,
            _ => {}
        }
        // (lo, first factor) of the best so far; every later one must beat its lo
        let mut best: Option<(usize, usize)> = None;
        for i in self.first_candidate(rest, j)..self.divisors.len() {
            let f = self.divisor(i);
            if f > max {
                break;
            }
            if !rest.is_multiple_of(f) {
                continue;
            }
            let floor = best.map_or(need, |(lo, _)| lo);
            let r = rest / f;
            if root(r, j - 1) <= floor {
                break; // and every larger f, which leaves less
            }
            if !self.may_split(r, j - 1, f, floor) {
                continue;
            }
            if let Some(lo) = self.largest_lo(r, j - 1, f, floor) {
                best = Some((lo, f));
            }
        }
        let known = match best {
            Some((lo, first)) => Known::Best { lo, first },
            None => Known::AtMost(need),
        };
        self.known.insert((rest, j, max), known);
        best.map(|(lo, _)| lo)
    }
}

/// `d^k`, saturated at `u128::MAX`.
fn pow(d: usize, k: usize) -> u128 {
    u32::try_from(k)
        .ok()
        .and_then(|k| (d as u128).checked_pow(k))
        .unwrap_or(u128::MAX)
}

/// The largest r with r^k <= n, for k >= 1.
fn root(n: usize, k: usize) -> usize {
    if k == 1 || n < 2 {
        return n;
    }
    // a floating-point estimate, off by at most a few, then corrected exactly
    let mut r = (n as f64).powf(1.0 / k as f64) as usize;
    while r > 0 && pow(r, k) > n as u128 {
        r -= 1;
    }
    while pow(r + 1, k) <= n as u128 {
        r += 1;
    }
    r
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
