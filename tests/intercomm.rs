//! Intercommunicators in-process: the shared checks (`common/intercomm_checks.rs`, also run on
//! the MPI transport by `tests/mpi.rs`) on every p in 1..=6, and the errors of
//! `InterComm::create` and `merge`, each refused on every rank of a group so that the run goes on
//! and a good call afterwards works.

#[path = "common/intercomm_checks.rs"]
mod intercomm_checks;

use rpar::{Comm, Error, InterComm, Result, Sum, TAG_UB};
use std::time::Duration;

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

#[test]
fn large_blocks_through_every_data_movement_collective() {
    // every rank sends before it receives: rendezvous sizes must not wait on each other
    rpar::run(5, |world| {
        let inter = join(&world)?;
        let (w, q) = (world.rank() as u32, inter.remote_size());
        let n = 50_000;
        let theirs: Vec<u32> = if world.rank() < 2 {
            vec![2, 3, 4]
        } else {
            vec![0, 1]
        };
        let all = inter.allgather(&vec![w; n][..])?;
        let want: Vec<u32> = theirs.iter().flat_map(|&t| vec![t; n]).collect();
        assert!(all == want, "allgather");
        let send: Vec<u32> = (0..q * n).map(|k| w * 10 + (k / n) as u32).collect();
        let got = inter.alltoall(&send[..])?;
        let me = inter.rank() as u32;
        let want: Vec<u32> = theirs.iter().flat_map(|&t| vec![t * 10 + me; n]).collect();
        assert!(got == want, "alltoall");
        // world rank 0 gathers from and scatters to the high group
        let root = match (world.rank() < 2, inter.rank()) {
            (true, 0) => rpar::ROOT,
            (true, _) => rpar::PROC_NULL,
            (false, _) => 0,
        };
        let got = inter.gather(&vec![w; n][..], root)?;
        if world.rank() == 0 {
            let want: Vec<u32> = [2, 3, 4].iter().flat_map(|&t| vec![t; n]).collect();
            assert!(got == Some(want), "gather");
        }
        let blocks: Vec<u32> = (0..3 * n).map(|k| (k / n) as u32).collect();
        let got = inter.scatter(&blocks[..], root)?;
        if world.rank() >= 2 {
            assert!(got == vec![me; n], "scatter");
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn reductions_across_keep_the_other_groups_rank_order() {
    // appending decimal digits, as (value, 10^digits): associative, not commutative
    let append = || {
        rpar::UserOp::non_commutative(|a: [u64; 2], b: [u64; 2]| [a[0] * b[1] + b[0], a[1] * b[1]])
    };
    let got = rpar::run(6, |world| {
        let inter = join(&world)?;
        let digit = [inter.rank() as u64 + 1, 10];
        let root = match (world.rank() < 3, inter.rank()) {
            (true, 1) => rpar::ROOT,
            (true, _) => rpar::PROC_NULL,
            (false, _) => 1,
        };
        let reduced = inter.reduce(&digit, append(), root)?;
        let spread = inter.reduce_scatter(&[digit; 3][..], append())?;
        Ok((reduced.map(|r| r[0]), spread[0][0]))
    })
    .unwrap();
    assert_eq!(got[1], (Some(123), 123));
    assert_eq!(got[0].0, None);
    assert!(got.iter().all(|&(_, s)| s == 123));
}

#[test]
fn mismatched_blocks_across_are_refused() {
    // the root expects 2 elements from each remote rank; the high group's rank 1 sends 3
    let err = rpar::run(3, |world| {
        let inter = join(&world)?;
        let root = if world.rank() == 0 { rpar::ROOT } else { 0 };
        let mine = vec![1u8; 2 + inter.rank()];
        inter
            .gather((&mine[..], rpar::Counts(&[2, 2])), root)
            .map(drop)
    })
    .unwrap_err();
    assert!(err.to_string().contains("message truncated"), "{err}");
    // blocks of different lengths where equal ones are due
    let err = rpar::run(3, |world| {
        let inter = join(&world)?;
        let mine = vec![1u8; 1 + world.rank()];
        inter.allgather(&mine[..]).map(drop)
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("rank 1 contributed 3 elements where 2"),
        "{err}"
    );
    // a root expecting another length than the senders reduce
    let err = rpar::run(3, |world| {
        let inter = join(&world)?;
        let root = if world.rank() == 0 { rpar::ROOT } else { 0 };
        inter
            .reduce(
                &vec![1u8; 1 + (world.rank() == 0) as usize][..],
                rpar::Sum,
                root,
            )
            .map(drop)
    })
    .unwrap_err();
    assert!(matches!(err, Error::CollectiveMismatch { .. }), "{err}");
}

#[test]
fn alltoallw_across_checks_signatures_and_runs_non_blocking() {
    use rpar::{Datatype, TypeMap, Typed};
    let (one, pair) = (
        i32::type_map().commit(),
        TypeMap::contiguous(2, &i32::type_map()).unwrap().commit(),
    );
    // 1 and 2 ranks: rank 0 sends each remote rank a pair, received as two i32s
    let got = rpar::run(3, |world| {
        let inter = join(&world)?;
        let q = inter.remote_size();
        let w = world.rank() as i32;
        let send: Vec<i32> = (0..2 * q as i32).map(|k| 100 * w + k).collect();
        let mut recv = vec![0i32; 2 * q];
        let (pairs, ones) = (vec![&pair; q], vec![&one; q]);
        let displs: Vec<usize> = (0..q).map(|j| 8 * j).collect();
        let (a_pair, two_ones) = (vec![1; q], vec![2; q]);
        inter.scope(|s| {
            s.ialltoall((
                Typed::per_rank(&send[..], &pairs, &a_pair, &displs),
                Typed::per_rank(&mut recv[..], &ones, &two_ones, &displs),
            ))?
            .wait()
            .map(drop)
        })?;
        Ok(recv)
    })
    .unwrap();
    assert_eq!(got[0], [100, 101, 200, 201]);
    assert_eq!(got[2], [2, 3]);
    // three i32s expected where a pair comes
    let err = rpar::run(2, |world| {
        let inter = join(&world)?;
        let send = [1i32, 2, 3];
        let mut recv = [0i32; 3];
        let expect = if world.rank() == 0 { 3 } else { 2 };
        inter
            .alltoall((
                Typed::per_rank(&send[..], &[&pair], &[1], &[0]),
                Typed::per_rank(&mut recv[..], &[&one], &[expect], &[0]),
            ))
            .map(drop)
    })
    .unwrap_err();
    assert!(matches!(err, Error::TypeMismatch { .. }), "{err}");
}

/// A non-blocking allreduce across whose groups' leaders start late, one after the other: on
/// the lower group's other rank the operation waits in shared memory for its leader's
/// broadcast of the result, registered for a wake-up when it parks. The leader, starting late,
/// ends its local reduce first — whose end wakes that list, taking the registration — and then
/// waits for the other leader, so the result it posts much later must find the waiting rank
/// registered again (it was not: a false `Error::Deadlock` once the leader reached the barrier).
#[test]
fn a_wait_woken_for_an_earlier_step_registers_again() {
    rpar::run(3, |world| {
        let inter = join(&world)?;
        let late = Duration::from_millis(match world.rank() {
            0 => 80,
            1 => 40,
            _ => 0,
        });
        let mine = [world.rank() as u64 + 1];
        let mut theirs = [0u64];
        inter.scope(|s| {
            std::thread::sleep(late);
            s.iallreduce((&mine[..], &mut theirs[..]), Sum)?.wait()?;
            Ok(())
        })?;
        world.barrier()?;
        // group {0} gets 2 + 3, group {1, 2} gets 1
        let want = if world.rank() == 0 { 5 } else { 1 };
        assert_eq!(theirs, [want]);
        Ok(())
    })
    .unwrap();
}
