//! Shared by the integration tests: for those that run the example programs, where cargo put
//! an example's build, and running it (`cargo test` builds the examples next to the test
//! binaries, `target/<profile>/examples`); for the collective tests, the algorithms of each
//! family, running a check on every rank count, the roots to try, and comparing a result with
//! its reference as an error of the rank (so that the run fails with it, rather than one rank
//! panicking while the others wait); for the out-of-place reduction tests, their sequential
//! references ([`reduction`]).

#![allow(dead_code)] // each test file uses the part it needs

pub(crate) mod closed_forms;
pub(crate) mod reduction;

use rpar::{Allgather, Alltoall, Bcast, Comm, Error, Gather, Scatter};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

/// Every algorithm of each data-movement family, `Auto` first, for the sweeps.
pub(crate) const BCAST: &[Bcast] = &[
    Bcast::Auto,
    Bcast::Linear,
    Bcast::Binomial,
    Bcast::Pipeline,
    Bcast::ScatterAllgather,
    Bcast::Torus,
    Bcast::SharedMemory,
];
pub(crate) const GATHER: &[Gather] = &[Gather::Auto, Gather::Linear, Gather::Binomial];
pub(crate) const SCATTER: &[Scatter] = &[Scatter::Auto, Scatter::Linear, Scatter::Binomial];
pub(crate) const ALLGATHER: &[Allgather] = &[
    Allgather::Auto,
    Allgather::Ring,
    Allgather::RecursiveDoubling,
    Allgather::Pairwise,
    Allgather::Bruck,
    Allgather::Torus,
    Allgather::SharedMemory,
];
pub(crate) const ALLTOALL: &[Alltoall] = &[
    Alltoall::Auto,
    Alltoall::Linear,
    Alltoall::Pairwise,
    Alltoall::Bruck,
    Alltoall::Hypercube,
    Alltoall::SharedMemory,
];

/// `Ok` if `got` is `want`, else an error saying `what()` and both.
pub(crate) fn check<T: PartialEq + std::fmt::Debug>(
    got: &T,
    want: &T,
    what: impl Fn() -> String,
) -> rpar::Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::user(format!(
            "{}: got {got:?}, expected {want:?}",
            what()
        )))
    }
}

/// Runs `f` on every rank of a run of each of `ranks` ranks, and panics with the first
/// failing run's error.
pub(crate) fn every_rank_count(ranks: &[usize], f: impl Fn(&Comm) -> rpar::Result<()> + Sync) {
    for &p in ranks {
        rpar::run(p, |world| f(&world)).unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

/// Runs `f` on a thread of its own and returns what it returns, or panics saying `what` if it
/// has not returned after `limit`: for checks that something fails or finishes promptly rather
/// than hanging or spinning (a limit of seconds where it takes milliseconds, so that a loaded
/// machine does not trip it).
pub(crate) fn within<R: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(f()));
    result
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what}: not done after {limit:?}"))
}

/// Whether the tests run under valgrind (CI sets `RPAR_UNDER_VALGRIND`), some fifty times
/// slower: sweeps then take a sample.
/// Runs `call` on `p` ranks and returns each rank's result of it, in rank order. A
/// disagreement between the ranks ends the run with that error (every rank's), so the results
/// are collected as the ranks get them; the run's error, if any, must be one of them.
#[allow(dead_code)] // not every test target uses every helper
pub(crate) fn each_rank<R: Send>(
    p: usize,
    call: impl Fn(&Comm) -> rpar::Result<R> + Sync,
) -> Vec<rpar::Result<R>> {
    let results = std::sync::Mutex::new(Vec::new());
    let run = rpar::run(p, |world| {
        let result = call(&world);
        results.lock().unwrap().push((world.rank(), result));
        Ok(())
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(r, _)| *r);
    if let Err(e) = run {
        assert!(
            results.iter().any(|(_, r)| r.as_ref().err() == Some(&e)),
            "the run's error is the ranks': {e:?}"
        );
    }
    results.into_iter().map(|(_, r)| r).collect()
}

pub(crate) fn under_valgrind() -> bool {
    std::env::var_os("RPAR_UNDER_VALGRIND").is_some()
}

/// The roots a rooted collective is tried with on `p` ranks: 0, 1, `p / 2` and `p - 1` (fewer
/// where they coincide).
pub(crate) fn roots(p: usize) -> Vec<usize> {
    let mut r = vec![0, 1 % p, p / 2, p - 1];
    r.sort_unstable();
    r.dedup();
    r
}

/// A deterministic pseudo-random value for element `i` of rank `rank` (splitmix64).
pub(crate) fn mix(rank: usize, i: usize, salt: u64) -> u64 {
    let mut z = (rank as u64) << 32 ^ (i as u64) ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The build of example `name`.
pub(crate) fn example(name: &str) -> PathBuf {
    let mut dir = std::env::current_exe().expect("test binary path");
    dir.pop(); // deps/
    dir.pop();
    dir.join("examples").join(name)
}

/// Runs example `name` with `args` and returns its output, whatever its exit status.
pub(crate) fn output(name: &str, args: &[&str]) -> Output {
    let path = example(name);
    Command::new(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", path.display()))
}

/// Runs example `name` with `args`, asserts that it succeeded, and returns its standard output.
pub(crate) fn run(name: &str, args: &[&str]) -> String {
    let out = output(name, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} {args:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
