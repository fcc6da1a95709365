//! The alpha-beta-gamma cost of the standard collective algorithms, as functions of the number
//! of ranks p and the message size m (Thakur, Rabenseifner and Gropp, *Optimization of Collective
//! Communication Operations in MPICH*, IJHPCA 2005; Bruck et al. 1997; van de Geijn 1994;
//! Hensgen, Finkel and Manber 1988).
//!
//! A [`Cost`] counts what lies on the critical path: messages (each pays alpha = t_n and, on a
//! one-hop network, t_s), bytes (beta = t_c each) and bytes reduced (gamma each). The counts are
//! exact for the schedules the algorithms produce on a fully connected, contention-free network,
//! which is what the simulator checks (test
//! `the_librarys_collectives_match_their_alpha_beta_gamma_cost` in `sim_closed_forms.rs`, on
//! the library's own recorded code). `L` below is ceil(log2 p).
//!
//! What `m` means: the broadcast / reduced vector for bcast, reduce, allreduce, scan and
//! exscan; one rank's contribution for allgather and gather; one rank's block for scatter; the
//! block one rank sends to one other for alltoall; the block each rank ends with for
//! reduce-scatter (each rank's input is p such blocks, `n = p m` in `collective::reduce_scatter`'s
//! notation) — the same as `sim::record_collective`'s byte count.
//!
//! Model limits, found by comparing with the simulator: the simulator charges the startup to the
//! sender and models links, not endpoints. In a linear gather on a fully connected network all
//! p - 1 messages travel at once on their own links and arrive together, alpha + m beta after
//! the start; the formula here charges the root (p - 1)(alpha + m beta), a one-port receiver
//! that takes one message at a time. The one-port figure is the right one for rpar's transport,
//! where the receiver copies every message itself (test
//! `linear_gather_shows_the_one_port_assumption`). The same holds, for p not a power of two
//! only, for the binomial gather, the binomial reduce and the tree barrier: there the root's last, short subtrees
//! report while the first ones still do, and the simulator's root takes their messages at once,
//! so it finishes earlier than the formula (for a power of two every node's children report one
//! after another anyway, and the two agree); and for the central barrier, whose p - 1 reports
//! the simulator takes at once (p alpha in all, not 2 (p - 1) alpha).
//!
//! Where the library's algorithms take shortcuts for p not a power of two (recursive-doubling
//! scan and exscan skip partners beyond the last rank), the formula is the power-of-two figure
//! over ceil(log2 p) rounds, exact for a power of two and an upper bound otherwise: a rank
//! without a partner in some round waits less, and the critical path depends on the ratio of
//! alpha to gamma. Recursive-halving reduce-scatter for such p folds blocks of different sizes
//! together; its cost depends on the layout, so the model has none (simulate it). The ring
//! allreduce's (p-1)/p m is exact when p divides m; otherwise its larger blocks, of
//! ceil(m / p) bytes, lie on the critical path.

use crate::{Error, Result};

use super::params::Params;

/// Critical-path counts of a collective algorithm: its time is
/// `messages (t_n + t_s) + bytes t_c + reduced gamma` on a one-hop network.
///
/// ```
/// use rpar::cost::{Algorithm, Params};
/// let c = Algorithm::BinomialBcast.cost(8, 1000)?;
/// assert_eq!((c.messages, c.bytes, c.reduced), (3.0, 3000.0, 0.0));
/// assert_eq!(c.time(&Params::hockney(1e-6, 1e-9)), 3e-6 + 3000e-9);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cost {
    /// Messages on the critical path (multiplies alpha).
    pub messages: f64,
    /// Bytes on the critical path (multiplies beta).
    pub bytes: f64,
    /// Bytes reduced on the critical path (multiplies gamma).
    pub reduced: f64,
}

impl Cost {
    /// `messages` messages of `bytes_each` bytes, each followed by a reduction of
    /// `reduced_each` bytes.
    fn steps(messages: f64, bytes_each: f64, reduced_each: f64) -> Self {
        Cost {
            messages,
            bytes: messages * bytes_each,
            reduced: messages * reduced_each,
        }
    }

    /// The time on a one-hop network with `params`:
    /// **messages (t_n + t_s) + bytes t_c + reduced gamma**.
    ///
    /// ```
    /// use rpar::cost::{Cost, Params};
    /// let c = Cost { messages: 3.0, bytes: 3000.0, reduced: 1000.0 };
    /// let params = Params::new(1.0, 0.5, 0.25, 0.125);
    /// assert_eq!(c.time(&params), 3.0 * 1.5 + 3000.0 * 0.25 + 1000.0 * 0.125);
    /// ```
    pub fn time(&self, params: &Params) -> f64 {
        self.messages * (params.t_n + params.t_s)
            + self.bytes * params.t_c
            + self.reduced * params.gamma
    }
}

