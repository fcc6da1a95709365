//! `topology!` and `spmd!(topology = T, …)` through the public API: the generated constants,
//! and launching exactly a topology's size with each rank's topology communicator.

use rpar::prelude::*;

topology! {
    /// Cannon's 4 x 4 torus.
    pub Torus = cart[4, 4] periodic[true, true];
    /// A star: the hub 0 and three leaves.
    pub Star = graph { 0: [1, 2, 3], 1: [0], 2: [0], 3: [0] };
    /// A ring that takes the Gray-code placement.
    Ring = cart[8] periodic[true] reorder = true;
    /// Nodes may come in any order.
    Pair = graph { 1: [0], 0: [1] } reorder = false;
    Line = cart[3, 1, 2];
}

#[test]
fn generated_types_carry_their_shape() {
    assert_eq!(Torus::DIMS, [4, 4]);
    assert_eq!(Torus::PERIODS, [true, true]);
    assert_eq!((Torus::NDIMS, Torus::SIZE), (2, 16));
    assert_eq!(<Torus as Topology>::SIZE, 16);
    assert_eq!((Star::NODES, Star::SIZE), (4, 4));
    assert_eq!(Star::INDEX, [3, 4, 5, 6]);
    assert_eq!(Star::EDGES, [1, 2, 3, 0, 0, 0]);
    assert_eq!((Ring::REORDER, Torus::REORDER), (true, false));
    assert_eq!((Pair::INDEX, Pair::EDGES), ([1, 2], [1, 0]));
    assert_eq!((Line::PERIODS, Line::SIZE), ([false; 3], 6));
}

#[test]
fn spmd_launches_the_grid() {
    let got = spmd!(topology = Torus, |grid| {
        let [row, col] = grid.coords();
        let (src, dst) = grid.shift(1, -(row as isize))?;
        let mut x = grid.rank();
        grid.sendrecv_replace(&mut x, dst, 0, src, 0)?;
        on root {
            assert_eq!(grid.size(), 16);
        }
        Ok((row, col, x))
    })
    .unwrap();
    assert_eq!(got.len(), 16);
    for (r, (row, col, x)) in got.into_iter().enumerate() {
        assert_eq!(r, row * 4 + col);
        // Cannon's skew: row i moves left by i, so this rank holds column col + row
        assert_eq!(x, row * 4 + (col + row) % 4);
    }
}

#[test]
fn spmd_launches_the_graph_and_a_matching_ranks_is_fine() {
    let got = spmd!(topology = Star, ranks = 4, |star| {
        let mut from = vec![0usize; star.neighbors_count(star.rank())?];
        star.neighbor_allgather(&[star.rank() * 100], &mut from)?;
        Ok(from)
    })
    .unwrap();
    assert_eq!(got, vec![vec![100, 200, 300], vec![0], vec![0], vec![0]]);
}

#[test]
fn spmd_with_reorder_gives_the_gray_ring() {
    let got = spmd!(topology = Ring, |ring: CartComm<1>| {
        let (_, next) = ring.shift(0, 1)?;
        Ok((
            ring.comm().group().world_rank_of(ring.rank())?,
            ring.group().world_rank_of(next)?,
        ))
    })
    .unwrap();
    for (me, next) in got {
        assert_eq!((me ^ next).count_ones(), 1);
    }
}
