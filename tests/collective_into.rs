//! The out-of-place reductions, MPI_Allreduce(sendbuf, recvbuf, …) and MPI_Reduce(sendbuf,
//! recvbuf, …, root): `allreduce_into(_with)` and `reduce_into(_with)`, every algorithm against
//! a sequential reference, for every rank count 1..=9, 16 and 33 and 0, 1, 7 and 1000
//! elements; roots 0, the middle rank and the last. Each call must leave `send` as it was, give
//! `recv` the reduction in rank order (at the root only, for reduce) and leave the other ranks'
//! `recv` untouched, whatever its length (MPI ignores it). Two operators: wrapping `Sum` on
//! `u64` (commutative, predefined) and the composition of affine maps `x -> a x + b` modulo
//! 2^64 (associative, not commutative, so any reordering shows), on pairs and on elements of 20
//! pairs (1000 of them are 320 000 bytes: past the shared-memory algorithms' switch to
//! combining in blocks, for reduce as for allreduce). Last, the errors: a `recv` of the wrong
//! length.

mod common;

use common::reduction::{check, compose, refused, Reference, ALLREDUCES, REDUCES};
use common::{mix, roots};
use rpar::{Allreduce, Comm, Datatype, Error, ReduceOp, Sum, UserOp};
use std::fmt::Debug;

const RANKS: [usize; 11] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 33];
const COUNTS: [usize; 4] = [0, 1, 7, 1000];

/// 20 affine maps side by side, composed pairwise.
fn compose_wide(f: [[u64; 2]; 20], g: [[u64; 2]; 20]) -> [[u64; 2]; 20] {
    std::array::from_fn(|k| compose(f[k], g[k]))
}

/// Every algorithm of both forms on one rank, checked; `sentinel` fills the receive buffers
/// beforehand, so that what a call must not write shows.
fn every_algorithm<T, O>(
    world: &Comm,
    refs: &[Reference<T>],
    op: &O,
    sentinel: T,
) -> rpar::Result<()>
where
    T: Datatype + PartialEq + Debug,
    O: ReduceOp<T>,
{
    let (p, r) = (world.size(), world.rank());
    let roots = roots(p);
    for re in refs {
        let send = re.inputs[r].clone();
        let n = send.len();
        for algorithm in ALLREDUCES {
            let what = || format!("allreduce_into {algorithm:?} p={p} n={n} rank={r}");
            let mut recv = vec![sentinel; n];
            let got = world
                .using(algorithm)
                .allreduce((&send[..], &mut recv[..]), op);
            if algorithm == Allreduce::Ring && !op.is_commutative() {
                refused(got, what)?; // it would reorder the operands
                continue;
            }
            got?;
            check(&recv, re.total(), what)?;
            check(&send, &re.inputs[r], || format!("{}: send changed", what()))?;
        }
        for algorithm in REDUCES {
            for &root in &roots {
                let what = || format!("reduce_into {algorithm:?} p={p} n={n} root={root} rank={r}");
                // outside the root a receive buffer of any length is ignored: as long as the
                // send buffer for root 0, empty for the others
                let len = if r == root || root == 0 { n } else { 0 };
                let mut recv = vec![sentinel; len];
                world
                    .using(algorithm)
                    .reduce((&send[..], &mut recv[..]), op, root)?;
                if r == root {
                    check(&recv, re.total(), what)?;
                } else {
                    check(&recv, &vec![sentinel; len], || {
                        format!("{}: recv written", what())
                    })?;
                }
                check(&send, &re.inputs[r], || format!("{}: send changed", what()))?;
            }
        }
    }
    Ok(())
}

