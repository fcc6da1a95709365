//! The circular q-shift of the lecture: every rank `r` sends its data to rank `(r + q) mod p`
//! and receives from `(r - q) mod p`, by two algorithms.
//!
//! - [`Shift::Direct`]: one message per rank, straight to its destination; `alpha + beta m`.
//! - [`Shift::GrayCode`]: the ring embedded in a hypercube by the reflected Gray code (ring
//!   position `i` on hypercube node `i xor (i >> 1)`, `p` a power of two): `q` is split into
//!   powers of two, and the shift by `2^k` travels between nodes that differ in one bit
//!   (`k = 0`) or two bits (`k > 0`), routed dimension by dimension (e-cube) with no two
//!   messages on one link; at most `2 log2 p (alpha + beta m)`. It always shifts upwards, by
//!   the bits of `q mod p`: for some `q` the bits of `p - q` downwards would take fewer steps
//!   (p = 16, q = 9: 3 steps up, 5 down; q = 15: 7 up, 1 down), which
//!   `cost::lecture::circular_shift` counts.
//!
//! Data travels as owned `Vec`s: no copies on the way.

use super::layout::require_pow2;
use super::select::dispatched;
use super::tags;
use super::Channel;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Result};

/// The circular-shift algorithm (for [`Comm::using`]).
///
/// MPI has no circular-shift collective: its idiom is MPI_Cart_shift on a periodic 1-D grid,
/// then MPI_Sendrecv, which is `Direct`.
///
/// Each variant's cost is for `p` ranks and `m` the bytes each rank sends:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` ([`Shift::select`], a row of the [table of every operation's
/// defaults](crate#default-algorithms)) is `Direct` for every `p` and size: in one process
/// every rank reaches every other in one hop, so the hypercube's route only adds steps.
/// `GrayCode` is there for comparison and for recording the schedule a real hypercube would run.
///
/// | ranks `p` | message `m` | algorithm |
/// |-----------|-------------|-----------|
/// | any       | any         | `Direct`  |
///
/// ```
/// assert_eq!(rpar::Shift::select(8, 1024, true), rpar::Shift::Direct);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shift {
    /// [`Shift::select`] decides.
    #[default]
    Auto,
    /// Straight to the destination.
    /// Cost: `alpha + beta m`.
    Direct,
    /// Through the Gray-code embedding of the ring in a hypercube (`p` a power of two).
    /// Cost: at most `2 log2 p (alpha + beta m)`.
    GrayCode,
}

impl Shift {
    /// The algorithm `Auto` runs for `ranks` ranks and `bytes` sent per rank (the table above;
    /// `commutative` is ignored: a shift combines nothing). No MPI routine: MPI has no
    /// circular-shift collective (its idiom is MPI_Cart_shift on a periodic ring, then
    /// MPI_Sendrecv).
    ///
    /// ```
    /// use rpar::Shift;
    /// assert_eq!(Shift::select(16, 8, true), Shift::Direct); // even where GrayCode could run
    /// assert_eq!(Shift::select(6, 1 << 20, true), Shift::Direct);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Shift {
        let _ = (ranks, bytes, commutative);
        Shift::Direct
    }
}

impl Comm {
    /// [`Comm::shift_circular`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn shift_circular_with<T: Datatype>(
        &self,
        data: Vec<T>,
        q: isize,
        algorithm: Shift,
    ) -> Result<Vec<T>> {
        self.collective(Call::new("shift_circular"), &algorithm, || {
            shift(self, data, q, algorithm)
        })
    }
}

/// Circular shift on any channel (what `Comm::shift_circular_with` runs).
pub(crate) fn shift<C: Channel, T: Datatype>(
    ch: &C,
    data: Vec<T>,
    q: isize,
    algorithm: Shift,
) -> Result<Vec<T>> {
    let p = ch.size();
    let q = q.rem_euclid(p as isize) as usize;
    match dispatched(ch, algorithm, std::mem::size_of_val(&data[..]), true) {
        Shift::GrayCode => {
            require_pow2(p, "Gray-code", "shift_circular")?;
            gray_code_shift(ch, data, q)
        }
        _ if q == 0 => Ok(data),
        _ => direct(ch, data, q),
    }
}

fn direct<C: Channel, T: Datatype>(ch: &C, data: Vec<T>, q: usize) -> Result<Vec<T>> {
    let (r, p) = (ch.rank(), ch.size());
    ch.send_owned(data, (r + q) % p, tags::SHIFT_DIRECT)?;
    ch.recv_vec((r + p - q) % p, tags::SHIFT_DIRECT)
}

/// The binary reflected Gray code of `i`: `i ^ (i >> 1)`, the hypercube node of ring position
/// `i` in the lecture's ring-in-hypercube embedding. Consecutive values (and the last and the
/// first of a power-of-two ring) differ in one bit, so ring neighbours are cube neighbours; ring
/// distance 2^k (k >= 1) is cube distance 2. The circular shift's `Shift::GrayCode`, the
/// `reorder = true` of the topology constructors and the simulator's placements
/// (`sim::Simulator::with_placement`) all use this one function.
///
/// ```
/// let ring: Vec<usize> = (0..8).map(rpar::gray_code).collect();
/// assert_eq!(ring, [0, 1, 3, 2, 6, 7, 5, 4]);
/// let cube = rpar::cost::Network::hypercube(4);
/// assert!((0..16).all(|i| cube.distance(rpar::gray_code(i), rpar::gray_code((i + 1) % 16)) == 1));
/// ```
#[inline]
pub fn gray_code(i: usize) -> usize {
    i ^ (i >> 1)
}

