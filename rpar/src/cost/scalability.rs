//! Scalability analysis: speedup S = T_1 / T_p, efficiency E = S / p, total overhead
//! T_0 = p T_p - T_1, and the isoefficiency function — how fast the problem size W (= T_1, in
//! units of the serial step) must grow with p to hold E fixed.
//!
//! From E = T_1 / (p T_p) = W / (W + T_0(W, p)): E stays at e exactly when
//! W = K T_0(W, p) with K = e / (1 - e). [`ScalingModel::isoefficiency`] solves that equation
//! (by bisection, so T_0 may depend on W).
//!
//! The lecture's example, summing n numbers on p ranks ([`SumOfNumbers`]): T_1 = n, and
//! T_p = n/p + log2 p (local sums, then log2 p combine-and-pass steps), so T_0 = p log2 p and
//! W = K p log2 p. At p = 16, E = 0.5: K = 1, n >= 16 * 4 = 64; at p = 32, n >= 32 * 5 = 160,
//! 2.5 times as much.

use crate::{Error, Result};

/// Speedup **S = T_1 / T_p**.
///
/// ```
/// assert_eq!(rpar::cost::speedup(100.0, 25.0), 4.0);
/// ```
pub fn speedup(t1: f64, tp: f64) -> f64 {
    t1 / tp
}

/// Efficiency **E = S / p = T_1 / (p T_p)**.
///
/// ```
/// // a speedup of 4 on 8 ranks
/// assert_eq!(rpar::cost::efficiency(100.0, 25.0, 8), 0.5);
/// ```
pub fn efficiency(t1: f64, tp: f64, p: usize) -> f64 {
    t1 / (p as f64 * tp)
}

/// Total overhead **T_0 = p T_p - T_1**: the time all ranks together spend on top of the serial
/// work.
///
/// ```
/// use rpar::cost::{efficiency, total_overhead};
/// let (t1, tp, p) = (100.0, 25.0, 8);
/// assert_eq!(total_overhead(t1, tp, p), 100.0);
/// // E = T_1 / (T_1 + T_0)
/// assert_eq!(efficiency(t1, tp, p), t1 / (t1 + total_overhead(t1, tp, p)));
/// ```
pub fn total_overhead(t1: f64, tp: f64, p: usize) -> f64 {
    p as f64 * tp - t1
}

/// The isoefficiency constant **K = e / (1 - e)**, for 0 < e < 1: efficiency `e` holds exactly
/// when W = K T_0(W, p).
///
/// # Errors
///
/// [`Error::InvalidArgument`] unless 0 < `e` < 1.
///
/// ```
/// use rpar::cost::isoefficiency_constant;
/// assert_eq!(isoefficiency_constant(0.5)?, 1.0);
/// assert_eq!(isoefficiency_constant(0.75)?, 3.0);
/// assert!(isoefficiency_constant(1.0).is_err());
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn isoefficiency_constant(e: f64) -> Result<f64> {
    if e > 0.0 && e < 1.0 {
        Ok(e / (1.0 - e))
    } else {
        Err(Error::invalid(
            "isoefficiency_constant",
            format!("expected an efficiency strictly between 0 and 1, got {e}"),
        ))
    }
}

/// A parallel algorithm's run time as a function of the problem size W and p.
///
/// Implement `serial_time` (T_1, which is W itself when W is counted in serial steps) and
/// `parallel_time`; speedup, efficiency, overhead and isoefficiency follow.
///
/// ```
/// use rpar::cost::{ScalingModel, SumOfNumbers};
/// let sum = SumOfNumbers;
/// assert_eq!(sum.efficiency(64.0, 16), 0.5);
/// assert_eq!(sum.min_problem_size(0.5, 16)?, 64);
/// # Ok::<(), rpar::Error>(())
/// ```
pub trait ScalingModel {
    /// T_1 of a problem of size `w`.
    ///
    /// ```
    /// use rpar::cost::{ScalingModel, SumOfNumbers};
    /// assert_eq!(SumOfNumbers.serial_time(64.0), 64.0);
    /// ```
    fn serial_time(&self, w: f64) -> f64;

    /// T_p of a problem of size `w` on `p` ranks.
    ///
    /// ```
    /// use rpar::cost::{ScalingModel, SumOfNumbers};
    /// assert_eq!(SumOfNumbers.parallel_time(64.0, 16), 64.0 / 16.0 + 4.0); // n/p + log2 p
    /// ```
    fn parallel_time(&self, w: f64, p: usize) -> f64;

