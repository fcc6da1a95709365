//! Fault injection: a rank that panics, or fails with an error, at any step of a shared-memory
//! collective or of a large point-to-point transfer leaves every other rank sound (no read of a
//! buffer that is gone, no write into one) and the run ends promptly with that rank's failure.
//!
//! Built only with `--cfg rpar_faults` (CI: `RUSTFLAGS="--cfg rpar_faults"`, natively and under
//! valgrind, which reports any access to freed memory): then every *fault point* inside rpar
//! (`rpar::fault`) can be told to fail. For each program below, a first run counts the points
//! each rank passes; then, for every rank and every point, one run makes that rank fail there —
//! once by panicking, once by returning an error.
#![cfg(rpar_faults)]

use rpar::fault::{Fault, Kind};
use rpar::{Comm, Datatype, Error, Result, Sum, Universe};
use std::time::{Duration, Instant};

/// Under valgrind (`RPAR_UNDER_VALGRIND`), fewer rank counts and smaller sizes.
fn under_valgrind() -> bool {
    std::env::var_os("RPAR_UNDER_VALGRIND").is_some()
}

/// The rank counts to try.
fn rank_counts() -> &'static [usize] {
    if under_valgrind() {
        &[2, 3]
    } else {
        &[2, 3, 4, 5]
    }
}

/// One program under test: its name, and the program given the element count to use.
type Program = (&'static str, fn(&Comm, usize) -> Result<()>);

/// Element counts (of `u64`): eager posts, lent posts (above 16 KiB), and the reductions in
/// blocks and shared rendezvous copies (above 256 KiB).
fn sizes() -> &'static [usize] {
    if under_valgrind() {
        &[1, 4 << 10, 40 << 10]
    } else {
        &[1, 4 << 10, 40 << 10, 160 << 10]
    }
}

fn data(w: &Comm, n: usize) -> Vec<u64> {
    (0..n as u64).map(|i| i + w.rank() as u64).collect()
}

const COLLECTIVES: &[Program] = &[
    ("barrier", |w, _| w.barrier()),
    ("bcast", |w, n| {
        let mut x = data(w, n);
        w.bcast(&mut x[..], w.size() - 1)
    }),
    ("reduce", |w, n| w.reduce(&data(w, n)[..], Sum, 1).map(drop)),
    ("allreduce", |w, n| {
        w.allreduce(&data(w, n)[..], Sum).map(drop)
    }),
    ("allreduce by a user op", |w, n| {
        let op = rpar::UserOp::commutative(|a: u64, b: u64| a ^ b);
        w.allreduce(&data(w, n)[..], op).map(drop)
    }),
    ("allgather", |w, n| {
        w.allgather(&data(w, n / w.size() + 1)[..]).map(drop)
    }),
    ("alltoall", |w, n| {
        let block = n / w.size() + 1;
        w.alltoall(&data(w, block * w.size())[..]).map(drop)
    }),
];

/// Large transfers between ranks 0 and 1 (the others wait at a barrier).
const TRANSFERS: &[Program] = &[
    ("send and recv_into", |w, n| match w.rank() {
        0 => w.send(&data(w, n)[..], 1, 0),
        1 => {
            let mut got = vec![0u64; n];
            w.recv_into(&mut got[..], 0, 0).map(drop)
        }
        _ => Ok(()),
    }),
    ("send and recv", |w, n| match w.rank() {
        0 => w.send(&data(w, n)[..], 1, 0),
        1 => w.recv::<u64>(0, 0).map(drop),
        _ => Ok(()),
    }),
    ("sendrecv both ways", |w, n| {
        if w.rank() > 1 {
            return Ok(());
        }
        let mut got = vec![0u64; n];
        let other = 1 - w.rank();
        w.sendrecv(&data(w, n)[..], other, 0, &mut got[..], other, 0)
            .map(drop)
    }),
    ("scoped isend and irecv_into", |w, n| match w.rank() {
        0 => {
            let mine = data(w, n);
            w.scope(|s| s.isend(&mine[..], 1, 0).map(drop))
        }
        1 => {
            let mut got = vec![0u64; n];
            let received = w.irecv_into(&mut got[..], 0, 0)?.wait();
            received.map(drop)
        }
        _ => Ok(()),
    }),
    ("typed send of a column", |w, n| {
        let column = rpar::TypeMap::vector(n, 1, 2, &u64::type_map())?.commit();
        match w.rank() {
            0 => w.send(rpar::Typed::new(&data(w, 2 * n), &column, 1), 1, 0),
            1 => {
                let mut got = vec![0u64; 2 * n];
                w.recv_into(rpar::Typed::new(&mut got, &column, 1), 0, 0)
                    .map(drop)
            }
            _ => Ok(()),
        }
    }),
];

