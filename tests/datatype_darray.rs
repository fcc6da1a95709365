//! MPI_Type_create_darray (`TypeMap::darray`), beyond the MPICH oracle cases of
//! `datatype_oracle.rs`:
//!
//! - as MPICH's test/mpi/datatype/darray-cyclic.c checks: packing a global array whose values
//!   are their own indices gives each rank exactly the elements the distribution formulas say
//!   it owns (block: `i / b`, cyclic: `(i / k) mod p`, row-major process grid), in array order,
//!   and the ranks' parts partition the array; for 1-, 2- and 3-dimensional arrays, both
//!   orders, every kind of distribution;
//! - as darray-pack.c checks: a block-distributed darray is the subarray of the local block;
//! - in use: a root hands every rank its part of a matrix with the darray type and gets it
//!   back, changed, into place;
//! - the errors, each an `Error::InvalidArgument` saying what was expected.

use rpar::Distribution::{self, Block, Cyclic};
use rpar::{CommittedType, Datatype, Error, Order, TypeMap, Typed};

/// The coordinates of linear index `i` of an array `g` stored in `order`.
fn coords_of(mut i: usize, g: &[usize], order: Order) -> Vec<usize> {
    let mut c = vec![0; g.len()];
    let dims: Vec<usize> = match order {
        Order::C => (0..g.len()).rev().collect(),
        Order::Fortran => (0..g.len()).collect(),
    };
    for d in dims {
        c[d] = i % g[d];
        i /= g[d];
    }
    c
}

/// The grid coordinate that owns index `x` of a dimension of `n` over `p` processes.
fn owner(dist: Distribution, x: usize, n: usize, p: usize) -> usize {
    match dist {
        Block(b) => x / b.unwrap_or(n.div_ceil(p)),
        Cyclic(k) => (x / k.unwrap_or(1)) % p,
        Distribution::Undistributed => 0,
    }
}

/// The rank (row-major in the grid) that owns linear index `i`.
fn owning_rank(i: usize, g: &[usize], dists: &[Distribution], ps: &[usize], order: Order) -> usize {
    let c = coords_of(i, g, order);
    (0..g.len()).fold(0, |r, d| r * ps[d] + owner(dists[d], c[d], g[d], ps[d]))
}

