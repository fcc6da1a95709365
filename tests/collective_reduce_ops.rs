//! The typed operators through the reduction collectives: Min, Max, Prod, the logical and
//! bitwise operators and MinLoc/MaxLoc through every algorithm of every reduction (the sweep of
//! `collective/reduction.rs`, against a fold of the test's own), logical operators on `bool`, a
//! non-commutative user closure through the defaults; and the argument errors of the
//! reduction collectives; `reduce_local` (MPI_Reduce_local) against the same folds. (Floats:
//! `collective_reduce.rs`.)

mod collective;
mod common;

use collective::reduction::{sweep, Forms, ALLREDUCES};
use collective::{mix, COUNTS};
use rpar::{
    reduce_local, BAnd, BOr, BXor, BufferOp, Error, LAnd, LOr, LXor, Loc, Max, MaxLoc, Min, MinLoc,
    Prod, Reduce, ReduceScatter, Sum, UserOp,
};

/// The rank counts of the operator sweeps.
const RANKS: [usize; 6] = [1, 2, 3, 8, 13, 33];

/// Element `i` of rank `r` among `p`, by `i % 5`: arbitrary (what Min, Max, Prod and BXor
/// see), one bit set (BOr), one bit clear (BAnd), zero a third of the time and zero nearly
/// always (the logical operators): so that every operator's result depends on every rank.
fn pattern(p: usize, r: usize, i: usize) -> i64 {
    let z = mix(r, i, 9);
    match i % 5 {
        0 => z as i64,
        1 => 1 << (z % 63),
        2 => !(1 << (z % 63)),
        3 => (z % 3) as i64,
        _ => i64::from(z.is_multiple_of(2 * p as u64)),
    }
}

#[test]
fn min_max_prod_every_algorithm() {
    for p in RANKS {
        let input = move |r, i| pattern(p, r, i);
        sweep(p, &COUNTS, Forms::All, &Min, i64::min, input);
        sweep(p, &COUNTS, Forms::All, &Max, i64::max, input);
        sweep(p, &COUNTS, Forms::All, &Prod, i64::wrapping_mul, input);
    }
}

#[test]
fn logical_operators_every_algorithm() {
    for p in RANKS {
        let input = move |r, i| pattern(p, r, i);
        // on integers: nonzero is true, the result 0 or 1
        sweep(
            p,
            &COUNTS,
            Forms::All,
            &LAnd,
            |a, b| i64::from(a != 0 && b != 0),
            input,
        );
        sweep(
            p,
            &COUNTS,
            Forms::All,
            &LOr,
            |a, b| i64::from(a != 0 || b != 0),
            input,
        );
        let lxor = |a, b| i64::from((a != 0) != (b != 0));
        sweep(p, &COUNTS, Forms::All, &LXor, lxor, input);
        let truth = move |r, i| pattern(p, r, i) != 0;
        sweep(p, &COUNTS, Forms::All, &LAnd, |a, b| a && b, truth);
        sweep(p, &COUNTS, Forms::All, &LOr, |a, b| a || b, truth);
        sweep(p, &COUNTS, Forms::All, &LXor, |a, b| a != b, truth);
    }
}

#[test]
fn bitwise_operators_every_algorithm() {
    for p in RANKS {
        let input = move |r, i| pattern(p, r, i);
        sweep(p, &COUNTS, Forms::All, &BAnd, |a, b| a & b, input);
        sweep(p, &COUNTS, Forms::All, &BOr, |a, b| a | b, input);
        sweep(p, &COUNTS, Forms::All, &BXor, |a, b| a ^ b, input);
    }
}

/// MinLoc and MaxLoc through every algorithm, with many ties: MPI's MINLOC is the least
/// (value, index) pair in lexicographic order, MAXLOC the greatest value with the least index
/// among its ties (MPI 4.1, section 6.9.4); the indices are in no order of rank, so keeping
/// the lower rank's pair on a tie would fail.
#[test]
fn minloc_maxloc_every_algorithm() {
    let least = |a: Loc<f64>, b: Loc<f64>, key: fn(&Loc<f64>) -> (f64, usize)| {
        if key(&b) < key(&a) {
            b
        } else {
            a
        }
    };
    for p in RANKS {
        let input = |r: usize, i: usize| Loc {
            value: ((r * 3 + i) % 4) as f64 - 1.5,
            index: (mix(r, i, 10) % 64) as usize,
        };
        let min_loc = move |a, b| least(a, b, |x| (x.value, x.index));
        let max_loc = move |a, b| least(a, b, |x| (-x.value, x.index));
        sweep(p, &COUNTS, Forms::All, &MinLoc, min_loc, input);
        sweep(p, &COUNTS, Forms::All, &MaxLoc, max_loc, input);
    }
}