/// Runs `program` on `p` ranks (with `fault`, if any), each rank ending at a barrier and
/// returning how many fault points it passed; with the time it took.
fn run(
    p: usize,
    n: usize,
    program: fn(&Comm, usize) -> Result<()>,
    fault: Option<Fault>,
) -> (Result<Vec<(usize, usize)>>, Duration) {
    let mut universe = Universe::new(p);
    if let Some(fault) = fault {
        universe = universe.inject(fault);
    }
    let started = Instant::now();
    let outcome = universe.run(|w| {
        program(&w, n)?;
        let passed = rpar::fault::passed();
        w.barrier()?;
        Ok(passed)
    });
    (outcome, started.elapsed())
}

/// Every point of every rank, for both kinds of failure: the run ends with that rank's failure,
/// promptly (or, if that rank passed fewer points this time — shared copies split their pieces
/// differently from run to run — completes).
fn every_fault_of(programs: &[Program]) {
    quiet_injected_panics();
    let mut tried = 0;
    for &(name, program) in programs {
        for &p in rank_counts() {
            for &n in sizes() {
                let (counted, _) = run(p, n, program, None);
                let counted = counted.unwrap_or_else(|e| panic!("{name}, {p} ranks, {n}: {e}"));
                for (rank, &(all, errors)) in counted.iter().enumerate() {
                    for (kind, points) in [(Kind::Panic, all), (Kind::Error, errors)] {
                        for nth in 0..points {
                            let fault = Fault { rank, nth, kind };
                            let (outcome, took) = run(p, n, program, Some(fault));
                            let what = format!("{name}, {p} ranks, {n} elements, {fault:?}");
                            check(&what, fault, outcome, took);
                            tried += 1;
                        }
                    }
                }
            }
        }
    }
    println!("{tried} faults injected");
}

/// Leaves the injected panics unprinted (there are thousands); any other panic prints as usual.
fn quiet_injected_panics() {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info.payload().downcast_ref::<String>();
            if !message.is_some_and(|m| m.starts_with("injected panic")) {
                default(info);
            }
        }));
    });
}

fn check(what: &str, fault: Fault, outcome: Result<Vec<(usize, usize)>>, took: Duration) {
    let limit = Duration::from_secs(if under_valgrind() { 60 } else { 10 });
    assert!(took < limit, "{what}: took {took:?}");
    match (fault.kind, outcome) {
        (_, Ok(passed)) => {
            // the rank never got that far this time
            let (all, errors) = passed[fault.rank];
            let reached = if fault.kind == Kind::Panic {
                all
            } else {
                errors
            };
            assert!(
                reached <= fault.nth,
                "{what}: the fault point passed, yet Ok"
            );
        }
        (Kind::Panic, Err(Error::RankPanicked { rank, message })) => {
            assert_eq!(rank, fault.rank, "{what}: {message}");
            assert!(message.starts_with("injected panic"), "{what}: {message}");
        }
        (Kind::Error, Err(Error::RankFailed { rank, source })) => {
            assert_eq!(rank, fault.rank, "{what}: {source}");
            assert!(
                matches!(
                    *source,
                    Error::InvalidArgument {
                        call: "fault injection",
                        ..
                    }
                ),
                "{what}: {source}"
            );
        }
        (_, Err(e)) => panic!("{what}: the run ended with {e:?}"),
    }
}

#[test]
fn a_rank_failing_at_any_step_of_a_shared_memory_collective_ends_the_run_soundly() {
    every_fault_of(COLLECTIVES);
}

#[test]
fn a_rank_failing_at_any_step_of_a_large_transfer_ends_the_run_soundly() {
    every_fault_of(TRANSFERS);
}
