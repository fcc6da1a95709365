//! The MPI transport, end to end (cargo feature `mpi`; `cargo test --features mpi --test mpi`).
//!
//! Run by cargo (no MPI launcher), this program starts itself under `mpiexec -n 1, 2, 3, 4`
//! (`RPAR_MPIEXEC` names another launcher, with its options: `mpiexec.openmpi --oversubscribe`)
//! and checks that every job succeeds, then that a job whose rank fails ends promptly, non-zero,
//! with that rank's message; with `RPAR_OTHER_MPIEXEC` (the launcher of another MPI than the one
//! this binary is linked to), that a job it starts says the binary was built for another MPI. Started by the
//! launcher, each process runs the checks as one rank: point-to-point (every size path,
//! wildcards, probe, requests, derived datatypes, padded structs), every collective with every
//! algorithm against a sequential reference, split and dup, the results of a run, and the
//! cross-checks against MPI itself — type maps as MPI datatypes (size, extent, true extent,
//! packed bytes) and Cartesian topologies (`MPI_Dims_create`, `MPI_Cart_coords`,
//! `MPI_Cart_shift`, `MPI_Cart_sub`). A traced job writes a trace per rank and run, whose
//! arrows join across the ranks' files and whose collective spans name the algorithm that ran
//! (`Mpi` where `Auto` handed the call to MPI's own collective).

use rpar::mpi::rsmpi::ffi;
use rpar::mpi::rsmpi::traits::AsRaw;
use rpar::mpi::MpiDatatype;
use rpar::{
    Allgather, Allreduce, Alltoall, Barrier, BasicType, Bcast, CartComm, Comm, Datatype, Gather,
    Max, Order, Reduce, ReduceScatter, Scan, Scatter, SendMode, Shift, Sum, TypeMap, UserOp,
};
use std::fmt::Debug;
use std::process::Command;

#[path = "common/collective_mix.rs"]
mod collective_mix;
#[path = "common/direct_posted.rs"]
mod direct_posted;
#[path = "common/groups_checks.rs"]
mod groups_checks;
#[path = "common/idup_checks.rs"]
mod idup_checks;
#[path = "common/intercomm_checks.rs"]
mod intercomm_checks;
#[path = "common/neighbor_w_checks.rs"]
mod neighbor_w_checks;
#[path = "common/p2p_more.rs"]
mod p2p_more;
#[path = "common/reordered.rs"]
mod reordered;
#[path = "common/split_mix.rs"]
mod split_mix;
#[path = "common/traffic_mix.rs"]
mod traffic_mix;
use reordered::{assert_reordered, Reordered, ReorderedChar};

fn main() {
    if rpar::launched_by_mpi() {
        if let Ok(case) = std::env::var("RPAR_MPI_MISMATCH") {
            mismatch_job(&case);
        } else if std::env::var_os("RPAR_MPI_FAIL").is_some() {
            failing_job();
        } else if std::env::var_os("RPAR_MPI_TRACED").is_some() {
            traced_job();
        } else if std::env::var_os("RPAR_MPI_OWN_INIT").is_some() {
            own_init_job();
        } else {
            every_check();
        }
    } else {
        drive();
    }
}

/// MPI_Wtime, MPI_Wtick, MPI_WTIME_IS_GLOBAL and MPI_Get_processor_name on a process of the
/// job: the clock runs forward, and is global only for a job of one process.
fn clocks(world: &Comm) -> rpar::Result<()> {
    let t0 = rpar::wtime();
    world.barrier()?;
    check("wtime runs forward", rpar::wtime() >= t0, true);
    check("wtick", rpar::wtick() > 0.0 && rpar::wtick() < 1e-3, true);
    check(
        "wtime_is_global",
        rpar::wtime_is_global(),
        world.size() == 1,
    );
    check("processor_name", rpar::processor_name().is_empty(), false);
    Ok(())
}

/// Complex numbers reduced by Sum and Prod (MPI's own complex operators underneath where MPI
/// runs the collective), and a non-commutative operator over whole buffers: the product of 2 x 2
/// matrices in rank order, against the sequential product.
fn complex_and_buffer_ops(world: &Comm) -> rpar::Result<()> {
    use rpar::{BufferOp, Complex, Prod};
    let (p, r) = (world.size(), world.rank());
    let z = world.allreduce(&Complex::new(r as f64, 1.0), Sum)?;
    check(
        "complex sum",
        z,
        Complex::new((p * (p - 1) / 2) as f64, p as f64),
    );
    let i = Complex::new(0.0f64, 1.0);
    let want = (0..p).fold(Complex::new(1.0, 0.0), |acc, _| acc * i);
    check("complex product", world.allreduce(&i, Prod)?, want);
    let mul = |a: &[f64], c: &[f64]| {
        [
            a[0] * c[0] + a[1] * c[2],
            a[0] * c[1] + a[1] * c[3],
            a[2] * c[0] + a[3] * c[2],
            a[2] * c[1] + a[3] * c[3],
        ]
    };
    let matmul = BufferOp::non_commutative(4, move |a: &[f64], c: &mut [f64]| {
        for (a, c) in a.chunks(4).zip(c.chunks_mut(4)) {
            let m = mul(a, c);
            c.copy_from_slice(&m);
        }
    });
    let of = |k: usize| [1.0, k as f64, (k % 2) as f64, 2.0];
    let want = (1..p).fold(of(0), |acc, k| mul(&acc, &of(k)));
    let got = world.allreduce(&of(r)[..], matmul)?;
    check("matrix product in rank order", got, want.to_vec());
    Ok(())
}

/// An MPI launcher and its options, from an environment variable (`mpiexec` by default).
struct Launcher(Vec<String>);

impl Launcher {
    fn from_env(var: &str) -> Option<Launcher> {
        let words: Vec<String> = std::env::var(var)
            .ok()?
            .split_whitespace()
            .map(String::from)
            .collect();
        (!words.is_empty()).then_some(Launcher(words))
    }

    /// A job of `n` copies of `exe`, killed after `seconds`.
    fn job(&self, seconds: u32, n: usize, exe: &std::path::Path) -> Command {
        let mut command = Command::new("timeout");
        command
            .arg(seconds.to_string())
            .args(&self.0)
            .args(["-n", &n.to_string()])
            .arg(exe);
        command
    }
}

/// Starts this program under the MPI launcher and checks what the jobs did.
fn drive() {
    let exe = std::env::current_exe().expect("the test's own path");
    let launcher =
        Launcher::from_env("RPAR_MPIEXEC").unwrap_or_else(|| Launcher(vec!["mpiexec".into()]));
    for n in 1..=4 {
        let out = launcher
            .job(300, n, &exe)
            .output()
            .unwrap_or_else(|e| panic!("could not start {:?}: {e}", launcher.0));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "the job on {n} processes failed ({}):\n{stdout}\n{stderr}",
            out.status
        );
        let passed = stdout.matches("all checks passed").count();
        assert_eq!(passed, n, "every process reports: {stdout}");
        println!("mpi: {n} processes: all checks passed");
    }
    let start = std::time::Instant::now();
    let out = launcher
        .job(60, 3, &exe)
        .env("RPAR_MPI_FAIL", "1")
        .output()
        .expect("the launcher starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a failing rank fails the job");
    assert_ne!(
        out.status.code(),
        Some(124),
        "the failing job was killed by the timeout"
    );
    assert!(
        stderr.contains("rank 1 failed") && stderr.contains("bad input on rank 1"),
        "the job's error names the rank and its message: {stderr}"
    );
    println!(
        "mpi: a failing rank ended the job in {:.1} s with its message",
        start.elapsed().as_secs_f64()
    );
    mismatches(&launcher, &exe);
    traced(&launcher, &exe);
    let out = launcher
        .job(60, 2, &exe)
        .env("RPAR_MPI_OWN_INIT", "1")
        .output()
        .expect("the launcher starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.matches("own init: passed").count() == 2,
        "the job that initialised MPI itself: {out:?}"
    );
    println!(
        "mpi: a program that initialised MPI itself at MPI_THREAD_SINGLE runs its ranks on its \
         main thread, and a run from another thread is refused"
    );
    if let Some(other) = Launcher::from_env("RPAR_OTHER_MPIEXEC") {
        another_mpis_launcher(&other, &exe);
    }
}

/// A process that initialises MPI itself at `MPI_THREAD_SINGLE` (rsmpi's `initialize`, as
/// `MPI_Init`) and finalises it (dropping rsmpi's universe): rpar's runs use that MPI from the
/// main thread (no thread of their own, which that level forbids), and a run from another
/// thread is refused with an error rather than calling MPI from it.
fn own_init_job() {
    use rpar::mpi::rsmpi;
    use rsmpi::traits::Communicator;
    let universe = rsmpi::initialize().expect("MPI_Init");
    let p = universe.world().size() as usize;
    let on_main = rpar::Universe::mpi()
        .run(|world| {
            let main = std::thread::current().name() == Some("main");
            world.allreduce(&u64::from(main), Sum)
        })
        .expect("a run on the main thread");
    check(
        "every rank ran on its main thread",
        on_main,
        vec![p as u64; p],
    );
    let elsewhere = std::thread::spawn(|| rpar::Universe::mpi().run(|_| Ok(())).is_err())
        .join()
        .expect("the other thread");
    check("a run from another thread is refused", elsewhere, true);
    drop(universe); // MPI_Finalize
    println!("own init: passed");
}

