//! Non-blocking collectives (MPI_Ibarrier, MPI_Iallreduce, …, started in a `Scope`): every one
//! against its blocking twin for many rank counts and algorithms, several in flight at once
//! and between blocking calls, mixed with point-to-point requests in `wait_all`/`wait_any`, the
//! overlap (others complete while a rank computes), and soundness (a leaked request, a panic).

use rpar::{
    Allgather, Allreduce, Alltoall, Bcast, Comm, Counts, Error, Gather, InPlace, Result, Scatter,
    Sum, Varying,
};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const RANKS: [usize; 6] = [1, 2, 3, 4, 5, 8];

fn every_rank_count(f: impl Fn(&Comm) -> Result<()> + Sync) {
    for p in RANKS {
        rpar::run(p, |w| f(&w)).unwrap_or_else(|e| panic!("{p} ranks: {e}"));
    }
}

fn data(w: &Comm, n: usize, salt: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| i * 7 + w.rank() as u64 * 1000 + salt)
        .collect()
}

#[test]
fn each_nonblocking_collective_equals_its_blocking_twin() {
    every_rank_count(|w| {
        let p = w.size();
        for n in [1, 5, 3000] {
            // allreduce, by two algorithms
            let mine = data(w, n, 1);
            let want = w.allreduce(&mine[..], Sum)?;
            for alg in [Allreduce::Auto, Allreduce::RecursiveDoubling] {
                let mut got = vec![0u64; n];
                w.using(alg).scope(|s| {
                    s.iallreduce((&mine[..], &mut got[..]), Sum)?
                        .wait()
                        .map(drop)
                })?;
                assert_eq!(got, want, "iallreduce {alg:?} n={n}");
            }
            // reduce, in place at the root
            let mut acc = mine.clone();
            w.scope(|s| {
                s.ireduce(InPlace(&mut acc[..]), Sum, p - 1)?
                    .wait()
                    .map(drop)
            })?;
            if w.rank() == p - 1 {
                assert_eq!(acc, want, "ireduce");
            }
            // scan and exscan
            let scanned = w.scan(&mine[..], Sum)?;
            let mut got = vec![0u64; n];
            w.scope(|s| s.iscan((&mine[..], &mut got[..]), Sum)?.wait().map(drop))?;
            assert_eq!(got, scanned, "iscan");
            let ex = w.exscan(&mine[..], Sum)?;
            let mut got = vec![0u64; n];
            w.scope(|s| s.iexscan((&mine[..], &mut got[..]), Sum)?.wait().map(drop))?;
            if let Some(ex) = ex {
                assert_eq!(got, ex, "iexscan");
            }
            // bcast, by two algorithms
            for alg in [Bcast::Auto, Bcast::Binomial] {
                let mut b = data(w, n, 2);
                w.using(alg)
                    .scope(|s| s.ibcast(&mut b[..], p / 2)?.wait().map(drop))?;
                let mut want = data(w, n, 2);
                w.bcast(&mut want[..], p / 2)?;
                assert_eq!(b, want, "ibcast {alg:?}");
            }
            // gather / scatter / allgather / alltoall, plain and v
            let all = w.allgather(&mine[..])?;
            for alg in [Gather::Auto, Gather::Binomial] {
                let mut got = vec![0u64; n * p];
                w.using(alg)
                    .scope(|s| s.igather((&mine[..], &mut got[..]), 0)?.wait().map(drop))?;
                if w.rank() == 0 {
                    assert_eq!(got, all, "igather {alg:?}");
                }
            }
            for alg in [Scatter::Auto, Scatter::Binomial] {
                let mut got = vec![0u64; n];
                w.using(alg).scope(|s| {
                    s.iscatter((&all[..], &mut got[..]), 1 % p)?
                        .wait()
                        .map(drop)
                })?;
                // every rank's `all` is the same: the root's block for this rank is in it too
                let block = w.rank() * n..(w.rank() + 1) * n;
                assert_eq!(got, all[block], "iscatter {alg:?}");
            }
            for alg in [Allgather::Auto, Allgather::Ring] {
                let mut got = vec![0u64; n * p];
                w.using(alg)
                    .scope(|s| s.iallgather((&mine[..], &mut got[..]))?.wait().map(drop))?;
                assert_eq!(got, all, "iallgather {alg:?}");
            }
            let send = data(w, n * p, 3);
            let want = w.alltoall(&send[..])?;
            for alg in [Alltoall::Auto, Alltoall::Pairwise] {
                let mut got = vec![0u64; n * p];
                w.using(alg)
                    .scope(|s| s.ialltoall((&send[..], &mut got[..]))?.wait().map(drop))?;
                assert_eq!(got, want, "ialltoall {alg:?}");
            }
            // v-forms: rank i contributes i + 1 values
            let counts: Vec<usize> = (1..=p).collect();
            let mine_v = data(w, w.rank() + 1, 4);
            let want = w.allgather((&mine_v[..], Counts(&counts)))?;
            let mut got = vec![0u64; want.len()];
            w.scope(|s| {
                s.iallgather((&mine_v[..], Varying::packed(&mut got[..], &counts)))?
                    .wait()
                    .map(drop)
            })?;
            assert_eq!(got, want, "iallgatherv");
            // reduce_scatter in place
            let mut v = data(w, 2 * p, 5);
            let want = w.reduce_scatter(&v[..], Sum)?;
            w.scope(|s| {
                s.ireduce_scatter(InPlace(&mut v[..]), Sum)?
                    .wait()
                    .map(drop)
            })?;
            assert_eq!(&v[..2], &want[..], "ireduce_scatter");
        }
        // and a barrier
        w.scope(|s| s.ibarrier()?.wait().map(drop))
    });
}

