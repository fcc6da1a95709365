//! Routing and embedding facts of the modeled networks: XY and e-cube routes are shortest and
//! dimension-ordered (checked against a breadth-first search of the network's graph), and the
//! Gray code maps ring distance 2^i to hypercube distance at most 2 (exactly 1 for i = 0).

use rpar::cost::{Link, Network};
use rpar::{gray_code as gray, gray_code_inverse as gray_inverse};
use std::collections::VecDeque;

/// The neighbours of `n`, from the network's definition (independent of the router).
fn neighbours(net: &Network, n: usize) -> Vec<usize> {
    match *net {
        Network::Ring { nodes } => vec![(n + 1) % nodes, (n + nodes - 1) % nodes],
        Network::Mesh { rows, cols } | Network::Torus { rows, cols } => {
            let wrap = matches!(net, Network::Torus { .. });
            let (r, c) = ((n / cols) as isize, (n % cols) as isize);
            let mut out = Vec::new();
            for (dr, dc) in [(0, 1), (0, -1), (1, 0), (-1, 0)] {
                let (mut nr, mut nc) = (r + dr, c + dc);
                if wrap {
                    nr = nr.rem_euclid(rows as isize);
                    nc = nc.rem_euclid(cols as isize);
                }
                if (0..rows as isize).contains(&nr) && (0..cols as isize).contains(&nc) {
                    out.push(nr as usize * cols + nc as usize);
                }
            }
            out
        }
        Network::Hypercube { dim } => (0..dim).map(|b| n ^ (1 << b)).collect(),
        Network::FullyConnected { nodes } => (0..nodes).filter(|&m| m != n).collect(),
    }
}

fn bfs(net: &Network, from: usize) -> Vec<usize> {
    let mut dist = vec![usize::MAX; net.nodes()];
    dist[from] = 0;
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        for m in neighbours(net, n) {
            if dist[m] == usize::MAX {
                dist[m] = dist[n] + 1;
                queue.push_back(m);
            }
        }
    }
    dist
}

fn check_routes_shortest(net: Network) {
    let mut diameter = 0;
    for a in 0..net.nodes() {
        let dist = bfs(&net, a);
        for (b, &shortest) in dist.iter().enumerate() {
            let route = net.route(a, b).unwrap();
            assert_eq!(
                route.len(),
                dist[b],
                "{net:?}: route {a} -> {b} is not shortest"
            );
            assert_eq!(net.distance(a, b), dist[b], "{net:?}: distance {a} -> {b}");
            let mut at = a;
            for Link { from, to } in &route {
                assert_eq!(*from, at, "{net:?}: route {a} -> {b} is not contiguous");
                assert!(
                    neighbours(&net, at).contains(to),
                    "{net:?}: {at} -> {to} is no link"
                );
                at = *to;
            }
            assert_eq!(at, b);
            diameter = diameter.max(shortest);
        }
    }
    assert_eq!(net.diameter(), diameter, "{net:?}: diameter");
}

#[test]
fn routes_are_shortest_on_every_network() {
    for net in [
        Network::ring(1),
        Network::ring(7),
        Network::ring(8),
        Network::mesh(3, 5),
        Network::torus(4, 4),
        Network::torus(3, 5),
        Network::torus(6, 2),
        Network::hypercube(0),
        Network::hypercube(4),
        Network::fully_connected(5),
    ] {
        check_routes_shortest(net);
    }
}

#[test]
fn xy_routes_finish_x_before_y() {
    for net in [Network::mesh(4, 5), Network::torus(5, 4)] {
        let cols = match net {
            Network::Mesh { cols, .. } | Network::Torus { cols, .. } => cols,
            _ => unreachable!(),
        };
        for a in 0..net.nodes() {
            for b in 0..net.nodes() {
                let route = net.route(a, b).unwrap();
                let is_x: Vec<bool> = route.iter().map(|l| l.from / cols == l.to / cols).collect();
                // All X (same row) moves, then all Y moves.
                assert!(
                    is_x.windows(2).all(|w| w[0] || !w[1]),
                    "{net:?}: {a} -> {b}: {route:?}"
                );
                // Each dimension moves in one direction only.
                let x_dirs: Vec<bool> = route
                    .iter()
                    .filter(|l| l.from / cols == l.to / cols)
                    .map(|l| (l.to % cols + cols - l.from % cols) % cols == 1)
                    .collect();
                assert!(
                    x_dirs.windows(2).all(|w| w[0] == w[1]),
                    "{net:?}: {a} -> {b}"
                );
            }
        }
    }
}

#[test]
fn ecube_routes_fix_bits_lowest_first() {
    let net = Network::hypercube(5);
    for a in 0..32 {
        for b in 0..32 {
            let bits: Vec<u32> = net
                .route(a, b)
                .unwrap()
                .iter()
                .map(|l| {
                    let d = l.from ^ l.to;
                    assert!(d.is_power_of_two());
                    d.trailing_zeros()
                })
                .collect();
            assert_eq!(bits.len(), (a ^ b).count_ones() as usize);
            assert!(bits.windows(2).all(|w| w[0] < w[1]), "{a} -> {b}: {bits:?}");
        }
    }
}

#[test]
fn gray_code_embeds_the_ring_in_the_hypercube() {
    for d in 1..=10u32 {
        let (p, cube) = (1usize << d, Network::hypercube(d));
        for i in 0..d {
            let shift = 1 << i;
            let worst = (0..p)
                .map(|j| cube.distance(gray(j), gray((j + shift) % p)))
                .max()
                .unwrap();
            if i == 0 {
                assert_eq!(worst, 1, "d = {d}: ring neighbours must be cube neighbours");
            } else {
                assert!(
                    worst <= 2,
                    "d = {d}, i = {i}: ring distance 2^i is cube distance {worst}"
                );
            }
            // In fact exactly 2 for every node once i >= 1.
            if i > 0 {
                assert!((0..p).all(|j| cube.distance(gray(j), gray((j + shift) % p)) == 2));
            }
        }
        assert!((0..p).all(|j| gray_inverse(gray(j)) == j));
    }
}

#[test]
fn routes_refuse_missing_nodes() {
    let err = Network::ring(4).route(0, 4).unwrap_err();
    assert!(err.to_string().contains("node 4"), "{err}");
    assert!(Network::hypercube_of(12).is_err());
    assert_eq!(Network::square_torus(16).unwrap().diameter(), 4);
}
