//! The lecture's closed forms for the collective operations on ring, 2-D torus and hypercube
//! networks (the standard treatment of Grama, Gupta, Karypis and Kumar, *Introduction to Parallel
//! Computing*, ch. 4, with the lecture's names: t_n startup, t_s per hop, t_c per byte).
//!
//! Every function keeps the per-hop term t_s that the lecture drops for neighbour messages
//! (it writes (t_n + m t_c) where a one-hop message costs t_n + t_s + m t_c); with `t_s = 0`
//! each is the lecture's formula exactly. `m` is the message of one node (for broadcast the
//! broadcast message, for all-to-all and scatter the block one node has for one other node).
//! Every function refuses a network of no nodes with `Error::InvalidArgument`.
//!
//! # Agreement with the simulator
//!
//! The simulator (`rpar::sim`) runs point-to-point programs. Where a formula describes such a
//! program it reproduces it exactly (tests `sim_closed_forms.rs`): worst-case point-to-point on
//! every network and switching; broadcast on the hypercube and the cut-through broadcast on
//! ring and torus (recursive halving, contention-free); all-to-all broadcast on ring, torus
//! and hypercube; all-to-all personalized on ring, torus and (cut-through) hypercube; scatter
//! and all-reduce on the hypercube; single-node accumulation on the hypercube; the q-shift on
//! the torus and, cut-through, on the hypercube. Two formulas describe a different program
//! than the natural one, and the simulator shows by how much:
//!
//! * **Store-and-forward broadcast on ring and torus** (t_n + m t_c ceil(p/2), and
//!   t_n + 2 m t_c ceil(sqrt(p)/2)) charge one startup for the whole broadcast: they describe a
//!   *network-level* broadcast where every router keeps a copy as the message passes through.
//!   A program that relays the message node to node pays a startup per hop:
//!   ceil(p/2) (t_n + t_s + m t_c) on a ring, which is what the simulator measures. The formula
//!   is right for hardware that multicasts; for message-passing software it is optimistic by
//!   (ceil(p/2) - 1) t_n. [`one_to_all_broadcast`] returns the lecture's figure.
//! * **Circular q-shift on the store-and-forward hypercube** counts a shift by 2^k (k >= 1,
//!   hypercube distance 2 under the Gray code) as two neighbour steps, 2 (t_n + t_s + m t_c).
//!   Sent directly, it is one message over two hops, t_n + 2 (t_s + m t_c), and the messages of
//!   one shift share no link: the simulator finds one startup less per such shift. The formula
//!   is right for a program that relays through the intermediate node, the simulator for one
//!   that sends directly (which needs no more of the program) — the formula is pessimistic by
//!   t_n per two-hop shift. [`circular_shift`] returns the lecture's figure. rpar's own
//!   `Shift::GrayCode` relays through the intermediate node and so pays exactly that figure —
//!   when the shift upwards is the shorter way; it never shifts downwards, and pays the upward
//!   steps of q even where the p - q steps down would be fewer (test
//!   `the_librarys_gray_code_shift_relays_as_the_lecture_counts`).
//! * **Which way round** the q-shift goes on the hypercube: the usual reading, shift by
//!   q' = min(q, p - q), does not give the fewest steps — for p = 16, q = 9 = 8 + 1 takes
//!   2 + 1 steps upwards, while 7 = 4 + 2 + 1 downwards takes 5. The formula takes whichever
//!   direction needs fewer neighbour steps (found by the simulator on the library's schedule).

use super::network::{exact_log2, Network, Switching};
use super::params::Params;
use crate::{Error, Result};

fn unsupported(call: &'static str, net: &Network, what: &str) -> Error {
    Error::invalid(
        call,
        format!("no closed form for {net:?}: expected {what} (simulate it with rpar::sim)"),
    )
}

/// The node count of `net`, refused if it has none (every formula divides by it or counts
/// from it).
fn nodes(call: &'static str, net: &Network) -> Result<usize> {
    match net.nodes() {
        0 => Err(crate::Error::invalid(
            call,
            format!("expected a network of at least one node, got {net:?}"),
        )),
        p => Ok(p),
    }
}

fn log2_exact(call: &'static str, net: &Network, p: usize) -> Result<f64> {
    exact_log2(p)
        .map(f64::from)
        .ok_or_else(|| unsupported(call, net, "a power-of-two node count"))
}

