//! Groups and communicators, checked on any communicator of any size: shared by
//! `tests/comm_groups.rs` (in-process, p = 1..=6) and `tests/mpi.rs` (the MPI transport). Each
//! check returns a mismatch as an error of the rank, so that the run fails with it.
//!
//! Several are ports of MPICH's own tests (test/mpi/group: grouptest, gtranks, groupnullincl,
//! groupcreate; test/mpi/comm: commcreate1, comm_create_group, ctxalloc, cmsplit_type,
//! commname), written anew from their checks and made to work on any number of ranks.

use rpar::{Comm, Comparison, Error, Group, Result, SplitType, Sum};
use std::fmt::Debug;

/// Every check on `world` and on a dup of it, then the names.
pub(crate) fn all(world: &Comm) -> Result<()> {
    on(world).map_err(|e| Error::user(format!("on the world: {e}")))?;
    on(&world.dup()?).map_err(|e| Error::user(format!("on a dup of the world: {e}")))?;
    commname(world).map_err(|e| Error::user(format!("commname: {e}")))
}

/// Every check but the names, on `comm` (collective over it).
pub(crate) fn on(comm: &Comm) -> Result<()> {
    let named = |what: &str, r: Result<()>| r.map_err(|e| Error::user(format!("{what}: {e}")));
    named("grouptest", grouptest(comm))?;
    named("gtranks", gtranks(comm))?;
    named("groupnullincl", groupnullincl(comm))?;
    named("groupcreate", groupcreate(comm))?;
    named("group errors", group_errors(comm))?;
    named("commcreate1", commcreate1(comm))?;
    named("comm_create_group", comm_create_group(comm))?;
    named("ctxalloc", ctxalloc(comm))?;
    named("cmsplit_type", cmsplit_type(comm))?;
    named("compare", compare(comm))?;
    named("create errors", create_errors(comm))
}

fn expect<T: PartialEq + Debug>(what: &str, got: T, want: T) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::user(format!("{what}: got {got:?}, want {want:?}")))
    }
}

/// The communicator ranks of `g`'s members, in its order (through `translate_ranks`).
pub(crate) fn members(g: &Group, comm: &Comm) -> Result<Vec<usize>> {
    let all: Vec<usize> = (0..g.size()).collect();
    let got = g.translate_ranks(&all, &comm.group())?;
    got.into_iter()
        .map(|r| r.ok_or_else(|| Error::user(format!("{g:?} has a member outside the comm"))))
        .collect()
}

/// grouptest: incl and its rank and translation, the self group against the world's, excl of
/// everyone, range_incl/range_excl with positive and negative strides and their union, the
/// set operations against the groups they should give.
fn grouptest(comm: &Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    let w = comm.group();
    expect("size and rank", (w.size(), w.rank()), (p, Some(me)))?;
    if p >= 3 {
        // this rank first, then two others
        let mut ranks = vec![me];
        ranks.extend((0..p).filter(|&r| r != me).rev().take(2));
        let g2 = w.incl(&ranks)?;
        expect("incl: size, rank", (g2.size(), g2.rank()), (3, Some(0)))?;
        expect("incl: translated", members(&g2, comm)?, ranks.clone())?;
        let g3 = w.excl(&ranks)?;
        expect("excl: size", g3.size(), p - 3)?;
        let rest: Vec<usize> = (0..p).filter(|r| !ranks.contains(r)).collect();
        expect("excl: in order", members(&g3, comm)?, rest)?;
        let mut sorted = ranks.clone();
        sorted.sort();
        expect(
            "intersection(w, g2)",
            members(&w.intersection(&g2), comm)?,
            sorted,
        )?;
        expect(
            "intersection(w, g3)",
            w.intersection(&g3).compare(&g3),
            Comparison::Ident,
        )?;
        expect(
            "intersection(g2, g3)",
            g2.intersection(&g3).compare(&Group::empty()),
            Comparison::Ident,
        )?;
        expect(
            "difference(w, g2)",
            w.difference(&g2).compare(&g3),
            Comparison::Ident,
        )?;
        expect(
            "union(g2, g3)",
            g2.union(&g3).compare(&w),
            Comparison::Similar,
        )?;
    }
    let selfg = comm.self_comm().group();
    expect(
        "self translated to the comm",
        selfg.translate_ranks(&[0], &w)?,
        vec![Some(me)],
    )?;
    let all: Vec<usize> = (0..p).collect();
    let want: Vec<Option<usize>> = (0..p).map(|r| (r == me).then_some(0)).collect();
    expect(
        "the comm translated to self",
        w.translate_ranks(&all, &selfg)?,
        want,
    )?;
    let none = w.excl(&all)?;
    expect(
        "excl of everyone",
        (none.size(), none.rank(), none.compare(&Group::empty())),
        (0, None, Comparison::Ident),
    )?;
    if p >= 2 {
        for range in [(1, p - 1, 2), (p - 1, 1, -2)] {
            let g4 = w.range_incl(&[range])?;
            let g5 = w.range_excl(&[range])?;
            let odd: Vec<usize> = if range.2 > 0 {
                (1..p).step_by(2).collect()
            } else {
                (1..p).rev().step_by(2).collect()
            };
            expect(
                &format!("range_incl {range:?}"),
                members(&g4, comm)?,
                odd.clone(),
            )?;
            let rest: Vec<usize> = (0..p).filter(|r| !odd.contains(r)).collect();
            expect(&format!("range_excl {range:?}"), members(&g5, comm)?, rest)?;
            let g45 = g4.union(&g5);
            expect("union g4 g5", g45.compare(&w), Comparison::Similar)?;
            expect(
                "empty against g4",
                Group::empty().compare(&g4),
                Comparison::Unequal,
            )?;
        }
    }
    Ok(())
}

