//! Observability: per-rank event recording (spans of every call, flows from each send to its
//! receive), exported as a Chrome trace-event file that Perfetto and chrome://tracing open
//! (`chrome.rs`), and the communication matrix (`matrix.rs`).
//!
//! Recording is rank-local (a `RefCell` in the rank's endpoint): no locks, no atomics. With
//! tracing off a call pays a test of an `Option` where it opens and closes its span and one per
//! message for its flow; the recording itself is out of line (`#[cold]`), so that the hot paths
//! compile as they do without the `trace` feature (a self send+recv: about 1% more instructions).
//!
//! Depends on nothing else in rpar.

mod chrome;
mod matrix;

pub(crate) use chrome::write_chrome_trace;
pub use matrix::CommMatrix;
pub(crate) use matrix::MatrixRow;

use std::cell::RefCell;
use std::time::Instant;

/// One recorded event of one rank. Times are nanoseconds since the run started.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    /// A call: its name, start, duration and what it was about.
    Span {
        name: &'static str,
        start_ns: u64,
        dur_ns: u64,
        args: SpanArgs,
    },
    /// A message left this rank (the tail of a flow arrow).
    FlowOut { id: u32, at_ns: u64 },
    /// A message was received here (the head of a flow arrow).
    FlowIn { id: u32, at_ns: u64 },
}

/// What a span was about.
#[derive(Debug, Clone, Default)]
pub(crate) struct SpanArgs {
    /// The peer (rank in the communicator), if one.
    pub(crate) peer: Option<usize>,
    /// The tag, if one.
    pub(crate) tag: Option<i32>,
    /// Bytes sent or received, if known.
    pub(crate) bytes: Option<usize>,
    /// The algorithm of a collective.
    pub(crate) algorithm: Option<String>,
    /// The communicator id.
    pub(crate) communicator: u32,
}

/// The recorder of one rank.
#[derive(Debug)]
pub(crate) struct RankTrace {
    epoch: Instant,
    rank: usize,
    /// Ranks in the run: flow ids are `k * ranks + rank`, unique in the run.
    ranks: u32,
    next_flow: RefCell<u32>,
    events: RefCell<Vec<Event>>,
}

impl RankTrace {
    /// The recorder of `rank` of a run of `ranks` ranks.
    pub(crate) fn new(rank: usize, ranks: usize, epoch: Instant) -> Self {
        RankTrace {
            epoch,
            rank,
            ranks: u32::try_from(ranks).unwrap_or(u32::MAX),
            next_flow: RefCell::new(0),
            events: RefCell::new(Vec::new()),
        }
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Starts a span; it is recorded when the guard drops.
    pub(crate) fn span(&self, name: &'static str, args: SpanArgs) -> Span<'_> {
        Span {
            trace: self,
            name,
            start_ns: self.now_ns(),
            args,
        }
    }

    /// A new flow id for an outgoing message (unique in the run), recorded as leaving now.
    ///
    /// Ids are 32 bits, so that a message header stays small: the `k`-th message of a rank gets
    /// `k * ranks + rank`. Past `u32::MAX / ranks` messages of one rank (2^31 at 2 ranks, 2^22
    /// at 1024) its further messages get no arrow (id 0); their spans are still recorded.
    #[cold]
    pub(crate) fn flow_out(&self) -> u32 {
        let mut next = self.next_flow.borrow_mut();
        let Some(id) = next
            .checked_add(1)
            .and_then(|k| k.checked_mul(self.ranks))
            .and_then(|id| id.checked_add(self.rank as u32))
        else {
            return 0;
        };
        *next += 1;
        let at_ns = self.now_ns();
        self.events.borrow_mut().push(Event::FlowOut { id, at_ns });
        id
    }

    /// The message with flow `id` arrived at this rank now.
    #[cold]
    pub(crate) fn flow_in(&self, id: u32) {
        if id != 0 {
            let at_ns = self.now_ns();
            self.events.borrow_mut().push(Event::FlowIn { id, at_ns });
        }
    }

    /// The recorded events, for export.
    pub(crate) fn take(&self) -> (usize, Vec<Event>) {
        (self.rank, self.events.take())
    }
}

/// A span in progress; records itself when dropped.
#[derive(Debug)]
pub(crate) struct Span<'a> {
    trace: &'a RankTrace,
    name: &'static str,
    start_ns: u64,
    args: SpanArgs,
}

impl Span<'_> {
    /// Sets the bytes once they are known (e.g. after a receive).
    pub(crate) fn set_bytes(&mut self, bytes: usize) {
        self.args.bytes = Some(bytes);
    }

    /// Sets the peer once it is known (e.g. a receive from any source).
    pub(crate) fn set_peer(&mut self, peer: usize) {
        self.args.peer = Some(peer);
    }
}

impl Drop for Span<'_> {
    #[cold]
    fn drop(&mut self) {
        let dur_ns = self.trace.now_ns().saturating_sub(self.start_ns);
        self.trace.events.borrow_mut().push(Event::Span {
            name: self.name,
            start_ns: self.start_ns,
            dur_ns,
            args: std::mem::take(&mut self.args),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_ids_are_unique_in_the_run_and_stop_before_they_wrap() {
        let epoch = Instant::now();
        let (a, b) = (RankTrace::new(0, 3, epoch), RankTrace::new(2, 3, epoch));
        let ids: Vec<u32> = (0..4).flat_map(|_| [a.flow_out(), b.flow_out()]).collect();
        assert_eq!(ids, [3, 5, 6, 8, 9, 11, 12, 14]);
        // the last id that fits, then no more arrows (and no events for them)
        *b.next_flow.borrow_mut() = u32::MAX / 3 - 2;
        assert_eq!(b.flow_out(), u32::MAX - 1);
        let events = b.events.borrow().len();
        assert_eq!((b.flow_out(), b.flow_out()), (0, 0));
        assert_eq!(b.events.borrow().len(), events);
    }
}
