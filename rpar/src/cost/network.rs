//! The modeled interconnection networks — ring, 2-D mesh and torus, hypercube, fully connected —
//! with their distances, diameters and deterministic routes: the shorter way round on a ring,
//! dimension-ordered (XY) routing on meshes and tori, e-cube routing on hypercubes; and the
//! binary-reflected Gray code that embeds a ring in a hypercube.
//!
//! Node numbering: ring and fully connected `0..p`; mesh and torus row-major, node
//! `row * cols + col`, X is the column index, Y the row; hypercube nodes are the `d`-bit labels.

use crate::{Error, Result};

/// An interconnection network of `nodes()` nodes joined by directed, full-duplex links.
///
/// ```
/// use rpar::cost::Network;
/// let torus = Network::torus(4, 4);
/// assert_eq!(torus.nodes(), 16);
/// assert_eq!(torus.diameter(), 4); // 2 floor(sqrt(p) / 2)
/// assert_eq!(Network::hypercube(5).diameter(), 5); // log2 p
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// A bidirectional ring of `nodes` nodes.
    Ring {
        /// Number of nodes.
        nodes: usize,
    },
    /// A `rows` x `cols` grid without wraparound.
    Mesh {
        /// Extent in Y.
        rows: usize,
        /// Extent in X.
        cols: usize,
    },
    /// A `rows` x `cols` grid with wraparound in both dimensions.
    Torus {
        /// Extent in Y.
        rows: usize,
        /// Extent in X.
        cols: usize,
    },
    /// A `dim`-dimensional binary hypercube of `2^dim` nodes.
    Hypercube {
        /// Number of dimensions, log2 of the node count.
        dim: u32,
    },
    /// A direct link between every ordered pair of nodes.
    FullyConnected {
        /// Number of nodes.
        nodes: usize,
    },
}

/// A directed link between two neighbouring nodes: what [`Network::route`] returns, hop by hop.
///
/// ```
/// use rpar::cost::{Link, Network};
/// // XY routing on a 3 x 3 mesh: along the row first, then down the column
/// let route = Network::mesh(3, 3).route(0, 8)?;
/// let nodes: Vec<usize> = route.iter().map(|l: &Link| l.to).collect();
/// assert_eq!(nodes, [1, 2, 5, 8]);
/// assert_eq!(route[0], Link { from: 0, to: 1 });
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Link {
    /// The node the link leaves.
    pub from: usize,
    /// The node the link enters.
    pub to: usize,
}

/// Whether a node forwards a message after it has all of it, or as soon as its header arrives.
///
/// ```
/// use rpar::cost::{Params, Switching};
/// let p = Params::new(0.0, 1.0, 0.0625, 0.0);
/// // 160 bytes (10 time units) over 5 hops: store-and-forward pays the transfer on every hop
/// let sf = p.point_to_point(160, 5, Switching::StoreAndForward);
/// let ct = p.point_to_point(160, 5, Switching::CutThrough);
/// assert_eq!((sf, ct), ((10.0 + 1.0) * 5.0, 10.0 + 5.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Switching {
    /// Each hop receives the whole message before passing it on: t_n + (m t_c + t_s) l.
    StoreAndForward,
    /// The header sets up the path and the body streams behind it: t_n + m t_c + t_s l.
    CutThrough,
}

/// Integer square root, when `p` is a perfect square (exact for every `usize`, unlike a round
/// trip through `f64`, whose 53-bit mantissa cannot hold every square above 2^53).
pub(crate) fn exact_sqrt(p: usize) -> Option<usize> {
    let r = p.isqrt();
    (r * r == p).then_some(r)
}

/// log2 of `p`, when `p` is a power of two.
pub(crate) fn exact_log2(p: usize) -> Option<u32> {
    p.is_power_of_two().then(|| p.trailing_zeros())
}

/// One coordinate step along a dimension of extent `n` from `a` to `b`: returns the signed
/// direction (+1, -1) and the number of steps, the shorter way round when `wrap` (ties: +1).
fn dim_steps(a: usize, b: usize, n: usize, wrap: bool) -> (isize, usize) {
    if a == b || n == 0 {
        return (1, 0);
    }
    let forward = (b + n - a) % n;
    if !wrap {
        return if b > a { (1, b - a) } else { (-1, a - b) };
    }
    if forward <= n - forward {
        (1, forward)
    } else {
        (-1, n - forward)
    }
}