#[test]
fn several_in_flight_at_once_and_between_blocking_calls() {
    every_rank_count(|w| {
        let p = w.size() as u64;
        let r = w.rank() as u64;
        let (mut a, mut b, mut c) = ([r; 4], [0u64; 4], [r * 2]);
        w.scope(|s| {
            let first = s.iallreduce(InPlace(&mut a[..]), Sum)?;
            let second = s.ibcast(&mut b[..], 0)?;
            // a blocking collective while both are in flight
            let total = w.allreduce(&1u64, Sum)?;
            assert_eq!(total, p);
            let third = s.iallreduce(InPlace(&mut c[..]), Sum)?;
            // completed out of order
            third.wait()?;
            second.wait()?;
            first.wait()?;
            Ok(())
        })?;
        let sum: u64 = (0..p).sum();
        assert_eq!((a, c), ([sum; 4], [2 * sum]));
        Ok(())
    });
}

#[test]
fn collective_requests_mix_with_point_to_point_ones() {
    every_rank_count(|w| {
        let p = w.size();
        let (r, next, prev) = (w.rank(), (w.rank() + 1) % p, (w.rank() + p - 1) % p);
        let mut total = [r as u32];
        let mut from_prev = [0u32];
        let mut all = vec![0u32; p];
        let mine = [r as u32];
        w.scope(|s| {
            let reqs = vec![
                s.irecv_into(&mut from_prev[..], prev, 7)?,
                s.iallreduce(InPlace(&mut total[..]), Sum)?,
                s.isend(&mine[..], next, 7)?,
                s.iallgather((&mine[..], &mut all[..]))?,
            ];
            let statuses = rpar::wait_all(reqs)?;
            assert_eq!(statuses[0].source, prev);
            Ok(())
        })?;
        assert_eq!(from_prev[0] as usize, prev);
        assert_eq!(total[0] as usize, p * (p - 1) / 2);
        assert_eq!(all, (0..p as u32).collect::<Vec<_>>());
        // wait_any over a barrier and a receive: both complete, with their own indices
        let mut x = 0u8;
        w.scope(|s| {
            let mut reqs = [s.ibarrier()?, s.irecv_into(&mut x, prev, 8)?];
            w.send(&9u8, next, 8)?;
            let mut seen = Vec::new();
            while let Some((i, _)) = rpar::wait_any(&mut reqs)? {
                seen.push(i);
            }
            seen.sort_unstable();
            assert_eq!(seen, [0, 1]);
            Ok(())
        })?;
        assert_eq!(x, 9);
        Ok(())
    });
}