    /// Speedup at size `w` on `p` ranks: **T_1(w) / T_p(w)**.
    ///
    /// ```
    /// use rpar::cost::{ScalingModel, SumOfNumbers};
    /// assert_eq!(SumOfNumbers.speedup(64.0, 16), 64.0 / 8.0);
    /// ```
    fn speedup(&self, w: f64, p: usize) -> f64 {
        speedup(self.serial_time(w), self.parallel_time(w, p))
    }

    /// Efficiency at size `w` on `p` ranks: **T_1(w) / (p T_p(w))**.
    ///
    /// ```
    /// use rpar::cost::{ScalingModel, SumOfNumbers};
    /// assert_eq!(SumOfNumbers.efficiency(64.0, 16), 0.5);
    /// assert!(SumOfNumbers.efficiency(640.0, 16) > 0.9); // larger problems scale better
    /// ```
    fn efficiency(&self, w: f64, p: usize) -> f64 {
        efficiency(self.serial_time(w), self.parallel_time(w, p), p)
    }

    /// Total overhead at size `w` on `p` ranks: **T_0 = p T_p(w) - T_1(w)**.
    ///
    /// ```
    /// use rpar::cost::{ScalingModel, SumOfNumbers};
    /// assert_eq!(SumOfNumbers.overhead(64.0, 16), 16.0 * 4.0); // p log2 p, whatever n
    /// assert_eq!(SumOfNumbers.overhead(6400.0, 16), 16.0 * 4.0);
    /// ```
    fn overhead(&self, w: f64, p: usize) -> f64 {
        total_overhead(self.serial_time(w), self.parallel_time(w, p), p)
    }

    /// The isoefficiency function: the problem size W at which the efficiency on `p` ranks is
    /// exactly `e`, the root of W = K T_0(W, p). Assumes the efficiency grows with W (errors if
    /// no W up to 2^1000 reaches `e`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] unless 0 < `e` < 1, or if no problem size reaches `e`.
    ///
    /// ```
    /// use rpar::cost::{ScalingModel, SumOfNumbers};
    /// // W = K p log2 p with K = 1 for e = 0.5
    /// let w = SumOfNumbers.isoefficiency(0.5, 16)?;
    /// assert!((w - 16.0 * 4.0).abs() < 1e-9);
    /// let w = SumOfNumbers.isoefficiency(0.5, 32)?;
    /// assert!((w - 32.0 * 5.0).abs() < 1e-9);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn isoefficiency(&self, e: f64, p: usize) -> Result<f64> {
        let k = isoefficiency_constant(e)?;
        let gap = |w: f64| w - k * self.overhead(w, p);
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        while gap(hi) < 0.0 {
            lo = hi;
            hi *= 2.0;
            if hi > 1e300 {
                return Err(Error::invalid(
                    "ScalingModel::isoefficiency",
                    format!("efficiency {e} is not reached on {p} ranks at any problem size"),
                ));
            }
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if gap(mid) < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(hi)
    }

    /// The smallest whole problem size with efficiency at least `e` on `p` ranks.
    ///
    /// # Errors
    ///
    /// Those of [`ScalingModel::isoefficiency`].
    ///
    /// ```
    /// use rpar::cost::{ScalingModel, SumOfNumbers};
    /// assert_eq!(SumOfNumbers.min_problem_size(0.5, 32)?, 160);
    /// assert_eq!(SumOfNumbers.min_problem_size(0.8, 16)?, 256); // K = 4: 4 * 16 * 4
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn min_problem_size(&self, e: f64, p: usize) -> Result<u64> {
        let w = self.isoefficiency(e, p)?;
        // The real root, rounded up; step down while the smaller size still reaches `e`
        // (bisection lands within one ulp of the root).
        let mut n = w.ceil() as u64;
        while n > 0 && self.efficiency((n - 1) as f64, p) >= e {
            n -= 1;
        }
        while self.efficiency(n as f64, p) < e {
            n += 1;
        }
        Ok(n)
    }
}

/// The lecture's sum of n numbers on p ranks: **T_1 = n, T_p = n/p + log2 p**, so
/// T_0 = p log2 p and the isoefficiency function is W = K p log2 p.
///
/// ```
/// use rpar::cost::{ScalingModel, SumOfNumbers};
/// // to hold E = 0.5, n must grow as p log2 p: 64 numbers on 16 ranks, 160 on 32
/// assert_eq!(SumOfNumbers.min_problem_size(0.5, 16)?, 64);
/// assert_eq!(SumOfNumbers.min_problem_size(0.5, 32)?, 160);
/// assert_eq!(SumOfNumbers.efficiency(160.0, 32), 0.5);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SumOfNumbers;

impl ScalingModel for SumOfNumbers {
    fn serial_time(&self, n: f64) -> f64 {
        n
    }

    fn parallel_time(&self, n: f64, p: usize) -> f64 {
        n / p as f64 + (p as f64).log2()
    }
}
