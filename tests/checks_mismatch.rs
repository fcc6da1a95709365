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