/// The inverse of [`gray_code`]: the ring position whose code is `g` (on hypercube node `g`).
///
/// ```
/// assert_eq!(rpar::gray_code_inverse(0b110), 4); // gray_code(4) = 0b110
/// assert!((0..256).all(|i| rpar::gray_code_inverse(rpar::gray_code(i)) == i));
/// ```
pub fn gray_code_inverse(mut g: usize) -> usize {
    let mut i = 0;
    while g != 0 {
        i ^= g;
        g >>= 1;
    }
    i
}

/// The node an e-cube route from `a` to `b` has reached after `hop` hops: the lowest `hop`
/// differing bits fixed (all of them once `hop` is past the route's end).
fn hop_node(a: usize, b: usize, hop: usize) -> usize {
    let (mut at, mut diff) = (a, a ^ b);
    for _ in 0..hop {
        at ^= diff & diff.wrapping_neg();
        diff &= diff.wrapping_sub(1);
    }
    at
}

/// Where ring position `i`'s data is after `hop` hops of the shift by `2^k` on `p` positions.
fn node_of(p: usize, k: u32, i: usize, hop: usize) -> usize {
    hop_node(gray_code(i), gray_code((i + (1 << k)) % p), hop)
}

/// The ring position whose data, in the shift by `2^k`, is at `node` after `hop` hops. Every
/// route has the same number of hops (1 for k = 0, else 2), and at each hop the messages sit on
/// distinct nodes (checked by the tests), so every hop is one exchange per rank. O(log p): the
/// middle node of a two-hop route is one bit away from its start.
fn at_hop(p: usize, k: u32, hop: usize, node: usize) -> usize {
    let hops = if k == 0 { 1 } else { 2 };
    if hop == 0 {
        return gray_code_inverse(node);
    }
    if hop == hops {
        return (gray_code_inverse(node) + p - (1 << k)) % p;
    }
    (0..p.trailing_zeros())
        .map(|bit| gray_code_inverse(node ^ (1 << bit)))
        .find(|&i| node_of(p, k, i, hop) == node)
        .unwrap_or_else(|| unreachable!("every hop of a Gray-code shift is a permutation"))
}

fn gray_code_shift<C: Channel, T: Datatype>(ch: &C, mut data: Vec<T>, q: usize) -> Result<Vec<T>> {
    let (r, p) = (ch.rank(), ch.size());
    let me = gray_code(r);
    for k in (0..usize::BITS).filter(|k| q & (1 << k) != 0) {
        let hops = if k == 0 { 1 } else { 2 };
        for hop in 0..hops {
            let (held, coming) = (at_hop(p, k, hop, me), at_hop(p, k, hop + 1, me));
            let dest = gray_code_inverse(node_of(p, k, held, hop + 1));
            let source = gray_code_inverse(node_of(p, k, coming, hop));
            ch.send_owned(data, dest, tags::SHIFT_GRAY)?;
            data = ch.recv_vec(source, tags::SHIFT_GRAY)?;
        }
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nodes an e-cube route visits from `a` to `b`: the differing bits fixed lowest
    /// first (what `hop_node` computes one hop at a time).
    fn route(a: usize, b: usize) -> Vec<usize> {
        let mut path = vec![a];
        let mut at = a;
        let mut diff = a ^ b;
        while diff != 0 {
            at ^= diff & diff.wrapping_neg();
            diff &= diff - 1;
            path.push(at);
        }
        path
    }

    /// All routes of the shift by `2^k`: `routes[i]` carries position `i`'s data.
    fn routes(p: usize, k: u32) -> Vec<Vec<usize>> {
        (0..p)
            .map(|i| route(gray_code(i), gray_code((i + (1 << k)) % p)))
            .collect()
    }

    #[test]
    fn at_hop_finds_the_position_a_search_of_all_routes_finds() {
        for d in 0..=9 {
            let p = 1usize << d;
            for k in 0..d {
                let routes = routes(p, k);
                for hop in 0..routes[0].len() {
                    for (i, path) in routes.iter().enumerate() {
                        assert_eq!(node_of(p, k, i, hop), path[hop]);
                    }
                    for node in 0..p {
                        let searched = routes.iter().position(|path| path[hop] == node);
                        assert_eq!(Some(at_hop(p, k, hop, node)), searched, "p {p} k {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn gray_code_shifts_are_permutations_of_one_or_two_hops() {
        for d in 0..=10 {
            let p = 1usize << d;
            for i in 0..p {
                assert_eq!(gray_code_inverse(gray_code(i)), i);
            }
            for k in 0..d {
                let routes = routes(p, k);
                let hops = routes[0].len() - 1;
                assert_eq!(hops, if k == 0 { 1 } else { 2 }, "p = {p}, k = {k}");
                for hop in 0..=hops {
                    let mut at: Vec<usize> = routes.iter().map(|r| r[hop]).collect();
                    at.sort_unstable();
                    assert_eq!(at, (0..p).collect::<Vec<_>>(), "p = {p}, k = {k}");
                }
            }
        }
    }
}