#[test]
fn logical_operators_on_bool() {
    let got = rpar::run(5, |world| {
        let odd = world.rank() % 2 == 1;
        Ok((
            world.allreduce(&odd, LAnd)?,
            world.allreduce(&odd, LOr)?,
            world.allreduce(&odd, LXor)?,
            world.scan(&odd, LXor)?,
        ))
    })
    .unwrap();
    let scans: Vec<bool> = got.iter().map(|g| g.3).collect();
    assert!(got.iter().all(|g| (g.0, g.1, g.2) == (false, true, false)));
    assert_eq!(scans, [false, true, true, false, false]);
}

/// A non-commutative closure through the Auto choices of every operation: string-like
/// concatenation of decimal digits, encoded as (digits, 10^length).
#[test]
fn concatenation_keeps_rank_order_with_the_defaults() {
    let concat =
        UserOp::non_commutative(|a: [u64; 2], b: [u64; 2]| [a[0] * b[1] + b[0], a[1] * b[1]]);
    let got = rpar::run(6, |world| {
        let d = [world.rank() as u64 + 1, 10];
        Ok((
            world.allreduce(&d, concat)?,
            world.reduce(&d, concat, 4)?,
            world.scan(&d, concat)?,
            world.exscan(&d, concat)?,
            world.reduce_scatter(&[d; 6][..], concat)?,
        ))
    })
    .unwrap();
    for (r, (all, root, scan, exscan, block)) in got.into_iter().enumerate() {
        assert_eq!(all, [123456, 1_000_000]);
        assert_eq!(root, (r == 4).then_some([123456, 1_000_000]));
        let prefix = |k: usize| (1..=k as u64).fold(0, |a, d| a * 10 + d);
        assert_eq!(scan[0], prefix(r + 1));
        assert_eq!(exscan.map(|e| e[0]), (r > 0).then(|| prefix(r)));
        assert_eq!(block, vec![[123456, 1_000_000]]);
    }
}

fn failure(err: Error) -> Error {
    match err {
        Error::RankFailed { source, .. } => *source,
        other => other,
    }
}

#[test]
fn root_out_of_range_is_an_error() {
    let err = rpar::run(3, |world| world.reduce(&1u8, Sum, 3)).unwrap_err();
    assert_eq!(failure(err), Error::RankOutOfRange { rank: 3, size: 3 });
}

#[test]
fn reduce_scatter_counts_must_fit() {
    let err = rpar::run(2, |world| {
        world.reduce_scatter((&[1u8, 2, 3][..], rpar::Counts(&[1, 1])), Sum)
    })
    .unwrap_err();
    let msg = failure(err).to_string();
    assert!(
        msg.contains("counts add up to 2 elements but the input has 3"),
        "{msg}"
    );
    let err = rpar::run(2, |world| {
        world.reduce_scatter((&[1u8][..], rpar::Counts(&[1])), Sum)
    })
    .unwrap_err();
    let msg = failure(err).to_string();
    assert!(
        msg.contains("counts has 1 entries but the communicator has 2 ranks"),
        "{msg}"
    );
    let err = rpar::run(2, |world| {
        world
            .using(ReduceScatter::Pairwise)
            .reduce_scatter(&[1u8, 2, 3][..], Sum)
    })
    .unwrap_err();
    let msg = failure(err).to_string();
    assert!(
        msg.contains("3 elements, which is not a multiple of the 2 ranks"),
        "{msg}"
    );
}