impl std::ops::Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost {
            messages: self.messages + o.messages,
            bytes: self.bytes + o.bytes,
            reduced: self.reduced + o.reduced,
        }
    }
}

/// A collective algorithm whose cost the model knows. Each variant's doc gives its
/// alpha-beta-gamma formula; [`Algorithm::cost`] evaluates it.
///
/// ```
/// use rpar::cost::{Algorithm, Params};
/// let params = Params::hockney(10e-6, 1e-9); // latency-bound for small messages
/// let (p, small, large) = (64, 8, 1 << 20);
/// let ring = |m| Algorithm::RingAllgather.time(&params, p, m);
/// let doubling = |m| Algorithm::RecursiveDoublingAllgather.time(&params, p, m);
/// assert!(doubling(small)? < ring(small)?); // 6 startups instead of 63
/// // the bytes are the same, (p - 1) m: for large m the startups matter less and less
/// assert!(ring(large)? / doubling(large)? < 1.01);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// Broadcast down a binomial tree: L (alpha + m beta).
    BinomialBcast,
    /// Van de Geijn's broadcast: binomial scatter of m/p blocks, then ring allgather:
    /// (L + p - 1) alpha + 2 (p-1)/p m beta.
    VanDeGeijnBcast,
    /// Reduce up a binomial tree: L (alpha + m beta + m gamma).
    BinomialReduce,
    /// Rabenseifner's reduce: reduce-scatter by recursive halving, binomial gather:
    /// 2 L alpha + 2 (p-1)/p m beta + (p-1)/p m gamma (p a power of two; otherwise one extra
    /// exchange folds the surplus ranks in: + alpha + m beta + m gamma).
    RabenseifnerReduce,
    /// Ring allgather: (p - 1)(alpha + m beta).
    RingAllgather,
    /// Recursive-doubling allgather (p a power of two): L alpha + (p - 1) m beta.
    RecursiveDoublingAllgather,
    /// Bruck's allgather, any p: L alpha + (p - 1) m beta.
    BruckAllgather,
    /// Ring allreduce (ring reduce-scatter, ring allgather):
    /// 2 (p-1) alpha + 2 (p-1)/p m beta + (p-1)/p m gamma.
    RingAllreduce,
    /// Recursive-doubling allreduce: L' (alpha + m beta + m gamma), L' = floor(log2 p), plus
    /// for p not a power of two a fold-in and a send-back: 2 (alpha + m beta) + m gamma.
    RecursiveDoublingAllreduce,
    /// Rabenseifner's allreduce (reduce-scatter by recursive halving, allgather by recursive
    /// doubling): 2 L' alpha + 2 (p'-1)/p' m beta + (p'-1)/p' m gamma over p' = 2^L' ranks,
    /// plus the same fold-in and send-back as recursive doubling when p != p'.
    RabenseifnerAllreduce,
    /// Bruck's alltoall: L steps, in step k every rank sends the blocks whose index has bit k
    /// set: L alpha + m beta sum_k #{j < p : bit k of j} (= L alpha + (p/2) L m beta for p a
    /// power of two).
    BruckAlltoall,
    /// Pairwise-exchange alltoall: (p - 1)(alpha + m beta).
    PairwiseAlltoall,
    /// Dissemination barrier: L alpha.
    DisseminationBarrier,
    /// Linear gather (the root receives from each rank in turn): (p - 1)(alpha + m beta).
    LinearGather,
    /// Linear scatter (the root sends to each rank in turn): (p - 1)(alpha + m beta).
    LinearScatter,
    /// Gather up a binomial tree: L alpha + (p - 1) m beta.
    BinomialGather,
    /// Scatter down a binomial tree: L alpha + (p - 1) m beta.
    BinomialScatter,
    /// Recursive-doubling scan (hypercube prefix sums): L (alpha + m beta + 2 m gamma). Each
    /// round combines twice at a rank whose partner is lower (into its group's partial result
    /// and into its prefix); rank p - 1 does so in every round. Exact for p a power of two, an
    /// upper bound otherwise.
    RecursiveDoublingScan,
    /// Recursive-doubling exscan: L (alpha + m beta) + (2 L - 1) m gamma (for p > 1): as the
    /// scan, but the first prefix that arrives is copied, not combined. Exact for p a power of
    /// two, an upper bound otherwise.
    RecursiveDoublingExscan,
    /// Linear scan (and exscan): the prefix passes along the chain of ranks,
    /// (p - 1)(alpha + m beta + m gamma).
    LinearScan,
    /// Pairwise-exchange reduce-scatter: (p - 1)(alpha + m beta) + p m gamma (for p > 2;
    /// p - 1 combines for p <= 2). Every rank combines p - 1 blocks, but the critical path
    /// collects one more: a rank's final combine of its lower and higher partial results
    /// waits on a partner whose own copy round came early.
    PairwiseReduceScatter,
    /// Ring reduce-scatter: (p - 1)(alpha + m beta + m gamma).
    RingReduceScatter,
    /// Recursive-halving reduce-scatter, p a power of two: L alpha + (p - 1) m (beta + gamma).
    RecursiveHalvingReduceScatter,
    /// Central barrier (one-port): every rank reports to rank 0, which releases them all:
    /// 2 (p - 1) alpha.
    CentralBarrier,
    /// Tree barrier: up a binomial tree and down again, 2 L alpha.
    TreeBarrier,
}