/// Jobs of 3 processes whose collective calls differ where MPI's own collectives run them
/// (`mismatch_job`): each fails, promptly, with an `Error::CollectiveMismatch` that names what
/// each process called — a reduction operator that differs, found by the comparison started at
/// call 64 when the next check completes it; an element type that differs in the last call, found at the end of the run; a bcast
/// beside a barrier, found before MPI runs it with `RPAR_COLLECTIVE_CHECK=every`; counts that
/// differ, which MPI refuses (an error code, not MPI's own end of the job); and in rpar's own
/// algorithm, a message of a later call of the same kind, not taken (its bare message carries
/// its call's number), before the one that differs; one of another kind, which the
/// receive that waits in MPI for its own kind finds among what arrives meanwhile; and a call
/// more on one process, whose message nobody receives, found at the end of the run; and an
/// operator that differs among calls of rpar's own algorithms (3 to every call of MPI's own),
/// more calls back than the comparisons' interval: named from the calls kept since the
/// comparison before the one that failed; an element type that differs in the call a
/// comparison starts at (its type folded in after the comparison started: found by the next);
/// an operator that differs late in a long run, once the comparisons are 255 calls apart: found
/// by the next one and named from the calls kept, before the run ends.
fn mismatches(launcher: &Launcher, exe: &std::path::Path) {
    let cases = [
        ("operator", None, &["call #10", "op Sum", "op Max"][..]),
        (
            "type",
            None,
            &["call #3", "elements of u32", "elements of f32"],
        ),
        ("call", Some("every"), &["bcast(root 0", "barrier()"]),
        ("count", None, &["allreduce(op Sum, 1"]),
        (
            "sequence",
            None,
            &[
                "rank 2 called bcast(root 0, 12 bytes) as collective call #10",
                "rank 1 called bcast(root 1, 12 bytes) as collective call #10",
            ],
        ),
        (
            "kind",
            None,
            &[
                "rank 2 called bcast(root 0, 12 bytes) as collective call #20",
                "rank 0 called bcast(root 0, 16 bytes) as collective call #20",
            ],
        ),
        (
            "extra",
            None,
            &[
                "rank 0 called bcast(root 0, 12 bytes) as collective call #5",
                "no collective call here",
            ],
        ),
        ("mixed", None, &["call #563", "op Sum", "op Max"]),
        (
            "type-at-check",
            None,
            &["call #63", "elements of u32", "elements of f32"],
        ),
        ("late", None, &["call #1500", "op Sum", "op Max"]),
    ];
    for (case, check, said) in cases {
        // the long run on as many processes as cores: oversubscribed, MPICH's busy polling
        // takes milliseconds a call
        let processes = if case == "late" { 2 } else { 3 };
        let mut job = launcher.job(60, processes, exe);
        job.env("RPAR_MPI_MISMATCH", case);
        if let Some(every) = check {
            job.env("RPAR_COLLECTIVE_CHECK", every);
        }
        let out = job.output().expect("the launcher starts");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "a mismatched {case} fails the job");
        assert_ne!(
            out.status.code(),
            Some(124),
            "the {case} job was killed by the timeout"
        );
        assert!(
            stderr.contains("collective mismatch on communicator 0")
                && said.iter().all(|s| stderr.contains(s)),
            "the mismatched {case} is named ({said:?}): {stderr}"
        );
        assert!(
            !stderr.contains(LATE_LOOP_ENDED),
            "the late mismatch is found by a comparison during the calls, not at the end: {stderr}"
        );
    }
    println!(
        "mpi: collective calls that differ are named, inside MPI's own collectives and in rpar's"
    );
}

/// `calls` allreduces of `Sum` on `world`, but call `at` of its last rank, of `Max`.
fn allreduces_one_max(world: &rpar::Comm, calls: usize, at: usize) -> rpar::Result<()> {
    let last = world.rank() == world.size() - 1;
    for k in 0..calls {
        if k == at && last {
            world.allreduce(&[1u32, 2, 3][..], rpar::Max)?;
        } else {
            world.allreduce(&[1u32, 2, 3][..], rpar::Sum)?;
        }
    }
    Ok(())
}

/// What the `late` case's processes say if they finish their calls.
const LATE_LOOP_ENDED: &str = "the late case's calls all ran";

/// A job whose processes' collective calls differ (`case`: see [`mismatches`]).
fn mismatch_job(case: &str) {
    let _ = rpar::Universe::mpi().run(|world| {
        let last = world.rank() == world.size() - 1;
        let x = [1u32, 2, 3];
        match case {
            "operator" => allreduces_one_max(&world, 200, 10)?,
            "type" => {
                for _ in 0..3 {
                    world.allreduce(&x[..], rpar::Sum)?;
                }
                if last {
                    world.allreduce(&[1.0f32, 2.0, 3.0][..], rpar::Sum)?;
                } else {
                    world.allreduce(&x[..], rpar::Sum)?;
                }
            }
            "count" => {
                let x: Vec<u32> = (0..3 + last as u32).collect();
                world.allreduce(&x[..], rpar::Sum)?;
            }
            "kind" => {
                // two kinds of bcast on the channel of rpar's binomial bcast, each received
                // through MPI's matching by then; the last process's receive of the one gets
                // the other kind: found while it waits
                let binomial = world.using(rpar::Bcast::Binomial);
                let (mut small, mut large) = ([0u32; 3], [0u32; 4]);
                for _ in 0..10 {
                    binomial.bcast(&mut small[..], 0)?;
                    binomial.bcast(&mut large[..], 0)?;
                }
                match last {
                    true => binomial.bcast(&mut small[..], 0)?,
                    false => binomial.bcast(&mut large[..], 0)?,
                }
            }
            "sequence" => {
                // rpar's own bcast: rpar's messages between the processes, bare (the call's
                // number after the payload) once their class is known
                let binomial = world.using(rpar::Bcast::Binomial);
                let mut y = x;
                for _ in 0..10 {
                    binomial.bcast(&mut y[..], 0)?;
                }
                // the others call a bcast from root 1 first: the last process's call #10 gets
                // process 0's call #11 first, of the very same kind — which it must not take
                // (the number alone differs) — and then process 1's call #10: the mismatch
                let roots = if last { [0, 1] } else { [1, 0] };
                for root in roots {
                    binomial.bcast(&mut y[..], root)?;
                }
            }
            "extra" => {
                // rpar's own bcast (no comparison before its calls: its messages carry them),
                // where the root makes one call more: its message is never received, and the
                // digests compared at the end of the run name the call
                let binomial = world.using(rpar::Bcast::Binomial);
                let mut y = x;
                for _ in 0..5 + usize::from(world.rank() == 0) {
                    binomial.bcast(&mut y[..], 0)?;
                }
            }
            "type-at-check" => {
                // the comparison starts at call #63, before it runs: its element type is folded
                // in after, so that comparison agrees, and the one started at call #127 (completed
                // at the end of the run) finds it, among the calls kept from #63
                for k in 0..128 {
                    if k == 63 && last {
                        world.allreduce(&[1.0f32, 2.0, 3.0][..], rpar::Sum)?;
                    } else {
                        world.allreduce(&x[..], rpar::Sum)?;
                    }
                }
            }
            "late" => {
                // the comparisons start at calls 63, 127, 255, 510, 765, … (the interval
                // doubling up to 255): the one started at #1530 finds call #1500, completed
                // at #1785, before the end
                allreduces_one_max(&world, 2000, 1500)?;
                eprintln!("{LATE_LOOP_ENDED}"); // (not reached: the comparison fails first)
            }
            "mixed" => {
                // calls 4k..4k+2 rpar's binomial bcasts, 4k+3 MPI's allreduce; the comparisons
                // start at calls 255, 511 and 767 (the interval does not grow: two intervals of
                // these calls would not fit in the window), the last completed at the end of
                // the run: it finds call #563 (k = 140), 236 calls before the end
                let binomial = world.using(rpar::Bcast::Binomial);
                let mut y = x;
                for k in 0..200 {
                    for _ in 0..3 {
                        binomial.bcast(&mut y[..], 0)?;
                    }
                    if k == 140 && last {
                        world.allreduce(&x[..], rpar::Max)?;
                    } else {
                        world.allreduce(&x[..], rpar::Sum)?;
                    }
                }
            }
            _ => {
                let mut y = x;
                if last {
                    world.barrier()?;
                } else {
                    world.bcast(&mut y[..], 0)?;
                }
            }
        }
        Ok(())
    });
    unreachable!("the job was aborted");
}

/// Started by another MPI's launcher, each process of a binary sees a job of one (MPI's
/// singleton start): rpar says so instead of running as one rank of one.
fn another_mpis_launcher(other: &Launcher, exe: &std::path::Path) {
    let out = other
        .job(60, 2, exe)
        .output()
        .expect("the other launcher starts");
    let text = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "a job of the wrong MPI fails: {text}"
    );
    assert!(
        text.contains("started 2 processes")
            && text.contains("built against another MPI than the launcher's"),
        "it says why: {text}"
    );
    println!(
        "mpi: started by {:?}, the job says it was built for another MPI",
        other.0
    );
}

