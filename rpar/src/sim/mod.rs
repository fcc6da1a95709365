//! Schedules and a network simulator: see what a collective does on a machine you do not have.
//!
//! * [`record`] runs an algorithm in recording mode for p ranks — each rank's program on a
//!   [`Recorder`] that writes down sends, receives and reductions instead of moving data — and
//!   returns its [`Schedule`]. Ranks run one after another (recording never blocks), so p = 65536
//!   needs no threads. [`Reference`] names the four algorithms of the lecture's closed forms (binomial
//!   broadcast, ring and recursive-doubling allgather, recursive-doubling allreduce) among them;
//!   [`record_collective`] records every algorithm of rpar's own collectives — bcast, reduce,
//!   allreduce, allgather, alltoall, scan, exscan, gather, scatter, reduce-scatter, barrier and
//!   circular shift — the very code a `Comm` runs.
//! * [`Simulator`] executes a schedule on a [`Network`](crate::cost::Network) — ring, 2-D mesh
//!   and torus, hypercube, fully connected — with XY routing on meshes and tori, e-cube routing
//!   on hypercubes, store-and-forward or cut-through switching, and links that carry one message
//!   at a time, so messages sharing a link slow each other down.
//!
//! ```
//! use rpar::cost::{Network, Params, Switching};
//! use rpar::sim::{Reference, Simulator};
//! let schedule = Reference::RingAllgather.record(16, 1024)?;
//! let params = Params::new(1e-6, 0.0, 1e-9, 0.0);
//! let ring = Simulator::new(Network::ring(16), Switching::CutThrough, params).run(&schedule)?;
//! assert_eq!(ring.link_wait, 0.0); // neighbour messages only: no contention
//! # Ok::<(), rpar::Error>(())
//! ```
//!
//! # Plugging in a collective
//!
//! An algorithm written as `fn alg<C: Channel>(ch: &C, …) -> Result<()>` (the crate's
//! collectives are) records with `record(p, |rec| alg(rec, …))`: [`Recorder`] implements
//! `Channel`. It must take its control flow from rank, size and sizes only (received data is
//! never written), should take its output buffer from the caller (then one buffer serves all
//! p recorded ranks), and calls `Channel::local_reduction(bytes)` where it applies an operator
//! so the simulator charges gamma. Tags 500..=599 of the collective context belong to `cost`
//! and `sim`.
//!
//! # Whole programs
//!
//! [`Universe::simulate`](crate::Universe::simulate) runs a user's program, unmodified, and
//! predicts its time on a [`Simulator`]'s machine: each rank's computation between its calls
//! (its own CPU time, times [`Simulator::cpu_scale`]), every message it sent and received, and
//! the algorithm each collective ran (message passing: no shared memory under a simulation)
//! become one schedule with the run's own matching, timed here ([`Prediction`]); [`scaling`]
//! tabulates speedup and efficiency over rank counts.
//!
//! Depends on `cost` (networks and parameters), `collective::Channel`, and for whole programs
//! on `trace` (the per-rank record) and `universe` (the runs).

mod collectives;
mod engine;
mod prediction;
mod recorder;
mod reference;
mod scaling;
mod schedule;

pub use collectives::{record_collective, Collective};
pub use engine::{Report, Simulator};
pub(crate) use prediction::predict;
pub use prediction::{Prediction, RankTime, TimedCall};
pub use recorder::{record, Recorder};
pub use reference::Reference;
pub use scaling::{scaling, Scaling, ScalingRow};
pub use schedule::{Op, Schedule};
