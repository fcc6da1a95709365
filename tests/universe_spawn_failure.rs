//! A rank thread that fails to start after others have (here: the address space runs out, set
//! low with `prlimit` on this test process, which is why this test has a binary of its own):
//! the run stops the ranks already started — blocked in a barrier, waiting for the rank that
//! never came — joins them, and returns the error of the thread that could not start.

use rpar::{Error, Universe};
use std::process::Command;
use std::time::{Duration, Instant};

/// This process's virtual memory size in bytes (Linux).
fn vm_size() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Sets this process's soft address-space limit with `prlimit`; false if that is impossible.
fn limit_address_space(bytes: Option<u64>) -> bool {
    let value = bytes.map_or("unlimited".to_string(), |b| b.to_string());
    Command::new("prlimit")
        .args([
            "--pid",
            &std::process::id().to_string(),
            &format!("--as={value}:"),
        ])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn ranks_started_before_a_thread_fails_are_stopped_and_joined() {
    const STACK: u64 = 64 << 20;
    // The first four rank stacks fit, with room for small maps; the fifth does not. (The
    // watchdog's default 2 MiB stack is mapped first.)
    let Some(now) = vm_size() else {
        eprintln!("no /proc/self/status: skipped");
        return;
    };
    // a run first, so that the allocator's arenas and rpar's statics exist before the limit
    rpar::run(2, |w| w.barrier()).unwrap();
    let now = vm_size().unwrap_or(now);
    if !limit_address_space(Some(now + 4 * STACK + (24 << 20))) {
        eprintln!("prlimit is not available: skipped");
        return;
    }
    let start = Instant::now();
    let got = Universe::new(8).stack_size(STACK as usize).run(|w| {
        w.barrier()?;
        Ok(w.rank())
    });
    let elapsed = start.elapsed();
    limit_address_space(None);
    let err = got.unwrap_err();
    let Error::InvalidArgument { call, message } = &err else {
        panic!("expected the spawn error as the run's error, got {err:?}");
    };
    assert_eq!(*call, "Universe::run");
    assert!(
        message.contains("could not start the thread of rank"),
        "{message}"
    );
    assert!(
        !message.contains("rank 0 of 8"),
        "at least one rank started: {message}"
    );
    assert!(message.contains("were stopped"), "{message}");
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    // and the process is fine afterwards
    assert_eq!(rpar::run(3, |w| Ok(w.rank())).unwrap(), [0, 1, 2]);
}