/// Runs [`traced_job`] on 2 processes with `RPAR_TRACE` set and checks the files: for each
/// run a file per rank, with the rank's track, and one of the whole job; in the first two runs
/// every arrow that leaves one rank's file arrives in the other's, inside a receive whose span
/// says what came, and in the whole job's file every arrow points forward (the processes'
/// clocks aligned); in the third every collective span names the algorithm that ran.
fn traced(launcher: &Launcher, exe: &std::path::Path) {
    let dir = std::env::temp_dir().join(format!("rpar-mpi-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let out = launcher
        .job(120, 2, exe)
        .env("RPAR_MPI_TRACED", "1")
        .env("RPAR_TRACE", dir.join("t.json"))
        .output()
        .expect("the launcher starts");
    assert!(out.status.success(), "the traced job: {out:?}");
    let load = |name: &str| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e} (in {})", dir.display()));
        let doc: serde_json::Value = serde_json::from_str(&text).expect("a trace is JSON");
        doc["traceEvents"].as_array().expect("traceEvents").clone()
    };
    for (run, tag) in [("t", 1), ("t.2", 2)] {
        let ranks = [0, 1].map(|r| load(&format!("{run}.rank{r}.json")));
        let ids = |events: &[serde_json::Value], ph: &str| -> Vec<u64> {
            let mut ids: Vec<u64> = events
                .iter()
                .filter(|e| e["ph"] == ph)
                .map(|e| e["id"].as_u64().unwrap())
                .collect();
            ids.sort();
            ids
        };
        for (r, events) in ranks.iter().enumerate() {
            assert!(
                events
                    .iter()
                    .filter(|e| e["ph"] != "M")
                    .all(|e| e["tid"] == r),
                "{run}: {events:?}"
            );
            let recv = events
                .iter()
                .find(|e| e["name"] == "recv")
                .expect("a receive");
            assert_eq!(recv["args"]["peer"], 1 - r, "{run}: {recv}");
            assert_eq!(
                (&recv["args"]["tag"], &recv["args"]["bytes"]),
                (&tag.into(), &24.into()),
                "{run}: {recv}"
            );
            assert_eq!(
                ids(events, "s"),
                ids(&ranks[1 - r], "f"),
                "{run}: arrows from rank {r}"
            );
            assert_eq!(
                ids(events, "s").len(),
                1,
                "{run}: one message, not the results' exchange"
            );
        }
        // the whole job in one file, on rank 0's clock: both tracks, every arrow forward
        let merged = load(&format!("{run}.json"));
        let tracks: std::collections::BTreeSet<u64> = merged
            .iter()
            .filter(|e| e["ph"] != "M")
            .map(|e| e["tid"].as_u64().expect("a track"))
            .collect();
        assert_eq!(tracks, [0, 1].into(), "{run}: one track per process");
        let at = |ph: &str, id: u64| -> f64 {
            let e = merged.iter().find(|e| e["ph"] == ph && e["id"] == id);
            e.and_then(|e| e["ts"].as_f64())
                .expect("both ends of the arrow")
        };
        for id in ids(&merged, "s") {
            assert!(
                at("s", id) <= at("f", id),
                "{run}: arrow {id} points backwards: sent at {} us, received at {} us",
                at("s", id),
                at("f", id)
            );
        }
        assert_eq!(ids(&merged, "s").len(), 2, "{run}: both processes' arrows");
    }
    let shown = |a: &dyn Debug| format!("{a:?}");
    let want = [
        // MPI's own for Sum, the ring asked for, and for a user operator (which MPI cannot
        // take) the message-passing rule for 2 ranks and 8 bytes
        (
            "allreduce",
            vec![
                "Mpi".to_string(),
                shown(&Allreduce::Ring),
                shown(&Allreduce::select(2, 8, true)),
            ],
        ),
        ("barrier", vec!["Mpi".into()]),
        // the typed bcast's own span and its byte bcast's, and its signature check: an
        // allgather and the allgather_into inside it
        ("bcast_typed", vec!["Mpi".into()]),
        ("bcast", vec!["Mpi".into()]),
        ("allgather", vec!["Mpi".into(); 2]),
        ("scan", vec![shown(&Scan::select(2, 8, true))]),
    ];
    for r in 0..2 {
        let events = load(&format!("t.3.rank{r}.json"));
        for (name, algorithms) in &want {
            let mut got: Vec<&str> = events
                .iter()
                .filter(|e| e["ph"] == "X" && e["name"] == *name)
                .map(|e| e["args"]["algorithm"].as_str().expect("an algorithm"))
                .collect();
            let mut algorithms: Vec<&str> = algorithms.iter().map(String::as_str).collect();
            got.sort();
            algorithms.sort();
            check(&format!("rank {r}: {name}"), got, algorithms);
        }
    }
    // each of the 3 runs: a file per process and one of the job
    assert_eq!(std::fs::read_dir(&dir).expect("the folder").count(), 9);
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "mpi: a traced job wrote a trace per rank and run and one of the job (clocks aligned, \
         arrows forward), its arrows joined, its collectives named by the algorithm that ran"
    );
}

/// Two runs, each a swap of 24 bytes between ranks 0 and 1 with the run's tag, received from
/// any source with any tag (the trace says which).
fn traced_job() {
    for tag in [1, 2] {
        rpar::run(2, |world| {
            let other = 1 - world.rank();
            world.send(&[world.rank() as u64; 3][..], other, tag)?;
            let (got, _) = world.recv::<u64>(rpar::ANY_SOURCE, rpar::ANY_TAG)?;
            check("the swap", got, vec![other as u64; 3]);
            Ok(world.rank() as u64) // a result that the processes exchange, untraced
        })
        .expect("a traced run");
    }
    // the collectives whose spans `traced` checks
    rpar::run(2, |world| {
        let x = world.rank() as u64 + 1;
        check("MPI_Allreduce", world.allreduce(&x, Sum)?, 3);
        check("ring", world.using(Allreduce::Ring).allreduce(&x, Sum)?, 3);
        let max = UserOp::commutative(|a: u64, b: u64| a.max(b));
        check("a user operator", world.allreduce(&x, max)?, 2);
        world.barrier()?;
        let mut v = [x; 2];
        world.bcast(
            rpar::Typed::new(
                &mut v,
                &TypeMap::contiguous(2, &u64::type_map())?.commit(),
                1,
            ),
            1,
        )?;
        check("the typed bcast", v, [2; 2]);
        check("scan", world.scan(&x, Sum)?, x * (x + 1) / 2);
        Ok(())
    })
    .expect("a traced run of collectives");
}

/// Rank 1 fails while the others wait for a message that never comes: MPI_Abort ends them all.
fn failing_job() {
    let _ = rpar::run(3, |world| {
        if world.rank() == 1 {
            return Err(rpar::Error::user("bad input on rank 1"));
        }
        world.recv::<u8>(1, 0)?;
        Ok(())
    });
    unreachable!("the job was aborted");
}

fn check<T: PartialEq + Debug>(what: &str, got: T, want: T) {
    assert_eq!(got, want, "{what}");
}

fn every_check() {
    let results = rpar::Universe::mpi()
        .run(|world| {
            let stage = |name: &str, r: rpar::Result<()>| {
                r.map_err(|e| rpar::Error::user(format!("{name}: {e}")))
            };
            stage("point-to-point", point_to_point(&world))?;
            stage("progress", progress(&world))?;
            stage("large messages between buffers", straight(&world))?;
            stage("small messages of one basic type", small_plain(&world))?;
            stage("messages without their header", bare(&world))?;
            stage("receives straight into the buffer", direct(&world))?;
            stage(
                "posted receives straight into the buffer",
                direct_posted::posted_direct(&world),
            )?;
            stage("pingping, sendflood, sendself", traffic_mix::floods(&world))?;
            for seed in 1..=3 {
                stage(
                    "a random mix of messages",
                    traffic_mix::random_mix(&world, seed),
                )?;
            }
            stage("PROC_NULL", p2p_more::proc_null(&world))?;
            stage("send modes", p2p_more::send_modes(&world))?;
            stage("persistent requests", p2p_more::persistent(&world))?;
            stage("cancel", p2p_more::cancel(&world, false))?;
            stage("matched probes", p2p_more::matched_probe(&world))?;
            stage("get_elements", p2p_more::get_elements(&world))?;
            stage("MPI_PACKED receives", p2p_more::packed(&world))?;
            stage("clocks", clocks(&world))?;
            stage(
                "complex and whole-buffer reductions",
                complex_and_buffer_ops(&world),
            )?;
            stage("non-blocking collectives", nonblocking(&world))?;
            for seed in 1..=3 {
                let mix = collective_mix::random_collectives(&world, seed);
                stage("a random sequence of collectives", mix)?;
            }
            stage("datatypes", datatypes(&world))?;
            stage("collectives", collectives(&world))?;
            stage("communicators", communicators(&world))?;
            stage("topology", topology(&world))?;
            stage(
                "neighbourhood alltoallw",
                neighbor_w_checks::dist_graph(&world),
            )?;
            stage("groups and communicators", groups_checks::all(&world))?;
            stage("intercommunicators", intercomm_checks::all(&world))?;
            stage(
                "communicators copied without waiting",
                idup_checks::all(&world),
            )?;
            Ok(world.rank() as u64 * 10)
        })
        .unwrap_or_else(|e| panic!("the checks failed: {e}"));
    let p = results.len();
    check(
        "every rank's result, in rank order",
        results,
        (0..p as u64).map(|r| r * 10).collect(),
    );
    // a large message nobody receives: the run ends all the same (its bytes, still in MPI,
    // are taken and dropped) and reports it
    let report = rpar::Universe::mpi()
        .run_report(|world| {
            if world.rank() == 0 && world.size() > 1 {
                world.send(&vec![7u64; 50_000][..], 1, 77)?;
            }
            Ok(())
        })
        .expect("a run that leaves a large message unreceived");
    let mut me = 0;
    // SAFETY: MPI is initialised (the runs above); MPI_Comm_rank writes this process's rank.
    unsafe { ffi::MPI_Comm_rank(ffi::RSMPI_COMM_WORLD, &mut me) };
    let unreceived = report
        .warnings
        .iter()
        .filter(|w| w.to_string().contains("never received"))
        .count();
    check(
        "the unreceived large message, reported where it arrived",
        unreceived,
        usize::from(p > 1 && me == 1),
    );
    let names = rpar::Universe::mpi()
        .run(|world| Ok(format!("rank {} of {}", world.rank(), world.size())))
        .expect("a second run");
    check("a second run in the same process", names.len(), p);
    // a run with a stack of its own size (on the thread that initialised MPI, a coroutine's
    // stack): recursion over 16 MiB deep, more than a main thread has by default (8 MiB), and
    // a buffer attached and left so: the next run starts with none
    fn deep(n: u64, pad: [u8; 512]) -> u64 {
        if n == 0 {
            return pad[0] as u64;
        }
        std::hint::black_box(deep(n - 1, std::hint::black_box(pad)) + 1)
    }
    let depths = rpar::Universe::mpi()
        .stack_size(64 << 20)
        .run(|world| {
            rpar::buffer_attach(vec![0; 1024])?;
            world.allreduce(&deep(32768, [0; 512]), Sum)
        })
        .expect("a run with a stack of 64 MiB");
    check(
        "deep recursion on the run's stack",
        depths[0],
        32768 * p as u64,
    );
    let attached = rpar::Universe::mpi()
        .run(|_| Ok(rpar::buffer_detach().is_ok()))
        .expect("a run after one that left a buffer attached");
    check(
        "no buffer attached at a run's start",
        attached,
        vec![false; p],
    );
    check(
        "String results",
        names[p - 1].clone(),
        format!("rank {} of {p}", p - 1),
    );
    // a run of fewer ranks runs on the first processes; every process gets its results
    let one = rpar::run(1, |world| Ok(vec![world.size() as u32; 2])).expect("a run of one rank");
    check("a run of one rank on a larger job", one, vec![vec![1, 1]]);
    let err = rpar::run(p + 1, |_| Ok(())).unwrap_err();
    assert!(
        err.to_string().contains(&format!("mpiexec -n {}", p + 1)),
        "{err}"
    );
    println!("all checks passed");
}

