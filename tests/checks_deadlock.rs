//! Deadlock detection: each classic deadlock ends the run with `Error::Deadlock` listing what
//! every rank waits for, within a second; a busy, racy, deadlock-free program never reports one.

use rpar::{BlockedCall, Error, Result, Universe, ANY_SOURCE, ANY_TAG};
use std::time::{Duration, Instant};

fn expect_deadlock<R: Send>(
    n: usize,
    program: impl Fn(rpar::Comm) -> Result<R> + Sync,
) -> (Vec<BlockedCall>, Vec<usize>) {
    let started = Instant::now();
    let err = rpar::run(n, program).map(|_| ()).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    match err {
        Error::Deadlock { blocked, finished } => (blocked, finished),
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn both_ranks_receive_first() {
    let (blocked, finished) = expect_deadlock(2, |w| {
        w.recv::<u8>(1 - w.rank(), 7)?;
        w.send(&1u8, 1 - w.rank(), 7)
    });
    assert!(finished.is_empty());
    assert_eq!(blocked.len(), 2);
    for (r, b) in blocked.iter().enumerate() {
        assert_eq!(
            (b.rank, b.call.as_str(), b.peer, b.tag),
            (r, "recv", Some(1 - r), Some(7))
        );
    }
    let text = Error::Deadlock { blocked, finished }.to_string();
    assert!(
        text.contains("rank 0 is blocked in recv with rank 1, tag 7"),
        "{text}"
    );
}

#[test]
fn a_cycle_of_receives_around_a_ring() {
    let (blocked, _) = expect_deadlock(5, |w| {
        let p = w.size();
        w.recv::<u32>((w.rank() + p - 1) % p, ANY_TAG)?;
        Ok(())
    });
    assert_eq!(blocked.len(), 5);
    assert!(blocked
        .iter()
        .all(|b| b.peer == Some((b.rank + 4) % 5) && b.tag.is_none()));
}

#[test]
fn waiting_for_a_rank_that_already_returned() {
    let (blocked, finished) = expect_deadlock(3, |w| {
        if w.rank() == 2 {
            return Ok(());
        }
        w.recv::<u8>(ANY_SOURCE, 0)?;
        Ok(())
    });
    assert_eq!(finished, [2]);
    assert_eq!(blocked.iter().map(|b| b.rank).collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn a_collective_that_one_rank_never_enters() {
    let (blocked, finished) = expect_deadlock(4, |w| {
        if w.rank() != 3 {
            w.barrier()?;
        }
        Ok(())
    });
    assert_eq!(finished, [3]);
    assert!(
        blocked.iter().all(|b| b.call.contains("collective")),
        "{blocked:?}"
    );
}

#[test]
fn a_wait_on_a_receive_that_never_comes() {
    let (blocked, _) = expect_deadlock(2, |w| {
        let mut buf = [0u8; 4];
        let r = w.irecv_into(&mut buf[..], 1 - w.rank(), 1)?;
        r.wait()?;
        Ok(())
    });
    assert!(blocked.iter().all(|b| b.call == "wait" && b.tag == Some(1)));
}

#[test]
fn large_send_to_a_rank_that_waits_elsewhere() {
    let (blocked, _) = expect_deadlock(2, |w| {
        if w.rank() == 0 {
            w.send(&vec![0u8; 1 << 20][..], 1, 0)?;
        } else {
            w.recv::<u8>(0, 99)?; // wrong tag: never matches
        }
        Ok(())
    });
    assert_eq!(blocked[0].call, "send");
    assert_eq!(blocked[1].tag, Some(99));
}

#[test]
fn detection_can_be_turned_off() {
    // without the watchdog, the deadlocked ranks are released only by another rank's failure
    let err = Universe::new(3)
        .deadlock_detection(false)
        .run(|w| {
            if w.rank() == 2 {
                std::thread::sleep(Duration::from_millis(300));
                return Err(Error::user("giving up"));
            }
            w.recv::<u8>(1 - w.rank(), 0)?;
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(err, Error::RankFailed { rank: 2, .. }), "{err:?}");
}

/// A cheap deterministic random stream per rank.
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

#[test]
fn no_false_positive_under_stress() -> Result<()> {
    // 256 ranks on 2 cores, random delays, wildcard receives, nested communicators: every rank
    // sends `rounds` messages to random peers of a sub-communicator and receives what the others
    // announced, so the program is deadlock-free but full of parking and waking.
    let results = rpar::run(256, |w| {
        let half = w.split(Some((w.rank() % 2) as u32), 0)?.unwrap();
        let quarter = half.split(Some((half.rank() % 2) as u32), 0)?.unwrap();
        let mut seed = w.rank() as u64 + 1;
        let phases = [&w, &half, &quarter, &w, &quarter, &half].repeat(6);
        for c in phases {
            let (r, p) = (c.rank(), c.size());
            let rounds = 6;
            // each rank sends `rounds` messages to (r + k) % p, k = 1..=rounds
            for k in 1..=rounds {
                if lcg(&mut seed).is_multiple_of(4) {
                    std::thread::sleep(Duration::from_micros(lcg(&mut seed) % 2000));
                }
                c.send(&(r as u32), (r + k) % p, 5)?;
            }
            let mut got = 0;
            for _ in 0..rounds {
                let (v, st) = c.recv::<u32>(ANY_SOURCE, ANY_TAG)?;
                assert_eq!(v[0] as usize, st.source);
                got += 1;
            }
            assert_eq!(got, rounds);
            c.barrier()?;
        }
        Ok(())
    })?;
    assert_eq!(results.len(), 256);
    Ok(())
}
