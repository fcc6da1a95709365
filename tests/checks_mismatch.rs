//! Collective mismatch detection: ranks of one communicator that call different collectives get
//! `Error::CollectiveMismatch` naming the ranks and what each called, instead of a hang.

use rpar::{Error, Result};
use std::time::{Duration, Instant};

fn expect_mismatch(
    n: usize,
    program: impl Fn(rpar::Comm) -> Result<()> + Sync,
) -> Vec<(usize, String)> {
    let started = Instant::now();
    let err = rpar::run(n, program).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1));
    match err {
        Error::CollectiveMismatch { calls, .. } => calls,
        other => panic!("expected a collective mismatch, got {other:?}"),
    }
}

#[test]
fn barrier_on_one_rank_dup_on_the_other() {
    let calls = expect_mismatch(2, |w| {
        if w.rank() == 0 {
            w.barrier()?;
        } else {
            w.dup()?;
        }
        Ok(())
    });
    let text: Vec<String> = calls.iter().map(|(r, c)| format!("{r}: {c}")).collect();
    assert!(text.iter().any(|t| t.starts_with("0: barrier")), "{text:?}");
    assert!(text.iter().any(|t| t.starts_with("1: dup")), "{text:?}");
}

#[test]
fn a_rank_that_skips_a_collective_is_caught_by_the_sequence_number() {
    // rank 2 skips the first barrier and goes straight to split: the others are in barrier #0,
    // rank 2's split is its call #0
    let calls = expect_mismatch(3, |w| {
        if w.rank() != 2 {
            w.barrier()?;
        }
        w.split(Some(0), 0)?;
        Ok(())
    });
    assert!(
        calls.iter().any(|(r, c)| *r == 2 && c.starts_with("split")),
        "{calls:?}"
    );
}

#[test]
fn the_mismatch_is_every_ranks_error() {
    let seen = std::sync::Mutex::new(Vec::new());
    let _ = rpar::run(2, |w| {
        let r = if w.rank() == 0 {
            w.barrier()
        } else {
            w.dup().map(|_| ())
        };
        seen.lock().unwrap().push(r.unwrap_err());
        Ok(())
    });
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter()
            .all(|e| matches!(e, Error::CollectiveMismatch { .. })),
        "{seen:?}"
    );
}