/// MPI's progress rule across processes: a large send to a posted receive completes while the
/// receiver blocks in another receive, or polls another request (ranks 0-2; the others wait);
/// so does one that no receive is posted for yet, which the receiver leaves in MPI only for a
/// grace of polls (the receive that comes after depends on that send's completion); and two
/// processes that send each other thousands of small messages before receiving any (sent with a
/// blocking `MPI_Send` by the link) do not block each other.
fn progress(world: &Comm) -> rpar::Result<()> {
    if world.size() >= 2 && world.rank() < 2 {
        const SMALL: usize = 20_000;
        let other = 1 - world.rank();
        for i in 0..SMALL {
            world.send(&[i as u64; 100][..], other, 60)?; // 800 bytes each, 16 MB in all
        }
        let mut got = [0u64; 100];
        let all = (0..SMALL)
            .all(|i| world.recv_into(&mut got[..], other, 60).is_ok() && got == [i as u64; 100]);
        check("a flood of small messages both ways, in order", all, true);
    }
    if world.size() < 3 {
        return Ok(());
    }
    const BIG: usize = 1 << 17;
    // each twice: the first large message of its kind carries its header, the next is bare
    let ways = [false, true].map(|polling| [true, false].map(|posted| (polling, posted)));
    for (polling, posted) in ways.into_iter().flatten().flat_map(|w| [w, w]) {
        match world.rank() {
            0 => {
                world.send(&vec![5u64; BIG][..], 1, 1)?;
                world.send(&1u8, 2, 3)?;
            }
            1 => {
                let mut big = vec![0u64; BIG];
                let mut x = 0u8;
                let forwarded = |x: &mut u8| -> rpar::Result<()> {
                    if polling {
                        let mut small = world.irecv_into(x, 2, 2)?;
                        while small.test()?.is_none() {}
                    } else {
                        world.recv_into(x, 2, 2)?;
                    }
                    Ok(())
                };
                if posted {
                    let req = world.irecv_into(&mut big[..], 0, 1)?;
                    forwarded(&mut x)?;
                    req.wait()?;
                } else {
                    forwarded(&mut x)?;
                    world.recv_into(&mut big[..], 0, 1)?;
                }
                check("the large message", big.iter().all(|&v| v == 5), true);
                check("the forwarded message", x, 1);
            }
            2 => {
                let mut x = 0u8;
                world.recv_into(&mut x, 0, 3)?;
                world.send(&x, 1, 2)?;
            }
            _ => {}
        }
        world.barrier()?;
    }
    Ok(())
}

/// Large messages go straight from the sender's buffer to the receiver's (a header, then the
/// bytes as an MPI message of their own): every receive path takes them whole, in any order,
/// and the checks still hold — a type mismatch or a truncation refuses the message, which stays
/// queued (ranks 0 and 1; the others wait).
fn straight(world: &Comm) -> rpar::Result<()> {
    if world.size() < 2 {
        return Ok(());
    }
    const N: usize = 50_000; // 400 KB of u64
    let data = |seed: u64| (0..N as u64).map(|i| i * 3 + seed).collect::<Vec<u64>>();
    match world.rank() {
        0 => {
            // received in the other order: each payload has a tag of its own
            world.send(&data(1)[..], 1, 30)?;
            world.send(&data(2)[..], 1, 31)?;
            // refused twice, then received
            world.send(&data(3)[..], 1, 32)?;
            // validated on arrival
            world.send(&vec![true; N][..], 1, 33)?;
            // into a typed receive: every other element of the receive buffer, then one
            // gap-free in memory
            world.send(&data(4)[..], 1, 34)?;
            world.send(&data(9)[..], 1, 40)?;
            // both ways at once, each rank in its own large send first
            world.send(&data(5)[..], 1, 35)?;
            check("head to head", world.recv::<u64>(1, 36)?.0, data(6));
            // a scope's sends: several in flight, received after the scope's own receive
            let (a, b) = (data(7), data(8));
            world.scope(|s| {
                s.isend(&a[..], 1, 37)?;
                s.isend(&b[..], 1, 38)?;
                world.recv::<u8>(1, 39).map(drop)
            })?;
            // owned vectors: sent straight from their elements, which the link keeps until MPI
            // is done with them (the first defines the channel's class, the others go bare);
            // memory of the same size allocated and written right after each, which would be
            // theirs had they been freed early
            let mut written_after = Vec::new();
            for k in 0..6 {
                world.send(data(100 + k), 1, 41)?;
                written_after.push(vec![u64::MAX; N]);
            }
            world.send(&1u8, 1, 42)?;
            world.barrier()?;
            drop(written_after);
        }
        1 => {
            check("the later tag first", world.recv::<u64>(0, 31)?.0, data(2));
            check("then the earlier", world.recv::<u64>(0, 30)?.0, data(1));
            let err = world.recv::<f32>(0, 32).unwrap_err();
            assert!(matches!(err, rpar::Error::TypeMismatch { .. }), "{err}");
            let mut small = [0u64; 10];
            let err = world.recv_into(&mut small[..], 0, 32).unwrap_err();
            assert!(matches!(err, rpar::Error::Truncated { .. }), "{err}");
            check(
                "the refused message stays",
                world.recv::<u64>(0, 32)?.0,
                data(3),
            );
            check("bools", world.recv::<bool>(0, 33)?.0, vec![true; N]);
            let every_other = TypeMap::vector(N, 1, 2, &u64::type_map())?.commit();
            let mut spread = vec![0u64; 2 * N];
            world.recv_into(rpar::Typed::new(&mut spread, &every_other, 1), 0, 34)?;
            let evens: Vec<u64> = spread.iter().step_by(2).copied().collect();
            check("into a typed receive", evens, data(4));
            check(
                "gaps untouched",
                spread.iter().skip(1).step_by(2).all(|&v| v == 0),
                true,
            );
            let whole = TypeMap::contiguous(N, &u64::type_map())?.commit();
            let mut into = vec![0u64; N];
            world.recv_into(rpar::Typed::new(&mut into, &whole, 1), 0, 40)?;
            check("into a gap-free typed receive", into, data(9));
            world.send(&data(6)[..], 0, 36)?;
            check("head to head", world.recv::<u64>(0, 35)?.0, data(5));
            world.send(&1u8, 0, 39)?;
            check(
                "the scope's second send",
                world.recv::<u64>(0, 38)?.0,
                data(8),
            );
            check(
                "the scope's first send",
                world.recv::<u64>(0, 37)?.0,
                data(7),
            );
            // the owned vectors, taken after the message that followed them
            world.recv::<u8>(0, 42)?;
            for k in 0..5 {
                check(
                    "an owned vector",
                    world.recv::<u64>(0, 41)?.0,
                    data(100 + k),
                );
            }
            let mut into = vec![0u64; N];
            world.recv_into(&mut into[..], 0, 41)?;
            check("an owned vector into a buffer", into, data(105));
            world.barrier()?;
        }
        _ => world.barrier()?,
    }
    world.barrier()
}

/// Small messages of one basic type arrive as plain messages (inline up to 32 bytes, an owned
/// buffer above): MPI's signature rule across Rust types, a `Vec` handed over whole, and the
/// refusals — another type of the same size, truncation, invalid `bool`s — leave the message
/// queued (ranks 0 and 1; the others wait).
fn small_plain(world: &Comm) -> rpar::Result<()> {
    use rpar::Complex;
    if world.size() < 2 {
        return Ok(());
    }
    let words: Vec<u32> = (0..40).map(|i| i * 7 + 1).collect(); // 160 bytes: not inline
    match world.rank() {
        0 => {
            world.send(&[[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]][..], 1, 50)?;
            world.send(
                &[Complex::new(1.5f64, -2.0), Complex::new(0.0, 1.0)][..],
                1,
                51,
            )?;
            world.send(&words[..], 1, 52)?;
            world.send(&words[..], 1, 53)?;
            world.send(&[7u32, 8][..], 1, 54)?;
            world.send(&[2u8, 1][..], 1, 55)?;
            world.send(&[true, false][..], 1, 56)?;
        }
        1 => {
            check(
                "[f64; 2] x 3 as f64 x 6",
                world.recv::<f64>(0, 50)?.0,
                vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            );
            check(
                "complex numbers",
                world.recv::<Complex<f64>>(0, 51)?.0,
                vec![Complex::new(1.5, -2.0), Complex::new(0.0, 1.0)],
            );
            let (got, status) = world.recv::<u32>(0, 52)?;
            check(
                "160 bytes as a Vec",
                (got, status.count),
                (words.clone(), 40),
            );
            let mut pairs = [[0u32; 2]; 20];
            world.recv_into(&mut pairs[..], 0, 53)?;
            check(
                "160 bytes into [u32; 2] x 20",
                pairs.concat(),
                words.clone(),
            );
            let err = world.recv::<f32>(0, 54).unwrap_err();
            assert!(matches!(err, rpar::Error::TypeMismatch { .. }), "{err}");
            let mut one = [0u32; 1];
            let err = world.recv_into(&mut one[..], 0, 54).unwrap_err();
            assert!(matches!(err, rpar::Error::Truncated { .. }), "{err}");
            check(
                "the refused message stays",
                world.recv::<u32>(0, 54)?.0,
                vec![7, 8],
            );
            let err = world.recv::<bool>(0, 55).unwrap_err();
            assert!(matches!(err, rpar::Error::TypeMismatch { .. }), "{err}");
            check("bytes stay bytes", world.recv::<u8>(0, 55)?.0, vec![2, 1]);
            check("bools", world.recv::<bool>(0, 56)?.0, vec![true, false]);
        }
        _ => {}
    }
    world.barrier()
}

