//! `BufferOp`: user operators over whole buffers (MPI_Op_create with an MPI_User_function).
//!
//! - a matrix product (associative, not commutative) on `n x n` matrices of `f64` whose `n` is
//!   chosen at run time, through reduce, allreduce, scan, exscan and reduce_scatter with every
//!   algorithm, for p = 1..=6, against the sequential product in rank order (integer entries,
//!   so every product is exact);
//! - a commutative product of Gaussian integers stored as blocks of two `i64`, through every
//!   algorithm including the rings and Rabenseifner's halving, which split the buffer: a split
//!   inside a block would mix real and imaginary parts and give another answer;
//! - the errors: a buffer that is not a whole number of blocks, reduce_scatter counts that
//!   are not, and a ring with a non-commutative operator.

mod common;

use common::mix;
use common::reduction::{ALLREDUCES, REDUCES};
use rpar::{Allreduce, BufferOp, Counts, Error, ReduceScatter, Scan};

const SCANS: [Scan; 3] = [Scan::Auto, Scan::Linear, Scan::RecursiveDoubling];
const REDUCE_SCATTERS: [ReduceScatter; 4] = [
    ReduceScatter::Auto,
    ReduceScatter::RecursiveHalving,
    ReduceScatter::Pairwise,
    ReduceScatter::Ring,
];

/// `a * b` for `n x n` row-major matrices.
fn matmul(n: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
    c
}

/// The product operator on blocks of one `n x n` matrix: `inout = lower * inout`.
fn product_op(n: usize) -> BufferOp<impl Fn(&[f64], &mut [f64]) + Copy> {
    BufferOp::non_commutative(n * n, move |lower: &[f64], inout: &mut [f64]| {
        assert_eq!(lower.len() % (n * n), 0, "whole matrices only");
        for (a, c) in lower.chunks(n * n).zip(inout.chunks_mut(n * n)) {
            let prod = matmul(n, a, c);
            c.copy_from_slice(&prod);
        }
    })
}

/// Rank `r`'s `k` matrices of `n x n`, entries in -1..=1 (so products stay exact).
fn matrices(r: usize, n: usize, k: usize) -> Vec<f64> {
    (0..k * n * n)
        .map(|i| (mix(r, i, 23 + n as u64) % 3) as f64 - 1.0)
        .collect()
}

/// The product in rank order of ranks `0..upto`'s matrices, matrix by matrix.
fn ordered_product(n: usize, k: usize, upto: usize) -> Vec<f64> {
    let mut acc = matrices(0, n, k);
    for r in 1..upto {
        let x = matrices(r, n, k);
        for m in 0..k {
            let block = m * n * n..(m + 1) * n * n;
            let prod = matmul(n, &acc[block.clone()], &x[block.clone()]);
            acc[block].copy_from_slice(&prod);
        }
    }
    acc
}

#[test]
fn matrix_product_in_rank_order_every_reduction_and_algorithm() {
    for p in 1..=6 {
        for (n, k) in [(1, 3), (2, 1), (3, 2), (2, p)] {
            let op = product_op(n);
            let results = rpar::run(p, move |world| {
                let r = world.rank();
                let mine = matrices(r, n, k);
                let total = ordered_product(n, k, p);
                let what = |f: &str| format!("{f} p={p} n={n} k={k} rank={r}");
                for algorithm in REDUCES {
                    let got = world.using(algorithm).reduce(&mine[..], op, p - 1)?;
                    if r == p - 1 {
                        assert_eq!(got.as_deref(), Some(&total[..]), "{}", what("reduce"));
                    }
                }
                for algorithm in ALLREDUCES {
                    if algorithm == Allreduce::Ring {
                        continue; // refuses a non-commutative operator (below)
                    }
                    let got = world.using(algorithm).allreduce(&mine[..], op)?;
                    assert_eq!(got, total, "{} {algorithm:?}", what("allreduce"));
                    let mut buf = mine.clone();
                    world
                        .using(algorithm)
                        .allreduce(rpar::InPlace(&mut buf[..]), op)?;
                    assert_eq!(buf, total, "{} {algorithm:?}", what("allreduce in place"));
                }
                for algorithm in SCANS {
                    let got = world.using(algorithm).scan(&mine[..], op)?;
                    assert_eq!(got, ordered_product(n, k, r + 1), "{}", what("scan"));
                    let ex = world.using(algorithm).exscan(&mine[..], op)?;
                    let want = (r > 0).then(|| ordered_product(n, k, r));
                    assert_eq!(ex, want, "{}", what("exscan"));
                }
                // reduce_scatter: rank i gets matrices of k blocks dealt in turn
                if k % p == 0 {
                    for algorithm in REDUCE_SCATTERS {
                        if algorithm == ReduceScatter::Ring {
                            continue;
                        }
                        let got = world.using(algorithm).reduce_scatter(&mine[..], op)?;
                        let each = k / p * n * n;
                        assert_eq!(
                            got,
                            total[r * each..(r + 1) * each],
                            "{} {algorithm:?}",
                            what("reduce_scatter_block")
                        );
                    }
                }
                // uneven blocks: rank i gets i % 2 matrices... of the k + p ones
                let counts: Vec<usize> = (0..p).map(|i| (i % 2) * n * n).collect();
                let sent = matrices(r, n, counts.iter().sum::<usize>() / (n * n));
                let got = world.reduce_scatter((&sent[..], Counts(&counts)), op)?;
                let all = ordered_product(n, counts.iter().sum::<usize>() / (n * n), p);
                let start: usize = counts[..r].iter().sum();
                assert_eq!(
                    got,
                    all[start..start + counts[r]],
                    "{}",
                    what("reduce_scatter")
                );
                Ok(())
            });
            results.unwrap_or_else(|e| panic!("p = {p}, n = {n}, k = {k}: {e}"));
        }
    }
}

