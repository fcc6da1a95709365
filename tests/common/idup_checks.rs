//! MPI_Comm_idup, checked on any world: shared by `tests/comm_idup.rs` (in-process,
//! p = 1..=6) and `tests/mpi.rs` (the MPI transport). After MPICH's test/mpi/comm tests
//! comm_idup, comm_idup_mul, comm_idup_overlap, comm_idup_iallreduce and comm_idup_isend,
//! written anew from their checks: a rank that starts its copy only after the others have
//! sent to it (so the others' must not block), several copies in progress at once, copies of
//! two communicators started in different orders on different ranks, and copies in progress
//! beside a non-blocking allreduce and sends; each copy then works on its own.

use rpar::{Comm, Error, InterComm, Result, Sum};

/// Every check (collective over `world`).
pub(crate) fn all(world: &Comm) -> Result<()> {
    let named = |what: &str, r: Result<()>| r.map_err(|e| Error::user(format!("{what}: {e}")));
    named("the last rank to start", last_to_start(world))?;
    named("several at once", several(world))?;
    named("two communicators in either order", either_order(world))?;
    named("beside other calls", beside_others(world))?;
    if world.size() > 1 {
        named("an intercommunicator", intercomm(world))?;
    }
    Ok(())
}

fn expect<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::user(format!("{what}: got {got:?}, want {want:?}")))
    }
}

/// The copy works: a sum over it, and its messages are its own.
fn works(world: &Comm, copy: &Comm, what: &str) -> Result<()> {
    let p = copy.size();
    expect(what, (copy.rank(), p), (world.rank(), world.size()))?;
    let total = copy.allreduce(&copy.rank(), Sum)?;
    expect(&format!("{what}: sum"), total, p * (p - 1) / 2)?;
    let (r, next, prev) = (
        copy.rank(),
        (copy.rank() + 1) % p,
        (copy.rank() + p - 1) % p,
    );
    // small, so sent at once: on the world first, then on the copy
    world.send(&(1000 + r), next, 4)?;
    copy.send(&(2000 + r), next, 4)?;
    let (mut on_world, mut on_copy) = (0usize, 0usize);
    copy.recv_into(&mut on_copy, prev, 4)?;
    world.recv_into(&mut on_world, prev, 4)?;
    expect(&format!("{what}: message on it"), on_copy, 2000 + prev)?;
    expect(&format!("{what}: message beside it"), on_world, 1000 + prev)
}

/// comm_idup: every rank but 0 starts its copy, then sends to rank 0 synchronously; rank 0
/// receives from all of them before it starts its own.
fn last_to_start(world: &Comm) -> Result<()> {
    let mut copy = None;
    world.scope(|s| {
        if world.rank() == 0 {
            for r in 1..world.size() {
                let (got, _) = world.recv::<u32>(r, 0)?;
                expect("the message", got, vec![r as u32, 7])?;
            }
            s.idup(&mut copy)?.wait().map(drop)
        } else {
            let made = s.idup(&mut copy)?;
            world
                .using(rpar::SendMode::Synchronous)
                .send(&[world.rank() as u32, 7][..], 0, 0)?;
            made.wait().map(drop)
        }
    })?;
    works(world, &copy.expect("complete"), "the copy")
}

/// comm_idup_mul: three copies in progress at once, waited for in reverse order.
fn several(world: &Comm) -> Result<()> {
    let (mut a, mut b, mut c) = (None, None, None);
    world.scope(|s| {
        let started = [s.idup(&mut a)?, s.idup(&mut b)?, s.idup(&mut c)?];
        for r in started.into_iter().rev() {
            r.wait()?;
        }
        Ok(())
    })?;
    for (copy, what) in [(a, "first"), (b, "second"), (c, "third")] {
        works(world, &copy.expect("complete"), what)?;
    }
    Ok(())
}

/// comm_idup_overlap: copies of two communicators in progress at once, started in one order
/// on even ranks and the other on odd ones.
fn either_order(world: &Comm) -> Result<()> {
    let (one, two) = (world.dup()?, world.dup()?);
    let (mut a, mut b) = (None, None);
    one.scope(|s1| {
        two.scope(|s2| {
            let (ra, rb) = if world.rank().is_multiple_of(2) {
                let ra = s1.idup(&mut a)?;
                (ra, s2.idup(&mut b)?)
            } else {
                let rb = s2.idup(&mut b)?;
                (s1.idup(&mut a)?, rb)
            };
            rpar::wait_all(vec![ra, rb]).map(drop)
        })
    })?;
    let (a, b) = (a.expect("complete"), b.expect("complete"));
    works(world, &a, "copy of the first")?;
    works(world, &b, "copy of the second")?;
    expect(
        "the copies differ",
        rpar::Comparison::of(&a, &b),
        rpar::Comparison::Congruent,
    )
}

/// comm_idup_iallreduce and comm_idup_isend: a non-blocking allreduce before and after the
/// copy, and sends to the next rank, all in progress together.
fn beside_others(world: &Comm) -> Result<()> {
    let (r, p) = (world.rank(), world.size());
    let (mine, mut before, mut after) = ([r as u64 + 1], [0u64], [0u64]);
    let big = vec![r as u32; 50_000];
    let mut copy = None;
    let mut from_prev = vec![0u32; 50_000];
    world.scope(|s| {
        let first = s.iallreduce((&mine[..], &mut before[..]), Sum)?;
        let sent = s.isend(&big[..], (r + 1) % p, 3)?;
        let made = s.idup(&mut copy)?;
        let second = s.iallreduce((&mine[..], &mut after[..]), Sum)?;
        world.recv_into(&mut from_prev[..], (r + p - 1) % p, 3)?;
        rpar::wait_all(vec![second, made, sent, first]).map(drop)
    })?;
    let want = (p * (p + 1) / 2) as u64;
    expect("the allreduce before", before[0], want)?;
    expect("the allreduce after", after[0], want)?;
    expect(
        "the message",
        from_prev.iter().all(|&x| x == ((r + p - 1) % p) as u32),
        true,
    )?;
    works(world, &copy.expect("complete"), "the copy")
}

/// comm_idup on an intercommunicator of even and odd ranks: every rank but each group's
/// rank 0 starts its copy, then sends to the other group's rank 0, which receives from all
/// of them before it starts its own.
fn intercomm(world: &Comm) -> Result<()> {
    let color = (world.rank() % 2) as u32;
    let half = world.split(Some(color), 0)?.expect("a color");
    let inter = InterComm::create(&half, 0, world, if color == 0 { 1 } else { 0 }, 5)?;
    let mut copy = None;
    inter.scope(|s| {
        if inter.rank() == 0 {
            for r in 1..inter.remote_size() {
                inter.recv::<u32>(r, 0)?;
            }
            s.idup(&mut copy)?.wait().map(drop)
        } else {
            let made = s.idup(&mut copy)?;
            inter.send(&[inter.rank() as u32][..], 0, 0)?;
            made.wait().map(drop)
        }
    })?;
    let copy = copy.expect("complete");
    let q = copy.remote_size();
    let total = copy.allreduce(&copy.rank(), Sum)?;
    expect("sum over the copy", total, q * (q - 1) / 2)?;
    expect(
        "sizes",
        (copy.size(), q),
        (inter.size(), inter.remote_size()),
    )
}
