//! What one rank of a simulated program did ([`Universe::simulate`](crate::Universe::simulate)):
//! its [`Step`]s, in order — computation between its rpar calls, measured in the thread's own
//! CPU time, and the messages it sent and received inside them.
//!
//! The recorder hangs off the rank's trace recorder (`trace::RankTrace`), whose hooks already see
//! every call open and close, every message leave and arrive: a call that opens while no other is
//! open ends a stretch of computation, the close of the outermost call starts the next. CPU time
//! rather than wall time, because ranks that outnumber the cores wait for one, and CPU time does
//! not count that wait: what a rank computes costs the same whether it had a core of its own or
//! shared one with 4095 others (up to what sharing does to the caches). Time inside rpar calls —
//! copies, polling, waking other ranks — is left out: the network model charges communication.

use std::cell::{Cell, RefCell};

use super::SpanArgs;

/// One thing a rank did, in its program's order.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Computed for `ns` nanoseconds of CPU time outside rpar calls.
    Compute { ns: u64 },
    /// Sent the message with trace flow id `flow`.
    Send { flow: u32 },
    /// Completed the receive of the message with flow id `flow`: `tag`, `bytes`.
    Recv { flow: u32, tag: i32, bytes: u64 },
    /// Combined `bytes` bytes in a reduction (the simulator charges gamma per byte).
    Reduce { bytes: u64 },
    /// A call began.
    Enter,
    /// The call begun by the matching `Enter` ended: its name (`None` for a poll that found
    /// nothing, not shown, as in a trace) and, when the simulated run is traced, what it was
    /// about (boxed: a step stays small in the long runs that are not traced).
    Leave {
        name: Option<&'static str>,
        args: Option<Box<SpanArgs>>,
    },
}

/// What one rank of a simulated run did.
#[derive(Debug, Default)]
pub(crate) struct Recorded {
    /// Its steps, in order.
    pub(crate) steps: Vec<Step>,
    /// How many of its messages had no flow id (the simulation cannot follow them).
    pub(crate) lost: u64,
}

/// The recorder of one rank of a simulated run.
#[derive(Debug)]
pub(crate) struct ProgramRecord {
    steps: RefCell<Vec<Step>>,
    /// Calls open (a collective's inner calls count too).
    depth: Cell<u32>,
    /// The thread's CPU time when it last left an rpar call (or started).
    mark: Cell<u64>,
    /// Messages sent without a flow id (past the trace's ids): the simulation cannot follow them.
    lost: Cell<u64>,
    /// Whether each call's arguments are kept (for a trace of the simulated run).
    detailed: bool,
}

impl ProgramRecord {
    /// The recorder of a rank whose program starts now, on this thread; `detailed`: keep what
    /// each call was about, for a trace.
    pub(crate) fn new(detailed: bool) -> Self {
        ProgramRecord {
            steps: RefCell::new(Vec::new()),
            depth: Cell::new(0),
            mark: Cell::new(thread_cpu_ns()),
            lost: Cell::new(0),
            detailed,
        }
    }

    /// A call opens: the computation since the last call closed ends here.
    pub(crate) fn enter(&self) {
        if self.depth.get() == 0 {
            self.computed_until_now();
        }
        self.depth.set(self.depth.get() + 1);
        self.steps.borrow_mut().push(Step::Enter);
    }

