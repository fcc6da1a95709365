//! [`calibrate`]: measures alpha (startup) and beta (per byte) of the running transport by
//! ping-pong between ranks 0 and 1 over a range of message sizes, and fits t(m) = alpha + beta m
//! by least squares, reporting the fit's R^2.
//!
//! How good a straight line is depends on the transport: rpar's in-process transport copies
//! messages up to 32 KiB eagerly and hands larger ones over by rendezvous (one copy straight into
//! the receiver's buffer), so the two regimes have different slopes; in a release build the fit
//! over [`DEFAULT_SIZES`] has R^2 around 0.99 (`examples/costmodel.rs` prints it), in a debug
//! build the eager copies are slower and the fit can be poor. Check `r_squared` before trusting
//! the figures.
//!
//! The messages travel on the communicator's collective context with tag [`CALIBRATE_TAG`]
//! (rpar's range 500..=599 belongs to `cost` and `sim`), so user traffic cannot match them.
//! The whole calibration is one collective call, `calibrate` (algorithm `PingPong`): in a trace
//! each rank shows it as a span that holds the ping-pongs' message arrows.

use std::time::Instant;

use super::params::Params;
use crate::collective::Channel;
use crate::comm::Call;
use crate::{Comm, Error, Result};

/// The tag of calibration messages (collective context).
pub(crate) const CALIBRATE_TAG: i32 = 500;

/// The message sizes [`calibrate`] measures: 0 B and 64 B to 1 MiB by factors of 4.
///
/// ```
/// use rpar::cost::DEFAULT_SIZES;
/// assert_eq!((DEFAULT_SIZES[0], DEFAULT_SIZES[1], DEFAULT_SIZES[8]), (0, 64, 1 << 20));
/// assert!(DEFAULT_SIZES[1..].windows(2).all(|w| w[1] == 4 * w[0]));
/// ```
pub const DEFAULT_SIZES: [usize; 9] = [0, 64, 256, 1024, 4096, 16384, 65536, 262_144, 1 << 20];

/// The timed round trips per size of [`calibrate`] (the median is kept), after two untimed
/// warm-ups. [`calibrate`] is [`calibrate_sizes`] with [`DEFAULT_SIZES`] and this.
///
/// ```
/// use rpar::cost::{calibrate_sizes, DEFAULT_REPS};
/// // the default repetitions over small messages only
/// let cal = rpar::run(2, |world| calibrate_sizes(&world, &[0, 256, 1024], DEFAULT_REPS))?;
/// assert_eq!(cal[0].samples.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 256, 1024]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub const DEFAULT_REPS: usize = 20;

/// What [`calibrate`] measured: the fitted alpha and beta, the fit's R^2, and the samples.
///
/// ```
/// let cal = rpar::run(2, |world| rpar::cost::calibrate_sizes(&world, &[0, 4096, 65536], 5))?;
/// let cal = &cal[0];
/// let (a, b, r2) = rpar::cost::fit_line(&cal.samples.iter().map(|&(m, t)| (m as f64, t)).collect::<Vec<_>>());
/// assert_eq!((cal.alpha, cal.beta, cal.r_squared), (a, b, r2)); // the least-squares line
/// println!("alpha {:.2e} s, {:.2} GB/s", cal.alpha, 1e-9 / cal.beta);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Fitted startup time in seconds (the intercept).
    pub alpha: f64,
    /// Fitted time per byte in seconds (the slope).
    pub beta: f64,
    /// Coefficient of determination of the fit, 1 - SS_res / SS_tot (1 is a perfect line).
    pub r_squared: f64,
    /// (bytes, measured one-way time in seconds), the median of the round trips / 2.
    pub samples: Vec<(usize, f64)>,
}

/// A calibration run's result travels between processes field by field (the MPI transport).
impl crate::RankResult for Calibration {
    fn send_result(&self, link: &crate::ResultLink<'_>) -> crate::Result<()> {
        link.send(&[self.alpha, self.beta, self.r_squared][..])?;
        self.samples.send_result(link)
    }
    fn recv_result(link: &crate::ResultLink<'_>) -> crate::Result<Self> {
        let fit = <[f64; 3]>::recv_result(link)?;
        Ok(Calibration {
            alpha: fit[0],
            beta: fit[1],
            r_squared: fit[2],
            samples: crate::RankResult::recv_result(link)?,
        })
    }
}

impl Calibration {
    /// The model parameters: t_n = alpha, t_c = beta, no per-hop time (one process, no network)
    /// and gamma as given.
    ///
    /// ```
    /// use rpar::cost::{Calibration, Params};
    /// let cal = Calibration { alpha: 2e-6, beta: 1e-9, r_squared: 0.99, samples: vec![] };
    /// assert_eq!(cal.params(0.5e-9), Params::new(2e-6, 0.0, 1e-9, 0.5e-9));
    /// ```
    pub fn params(&self, gamma: f64) -> Params {
        Params::new(self.alpha, 0.0, self.beta, gamma)
    }
}