/// The overlap: rank 0 starts an allreduce and computes (no rpar calls) for longer than the
/// collective takes; the other ranks complete theirs while it computes, and rank 0's own part
/// finishes at its next test. (In-process, the default algorithm posts rank 0's contribution
/// when it starts.)
#[test]
fn the_others_complete_while_a_rank_computes() {
    for p in [2, 3, 4] {
        let done = Mutex::new(Vec::new());
        let compute = Duration::from_millis(200);
        rpar::run(p, |w| {
            let mut v = [w.rank() as u64 + 1; 64];
            let started = Instant::now();
            w.scope(|s| {
                let mut req = s.iallreduce(InPlace(&mut v[..]), Sum)?;
                if w.rank() == 0 {
                    let until = Instant::now() + compute;
                    while Instant::now() < until {
                        std::hint::spin_loop(); // computing: no rpar call
                    }
                    let first_test = req.test()?;
                    assert!(
                        first_test.is_some(),
                        "its own part finishes at its first test"
                    );
                } else {
                    req.wait()?;
                }
                Ok(())
            })?;
            done.lock().unwrap().push((w.rank(), started.elapsed()));
            let want = (1..=p as u64).sum::<u64>();
            assert_eq!(v, [want; 64]);
            Ok(())
        })
        .unwrap();
        let done = done.into_inner().unwrap();
        for &(rank, took) in &done {
            if rank != 0 {
                assert!(
                    took < compute / 2,
                    "{p} ranks: rank {rank} waited {took:?} for rank 0, which computed for {compute:?}"
                );
            }
        }
    }
}

#[test]
fn a_leaked_request_is_completed_by_its_scope() {
    every_rank_count(|w| {
        let mut v = vec![w.rank() as u64; 1 << 12];
        w.scope(|s| {
            std::mem::forget(s.iallreduce(InPlace(&mut v[..]), Sum)?);
            Ok(())
        })?;
        let p = w.size() as u64;
        assert!(v.iter().all(|&x| x == p * (p - 1) / 2));
        drop(v);
        w.barrier()
    });
}

#[test]
fn a_panic_with_collectives_in_flight_ends_the_run_with_it() {
    for p in [2, 3] {
        let started = Instant::now();
        let err = rpar::run(p, |w| {
            let mut v = vec![w.rank() as u64; 1 << 13]; // lent, not copied
            w.scope(|s| {
                let _req = s.iallreduce(InPlace(&mut v[..]), Sum)?;
                if w.rank() == 1 {
                    panic!("rank 1 breaks down");
                }
                Ok(())
            })
        })
        .unwrap_err();
        assert!(
            matches!(&err, Error::RankPanicked { rank: 1, message } if message.contains("breaks down")),
            "{err:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

#[test]
fn nonblocking_neighbourhood_collectives_equal_the_blocking_ones() {
    use rpar::Neighborhood;
    for p in [4, 6, 9] {
        rpar::run(p, |world| {
            let mut dims = [0usize; 2];
            rpar::dims_create(p, &mut dims)?;
            let torus = rpar::CartComm::create(&world, dims, [true, false], false)?.unwrap();
            let r = torus.rank() as u32;
            let mine = [r, r + 100];
            let (mut want, mut got) = ([0u32; 8], [0u32; 8]);
            torus.neighbor_allgather(&mine, &mut want)?;
            let send: Vec<u32> = (0..4).map(|k| r * 10 + k).collect();
            let (mut want2, mut got2) = ([u32::MAX; 4], [u32::MAX; 4]);
            torus.neighbor_alltoall(&send, &mut want2, 1)?;
            torus.comm().scope(|s| {
                let a = torus.ineighbor_allgather(s, &mine, &mut got)?;
                let b = torus.ineighbor_alltoall(s, &send, &mut got2, 1)?;
                rpar::wait_all(vec![b, a]).map(drop)
            })?;
            assert_eq!((got, got2), (want, want2));
            // a scope of another communicator is refused
            let err = world.scope(|s| torus.ineighbor_allgather(s, &mine, &mut got).map(drop));
            assert!(matches!(err, Err(Error::InvalidArgument { .. })), "{err:?}");
            Ok(())
        })
        .unwrap();
    }
}
