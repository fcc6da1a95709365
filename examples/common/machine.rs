//! The simulated machine of an example's `--simulate P…` ([`rpar::Universe::simulate`]): a
//! network of the chosen topology sized for each rank count, and its constants — given, or
//! this machine's own, calibrated by ping-pong between two ranks.

use clap::ValueEnum;
use rpar::cost::{calibrate, calibrate_sizes, Network, Params, Switching};
use rpar::sim::Simulator;
use rpar::{Error, Result};

/// What `--simulate` needs to know about the machine to predict for.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct MachineArgs {
    /// Predict the run on each of these rank counts instead of timing it here: the program runs
    /// for real on a thread per rank, and each rank's time is its own CPU time between rpar
    /// calls plus the network model's time for every message (Universe::simulate)
    #[arg(long, num_args = 1.., value_name = "P")]
    pub(crate) simulate: Vec<usize>,
    /// The simulated network (mesh and torus: the most nearly square grid of P nodes;
    /// hypercube: P a power of two)
    #[arg(long, value_enum, default_value_t = Topology::Torus)]
    pub(crate) network: Topology,
    /// Switching of the simulated network
    #[arg(long, value_enum, default_value_t = Switch::CutThrough)]
    pub(crate) switching: Switch,
    /// Startup time alpha (t_n) in microseconds [default: this machine's, by ping-pong]
    #[arg(long, requires = "beta")]
    pub(crate) alpha: Option<f64>,
    /// Time per byte beta (t_c) in nanoseconds [default: this machine's, by ping-pong]
    #[arg(long, requires = "alpha")]
    pub(crate) beta: Option<f64>,
    /// Per-hop time t_s of the simulated network in microseconds
    #[arg(long, default_value_t = 0.0)]
    pub(crate) hop: f64,
    /// How long the simulated cores take for one second of this machine's CPU time (2: half
    /// as fast)
    #[arg(long, default_value_t = 1.0)]
    pub(crate) cpu_scale: f64,
}

/// The topologies of `rpar::cost::Network`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Topology {
    /// A ring of P nodes.
    Ring,
    /// A 2-D mesh.
    Mesh,
    /// A 2-D torus (wrap-around mesh).
    Torus,
    /// A hypercube.
    Hypercube,
    /// Every node linked to every other.
    Full,
}

/// `rpar::cost::Switching`, for the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Switch {
    /// The header reserves the path, the body streams behind it.
    CutThrough,
    /// Each hop receives the whole message before passing it on.
    StoreAndForward,
}

impl Topology {
    /// The network of this topology with `p` nodes.
    pub(crate) fn network(self, p: usize) -> Result<Network> {
        let grid = || -> Result<(usize, usize)> {
            let mut dims = [0, 0];
            rpar::dims_create(p, &mut dims)?;
            Ok((dims[0], dims[1]))
        };
        Ok(match self {
            Topology::Ring => Network::ring(p),
            Topology::Mesh => grid().map(|(r, c)| Network::mesh(r, c))?,
            Topology::Torus => grid().map(|(r, c)| Network::torus(r, c))?,
            Topology::Hypercube => Network::hypercube_of(p)?,
            Topology::Full => Network::fully_connected(p),
        })
    }
}

impl MachineArgs {
    /// The rank counts of `--simulate`, each at least 1.
    pub(crate) fn rank_counts(&self) -> Result<&[usize]> {
        if self.simulate.contains(&0) {
            return Err(Error::user(
                "--simulate needs rank counts of at least 1, got 0",
            ));
        }
        Ok(&self.simulate)
    }

    /// The simulated machine in words, for a report's heading.
    pub(crate) fn describe(&self) -> String {
        format!(
            "a simulated {:?} network ({:?}, per-hop {} us, cpu scale {})",
            self.network, self.switching, self.hop, self.cpu_scale
        )
    }

    /// The constants (t_n, t_s, t_c; gamma 0): alpha and beta as given, else calibrated here by
    /// ping-pong (`quick`: fewer sizes), with a line saying which.
    pub(crate) fn params(&self, quick: bool) -> Result<(Params, String)> {
        let (alpha, beta, how) = match (self.alpha, self.beta) {
            (Some(a), Some(b)) => (a * 1e-6, b * 1e-9, "given".to_string()),
            _ => {
                let cal = rpar::run(2, |world| {
                    if quick {
                        calibrate_sizes(&world, &[0, 1024, 16384, 65536], 5)
                    } else {
                        calibrate(&world)
                    }
                })?
                .remove(0);
                // a negative intercept (possible with noisy small sizes) makes no physical sense
                let how = format!("calibrated by ping-pong, R^2 = {:.4}", cal.r_squared);
                (cal.alpha.max(0.0), cal.beta, how)
            }
        };
        let line = format!(
            "cost model: alpha = {:.3} us, beta = {:.4} ns/B ({how})",
            alpha * 1e6,
            beta * 1e9
        );
        Ok((Params::new(alpha, self.hop * 1e-6, beta, 0.0), line))
    }

    /// The simulated machine for `p` ranks with constants `params`.
    pub(crate) fn machine(&self, p: usize, params: Params) -> Result<Simulator> {
        let switching = match self.switching {
            Switch::CutThrough => Switching::CutThrough,
            Switch::StoreAndForward => Switching::StoreAndForward,
        };
        if self.cpu_scale < 0.0 {
            return Err(Error::user(format!(
                "--cpu-scale must be at least 0, got {}",
                self.cpu_scale
            )));
        }
        Ok(Simulator::new(self.network.network(p)?, switching, params).cpu_scale(self.cpu_scale))
    }
}
