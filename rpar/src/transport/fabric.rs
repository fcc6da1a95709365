//! [`Fabric`]: what all ranks of one universe share — the mailbox senders, what lane producers
//! see of each receiver ([`Inbox`]), every lane (for the sweep at the end of a run) and the abort
//! state.

use super::endpoint::{Envelope, Header};
use super::lane::{lane, Consumer, Inbox, Kept, Producer};
use super::mailbox::{mailbox, Incoming, Mailbox};
use super::message::Message;
use super::shared::Arena;
use super::watch::Watch;
use crate::error::{BlockedCall, Warning};
use crate::Error;
use crossbeam_channel::Receiver;
use crossbeam_utils::CachePadded;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why a rank failed: the first failure of a run decides its error.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// The rank's closure panicked with this message.
    Panic(String),
    /// The rank is unwinding from a panic and had to withdraw what other ranks were reading
    /// (see [`Fabric::abort_unwinding`]); its message replaces this once the unwind ends.
    Unwinding,
    /// The rank's closure returned this error.
    Error(Error),
    /// The ranks disagree inside a collective call (different calls, type signatures or sizes):
    /// everyone's error, which every rank's calls return as it is.
    Collective(Error),
    /// The watchdog found a deadlock: what each blocked rank waited for, and who had finished.
    Deadlock((Vec<BlockedCall>, Vec<usize>)),
}

impl Failure {
    fn message(&self, rank: usize) -> String {
        match self {
            Failure::Panic(m) => m.clone(),
            Failure::Unwinding => format!("rank {rank} panicked"),
            Failure::Error(e) | Failure::Collective(e) => e.to_string(),
            Failure::Deadlock(_) => "deadlock".into(),
        }
    }

    /// Whether this is only the abort of the run as a rank saw it (a withdrawn rendezvous or
    /// loan, before the failure behind it was recorded): never the cause of a run's failure.
    fn is_consequence(&self) -> bool {
        matches!(self, Failure::Error(Error::Aborted { .. }))
    }

    /// The error of the whole run.
    pub(crate) fn into_error(self, rank: usize) -> Error {
        match self {
            Failure::Panic(message) => Error::RankPanicked { rank, message },
            Failure::Unwinding => Error::RankPanicked {
                rank,
                message: "a panic that the rank's program caught after rpar had withdrawn a \
                          buffer other ranks were reading (the run could not go on)"
                    .into(),
            },
            Failure::Collective(e) | Failure::Error(e @ Error::CollectiveMismatch { .. }) => e,
            Failure::Error(e) => Error::RankFailed {
                rank,
                source: Box::new(e),
            },
            Failure::Deadlock((blocked, finished)) => Error::Deadlock { blocked, finished },
        }
    }
}

/// Spinning before yielding, with a core per rank: 256 pauses take about 7 us here, longer
/// than a reply from a rank on another core takes to come.
const SPIN_DEDICATED: u32 = 256;
/// The same on the MPI transport, with a core per process: about as many polls of MPI as
/// make the wait that goes on to pause between polls (`LONG_WAIT`, 5 ms, at 80-150 ns a
/// poll). MPI itself polls without yielding; a yield costs a system call, and a message that
/// arrives during it waits (on Open MPI, which binds each process to one core, yielding after
/// 16 polls made a 64 KiB round trip 8% slower).
#[cfg(feature = "mpi")]
const SPIN_DEDICATED_PROCESS: u32 = 1 << 16;
/// The same when ranks outnumber cores: the rank waited for may need this very core, so
/// yield it almost at once.
const SPIN_OVERSUBSCRIBED: u32 = 16;

/// Where a fabric's ranks run, and whether they share cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// `n` ranks, threads of this process, on the cores this process may use.
    Threads(usize),
    /// One rank in this process, on the MPI transport; whether this node's processes of the
    /// job outnumber the cores they may use.
    #[cfg(feature = "mpi")]
    Process { oversubscribed: bool },
}