/// Both forms with every algorithm for `p` ranks and every count of [`COUNTS`].
fn sweep(p: usize) {
    let sums: Vec<Reference<u64>> = COUNTS
        .iter()
        .map(|&n| Reference::new(p, n, &Sum, |r, i| mix(r, i, 1)))
        .collect();
    let affine = UserOp::non_commutative(compose);
    let pairs: Vec<Reference<[u64; 2]>> = COUNTS
        .iter()
        .map(|&n| Reference::new(p, n, &affine, |r, i| [mix(r, i, 2) | 1, mix(r, i, 3)]))
        .collect();
    let wide_op = UserOp::non_commutative(compose_wide);
    let wide = [Reference::new(p, 1000, &wide_op, |r, i| {
        std::array::from_fn(|k| [mix(r, 20 * i + k, 4) | 1, mix(r, 20 * i + k, 5)])
    })];
    rpar::run(p, |world| {
        every_algorithm(&world, &sums, &Sum, u64::MAX)?;
        every_algorithm(&world, &pairs, &affine, [7, 7])?;
        every_algorithm(&world, &wide, &wide_op, [[7, 7]; 20])
    })
    .unwrap_or_else(|e| panic!("p = {p}: {e}"));
}

#[test]
fn every_algorithm_against_a_sequential_reference() {
    for p in RANKS {
        sweep(p);
    }
}

#[test]
fn the_plain_forms_agree_with_the_into_forms() -> rpar::Result<()> {
    // single values and Vecs as buffers, and Auto through allreduce_into / reduce_into
    let got = rpar::run(5, |world| {
        let r = world.rank() as u64;
        let mut total = 0u64;
        world.allreduce((&r, &mut total), Sum)?;
        assert_eq!(total, world.allreduce(&r, Sum)?);
        let send = vec![r; 3];
        let mut at_root = vec![0u64; 3];
        world.reduce((&send, &mut at_root), Sum, 2)?;
        let plain = world.reduce(&send, Sum, 2)?;
        Ok((total, (world.rank() == 2).then_some(at_root), plain))
    })?;
    for (r, (total, at_root, plain)) in got.into_iter().enumerate() {
        assert_eq!(total, 10);
        assert_eq!(at_root, plain, "rank {r}");
        assert_eq!(plain.is_some(), r == 2);
    }
    Ok(())
}

#[test]
fn a_receive_buffer_of_the_wrong_length_is_an_error() -> rpar::Result<()> {
    let run = rpar::run(3, |world| {
        let send = [1u32, 2];
        // every rank checks its own: the same error everywhere, before anything moves
        let mut short = [0u32; 1];
        for algorithm in ALLREDUCES {
            match world
                .using(algorithm)
                .allreduce((&send[..], &mut short[..]), Sum)
            {
                Err(Error::InvalidArgument { call, message }) => {
                    assert_eq!(call, "allreduce");
                    assert!(
                        message.contains("has 1 elements, 2 were expected"),
                        "{message}"
                    );
                }
                other => panic!("{algorithm:?}: {other:?}"),
            }
        }
        assert_eq!(short, [0]);
        // the collectives after it still match
        let mut sums = [0u32; 2];
        world.allreduce((&send[..], &mut sums[..]), Sum)?;
        assert_eq!(sums, [3, 6]);
        // at the root only (elsewhere it is ignored); the last call of the run, as the other
        // ranks have contributed to a reduction the root refused
        let mut long = [0u32; 3];
        let got = world.reduce((&send[..], &mut long[..]), Sum, 1);
        if world.rank() == 1 {
            match got {
                Err(Error::InvalidArgument { call, message }) => {
                    assert_eq!(call, "reduce");
                    assert!(
                        message.contains("has 3 elements, 2 were expected"),
                        "{message}"
                    );
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(long, [0; 3]);
        } else {
            got?;
        }
        Ok(())
    });
    // the root refused its reduce, the others made theirs: the ranks' collective calls no
    // longer match, which the run reports once it is over
    match run {
        Err(Error::CollectiveMismatch { calls, .. }) => {
            assert!(calls[0].1.starts_with("reduce"), "{calls:?}");
        }
        other => panic!("{other:?}"),
    }
    Ok(())
}
