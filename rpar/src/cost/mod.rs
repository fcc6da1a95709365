//! The cost model: predict a parallel program's time before running it.
//!
//! * [`Params`] — the Hockney / alpha-beta-gamma constants: startup t_n (alpha), per-hop time
//!   t_s, per-byte time t_c (beta), per-byte reduction time gamma; point-to-point times under
//!   store-and-forward and cut-through [`Switching`].
//! * [`Network`] — ring, 2-D mesh and torus, hypercube, fully connected: diameter, distance,
//!   XY and e-cube routes (the Gray code that embeds a ring in a hypercube is
//!   [`crate::gray_code`]).
//! * [`lecture`] — the lecture's closed forms for every collective on ring, torus and hypercube,
//!   each with its derivation, and where the simulator disagrees and why.
//! * [`Algorithm`] / [`Cost`] — the alpha-beta-gamma cost of the standard collective algorithms
//!   (binomial, van de Geijn, ring, recursive doubling, Bruck, Rabenseifner, pairwise,
//!   dissemination, linear) as functions of p and m.
//! * [`calibrate`] — alpha and beta of the running transport, by ping-pong and least squares.
//! * [`ScalingModel`] — speedup, efficiency, overhead T_0 = p T_p - T_1 and isoefficiency.
//!
//! ```
//! use rpar::cost::{lecture, Network, Params, Switching};
//! let params = Params::new(2e-6, 0.1e-6, 1e-9, 0.0);
//! for p in [16, 256, 4096] {
//!     let ring = lecture::all_to_all_broadcast(&params, &Network::ring(p), Switching::CutThrough, 1024)?;
//!     let cube = lecture::all_to_all_broadcast(&params, &Network::hypercube_of(p)?, Switching::CutThrough, 1024)?;
//!     assert!(cube < ring); // log2 p startups instead of p - 1
//! }
//! # Ok::<(), rpar::Error>(())
//! ```
//!
//! Depends on `comm` and `collective::Channel` (for calibration) only.

mod algorithms;
mod calibrate;
pub mod lecture;
mod network;
mod params;
mod scalability;

pub use algorithms::{Algorithm, Cost};
pub use calibrate::{
    calibrate, calibrate_sizes, fit_line, Calibration, DEFAULT_REPS, DEFAULT_SIZES,
};
pub use network::{Link, Network, Switching};
pub use params::Params;
pub use scalability::{
    efficiency, isoefficiency_constant, speedup, total_overhead, ScalingModel, SumOfNumbers,
};