/// Messages of a class their receiver knows travel without their header (the payload alone on
/// the class's MPI tag): small and large ones keep each pair's order per tag and across tags
/// under a wildcard, probes and requests see them as any message, and a type mismatch or a
/// truncation still refuses them and keeps them queued (ranks 0 and 1; the others wait).
/// Blocking receives that MPI matches itself, straight into the buffer (a channel's direct
/// class, `transport/mpi/classes.rs`): rank 1 waits in such a receive (the barrier, then rank 0
/// pauses) when each change on the channel comes — a larger count, another type, an empty
/// message, a synchronous send — and must see it as the ordinary path would; a posted receive
/// that matches first, a smaller buffer and a wildcard take the ordinary path; and a rank waiting
/// directly still takes another process's large message its sender waits on.
fn direct(world: &Comm) -> rpar::Result<()> {
    if world.size() < 2 {
        return Ok(());
    }
    let world = &world.dup()?; // channels no earlier stage used
    let pause = || std::thread::sleep(std::time::Duration::from_millis(20));
    const BIG: usize = 20_000; // 160 KB of u64: straight from the buffer, a payload apart
    match world.rank() {
        0 => {
            for i in 0..200u64 {
                world.send(&[i, i + 1, i + 2, i + 3][..], 1, 70)?;
                world.recv_into(&mut [0u8][..], 1, 70)?;
            }
            world.barrier()?;
            pause();
            world.send(&[1u64; 8][..], 1, 70)?; // more than the bound: a larger class
            world.send(&[2u64; 2][..], 1, 70)?;
            world.barrier()?;
            pause();
            world.send(&[3.5f64][..], 1, 70)?; // another type
            world.send(&[4u64, 5][..], 1, 70)?;
            for (tag, len) in [(71, 3usize), (72, 1)] {
                world.send(&vec![6u64; len][..], 1, tag)?;
            }
            world.barrier()?;
            pause();
            world.send(&[0u64; 0][..], 1, 71)?; // empty
            world.barrier()?;
            pause();
            world
                .using(SendMode::Synchronous)
                .send(&[7u64][..], 1, 72)?;
            for i in 0..3u64 {
                world.send(&[10 + i; 3][..], 1, 73)?;
            }
            world.send(&[20u64; 4][..], 1, 74)?;
            world.send(&[21u64; 4][..], 1, 74)?;
            world.send(&[30u64][..], 1, 75)?;
            world.barrier()?;
            world.send(&[31u64][..], 1, 75)?;
            world.send(&vec![8u64; BIG][..], 1, 76)?; // waits until rank 1 takes it
            world.send(&[32u64][..], 1, 75)?;
            for (i, len) in [5usize, 5, 3, 9, 0, 2].into_iter().enumerate() {
                world.send(&vec![i as u64; len][..], 1, 77)?; // received as new `Vec`s
            }
            // a large message, then many small ones: the channel's direct class shrinks to them
            world.send(&vec![9u64; 1000][..], 1, 78)?;
            for i in 0..100u64 {
                world.send(&[i, i + 1][..], 1, 78)?;
            }
        }
        1 => {
            let mut four = [0u64; 4];
            for i in 0..200u64 {
                let st = world.recv_into(&mut four[..], 0, 70)?;
                check(
                    "a ping-pong",
                    (four, st.count),
                    ([i, i + 1, i + 2, i + 3], 4),
                );
                world.send(&[0u8][..], 0, 70)?;
            }
            let mut eight = [0u64; 8];
            world.barrier()?;
            let st = world.recv_into(&mut eight[..], 0, 70)?;
            check("a larger count", (eight, st.count), ([1; 8], 8));
            let st = world.recv_into(&mut eight[..], 0, 70)?;
            check(
                "then a smaller",
                (eight[..2].to_vec(), st.count),
                (vec![2; 2], 2),
            );
            world.barrier()?;
            let err = world.recv_into(&mut eight[..], 0, 70).unwrap_err();
            assert!(matches!(err, rpar::Error::TypeMismatch { .. }), "{err}");
            check("the other type", world.recv::<f64>(0, 70)?.0, vec![3.5]);
            let st = world.recv_into(&mut four[..], 0, 70)?;
            check(
                "the channel after",
                (four[..2].to_vec(), st.count),
                (vec![4, 5], 2),
            );
            let mut three = [0u64; 3];
            world.recv_into(&mut three[..], 0, 71)?;
            world.recv_into(&mut three[..1], 0, 72)?;
            world.barrier()?;
            let st = world.recv_into(&mut three[..], 0, 71)?;
            check("an empty message", (st.count, st.tag), (0, 71));
            world.barrier()?;
            let st = world.recv_into(&mut three[..1], 0, 72)?;
            check("a synchronous send", (three[0], st.count), (7, 1));
            // a receive posted on any source takes the channel's first message
            let mut first = [0u64; 3];
            let posted = world.irecv_into(&mut first[..], rpar::ANY_SOURCE, 73)?;
            let st = world.recv_into(&mut three[..], 0, 73)?;
            check("after a posted receive", (three, st.count), ([11; 3], 3));
            posted.wait()?;
            check("the posted receive", first, [10; 3]);
            let (v, st) = world.recv::<u64>(0, rpar::ANY_TAG)?;
            check("a wildcard tag", (v, st.tag), (vec![12; 3], 73));
            // a buffer smaller than the bound: the ordinary path, and truncation keeps the
            // message
            let err = world.recv_into(&mut three[..], 0, 74).unwrap_err();
            assert!(matches!(err, rpar::Error::Truncated { .. }), "{err}");
            world.recv_into(&mut four[..], 0, 74)?;
            check("kept after truncation", four, [20; 4]);
            world.recv_into(&mut four[..], 0, 74)?;
            check("and the next", four, [21; 4]);
            let mut one = [0u64];
            world.recv_into(&mut one[..], 0, 75)?;
            world.barrier()?;
            world.recv_into(&mut one[..], 0, 75)?;
            check("a direct receive", one, [31]);
            // rank 0's large send completes only once this rank takes it, and its next
            // message comes after: a direct receive that never took in what arrives hangs
            world.recv_into(&mut one[..], 0, 75)?;
            check("after a large message", one, [32]);
            check(
                "the large message",
                world.recv::<u64>(0, 76)?.0,
                vec![8; BIG],
            );
            for (i, len) in [5usize, 5, 3, 9, 0, 2].into_iter().enumerate() {
                let (v, st) = world.recv::<u64>(0, 77)?;
                check("a new Vec", (v, st.count), (vec![i as u64; len], len));
            }
            let mut large = vec![0u64; 1000];
            world.recv_into(&mut large[..], 0, 78)?;
            check("the large message", large, vec![9; 1000]);
            let mut two = [0u64; 2];
            for i in 0..100u64 {
                let st = world.recv_into(&mut two[..], 0, 78)?;
                check("the small ones after it", (two, st.count), ([i, i + 1], 2));
            }
        }
        _ => {
            for _ in 0..5 {
                world.barrier()?;
            }
        }
    }
    Ok(())
}

fn bare(world: &Comm) -> rpar::Result<()> {
    if world.size() < 2 {
        return Ok(());
    }
    const N: usize = 20_000; // 160 KB of u64: straight from the buffer
    let big = |seed: u64| (0..N as u64).map(|i| i ^ seed).collect::<Vec<u64>>();
    match world.rank() {
        0 => {
            for i in 0..4u64 {
                world.send(&[i, i + 1][..], 1, 60)?; // the first defines the class
                world.send(&big(i)[..], 1, 61)?;
            }
            world.send(&[9.5f64][..], 1, 60)?; // another type: a class of its own
            world.send(&big(7)[..], 1, 62)?;
            world.send(&big(8)[..], 1, 62)?; // bare: refused twice, then taken
            world.send(&[5u64, 6][..], 1, 63)?;
            world.send(&[7u64, 8][..], 1, 63)?; // bare: a type mismatch first
                                                // more tags than a destination keeps classes: numbers taken again, in turn
            for round in 0..2u64 {
                for t in 0..300u64 {
                    world.send(&[t + 1000 * round][..], 1, 100 + t as i32)?;
                }
            }
            world.barrier()?;
        }
        1 => {
            // every large one first, in order, while the small ones wait queued
            for i in 0..4u64 {
                check("large, in order", world.recv::<u64>(0, 61)?.0, big(i));
            }
            let p = world.probe(0, 60)?;
            check(
                "a probe of a bare message",
                (p.status.count, p.bytes),
                (2, 16),
            );
            let mut pair = [0u64; 2];
            let st = world.irecv_into(&mut pair[..], 0, 60)?.wait()?;
            check("a request", (pair, st.count), ([0, 1], 2));
            for i in 1..4u64 {
                let (v, st) = world.recv::<u64>(0, rpar::ANY_TAG)?;
                check(
                    "small, in order under a wildcard tag",
                    (v, st.tag),
                    (vec![i, i + 1], 60),
                );
            }
            check("another type", world.recv::<f64>(0, 60)?.0, vec![9.5]);
            check("the class's first", world.recv::<u64>(0, 62)?.0, big(7));
            let mut short = [0u64; 10];
            let err = world.recv_into(&mut short[..], 0, 62).unwrap_err();
            assert!(matches!(err, rpar::Error::Truncated { .. }), "{err}");
            let err = world.recv::<f64>(0, 62).unwrap_err();
            assert!(matches!(err, rpar::Error::TypeMismatch { .. }), "{err}");
            check(
                "the refused bare message stays",
                world.recv::<u64>(0, 62)?.0,
                big(8),
            );
            check("small again", world.recv::<u64>(0, 63)?.0, vec![5, 6]);
            let err = world.recv::<u32>(0, 63).unwrap_err();
            assert!(matches!(err, rpar::Error::TypeMismatch { .. }), "{err}");
            check(
                "the mismatched bare message stays",
                world.recv::<u64>(0, 63)?.0,
                vec![7, 8],
            );
            for t in (0..300u64).rev() {
                for round in 0..2u64 {
                    let got = world.recv::<u64>(0, 100 + t as i32)?.0;
                    check("classes taken again", got, vec![t + 1000 * round]);
                }
            }
            world.barrier()?;
        }
        _ => world.barrier()?,
    }
    Ok(())
}

