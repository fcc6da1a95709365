//! Intercommunicators, checked on any world of any size: shared by `tests/intercomm.rs`
//! (in-process, p = 1..=6) and `tests/mpi.rs` (the MPI transport). Each check returns a
//! mismatch as an error of the rank, so that the run fails with it.
//!
//! After MPICH's own tests (test/mpi/comm: ic1, iccreate, icm; test/mpi/coll: icbarrier,
//! icbcast, icallreduce, icreduce, icgather, icgatherv, icscatter, icscatterv, icallgather,
//! icallgatherv, icalltoall, icalltoallv, redscatblk), written anew from their checks: the world is split in two — into a
//! lower and an upper half, and into even and odd ranks numbered backwards — the halves are
//! joined by an intercommunicator whose leaders are not rank 0 of their group, and on it are
//! checked the sizes and groups, messages both ways (named ranks, ANY_SOURCE, statuses,
//! non-blocking, probe), barrier, bcast from every root of each side, allreduce, reduce,
//! gather and scatter from every root of each side in each of their forms, allgather,
//! alltoall and reduce_scatter in each of theirs, and merges
//! with every choice of `high`. A world of one rank cannot be split in two: there the checks
//! are that `InterComm::create` refuses a remote leader in the local group.

use rpar::{
    Comm, Counts, Datatype, Error, Group, InterComm, Max, Result, Sum, TypeMap, Typed, Varying,
    ANY_SOURCE, ANY_TAG, PROC_NULL, ROOT,
};
use std::fmt::Debug;

/// Every check, on both ways of splitting `world` (collective over it).
pub(crate) fn all(world: &Comm) -> Result<()> {
    let p = world.size();
    if p == 1 {
        return one_rank(world);
    }
    let named = |what: &str, r: Result<()>| r.map_err(|e| Error::user(format!("{what}: {e}")));
    // lower and upper half, in world order
    let h = p / 2;
    let halves = |r: usize| {
        if r < h {
            (0..h).collect()
        } else {
            (h..p).collect::<Vec<_>>()
        }
    };
    named("halves", on_split(world, &halves))?;
    // even and odd ranks, each numbered backwards
    let parity = |r: usize| (0..p).rev().filter(|x| x % 2 == r % 2).collect::<Vec<_>>();
    named("even and odd", on_split(world, &parity))
}

/// A world of one rank: there is no other group to join.
fn one_rank(world: &Comm) -> Result<()> {
    let err = InterComm::create(world, 0, world, 0, 0).unwrap_err();
    expect(
        "a remote leader in the local group",
        matches!(err, Error::InvalidGroup { .. }),
        true,
    )
}

fn expect<T: PartialEq + Debug>(what: &str, got: T, want: T) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::user(format!("{what}: got {got:?}, want {want:?}")))
    }
}

/// The world ranks of `g`'s members, in its order.
fn world_ranks(g: &Group, world: &Comm) -> Result<Vec<usize>> {
    let all: Vec<usize> = (0..g.size()).collect();
    let t = g.translate_ranks(&all, &world.group())?;
    Ok(t.into_iter().map(|w| w.expect("a world rank")).collect())
}

/// The two sides of a split: this rank's group and the other, as world ranks in their order.
struct Sides {
    mine: Vec<usize>,
    theirs: Vec<usize>,
    /// Whether this rank's group holds world rank 0 (side A; the other is side B).
    a: bool,
}

