//! [`Params`]: the machine constants of the Hockney (alpha-beta) model extended by the lecture's
//! per-hop time and by a per-byte reduction time (the alpha-beta-gamma model), and the
//! point-to-point transfer time over `l` hops under either switching technique.

use super::network::{Network, Switching};

/// Machine constants, all in seconds.
///
/// A message of `m` bytes over `l` hops costs `t_n + (m t_c + t_s) l` with store-and-forward
/// switching (every hop receives the whole message before forwarding it: each hop pays the header
/// time and the full transfer), and `t_n + m t_c + t_s l` with cut-through (the header pays t_s
/// per hop, the body streams behind it and pays its transfer once). With `l = 1` and `t_s = 0`
/// both are Hockney's `alpha + m beta`.
///
/// ```
/// use rpar::cost::{Params, Switching};
/// let p = Params::new(10e-6, 1e-6, 1e-9, 0.5e-9);
/// let sf = p.point_to_point(1000, 3, Switching::StoreAndForward);
/// let ct = p.point_to_point(1000, 3, Switching::CutThrough);
/// assert!((sf - (10e-6 + (1000.0 * 1e-9 + 1e-6) * 3.0)).abs() < 1e-15);
/// assert!((ct - (10e-6 + 1000.0 * 1e-9 + 3e-6)).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Startup time t_n (Hockney's alpha): paid once per message, by the sender.
    pub t_n: f64,
    /// Per-hop time t_s: the header's time through one link and switch.
    pub t_s: f64,
    /// Per-byte transfer time t_c (beta, 1 / bandwidth) of one link.
    pub t_c: f64,
    /// Per-byte time gamma of a local reduction (combining two operands of `m` bytes).
    pub gamma: f64,
}

impl Params {
    /// The constants t_n, t_s, t_c and gamma, in seconds (per byte for t_c and gamma).
    ///
    /// ```
    /// use rpar::cost::Params;
    /// // 2 us startup, 0.1 us per hop, 1 GB/s links, 0.5 ns per byte reduced
    /// let p = Params::new(2e-6, 0.1e-6, 1e-9, 0.5e-9);
    /// assert_eq!((p.t_n, p.t_s, p.t_c, p.gamma), (2e-6, 0.1e-6, 1e-9, 0.5e-9));
    /// ```
    pub fn new(t_n: f64, t_s: f64, t_c: f64, gamma: f64) -> Self {
        Params {
            t_n,
            t_s,
            t_c,
            gamma,
        }
    }

    /// Hockney's model: startup `alpha`, per-byte `beta`, no per-hop or reduction time. A
    /// message of `m` bytes then costs **alpha + m beta** over any number of hops with
    /// cut-through switching.
    ///
    /// ```
    /// use rpar::cost::{Params, Switching};
    /// let p = Params::hockney(1e-6, 1e-9);
    /// assert_eq!(p, Params::new(1e-6, 0.0, 1e-9, 0.0));
    /// assert_eq!(p.point_to_point(1000, 5, Switching::CutThrough), 1e-6 + 1000.0 * 1e-9);
    /// ```
    pub fn hockney(alpha: f64, beta: f64) -> Self {
        Params::new(alpha, 0.0, beta, 0.0)
    }

    /// alpha, the startup time (= t_n).
    ///
    /// ```
    /// let p = rpar::cost::Params::hockney(3e-6, 2e-9);
    /// assert_eq!((p.alpha(), p.t_n), (3e-6, 3e-6));
    /// ```
    pub fn alpha(&self) -> f64 {
        self.t_n
    }

    /// beta, the per-byte time (= t_c, 1 / bandwidth).
    ///
    /// ```
    /// let p = rpar::cost::Params::hockney(3e-6, 0.5e-9);
    /// assert_eq!((p.beta(), p.t_c), (0.5e-9, 0.5e-9)); // 2 GB/s
    /// ```
    pub fn beta(&self) -> f64 {
        self.t_c
    }

    /// Time of one `m`-byte message over `hops` links `l`: **t_n + (m t_c + t_s) l** with
    /// store-and-forward switching, **t_n + m t_c + t_s l** with cut-through.
    ///
    /// ```
    /// use rpar::cost::{Params, Switching};
    /// let p = Params::new(1.0, 0.5, 0.25, 0.0);
    /// assert_eq!(p.point_to_point(8, 4, Switching::StoreAndForward), 1.0 + (2.0 + 0.5) * 4.0);
    /// assert_eq!(p.point_to_point(8, 4, Switching::CutThrough), 1.0 + 2.0 + 0.5 * 4.0);
    /// // one hop: the two agree
    /// assert_eq!(
    ///     p.point_to_point(8, 1, Switching::StoreAndForward),
    ///     p.point_to_point(8, 1, Switching::CutThrough)
    /// );
    /// ```
    pub fn point_to_point(&self, m: usize, hops: usize, switching: Switching) -> f64 {
        let (m, l) = (m as f64, hops as f64);
        match switching {
            Switching::StoreAndForward => self.t_n + (m * self.t_c + self.t_s) * l,
            Switching::CutThrough => self.t_n + m * self.t_c + self.t_s * l,
        }
    }

    /// Worst case of [`Params::point_to_point`] on `network`: `l` is its diameter (ring
    /// floor(p/2), 2-D torus 2 floor(sqrt(p)/2), hypercube log2 p).
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// let p = Params::new(1.0, 0.5, 0.25, 0.0);
    /// let sf = Switching::StoreAndForward;
    /// // a ring of 8: the far side is 4 hops away
    /// assert_eq!(p.worst_point_to_point(8, &Network::ring(8), sf), p.point_to_point(8, 4, sf));
    /// assert_eq!(p.worst_point_to_point(8, &Network::hypercube(3), sf), p.point_to_point(8, 3, sf));
    /// ```
    pub fn worst_point_to_point(&self, m: usize, network: &Network, switching: Switching) -> f64 {
        self.point_to_point(m, network.diameter(), switching)
    }
}
