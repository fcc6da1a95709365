//! The typed operators through the collectives (floats, logical, bitwise, MinLoc/MaxLoc, arrays,
//! user closures) and the argument errors of the reduction collectives.

use rpar::{
    Allreduce, BAnd, BOr, BXor, Error, LAnd, LOr, LXor, Loc, Max, MaxLoc, Min, MinLoc, Prod,
    Reduce, ReduceScatter, Scan, Sum, UserOp,
};

const RANKS: [usize; 6] = [1, 2, 3, 5, 8, 13];
const ALLREDUCES: [Allreduce; 4] = [
    Allreduce::RecursiveDoubling,
    Allreduce::Ring,
    Allreduce::Rabenseifner,
    Allreduce::ReduceBcast,
];

/// Float sums of dyadic values are exact, so every bracketing gives the rank-ordered result.
#[test]
fn float_sums_are_exact_for_dyadic_values() {
    for p in RANKS {
        let got = rpar::run(p, |world| {
            let r = world.rank() as f64;
            let mine: Vec<f64> = (0..9).map(|i| (r * 9.0 + i as f64) / 1024.0).collect();
            let mut all = Vec::new();
            for algorithm in ALLREDUCES {
                all.push(world.allreduce_with(&mine[..], Sum, algorithm)?);
            }
            Ok(all)
        })
        .unwrap();
        let want: Vec<f64> = (0..9)
            .map(|i| (0..p).map(|r| (r * 9 + i) as f64 / 1024.0).sum())
            .collect();
        for rank in got {
            for v in rank {
                assert_eq!(v, want, "p = {p}");
            }
        }
    }
}

/// Arbitrary floats: close to the rank-ordered sum, and bitwise the same on every rank.
#[test]
fn float_allreduce_agrees_across_ranks() {
    for p in RANKS {
        for algorithm in ALLREDUCES {
            let got = rpar::run(p, |world| {
                let r = world.rank() as f32;
                let mine: Vec<f32> = (0..50)
                    .map(|i| (r + 1.0).sqrt() * (i as f32 + 0.1))
                    .collect();
                world.allreduce_with(&mine[..], Sum, algorithm)
            })
            .unwrap();
            for (i, &sum) in got[0].iter().enumerate() {
                let want: f32 = (0..p)
                    .map(|r| ((r + 1) as f32).sqrt() * (i as f32 + 0.1))
                    .sum();
                assert!(
                    (sum - want).abs() <= 1e-5 * want.abs(),
                    "p = {p} {algorithm:?}"
                );
            }
            assert!(got.iter().all(|v| v
                .iter()
                .map(|x| x.to_bits())
                .eq(got[0].iter().map(|x| x.to_bits()))));
        }
    }
}