/// Splits `world` into the groups `group_of` gives (the world ranks of a rank's group, in
/// their order), joins them, and runs every check on the intercommunicator.
fn on_split(world: &Comm, group_of: &dyn Fn(usize) -> Vec<usize>) -> Result<()> {
    let me = world.rank();
    let mine = group_of(me);
    let theirs: Vec<usize> = group_of((0..world.size()).find(|r| !mine.contains(r)).unwrap());
    let color = u32::from(mine.contains(&0));
    let key = mine.iter().position(|&w| w == me).unwrap() as i32;
    let half = world.split(Some(color), key)?.expect("a color");
    expect("the half's rank", half.rank(), key as usize)?;
    // the leaders: each group's last rank; peer_comm the world
    let local_leader = half.size() - 1;
    let remote_leader = *theirs.last().unwrap();
    let inter = InterComm::create(&half, local_leader, world, remote_leader, 17)?;
    let sides = Sides {
        a: color == 1,
        mine,
        theirs,
    };
    let named = |what: &str, r: Result<()>| r.map_err(|e| Error::user(format!("{what}: {e}")));
    named(
        "sizes and groups",
        sizes_and_groups(world, &half, &inter, &sides),
    )?;
    named("messages across", messages(world, &inter, &sides))?;
    named("barrier", inter.barrier())?;
    named("bcast", bcast(world, &inter, &sides))?;
    named("allreduce", allreduce(world, &inter, &sides))?;
    named("rooted data movement", rooted(world, &inter, &sides))?;
    named("data movement", everyone(world, &inter, &sides))?;
    named("non-blocking", nonblocking(world, &inter, &sides))?;
    named("derived", derived(world, &inter, &sides))?;
    named("merge", merge(world, &inter, &sides))?;
    named("errors", errors(&inter))?;
    // messages on the half are not mixed up with the intercommunicator's
    named("the half still works", {
        let total = half.allreduce(&(world.rank() as u64), Sum)?;
        expect(
            "sum over the half",
            total,
            sides.mine.iter().sum::<usize>() as u64,
        )
    })?;
    named("a second barrier", inter.barrier())
}

/// ic1 and iccreate: rank, size, remote size, both groups.
fn sizes_and_groups(world: &Comm, half: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    expect("rank", inter.rank(), half.rank())?;
    expect("size", inter.size(), s.mine.len())?;
    expect("remote_size", inter.remote_size(), s.theirs.len())?;
    expect("group", world_ranks(&inter.group(), world)?, s.mine.clone())?;
    expect("group's rank", inter.group().rank(), Some(inter.rank()))?;
    expect(
        "remote_group",
        world_ranks(&inter.remote_group(), world)?,
        s.theirs.clone(),
    )?;
    expect("remote_group's rank", inter.remote_group().rank(), None)
}

/// ic1: every rank sends to every rank of the other group, and takes what comes from
/// ANY_SOURCE; then named sources, non-blocking calls, sendrecv and probe.
fn messages(world: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    let (r, w) = (inter.rank(), world.rank() as u64);
    for dest in 0..inter.remote_size() {
        inter.send(&[w, dest as u64][..], dest, 3)?;
    }
    let mut from = Vec::new();
    for _ in 0..inter.remote_size() {
        let (v, st) = inter.recv::<u64>(ANY_SOURCE, 3)?;
        expect("tag", st.tag, 3)?;
        expect("count", st.count, 2)?;
        expect("sender (a remote rank)", v[0], s.theirs[st.source] as u64)?;
        expect("addressed to", v[1], r as u64)?;
        from.push(st.source);
    }
    from.sort_unstable();
    expect(
        "sources",
        from,
        (0..inter.remote_size()).collect::<Vec<_>>(),
    )?;

    // named sources, in reverse order of sending, by non-blocking calls
    let sends = (0..inter.remote_size())
        .map(|dest| inter.isend(&[w; 4][..], dest, 5))
        .collect::<Result<Vec<_>>>()?;
    let mut bufs = vec![[0u64; 4]; inter.remote_size()];
    let mut recvs = Vec::new();
    for (source, buf) in bufs.iter_mut().enumerate().rev() {
        recvs.push(inter.irecv_into(&mut buf[..], source, 5)?);
    }
    rpar::wait_all(sends)?;
    for (i, st) in rpar::wait_all(recvs)?.into_iter().enumerate() {
        expect("irecv's source", st.source, inter.remote_size() - 1 - i)?;
    }
    for (source, buf) in bufs.iter().enumerate() {
        expect("irecv's data", *buf, [s.theirs[source] as u64; 4])?;
    }

    // the leaders (rank 0 of each group) exchange with sendrecv, after a probe
    if r == 0 {
        inter.send(&[w as i32; 3][..], 0, 7)?;
        let p = inter.probe(ANY_SOURCE, ANY_TAG)?;
        expect(
            "probe",
            (p.status.source, p.status.tag, p.bytes),
            (0, 7, 12),
        )?;
        let mut got = [0i32; 3];
        inter.recv_into(&mut got[..], 0, 7)?;
        expect("probed message", got, [s.theirs[0] as i32; 3])?;
        let mut theirs = 0u64;
        let st = inter.sendrecv(&w, 0, 8, &mut theirs, 0, 8)?;
        expect("sendrecv", (theirs, st.source), (s.theirs[0] as u64, 0))?;
    }
    // PROC_NULL across
    inter.send(&1u8, PROC_NULL, 0)?;
    expect(
        "recv from PROC_NULL",
        inter.recv::<u8>(PROC_NULL, 0)?.1.source,
        PROC_NULL,
    )
}