/// How many times a blocked call looks at what it waits for before it yields the core
/// (`RPAR_SPIN` overrides).
fn spin_rounds(placement: Placement) -> u32 {
    if let Some(spins) = std::env::var("RPAR_SPIN").ok().and_then(|v| v.parse().ok()) {
        return spins;
    }
    match placement {
        Placement::Threads(n)
            if n <= std::thread::available_parallelism().map_or(1, |c| c.get()) =>
        {
            SPIN_DEDICATED
        }
        #[cfg(feature = "mpi")]
        Placement::Process {
            oversubscribed: false,
        } => SPIN_DEDICATED_PROCESS,
        _ => SPIN_OVERSUBSCRIBED,
    }
}

/// An arena not every member has taken yet, and how many have.
type Taken = (Arc<Arena>, usize);

/// The first id of the range that communicators made by non-blocking calls on the MPI
/// transport take (MPI_Comm_idup): each process *claims* them (`Fabric::claim`), and the
/// processes retry elsewhere until all of them could claim the same, so that two such calls in
/// progress at once, in whatever order, can never take one id. The blocking constructors keep to the ids below, which they agree on without
/// claiming (nothing runs between their agreement and their reservation).
pub(crate) const FIRST_CLAIMED_ID: u32 = 1 << 30;

/// The end of the claimed range: a context, twice an id plus one, must fit in a `u32`.
const LAST_CLAIMED_ID: u32 = (u32::MAX - 1) / 2;

/// The shared part of a universe's transport.
#[derive(Debug)]
pub(crate) struct Fabric {
    mailboxes: Vec<Mailbox>,
    /// A receiving end of every mailbox besides its rank's: what is sent to a rank after its
    /// last look stays here (rather than vanishing with the rank's own end) until
    /// [`Fabric::sweep_unreceived`] counts it.
    kept: Vec<Receiver<Envelope>>,
    /// Per rank: whether it is parked or finished, and how many lanes lead to it.
    inboxes: Vec<CachePadded<Inbox>>,
    /// Every lane made in the run, with the world rank it leads to: what is left in them when
    /// the run ends was never received ([`Fabric::sweep_unreceived`]).
    lanes: Mutex<Vec<(usize, Kept<Envelope>)>>,
    aborted: AtomicBool,
    /// The failure that aborted the run and its rank: set once, except that a rank's
    /// [`Failure::Unwinding`] is replaced by its panic message when the unwind ends.
    failure: Mutex<Option<(usize, Failure)>>,
    next_context: AtomicU32,
    /// The ranges of [`FIRST_CLAIMED_ID`]'s range claimed here: start to end.
    claimed: Mutex<std::collections::BTreeMap<u32, u32>>,
    warnings: Mutex<Vec<Warning>>,
    /// The first collective mismatch found only once ranks had left the calls (a message of a
    /// collective call never received, a member that made fewer shared-memory steps): the
    /// run's error if nothing else fails.
    unmatched: Mutex<Option<Error>>,
    watch: Watch,
    poll_budget: Duration,
    /// How many times a blocked call looks, with a pause between looks, before it yields.
    spin_rounds: u32,
    /// The shared-memory arenas that not every member has taken yet, by collective context,
    /// with how many have: a member may post and drop its communicator before another member
    /// has looked at the arena for the first time, so the fabric holds it until the last one
    /// has; after that the members' own references keep it, and the last to drop frees it.
    arenas: Mutex<HashMap<u32, Taken>>,
    /// The same for the arenas of single (non-blocking) calls, by context and call number.
    call_arenas: Mutex<HashMap<(u32, u32), Taken>>,
}

impl Fabric {
    /// A fabric of `n` mailboxes, with the receiving end of each, for ranks placed as
    /// `placement`.
    pub(crate) fn new(
        n: usize,
        placement: Placement,
        poll_budget: Duration,
    ) -> (Fabric, Vec<Incoming>) {
        let (mut mailboxes, mut incoming, mut kept) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..n {
            let (sending, receiving, kept_end) = mailbox();
            mailboxes.push(sending);
            incoming.push(receiving);
            kept.push(kept_end);
        }
        let fabric = Fabric {
            mailboxes,
            kept,
            inboxes: (0..n).map(|_| CachePadded::default()).collect(),
            lanes: Mutex::new(Vec::new()),
            aborted: AtomicBool::new(false),
            failure: Mutex::new(None),
            // communicator 0 is the world, 1 every rank's self communicator (`Comm::self_comm`)
            next_context: AtomicU32::new(2),
            claimed: Mutex::new(std::collections::BTreeMap::new()),
            warnings: Mutex::new(Vec::new()),
            unmatched: Mutex::new(None),
            watch: Watch::new(n),
            poll_budget,
            spin_rounds: spin_rounds(placement),
            arenas: Mutex::new(HashMap::new()),
            call_arenas: Mutex::new(HashMap::new()),
        };
        (fabric, incoming)
    }