/// The values rank `rank`'s darray type picks out of `0, 1, 2, …`.
fn picked(ty: &CommittedType, total: usize) -> Vec<u32> {
    let global: Vec<u32> = (0..total as u32).collect();
    let packed = ty.pack_to_vec(&global, 1).unwrap();
    packed
        .chunks(4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn every_rank_gets_the_elements_the_formulas_give_it() {
    let cases: Vec<(Vec<usize>, Vec<Distribution>, Vec<usize>)> = vec![
        (vec![17], vec![Cyclic(None)], vec![4]),
        (vec![17], vec![Cyclic(Some(3))], vec![4]),
        (vec![17], vec![Block(None)], vec![4]),
        (vec![17], vec![Block(Some(6))], vec![3]),
        (vec![9, 10], vec![Cyclic(Some(2)), Cyclic(None)], vec![2, 3]),
        (vec![9, 10], vec![Block(None), Cyclic(Some(4))], vec![3, 2]),
        (
            vec![7, 5],
            vec![Distribution::Undistributed, Block(Some(2))],
            vec![1, 3],
        ),
        (
            vec![4, 5, 6],
            vec![Cyclic(Some(1)), Distribution::Undistributed, Block(Some(3))],
            vec![3, 1, 2],
        ),
        (
            vec![5, 4, 3],
            vec![Block(None), Cyclic(Some(3)), Cyclic(None)],
            vec![2, 2, 3],
        ),
    ];
    for (g, dists, ps) in &cases {
        let size: usize = ps.iter().product();
        let total: usize = g.iter().product();
        for order in [Order::C, Order::Fortran] {
            let mut seen = vec![0usize; total];
            for rank in 0..size {
                let t = TypeMap::darray(size, rank, g, dists, ps, order, &u32::type_map()).unwrap();
                assert_eq!((t.lb(), t.extent()), (0, 4 * total as isize));
                let got = picked(&t.commit(), total);
                let want: Vec<u32> = (0..total)
                    .filter(|&i| owning_rank(i, g, dists, ps, order) == rank)
                    .map(|i| i as u32)
                    .collect();
                assert_eq!(got, want, "{g:?} {dists:?} {ps:?} {order:?} rank {rank}");
                for i in got {
                    seen[i as usize] += 1;
                }
            }
            assert!(
                seen.iter().all(|&n| n == 1),
                "{g:?} {dists:?}: not a partition"
            );
        }
    }
}

#[test]
fn a_block_darray_is_the_subarray_of_the_local_block() {
    let g = [10, 7];
    let ps = [3, 2];
    for order in [Order::C, Order::Fortran] {
        for rank in 0..6 {
            let d = TypeMap::darray(
                6,
                rank,
                &g,
                &[Block(None), Block(None)],
                &ps,
                order,
                &f64::type_map(),
            )
            .unwrap();
            let (c0, c1) = (rank / 2, rank % 2);
            let (b0, b1) = (4, 4); // ceil(10 / 3), ceil(7 / 2)
            let starts = [c0 * b0, c1 * b1];
            let sub = [b0.min(g[0] - starts[0]), b1.min(g[1] - starts[1])];
            let s = TypeMap::subarray(&g, &sub, &starts, order, &f64::type_map()).unwrap();
            assert_eq!(d, s, "rank {rank} {order:?}");
        }
    }
}

#[test]
fn a_root_distributes_a_matrix_and_gathers_it_back_with_darray_types() {
    let (rows, cols) = (7, 8);
    let dists = [Cyclic(Some(2)), Block(None)];
    let results = rpar::run(6, move |world| {
        let (p, r) = (world.size(), world.rank());
        let part = |rank| {
            TypeMap::darray(
                p,
                rank,
                &[rows, cols],
                &dists,
                &[3, 2],
                Order::C,
                &f64::type_map(),
            )
            .map(|t| t.commit())
        };
        let mine = part(r)?;
        let mut local = vec![0.0f64; mine.size() / 8];
        if r == 0 {
            let matrix: Vec<f64> = (0..rows * cols).map(|i| i as f64).collect();
            for dest in 1..p {
                world.send(Typed::new(&matrix[..], &part(dest)?, 1), dest, 0)?;
            }
            // its own part, by packing
            let own = mine.pack_to_vec(&matrix, 1)?;
            for (x, b) in local.iter_mut().zip(own.chunks(8)) {
                *x = f64::from_ne_bytes(b.try_into().unwrap());
            }
        } else {
            world.recv_into(&mut local[..], 0, 0)?; // a darray of n f64 matches n f64
        }
        for x in &mut local {
            *x = -*x;
        }
        if r != 0 {
            world.send(&local[..], 0, 1)?;
            return Ok(None);
        }
        let mut back = vec![f64::NAN; rows * cols];
        let mut pos = 0;
        let own: Vec<u8> = local.iter().flat_map(|x| x.to_ne_bytes()).collect();
        mine.unpack(&own, &mut pos, &mut back, 1)?;
        for src in 1..p {
            world.recv_into(Typed::new(&mut back[..], &part(src)?, 1), src, 1)?;
        }
        Ok(Some(back))
    })
    .unwrap();
    let back = results[0].clone().unwrap();
    let want: Vec<f64> = (0..rows * cols).map(|i| -(i as f64)).collect();
    assert_eq!(back, want);
}

#[test]
fn bad_arguments_are_errors_that_say_what_was_expected() {
    let f = f64::type_map();
    let cases: Vec<(rpar::Result<TypeMap>, &str)> = vec![
        (
            TypeMap::darray(4, 0, &[8], &[Block(None)], &[2], Order::C, &f),
            "expected size = the product of psizes [2]",
        ),
        (
            TypeMap::darray(2, 2, &[8], &[Block(None)], &[2], Order::C, &f),
            "rank < size, got size 2 and rank 2",
        ),
        (
            TypeMap::darray(2, 0, &[8, 2], &[Block(None)], &[2], Order::C, &f),
            "of one length >= 1, got 2, 1 and 1",
        ),
        (
            TypeMap::darray(1, 0, &[], &[], &[], Order::C, &f),
            "of one length >= 1, got 0, 0 and 0",
        ),
        (
            TypeMap::darray(2, 0, &[0], &[Block(None)], &[2], Order::C, &f),
            "dimension 0: expected a size and a process count >= 1, got 0 and 2",
        ),
        (
            TypeMap::darray(
                2,
                1,
                &[8],
                &[Distribution::Undistributed],
                &[2],
                Order::C,
                &f,
            ),
            "expected 1 process for an undistributed dimension (MPI_DISTRIBUTE_NONE), got 2",
        ),
        (
            TypeMap::darray(2, 0, &[9], &[Block(Some(4))], &[2], Order::C, &f),
            "got blocks of 4 for 2 processes and 9 elements",
        ),
        (
            TypeMap::darray(2, 0, &[9], &[Block(Some(0))], &[2], Order::C, &f),
            "expected a block size >= 1, got 0",
        ),
        (
            TypeMap::darray(
                2,
                0,
                &[4, 9],
                &[Block(None), Cyclic(Some(0))],
                &[1, 2],
                Order::C,
                &f,
            ),
            "dimension 1: expected a cyclic block size >= 1, got 0",
        ),
        (
            TypeMap::darray(
                1,
                0,
                &[1 << 62, 4],
                &[Block(None), Block(None)],
                &[1, 1],
                Order::C,
                &f,
            ),
            "overflows isize",
        ),
    ];
    for (k, (got, want)) in cases.into_iter().enumerate() {
        match got {
            Err(e @ Error::InvalidArgument { call, .. }) => {
                assert_eq!(call, "MPI_Type_create_darray", "{k}");
                assert!(e.to_string().contains(want), "{k}: {e}");
            }
            other => panic!("case {k}: expected InvalidArgument, got {other:?}"),
        }
    }
}