/// icbcast: from every rank of each group in turn, to the other group.
fn bcast(world: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    let w = world.rank() as u32;
    for root_side_a in [true, false] {
        let root_group = if root_side_a == s.a {
            &s.mine
        } else {
            &s.theirs
        };
        for (root, &root_world) in root_group.iter().enumerate() {
            let mut x = [w, w + 1000, 7];
            let want = if root_side_a == s.a {
                let arg = if inter.rank() == root {
                    ROOT
                } else {
                    PROC_NULL
                };
                inter.bcast(&mut x[..], arg)?;
                [w, w + 1000, 7] // the root's own, and untouched at the others of its group
            } else {
                inter.bcast(&mut x[..], root)?;
                let sent = root_world as u32;
                [sent, sent + 1000, 7]
            };
            expect(&format!("bcast from world rank {root_world}"), x, want)?;
        }
    }
    // a single value, from rank 0 of side A
    let mut v = if s.a && inter.rank() == 0 { 42u16 } else { 0 };
    let root = match (s.a, inter.rank()) {
        (true, 0) => ROOT,
        (true, _) => PROC_NULL,
        (false, _) => 0,
    };
    inter.bcast(&mut v, root)?;
    expect(
        "a value",
        v,
        if s.a {
            if inter.rank() == 0 {
                42
            } else {
                0
            }
        } else {
            42
        },
    )
}

/// icallreduce: each group gets the other's reduction.
fn allreduce(world: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    let w = world.rank() as u64;
    let sum = inter.allreduce(&[w, 1, w * w][..], Sum)?;
    let theirs = &s.theirs;
    let want = vec![
        theirs.iter().sum::<usize>() as u64,
        theirs.len() as u64,
        theirs.iter().map(|&t| (t * t) as u64).sum(),
    ];
    expect("sum", sum, want)?;
    let most = inter.allreduce(&(world.rank() as i32), Max)?;
    expect("max", most, *theirs.iter().max().unwrap() as i32)?;
    // a non-commutative operator: the other group's ranks in their order
    // (appending decimal digits, as (value, 10^digits): associative, not commutative)
    let append =
        rpar::UserOp::non_commutative(|a: [u64; 2], b: [u64; 2]| [a[0] * b[1] + b[0], a[1] * b[1]]);
    let digits = inter.allreduce(&[inter.rank() as u64 + 1, 10], append)?;
    let want = (1..=theirs.len() as u64).fold(0, |acc, d| acc * 10 + d);
    expect("rank-ordered", digits[0], want)
}

/// The `k`th value world rank `w` contributes.
fn value(w: usize, k: usize) -> u64 {
    (w * 1000 + k) as u64
}

/// Block `j` of `counts` at the displacements of blocks laid out backwards, after a gap of one
/// element at the front: a receive side in no rank order, that leaves an element untouched.
fn backwards(counts: &[usize]) -> (Vec<usize>, usize) {
    let total: usize = counts.iter().sum();
    let mut end = total + 1;
    let displs = counts
        .iter()
        .map(|&c| {
            end -= c;
            end
        })
        .collect();
    (displs, total + 1)
}

/// What a receive into `backwards(counts)` holds once block `j` is `blocks[j]`.
fn laid_backwards(blocks: &[Vec<u64>], fill: u64) -> Vec<u64> {
    let counts: Vec<usize> = blocks.iter().map(Vec::len).collect();
    let (displs, len) = backwards(&counts);
    let mut all = vec![fill; len];
    for (b, &d) in blocks.iter().zip(&displs) {
        all[d..d + b.len()].copy_from_slice(b);
    }
    all
}