fn ceil_log2(p: usize) -> f64 {
    f64::from(p.next_power_of_two().trailing_zeros())
}

/// sqrt(p) of a square torus, with log2 p when `pow2` (sqrt(p) a power of two is needed).
fn square(call: &'static str, net: &Network) -> Result<f64> {
    match *net {
        Network::Torus { rows, cols } if rows == cols => Ok(rows as f64),
        _ => Err(unsupported(call, net, "a square torus")),
    }
}

/// One-to-all broadcast (MPI_Bcast) of `m` bytes.
///
/// * Hypercube, either switching: log2 p steps, in step i the nodes that have the message send
///   it across dimension i: **(t_n + t_s + m t_c) log2 p**.
/// * Ring, store-and-forward: the source sends the message both ways round; it travels
///   ceil(p/2) hops as one message, copied out at each node: **t_n + (m t_c + t_s) ceil(p/2)**.
/// * 2-D torus (sqrt(p) x sqrt(p)), store-and-forward: the same along the source's row, then
///   along every column: **t_n + 2 (m t_c + t_s) ceil(sqrt(p)/2)**.
/// * Ring, cut-through (p a power of two): recursive halving — in step i the holders send to
///   the node p/2^i further on; log2 p messages on the critical path, p/2 + p/4 + … + 1 = p - 1
///   hops in all, no two messages of a step share a link: **(t_n + m t_c) log2 p + t_s (p-1)**.
/// * 2-D torus, cut-through: recursive halving in a column then in every row:
///   **(t_n + m t_c) log2 p + 2 t_s (sqrt(p) - 1)**.
/// * Fully connected: a binomial tree, **(t_n + t_s + m t_c) ceil(log2 p)**.
///
/// # Errors
///
/// [`Error::InvalidArgument`] (`no closed form for …`) for a mesh, a torus that is not square, and,
/// with cut-through, a ring or torus whose node count is not a power of two.
///
/// ```
/// use rpar::cost::{lecture, Network, Params, Switching};
/// let params = Params::new(1.0, 0.0, 0.01, 0.0);
/// let t = lecture::one_to_all_broadcast(&params, &Network::hypercube(4), Switching::CutThrough, 100)?;
/// assert_eq!(t, 4.0 * (1.0 + 1.0)); // (t_n + m t_c) log2 p
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn one_to_all_broadcast(
    params: &Params,
    net: &Network,
    switching: Switching,
    m: usize,
) -> Result<f64> {
    const CALL: &str = "lecture::one_to_all_broadcast";
    let Params { t_n, t_s, t_c, .. } = *params;
    let (p, mtc) = (nodes(CALL, net)?, m as f64 * t_c);
    match (*net, switching) {
        (Network::Hypercube { dim }, _) => Ok((t_n + t_s + mtc) * f64::from(dim)),
        (Network::FullyConnected { .. }, _) => Ok((t_n + t_s + mtc) * ceil_log2(p)),
        (Network::Ring { .. }, Switching::StoreAndForward) => {
            Ok(t_n + (mtc + t_s) * p.div_ceil(2) as f64)
        }
        (Network::Torus { .. }, Switching::StoreAndForward) => {
            let q = square(CALL, net)? as usize;
            Ok(t_n + 2.0 * (mtc + t_s) * q.div_ceil(2) as f64)
        }
        (Network::Ring { .. }, Switching::CutThrough) => {
            Ok((t_n + mtc) * log2_exact(CALL, net, p)? + t_s * (p as f64 - 1.0))
        }
        (Network::Torus { .. }, Switching::CutThrough) => {
            let q = square(CALL, net)?;
            Ok((t_n + mtc) * log2_exact(CALL, net, p)? + 2.0 * t_s * (q - 1.0))
        }
        (Network::Mesh { .. }, _) => Err(unsupported(CALL, net, "a ring, torus or hypercube")),
    }
}