/// gtranks: the comm's group translated to the self group (all `None` but this rank), and a
/// small irregular group translated to the comm's group and to its reverse.
fn gtranks(comm: &Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    let w = comm.group();
    if p < 3 {
        return Ok(());
    }
    let mut ranks = vec![p - 2, 0];
    if me != 0 && me != p - 2 {
        ranks.push(me);
    }
    let ngroup = w.incl(&ranks)?;
    let input: Vec<usize> = [1, 0, 2][..ranks.len()].to_vec();
    let want: Vec<Option<usize>> = input.iter().map(|&i| Some(ranks[i])).collect();
    expect("to the comm", ngroup.translate_ranks(&input, &w)?, want)?;
    let galt = w.range_incl(&[(p - 1, 0, -1)])?;
    let want: Vec<Option<usize>> = input.iter().map(|&i| Some(p - 1 - ranks[i])).collect();
    expect(
        "to the reversed comm",
        ngroup.translate_ranks(&input, &galt)?,
        want,
    )
}

/// groupnullincl: `incl` of no ranks is the empty group, on the comm and on a split of it.
fn groupnullincl(comm: &Comm) -> Result<()> {
    let half = comm
        .split(Some((comm.rank() % 2) as u32), 0)?
        .expect("a color");
    for c in [comm, &half, &comm.self_comm()] {
        let g = c.group().incl(&[])?;
        expect("incl(&[])", g.compare(&Group::empty()), Comparison::Ident)?;
        expect("its size and rank", (g.size(), g.rank()), (0, None))?;
    }
    Ok(())
}

/// groupcreate: many groups alive at once, each whole.
fn groupcreate(comm: &Comm) -> Result<()> {
    let all: Vec<usize> = (0..comm.size()).collect();
    let w = comm.group();
    let groups: Vec<Group> = (0..2048).map(|_| w.incl(&all)).collect::<Result<_>>()?;
    for g in &groups {
        expect("a group's size", g.size(), comm.size())?;
    }
    Ok(())
}

/// The errors MPI defines, as rpar's values: MPI_ERR_RANK for a rank outside the group or
/// given twice, MPI_ERR_ARG for bad range triplets.
fn group_errors(comm: &Comm) -> Result<()> {
    let p = comm.size();
    let w = comm.group();
    expect(
        "incl out of range",
        w.incl(&[0, p]).map(|_| ()),
        Err(Error::RankOutOfRange { rank: p, size: p }),
    )?;
    expect(
        "excl out of range",
        w.excl(&[p + 3]).map(|_| ()),
        Err(Error::RankOutOfRange {
            rank: p + 3,
            size: p,
        }),
    )?;
    expect(
        "translate out of range",
        w.translate_ranks(&[p], &w).map(|_| ()),
        Err(Error::RankOutOfRange { rank: p, size: p }),
    )?;
    for (what, r) in [("incl", w.incl(&[0, 0])), ("excl", w.excl(&[0, 0]))] {
        match r {
            Err(Error::DuplicateRank {
                rank: 0,
                first: 0,
                second: 1,
                ..
            }) => {}
            other => return Err(Error::user(format!("{what} of 0 twice gave {other:?}"))),
        }
    }
    let mut bad: Vec<Vec<(usize, usize, isize)>> = vec![
        vec![(p, p, 1)],            // first outside the group
        vec![(0, 0, 0)],            // stride 0
        vec![(0, p, 1)],            // reaches p
        vec![(0, 0, 1), (0, 0, 1)], // rank 0 twice
    ];
    if p > 1 {
        bad.push(vec![(p - 1, 0, 1)]); // leads away from its last rank
    }
    for ranges in &bad {
        for (what, r) in [
            ("range_incl", w.range_incl(ranges)),
            ("range_excl", w.range_excl(ranges)),
        ] {
            if !matches!(r, Err(Error::InvalidArgument { .. })) {
                return Err(Error::user(format!("{what} {ranges:?} gave {r:?}")));
            }
        }
    }
    // a last rank past the end is fine if the stride stops before it (as MPICH)
    let g = w.range_incl(&[(0, p, p as isize + 1)])?;
    expect("(0, p, p + 1)", members(&g, comm)?, vec![0])?;
    Ok(())
}