/// icreduce, icgather(v), icscatter(v): from every rank of each group in turn, in every form.
fn rooted(world: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    let (w, me, q) = (world.rank(), inter.rank(), inter.remote_size());
    for root_side_a in [true, false] {
        let on_root_side = root_side_a == s.a;
        let root_group = if on_root_side { &s.mine } else { &s.theirs };
        for (root, &root_world) in root_group.iter().enumerate() {
            let arg = match (on_root_side, me == root) {
                (true, true) => ROOT,
                (true, false) => PROC_NULL,
                (false, _) => root,
            };
            let at_root = on_root_side && me == root;
            let what = |call: &str| format!("{call} to world rank {root_world}");
            let wu = w as u64;

            let got = inter.reduce(&[wu, 1, wu * wu][..], Sum, arg)?;
            let want = at_root.then(|| {
                let t = &s.theirs;
                vec![
                    t.iter().sum::<usize>() as u64,
                    t.len() as u64,
                    t.iter().map(|&x| (x * x) as u64).sum(),
                ]
            });
            expect(&what("reduce"), got, want)?;

            // gather: two values each; then rank j of the group sending j + 1 values
            let got = inter.gather(&[value(w, 0), value(w, 1)][..], arg)?;
            let want = at_root.then(|| {
                s.theirs
                    .iter()
                    .flat_map(|&t| [value(t, 0), value(t, 1)])
                    .collect::<Vec<_>>()
            });
            expect(&what("gather"), got, want)?;
            let mine: Vec<u64> = (0..=me).map(|k| value(w, k)).collect();
            let counts: Vec<usize> = (1..=q).collect();
            let blocks: Vec<Vec<u64>> = (s.theirs.iter().enumerate())
                .map(|(j, &t)| (0..=j).map(|k| value(t, k)).collect())
                .collect();
            let got = inter.gather((&mine[..], Counts(&counts)), arg)?;
            expect(
                &what("gather, Counts"),
                got,
                at_root.then(|| blocks.concat()),
            )?;
            let (displs, len) = backwards(&counts);
            let mut all = vec![7u64; len];
            inter.gather(
                (&mine[..], Varying::new(&mut all[..], &counts, &displs)),
                arg,
            )?;
            let want = if at_root {
                laid_backwards(&blocks, 7)
            } else {
                vec![7; len]
            };
            expect(&what("gather, Varying"), all, want)?;

            // scatter: the root's data is the root's values; two each, then j + 1 to rank j
            let (p_other, receiver) = (if on_root_side { q } else { s.mine.len() }, !on_root_side);
            let all: Vec<u64> = (0..2 * p_other).map(|k| value(w, k)).collect();
            let got = inter.scatter(&all[..], arg)?;
            let want = if receiver {
                vec![value(root_world, 2 * me), value(root_world, 2 * me + 1)]
            } else {
                vec![]
            };
            expect(&what("scatter"), got, want.clone())?;
            let mut mine2 = [0u64; 2];
            inter.scatter((&all[..], &mut mine2[..]), arg)?;
            expect(
                &what("scatter into"),
                mine2.to_vec(),
                if receiver { want } else { vec![0, 0] },
            )?;
            let counts: Vec<usize> = (1..=p_other).collect();
            let (displs, len) = backwards(&counts);
            let all: Vec<u64> = (0..len).map(|k| value(w, k)).collect();
            let got = inter.scatter(Varying::new(&all[..], &counts, &displs), arg)?;
            let want: Vec<u64> = if receiver {
                let (rdispls, _) = backwards(&(1..=s.mine.len()).collect::<Vec<_>>());
                (0..=me)
                    .map(|k| value(root_world, rdispls[me] + k))
                    .collect()
            } else {
                vec![]
            };
            expect(&what("scatter, Varying"), got, want.clone())?;
            let mut into = vec![0u64; if receiver { me + 1 } else { 0 }];
            inter.scatter(
                (Varying::new(&all[..], &counts, &displs), &mut into[..]),
                arg,
            )?;
            expect(&what("scatter, Varying into"), into, want)?;
        }
    }
    Ok(())
}