/// Single-node accumulation (MPI_Reduce), the dual of [`one_to_all_broadcast`]: the same
/// messages in reverse, and each node on the critical path combines what it receives, m gamma
/// per combining step — log2 p steps for the tree forms (hypercube, cut-through, fully
/// connected), one per hop for the store-and-forward ring and torus. On the hypercube:
/// **(t_n + t_s + m t_c + m gamma) log2 p**; in general the broadcast's time plus
/// (combining steps) m gamma.
///
/// # Errors
///
/// Those of [`one_to_all_broadcast`].
///
/// ```
/// use rpar::cost::{lecture, Network, Params, Switching};
/// let params = Params::new(1.0, 0.0, 0.25, 0.5);
/// let sf = Switching::StoreAndForward;
/// let t = lecture::single_node_accumulation(&params, &Network::hypercube(3), sf, 4)?;
/// assert_eq!(t, (1.0 + 1.0 + 2.0) * 3.0); // (t_n + m t_c + m gamma) log2 p
/// let bcast = lecture::one_to_all_broadcast(&params, &Network::hypercube(3), sf, 4)?;
/// assert_eq!(t - bcast, 3.0 * 4.0 * 0.5); // the dual, plus log2 p combines
/// assert!(lecture::single_node_accumulation(&params, &Network::mesh(2, 2), sf, 4).is_err());
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn single_node_accumulation(
    params: &Params,
    net: &Network,
    switching: Switching,
    m: usize,
) -> Result<f64> {
    let bcast = one_to_all_broadcast(params, net, switching, m)?;
    let p = net.nodes();
    let steps = match (*net, switching) {
        (Network::Ring { .. }, Switching::StoreAndForward) => p.div_ceil(2) as f64,
        (Network::Torus { rows, .. }, Switching::StoreAndForward) => 2.0 * rows.div_ceil(2) as f64,
        _ => ceil_log2(p),
    };
    Ok(bcast + steps * m as f64 * params.gamma)
}

/// All-to-all broadcast (MPI_Allgather), `m` bytes from every node. Only neighbour messages, so
/// the switching does not matter.
///
/// * Ring: p - 1 steps, each node passes on what it received last:
///   **(t_n + t_s + m t_c)(p - 1)**.
/// * 2-D torus: the ring algorithm in every row (sqrt(p) - 1 steps of m bytes), then in every
///   column with the rows' sqrt(p) m bytes:
///   **2 (t_n + t_s)(sqrt(p) - 1) + m t_c (p - 1)**.
/// * Hypercube (and fully connected, p a power of two): recursive doubling, log2 p exchanges,
///   the i-th of 2^i m bytes: **(t_n + t_s) log2 p + m t_c (p - 1)**.
///
/// # Errors
///
/// [`Error::InvalidArgument`] (`no closed form for …`) for a mesh, a torus that is not square, or a
/// fully connected network whose node count is not a power of two.
///
/// ```
/// use rpar::cost::{lecture, Network, Params, Switching};
/// let params = Params::new(1.0, 0.0, 0.25, 0.0);
/// let ct = Switching::CutThrough;
/// let ring = lecture::all_to_all_broadcast(&params, &Network::ring(8), ct, 4)?;
/// assert_eq!(ring, (1.0 + 1.0) * 7.0); // (t_n + t_s + m t_c)(p - 1)
/// let cube = lecture::all_to_all_broadcast(&params, &Network::hypercube(3), ct, 4)?;
/// assert_eq!(cube, 1.0 * 3.0 + 1.0 * 7.0); // (t_n + t_s) log2 p + m t_c (p - 1)
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn all_to_all_broadcast(
    params: &Params,
    net: &Network,
    _switching: Switching,
    m: usize,
) -> Result<f64> {
    const CALL: &str = "lecture::all_to_all_broadcast";
    let Params { t_n, t_s, t_c, .. } = *params;
    let (p, mtc) = (nodes(CALL, net)? as f64, m as f64 * t_c);
    match *net {
        Network::Ring { .. } => Ok((t_n + t_s + mtc) * (p - 1.0)),
        Network::Torus { .. } => {
            let q = square(CALL, net)?;
            Ok(2.0 * (t_n + t_s) * (q - 1.0) + mtc * (p - 1.0))
        }
        Network::Hypercube { .. } | Network::FullyConnected { .. } => {
            Ok((t_n + t_s) * log2_exact(CALL, net, nodes(CALL, net)?)? + mtc * (p - 1.0))
        }
        Network::Mesh { .. } => Err(unsupported(CALL, net, "a ring, torus or hypercube")),
    }
}