/// Least-squares fit of y = a + b x; returns (a, b, R^2).
///
/// ```
/// let (a, b, r2) = rpar::cost::fit_line(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]);
/// assert_eq!((a, b, r2), (1.0, 2.0, 1.0));
/// ```
pub fn fit_line(points: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = points.len() as f64;
    if points.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let a = my - b * mx;
    let ss_tot: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let ss_res: f64 = points.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    (a, b, r2)
}

/// Measures alpha and beta on `comm`'s transport (collective: every rank calls it; all get the
/// same result). Ranks 0 and 1 ping-pong [`DEFAULT_SIZES`], [`DEFAULT_REPS`] round trips each
/// after two warm-ups; other ranks wait for the result. Needs at least 2 ranks.
///
/// # Errors
///
/// Those of [`calibrate_sizes`].
///
/// ```
/// let cal = rpar::run(2, |world| rpar::cost::calibrate(&world))?;
/// assert_eq!(cal[0].samples.len(), rpar::cost::DEFAULT_SIZES.len());
/// assert!(cal[0].r_squared <= 1.0);
/// assert_eq!(cal[0], cal[1]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn calibrate(comm: &Comm) -> Result<Calibration> {
    calibrate_sizes(comm, &DEFAULT_SIZES, DEFAULT_REPS)
}

/// [`calibrate`] over the message sizes `sizes` (bytes), with `reps` timed round trips each.
/// Collective: every rank calls it with the same `sizes` and `reps`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for fewer than 2 ranks, fewer than 2 sizes or 0
/// repetitions; [`Error::Aborted`] if another rank fails meanwhile.
///
/// ```
/// use rpar::cost::calibrate_sizes;
/// let cal = rpar::run(3, |world| calibrate_sizes(&world, &[0, 1024, 16384], 4))?;
/// assert_eq!(cal[0].samples.len(), 3);
/// assert!(cal.iter().all(|c| *c == cal[0])); // every rank gets rank 0's figures
/// assert!(rpar::run(1, |world| calibrate_sizes(&world, &[0, 1024], 4)).is_err()); // 1 rank
/// assert!(rpar::run(2, |world| calibrate_sizes(&world, &[1024], 4)).is_err()); // 1 size
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn calibrate_sizes(comm: &Comm, sizes: &[usize], reps: usize) -> Result<Calibration> {
    let p = Channel::size(comm);
    if p < 2 || sizes.len() < 2 || reps == 0 {
        return Err(Error::invalid(
            "cost::calibrate",
            format!(
                "expected at least 2 ranks, 2 sizes and 1 repetition, got {p} ranks, {} sizes, {reps} repetitions",
                sizes.len()
            ),
        ));
    }
    // One collective call: its trace span holds the messages (the `Channel` primitives have no
    // spans of their own), and a rank that calls another collective meanwhile is told so.
    comm.collective(Call::new("calibrate"), &"PingPong", || {
        ping_pong(comm, sizes, reps)
    })
}

/// [`calibrate_sizes`]' measurement, inside its collective call.
fn ping_pong(comm: &Comm, sizes: &[usize], reps: usize) -> Result<Calibration> {
    let p = Channel::size(comm);
    let tag = CALIBRATE_TAG;
    let me = Channel::rank(comm);
    if me > 1 {
        let packed: Vec<f64> = Channel::recv_vec(comm, 0, tag)?;
        return Ok(unpack(&packed));
    }
    let max = sizes.iter().copied().max().unwrap_or(0);
    let mut buf = vec![0u8; max];
    let mut samples = Vec::with_capacity(sizes.len());
    for &size in sizes {
        let msg = &mut buf[..size];
        let mut times = Vec::with_capacity(reps);
        for rep in 0..reps + 2 {
            let start = Instant::now();
            if me == 0 {
                Channel::send(comm, msg, 1, tag)?;
                Channel::recv_into(comm, msg, 1, tag)?;
            } else {
                Channel::recv_into(comm, msg, 0, tag)?;
                Channel::send(comm, msg, 0, tag)?;
            }
            if rep >= 2 {
                times.push(start.elapsed().as_secs_f64() / 2.0);
            }
        }
        times.sort_by(f64::total_cmp);
        samples.push((size, times[times.len() / 2]));
    }
    let points: Vec<(f64, f64)> = samples.iter().map(|&(m, t)| (m as f64, t)).collect();
    let (alpha, beta, r_squared) = fit_line(&points);
    let mut result = Calibration {
        alpha,
        beta,
        r_squared,
        samples,
    };
    // Rank 0's measurement is the answer (rank 1 timed the same round trips, shifted).
    if me == 0 {
        let packed = pack(&result);
        for r in 1..p {
            Channel::send(comm, &packed, r, tag)?;
        }
    } else {
        result = unpack(&Channel::recv_vec::<f64>(comm, 0, tag)?);
    }
    Ok(result)
}

fn pack(c: &Calibration) -> Vec<f64> {
    let mut v = vec![c.alpha, c.beta, c.r_squared];
    v.extend(c.samples.iter().flat_map(|&(m, t)| [m as f64, t]));
    v
}

fn unpack(v: &[f64]) -> Calibration {
    Calibration {
        alpha: v[0],
        beta: v[1],
        r_squared: v[2],
        samples: v[3..]
            .chunks_exact(2)
            .map(|c| (c[0] as usize, c[1]))
            .collect(),
    }
}