fn ceil_log2(p: usize) -> f64 {
    f64::from(p.next_power_of_two().trailing_zeros())
}

impl Algorithm {
    /// Every algorithm the model knows.
    ///
    /// ```
    /// use rpar::cost::Algorithm;
    /// // every formula is defined for a power-of-two p, and none is free for p > 1
    /// for alg in Algorithm::ALL {
    ///     assert!(alg.cost(16, 1024)?.messages > 0.0, "{alg:?}");
    /// }
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub const ALL: [Algorithm; 25] = [
        Algorithm::BinomialBcast,
        Algorithm::VanDeGeijnBcast,
        Algorithm::BinomialReduce,
        Algorithm::RabenseifnerReduce,
        Algorithm::RingAllgather,
        Algorithm::RecursiveDoublingAllgather,
        Algorithm::BruckAllgather,
        Algorithm::RingAllreduce,
        Algorithm::RecursiveDoublingAllreduce,
        Algorithm::RabenseifnerAllreduce,
        Algorithm::BruckAlltoall,
        Algorithm::PairwiseAlltoall,
        Algorithm::DisseminationBarrier,
        Algorithm::LinearGather,
        Algorithm::LinearScatter,
        Algorithm::BinomialGather,
        Algorithm::BinomialScatter,
        Algorithm::RecursiveDoublingScan,
        Algorithm::RecursiveDoublingExscan,
        Algorithm::LinearScan,
        Algorithm::PairwiseReduceScatter,
        Algorithm::RingReduceScatter,
        Algorithm::RecursiveHalvingReduceScatter,
        Algorithm::CentralBarrier,
        Algorithm::TreeBarrier,
    ];