/// icallgather(v), icalltoall(v), redscatblk: each group gets what the other contributed.
fn everyone(world: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    let (w, me, q) = (world.rank(), inter.rank(), inter.remote_size());
    let theirs = &s.theirs;

    // allgather: two values each (three from side B: the groups' blocks may differ)
    let n = if s.a { 2 } else { 3 };
    let got = inter.allgather(&(0..n).map(|k| value(w, k)).collect::<Vec<_>>()[..])?;
    let m = 5 - n;
    let want: Vec<u64> = theirs
        .iter()
        .flat_map(|&t| (0..m).map(move |k| value(t, k)))
        .collect();
    expect("allgather", got, want)?;
    let mine: Vec<u64> = (0..=me).map(|k| value(w, k)).collect();
    let counts: Vec<usize> = (1..=q).collect();
    let blocks: Vec<Vec<u64>> = (theirs.iter().enumerate())
        .map(|(j, &t)| (0..=j).map(|k| value(t, k)).collect())
        .collect();
    let got = inter.allgather((&mine[..], Counts(&counts)))?;
    expect("allgather, Counts", got, blocks.concat())?;
    let (displs, len) = backwards(&counts);
    let mut all = vec![7u64; len];
    inter.allgather((&mine[..], Varying::new(&mut all[..], &counts, &displs)))?;
    expect("allgather, Varying", all, laid_backwards(&blocks, 7))?;

    // alltoall: block j of two values to remote rank j
    let send: Vec<u64> = (0..2 * q).map(|k| value(w, k)).collect();
    let got = inter.alltoall(&send[..])?;
    let want: Vec<u64> = (theirs.iter())
        .flat_map(|&t| [value(t, 2 * me), value(t, 2 * me + 1)])
        .collect();
    expect("alltoall", got, want)?;
    // rank i sends remote rank j i + j + 1 values, starting at 10 j
    let counts: Vec<usize> = (0..q).map(|j| me + j + 1).collect();
    let (displs, len) = backwards(&counts);
    let mut send = vec![0u64; len];
    for j in 0..q {
        for k in 0..counts[j] {
            send[displs[j] + k] = value(w, 10 * j + k);
        }
    }
    let recv_counts: Vec<usize> = (0..q).map(|j| j + me + 1).collect();
    let blocks: Vec<Vec<u64>> = (theirs.iter().enumerate())
        .map(|(j, &t)| (0..recv_counts[j]).map(|k| value(t, 10 * me + k)).collect())
        .collect();
    let got = inter.alltoall((
        Varying::new(&send[..], &counts, &displs),
        Counts(&recv_counts),
    ))?;
    expect("alltoall, Counts", got, blocks.concat())?;
    let (rdispls, rlen) = backwards(&recv_counts);
    let mut all = vec![7u64; rlen];
    inter.alltoall((
        Varying::new(&send[..], &counts, &displs),
        Varying::new(&mut all[..], &recv_counts, &rdispls),
    ))?;
    expect("alltoall, Varying", all, laid_backwards(&blocks, 7))?;

    // icalltoallw: to remote rank j 2 or 4 i32s, as i32s for even j and pairs for odd j,
    // received as pairs from even ranks and i32s from odd ones, one i32 apart
    let (one, pair) = (
        i32::type_map().commit(),
        TypeMap::contiguous(2, &i32::type_map())?.commit(),
    );
    let ints = |a: usize, b: usize| 2 * ((a + b) % 2 + 1);
    let layout = |n: &dyn Fn(usize) -> usize, odd_in_pairs: bool| {
        let mut types = Vec::new();
        let (mut counts, mut displs, mut at) = (Vec::new(), Vec::new(), 0);
        for j in 0..q {
            let pairs = (j % 2 == 1) == odd_in_pairs;
            types.push(if pairs { &pair } else { &one });
            counts.push(if pairs { n(j) / 2 } else { n(j) });
            displs.push(4 * at);
            at += n(j) + 1;
        }
        (types, counts, displs, at)
    };
    let (types, counts, displs, len) = layout(&|j| ints(me, j), true);
    let mut send = vec![-1i32; len];
    for j in 0..q {
        for k in 0..ints(me, j) {
            send[displs[j] / 4 + k] = value(w, 10 * j + k) as i32;
        }
    }
    let (rtypes, rcounts, rdispls, rlen) = layout(&|i| ints(i, me), false);
    let mut recv = vec![-1i32; rlen];
    inter.alltoall((
        Typed::per_rank(&send[..], &types, &counts, &displs),
        Typed::per_rank(&mut recv[..], &rtypes, &rcounts, &rdispls),
    ))?;
    let mut want = vec![-1i32; rlen];
    for (i, &t) in theirs.iter().enumerate() {
        for k in 0..ints(i, me) {
            want[rdispls[i] / 4 + k] = value(t, 10 * me + k) as i32;
        }
    }
    expect("alltoallw", recv, want)?;

    // reduce_scatter: n = |A| |B| values, each group's reduction split over the other
    let n = s.mine.len() * q;
    let mine: Vec<u64> = (0..n).map(|k| (w + k) as u64).collect();
    let got = inter.reduce_scatter(&mine[..], Sum)?;
    let total = theirs.iter().sum::<usize>() as u64;
    let want: Vec<u64> = (me * q..(me + 1) * q)
        .map(|k| total + (q * k) as u64)
        .collect();
    expect("reduce_scatter", got, want.clone())?;
    let mut into = vec![0u64; q];
    inter.reduce_scatter((&mine[..], &mut into[..]), Sum)?;
    expect("reduce_scatter into", into, want)?;
    // redscatinter: counts per rank of this group, the first rank's none
    let g = s.mine.len();
    let mut counts = vec![q; g];
    if g > 1 {
        counts[0] = 0;
        counts[g - 1] += q;
    }
    let at: usize = counts[..me].iter().sum();
    let want: Vec<u64> = (at..at + counts[me])
        .map(|k| total + (q * k) as u64)
        .collect();
    let got = inter.reduce_scatter((&mine[..], Counts(&counts)), Sum)?;
    expect("reduce_scatter, Counts", got, want.clone())?;
    let mut into = vec![0u64; counts[me]];
    inter.reduce_scatter((&mine[..], Counts(&counts), &mut into[..]), Sum)?;
    expect("reduce_scatter, Counts into", into, want)
}