/// Ranks that pass vectors of different lengths: the collective-call check reports them, on
/// every algorithm, before any algorithm can hang or truncate on them.
#[test]
fn mismatched_lengths_are_reported_not_hung() {
    for algorithm in ALLREDUCES {
        let err = rpar::run(4, |world| {
            let mine = vec![1u16; if world.rank() == 3 { 2 } else { 5 }];
            world.using(algorithm).allreduce(&mine[..], Sum)
        })
        .unwrap_err();
        let Error::CollectiveMismatch { calls, .. } = &err else {
            panic!("{algorithm:?}: expected a collective mismatch, got {err}");
        };
        let text = format!("{calls:?}");
        assert!(
            text.contains("(3, \"allreduce(op Sum, 4 bytes) as collective call #0\")")
                && text.contains("allreduce(op Sum, 10 bytes)"),
            "{algorithm:?}: {text}"
        );
    }
}

/// Reductions on sub-communicators use the sub-communicator's ranks and do not mix with the
/// parent's traffic.
#[test]
fn reductions_on_split_communicators() {
    let got = rpar::run(7, |world| {
        let r = world.rank();
        let half = world.split(Some((r % 2) as u32), -(r as i32))?.unwrap();
        let concat =
            UserOp::non_commutative(|a: [u64; 2], b: [u64; 2]| [a[0] * b[1] + b[0], a[1] * b[1]]);
        let digit = [r as u64 + 1, 10];
        let at_root = half.using(Reduce::Rabenseifner).reduce(&digit, concat, 0)?;
        Ok((
            half.allreduce(&digit, concat)?,
            at_root,
            world.allreduce(&(r as u32), Sum)?,
        ))
    })
    .unwrap();
    // Keys are -rank, so the sub-communicators order their ranks high to low.
    for (r, (all, root, world_sum)) in got.into_iter().enumerate() {
        let want = if r % 2 == 0 {
            [7531, 10_000]
        } else {
            [642, 1000]
        };
        assert_eq!(all, want);
        assert_eq!(root, (r == 6 || r == 5).then_some(want));
        assert_eq!(world_sum, 21);
    }
}

#[test]
fn reduce_local_combines_input_on_the_left() {
    let input: Vec<i64> = (0..40).map(|i| pattern(3, 1, i)).collect();
    let start: Vec<i64> = (0..40).map(|i| pattern(3, 2, i)).collect();
    let fold = |f: fn(i64, i64) -> i64| -> Vec<i64> {
        input.iter().zip(&start).map(|(&a, &b)| f(a, b)).collect()
    };
    let mut inout = start.clone();
    reduce_local(&input, &mut inout, BXor).unwrap();
    assert_eq!(inout, fold(|a, b| a ^ b));
    let mut inout = start.clone();
    reduce_local(&input, &mut inout, Prod).unwrap();
    assert_eq!(inout, fold(i64::wrapping_mul));
    // non-commutative: input ∘ inout, not inout ∘ input
    let mut inout = start.clone();
    reduce_local(
        &input,
        &mut inout,
        UserOp::non_commutative(|a: i64, b| a.wrapping_sub(b)),
    )
    .unwrap();
    assert_eq!(inout, fold(i64::wrapping_sub));
    // pairs: the lower index wins a tie
    let loc = |value: f64, index: usize| Loc { value, index };
    let mut pairs = [loc(2.0, 5), loc(1.0, 9)];
    reduce_local(&[loc(2.0, 3), loc(4.0, 0)], &mut pairs, MinLoc).unwrap();
    assert_eq!(pairs, [loc(2.0, 3), loc(1.0, 9)]);
}

#[test]
fn reduce_local_refuses_buffers_that_do_not_fit() {
    let mut inout = [1u32, 2, 3];
    let err = reduce_local(&[1, 2], &mut inout, Sum).unwrap_err();
    assert!(err.to_string().contains("got 2 and 3"), "{err}");
    // whole blocks of a buffer operator: 3 elements are not blocks of 2
    let pairs = BufferOp::commutative(2, |a: &[u32], b: &mut [u32]| {
        b.iter_mut().zip(a).for_each(|(y, x)| *y += x)
    });
    let err = reduce_local(&[1, 2, 3], &mut inout, pairs).unwrap_err();
    assert!(err.to_string().contains("blocks of 2 elements"), "{err}");
    assert_eq!(inout, [1, 2, 3], "left as it was");
    let mut four = [1u32, 2, 3, 4];
    reduce_local(&[10, 20, 30, 40], &mut four, pairs).unwrap();
    assert_eq!(four, [11, 22, 33, 44]);
}
