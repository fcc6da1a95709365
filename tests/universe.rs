//! Launching ranks: results in rank order, rank counts from 1 to 1024, and prompt aborts.

use rpar::{Error, Result, Universe};
use std::time::{Duration, Instant};

#[test]
fn results_come_back_in_rank_order() -> Result<()> {
    for p in [1usize, 2, 3, 8, 64] {
        let got = rpar::run(p, |w| Ok(w.rank() * 3))?;
        assert_eq!(got, (0..p).map(|r| r * 3).collect::<Vec<_>>());
    }
    Ok(())
}

#[test]
fn zero_ranks_is_an_error() {
    let err = Universe::new(0).run(|_| Ok(())).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
    assert!(err.to_string().contains("got 0"));
}

#[test]
fn a_thousand_ranks_run_on_two_cores() -> Result<()> {
    let got = Universe::new(1024).stack_size(256 * 1024).run(|w| {
        w.barrier()?;
        Ok(w.size())
    })?;
    assert!(got.iter().all(|&s| s == 1024));
    Ok(())
}

#[test]
fn ring_of_256_ranks_passes_a_token_around() -> Result<()> {
    let got = rpar::run(256, |w| {
        let (r, p) = (w.rank(), w.size());
        let mut token = 0u64;
        for _round in 0..20 {
            let mut next = 0u64;
            w.sendrecv(
                &(token + r as u64),
                (r + 1) % p,
                0,
                &mut next,
                (r + p - 1) % p,
                0,
            )?;
            token = next;
        }
        Ok(token)
    })?;
    // after 20 rounds rank r holds the sum of the 20 ranks before it (mod 256)
    for (r, &t) in got.iter().enumerate() {
        let want: u64 = (1..=20u64).map(|k| (r as u64 + 256 - k) % 256).sum();
        assert_eq!(t, want, "rank {r}");
    }
    Ok(())
}

#[test]
fn a_panic_aborts_every_blocked_rank_within_a_second() {
    let started = Instant::now();
    let err = rpar::run(8, |w| {
        if w.rank() == 5 {
            std::thread::sleep(Duration::from_millis(20));
            panic!("rank five gives up");
        }
        // everyone else waits for a message that never comes
        w.recv::<u8>(5, 0)?;
        Ok(())
    })
    .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    match err {
        Error::RankPanicked { rank, message } => {
            assert_eq!(rank, 5);
            assert!(message.contains("rank five gives up"));
        }
        other => panic!("expected RankPanicked, got {other:?}"),
    }
}

#[test]
fn an_error_returned_by_a_rank_aborts_the_run_with_that_error() {
    let err = rpar::run(4, |w| {
        if w.rank() == 2 {
            return Err(Error::user("input file missing"));
        }
        w.barrier()?;
        Ok(())
    })
    .unwrap_err();
    match &err {
        Error::RankFailed { rank: 2, source } => {
            assert_eq!(**source, Error::user("input file missing"))
        }
        other => panic!("expected RankFailed, got {other:?}"),
    }
    assert!(err.to_string().contains("rank 2") && err.to_string().contains("input file missing"));
}

#[test]
fn other_ranks_see_aborted_and_later_calls_fail_fast() {
    let seen = std::sync::Mutex::new(Vec::new());
    let _ = rpar::run(3, |w| {
        if w.rank() == 0 {
            panic!("boom");
        }
        let first = w.recv::<u8>(0, 0).unwrap_err();
        let again = w.send(&1u8, 0, 0).unwrap_err();
        seen.lock().unwrap().push((first, again));
        Ok(())
    });
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 2);
    for (first, again) in seen {
        for e in [first, again] {
            assert!(
                matches!(&e, Error::Aborted { rank: 0, message } if message == "boom"),
                "{e:?}"
            );
        }
    }
}

#[test]
fn a_rank_blocked_in_a_large_send_is_released_by_an_abort() {
    let started = Instant::now();
    let err = rpar::run(2, |w| {
        if w.rank() == 0 {
            w.send(&vec![1u8; 1 << 22][..], 1, 0)?; // rank 1 never receives it
        } else {
            std::thread::sleep(Duration::from_millis(30));
            panic!("receiver died");
        }
        Ok(())
    })
    .unwrap_err();
    assert!(
        matches!(err, Error::RankPanicked { rank: 1, .. }),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
}

/// A Linux limit from /proc, if readable.
fn proc_limit(path: &str) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// More ranks than the machine has threads for is an error before any thread starts, naming
/// the limit — never an abort of the process (std aborts when a thread's signal stack cannot be
/// mapped) nor a failure of a rank that never ran. Several times, and promptly.
#[test]
fn more_ranks_than_the_machine_allows_is_an_error_before_any_thread_starts() {
    let mut counts = vec![usize::MAX, 1 << 40];
    if let Some(pid_max) = proc_limit("/proc/sys/kernel/pid_max") {
        counts.push(pid_max + 1); // every thread takes a pid
    }
    if proc_limit("/proc/sys/vm/max_map_count").is_some_and(|m| m / 4 < 100_000) {
        counts.push(100_000); // each rank thread takes 4 memory maps
    }
    for _ in 0..3 {
        for &p in &counts {
            let start = Instant::now();
            let err = rpar::run(p, |w| {
                w.barrier()?;
                Ok(())
            })
            .unwrap_err();
            let Error::InvalidArgument { call, message } = &err else {
                panic!("{p} ranks: expected an invalid argument, got {err:?}");
            };
            assert_eq!(*call, "Universe::run");
            assert!(message.contains(&format!("{p} ranks")), "{message}");
            if cfg!(target_os = "linux") {
                assert!(message.contains("this machine allows at most"), "{message}");
                assert!(message.contains("run at most"), "{message}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{p} ranks took {:?}",
                start.elapsed()
            );
        }
    }
    // and the limit is no obstacle to a run that fits
    assert_eq!(rpar::run(3, |w| Ok(w.rank())).unwrap(), [0, 1, 2]);
}

/// A rank thread that cannot be started (here: a stack larger than any address space) ends
/// the run with that error, as the run's error — not as the failure of a rank that never ran.
#[test]
fn a_thread_that_cannot_start_is_the_runs_error() {
    let err = Universe::new(4)
        .stack_size(1 << 46)
        .run(|w| {
            w.barrier()?;
            Ok(())
        })
        .unwrap_err();
    let Error::InvalidArgument { call, message } = &err else {
        panic!("expected an invalid argument, got {err:?}");
    };
    assert_eq!(*call, "Universe::run");
    assert!(
        message.contains("could not start the thread of rank 0 of 4"),
        "{message}"
    );
}