/// commcreate1: communicators of the odd ranks (counted down), the upper half and the even
/// ranks, from the comm and from a named dup of it; disjoint groups in one call; the empty
/// group. Each member's rank and size are the group's, and the new communicator works.
fn commcreate1(comm: &Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    let w = comm.group();
    let mut groups = vec![("geven", w.range_incl(&[(0, p - 1, 2)])?)];
    if p >= 2 {
        let godd = w.range_incl(&[(2 * (p / 2) - 1, 1, -2)])?;
        expect("odd group size", godd.size(), p / 2)?;
        groups.push(("godd", godd));
    }
    if p >= 3 {
        groups.push(("ghigh", w.range_incl(&[(p / 2 + 1, p - 1, 1)])?));
    }
    if p >= 2 {
        let parity = w.range_incl(&[(me % 2, p - 1, 2)])?;
        groups.push(("godd+geven", parity));
    }
    groups.push(("empty", Group::empty()));
    let dup = comm.dup()?;
    dup.set_name("Dup of comm");
    for old in [comm, &dup] {
        for (name, g) in &groups {
            let made = g.comm_create(old)?;
            let what = format!("create({name}) from {}", old.name());
            match (&made, g.rank()) {
                (None, None) => {}
                (Some(c), Some(r)) => {
                    expect(&what, (c.rank(), c.size()), (r, g.size()))?;
                    expect(&what, c.group().compare(g), Comparison::Ident)?;
                    let sum = c.allreduce(&me, Sum)?;
                    let want: usize = members(g, comm)?.iter().sum();
                    expect(&format!("{what}: allreduce"), sum, want)?;
                }
                (made, r) => {
                    return Err(Error::user(format!(
                        "{what}: group rank {r:?} but communicator {made:?}"
                    )))
                }
            }
        }
    }
    Ok(())
}

/// comm_create_group: the even ranks make a communicator by themselves (the odd ones, with
/// another tag, theirs), use it, and make one of its first half from it; a rank outside the
/// group gets `None` at once.
fn comm_create_group(comm: &Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    let w = comm.group();
    let odds: Vec<usize> = (1..p).step_by(2).collect();
    let evens = w.excl(&odds)?;
    let mine = if me % 2 == 0 {
        evens.clone()
    } else {
        w.incl(&odds)?
    };
    let c = mine
        .comm_create_group(comm, (me % 2) as i32)?
        .ok_or_else(|| Error::user("a member got no communicator"))?;
    expect("rank, size", (c.rank(), c.size()), (me / 2, mine.size()))?;
    c.barrier()?;
    let sum = c.allreduce(&me, Sum)?;
    expect("allreduce", sum, members(&mine, comm)?.iter().sum())?;
    if me % 2 == 1 {
        expect(
            "a non-member",
            evens.comm_create_group(comm, 0)?.is_none(),
            true,
        )?;
    }
    // from the new communicator, its first half (rounded up)
    let half = c.group().range_incl(&[(0, (c.size() - 1) / 2, 1)])?;
    if half.rank().is_some() {
        let h = half.comm_create_group(&c, 5)?.expect("a member");
        expect("half: size", h.size(), half.size())?;
        let n = h.allreduce(&1u32, Sum)?;
        expect("half: allreduce", n as usize, half.size())?;
    }
    comm.barrier()
}

/// ctxalloc: many communicators made and dropped in turn, each with a message space of its
/// own (a ring on the new ones while a message waits on the comm).
fn ctxalloc(comm: &Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    let (next, prev) = ((me + 1) % p, (me + p - 1) % p);
    comm.send(&u32::MAX, next, 9)?; // waits on `comm` all along
    for i in 0..64u32 {
        let d = comm.dup()?;
        let g = comm
            .group()
            .comm_create_group(comm, i as i32)?
            .expect("a member");
        d.send(&i, next, 9)?;
        g.send(&(i + 1000), next, 9)?;
        expect("ring on a dup", g.recv::<u32>(prev, 9)?.0, vec![i + 1000])?;
        expect("ring on a created", d.recv::<u32>(prev, 9)?.0, vec![i])?;
    }
    expect(
        "the comm's message",
        comm.recv::<u32>(prev, 9)?.0,
        vec![u32::MAX],
    )
}