    /// The critical-path counts for `p` ranks and `m` bytes (see the variant's doc for what
    /// `m` is).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `p == 0`, and for recursive-doubling allgather
    /// and recursive-halving reduce-scatter when `p` is not a power of two.
    ///
    /// ```
    /// use rpar::cost::Algorithm;
    /// // van de Geijn: (L + p - 1) alpha + 2 (p-1)/p m beta
    /// let c = Algorithm::VanDeGeijnBcast.cost(8, 800)?;
    /// assert_eq!((c.messages, c.bytes, c.reduced), (3.0 + 7.0, 2.0 * 700.0, 0.0));
    /// // ring allreduce: 2 (p-1) alpha + 2 (p-1)/p m beta + (p-1)/p m gamma
    /// let c = Algorithm::RingAllreduce.cost(4, 400)?;
    /// assert_eq!((c.messages, c.bytes, c.reduced), (6.0, 600.0, 300.0));
    /// assert!(Algorithm::RecursiveDoublingAllgather.cost(6, 8).is_err());
    /// assert!(Algorithm::BruckAllgather.cost(6, 8).is_ok()); // any p
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn cost(self, p: usize, m: usize) -> Result<Cost> {
        if p == 0 {
            return Err(Error::invalid(
                "Algorithm::cost",
                "expected at least 1 rank, got 0",
            ));
        }
        let (pf, mf, l) = (p as f64, m as f64, ceil_log2(p));
        let frac = (pf - 1.0) / pf;
        let floor_l = f64::from(usize::BITS - 1 - p.leading_zeros());
        let p2 = (1usize << (usize::BITS - 1 - p.leading_zeros())) as f64;
        // The fold-in / send-back steps of the power-of-two algorithms for other p.
        let fold = if p.is_power_of_two() {
            Cost::default()
        } else {
            Cost {
                messages: 2.0,
                bytes: 2.0 * mf,
                reduced: mf,
            }
        };
        let ring = |n: f64, each: f64, red: f64| Cost::steps(n, each, red);
        Ok(match self {
            Algorithm::BinomialBcast => Cost::steps(l, mf, 0.0),
            Algorithm::VanDeGeijnBcast => Cost {
                messages: l + pf - 1.0,
                bytes: 2.0 * frac * mf,
                reduced: 0.0,
            },
            Algorithm::BinomialReduce => Cost::steps(l, mf, mf),
            Algorithm::RabenseifnerReduce => {
                let pp = if p.is_power_of_two() { pf } else { p2 };
                let extra = if p.is_power_of_two() {
                    Cost::default()
                } else {
                    Cost::steps(1.0, mf, mf)
                };
                let f = (pp - 1.0) / pp;
                Cost {
                    messages: 2.0 * floor_l,
                    bytes: 2.0 * f * mf,
                    reduced: f * mf,
                } + extra
            }
            Algorithm::RingAllgather | Algorithm::PairwiseAlltoall => ring(pf - 1.0, mf, 0.0),
            Algorithm::LinearGather | Algorithm::LinearScatter => ring(pf - 1.0, mf, 0.0),
            Algorithm::RecursiveDoublingAllgather if !p.is_power_of_two() => {
                return Err(Error::invalid(
                    "Algorithm::cost",
                    format!("recursive-doubling allgather needs a power-of-two p, got {p}"),
                ))
            }
            Algorithm::RecursiveHalvingReduceScatter if !p.is_power_of_two() => {
                return Err(Error::invalid(
                    "Algorithm::cost",
                    format!(
                        "recursive-halving reduce-scatter has a closed form for a power-of-two \
                         p only (its fold makes the rest depend on the block layout), got {p}"
                    ),
                ))
            }
            Algorithm::RecursiveDoublingAllgather
            | Algorithm::BruckAllgather
            | Algorithm::BinomialGather
            | Algorithm::BinomialScatter => Cost {
                messages: l,
                bytes: (pf - 1.0) * mf,
                reduced: 0.0,
            },
            Algorithm::RingAllreduce => Cost {
                messages: 2.0 * (pf - 1.0),
                bytes: 2.0 * frac * mf,
                reduced: frac * mf,
            },
            Algorithm::RecursiveDoublingAllreduce => Cost::steps(floor_l, mf, mf) + fold,
            Algorithm::RabenseifnerAllreduce => {
                let f = (p2 - 1.0) / p2;
                Cost {
                    messages: 2.0 * floor_l,
                    bytes: 2.0 * f * mf,
                    reduced: f * mf,
                } + fold
            }
            Algorithm::BruckAlltoall => {
                let blocks: usize = (0..l as u32)
                    .map(|k| (0..p).filter(|j| j >> k & 1 == 1).count())
                    .sum();
                Cost {
                    messages: l,
                    bytes: blocks as f64 * mf,
                    reduced: 0.0,
                }
            }
            Algorithm::DisseminationBarrier => Cost::steps(l, 0.0, 0.0),
            Algorithm::RecursiveDoublingScan => Cost::steps(l, mf, 2.0 * mf),
            Algorithm::RecursiveDoublingExscan => Cost {
                reduced: (2.0 * l - 1.0).max(0.0) * mf,
                ..Cost::steps(l, mf, 0.0)
            },
            Algorithm::LinearScan | Algorithm::RingReduceScatter => ring(pf - 1.0, mf, mf),
            Algorithm::PairwiseReduceScatter => Cost {
                reduced: if p > 2 { pf } else { pf - 1.0 } * mf,
                ..ring(pf - 1.0, mf, 0.0)
            },
            Algorithm::RecursiveHalvingReduceScatter => Cost {
                messages: l,
                bytes: (pf - 1.0) * mf,
                reduced: (pf - 1.0) * mf,
            },
            Algorithm::CentralBarrier => Cost::steps(2.0 * (pf - 1.0), 0.0, 0.0),
            Algorithm::TreeBarrier => Cost::steps(2.0 * l, 0.0, 0.0),
        })
    }

    /// The predicted time for `p` ranks and `m` bytes with `params`:
    /// [`cost`](Algorithm::cost)`(p, m)` [`.time(params)`](Cost::time).
    ///
    /// # Errors
    ///
    /// Those of [`Algorithm::cost`].
    ///
    /// ```
    /// use rpar::cost::{Algorithm, Params};
    /// let params = Params::new(1.0, 0.0, 0.25, 0.5);
    /// // binomial reduce: L (alpha + m beta + m gamma)
    /// assert_eq!(Algorithm::BinomialReduce.time(&params, 8, 4)?, 3.0 * (1.0 + 1.0 + 2.0));
    /// assert!(Algorithm::TreeBarrier.time(&params, 0, 0).is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn time(self, params: &Params, p: usize, m: usize) -> Result<f64> {
        Ok(self.cost(p, m)?.time(params))
    }
}
