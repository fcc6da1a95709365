//! Deadlock detection: each rank publishes, when it parks, what it waits for; a watchdog
//! thread of the universe looks every few milliseconds and ends the run with
//! [`Error::Deadlock`] when it has seen, twice in a row, every unfinished rank parked with the
//! same park count and every mailbox of a parked rank empty.
//!
//! Why that has no false positives: a parked rank only wakes through its mailbox, so while all
//! unfinished ranks are parked and no mailbox holds an envelope, no rank can ever send again.
//! The two snapshots are not atomic, but a rank that ran between them has parked again since
//! (its park count changed) or is not parked (its flag is down), and a message pushed between
//! them is still in its mailbox at the second look. A rank that was counted parked with an
//! unchanged count in both looks was parked all the time between them; all of them were parked
//! together at the instant the first look finished, with empty mailboxes: a deadlock.
//!
//! Lanes (`lane.rs`) need no look of their own: a rank parks only after it has published
//! `PARKED` and found its lanes empty, and a producer that pushes after that look sees `PARKED`
//! and sends it a `Wake` through the mailbox (or another producer that cleared the flag does).
//! So a parked rank with a message in a lane has a `Wake` in its mailbox, or a producer that is
//! running (not parked) is about to send one: neither look can count it as a deadlock.
//!
//! Cost: nothing on the paths that find their message while spinning; a rank about to park
//! stores its wait description (an uncontended mutex) and bumps two atomics.

use super::endpoint::CollectiveCall;
use super::fabric::{Fabric, Failure};
use crate::error::BlockedCall;
use crate::Error;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How often the watchdog looks.
pub(crate) const WATCH_INTERVAL: Duration = Duration::from_millis(40);

/// One rank's published state.
#[derive(Debug, Default)]
pub(crate) struct RankWatch {
    parked: AtomicBool,
    finished: AtomicBool,
    parks: AtomicU64,
    waiting: Mutex<Option<Parked>>,
}

/// What a parked rank waits for: the blocked call, the collective call it is in, and the last
/// collective call it completed, with its communicator (to name what a rank that went past a
/// call did in it).
#[derive(Debug, Clone)]
pub(crate) struct Parked {
    pub(crate) call: BlockedCall,
    pub(crate) collective: Option<CollectiveCall>,
    pub(crate) previous: Option<(u32, CollectiveCall)>,
}

/// The watch state of all ranks.
#[derive(Debug)]
pub(crate) struct Watch {
    ranks: Vec<CachePadded<RankWatch>>,
}

impl Watch {
    pub(crate) fn new(n: usize) -> Self {
        Watch {
            ranks: (0..n)
                .map(|_| CachePadded::new(RankWatch::default()))
                .collect(),
        }
    }

    /// `rank` is about to park waiting for `call`.
    pub(crate) fn parking(&self, rank: usize, parked: Parked) {
        let w = &self.ranks[rank];
        *w.waiting.lock().unwrap_or_else(|e| e.into_inner()) = Some(parked);
        w.parks.fetch_add(1, Ordering::SeqCst);
        w.parked.store(true, Ordering::SeqCst);
    }

    /// `rank` woke up.
    pub(crate) fn unparked(&self, rank: usize) {
        self.ranks[rank].parked.store(false, Ordering::SeqCst);
    }

    /// `rank`'s program returned (or failed).
    pub(crate) fn finished(&self, rank: usize) {
        self.ranks[rank].finished.store(true, Ordering::SeqCst);
    }
}

/// One look: `Some(park counts)` if every unfinished rank is parked with an empty mailbox.
fn snapshot(fabric: &Fabric) -> Option<Vec<u64>> {
    let watch = fabric.watch();
    let mut counts = Vec::with_capacity(watch.ranks.len());
    let mut any_running = false;
    for (rank, w) in watch.ranks.iter().enumerate() {
        if w.finished.load(Ordering::SeqCst) {
            counts.push(u64::MAX);
            continue;
        }
        any_running = true;
        if !w.parked.load(Ordering::SeqCst) || !fabric.mailbox(rank).is_empty() {
            return None;
        }
        counts.push(w.parks.load(Ordering::SeqCst));
    }
    any_running.then_some(counts)
}

/// Runs until every rank finished or the run aborted, checking for a deadlock every
/// [`WATCH_INTERVAL`]; `stop` ends it early.
pub(crate) fn watchdog(fabric: &Fabric, stop: &AtomicBool) {
    let mut previous: Option<Vec<u64>> = None;
    while !stop.load(Ordering::Acquire) && !fabric.is_aborted() {
        std::thread::park_timeout(WATCH_INTERVAL);
        let now = snapshot(fabric);
        if now.is_some() && now == previous {
            let (blocked, finished) = report(fabric);
            let failure = match collective_conflict(&blocked) {
                Some(mismatch) => Failure::Collective(mismatch),
                None => {
                    Failure::Deadlock((blocked.into_iter().map(|b| b.call).collect(), finished))
                }
            };
            fabric.abort(usize::MAX, failure);
            return;
        }
        previous = now;
    }
}

/// A collective mismatch among the blocked ranks, if they show one: two ranks of one
/// communicator inside the same-numbered collective call that disagree on what it is; or a rank
/// inside call `#k` that waits for a member that has gone on past `#k` (in calls that match,
/// that member would have done its part for this rank before leaving `#k`: sent its message,
/// posted its step).
fn collective_conflict(blocked: &[Parked]) -> Option<Error> {
    let calls: Vec<(u32, CollectiveCall)> = blocked
        .iter()
        .filter_map(|b| b.collective.map(|c| (b.call.communicator, c)))
        .collect();
    let mismatch = |comm: u32, a: &CollectiveCall, (rank, theirs): (usize, String)| {
        Error::CollectiveMismatch {
            communicator: comm,
            calls: vec![(a.rank, a.to_string()), (rank, theirs)],
        }
    };
    let same_number = calls.iter().enumerate().find_map(|(i, (comm, a))| {
        calls[i + 1..]
            .iter()
            .find(|(comm2, b)| comm2 == comm && a.seq == b.seq && a != b)
            .map(|(_, b)| mismatch(*comm, a, (b.rank, b.to_string())))
    });
    same_number.or_else(|| {
        blocked.iter().find_map(|b| {
            let (a, peer, comm) = (b.collective?, b.call.peer?, b.call.communicator);
            let ahead = blocked.iter().find(|o| {
                o.call.communicator == comm
                    && o.collective
                        .is_some_and(|c| c.rank == peer && c.seq > a.seq)
            })?;
            let theirs = match ahead.previous {
                Some((c, prev)) if c == comm && prev.seq == a.seq => prev.to_string(),
                _ => format!(
                    "{}, past call #{} without its part for rank {}",
                    ahead.collective?, a.seq, a.rank
                ),
            };
            Some(mismatch(comm, &a, (peer, theirs)))
        })
    })
}

fn report(fabric: &Fabric) -> (Vec<Parked>, Vec<usize>) {
    let mut blocked = Vec::new();
    let mut finished = Vec::new();
    for (rank, w) in fabric.watch().ranks.iter().enumerate() {
        if w.finished.load(Ordering::SeqCst) {
            finished.push(rank);
        } else if let Some(call) = w.waiting.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            blocked.push(call);
        }
    }
    (blocked, finished)
}