/// cmsplit_type: the shared-memory communicators hold ranks of the comm, in its order for
/// equal keys and reversed for decreasing keys; a rank that gives no split type gets none.
fn cmsplit_type(comm: &Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    let node = comm
        .split_type(Some(SplitType::Shared), 0)?
        .ok_or_else(|| Error::user("no shared-memory communicator"))?;
    let mine = members(&node.group(), comm)?;
    let mut sorted = mine.clone();
    sorted.sort();
    expect("in the comm's order", &mine, &sorted)?;
    expect("this rank in it", mine.get(node.rank()), Some(&me))?;
    expect(
        "allreduce on it",
        node.allreduce(&me, Sum)?,
        mine.iter().sum(),
    )?;
    let kind = (me != 0 || p == 1).then_some(SplitType::Shared);
    let back = comm.split_type(kind, -(me as i32))?;
    match back {
        None => expect("only rank 0 left out", me == 0 && p > 1, true),
        Some(b) => {
            let got = members(&b.group(), comm)?;
            let mut want: Vec<usize> = mine.iter().copied().filter(|&r| r != 0 || p == 1).collect();
            want.reverse();
            expect("reversed by key", got, want)
        }
    }
}

/// MPI_Comm_compare: the same communicator, a dup, a reordering, the self communicator.
fn compare(comm: &Comm) -> Result<()> {
    let (p, me) = (comm.size(), comm.rank());
    expect("itself", Comparison::of(comm, comm), Comparison::Ident)?;
    expect(
        "a dup",
        Comparison::of(comm, &comm.dup()?),
        Comparison::Congruent,
    )?;
    let reversed = comm.split(Some(0), -(me as i32))?.expect("a color");
    let want = if p == 1 {
        Comparison::Congruent
    } else {
        Comparison::Similar
    };
    expect("reversed", Comparison::of(comm, &reversed), want)?;
    let created = comm.group().comm_create(comm)?.expect("a member");
    expect(
        "created of its group",
        Comparison::of(&created, comm),
        Comparison::Congruent,
    )?;
    let me_alone = comm.self_comm();
    let want = if p == 1 {
        Comparison::Congruent
    } else {
        Comparison::Unequal
    };
    expect("self", Comparison::of(comm, &me_alone), want)?;
    expect(
        "self twice",
        Comparison::of(&me_alone, &comm.self_comm()),
        Comparison::Ident,
    )
}

/// The errors of the constructors: a group with members outside the communicator
/// (MPI_ERR_GROUP), a negative tag (MPI_ERR_TAG).
fn create_errors(comm: &Comm) -> Result<()> {
    let me_alone = comm.self_comm();
    let all = comm.group();
    if comm.size() > 1 {
        // every rank gives a group with members outside its self communicator
        for r in [
            all.comm_create(&me_alone),
            all.comm_create_group(&me_alone, 0),
        ] {
            if !matches!(r, Err(Error::InvalidGroup { .. })) {
                return Err(Error::user(format!("a group not in the comm gave {r:?}")));
            }
        }
    }
    expect(
        "a negative tag",
        all.comm_create_group(comm, -3).map(|_| ()),
        Err(Error::InvalidTag {
            tag: -3,
            max: rpar::TAG_UB,
        }),
    )?;
    // the self communicator makes one of itself
    let again = me_alone
        .group()
        .comm_create_group(&me_alone, 0)?
        .expect("a member");
    expect("self of self", (again.size(), again.rank()), (1, 0))?;
    comm.barrier()
}

/// commname: the predefined names, names given to the comm, a dup, a split and the self
/// communicator, truncation at a character boundary (and the old names back at the end).
fn commname(world: &Comm) -> Result<()> {
    expect("world", world.name(), "MPI_COMM_WORLD".into())?;
    expect("self", world.self_comm().name(), "MPI_COMM_SELF".into())?;
    let dup = world.dup()?;
    expect("a dup's", dup.name(), String::new())?;
    let split = world.split(Some(0), 0)?.expect("a color");
    let me_alone = world.self_comm();
    for (i, c) in [world, &dup, &split, &me_alone].into_iter().enumerate() {
        let name = format!("comm-{i}-{}", world.rank());
        c.set_name(&name);
        expect("a name given", c.name(), name)?;
    }
    expect(
        "another handle of self",
        world.self_comm().name(),
        format!("comm-3-{}", world.rank()),
    )?;
    expect("a dup of a named comm", dup.dup()?.name(), String::new())?;
    let long = format!("{}é", "a".repeat(126)); // 128 bytes, 'é' from byte 126
    dup.set_name(&long);
    expect("truncated", dup.name(), "a".repeat(126))?;
    world.set_name("MPI_COMM_WORLD");
    world.self_comm().set_name("MPI_COMM_SELF");
    Ok(())
}
