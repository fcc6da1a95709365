//! The shared-memory collective algorithms beyond the sequential references of
//! `collective_reduce.rs` and `collective_move.rs`: a root or contributor that runs many calls
//! ahead of a slow reader, communicators that share ranks, and what happens on bad programs —
//! a type or call mismatch is an error, a rank that never comes is a deadlock, a rank that
//! fails aborts the others promptly, also while they read its lent buffer.

use rpar::{Allgather, Allreduce, Alltoall, Barrier, Bcast, Error, Reduce, Result, Sum};
use std::time::{Duration, Instant};

/// How soon a failure must end a run: a second, or a minute under valgrind (CI sets
/// `RPAR_UNDER_VALGRIND`), which runs the same program some fifty times slower.
fn promptly() -> Duration {
    if std::env::var_os("RPAR_UNDER_VALGRIND").is_some() {
        Duration::from_secs(60)
    } else {
        Duration::from_secs(1)
    }
}

/// Far more calls than the arena has slots, with one rank slowed down now and then: every
/// call's data must arrive intact although the fast ranks post ahead.
#[test]
fn fast_ranks_run_ahead_of_a_slow_one() -> Result<()> {
    for p in [2, 3, 5, 8] {
        rpar::run(p, |w| {
            let r = w.rank();
            for i in 0..200u64 {
                if r == p - 1 && i.is_multiple_of(17) {
                    std::thread::sleep(Duration::from_micros(300));
                }
                let mut v = [i * 10 + r as u64; 3];
                w.using(Bcast::SharedMemory)
                    .bcast(&mut v[..], (i as usize) % p)?;
                assert_eq!(v, [i * 10 + (i % p as u64); 3], "bcast {i}");
                let mut x = [i + r as u64; 2];
                w.using(Reduce::SharedMemory)
                    .reduce(rpar::InPlace(&mut x[..]), Sum, 0)?;
                if r == 0 {
                    let want = (0..p as u64).map(|q| i + q).sum::<u64>();
                    assert_eq!(x, [want; 2], "reduce {i}");
                }
                let all = w
                    .using(Allgather::SharedMemory)
                    .allgather(&(i * 100 + r as u64))?;
                assert!(all
                    .iter()
                    .enumerate()
                    .all(|(q, &v)| v == i * 100 + q as u64));
            }
            Ok(())
        })?;
    }
    Ok(())
}