    /// The number of ranks (mailboxes).
    pub(crate) fn size(&self) -> usize {
        self.mailboxes.len()
    }

    /// The mailbox of world rank `rank`.
    pub(crate) fn mailbox(&self, rank: usize) -> &Mailbox {
        &self.mailboxes[rank]
    }

    /// What lane producers see of world rank `rank`.
    #[inline]
    pub(crate) fn inbox(&self, rank: usize) -> &Inbox {
        &self.inboxes[rank]
    }

    /// A new lane to world rank `to`, kept here too for [`Fabric::sweep_unreceived`].
    pub(crate) fn new_lane(&self, to: usize) -> (Producer<Envelope>, Consumer<Envelope>) {
        let (producer, consumer, lane) = lane();
        self.lanes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((to, lane));
        (producer, consumer)
    }

    /// The warning for a message to world rank `to` that it never received. A message of a
    /// collective call never received is also a collective mismatch: in calls that match, every
    /// message sent is received within them.
    pub(crate) fn unreceived(&self, to: usize, h: &Header, m: &Message) -> Warning {
        if let (Some(call), 1) = (h.call, h.context % 2) {
            let source = h.source as usize;
            let theirs = call.call(source);
            self.note_unmatched(Error::CollectiveMismatch {
                communicator: h.context / 2,
                calls: vec![
                    (source, theirs.to_string()),
                    (
                        to,
                        format!(
                            "(world rank {to}) never received a message of that call: its \
                             collective call #{} on this communicator was another one, or none",
                            theirs.seq
                        ),
                    ),
                ],
            });
        }
        Warning::Unreceived {
            to,
            from: h.source as usize,
            tag: h.tag,
            communicator: h.context / 2,
            bytes: m.bytes(),
        }
    }

    /// Records a collective mismatch found after the calls (see `unmatched`); the first counts.
    pub(crate) fn note_unmatched(&self, err: Error) {
        let mut first = self.unmatched.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(err);
    }

    /// The collective mismatch found after the calls, if any (at the end of a run that nothing
    /// else failed). Also checks the shared memory that some member never took: if another did
    /// steps in it, that member never made those calls.
    pub(crate) fn take_unmatched(&self) -> Option<Error> {
        let untaken: Vec<(u32, Arc<Arena>)> = self
            .arenas
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(context, (arena, _))| (context, arena))
            .chain(
                self.call_arenas
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .drain()
                    .map(|((context, _), (arena, _))| (context, arena)),
            )
            .collect();
        for (_, arena) in untaken {
            if let Some(err) = arena.unjoined() {
                self.note_unmatched(err);
            }
        }
        self.unmatched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// At the end of a run, once every rank's thread has ended: the messages left in mailboxes
    /// and lanes (sent to a rank after its last look at them, in `Endpoint::finish`) were never
    /// received. Each is counted here or by that last look, never by both.
    pub(crate) fn sweep_unreceived(&self) {
        let mut left = Vec::new();
        for (to, mailbox) in self.kept.iter().enumerate() {
            while let Ok(envelope) = mailbox.try_recv() {
                match envelope {
                    Envelope::Msg(h, m) => left.push(self.unreceived(to, &h, &m)),
                    // a lane opened after the last look: what went through it, then drop it
                    Envelope::Lane(mut lane) => {
                        while let Some(envelope) = lane.pop() {
                            if let Envelope::Msg(h, m) = &envelope {
                                left.push(self.unreceived(to, h, m));
                            }
                        }
                    }
                    Envelope::Wake | Envelope::Abort => {}
                }
            }
        }
        for (to, lane) in self
            .lanes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
        {
            // both ends are gone once the ranks' threads are (else leave the lane alone)
            let Some(lane) = lane.alone() else {
                continue;
            };
            while let Some(envelope) = lane.take_left() {
                if let Envelope::Msg(h, m) = &envelope {
                    left.push(self.unreceived(*to, h, m));
                }
            }
        }
        self.note_warnings(left);
    }

