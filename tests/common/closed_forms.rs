//! The machine constants of the closed-form tests (`sim_closed_forms.rs`, `sim_programs.rs`):
//! dyadic (8, 2, 1/4, 1/8), so that the simulated times and the formulas are computed without
//! rounding and compare with `==`.

use rpar::cost::{Params, Switching};

/// t_n, t_s, t_c, gamma.
pub(crate) const PARAMS: Params = Params {
    t_n: 8.0,
    t_s: 2.0,
    t_c: 0.25,
    gamma: 0.125,
};
/// Bytes per rank.
pub(crate) const M: usize = 64;
/// Both switching techniques.
pub(crate) const SWITCHINGS: [Switching; 2] = [Switching::StoreAndForward, Switching::CutThrough];