/// Large (lent) and small (copied) posts alternate, on communicators that overlap.
#[test]
fn overlapping_communicators_and_both_sizes() -> Result<()> {
    rpar::run(6, |w| {
        let r = w.rank();
        let half = w.split(Some((r % 2) as u32), r as i32)?.expect("a colour");
        for (i, n) in [1usize, 50_000, 3, 20_000, 0, 70_000]
            .into_iter()
            .enumerate()
        {
            let mine: Vec<u32> = (0..n).map(|k| (k * 7 + r + i) as u32).collect();
            let got = w.using(Allreduce::SharedMemory).allreduce(&mine[..], Sum)?;
            let want: Vec<u32> = (0..n)
                .map(|k| (0..6).map(|q| (k * 7 + q + i) as u32).sum())
                .collect();
            assert_eq!(got, want, "world n={n}");
            let got = half
                .using(Allreduce::SharedMemory)
                .allreduce(&mine[..], Sum)?;
            let want: Vec<u32> = (0..n)
                .map(|k| {
                    (0..6)
                        .filter(|q| q % 2 == r % 2)
                        .map(|q| (k * 7 + q + i) as u32)
                        .sum()
                })
                .collect();
            assert_eq!(got, want, "half n={n}");
            let send: Vec<u32> = (0..n.min(9_000) * 6).map(|k| (k + r) as u32).collect();
            let got = w.using(Alltoall::SharedMemory).alltoall(&send[..])?;
            let m = send.len() / 6;
            for (q, block) in got
                .chunks(m.max(1))
                .enumerate()
                .take(if m == 0 { 0 } else { 6 })
            {
                let want: Vec<u32> = (r * m..(r + 1) * m).map(|k| (k + q) as u32).collect();
                assert_eq!(block, &want[..], "alltoall from {q}");
            }
            half.using(Barrier::SharedMemory).barrier()?;
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn different_element_types_are_a_type_mismatch() {
    let err = rpar::run(2, |w| {
        if w.rank() == 0 {
            w.using(Allgather::SharedMemory).allgather(&1u64).map(drop)
        } else {
            w.using(Allgather::SharedMemory)
                .allgather(&1.0f64)
                .map(drop)
        }
    })
    .unwrap_err();
    assert!(err.to_string().contains("type mismatch"), "{err}");
}

#[test]
fn different_calls_are_a_collective_mismatch() {
    let started = Instant::now();
    let err = rpar::run(3, |w| {
        if w.rank() == 1 {
            w.using(Allreduce::SharedMemory)
                .allreduce(&1u32, rpar::Max)
                .map(drop)
        } else {
            w.using(Allreduce::SharedMemory)
                .allreduce(&1u32, Sum)
                .map(drop)
        }
    })
    .unwrap_err();
    assert!(started.elapsed() < promptly());
    let Error::CollectiveMismatch { calls, .. } = err else {
        panic!("expected a collective mismatch, got {err:?}");
    };
    let text = format!("{calls:?}");
    assert!(text.contains("op Max") && text.contains("op Sum"), "{text}");
}

#[test]
fn a_rank_that_never_comes_is_a_deadlock() {
    let started = Instant::now();
    let err = rpar::run(4, |w| {
        if w.rank() != 2 {
            w.using(Barrier::SharedMemory).barrier()?;
        }
        Ok(())
    })
    .unwrap_err();
    assert!(started.elapsed() < promptly());
    let Error::Deadlock { blocked, finished } = err else {
        panic!("expected a deadlock, got {err:?}");
    };
    assert_eq!(finished, [2]);
    assert_eq!(blocked.len(), 3);
    assert!(
        blocked
            .iter()
            .all(|b| b.call.contains("barrier") && b.peer == Some(2)),
        "{blocked:?}"
    );
}

/// Ranks 1.. lend a large buffer that rank 0 reads, and rank 0 fails instead: the lenders must
/// come back with the abort error at once (not wait for a reader that will never read).
#[test]
fn a_failing_rank_releases_the_lenders() {
    let started = Instant::now();
    let err = rpar::run(4, |w| {
        let mut v = vec![w.rank() as u64; 100_000];
        if w.rank() == 0 {
            std::thread::sleep(Duration::from_millis(20));
            return Err(Error::user("rank 0 gives up"));
        }
        w.using(Reduce::SharedMemory)
            .reduce(rpar::InPlace(&mut v[..]), Sum, 0)
    })
    .unwrap_err();
    assert!(started.elapsed() < promptly());
    assert!(err.to_string().contains("rank 0 gives up"), "{err}");
}

/// A rank that panics while the others read its lent buffer: nobody reads freed memory (run
/// under valgrind in CI), everybody stops.
#[test]
fn a_panic_during_a_lent_allreduce_stops_everyone() {
    for victim in 0..3 {
        let err = rpar::run(3, |w| {
            let v = vec![w.rank() as u64; 50_000];
            for i in 0..20 {
                if w.rank() == victim && i == 7 {
                    panic!("rank {victim} breaks down");
                }
                let got = w.using(Allreduce::SharedMemory).allreduce(&v[..], Sum)?;
                assert_eq!(got[0], 3);
            }
            Ok(())
        })
        .unwrap_err();
        assert!(err.to_string().contains("breaks down"), "{err}");
    }
}

/// A user operator that panics inside a large allreduce or reduce (the combining step reads
/// every rank's lent input in place): the panicking rank unwound and freed its input while
/// others still read it (SIGSEGV in 4 of 4 runs at 8 Mi elements). Now the run ends with that
/// rank's panic and nobody touches freed memory (valgrind in CI).
#[test]
fn a_user_operator_that_panics_while_others_read_its_input() {
    let op = rpar::UserOp::commutative(|a: u64, b: u64| {
        if a == u64::MAX || b == u64::MAX {
            panic!("bad operand")
        }
        a.wrapping_add(b)
    });
    let op = &op;
    let n = if std::env::var_os("RPAR_UNDER_VALGRIND").is_some() {
        100_000
    } else {
        2 << 20
    };
    for reduce in [false, true] {
        for p in [2, 4] {
            let started = Instant::now();
            let err = rpar::run(p, |w| {
                let mut x = vec![w.rank() as u64 + 1; n];
                if w.rank() == 1 {
                    x[0] = u64::MAX;
                }
                if reduce {
                    w.reduce(&x[..], op, p - 1)
                        .map(|v| v.map_or(0, |v| v.len()))
                } else {
                    w.allreduce(&x[..], op).map(|v| v.len())
                }
            })
            .unwrap_err();
            assert!(
                matches!(&err, Error::RankPanicked { message, .. } if message == "bad operand"),
                "{err:?}"
            );
            assert!(
                started.elapsed() < promptly() * 4,
                "{:?}",
                started.elapsed()
            );
        }
    }
}

/// Many ranks on two cores: the waits park and wake without losing a wake-up.
#[test]
fn many_ranks_park_and_wake() -> Result<()> {
    for p in [17, 64] {
        let sums = rpar::run(p, |w| {
            let mut total = 0u64;
            for i in 0..30u64 {
                if (w.rank() as u64 + i).is_multiple_of(11) {
                    std::thread::sleep(Duration::from_micros(200));
                }
                total += w
                    .using(Allreduce::SharedMemory)
                    .allreduce(&(w.rank() as u64), Sum)?;
                w.using(Barrier::SharedMemory).barrier()?;
            }
            Ok(total)
        })?;
        let once = (p * (p - 1) / 2) as u64;
        assert!(sums.iter().all(|&s| s == 30 * once));
    }
    Ok(())
}

/// Communicators made and dropped in a loop, each used for one shared-memory broadcast whose
/// root returns at once and drops its communicator while the others may not have looked at it
/// yet: every broadcast must still arrive (and the arenas must not pile up: each is freed by
/// the last member to drop it).
#[test]
fn communicators_come_and_go() -> Result<()> {
    rpar::run(4, |w| {
        for i in 0..300u32 {
            let d = w.dup()?;
            let mut v = [if d.rank() == 1 { i } else { u32::MAX }; 2];
            d.using(Bcast::SharedMemory).bcast(&mut v[..], 1)?;
            assert_eq!(v, [i; 2]);
        }
        Ok(())
    })?;
    Ok(())
}

/// Ranks naming different roots of one broadcast: a root reads nobody's post, so the ranks
/// look at their neighbour's call as well. Rank 2 comes late and names itself root: its
/// neighbour, rank 0, posted long before as the root it names.
#[test]
fn different_roots_are_caught_by_a_neighbour() {
    let err = rpar::run(3, |w| {
        let root = if w.rank() == 2 {
            std::thread::sleep(Duration::from_millis(50));
            2
        } else {
            0
        };
        let mut v = [w.rank() as u8; 4];
        w.using(Bcast::SharedMemory).bcast(&mut v[..], root)
    })
    .unwrap_err();
    let Error::CollectiveMismatch { calls, .. } = err else {
        panic!("expected a collective mismatch, got {err:?}");
    };
    let text = format!("{calls:?}");
    assert!(text.contains("root 0") && text.contains("root 2"), "{text}");
}
