//! Intercommunicators in-process: the shared checks (`common/intercomm_checks.rs`, also run on
//! the MPI transport by `tests/mpi.rs`) on every p in 1..=6, and the errors of
//! `InterComm::create` and `merge`, each refused on every rank of a group so that the run goes on
//! and a good call afterwards works.

#[path = "common/intercomm_checks.rs"]
mod intercomm_checks;

use rpar::{Comm, Error, InterComm, Result, TAG_UB};

#[test]
fn shared_checks_on_every_size() {
    for p in 1..=6 {
        rpar::run(p, |world| intercomm_checks::all(&world))
            .unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

/// The lower half and the upper half of `world` (p >= 2), and the world rank of the other
/// half's rank 0.
fn half(world: &Comm) -> Result<(Comm, usize)> {
    let h = world.size() / 2;
    let low = world.rank() < h;
    let half = world.split(Some(u32::from(low)), 0)?.unwrap();
    Ok((half, if low { h } else { 0 }))
}

fn join(world: &Comm) -> Result<InterComm> {
    let (half, remote) = half(world)?;
    InterComm::create(&half, 0, world, remote, 0)
}

#[test]
fn one_rank_has_no_other_group() {
    let err = rpar::run(1, |world| {
        InterComm::create(&world, 0, &world, 0, 0).map(|_| ())
    })
    .unwrap_err();
    assert!(err.to_string().contains("must be disjoint"), "{err}");
}

#[test]
fn bad_local_leader_tag_and_remote_leader_are_refused_on_every_rank() {
    rpar::run(5, |world| {
        let (half, remote) = half(&world)?;
        let size = half.size();
        // the local leader: checked by every rank before anything moves
        assert_eq!(
            InterComm::create(&half, size, &world, remote, 0).unwrap_err(),
            Error::RankOutOfRange { rank: size, size }
        );
        assert_eq!(
            InterComm::create(&half, 0, &world, remote, -3).unwrap_err(),
            Error::InvalidTag {
                tag: -3,
                max: TAG_UB
            }
        );
        // a remote leader that is no rank of the peer communicator: the leader finds it and
        // tells its group (both groups err here, so neither waits for the other)
        assert_eq!(
            InterComm::create(&half, 0, &world, 99, 0).unwrap_err(),
            Error::RankOutOfRange { rank: 99, size: 5 }
        );
        // a remote leader in the local group (here the leader itself)
        let own_leader = half.group().translate_ranks(&[0], &world.group())?[0].unwrap();
        let err = InterComm::create(&half, 0, &world, own_leader, 0).unwrap_err();
        assert!(matches!(err, Error::InvalidGroup { .. }), "{err}");
        assert!(err
            .to_string()
            .contains(&format!("world rank {own_leader} is in both groups")));
        // after all that, a good call
        let inter = InterComm::create(&half, 0, &world, remote, 0)?;
        inter.barrier()
    })
    .unwrap();
}

#[test]
fn a_group_that_disagrees_on_high_is_refused() {
    rpar::run(4, |world| {
        let inter = join(&world)?;
        // in each group, rank 0 says high and rank 1 low
        let err = inter.merge(inter.rank() == 0).unwrap_err();
        assert!(err.to_string().contains("must pass the same"), "{err}");
        let merged = inter.merge(world.rank() >= 2)?;
        assert_eq!(merged.rank(), world.rank());
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_lone_root_group_broadcasts_and_the_buffers_of_its_other_ranks_stay() {
    rpar::run(6, |world| {
        let inter = join(&world)?;
        let low = world.rank() < 3;
        let mut x = vec![world.rank() as f64; 1000];
        let root = match (low, inter.rank()) {
            (true, 2) => rpar::ROOT,
            (true, _) => rpar::PROC_NULL,
            (false, _) => 2,
        };
        inter.bcast(&mut x[..], root)?;
        let want = if low { world.rank() } else { 2 };
        assert!(x.iter().all(|&v| v == want as f64));
        Ok(())
    })
    .unwrap();
}

#[test]
fn buffers_of_another_size_are_a_collective_mismatch() {
    let err = rpar::run(2, |world| {
        let inter = join(&world)?;
        let mut x = vec![0u32; 1 + world.rank()];
        let root = if world.rank() == 0 { rpar::ROOT } else { 0 };
        inter.bcast(&mut x[..], root)
    })
    .unwrap_err();
    assert!(matches!(err, Error::CollectiveMismatch { .. }), "{err}");
}

#[test]
fn large_messages_across() {
    // rendezvous sizes both ways at once, and through the collectives
    rpar::run(4, |world| {
        let inter = join(&world)?;
        let n = 100_000;
        let mine = vec![world.rank() as u32; n];
        let mut theirs = vec![0u32; n];
        let r = inter.rank();
        inter.sendrecv(&mine[..], r, 0, &mut theirs[..], r, 0)?;
        let partner = (world.rank() + 2) % 4;
        assert!(theirs.iter().all(|&v| v == partner as u32));
        let sums = inter.allreduce(&mine[..], rpar::Sum)?;
        let other: u32 = if world.rank() < 2 { 2 + 3 } else { 1 };
        assert!(sums.iter().all(|&v| v == other));
        Ok(())
    })
    .unwrap();
}