/// nbic*: the non-blocking forms, all started in one scope before any is waited for, then
/// waited for last to first; the rooted ones from rank 0 of side A.
fn nonblocking(world: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    let (w, me, q) = (world.rank(), inter.rank(), inter.remote_size());
    let (wu, theirs) = (w as u64, &s.theirs);
    let (root, at_root, receiver) = match (s.a, me) {
        (true, 0) => (ROOT, true, false),
        (true, _) => (PROC_NULL, false, false),
        (false, _) => (0, false, true),
    };
    let root_world = if s.a { s.mine[0] } else { theirs[0] };
    let mine = [wu, 1, wu * wu];
    let (mut sum, mut reduced, mut x) = ([0u64; 3], [0u64; 3], [wu; 2]);
    let block = [value(w, 0), value(w, 1)];
    let all: Vec<u64> = (0..2 * q).map(|k| value(w, k)).collect();
    let (mut gathered, mut scattered) = (vec![0u64; 2 * q], [0u64; 2]);
    let (mut everyones, mut exchanged) = (vec![0u64; 2 * q], vec![0u64; 2 * q]);
    let spread: Vec<u64> = (0..s.mine.len() * q).map(|k| (w + k) as u64).collect();
    let mut my_part = vec![0u64; q];
    inter.scope(|sc| {
        let started = vec![
            // a reduce and a bcast in each group, then a bcast in one: their numbers differ
            sc.iallreduce((&mine[..], &mut sum[..]), Sum)?,
            sc.ibcast(&mut x[..], root)?,
            sc.ireduce((&mine[..], &mut reduced[..]), Sum, root)?,
            sc.igather((&block[..], &mut gathered[..]), root)?,
            sc.iscatter((&all[..], &mut scattered[..]), root)?,
            sc.iallgather((&block[..], &mut everyones[..]))?,
            sc.ialltoall((&all[..], &mut exchanged[..]))?,
            sc.ireduce_scatter((&spread[..], &mut my_part[..]), Sum)?,
            sc.ibarrier()?,
        ];
        for request in started.into_iter().rev() {
            request.wait()?;
        }
        Ok(())
    })?;
    let t = |f: &dyn Fn(usize) -> u64| theirs.iter().map(|&t| f(t)).sum::<u64>();
    let want_sum = [
        t(&|t| t as u64),
        theirs.len() as u64,
        t(&|t| (t * t) as u64),
    ];
    expect("iallreduce", sum, want_sum)?;
    expect("ireduce", reduced, if at_root { want_sum } else { [0; 3] })?;
    let sent = root_world as u64;
    expect("ibcast", x, if receiver { [sent; 2] } else { [wu; 2] })?;
    let blocks: Vec<u64> = (theirs.iter())
        .flat_map(|&t| [value(t, 0), value(t, 1)])
        .collect();
    let want = if at_root {
        blocks.clone()
    } else {
        vec![0; 2 * q]
    };
    expect("igather", gathered, want)?;
    let want = if receiver {
        [value(root_world, 2 * me), value(root_world, 2 * me + 1)]
    } else {
        [0; 2]
    };
    expect("iscatter", scattered, want)?;
    expect("iallgather", everyones, blocks)?;
    let want: Vec<u64> = (theirs.iter())
        .flat_map(|&t| [value(t, 2 * me), value(t, 2 * me + 1)])
        .collect();
    expect("ialltoall", exchanged, want)?;
    let total = theirs.iter().sum::<usize>() as u64;
    let want: Vec<u64> = (me * q..(me + 1) * q)
        .map(|k| total + (q * k) as u64)
        .collect();
    expect("ireduce_scatter", my_part, want)
}