/// All-reduce (MPI_Allreduce) on the hypercube (or fully connected, p a power of two): log2 p
/// exchanges of m bytes across the dimensions, each followed by a combine:
/// **(t_n + t_s + m t_c + m gamma) log2 p**.
///
/// # Errors
///
/// [`Error::InvalidArgument`] (`no closed form for …`) for a network that is not a hypercube or
/// fully connected, or a node count that is not a power of two.
///
/// ```
/// use rpar::cost::{lecture, Network, Params};
/// let params = Params::new(1.0, 0.0, 0.25, 0.5);
/// assert_eq!(lecture::all_reduce(&params, &Network::hypercube(4), 4)?, (1.0 + 1.0 + 2.0) * 4.0);
/// assert!(lecture::all_reduce(&params, &Network::ring(16), 4).is_err()); // no closed form
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn all_reduce(params: &Params, net: &Network, m: usize) -> Result<f64> {
    const CALL: &str = "lecture::all_reduce";
    hypercube_like(CALL, net)?;
    let Params {
        t_n,
        t_s,
        t_c,
        gamma,
    } = *params;
    let m = m as f64;
    Ok((t_n + t_s + m * t_c + m * gamma) * log2_exact(CALL, net, nodes(CALL, net)?)?)
}

/// Prefix sums (MPI_Scan) on the hypercube: the all-reduce exchange pattern; in each step a
/// node adds the incoming sum into the sum it forwards and, if the partner is lower, into its
/// result — two combines on the worst node: **(t_n + t_s + m t_c + 2 m gamma) log2 p**.
///
/// # Errors
///
/// [`Error::InvalidArgument`] (`no closed form for …`) for a network that is not a hypercube or
/// fully connected, or a node count that is not a power of two.
///
/// ```
/// use rpar::cost::{lecture, Network, Params};
/// let params = Params::new(1.0, 0.0, 0.25, 0.5);
/// let cube = Network::hypercube(4);
/// assert_eq!(lecture::prefix_sums(&params, &cube, 4)?, (1.0 + 1.0 + 4.0) * 4.0);
/// // one combine per step more than the all-reduce
/// let extra = lecture::prefix_sums(&params, &cube, 4)? - lecture::all_reduce(&params, &cube, 4)?;
/// assert_eq!(extra, 4.0 * 4.0 * 0.5);
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn prefix_sums(params: &Params, net: &Network, m: usize) -> Result<f64> {
    const CALL: &str = "lecture::prefix_sums";
    hypercube_like(CALL, net)?;
    let Params {
        t_n,
        t_s,
        t_c,
        gamma,
    } = *params;
    let m = m as f64;
    Ok((t_n + t_s + m * t_c + 2.0 * m * gamma) * log2_exact(CALL, net, nodes(CALL, net)?)?)
}

/// Scatter (MPI_Scatter) and its dual gather (MPI_Gather) on the hypercube (or fully
/// connected, p a power of two), `m` bytes per node: log2 p steps, in step i a holder sends
/// half of its p/2^i blocks across dimension i; m (p/2 + p/4 + … + 1) bytes in all:
/// **(t_n + t_s) log2 p + m t_c (p - 1)**.
///
/// # Errors
///
/// [`Error::InvalidArgument`] (`no closed form for …`) for a network that is not a hypercube or
/// fully connected, or a node count that is not a power of two.
///
/// ```
/// use rpar::cost::{lecture, Network, Params};
/// let params = Params::new(1.0, 0.0, 0.25, 0.0);
/// assert_eq!(lecture::scatter(&params, &Network::hypercube(3), 4)?, 1.0 * 3.0 + 1.0 * 7.0);
/// assert!(lecture::scatter(&params, &Network::fully_connected(6), 4).is_err()); // 6 = no 2^k
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn scatter(params: &Params, net: &Network, m: usize) -> Result<f64> {
    const CALL: &str = "lecture::scatter";
    hypercube_like(CALL, net)?;
    let Params { t_n, t_s, t_c, .. } = *params;
    let p = nodes(CALL, net)?;
    Ok((t_n + t_s) * log2_exact(CALL, net, p)? + m as f64 * t_c * (p as f64 - 1.0))
}

fn hypercube_like(call: &'static str, net: &Network) -> Result<()> {
    match net {
        Network::Hypercube { .. } | Network::FullyConnected { .. } => Ok(()),
        _ => Err(unsupported(
            call,
            net,
            "a hypercube or a fully connected network",
        )),
    }
}