    /// The shared-memory arena of the communicator with collective context `context` and the
    /// members `world` (world ranks): the first member to ask makes it, the others get the same.
    /// Each member asks once (its `Comm` keeps the answer).
    pub(crate) fn arena(self: &Arc<Self>, context: u32, world: &[usize]) -> Arc<Arena> {
        let mut arenas = self.arenas.lock().unwrap_or_else(|e| e.into_inner());
        let (arena, taken) = arenas.entry(context).or_insert_with(|| {
            let fabric = Arc::downgrade(self);
            (Arc::new(Arena::new(context, world, fabric)), 0)
        });
        *taken += 1;
        let arena = arena.clone();
        if *taken == world.len() {
            arenas.remove(&context);
        }
        arena
    }

    /// The shared-memory arena of collective call number `seq` on the communicator of
    /// collective context `context` (a non-blocking call, which runs beside the calls after it
    /// and so cannot share their arena): as [`Fabric::arena`], a few slots deep.
    pub(crate) fn call_arena(
        self: &Arc<Self>,
        context: u32,
        seq: u32,
        world: &[usize],
    ) -> Arc<Arena> {
        let mut arenas = self.call_arenas.lock().unwrap_or_else(|e| e.into_inner());
        let (arena, taken) = arenas.entry((context, seq)).or_insert_with(|| {
            let fabric = Arc::downgrade(self);
            (Arc::new(Arena::with_depth(context, world, fabric, 4)), 0)
        });
        *taken += 1;
        let arena = arena.clone();
        if *taken == world.len() {
            arenas.remove(&(context, seq));
        }
        arena
    }

    /// Reserves `n` fresh communicator ids.
    pub(crate) fn new_contexts(&self, n: u32) -> u32 {
        self.next_context.fetch_add(n, Ordering::Relaxed)
    }

    /// The first communicator id not yet reserved here.
    pub(crate) fn next_context(&self) -> u32 {
        self.next_context.load(Ordering::Relaxed)
    }

    /// Reserves the ids `base..base + n` that the processes of a communicator agreed on (the
    /// MPI transport, where each process has a fabric of its own), and every id below them.
    pub(crate) fn reserve_agreed(&self, base: u32, n: u32) {
        self.next_context.fetch_max(base + n, Ordering::Relaxed);
    }

    /// The first id of the claimed range (see [`FIRST_CLAIMED_ID`]) above every claim here.
    pub(crate) fn next_claimed(&self) -> u32 {
        let claimed = self.claimed.lock().unwrap_or_else(|e| e.into_inner());
        claimed.values().max().copied().unwrap_or(FIRST_CLAIMED_ID)
    }

    /// Claims the ids `base..base + n` of the claimed range if none of them is claimed here
    /// yet: whether it did. (Claims may come in any order: the non-blocking calls that make
    /// them finish in whatever order their messages come.)
    pub(crate) fn claim(&self, base: u32, n: u32) -> bool {
        let Some(end) = base.checked_add(n).filter(|&end| end <= LAST_CLAIMED_ID) else {
            return false;
        };
        if base < FIRST_CLAIMED_ID {
            return false;
        }
        let mut claimed = self.claimed.lock().unwrap_or_else(|e| e.into_inner());
        let before = claimed.range(..end).next_back();
        if before.is_some_and(|(_, &their_end)| their_end > base) {
            return false;
        }
        claimed.insert(base, end);
        true
    }

    /// How long a blocked call polls (yielding the core) before it parks its thread.
    #[inline]
    pub(crate) fn poll_budget(&self) -> Duration {
        self.poll_budget
    }

    /// How many times a blocked call looks at what it waits for, with a pause (`spin_loop`)
    /// between looks, before it goes on to yield the core between looks.
    #[inline]
    pub(crate) fn spin_rounds(&self) -> u32 {
        self.spin_rounds
    }

    /// The deadlock watch of the ranks.
    pub(crate) fn watch(&self) -> &Watch {
        &self.watch
    }

