//! Fault injection, for the reliability tests: built with `--cfg rpar_faults`, a run can make
//! one rank panic, or return an error, at the `n`-th *fault point* it passes — the places inside
//! rpar where a rank's failure must leave every other rank sound (a lent buffer, a rendezvous, a
//! shared copy) and the run must end promptly with that rank's failure. `tests/checks_faults.rs`
//! tries every point of every shared-memory collective and of large transfers in turn, under
//! valgrind in CI.
//!
//! Without the cfg (every ordinary build) a point is an empty inline function and this module
//! exports nothing.
//!
//! Points come in two kinds: [`point`], where the rank may panic or fail with an error (the
//! caller returns the error as rpar's own would be), and [`panic_point`], inside copies that
//! cannot return an error, where it may only panic. An error plan counts only the first kind.

#[cfg(rpar_faults)]
pub use plan::{passed, Fault, Kind};

/// A fault point where the rank may panic or return an error.
#[cfg(not(rpar_faults))]
#[inline(always)]
pub(crate) fn point(_site: &'static str) -> crate::Result<()> {
    Ok(())
}

/// A fault point where the rank may only panic (inside a copy that returns no error).
#[cfg(not(rpar_faults))]
#[inline(always)]
pub(crate) fn panic_point(_site: &'static str) {}

#[cfg(rpar_faults)]
pub(crate) use plan::{arm, panic_point, point};

#[cfg(rpar_faults)]
mod plan {
    use crate::{Error, Result};
    use std::cell::Cell;

    /// How the chosen rank fails.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Kind {
        /// It panics with a message naming the point.
        Panic,
        /// Its call returns [`Error::InvalidArgument`] from `"fault injection"`.
        Error,
    }

    /// The failure to inject into a run: `rank` fails at the `nth` fault point it passes (0
    /// first; an error plan counts only the points that can return an error).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Fault {
        /// The rank (world rank) that fails.
        pub rank: usize,
        /// At which of its fault points.
        pub nth: usize,
        /// Panic or error.
        pub kind: Kind,
    }

    thread_local! {
        /// This rank thread's plan, if it is the one to fail.
        static PLAN: Cell<Option<(Kind, usize)>> = const { Cell::new(None) };
        /// Points passed so far on this thread: (every point, the error-capable ones).
        static PASSED: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    }

    /// Sets this rank thread up for a run: fails as `fault` says if it is for `rank`.
    pub(crate) fn arm(rank: usize, fault: Option<Fault>) {
        PLAN.set(fault.filter(|f| f.rank == rank).map(|f| (f.kind, f.nth)));
        PASSED.set((0, 0));
    }

    /// How many fault points this rank thread has passed in its run so far: (all, those that
    /// can return an error) — the range of `nth` worth trying for each kind.
    pub fn passed() -> (usize, usize) {
        PASSED.get()
    }

    /// Counts one point; whether the plan fails here, and how.
    fn reached(can_fail: bool) -> Option<Kind> {
        let (all, errors) = PASSED.get();
        PASSED.set((all + 1, errors + usize::from(can_fail)));
        match PLAN.get()? {
            (Kind::Panic, nth) if nth == all => Some(Kind::Panic),
            (Kind::Error, nth) if can_fail && nth == errors => Some(Kind::Error),
            _ => None,
        }
    }

    pub(crate) fn point(site: &'static str) -> Result<()> {
        match reached(true) {
            None => Ok(()),
            Some(Kind::Panic) => panic!("injected panic at {site}"),
            Some(Kind::Error) => Err(Error::invalid(
                "fault injection",
                format!("injected error at {site}"),
            )),
        }
    }

    pub(crate) fn panic_point(site: &'static str) {
        if reached(false) == Some(Kind::Panic) {
            panic!("injected panic at {site}")
        }
    }
}
