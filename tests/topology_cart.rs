//! Cartesian communicators through the public API: creation and its errors, reorder (the
//! Gray-code embedding), dup, sub, and the neighbourhood collectives on grids.

use rpar::{gray_code, CartComm, Error, Neighborhood, TopoKind};

fn invalid(err: &Error, call: &str, words: &str) {
    match err {
        Error::InvalidArgument { call: c, message } => {
            assert_eq!(*c, call);
            assert!(message.contains(words), "{message}");
        }
        other => panic!("expected an invalid argument to {call}, got {other:?}"),
    }
}

#[test]
fn ranks_beyond_the_grid_get_none() {
    let got = rpar::run(7, |world| {
        Ok(CartComm::create(&world, [2, 3], [false; 2], false)?.map(|g| (g.rank(), g.size())))
    })
    .unwrap();
    let inside: Vec<_> = (0..6).map(|r| Some((r, 6))).chain([None]).collect();
    assert_eq!(got, inside);
}

#[test]
fn creation_errors() {
    rpar::run(4, |world| {
        invalid(
            &CartComm::create(&world, [2, 0], [false; 2], false).unwrap_err(),
            "CartComm::create",
            "dim 1 of [2, 0] is 0",
        );
        invalid(
            &CartComm::create(&world, [3, 2], [true; 2], false).unwrap_err(),
            "CartComm::create",
            "more ranks than the communicator's 4",
        );
        invalid(
            &CartComm::create(&world, [usize::MAX, 3], [true; 2], true).unwrap_err(),
            "CartComm::create",
            "more ranks",
        );
        invalid(
            &CartComm::cart_map(&world, [5], [true]).unwrap_err(),
            "CartComm::cart_map",
            "the grid [5] needs more ranks",
        );
        Ok(())
    })
    .unwrap();
}

#[test]
fn call_errors() {
    rpar::run(6, |world| {
        let grid = CartComm::create(&world, [2, 3], [true, false], false)?.unwrap();
        invalid(
            &grid.shift(2, 1).unwrap_err(),
            "CartComm::shift",
            "dim 2 does not exist: the grid has 2 dims",
        );
        invalid(
            &grid.rank_of([0, 3]).unwrap_err(),
            "CartComm::rank_of",
            "coordinate 3 of dim 1 is outside 0..3",
        );
        invalid(
            &grid.rank_of([0, -1]).unwrap_err(),
            "CartComm::rank_of",
            "coordinate -1 of dim 1",
        );
        assert_eq!(grid.rank_of([-1i64, 2])?, 5);
        assert_eq!(grid.rank_of([7u8, 0])?, 3);
        assert!(matches!(
            grid.coords_of(6),
            Err(Error::RankOutOfRange { rank: 6, size: 6 })
        ));
        assert_eq!(grid.coords_of(4)?, [1, 1]);
        invalid(
            &grid.sub::<2>([true, false]).unwrap_err(),
            "CartComm::sub",
            "declared with 2 dims but remain [true, false] keeps 1",
        );
        Ok(())
    })
    .unwrap();
}

#[test]
fn huge_displacements_wrap_on_periodic_dims() {
    rpar::run(5, |world| {
        let ring = CartComm::create(&world, [5], [true], false)?.unwrap();
        let r = ring.rank();
        let (src, dst) = ring.shift(0, 5 * 1000 + 2)?;
        assert_eq!((src, dst), ((r + 3) % 5, (r + 2) % 5));
        let wrap = |c: i128| c.rem_euclid(5) as usize;
        let min = isize::MIN as i128;
        assert_eq!(
            ring.shift(0, isize::MIN)?,
            (wrap(r as i128 - min), wrap(r as i128 + min))
        );
        let line = CartComm::create(&world, [5], [false], false)?.unwrap();
        assert_eq!(line.shift(0, 5)?, (rpar::PROC_NULL, rpar::PROC_NULL));
        Ok(())
    })
    .unwrap();
}

#[test]
fn reorder_embeds_a_ring_in_the_hypercube() {
    for d in 0..=4 {
        let p = 1usize << d;
        let got = rpar::run(p, |world| {
            let ring = CartComm::create(&world, [p], [true], true)?.unwrap();
            let (_, next) = ring.shift(0, 1)?;
            // world ranks are the hypercube nodes
            Ok((
                ring.coords()[0],
                world.rank(),
                ring.group().world_rank_of(next)?,
            ))
        })
        .unwrap();
        for (pos, node, next_node) in got {
            assert_eq!(node, gray_code(pos), "p {p}");
            assert!(
                p == 1 || (node ^ next_node).count_ones() == 1,
                "p {p}: {node} -> {next_node}"
            );
        }
    }
}