/// Non-blocking collectives across processes: results as the blocking twins', several in flight,
/// and a program that needs them not to block when they start (rank 0 starts a barrier, then
/// sends to rank 1, which receives before it starts its own).
fn nonblocking(world: &Comm) -> rpar::Result<()> {
    let (p, r) = (world.size(), world.rank());
    let mine: Vec<u64> = (0..5).map(|i| i + r as u64).collect();
    let want = world.allreduce(&mine[..], Sum)?;
    let (mut got, mut all) = (vec![0u64; 5], vec![0u64; 5 * p]);
    world.scope(|s| {
        let a = s.iallreduce((&mine[..], &mut got[..]), Sum)?;
        let b = s.iallgather((&mine[..], &mut all[..]))?;
        rpar::wait_all(vec![b, a]).map(drop)
    })?;
    check("iallreduce", got, want);
    check("iallgather", all, world.allgather(&mine[..])?);
    // rpar's own bcast, non-blocking and then blocking, on the same channel: where MPI gives
    // the blocking call's direct receive the earlier call's message, it goes back to rpar's
    // queues for that call (`Wire::recv_direct`)
    let binomial = world.using(rpar::Bcast::Binomial);
    for round in 0..50u64 {
        let (mut a, mut b) = ([0u64; 3], [0u64; 3]);
        if r == 0 {
            (a, b) = ([round, 1, 2], [round, 3, 4]);
        }
        binomial.scope(|s| {
            let first = s.ibcast(&mut a[..], 0)?;
            binomial.bcast(&mut b[..], 0)?;
            first.wait().map(drop)
        })?;
        check("ibcast, then bcast", (a, b), ([round, 1, 2], [round, 3, 4]));
    }
    if p >= 2 {
        world.scope(|s| {
            match r {
                0 => {
                    let arrived = s.ibarrier()?;
                    world.send(&1u8, 1, 40)?;
                    arrived.wait()?;
                }
                1 => {
                    world.recv::<u8>(0, 40)?;
                    s.ibarrier()?.wait()?;
                }
                _ => s.ibarrier()?.wait().map(drop)?,
            }
            Ok(())
        })?;
    }
    Ok(())
}

fn ring_data(len: usize, seed: usize) -> Vec<u64> {
    (0..len).map(|i| (i * 31 + seed * 7) as u64).collect()
}

fn point_to_point(world: &Comm) -> rpar::Result<()> {
    let (r, p) = (world.rank(), world.size());
    let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
    // every size path: inline, eager, and beyond the in-process rendezvous threshold
    for len in [0, 1, 7, 1000, 100_000, 600_000] {
        let mut got = vec![0u64; len];
        let st = world.sendrecv(&ring_data(len, r)[..], next, 3, &mut got[..], prev, 3)?;
        check("sendrecv around the ring", got, ring_data(len, prev));
        check("status source", st.source, prev);
        // both directions at once with blocking sends of large messages: no deadlock
        world.send(&ring_data(len, r)[..], next, 4)?;
        let (v, st) = world.recv::<u64>(prev, 4)?;
        check("blocking ring send", v, ring_data(len, prev));
        check("count", st.count, len);
    }
    // wildcards, probe and ordering
    if r == 0 {
        let mut from = Vec::new();
        for _ in 1..p {
            let probed = world.probe(rpar::ANY_SOURCE, 5)?;
            check("probed bytes", probed.bytes, 16);
            let (v, st) = world.recv::<u64>(probed.status.source, 5)?;
            check("payload names its sender", v, vec![st.source as u64, 5]);
            from.push(st.source);
        }
        from.sort();
        check(
            "one message from each rank",
            from,
            (1..p).collect::<Vec<_>>(),
        );
    } else {
        world.send(&[r as u64, 5][..], 0, 5)?;
    }
    // messages between one pair stay in order
    if p > 1 {
        if r == 0 {
            for i in 0..100u32 {
                world.send(&i, 1, 6)?;
            }
        } else if r == 1 {
            for i in 0..100u32 {
                check(
                    "non-overtaking",
                    world.recv::<u32>(0, rpar::ANY_TAG)?.0,
                    vec![i],
                );
            }
        }
    }
    // requests and owned sends
    let req = world.isend(&ring_data(5000, r)[..], next, 7)?;
    let mut buf = vec![0u64; 5000];
    let st = world.irecv_into(&mut buf[..], prev, 7)?.wait()?;
    req.wait()?;
    check(
        "isend/irecv",
        (buf, st.count),
        (ring_data(5000, prev), 5000),
    );
    world.send(ring_data(70_000, r), next, 8)?;
    check(
        "owned send is copied across processes",
        world.recv::<u64>(prev, 8)?.0,
        ring_data(70_000, prev),
    );
    // a message to oneself stays in the process
    world.send(&[1.5f64, 2.5][..], r, 9)?;
    check("self send", world.recv::<f64>(r, 9)?.0, vec![1.5, 2.5]);
    // a type mismatch is an error, and the message stays queued
    world.send(&[1u32, 2][..], next, 10)?;
    let err = world.recv::<f64>(prev, 10).unwrap_err();
    assert!(matches!(err, rpar::Error::TypeMismatch { .. }), "{err}");
    check(
        "the mismatched message stays",
        world.recv::<u32>(prev, 10)?.0,
        vec![1, 2],
    );
    Ok(())
}

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Padded {
    c: i8,
    d: f64,
    i: i32,
}

/// `n` values sent to the next rank plainly and typed, each received from the previous one
/// plainly (`recv`, `recv_into`) and typed, and gathered by rpar's own ring algorithm: every
/// value arrives as it was sent, though its bytes travel in map order.
fn every_way_around<T: Datatype + PartialEq + Debug>(
    world: &Comm,
    n: usize,
    nth: fn(usize) -> T,
) -> rpar::Result<()> {
    let value = |rank: usize, i: usize| nth(rank * n + i);
    let (r, p) = (world.rank(), world.size());
    let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
    let ty = T::type_map().commit();
    let mine: Vec<T> = (0..n).map(|i| value(r, i)).collect();
    let theirs: Vec<T> = (0..n).map(|i| value(prev, i)).collect();
    let name = std::any::type_name::<T>();
    for tag in [30, 31, 32] {
        world.send(&mine[..], next, tag)?;
    }
    for tag in [33, 34, 35] {
        world.send(rpar::Typed::new(&mine, &ty, n), next, tag)?;
    }
    for (tag, from) in [(30, "send"), (33, "send_typed")] {
        check(
            &format!("{n} x {name}: {from} -> recv"),
            world.recv::<T>(prev, tag)?.0,
            theirs.clone(),
        );
        let mut into = mine.clone();
        world.recv_into(&mut into, prev, tag + 1)?;
        check(
            &format!("{n} x {name}: {from} -> recv_into"),
            into.clone(),
            theirs.clone(),
        );
        into.clone_from(&mine);
        world.recv_into(rpar::Typed::new(&mut into, &ty, n), prev, tag + 2)?;
        check(
            &format!("{n} x {name}: {from} -> recv_typed"),
            into,
            theirs.clone(),
        );
    }
    let all = world.using(Allgather::Ring).allgather(&mine[..])?;
    let want: Vec<T> = (0..p)
        .flat_map(|q| (0..n).map(move |i| (q, i)))
        .map(|(q, i)| value(q, i))
        .collect();
    check(&format!("{n} x {name}: allgather Ring"), all, want);
    Ok(())
}