#[test]
fn integer_operators_match_a_fold() {
    for p in RANKS {
        let got = rpar::run(p, |world| {
            let r = world.rank() as i32;
            let x = [r * 7 - 10, r % 3, 1 << (r % 5), r + 2];
            Ok((
                world.allreduce(&x, Min)?,
                world.allreduce(&x, Max)?,
                world.allreduce(&x, Prod)?,
                world.allreduce(&x, BAnd)?,
                world.allreduce(&x, BOr)?,
                world.allreduce(&x, BXor)?,
                world.allreduce(&x, LAnd)?,
                world.allreduce(&x, LOr)?,
                world.allreduce(&x, LXor)?,
            ))
        })
        .unwrap();
        let xs: Vec<[i32; 4]> = (0..p as i32)
            .map(|r| [r * 7 - 10, r % 3, 1 << (r % 5), r + 2])
            .collect();
        let fold = |f: &dyn Fn(i32, i32) -> i32| -> [i32; 4] {
            std::array::from_fn(|i| xs.iter().map(|x| x[i]).reduce(f).unwrap())
        };
        let b = |v: bool| v as i32;
        let want = (
            fold(&|a, b| a.min(b)),
            fold(&|a, b| a.max(b)),
            fold(&|a, b| a.wrapping_mul(b)),
            fold(&|a, b| a & b),
            fold(&|a, b| a | b),
            fold(&|a, b| a ^ b),
            fold(&|a, c| b(a != 0 && c != 0)),
            fold(&|a, c| b(a != 0 || c != 0)),
            fold(&|a, c| b((a != 0) != (c != 0))),
        );
        assert!(got.iter().all(|g| *g == want), "p = {p}");
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

/// MinLoc and MaxLoc with many ties: the lowest index wins, for every algorithm.
#[test]
fn minloc_maxloc_break_ties_by_lowest_index() {
    for p in RANKS {
        for algorithm in [Reduce::Linear, Reduce::Binomial, Reduce::Rabenseifner] {
            let got = rpar::run(p, |world| {
                let r = world.rank();
                let mine: Vec<Loc<f64, usize>> = (0..20)
                    .map(|i| Loc {
                        value: ((r * 3 + i) % 4) as f64,
                        index: r,
                    })
                    .collect();
                Ok((
                    world.reduce_with(&mine[..], MinLoc, p - 1, algorithm)?,
                    world.reduce_with(&mine[..], MaxLoc, p - 1, algorithm)?,
                ))
            })
            .unwrap();
            let (min, max) = got[p - 1].clone();
            let (min, max) = (min.unwrap(), max.unwrap());
            for i in 0..20 {
                let values: Vec<usize> = (0..p).map(|r| (r * 3 + i) % 4).collect();
                let lo = *values.iter().min().unwrap();
                let hi = *values.iter().max().unwrap();
                let first = |v| values.iter().position(|&x| x == v).unwrap();
                assert_eq!(
                    min[i],
                    Loc {
                        value: lo as f64,
                        index: first(lo)
                    },
                    "p = {p}"
                );
                assert_eq!(
                    max[i],
                    Loc {
                        value: hi as f64,
                        index: first(hi)
                    },
                    "p = {p}"
                );
            }
        }
    }
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
            world.reduce_scatter_block(&[d; 6][..], concat)?,
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

#[test]
fn in_place_forms() {
    let got = rpar::run(4, |world| {
        let r = world.rank() as u32;
        let mut a = [r, 1];
        world.allreduce_in_place_with(&mut a[..], Sum, Allreduce::Ring)?;
        let mut b = vec![r; 3];
        world.reduce_in_place_with(&mut b, Max, 2, Reduce::Rabenseifner)?;
        let mut c = r + 1;
        world.scan_in_place_with(&mut c, Prod, Scan::RecursiveDoubling)?;
        let mut d = r + 1;
        world.exscan_in_place_with(&mut d, Sum, Scan::Linear)?;
        Ok((a, b, c, d))
    })
    .unwrap();
    assert!(got.iter().all(|g| g.0 == [6, 4]));
    assert_eq!(got[2].1, vec![3; 3]);
    assert_eq!(got[1].1, vec![1; 3]); // non-roots' buffers are only read
    assert_eq!(got.iter().map(|g| g.2).collect::<Vec<_>>(), [1, 2, 6, 24]);
    assert_eq!(got.iter().map(|g| g.3).collect::<Vec<_>>(), [1, 1, 3, 6]);
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
        world.reduce_scatter(&[1u8, 2, 3][..], &[1, 1], Sum)
    })
    .unwrap_err();
    let msg = failure(err).to_string();
    assert!(
        msg.contains("counts add up to 2 elements but the input has 3"),
        "{msg}"
    );
    let err = rpar::run(2, |world| world.reduce_scatter(&[1u8][..], &[1], Sum)).unwrap_err();
    let msg = failure(err).to_string();
    assert!(
        msg.contains("counts has 1 entries but the communicator has 2 ranks"),
        "{msg}"
    );
    let err = rpar::run(2, |world| {
        world.reduce_scatter_block_with(&[1u8, 2, 3][..], Sum, ReduceScatter::Pairwise)
    })
    .unwrap_err();
    let msg = failure(err).to_string();
    assert!(
        msg.contains("3 elements, which is not a multiple of the 2 ranks"),
        "{msg}"
    );
}

#[test]
fn mismatched_lengths_are_reported_not_hung() {
    for algorithm in ALLREDUCES {
        let err = rpar::run(4, |world| {
            let mine = vec![1u16; if world.rank() == 3 { 2 } else { 5 }];
            world.allreduce_with(&mine[..], Sum, algorithm)
        })
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("elements")
                || msg.contains("truncated")
                || msg.contains("collective mismatch"),
            "{algorithm:?}: {msg}"
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
        Ok((
            half.allreduce(&digit, concat)?,
            half.reduce_with(&digit, concat, 0, Reduce::Rabenseifner)?,
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