#[test]
fn reorder_embeds_a_torus_and_leaves_other_grids_alone() {
    let got = rpar::run(8, |world| {
        let torus = CartComm::create(&world, [2, 4], [true, true], true)?.unwrap();
        let mut far = 0;
        for dim in 0..2 {
            let (a, b) = torus.shift(dim, 1)?;
            for n in [a, b].into_iter().filter(|&n| n != rpar::PROC_NULL) {
                far += (world.rank() ^ torus.group().world_rank_of(n)?).count_ones() - 1;
            }
        }
        let plain = CartComm::create(&world, [3, 2], [true, true], true)?;
        Ok((far, plain.map(|g| g.rank())))
    })
    .unwrap();
    for (r, (far, plain)) in got.into_iter().enumerate() {
        assert_eq!(far, 0);
        assert_eq!(plain, (r < 6).then_some(r));
    }
}

#[test]
fn dup_keeps_the_grid_and_has_its_own_messages() {
    rpar::run(4, |world| {
        let grid = CartComm::create(&world, [2, 2], [true, false], false)?.unwrap();
        let copy = grid.dup()?;
        assert_eq!(copy.cart_get(), grid.cart_get());
        assert_eq!(TopoKind::of(&copy), TopoKind::Cart);
        let (_, dst) = grid.shift(0, 1)?;
        let (src, _) = grid.shift(0, 1)?;
        copy.send(&1u8, dst, 0)?;
        grid.send(&2u8, dst, 0)?;
        assert_eq!(grid.recv::<u8>(src, 0)?.0, [2]);
        assert_eq!(copy.recv::<u8>(src, 0)?.0, [1]);
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_sub_grid_is_a_working_communicator() {
    let got = rpar::run(12, |world| {
        let grid = CartComm::create(&world, [2, 3, 2], [false, true, false], false)?.unwrap();
        let plane: CartComm<2> = grid.sub([true, false, true])?;
        let c = grid.coords();
        assert_eq!(plane.dims(), [2, 2]);
        assert_eq!(plane.coords(), [c[0], c[2]]);
        // a shift inside the plane stays among ranks with the same middle coordinate
        let (_, dst) = plane.shift(0, 1)?;
        if dst != rpar::PROC_NULL {
            let d = dst;
            // grid ranks are world ranks here (no reorder)
            let there = grid.coords_of(plane.group().world_rank_of(d)?)?;
            assert_eq!((there[0], there[1]), (1, c[1]));
        }
        let mut sum = 0usize;
        for r in 0..plane.size() {
            if r == plane.rank() {
                continue;
            }
            plane.send(&world.rank(), r, 0)?;
        }
        for r in (0..plane.size()).filter(|&r| r != plane.rank()) {
            sum += plane.recv::<usize>(r, 0)?.0[0];
        }
        Ok(sum + world.rank())
    })
    .unwrap();
    // the plane of middle coordinate m holds world ranks with (rank / 2) % 3 == m
    for (r, sum) in got.into_iter().enumerate() {
        let m = (r / 2) % 3;
        let want: usize = (0..12).filter(|q| (q / 2) % 3 == m).sum();
        assert_eq!(sum, want);
    }
}

#[test]
fn neighbor_allgather_in_mpis_order_leaves_missing_slots() {
    let got = rpar::run(6, |world| {
        let grid = CartComm::create(&world, [3, 2], [false, true], false)?.unwrap();
        let mut recv = [usize::MAX; 4];
        grid.neighbor_allgather(&[grid.rank()], &mut recv)?;
        let want: Vec<usize> = (0..2)
            .flat_map(|d| {
                let (back, fwd) = grid.shift(d, 1).unwrap();
                [back, fwd].map(|r| if r == rpar::PROC_NULL { usize::MAX } else { r })
            })
            .collect();
        assert_eq!(recv.to_vec(), want);
        Ok(recv)
    })
    .unwrap();
    assert_eq!(got[0], [usize::MAX, 2, 1, 1]);
}

#[test]
fn alltoall_on_periodic_dims_of_two_and_one_keeps_directions_apart() {
    let got = rpar::run(2, |world| {
        let grid = CartComm::create(&world, [2, 1], [true, true], false)?.unwrap();
        let r = grid.rank() as i32 * 100;
        // blocks of 2: [to back d0, to forward d0, to back d1, to forward d1]
        let send = [r, r + 1, r + 10, r + 11, r + 20, r + 21, r + 30, r + 31];
        let mut recv = [0i32; 8];
        grid.neighbor_alltoall(&send, &mut recv, 2)?;
        Ok(recv)
    })
    .unwrap();
    // slot "from back" holds what the back neighbour sent forward, and vice versa; along the
    // dim of 1 both neighbours are this rank itself
    assert_eq!(got[0], [110, 111, 100, 101, 30, 31, 20, 21]);
    assert_eq!(got[1], [10, 11, 0, 1, 130, 131, 120, 121]);
}

#[test]
fn v_variants_place_blocks_by_displacement() {
    let got = rpar::run(3, |world| {
        let line = CartComm::create(&world, [3], [false], false)?.unwrap();
        let r = line.rank() as u16;
        // allgatherv: from back into [4..], from forward into [0..]
        let mut recv = [9u16; 6];
        line.neighbor_allgatherv(&[r, r], &mut recv, &[2, 2], &[4, 0])?;
        // alltoallv: 1 element back, 2 forward; received from back at 0, from forward at 3
        let send = [r * 10, r * 10 + 1, r * 10 + 2];
        let mut recv2 = [7u16; 5];
        line.neighbor_alltoallv(&send, &[1, 2], &[0, 1], &mut recv2, &[2, 1], &[0, 3])?;
        Ok((recv, recv2))
    })
    .unwrap();
    assert_eq!(got[1].0, [2, 2, 9, 9, 0, 0]);
    assert_eq!(got[1].1, [1, 2, 7, 20, 7]);
    assert_eq!(got[0].1, [7, 7, 7, 10, 7]);
}

#[test]
fn neighborhood_argument_errors() {
    rpar::run(2, |world| {
        let line = CartComm::create(&world, [2], [false], false)?.unwrap();
        invalid(
            &line.neighbor_allgather(&[1u8], &mut [0u8; 3]).unwrap_err(),
            "neighbor_allgather",
            "recv must hold 2 elements",
        );
        invalid(
            &line
                .neighbor_alltoall(&[1u8; 3], &mut [0u8; 2], 1)
                .unwrap_err(),
            "neighbor_alltoall",
            "send must hold 2 elements",
        );
        invalid(
            &line
                .neighbor_allgatherv(&[1u8], &mut [0u8; 2], &[1], &[0])
                .unwrap_err(),
            "neighbor_allgatherv",
            "one entry per neighbour (2), but have 1 and 1",
        );
        invalid(
            &line
                .neighbor_alltoallv(&[1u8; 2], &[1, 1], &[0, 1], &mut [0u8; 2], &[1, 1], &[0, 2])
                .unwrap_err(),
            "neighbor_alltoallv",
            "recv block 1 (1 elements at 2) does not fit",
        );
        Ok(())
    })
    .unwrap();
}

/// Every grid of up to 8 ranks in 1 to 3 dims, every periods setting: what `neighbor_alltoall`
/// delivers against a reference computed from coordinates alone.
#[test]
fn neighbor_alltoall_matches_a_coordinate_reference_on_every_small_grid() {
    fn check<const N: usize>(dims: [usize; N], periods: [bool; N]) {
        let p: usize = dims.iter().product();
        // the grid neighbour of rank `r` one step along `d`, as coordinates say
        let step = |r: usize, d: usize, s: isize| -> Option<usize> {
            let mut c = [0usize; N];
            let mut rest = r;
            for i in (0..N).rev() {
                c[i] = rest % dims[i];
                rest /= dims[i];
            }
            let x = c[d] as isize + s;
            let n = dims[d] as isize;
            c[d] = if periods[d] {
                x.rem_euclid(n) as usize
            } else if (0..n).contains(&x) {
                x as usize
            } else {
                return None;
            };
            Some(c.iter().zip(&dims).fold(0, |acc, (&c, &d)| acc * d + c))
        };
        let got = rpar::run(p, |world| {
            let grid = CartComm::create(&world, dims, periods, false)?.unwrap();
            // block k carries (sender, k)
            let send: Vec<[u32; 2]> = (0..2 * N).map(|k| [grid.rank() as u32, k as u32]).collect();
            let mut recv = vec![[u32::MAX; 2]; 2 * N];
            grid.neighbor_alltoall(&send, &mut recv, 1)?;
            Ok(recv)
        })
        .unwrap();
        for (r, recv) in got.iter().enumerate() {
            for d in 0..N {
                // from one step back: what it sent forward (its slot 2d + 1), and vice versa
                let back = step(r, d, -1).map_or([u32::MAX; 2], |b| [b as u32, 2 * d as u32 + 1]);
                let fwd = step(r, d, 1).map_or([u32::MAX; 2], |f| [f as u32, 2 * d as u32]);
                assert_eq!(
                    [recv[2 * d], recv[2 * d + 1]],
                    [back, fwd],
                    "{dims:?} {periods:?} rank {r} dim {d}"
                );
            }
        }
    }
    for a in 1..=8usize {
        for pa in [false, true] {
            check([a], [pa]);
        }
        for b in (1..=8).filter(|b| a * b <= 8) {
            for pm in 0..4 {
                check([a, b], [pm & 1 == 1, pm & 2 == 2]);
            }
            for c in (1..=8).filter(|c| a * b * c <= 8) {
                for pm in 0..8 {
                    check([a, b, c], [pm & 1 == 1, pm & 2 == 2, pm & 4 == 4]);
                }
            }
        }
    }
}

/// What each rank got from a call that should fail alike on every rank: its collective
/// mismatch's (rank, call) list.
fn mismatch_on_every_rank(got: &[Option<Error>]) -> Vec<(usize, String)> {
    let lists: Vec<Vec<(usize, String)>> = got
        .iter()
        .enumerate()
        .map(|(r, e)| match e {
            Some(Error::CollectiveMismatch { calls, .. }) => calls.clone(),
            other => panic!("rank {r}: expected a collective mismatch, got {other:?}"),
        })
        .collect();
    assert!(lists.iter().all(|l| *l == lists[0]), "{lists:?}");
    lists[0].clone()
}

/// MPI makes different grids on different ranks erroneous; rpar sees every rank, so each rank
/// gets a collective mismatch naming the arguments of every version, not an incoherent grid.
#[test]
fn different_grids_on_different_ranks_are_a_mismatch_on_every_rank() {
    let create = |dims: [usize; 2], periods: [bool; 2], reorder: bool| {
        rpar::run(4, move |world| {
            let (dims, periods, reorder) = if world.rank() >= 2 {
                (dims, periods, reorder)
            } else {
                ([2, 2], [true, true], false)
            };
            Ok(CartComm::create(&world, dims, periods, reorder).err())
        })
        .unwrap()
    };
    let ours = "CartComm::create(dims [2, 2], periods [true, true], reorder false) (so did rank 1)";
    assert_eq!(
        mismatch_on_every_rank(&create([4, 1], [true, true], false)),
        [
            (0, ours.to_string()),
            (
                2,
                "CartComm::create(dims [4, 1], periods [true, true], reorder false) (so did rank 3)"
                    .to_string()
            )
        ]
    );
    let periods = mismatch_on_every_rank(&create([2, 2], [true, false], false));
    assert!(
        periods[1].1.contains("periods [true, false]"),
        "{periods:?}"
    );
    let reorder = mismatch_on_every_rank(&create([2, 2], [true, true], true));
    assert!(reorder[1].1.contains("reorder true"), "{reorder:?}");
    // a grid too large for the communicator on some ranks only: the mismatch, on every rank
    let too_large = mismatch_on_every_rank(&create([3, 3], [true, true], false));
    assert!(too_large[1].1.contains("dims [3, 3]"), "{too_large:?}");
    // a different number of dims
    let got = rpar::run(3, |world| {
        Ok(if world.rank() == 1 {
            CartComm::create(&world, [2, 1, 1], [false; 3], false).err()
        } else {
            CartComm::create(&world, [2, 1], [false; 2], false).err()
        })
    })
    .unwrap();
    assert_eq!(
        mismatch_on_every_rank(&got),
        [
            (
                0,
                "CartComm::create(dims [2, 1], periods [false, false], reorder false) (so did rank 2)"
                    .to_string()
            ),
            (
                1,
                "CartComm::create(dims [2, 1, 1], periods [false, false, false], reorder false)"
                    .to_string()
            )
        ]
    );
}

/// Agreement costs nothing visible: after a mismatch the ranks' collectives still line up.
#[test]
fn a_mismatched_create_leaves_the_communicator_usable() {
    let got = rpar::run(3, |world| {
        let dims = if world.rank() == 0 { [3] } else { [2] };
        assert!(CartComm::create(&world, dims, [false], false).is_err());
        let grid = CartComm::create(&world, [3], [true], false)?.unwrap();
        grid.allreduce(&(grid.rank() as u32), rpar::Sum)
    })
    .unwrap();
    assert_eq!(got, vec![3; 3]);
}