    /// The innermost open call closes (`span`: its name and what it was about, if it is shown).
    pub(crate) fn leave(&self, span: Option<(&'static str, &SpanArgs)>) {
        let (name, args) = match span {
            Some((name, args)) => (Some(name), self.detailed.then(|| Box::new(args.clone()))),
            None => (None, None),
        };
        self.steps.borrow_mut().push(Step::Leave { name, args });
        let depth = self.depth.get().saturating_sub(1);
        self.depth.set(depth);
        if depth == 0 {
            self.mark.set(thread_cpu_ns());
        }
    }

    /// A message with flow id `flow` (0: none left) leaves.
    pub(crate) fn send(&self, flow: u32) {
        if flow == 0 {
            self.lost.set(self.lost.get() + 1);
            return;
        }
        self.steps.borrow_mut().push(Step::Send { flow });
    }

    /// The message with flow id `flow` was received.
    pub(crate) fn recv(&self, flow: u32, tag: i32, bytes: usize) {
        self.steps.borrow_mut().push(Step::Recv {
            flow,
            tag,
            bytes: bytes as u64,
        });
    }

    /// A reduction combined `bytes` bytes.
    pub(crate) fn reduce(&self, bytes: usize) {
        self.steps.borrow_mut().push(Step::Reduce {
            bytes: bytes as u64,
        });
    }

    /// The rank's program returned: what it did, the computation after its last call included.
    pub(crate) fn take(&self) -> Recorded {
        if self.depth.get() == 0 {
            self.computed_until_now();
        }
        Recorded {
            steps: self.steps.take(),
            lost: self.lost.get(),
        }
    }

    fn computed_until_now(&self) {
        let now = thread_cpu_ns();
        // the stretch holds one reading of the clock's worth of the clock's own cost (the end
        // of the reading that began it, the start of this one): not the program's
        let ns = now
            .saturating_sub(self.mark.replace(now))
            .saturating_sub(reading_cost());
        if ns > 0 {
            self.steps.borrow_mut().push(Step::Compute { ns });
        }
    }
}

/// What one reading of [`thread_cpu_ns`] adds to the CPU time it measures, in nanoseconds: the
/// least difference between two readings in a row, measured once per process. The per-thread
/// CPU clock is a system call (about 0.5 us on the KVM machine here; the monotonic clock, read
/// in user space, takes 24 ns), and a program that makes 5 calls per 25 us sweep would otherwise
/// be credited 10% more computation than it did.
fn reading_cost() -> u64 {
    static COST: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *COST.get_or_init(|| {
        (0..64)
            .map(|_| {
                let a = thread_cpu_ns();
                thread_cpu_ns().saturating_sub(a)
            })
            .min()
            .unwrap_or(0)
    })
}

/// CPU time this thread has used, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(target_os = "linux")]
fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for clock_gettime to write; the clock id is a constant
    // that Linux always provides, and on failure `now` stays zero (the step then counts 0).
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Elsewhere no per-thread CPU clock is read: wall time since the first reading, which counts
/// the waits for a core when ranks outnumber cores.
#[cfg(not(target_os = "linux"))]
fn thread_cpu_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    ORIGIN
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computation_is_what_runs_outside_the_outermost_call() {
        let p = ProgramRecord::new(true);
        // spins for `ms` of this thread's CPU time (wall time would count waits for a core)
        let spin = |ms: u64| {
            let start = thread_cpu_ns();
            let mut x = 0u64;
            while thread_cpu_ns() - start < ms * 1_000_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        };
        spin(3);
        p.enter();
        p.send(7);
        p.enter(); // an inner call: no computation step
        spin(3); // inside rpar: not computation
        p.recv(9, 1, 16);
        p.leave(None);
        p.leave(Some(("send", &SpanArgs::default())));
        spin(2);
        p.send(0); // no flow id left: counted as lost, not a step
        let Recorded { steps, lost } = p.take();
        assert_eq!(lost, 1);
        let shape: Vec<String> = steps
            .iter()
            .map(|s| match s {
                Step::Compute { ns } => {
                    assert!(*ns >= 1_500_000, "{ns}");
                    "compute".into()
                }
                other => format!("{other:?}")
                    .split([' ', '('])
                    .next()
                    .unwrap()
                    .into(),
            })
            .collect();
        assert_eq!(
            shape,
            ["compute", "Enter", "Send", "Enter", "Recv", "Leave", "Leave", "compute"]
        );
        if let (Step::Compute { ns: before }, Step::Compute { ns: after }) = (&steps[0], &steps[7])
        {
            // the 3 ms inside the calls count in neither
            assert!(
                *before < 6_000_000 && *after < 5_000_000,
                "{before} {after}"
            );
        }
    }
}