fn datatypes(world: &Comm) -> rpar::Result<()> {
    let (r, p) = (world.rank(), world.size());
    let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
    // inline, eager and (between processes) large; a large message to itself would wait for
    // its own receive
    let sizes: &[usize] = if p == 1 {
        &[3, 1000]
    } else {
        &[3, 1000, 10_000]
    };
    assert_reordered::<Reordered>();
    assert_reordered::<ReorderedChar>();
    for &n in sizes {
        every_way_around(world, n, Reordered::nth)?;
        every_way_around(world, n, ReorderedChar::nth)?;
    }
    let padded = |k: usize| Padded {
        c: k as i8,
        d: k as f64 * 0.5,
        i: -(k as i32),
    };
    // a struct with padding: packed by its type map (padding not read), unpacked by it
    world.send(&(0..50).map(padded).collect::<Vec<_>>()[..], next, 20)?;
    check(
        "padded structs",
        world.recv::<Padded>(prev, 20)?.0,
        (0..50).map(padded).collect::<Vec<_>>(),
    );
    // a column of a 4 x 4 matrix, sent with a vector type, received as 4 contiguous values
    let m: Vec<f64> = (0..16).map(|i| (i + 100 * r) as f64).collect();
    let column = TypeMap::vector(4, 1, 4, &f64::type_map())?.commit();
    world.send(rpar::Typed::new(&m, &column, 1).at(1), next, 21)?;
    let want: Vec<f64> = (0..4).map(|i| (1 + 4 * i + 100 * prev) as f64).collect();
    check(
        "a typed column arrives as values",
        world.recv::<f64>(prev, 21)?.0,
        want.clone(),
    );
    // and the other way: values received into a column
    world.send(&want[..], next, 22)?;
    let mut into = vec![0.0f64; 16];
    world.recv_into(rpar::Typed::new(&mut into, &column, 1).at(2), prev, 22)?;
    let mut expected = vec![0.0f64; 16];
    for i in 0..4 {
        expected[2 + 4 * i] = (1 + 4 * i + 100 * ((prev + p - 1) % p)) as f64;
    }
    check("values into a typed column", into, expected);
    // MPI's view of rpar's type maps equals rpar's (the datatype oracle's cases, on MPI itself)
    let i32t = TypeMap::basic(BasicType::I32);
    let f64t = TypeMap::basic(BasicType::F64);
    let ints: Vec<i32> = (0..400).map(|i| i * 3 - 7).collect();
    let reals: Vec<f64> = (0..400).map(|i| i as f64 * 0.75).collect();
    let structs: Vec<Padded> = (0..64).map(padded).collect();
    for map in [
        TypeMap::vector(3, 1, -2, &i32t)?,
        TypeMap::indexed(&[(2, 5), (1, 0), (3, 9)], &i32t)?,
        TypeMap::vector(2, 3, 4, &i32t)?.resized(-4, 40)?,
    ] {
        same_view_as_mpi(&map, &ints, 200)?;
    }
    for map in [
        TypeMap::subarray(&[4, 5], &[2, 3], &[1, 1], Order::C, &f64t)?,
        TypeMap::subarray(&[4, 5], &[2, 3], &[1, 1], Order::Fortran, &f64t)?,
        TypeMap::vector(4, 1, 4, &f64t)?.resized(0, 8)?,
    ] {
        same_view_as_mpi(&map, &reals, 100)?;
    }
    same_view_as_mpi(&Padded::type_map(), &structs, 10)?;
    Ok(())
}

/// MPI sees `map` as rpar does: size, extent, true extent, and the bytes of 3 elements packed.
fn same_view_as_mpi<T: Datatype>(map: &TypeMap, buf: &[T], origin: usize) -> rpar::Result<()> {
    let t = MpiDatatype::new(map)?;
    check(&format!("MPI_Type_size of {map}"), t.size(), map.size());
    check(
        &format!("MPI_Type_get_extent of {map}"),
        t.extent(),
        (map.lb(), map.extent()),
    );
    let true_extent = (map.true_lb(), map.true_extent());
    check(
        &format!("MPI_Type_get_true_extent of {map}"),
        t.true_extent(),
        true_extent,
    );
    let ours = map.commit().pack_to_vec_at(buf, origin, 3)?;
    check(&format!("MPI_Pack of {map}"), t.pack(buf, origin, 3)?, ours);
    Ok(())
}

fn collectives(world: &Comm) -> rpar::Result<()> {
    let (r, p) = (world.rank(), world.size());
    // composition of affine maps x -> a x + b: associative, not commutative
    let compose = UserOp::non_commutative(|(a1, b1): (u64, u64), (a2, b2): (u64, u64)| {
        (a1.wrapping_mul(a2), b1.wrapping_mul(a2).wrapping_add(b2))
    });
    let affine = |v: &[u64]| -> Vec<(u64, u64)> { v.iter().map(|&x| (x | 1, x)).collect() };
    for len in [0usize, 1, 7, 1000, 20_000] {
        let mine = |rank: usize| ring_data(len, rank);
        let sum: Vec<u64> = (0..len).map(|i| (0..p).map(|q| mine(q)[i]).sum()).collect();
        let maps: Vec<Vec<(u64, u64)>> = (0..p).map(|q| affine(&mine(q))).collect();
        let ordered: Vec<(u64, u64)> = (0..len)
            .map(|i| {
                (1..p).fold(maps[0][i], |(a1, b1), q| {
                    let (a2, b2) = maps[q][i];
                    (a1.wrapping_mul(a2), b1.wrapping_mul(a2).wrapping_add(b2))
                })
            })
            .collect();
        for a in [
            Allreduce::Auto,
            Allreduce::RecursiveDoubling,
            Allreduce::Ring,
            Allreduce::Rabenseifner,
            Allreduce::ReduceBcast,
        ] {
            check(
                &format!("allreduce {a:?}"),
                world.using(a).allreduce(&mine(r)[..], Sum)?,
                sum.clone(),
            );
            // out of place: Auto hands MPI both buffers (MPI_Allreduce(sendbuf, recvbuf, …))
            let mut recv = vec![0u64; len];
            world
                .using(a)
                .allreduce((&mine(r)[..], &mut recv[..]), Sum)?;
            check(&format!("allreduce_into {a:?}"), recv, sum.clone());
            let got = world.using(a).allreduce(&affine(&mine(r))[..], compose);
            if a == Allreduce::Ring {
                // the ring would reorder the operands: it refuses a non-commutative operator
                assert!(matches!(got, Err(rpar::Error::InvalidArgument { .. })));
                continue;
            }
            check(
                &format!("allreduce {a:?} non-commutative"),
                got?,
                ordered.clone(),
            );
        }
        let fsum: f64 = (0..p).map(|q| q as f64 + 0.25).sum();
        let got = world.allreduce(&(r as f64 + 0.25), Sum)?;
        assert!(
            (got - fsum).abs() < 1e-12,
            "allreduce of f64 on MPI: {got} vs {fsum}"
        );
        check(
            "allreduce Max",
            world.allreduce(&(r as i32), Max)?,
            p as i32 - 1,
        );
        for root in [0, p - 1] {
            for a in [
                Reduce::Auto,
                Reduce::Linear,
                Reduce::Binomial,
                Reduce::Rabenseifner,
            ] {
                let got = world.using(a).reduce(&mine(r)[..], Sum, root)?;
                check(
                    &format!("reduce {a:?} to {root}"),
                    got,
                    (r == root).then(|| sum.clone()),
                );
                // out of place; the receive buffer outside the root is ignored (empty here)
                let mut recv = vec![u64::MAX; if r == root { len } else { 0 }];
                world
                    .using(a)
                    .reduce((&mine(r)[..], &mut recv[..]), Sum, root)?;
                let want = if r == root { sum.clone() } else { Vec::new() };
                check(&format!("reduce_into {a:?} to {root}"), recv, want);
            }
            for a in [
                Bcast::Auto,
                Bcast::Linear,
                Bcast::Binomial,
                Bcast::Pipeline,
                Bcast::ScatterAllgather,
                Bcast::Torus,
            ] {
                let mut buf = if r == root { mine(root) } else { vec![0; len] };
                world.using(a).bcast(&mut buf[..], root)?;
                check(&format!("bcast {a:?} from {root}"), buf, mine(root));
            }
            for a in [Gather::Auto, Gather::Linear, Gather::Binomial] {
                let got = world.using(a).gather(&mine(r)[..], root)?;
                let all: Vec<u64> = (0..p).flat_map(mine).collect();
                check(
                    &format!("gather {a:?} to {root}"),
                    got,
                    (r == root).then_some(all),
                );
            }
            for a in [Scatter::Auto, Scatter::Linear, Scatter::Binomial] {
                let all: Vec<u64> = (0..p).flat_map(mine).collect();
                let send = if r == root { all } else { Vec::new() };
                check(
                    &format!("scatter {a:?} from {root}"),
                    world.using(a).scatter(&send, root)?,
                    mine(r),
                );
            }
        }
        let all: Vec<u64> = (0..p).flat_map(mine).collect();
        for a in [
            Allgather::Auto,
            Allgather::Ring,
            Allgather::RecursiveDoubling,
            Allgather::Pairwise,
            Allgather::Bruck,
            Allgather::Torus,
        ] {
            check(
                &format!("allgather {a:?}"),
                world.using(a).allgather(&mine(r)[..])?,
                all.clone(),
            );
        }
        // block j of rank q's send is (q, j, i); rank r receives block r of every rank
        let block = |q: usize, j: usize| -> Vec<u64> {
            (0..len)
                .map(|i| (q * 1_000_000 + j * 1000 + i) as u64)
                .collect()
        };
        let send: Vec<u64> = (0..p).flat_map(|j| block(r, j)).collect();
        let want: Vec<u64> = (0..p).flat_map(|q| block(q, r)).collect();
        for a in [
            Alltoall::Auto,
            Alltoall::Linear,
            Alltoall::Pairwise,
            Alltoall::Bruck,
        ] {
            check(
                &format!("alltoall {a:?}"),
                world.using(a).alltoall(&send[..])?,
                want.clone(),
            );
        }
        let cube = world.using(Alltoall::Hypercube).alltoall(&send[..]);
        if p.is_power_of_two() {
            check("alltoall Hypercube", cube?, want.clone());
        } else {
            assert!(
                matches!(cube, Err(rpar::Error::InvalidArgument { .. })),
                "the hypercube alltoall refuses {p} ranks: {:?}",
                cube.map(|v| v.len())
            );
        }
        let prefix: Vec<u64> = (0..len)
            .map(|i| (0..=r).map(|q| mine(q)[i]).sum())
            .collect();
        for a in [Scan::Auto, Scan::Linear, Scan::RecursiveDoubling] {
            check(
                &format!("scan {a:?}"),
                world.using(a).scan(&mine(r)[..], Sum)?,
                prefix.clone(),
            );
            let ex = world.using(a).exscan(&mine(r)[..], Sum)?;
            let want = (r > 0).then(|| {
                (0..len)
                    .map(|i| (0..r).map(|q| mine(q)[i]).sum())
                    .collect::<Vec<u64>>()
            });
            check(&format!("exscan {a:?}"), ex, want);
        }
        let blocks: Vec<u64> = (0..p * len).map(|i| (i + r) as u64).collect();
        let want: Vec<u64> = (r * len..(r + 1) * len)
            .map(|i| (0..p).map(|q| (i + q) as u64).sum())
            .collect();
        for a in [
            ReduceScatter::Auto,
            ReduceScatter::RecursiveHalving,
            ReduceScatter::Pairwise,
            ReduceScatter::Ring,
        ] {
            check(
                &format!("reduce_scatter_block {a:?}"),
                world.using(a).reduce_scatter(&blocks[..], Sum)?,
                want.clone(),
            );
        }
        for a in [Shift::Auto, Shift::Direct, Shift::GrayCode] {
            let got = world.using(a).shift_circular(mine(r), 1);
            if a == Shift::GrayCode && !p.is_power_of_two() {
                assert!(
                    matches!(got, Err(rpar::Error::InvalidArgument { .. })),
                    "the Gray-code shift refuses {p} ranks: {:?}",
                    got.map(|v| v.len())
                );
                continue;
            }
            check(
                &format!("shift_circular {a:?}"),
                got?,
                mine((r + p - 1) % p),
            );
        }
    }
    for a in [
        Barrier::Auto,
        Barrier::Central,
        Barrier::Dissemination,
        Barrier::Tree,
    ] {
        world.using(a).barrier()?;
    }
    Ok(())
}