#[test]
fn well_formed_programs_see_no_mismatch() -> Result<()> {
    // fast ranks run ahead into the next collective: their early messages must not count
    rpar::run(8, |w| {
        for i in 0..50 {
            if (w.rank() + i) % 3 == 0 {
                std::thread::yield_now();
            }
            w.barrier()?;
            if i % 10 == 0 {
                let d = w.dup()?;
                d.barrier()?;
            }
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn different_roots_of_one_bcast() {
    let calls = expect_mismatch(4, |w| {
        let mut x = [w.rank() as u32; 3];
        let root = if w.rank() == 2 { 1 } else { 0 };
        w.bcast(&mut x[..], root)
    });
    assert!(
        calls.iter().any(|(_, c)| c.contains("root 1"))
            && calls.iter().any(|(_, c)| c.contains("root 0")),
        "{calls:?}"
    );
}

#[test]
fn different_reduction_operators() {
    let calls = expect_mismatch(3, |w| {
        let x = w.rank() as u64;
        if w.rank() == 0 {
            w.allreduce(&x, rpar::Max)?;
        } else {
            w.allreduce(&x, rpar::Sum)?;
        }
        Ok(())
    });
    let text = format!("{calls:?}");
    assert!(text.contains("op Max") && text.contains("op Sum"), "{text}");
}

#[test]
fn different_counts_of_one_allgather() {
    let calls = expect_mismatch(2, |w| {
        let mine = vec![1u8; 4 + w.rank()];
        w.allgather(&mine[..]).map(|_| ())
    });
    let text = format!("{calls:?}");
    assert!(
        text.contains("4 bytes") && text.contains("5 bytes"),
        "{text}"
    );
}

#[test]
fn different_collectives_at_the_same_point() {
    let calls = expect_mismatch(4, |w| {
        if w.rank() == 3 {
            w.barrier()
        } else {
            w.allreduce(&1i32, rpar::Sum).map(|_| ())
        }
    });
    let text = format!("{calls:?}");
    assert!(
        text.contains("barrier") && text.contains("allreduce"),
        "{text}"
    );
}

/// Each rank's error of one call, collected while the run goes on.
type Seen = std::sync::Mutex<Vec<(usize, Error)>>;

/// Ranks naming different roots of a broadcast or a scatter, in two halves that each agree:
/// nobody reads a post or a message of the other half during the call, yet the run must end
/// with `CollectiveMismatch` every time, whoever comes first (was: `Ok` with each half holding
/// its own root's data, 20 of 20 bcast runs with delays, ~12% without, ~1% for scatter).
#[test]
fn two_halves_naming_different_roots_are_caught_every_time() {
    for (p, half) in [(2, 1), (4, 2), (3, 1)] {
        for delayed in [None, Some(0), Some(1), Some(p - 1)] {
            for scatter in [false, true] {
                for round in 0..6 {
                    let err = rpar::run(p, |w| {
                        if Some(w.rank()) == delayed {
                            std::thread::sleep(Duration::from_millis(2 + round % 3));
                        }
                        // each half names its first rank
                        let root = if w.rank() < half { 0 } else { half };
                        if scatter {
                            let all: Vec<u32> =
                                (0..p as u32).map(|i| i + 10 * w.rank() as u32).collect();
                            let mine = w.scatter(&all[..], root)?;
                            Ok(mine[0])
                        } else {
                            let mut x = [w.rank() as u32; 2];
                            w.bcast(&mut x[..], root)?;
                            Ok(x[0])
                        }
                    })
                    .unwrap_err();
                    let what = format!(
                        "{p} ranks, scatter {scatter}, rank {delayed:?} late, round {round}"
                    );
                    let Error::CollectiveMismatch { calls, .. } = err else {
                        panic!("{what}: expected a collective mismatch, got {err:?}");
                    };
                    assert!(!calls.is_empty(), "{what}");
                }
            }
        }
    }
}

/// Ranks 0-1 broadcast, ranks 2-3 scatter (same root), then all meet at a barrier: ranks 0-1
/// wait in the barrier for ranks 2-3, which wait in the scatter for rank 0 — which went past
/// its call #0 (a broadcast) without sending them anything. A collective mismatch, not a
/// deadlock (was: `Deadlock`, 15 of 15 runs).
#[test]
fn a_rank_waiting_for_one_that_went_past_the_call_is_a_mismatch() {
    for _ in 0..5 {
        let calls = expect_mismatch(4, |w| {
            if w.rank() < 2 {
                let mut x = [1u8; 4];
                w.bcast(&mut x[..], 0)?;
            } else {
                w.scatter(&[0u8; 4][..], 0)?;
            }
            w.barrier()
        });
        let text = format!("{calls:?}");
        assert!(text.contains("scatter"), "{text}");
        assert!(text.contains("bcast") || text.contains("barrier"), "{text}");
    }
}

/// A type mismatch inside a collective is every rank's error, not the error of the one or two
/// ranks that saw it and `Aborted` for the others.
#[test]
fn a_type_mismatch_inside_a_collective_is_every_ranks_error() {
    use rpar::Datatype;
    let column = rpar::TypeMap::vector(4, 1, 2, &i32::type_map())
        .expect("a valid vector")
        .commit();
    let floats = rpar::TypeMap::vector(4, 1, 2, &f32::type_map())
        .expect("a valid vector")
        .commit();
    for case in 0..2 {
        for p in [2, 4] {
            let seen = Seen::default();
            let err = rpar::run(p, |w| {
                let r = match case {
                    0 => {
                        let ty = if w.rank() == p - 1 { &floats } else { &column };
                        let mut m = [w.rank() as i32; 8];
                        if w.rank() == p - 1 {
                            let mut f = [0f32; 8];
                            w.bcast(rpar::Typed::new(&mut f, ty, 1), 0)
                        } else {
                            w.bcast(rpar::Typed::new(&mut m, ty, 1), 0)
                        }
                    }
                    _ if w.rank() == 0 => w.allreduce(&1.5f32, rpar::Sum).map(drop),
                    _ => w.allreduce(&1u32, rpar::Sum).map(drop),
                };
                if let Err(e) = r {
                    seen.lock().unwrap().push((w.rank(), e.clone()));
                    return Err(e);
                }
                Ok(())
            })
            .unwrap_err();
            let err = match err {
                Error::RankFailed { source, .. } => *source,
                err => err,
            };
            assert!(
                matches!(err, Error::TypeMismatch { .. }),
                "case {case}, p {p}: {err:?}"
            );
            let seen = seen.into_inner().unwrap();
            assert_eq!(
                seen.len(),
                p,
                "case {case}: every rank's call fails: {seen:?}"
            );
            assert!(
                seen.iter().all(|(_, e)| *e == err),
                "case {case}, p {p}: every rank gets the same error: {seen:?}"
            );
        }
    }
}

/// A mismatch in a call where nobody reads anybody (each rank names itself the root of a
/// broadcast): found while the ranks go on through many more calls on the communicator, before
/// they block for good (the last receive never matches: without the check in the run, a
/// deadlock would be reported instead).
#[test]
fn a_mismatch_is_found_while_the_ranks_go_on() {
    let calls = expect_mismatch(2, |w| {
        let mut x = [w.rank() as u8; 4];
        w.bcast(&mut x[..], w.rank())?;
        for _ in 0..1000 {
            w.allreduce(&1u32, rpar::Sum)?;
        }
        w.recv::<u8>(1 - w.rank(), 99).map(drop)
    });
    let text = format!("{calls:?}");
    assert!(text.contains("root 0") && text.contains("root 1"), "{text}");
}

/// The message-passing algorithms: a message of a collective call that is never received
/// means the ranks' calls differed (different roots of a binomial broadcast or a linear
/// scatter complete, leaving their stray messages behind).
#[test]
fn stray_messages_of_message_passing_collectives_are_a_mismatch() {
    for p in [2, 3, 4] {
        let err = rpar::run(p, |w| {
            let mut x = [w.rank() as u8; 4];
            let root = if w.rank() == 0 { 0 } else { 1 };
            w.using(rpar::Bcast::Binomial).bcast(&mut x[..], root)?;
            Ok(x)
        })
        .unwrap_err();
        assert!(
            matches!(err, Error::CollectiveMismatch { .. }),
            "{p} ranks: {err:?}"
        );
    }
}