/// Gaussian integers as blocks `[re, im]` of `i64`: their product is commutative.
fn gaussian_op() -> BufferOp<impl Fn(&[i64], &mut [i64]) + Copy> {
    BufferOp::commutative(2, |a: &[i64], c: &mut [i64]| {
        assert_eq!(a.len() % 2, 0, "whole blocks only");
        for (a, c) in a.chunks(2).zip(c.chunks_mut(2)) {
            let re = a[0]
                .wrapping_mul(c[0])
                .wrapping_sub(a[1].wrapping_mul(c[1]));
            let im = a[0]
                .wrapping_mul(c[1])
                .wrapping_add(a[1].wrapping_mul(c[0]));
            c.copy_from_slice(&[re, im]);
        }
    })
}

#[test]
fn blocks_are_never_split_by_the_algorithms_that_split_buffers() {
    for p in 1..=6 {
        // 7 and 13 blocks: the halving and ring slots fall inside blocks if counted in elements
        for blocks in [1, 7, 13] {
            let op = gaussian_op();
            let input = move |r: usize| -> Vec<i64> {
                (0..2 * blocks)
                    .map(|i| (mix(r, i, 5) % 5) as i64 - 2)
                    .collect()
            };
            let mut want = input(0);
            for r in 1..p {
                rpar::ReduceOp::<i64>::reduce_left(&op, &input(r), &mut want);
            }
            rpar::run(p, move |world| {
                let mine = input(world.rank());
                for algorithm in ALLREDUCES {
                    let got = world.using(algorithm).allreduce(&mine[..], op)?;
                    assert_eq!(got, want, "allreduce {algorithm:?} p={p} blocks={blocks}");
                }
                for algorithm in REDUCES {
                    let got = world.using(algorithm).reduce(&mine[..], op, 0)?;
                    if world.rank() == 0 {
                        assert_eq!(got.unwrap(), want, "reduce {algorithm:?} p={p}");
                    }
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("p = {p}, blocks = {blocks}: {e}"));
        }
    }
}

#[test]
fn a_buffer_of_partial_blocks_is_an_error() {
    let op = product_op(2); // blocks of 4
    let errors = rpar::run(3, move |world| {
        let five = [1.0f64; 5];
        let e1 = world.allreduce(&five[..], op).unwrap_err();
        let e2 = world.scan(&five[..], op).unwrap_err();
        let e3 = world.reduce(&five[..], op, 0).unwrap_err();
        // counts of 4, 4 and 2 elements: the last is half a matrix
        let ten = [1.0f64; 10];
        let e4 = world
            .reduce_scatter((&ten[..], Counts(&[4, 4, 2])), op)
            .unwrap_err();
        Ok([e1, e2, e3, e4].map(|e| e.to_string()).to_vec())
    })
    .unwrap();
    for e in &errors[0][..3] {
        assert!(
            e.contains("blocks of 4 elements, got 5 elements (1 blocks and 1 over)"),
            "{e}"
        );
    }
    assert!(errors[0][0].contains("allreduce"), "{}", errors[0][0]);
    assert!(
        errors[0][3].contains("the block of rank 2") && errors[0][3].contains("got 2 elements"),
        "{}",
        errors[0][3]
    );
}

#[test]
fn a_ring_refuses_a_non_commutative_buffer_operator() {
    let op = product_op(2);
    let r = rpar::run(2, move |world| {
        let m = [1.0f64, 0.0, 0.0, 1.0];
        world.using(Allreduce::Ring).allreduce(&m[..], op).map(drop)
    });
    let err = r.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::InvalidArgument { .. } | Error::RankFailed { .. }
        ),
        "{err}"
    );
}