fn communicators(world: &Comm) -> rpar::Result<()> {
    let (r, p) = (world.rank(), world.size());
    let half = world
        .split(Some((r % 2) as u32), -(r as i32))?
        .expect("every rank has a color");
    let members: Vec<usize> = (0..p).filter(|q| q % 2 == r % 2).rev().collect();
    check(
        "split orders by key",
        half.rank(),
        members.iter().position(|&q| q == r).unwrap(),
    );
    check("split size", half.size(), members.len());
    let sum = world.allreduce(&(r as u64), Sum)?;
    check(
        "allreduce on the split",
        half.allreduce(&(r as u64), Sum)?,
        members.iter().map(|&q| q as u64).sum(),
    );
    check("the parent still works", sum, (0..p as u64).sum());
    let none = world.split(if r == 0 { None } else { Some(1) }, 0)?;
    check("MPI_UNDEFINED gets no communicator", none.is_none(), r == 0);
    let dup = world.dup()?;
    if p > 1 {
        if r == 0 {
            dup.send(&1u8, 1, 0)?;
            world.send(&2u8, 1, 0)?;
        } else if r == 1 {
            check("dup isolates", world.recv::<u8>(0, 0)?.0, vec![2]);
            check("dup isolates", dup.recv::<u8>(0, 0)?.0, vec![1]);
        }
    }
    // communicators made one after another on overlapping groups keep apart
    let a = half.dup()?;
    let b = world.dup()?;
    check(
        "dup of a split",
        a.allreduce(&1u32, Sum)?,
        half.size() as u32,
    );
    check("dup of the world", b.allreduce(&1u32, Sum)?, p as u32);
    Ok(())
}

/// MPI_Dims_create, for comparison.
fn mpi_dims_create(nnodes: usize, dims: &mut [usize]) {
    let mut d: Vec<i32> = dims.iter().map(|&x| x as i32).collect();
    // SAFETY: `d` holds `dims.len()` ints, as MPI_Dims_create reads and writes.
    unsafe { ffi::MPI_Dims_create(nnodes as i32, d.len() as i32, d.as_mut_ptr()) };
    for (o, x) in dims.iter_mut().zip(d) {
        *o = x as usize;
    }
}

fn topology(world: &Comm) -> rpar::Result<()> {
    let p = world.size();
    for nnodes in 1..=64 {
        for nd in 1..=3 {
            let (mut ours, mut theirs) = (vec![0; nd], vec![0; nd]);
            rpar::dims_create(nnodes, &mut ours)?;
            mpi_dims_create(nnodes, &mut theirs);
            check(&format!("dims_create({nnodes}, {nd})"), ours, theirs);
        }
    }
    // MPI_Graph_map of rings of 1..=p nodes: the same placement as MPI's
    for nnodes in 1..=p {
        let index: Vec<usize> = (1..=nnodes).map(|i| 2 * i).collect();
        let edges: Vec<usize> = (0..nnodes)
            .flat_map(|i| [(i + nnodes - 1) % nnodes, (i + 1) % nnodes])
            .collect();
        let ours = rpar::GraphComm::graph_map(world, &index, &edges)?;
        let (ci, ce): (Vec<i32>, Vec<i32>) = (
            index.iter().map(|&x| x as i32).collect(),
            edges.iter().map(|&x| x as i32).collect(),
        );
        let wc = rpar::mpi::rsmpi::topology::SimpleCommunicator::world();
        let mut theirs = 0i32;
        // SAFETY: `ci` holds nnodes ints and `ce` index[nnodes-1]; MPI writes one int.
        unsafe {
            ffi::MPI_Graph_map(
                wc.as_raw(),
                nnodes as i32,
                ci.as_ptr(),
                ce.as_ptr(),
                &mut theirs,
            )
        };
        let theirs = (theirs >= 0).then_some(theirs as usize); // MPI_UNDEFINED is negative
        if world.rank() < nnodes {
            check(
                &format!("MPI_Graph_map of a ring of {nnodes}"),
                ours,
                theirs,
            );
        } else {
            // not in the graph: MPI_UNDEFINED (MPI-4.0 §8.5.8), as MPICH answers; Open MPI 4.1
            // answers the caller's own rank there
            check(&format!("MPI_Graph_map of a ring of {nnodes}"), ours, None);
        }
    }
    let mut dims = [0usize; 2];
    rpar::dims_create(p, &mut dims)?;
    for periods in [[true, false], [false, true]] {
        let grid =
            CartComm::create(world, dims, periods, false)?.expect("the grid holds every rank");
        // the same grid on MPI
        let (d, per): (Vec<i32>, Vec<i32>) = (
            dims.iter().map(|&x| x as i32).collect(),
            periods.iter().map(|&x| x as i32).collect(),
        );
        let wc = rpar::mpi::rsmpi::topology::SimpleCommunicator::world();
        let mut cart = std::mem::MaybeUninit::uninit();
        // SAFETY: the arrays hold 2 ints each; MPI writes the new communicator handle.
        let cart = unsafe {
            ffi::MPI_Cart_create(
                wc.as_raw(),
                2,
                d.as_ptr(),
                per.as_ptr(),
                0,
                cart.as_mut_ptr(),
            );
            cart.assume_init()
        };
        let mut me = 0;
        let mut coords = [0i32; 2];
        // SAFETY: `cart` is the live Cartesian communicator; MPI writes rank and coordinates.
        unsafe {
            ffi::MPI_Comm_rank(cart, &mut me);
            ffi::MPI_Cart_coords(cart, me, 2, coords.as_mut_ptr());
        }
        check("rank in the grid", grid.rank(), me as usize);
        check("MPI_Cart_coords", grid.coords().map(|c| c as i32), coords);
        for dim in 0..2 {
            for disp in [-3isize, -1, 1, 2] {
                let (mut src, mut dst) = (0, 0);
                // SAFETY: as above; MPI writes the two ranks.
                unsafe { ffi::MPI_Cart_shift(cart, dim as i32, disp as i32, &mut src, &mut dst) };
                // MPI_PROC_NULL is a negative int in MPICH and Open MPI
                let null = |x: i32| if x >= 0 { x as usize } else { rpar::PROC_NULL };
                check(
                    &format!("MPI_Cart_shift({dim}, {disp})"),
                    grid.shift(dim, disp)?,
                    (null(src), null(dst)),
                );
            }
        }
        let rows: CartComm<1> = grid.sub([false, true])?;
        let mut sub = std::mem::MaybeUninit::uninit();
        let remain = [0i32, 1];
        let (mut sub_rank, mut sub_size) = (0, 0);
        // SAFETY: `remain` holds 2 ints; MPI writes the sub-grid communicator, its rank and size.
        unsafe {
            ffi::MPI_Cart_sub(cart, remain.as_ptr(), sub.as_mut_ptr());
            let mut sub = sub.assume_init();
            ffi::MPI_Comm_rank(sub, &mut sub_rank);
            ffi::MPI_Comm_size(sub, &mut sub_size);
            ffi::MPI_Comm_free(&mut sub);
            let mut cart = cart;
            ffi::MPI_Comm_free(&mut cart);
        }
        check(
            "MPI_Cart_sub rank and size",
            (rows.rank(), rows.size()),
            (sub_rank as usize, sub_size as usize),
        );
        check(
            "a row sums its ranks",
            rows.allreduce(&1u32, Sum)?,
            dims[1] as u32,
        );
    }
    // different grids on different ranks: a collective mismatch on every rank, which names
    // each version of the arguments (the agreement check runs on MPI's own allgathers)
    if p > 1 {
        let dims = if world.rank() == 0 { [1, p] } else { [p, 1] };
        match CartComm::create(world, dims, [false, false], false) {
            Err(rpar::Error::CollectiveMismatch { calls, .. }) => check(
                "a mismatched CartComm::create names both versions",
                calls.iter().map(|c| c.0).collect::<Vec<_>>(),
                vec![0, 1],
            ),
            other => panic!("a mismatched CartComm::create gave {other:?}"),
        }
        // and the communicator stays usable
        check("after a mismatch", world.allreduce(&1u32, Sum)?, p as u32);
    }
    Ok(())
}