    /// Records what a rank left behind (see [`Warning`]).
    pub(crate) fn note_warnings(&self, mut found: Vec<Warning>) {
        if !found.is_empty() {
            self.warnings
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .append(&mut found);
        }
    }

    /// Everything the ranks left behind, sorted.
    pub(crate) fn take_warnings(&self) -> Vec<Warning> {
        let mut w = std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()));
        w.sort_by_key(|w| format!("{w:?}"));
        w
    }

    /// Whether the run has been aborted.
    #[inline]
    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// The error that every call of a surviving rank returns once the run is aborted.
    pub(crate) fn abort_error(&self) -> Error {
        match &*self.failure.lock().unwrap_or_else(|e| e.into_inner()) {
            // a deadlock or a disagreement inside a collective is everyone's error, not one rank's
            Some((_, Failure::Deadlock((blocked, finished)))) => Error::Deadlock {
                blocked: blocked.clone(),
                finished: finished.clone(),
            },
            Some((
                _,
                Failure::Collective(e) | Failure::Error(e @ Error::CollectiveMismatch { .. }),
            )) => e.clone(),
            Some((rank, failure)) => Error::Aborted {
                rank: *rank,
                message: failure.message(*rank),
            },
            None => Error::Aborted {
                rank: usize::MAX,
                message: "the run was aborted".into(),
            },
        }
    }

    /// Records `failure` as the failure of `rank` (the first failure wins, but a rank's own
    /// [`Failure::Unwinding`] gives way to what it ends with) and wakes every rank so that
    /// blocked calls return [`Error::Aborted`] at once.
    pub(crate) fn abort(&self, rank: usize, failure: Failure) {
        {
            let mut first = self.failure.lock().unwrap_or_else(|e| e.into_inner());
            match &*first {
                None => *first = Some((rank, failure)),
                // a rank's unwinding gives way to its panic, and an abort that a rank saw
                // (before the failure behind it was recorded) to that failure
                Some((r, Failure::Unwinding)) if *r == rank => {
                    *first = Some((rank, failure));
                    return; // everyone was woken already
                }
                Some((_, Failure::Error(Error::Aborted { .. }))) if !failure.is_consequence() => {
                    *first = Some((rank, failure));
                    return;
                }
                Some(_) => return,
            }
        }
        self.aborted.store(true, Ordering::Release);
        for mailbox in &self.mailboxes {
            let _ = mailbox.send(Envelope::Abort);
        }
    }

    /// Aborts the run for `rank`, which is unwinding from a panic and must withdraw something
    /// other ranks may be reading (a lent buffer, a rendezvous): they see the withdrawal as
    /// this abort (and not as a failure of their own, which would hide the panic), and the
    /// run's error becomes the panic's message once the unwind reaches the rank's top.
    pub(crate) fn abort_unwinding(&self, rank: usize) {
        self.abort(rank, Failure::Unwinding);
    }

    /// The first failure, if any: the error the run returns.
    pub(crate) fn failure(&self) -> Option<(usize, Failure)> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_never_overlap_and_stay_in_their_range() {
        let (fabric, _boxes) = Fabric::new(1, Placement::Threads(1), Duration::ZERO);
        let first = fabric.next_claimed();
        assert_eq!(first, FIRST_CLAIMED_ID);
        assert!(fabric.claim(first + 5, 3));
        assert_eq!(fabric.next_claimed(), first + 8);
        // overlapping a claim: refused, and nothing changes
        assert!(!fabric.claim(first + 4, 2));
        assert!(!fabric.claim(first + 7, 1));
        assert_eq!(fabric.next_claimed(), first + 8);
        // beside it, below or above, in any order: claimed
        assert!(fabric.claim(first + 8, 1));
        assert!(fabric.claim(first, 5));
        assert!(!fabric.claim(first + 2, 1));
        // outside the range: refused
        assert!(!fabric.claim(LAST_CLAIMED_ID, 1));
        assert!(!fabric.claim(u32::MAX, 3));
        assert!(!fabric.claim(FIRST_CLAIMED_ID - 1, 1));
        // the blocking constructors' ids are untouched
        assert_eq!(fabric.next_context(), 2);
    }
}
