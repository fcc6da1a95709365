//! Groups and communicators in-process: the shared checks (`common/groups_checks.rs`, also run
//! on the MPI transport by `tests/mpi.rs`) on every p in 1..=6, on the world and on a split of
//! it; every group operation against fixed sequential references and, by property tests,
//! against a simple model of MPI's rules; and what only holds in-process (one shared-memory
//! communicator of every rank).

#[path = "common/groups_checks.rs"]
mod groups_checks;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rpar::{Comm, Comparison, Error, Group, Result, SplitType};
use std::collections::HashSet;

#[test]
fn shared_checks_on_every_size() {
    for p in 1..=6 {
        rpar::run(p, |world| groups_checks::all(&world)).unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn shared_checks_on_a_split() {
    for p in [3, 5, 6] {
        rpar::run(p, |world| {
            // reversed halves: neither the world's ranks nor its order
            let half = world
                .split(Some((world.rank() % 2) as u32), -(world.rank() as i32))?
                .expect("a color");
            groups_checks::on(&half)
        })
        .unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn in_process_every_rank_shares_memory() {
    rpar::run(4, |world| {
        let node = world.split_type(Some(SplitType::Shared), 0)?.unwrap();
        assert_eq!(Comparison::of(&node, &world), Comparison::Congruent);
        Ok(())
    })
    .unwrap();
}

/// The world ranks of `g`'s members (`world` is the world communicator).
fn world_ranks(g: &Group, world: &Comm) -> Vec<usize> {
    groups_checks::members(g, world).expect("members of the world")
}

/// Fixed cases of each operation, worked out by hand from MPI's rules.
#[test]
fn set_operations_against_fixed_references() {
    rpar::run(6, |world| {
        let w = world.group();
        let g = |r: &[usize]| w.incl(r).unwrap();
        let a = g(&[4, 1, 3]);
        let b = g(&[0, 3, 5, 1]);
        // union: a's order, then b's members not in a, in b's order
        assert_eq!(world_ranks(&a.union(&b), &world), [4, 1, 3, 0, 5]);
        assert_eq!(world_ranks(&b.union(&a), &world), [0, 3, 5, 1, 4]);
        // intersection and difference: the first group's order
        assert_eq!(world_ranks(&a.intersection(&b), &world), [1, 3]);
        assert_eq!(world_ranks(&b.intersection(&a), &world), [3, 1]);
        assert_eq!(world_ranks(&a.difference(&b), &world), [4]);
        assert_eq!(world_ranks(&b.difference(&a), &world), [0, 5]);
        // with the empty group
        let e = Group::empty();
        assert_eq!(a.union(&e).compare(&a), Comparison::Ident);
        assert_eq!(e.union(&a).compare(&a), Comparison::Ident);
        assert_eq!(a.intersection(&e).compare(&e), Comparison::Ident);
        assert_eq!(a.difference(&e).compare(&a), Comparison::Ident);
        assert_eq!(e.difference(&a).size(), 0);
        // the rank is kept through the operations (and found through the empty group)
        let mine = world.rank();
        assert_eq!(e.union(&w).rank(), Some(mine));
        // incl / excl of a group that is not the world's
        assert_eq!(world_ranks(&b.incl(&[3, 0])?, &world), [1, 0]);
        assert_eq!(world_ranks(&b.excl(&[3, 0])?, &world), [3, 5]);
        // triplets, several at once, in the order they name their ranks
        assert_eq!(
            world_ranks(&w.range_incl(&[(5, 3, -1), (0, 2, 2)])?, &world),
            [5, 4, 3, 0, 2]
        );
        assert_eq!(
            world_ranks(&w.range_excl(&[(5, 3, -1), (0, 2, 2)])?, &world),
            [1]
        );
        assert_eq!(world_ranks(&w.range_incl(&[(1, 5, 3)])?, &world), [1, 4]);
        assert_eq!(world_ranks(&w.range_incl(&[])?, &world), [] as [usize; 0]);
        // translate: None where the member is not in the other group
        assert_eq!(a.translate_ranks(&[0, 1, 2], &b)?, [None, Some(3), Some(1)]);
        // compare
        assert_eq!(g(&[1, 3]).compare(&g(&[1, 3])), Comparison::Ident);
        assert_eq!(g(&[1, 3]).compare(&g(&[3, 1])), Comparison::Similar);
        assert_eq!(g(&[1, 3]).compare(&g(&[1, 4])), Comparison::Unequal);
        assert_eq!(g(&[1, 3]).compare(&g(&[1, 3, 4])), Comparison::Unequal);
        Ok(())
    })
    .unwrap();
}

/// What MPI's rules give, on lists of world ranks.
mod model {
    use super::*;

    pub(super) fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
        let mut out = a.to_vec();
        out.extend(b.iter().filter(|x| !a.contains(x)));
        out
    }

    pub(super) fn intersection(a: &[usize], b: &[usize]) -> Vec<usize> {
        a.iter().copied().filter(|x| b.contains(x)).collect()
    }

    pub(super) fn difference(a: &[usize], b: &[usize]) -> Vec<usize> {
        a.iter().copied().filter(|x| !b.contains(x)).collect()
    }

    /// The error incl/excl should give first, as a short name, or the ranks.
    pub(super) fn check_ranks(n: usize, ranks: &[usize]) -> std::result::Result<(), &'static str> {
        for (i, r) in ranks.iter().enumerate() {
            if *r >= n {
                return Err("out of range");
            }
            if ranks[..i].contains(r) {
                return Err("duplicate");
            }
        }
        Ok(())
    }

    pub(super) fn incl(a: &[usize], ranks: &[usize]) -> Option<Vec<usize>> {
        check_ranks(a.len(), ranks).ok()?;
        Some(ranks.iter().map(|&r| a[r]).collect())
    }

    pub(super) fn excl(a: &[usize], ranks: &[usize]) -> Option<Vec<usize>> {
        check_ranks(a.len(), ranks).ok()?;
        Some(
            (0..a.len())
                .filter(|r| !ranks.contains(r))
                .map(|r| a[r])
                .collect(),
        )
    }

    /// The ranks a list of triplets names, stepping one at a time; `None` where MPI(CH)
    /// refuses the list.
    pub(super) fn expand(n: usize, ranges: &[(usize, usize, isize)]) -> Option<Vec<usize>> {
        let mut out: Vec<usize> = Vec::new();
        for &(first, last, stride) in ranges {
            if first >= n
                || stride == 0
                || (stride > 0 && first > last)
                || (stride < 0 && first < last)
            {
                return None;
            }
            let mut r = first as isize;
            while (stride > 0 && r <= last as isize) || (stride < 0 && r >= last as isize) {
                if r as usize >= n || out.contains(&(r as usize)) {
                    return None;
                }
                out.push(r as usize);
                r += stride;
            }
        }
        Some(out)
    }

    pub(super) fn compare(a: &[usize], b: &[usize]) -> Comparison {
        let set = |x: &[usize]| x.iter().copied().collect::<HashSet<_>>();
        if a == b {
            Comparison::Ident
        } else if a.len() == b.len() && set(a) == set(b) {
            Comparison::Similar
        } else {
            Comparison::Unequal
        }
    }
}

/// World size of the property tests: groups are orderings of subsets of its ranks.
const N: usize = 9;

fn a_group() -> impl Strategy<Value = Vec<usize>> {
    proptest::sample::subsequence((0..N).collect::<Vec<_>>(), 0..=N).prop_shuffle()
}

fn triplets() -> impl Strategy<Value = Vec<(usize, usize, isize)>> {
    prop::collection::vec((0..N + 2, 0..N + 2, -4isize..=4), 0..4)
}

/// Runs `property` on rank 0 of a world of `N` ranks (so that groups of any of its ranks can
/// be made) with proptest's runner.
fn on_rank_0<S: Strategy + Sync>(
    strategy: S,
    property: impl Fn(&Comm, S::Value) -> std::result::Result<(), TestCaseError> + Sync,
) where
    S::Value: std::fmt::Debug,
{
    rpar::run(N, |world| {
        if world.rank() != 0 {
            return Ok(());
        }
        let mut runner = TestRunner::new(Config::with_cases(256));
        runner
            .run(&strategy, |v| property(&world, v))
            .map_err(|e| Error::user(e.to_string()))
    })
    .unwrap();
}

fn incl_world(world: &Comm, members: &[usize]) -> Group {
    world.group().incl(members).expect("distinct world ranks")
}

fn kind(r: &Result<Group>) -> std::result::Result<(), &'static str> {
    match r {
        Ok(_) => Ok(()),
        Err(Error::RankOutOfRange { .. }) => Err("out of range"),
        Err(Error::DuplicateRank { .. }) => Err("duplicate"),
        Err(e) => panic!("unexpected error {e}"),
    }
}

#[test]
fn set_operations_follow_the_model() {
    on_rank_0((a_group(), a_group()), |world, (a, b)| {
        let (ga, gb) = (incl_world(world, &a), incl_world(world, &b));
        prop_assert_eq!(world_ranks(&ga.union(&gb), world), model::union(&a, &b));
        prop_assert_eq!(
            world_ranks(&ga.intersection(&gb), world),
            model::intersection(&a, &b)
        );
        prop_assert_eq!(
            world_ranks(&ga.difference(&gb), world),
            model::difference(&a, &b)
        );
        prop_assert_eq!(ga.compare(&gb), model::compare(&a, &b));
        prop_assert_eq!(ga.rank(), a.iter().position(|&w| w == 0));
        let all: Vec<usize> = (0..a.len()).collect();
        let want: Vec<Option<usize>> = a.iter().map(|w| b.iter().position(|x| x == w)).collect();
        prop_assert_eq!(ga.translate_ranks(&all, &gb).unwrap(), want);
        Ok(())
    });
}

#[test]
fn incl_and_excl_follow_the_model() {
    let ranks = prop::collection::vec(0..N + 1, 0..6);
    on_rank_0((a_group(), ranks), |world, (a, ranks)| {
        let ga = incl_world(world, &a);
        for (got, want) in [
            (ga.incl(&ranks), model::incl(&a, &ranks)),
            (ga.excl(&ranks), model::excl(&a, &ranks)),
        ] {
            prop_assert_eq!(kind(&got), model::check_ranks(a.len(), &ranks));
            prop_assert_eq!(got.ok().map(|g| world_ranks(&g, world)), want);
        }
        Ok(())
    });
}

#[test]
fn ranges_follow_the_model() {
    on_rank_0((a_group(), triplets()), |world, (a, ranges)| {
        let ga = incl_world(world, &a);
        let named = model::expand(a.len(), &ranges);
        let incl = ga.range_incl(&ranges);
        let excl = ga.range_excl(&ranges);
        for got in [&incl, &excl] {
            if let Err(e) = got {
                prop_assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
            }
        }
        prop_assert_eq!(
            incl.ok().map(|g| world_ranks(&g, world)),
            named.as_ref().map(|r| model::incl(&a, r).unwrap())
        );
        prop_assert_eq!(
            excl.ok().map(|g| world_ranks(&g, world)),
            named.as_ref().map(|r| model::excl(&a, r).unwrap())
        );
        Ok(())
    });
}

/// `comm_create` and `comm_create_group` of random groups give communicators whose ranks and
/// order are the groups', on every rank at once (`comm_create`) or on the members only
/// (`comm_create_group`).
#[test]
fn created_communicators_follow_their_groups() {
    let mut runner = TestRunner::new(Config::with_cases(24));
    runner
        .run(
            &(2..=6usize).prop_flat_map(|p| {
                (
                    Just(p),
                    proptest::sample::subsequence((0..p).collect::<Vec<_>>(), 0..=p).prop_shuffle(),
                )
            }),
            |(p, members)| {
                let got = rpar::run(p, |world| {
                    let g = world.group().incl(&members)?;
                    let a = g.comm_create(&world)?;
                    let b = if g.rank().is_some() {
                        g.comm_create_group(&world, 3)?
                    } else {
                        None
                    };
                    let view =
                        |c: Option<Comm>| c.map(|c| (c.rank(), world_ranks(&c.group(), &world)));
                    Ok((view(a), view(b)))
                })
                .unwrap();
                for (r, (a, b)) in got.into_iter().enumerate() {
                    let want = members
                        .iter()
                        .position(|&m| m == r)
                        .map(|i| (i, members.clone()));
                    prop_assert_eq!(&a, &want);
                    prop_assert_eq!(&b, &want);
                }
                Ok(())
            },
        )
        .unwrap();
}