/// The sides of an intercommunicator, read off it; side A is the group whose first member
/// has the lower world rank.
fn sides_of(world: &Comm, inter: &InterComm) -> Result<Sides> {
    let mine = world_ranks(&inter.group(), world)?;
    let theirs = world_ranks(&inter.remote_group(), world)?;
    Ok(Sides {
        a: mine[0] < theirs[0],
        mine,
        theirs,
    })
}

/// dupic, icsplit, iccreate and the intercommunicators of MPICH's MTestGetIntercomm made from
/// one (a dup, a split into one color, rank 0 of each side discarded): each checked for its
/// groups and with the collectives of `everyone`.
fn derived(world: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    let w = world.rank();
    let same = |what: &str, x: &InterComm, want_mine: &[usize], want_theirs: &[usize]| {
        let got = sides_of(world, x)?;
        expect(&format!("{what}: group"), &got.mine[..], want_mine)?;
        expect(
            &format!("{what}: remote group"),
            &got.theirs[..],
            want_theirs,
        )?;
        let at = want_mine.iter().position(|&m| m == w);
        expect(&format!("{what}: rank"), Some(x.rank()), at)?;
        everyone(world, x, &got).map_err(|e| Error::user(format!("{what}: {e}")))
    };
    let copy = inter.dup()?;
    same("dup", &copy, &s.mine, &s.theirs)?;
    // the copy's messages and the original's do not match each other
    if inter.rank() == 0 {
        copy.send(&1u8, 0, 9)?;
        inter.send(&2u8, 0, 9)?;
        expect("dup's own message", inter.recv::<u8>(0, 9)?.0, vec![2])?;
        expect("copy's own message", copy.recv::<u8>(0, 9)?.0, vec![1])?;
    }
    let one = inter
        .split(Some(0), inter.rank() as i32)?
        .expect("one color");
    same("split into one color", &one, &s.mine, &s.theirs)?;
    // by parity of the world rank, each new group backwards
    let part = inter.split(Some(w as u32 % 2), -(inter.rank() as i32))?;
    let pick = |g: &[usize]| {
        g.iter()
            .rev()
            .copied()
            .filter(|x| x % 2 == w % 2)
            .collect::<Vec<_>>()
    };
    let (mine, theirs) = (pick(&s.mine), pick(&s.theirs));
    match part {
        Some(p) => same("split by parity", &p, &mine, &theirs)?,
        None => expect(
            "split by parity: none only without a partner",
            theirs.is_empty(),
            true,
        )?,
    }
    expect("split with no color", inter.split(None, 0)?.is_none(), true)?;
    // each side without its rank 0
    let rest = inter.create_subgroups(&inter.group().excl(&[0])?)?;
    let (mine, theirs) = (&s.mine[1..], &s.theirs[1..]);
    match rest {
        Some(r) => same("without rank 0", &r, mine, theirs)?,
        None => expect(
            "without rank 0: none only if a side is empty or this is rank 0",
            mine.is_empty() || theirs.is_empty() || inter.rank() == 0,
            true,
        )?,
    }
    let err = inter.create_subgroups(&world.group()).err();
    expect(
        "a subgroup with members outside the group",
        matches!(err, Some(Error::InvalidGroup { .. })),
        true,
    )
}

