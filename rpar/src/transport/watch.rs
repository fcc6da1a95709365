//! Deadlock detection: each rank publishes, when it parks, what it waits for and how many
//! envelopes it had taken from its mailbox; a watchdog thread of the universe looks every few
//! milliseconds and ends the run with [`Error::Deadlock`] when it has seen, twice in a row,
//! every unfinished rank parked with the same park count and nothing sent to it since it
//! parked.
//!
//! Why that has no false positives: a parked rank only wakes through its mailbox, and every
//! envelope is counted in the receiver's `posted` before it is sent (`mailbox.rs`). A rank
//! whose `posted` equals what it had taken when it parked has nothing to take and nobody has
//! sent it anything since: it is blocked, even if the scheduler has not yet let it run since
//! it last took an envelope (an empty mailbox does not say that: the envelope that woke it is
//! gone from the mailbox while its parked flag is still up). The two looks are not atomic, but
//! a rank that ran between them has parked again since (its park count changed) or is not
//! parked (its flag is down), and an envelope sent to a rank between them changed its
//! `posted`. A rank counted parked with an unchanged count and nothing sent in both looks was
//! blocked all the time between them; all of them were blocked together at the instant the
//! first look finished: a deadlock.
//!
//! Lanes (`lane.rs`) need no look of their own: a rank parks only after it has published
//! `PARKED` and found its lanes empty, and a producer that pushes after that look sees `PARKED`
//! and sends it a `Wake` through the mailbox (or another producer that cleared the flag does).
//! So a parked rank with a message in a lane has been sent a `Wake`, or a producer that is
//! running (not parked) is about to send one: neither look can count it as a deadlock.
//!
//! Cost: nothing on the paths that find their message while spinning; a rank about to park
//! stores its wait description (an uncontended mutex) and bumps three atomics; a send through
//! a mailbox (not a lane) bumps its counter.

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
    /// Envelopes the rank had taken from its mailbox when it last parked.
    taken: AtomicU64,
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

    /// `rank` is about to park waiting for `call`, having taken `taken` envelopes from its
    /// mailbox.
    pub(crate) fn parking(&self, rank: usize, parked: Parked, taken: u64) {
        let w = &self.ranks[rank];
        *w.waiting.lock().unwrap_or_else(|e| e.into_inner()) = Some(parked);
        w.taken.store(taken, Ordering::SeqCst);
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

/// One look: `Some(park counts)` if every unfinished rank is parked and nothing has been sent
/// to it since it parked.
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
        if !w.parked.load(Ordering::SeqCst) {
            return None;
        }
        let parks = w.parks.load(Ordering::SeqCst);
        if fabric.mailbox(rank).posted() != w.taken.load(Ordering::SeqCst) {
            return None;
        }
        counts.push(parks);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::endpoint::Envelope;
    use crate::transport::Placement;

    fn parked(rank: usize) -> Parked {
        Parked {
            call: BlockedCall {
                rank,
                call: "recv".into(),
                peer: Some(1 - rank),
                tag: Some(0),
                communicator: 0,
            },
            collective: None,
            previous: None,
        }
    }

    #[test]
    fn a_rank_that_took_its_wake_up_is_not_blocked_before_it_says_so() {
        let (fabric, incoming) = Fabric::new(2, Placement::Threads(2), Duration::ZERO);
        for (rank, rx) in incoming.iter().enumerate() {
            fabric.watch().parking(rank, parked(rank), rx.taken());
        }
        assert!(
            snapshot(&fabric).is_some(),
            "both parked, nothing sent: blocked"
        );
        // rank 1 sends rank 0 a message and parks again; rank 0 takes it, and is descheduled
        // before it lowers its parked flag: its mailbox is empty, but it is not blocked
        fabric.mailbox(0).send(Envelope::Wake).unwrap();
        fabric.watch().parking(1, parked(1), incoming[1].taken());
        assert!(snapshot(&fabric).is_none(), "a message waits for rank 0");
        incoming[0].recv().unwrap();
        assert!(snapshot(&fabric).is_none(), "rank 0 runs on what it took");
        fabric.watch().parking(0, parked(0), incoming[0].taken());
        assert!(
            snapshot(&fabric).is_some(),
            "rank 0 parked again with nothing to take"
        );
    }
}