/// All-to-all personalized exchange (MPI_Alltoall), `m` bytes from every node to every other.
///
/// * Ring: p - 1 steps; in step i every node passes its neighbour the m (p - i) bytes still in
///   transit: sum (t_n + t_s + m t_c (p-i)) = **(t_n + t_s + m t_c p/2)(p - 1)**.
/// * 2-D torus: the ring algorithm in every row with sqrt(p) m-byte groups, then in every
///   column: **(2 t_n + 2 t_s + m t_c p)(sqrt(p) - 1)**.
/// * Hypercube, store-and-forward: log2 p exchanges of p/2 blocks across the dimensions:
///   **(t_n + t_s + m t_c p/2) log2 p**.
/// * Hypercube, cut-through: p - 1 direct exchanges with partner `rank ^ j` (contention-free
///   under e-cube routing), hops summing to (p/2) log2 p:
///   **(t_n + m t_c)(p - 1) + t_s (p/2) log2 p**.
/// * Fully connected: p - 1 direct exchanges, **(t_n + t_s + m t_c)(p - 1)**.
///
/// # Errors
///
/// [`Error::InvalidArgument`] (`no closed form for …`) for a mesh or a torus that is not square.
///
/// ```
/// use rpar::cost::{lecture, Network, Params, Switching::*};
/// let params = Params::new(1.0, 0.5, 0.25, 0.0);
/// let cube = Network::hypercube(3);
/// // store-and-forward: log2 p exchanges of p/2 blocks
/// assert_eq!(lecture::all_to_all_personalized(&params, &cube, StoreAndForward, 4)?, (1.5 + 4.0) * 3.0);
/// // cut-through: p - 1 direct messages, (p/2) log2 p hops in all
/// assert_eq!(lecture::all_to_all_personalized(&params, &cube, CutThrough, 4)?, 2.0 * 7.0 + 0.5 * 12.0);
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn all_to_all_personalized(
    params: &Params,
    net: &Network,
    switching: Switching,
    m: usize,
) -> Result<f64> {
    const CALL: &str = "lecture::all_to_all_personalized";
    let Params { t_n, t_s, t_c, .. } = *params;
    let (p, mtc) = (nodes(CALL, net)? as f64, m as f64 * t_c);
    match (*net, switching) {
        (Network::Ring { .. }, _) => Ok((t_n + t_s + mtc * p / 2.0) * (p - 1.0)),
        (Network::Torus { .. }, _) => {
            let q = square(CALL, net)?;
            Ok((2.0 * t_n + 2.0 * t_s + mtc * p) * (q - 1.0))
        }
        (Network::Hypercube { dim }, Switching::StoreAndForward) => {
            Ok((t_n + t_s + mtc * p / 2.0) * f64::from(dim))
        }
        (Network::Hypercube { dim }, Switching::CutThrough) => {
            Ok((t_n + mtc) * (p - 1.0) + t_s * p / 2.0 * f64::from(dim))
        }
        (Network::FullyConnected { .. }, _) => Ok((t_n + t_s + mtc) * (p - 1.0)),
        (Network::Mesh { .. }, _) => Err(unsupported(CALL, net, "a ring, torus or hypercube")),
    }
}