impl Network {
    /// A ring of `nodes` nodes.
    ///
    /// ```
    /// use rpar::cost::Network;
    /// let ring = Network::ring(8);
    /// assert_eq!((ring.nodes(), ring.diameter()), (8, 4));
    /// assert_eq!(ring.distance(1, 7), 2); // the shorter way round
    /// ```
    pub fn ring(nodes: usize) -> Self {
        Network::Ring { nodes }
    }

    /// A `rows` x `cols` mesh (no wraparound).
    ///
    /// ```
    /// use rpar::cost::Network;
    /// let mesh = Network::mesh(3, 4);
    /// assert_eq!((mesh.nodes(), mesh.diameter()), (12, 2 + 3));
    /// assert_eq!(mesh.distance(0, 11), 5); // corner to corner
    /// ```
    pub fn mesh(rows: usize, cols: usize) -> Self {
        Network::Mesh { rows, cols }
    }

    /// A `rows` x `cols` torus (wraparound in both dimensions).
    ///
    /// ```
    /// use rpar::cost::Network;
    /// let torus = Network::torus(3, 4);
    /// assert_eq!((torus.nodes(), torus.diameter()), (12, 1 + 2));
    /// assert_eq!(torus.distance(0, 11), 2); // one step back in each dimension
    /// ```
    pub fn torus(rows: usize, cols: usize) -> Self {
        Network::Torus { rows, cols }
    }