/// icm: merges with `high` set by side, both ways round, and alike on both sides.
fn merge(world: &Comm, inter: &InterComm, s: &Sides) -> Result<()> {
    let a_first = || {
        let (a, b) = if s.a {
            (&s.mine, &s.theirs)
        } else {
            (&s.theirs, &s.mine)
        };
        a.iter().chain(b).copied().collect::<Vec<_>>()
    };
    let b_first = || {
        let (a, b) = if s.a {
            (&s.mine, &s.theirs)
        } else {
            (&s.theirs, &s.mine)
        };
        b.iter().chain(a).copied().collect::<Vec<_>>()
    };
    // ties: the group whose rank 0 has the lower world rank first
    let mine_first = s.mine[0] < s.theirs[0];
    let tie = if mine_first == s.a {
        a_first()
    } else {
        b_first()
    };
    for (high, want, what) in [
        (!s.a, a_first(), "A low"),
        (s.a, b_first(), "A high"),
        (false, tie.clone(), "both low"),
        (true, tie, "both high"),
    ] {
        let merged = inter.merge(high)?;
        let got = world_ranks(&merged.group(), world)?;
        expect(&format!("merge, {what}: order"), got, want.clone())?;
        let at = want.iter().position(|&w| w == world.rank()).unwrap();
        expect(&format!("merge, {what}: rank"), merged.rank(), at)?;
        // the merged communicator works: a ring shift and an allreduce
        let (r, p) = (merged.rank(), merged.size());
        let mut left = 0usize;
        merged.sendrecv(&world.rank(), (r + 1) % p, 0, &mut left, (r + p - 1) % p, 0)?;
        expect(&format!("merge, {what}: ring"), left, want[(r + p - 1) % p])?;
        let total = merged.allreduce(&world.rank(), Sum)?;
        expect(&format!("merge, {what}: sum"), total, p * (p - 1) / 2)?;
    }
    Ok(())
}

/// Bad arguments, refused on every rank before anything moves (so the intercommunicator still
/// works afterwards: the caller runs a barrier on it).
fn errors(inter: &InterComm) -> Result<()> {
    let rs = inter.remote_size();
    let out = || Error::RankOutOfRange { rank: rs, size: rs };
    expect(
        "send past the remote group",
        inter.send(&1u8, rs, 0),
        Err(out()),
    )?;
    expect(
        "recv past the remote group",
        inter.recv::<u8>(rs, 0).map(|_| ()),
        Err(out()),
    )?;
    let any = Error::RankOutOfRange {
        rank: ANY_SOURCE,
        size: rs,
    };
    expect(
        "bcast from ANY_SOURCE",
        inter.bcast(&mut 0u8, ANY_SOURCE),
        Err(any.clone()),
    )?;
    expect(
        "scatter from ANY_SOURCE",
        inter.scatter(&[1u8][..], ANY_SOURCE),
        Err(any),
    )?;
    expect(
        "reduce to ANY_SOURCE",
        inter.reduce(&[1u8][..], Sum, ANY_SOURCE),
        Err(Error::RankOutOfRange {
            rank: ANY_SOURCE,
            size: rs,
        }),
    )?;
    if inter.size() == 1 || rs == 1 {
        return Ok(()); // every length is a multiple of 1: not refused on both sides
    }
    let got = inter.alltoall(&vec![0u8; rs + 1][..]);
    expect(
        "alltoall of a buffer not cut in one block per remote rank",
        matches!(got, Err(Error::InvalidArgument { .. })),
        true,
    )
}