/// Circular q-shift (node i sends `m` bytes to node (i + q) mod p, MPI_Sendrecv on a periodic
/// Cartesian shift of a linear order).
///
/// * 2-D torus (sqrt(p) x sqrt(p), row-major order): shift every row by a = q mod sqrt(p) in
///   min(a, sqrt(p) - a) neighbour steps, one compensating column step for the blocks that
///   wrapped round a row end (when a != 0), then shift every column by b = floor(q / sqrt(p)) in
///   min(b, sqrt(p) - b) steps; each step t_n + t_s + m t_c. At most
///   (t_n + t_s + m t_c)(sqrt(p) + 1), the lecture's bound.
/// * Hypercube, store-and-forward, through the Gray-code ring embedding: write q (shifting
///   up) or p - q (shifting down), whichever needs fewer steps, as a sum of powers of two; a
///   shift by 2^i is ring distance 2^i, hypercube distance 2 (1 for i = 0), done in that many
///   neighbour steps without congestion. At most (t_n + t_s + m t_c)(2 log2 p - 1). (Sending
///   each two-hop shift directly saves a startup; see the module docs.)
/// * Hypercube, cut-through: every node sends straight to its target; with e-cube routing the
///   messages of one shift share no link (the simulator checks this), so the time is one
///   message over the longest route: **t_n + m t_c + t_s h**, h = max over i of the Hamming
///   distance of i and (i + q) mod p (at most log2 p).
///
/// # Errors
///
/// [`Error::InvalidArgument`] (`no closed form for …`) for a network that is not a square torus or
/// a hypercube.
///
/// ```
/// use rpar::cost::{lecture, Network, Params, Switching::*};
/// let params = Params::new(1.0, 0.0, 0.25, 0.0); // one neighbour step of 4 bytes: 2.0
/// // 4 x 4 torus, q = 5: one row step, its compensating column step, one column step
/// assert_eq!(lecture::circular_shift(&params, &Network::torus(4, 4), CutThrough, 4, 5)?, 3.0 * 2.0);
/// // 16-node hypercube, q = 9 = 8 + 1 upwards: 2 + 1 neighbour steps
/// assert_eq!(lecture::circular_shift(&params, &Network::hypercube(4), StoreAndForward, 4, 9)?, 3.0 * 2.0);
/// assert!(lecture::circular_shift(&params, &Network::ring(16), CutThrough, 4, 1).is_err());
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn circular_shift(
    params: &Params,
    net: &Network,
    switching: Switching,
    m: usize,
    q: usize,
) -> Result<f64> {
    const CALL: &str = "lecture::circular_shift";
    let Params { t_n, t_s, t_c, .. } = *params;
    let p = nodes(CALL, net)?;
    let step = t_n + t_s + m as f64 * t_c;
    let q = q % p;
    match (*net, switching) {
        (Network::Torus { .. }, _) => {
            let side = square(CALL, net)? as usize;
            let (a, b) = (q % side, q / side);
            let steps = a.min(side - a) + usize::from(a != 0) + b.min(side - b);
            Ok(step * steps as f64)
        }
        (Network::Hypercube { .. }, Switching::StoreAndForward) => {
            let steps = |q: usize| -> u32 {
                (0..usize::BITS)
                    .filter(|i| q >> i & 1 == 1)
                    .map(|i| if i == 0 { 1 } else { 2 })
                    .sum()
            };
            Ok(step * f64::from(steps(q).min(steps((p - q) % p))))
        }
        (Network::Hypercube { .. }, Switching::CutThrough) => {
            let h = (0..p)
                .map(|i| (i ^ ((i + q) % p)).count_ones())
                .max()
                .unwrap_or(0);
            Ok(t_n + m as f64 * t_c + t_s * f64::from(h))
        }
        _ => Err(unsupported(CALL, net, "a square torus or a hypercube")),
    }
}

/// The N-body program's gather of all bodies (MPI_Allgather) with the ring scheme: p - 1 steps,
/// each node passes `m` bytes to its neighbour: **(p - 1)(alpha + m beta)**.
///
/// ```
/// use rpar::cost::{lecture, Params};
/// let params = Params::hockney(1.0, 0.25);
/// assert_eq!(lecture::nbody_gather_ring(&params, 4, 4), 3.0 * (1.0 + 1.0));
/// ```
pub fn nbody_gather_ring(params: &Params, p: usize, m: usize) -> f64 {
    p.saturating_sub(1) as f64 * (params.alpha() + m as f64 * params.beta())
}

/// The N-body gather (MPI_Allgather) with recursive doubling (Bruck's algorithm for p not a power
/// of two): ceil(log2 p) steps, (p - 1) m bytes in all: **alpha ceil(log2 p) + (p - 1) m beta**.
///
/// ```
/// use rpar::cost::{lecture, Params};
/// let params = Params::hockney(1.0, 0.25);
/// assert_eq!(lecture::nbody_gather_doubling(&params, 4, 4), 2.0 + 3.0);
/// assert_eq!(lecture::nbody_gather_doubling(&params, 5, 4), 3.0 + 4.0); // Bruck: ceil(log2 5) = 3
/// // the same bytes as the ring scheme, fewer startups
/// assert!(lecture::nbody_gather_doubling(&params, 64, 4) < lecture::nbody_gather_ring(&params, 64, 4));
/// ```
pub fn nbody_gather_doubling(params: &Params, p: usize, m: usize) -> f64 {
    params.alpha() * ceil_log2(p) + p.saturating_sub(1) as f64 * m as f64 * params.beta()
}