    /// A square sqrt(p) x sqrt(p) torus; `p` must be a perfect square.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `p` is not a perfect square.
    ///
    /// ```
    /// assert_eq!(rpar::cost::Network::square_torus(64)?, rpar::cost::Network::torus(8, 8));
    /// assert!(rpar::cost::Network::square_torus(32).is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn square_torus(p: usize) -> Result<Self> {
        exact_sqrt(p).map(|q| Network::torus(q, q)).ok_or_else(|| {
            Error::invalid(
                "Network::square_torus",
                format!("expected a perfect square node count, got {p}"),
            )
        })
    }

    /// A hypercube of dimension `dim` (2^dim nodes).
    ///
    /// ```
    /// use rpar::cost::Network;
    /// let cube = Network::hypercube(4);
    /// assert_eq!((cube.nodes(), cube.diameter()), (16, 4));
    /// assert_eq!(cube.distance(0b0101, 0b0110), 2); // the Hamming distance
    /// ```
    pub fn hypercube(dim: u32) -> Self {
        Network::Hypercube { dim }
    }

    /// The hypercube of `p` nodes; `p` must be a power of two.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `p` is not a power of two.
    ///
    /// ```
    /// use rpar::cost::Network;
    /// assert_eq!(Network::hypercube_of(64)?, Network::hypercube(6));
    /// assert!(Network::hypercube_of(48).is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn hypercube_of(p: usize) -> Result<Self> {
        exact_log2(p).map(Network::hypercube).ok_or_else(|| {
            Error::invalid(
                "Network::hypercube_of",
                format!("expected a power-of-two node count, got {p}"),
            )
        })
    }

    /// A fully connected network of `nodes` nodes.
    ///
    /// ```
    /// use rpar::cost::Network;
    /// let full = Network::fully_connected(5);
    /// assert_eq!((full.diameter(), full.distance(1, 4), full.distance(2, 2)), (1, 1, 0));
    /// ```
    pub fn fully_connected(nodes: usize) -> Self {
        Network::FullyConnected { nodes }
    }

    /// Number of nodes (`usize::MAX` for a hypercube too large to count).
    ///
    /// ```
    /// use rpar::cost::Network;
    /// assert_eq!(Network::torus(4, 8).nodes(), 32);
    /// assert_eq!(Network::hypercube(10).nodes(), 1024);
    /// ```
    pub fn nodes(&self) -> usize {
        match *self {
            Network::Ring { nodes } | Network::FullyConnected { nodes } => nodes,
            Network::Mesh { rows, cols } | Network::Torus { rows, cols } => rows * cols,
            Network::Hypercube { dim } => 1usize.checked_shl(dim).unwrap_or(usize::MAX),
        }
    }

    /// Largest distance between two nodes, in hops: ring floor(p/2), mesh (rows-1)+(cols-1),
    /// torus floor(rows/2)+floor(cols/2) (2 floor(sqrt(p)/2) when square), hypercube log2 p,
    /// fully connected 1 (0 for one node).
    ///
    /// ```
    /// use rpar::cost::Network;
    /// let p = 64;
    /// assert_eq!(Network::ring(p).diameter(), 32);
    /// assert_eq!(Network::square_torus(p)?.diameter(), 8);
    /// assert_eq!(Network::hypercube_of(p)?.diameter(), 6);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn diameter(&self) -> usize {
        match *self {
            Network::Ring { nodes } => nodes / 2,
            Network::Mesh { rows, cols } => rows.saturating_sub(1) + cols.saturating_sub(1),
            Network::Torus { rows, cols } => rows / 2 + cols / 2,
            Network::Hypercube { dim } => dim as usize,
            Network::FullyConnected { nodes } => usize::from(nodes > 1),
        }
    }

    /// Number of hops of the route from `a` to `b` (which is a shortest path on every network);
    /// for nodes out of range the value is meaningless ([`Network::route`] checks them).
    ///
    /// ```
    /// use rpar::cost::Network;
    /// let torus = Network::torus(4, 4);
    /// assert_eq!(torus.distance(0, 15), 2); // wraps in both dimensions
    /// assert_eq!(torus.distance(5, 5), 0);
    /// assert_eq!(torus.distance(0, 10), torus.route(0, 10)?.len());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn distance(&self, a: usize, b: usize) -> usize {
        match *self {
            Network::Ring { nodes } => dim_steps(a, b, nodes, true).1,
            Network::Mesh { cols, .. } | Network::Torus { cols, .. } => {
                let wrap = matches!(self, Network::Torus { .. });
                let (rows, _) = self.extents();
                dim_steps(a % cols, b % cols, cols, wrap).1
                    + dim_steps(a / cols, b / cols, rows, wrap).1
            }
            Network::Hypercube { .. } => (a ^ b).count_ones() as usize,
            Network::FullyConnected { .. } => usize::from(a != b),
        }
    }

    fn extents(&self) -> (usize, usize) {
        match *self {
            Network::Mesh { rows, cols } | Network::Torus { rows, cols } => (rows, cols),
            _ => (1, self.nodes()),
        }
    }

    fn check_node(&self, node: usize) -> Result<()> {
        if node < self.nodes() {
            Ok(())
        } else {
            Err(Error::invalid(
                "Network::route",
                format!(
                    "node {node} is out of range: the network has {} nodes",
                    self.nodes()
                ),
            ))
        }
    }

    /// The links a message from `from` to `to` crosses, in order. Ring: the shorter way round
    /// (ties go up); mesh and torus: XY routing — all of X (columns) first, then Y (rows), the
    /// shorter way round on a torus; hypercube: e-cube — differing address bits corrected from
    /// the lowest to the highest; fully connected: the direct link.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `from` or `to` is not a node of the network.
    ///
    /// ```
    /// use rpar::cost::{Link, Network};
    /// let route = Network::hypercube(3).route(0b000, 0b101)?;
    /// assert_eq!(route, [Link { from: 0, to: 1 }, Link { from: 1, to: 5 }]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn route(&self, from: usize, to: usize) -> Result<Vec<Link>> {
        self.check_node(from)?;
        self.check_node(to)?;
        let mut links = Vec::with_capacity(self.distance(from, to));
        self.for_each_hop(from, to, |link| links.push(link));
        Ok(links)
    }

    /// Calls `hop` for each link of the route from `from` to `to` (both in range), in order.
    pub(crate) fn for_each_hop(&self, from: usize, to: usize, mut hop: impl FnMut(Link)) {
        let mut at = from;
        while at != to {
            let next = self.next_hop(at, to);
            hop(Link { from: at, to: next });
            at = next;
        }
    }

    /// The node after `at` on the route to `to` (`at != to`, both in range).
    pub(crate) fn next_hop(&self, at: usize, to: usize) -> usize {
        let along =
            |x: usize, dir: isize, n: usize| (x as isize + dir).rem_euclid(n as isize) as usize;
        match *self {
            Network::Ring { nodes } => along(at, dim_steps(at, to, nodes, true).0, nodes),
            Network::Mesh { rows, cols } | Network::Torus { rows, cols } => {
                let wrap = matches!(self, Network::Torus { .. });
                let (r, c) = (at / cols, at % cols);
                if c != to % cols {
                    r * cols + along(c, dim_steps(c, to % cols, cols, wrap).0, cols)
                } else {
                    along(r, dim_steps(r, to / cols, rows, wrap).0, rows) * cols + c
                }
            }
            Network::Hypercube { .. } => {
                let diff = at ^ to;
                at ^ (diff & diff.wrapping_neg())
            }
            Network::FullyConnected { .. } => to,
        }
    }
}
