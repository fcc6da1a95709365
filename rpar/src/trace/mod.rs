//! Observability: per-rank event recording (spans of every call, flows from each send to its
//! receive), exported as a Chrome trace-event file that Perfetto and chrome://tracing open
//! (`chrome.rs`), and the communication matrix (`matrix.rs`).
//!
//! Every point-to-point call has a span: blocking, non-blocking (the posting call, and the
//! `wait`/`test` that completes the request; a `test` or `iprobe` that finds nothing is not
//! recorded), probe, scope; every collective call one with its algorithm. A message's flow
//! leaves inside the span of the call that sent it and arrives inside the span of the call
//! that received it; a call that receives one message (a receive, a `wait`) is described by
//! that message — source, tag, bytes — when it arrives, out of line. Each run writes a file of
//! its own ([`claim_file`]).
//!
//! Recording is rank-local (a `RefCell` in the rank's endpoint): no locks, no atomics. With
//! tracing off a call pays a test of an `Option` where it opens and closes its span and one per
//! message for its flow; the recording itself is out of line (`#[cold]`), so that the hot paths
//! compile as they do without the `trace` feature. `bench/trace_overhead.sh` counts the cost
//! (bench/results/trace_overhead.txt): an 8-byte self send+recv runs under 2% more
//! instructions with the feature compiled in than without it.
//!
//! Under a simulation (`Universe::simulate`) the same hooks also feed each rank's
//! [`ProgramRecord`] (`program.rs`): what the rank computed between its calls and which
//! messages it sent and received, for the virtual clock.
//!
//! Depends on nothing else in rpar.

#[cfg(feature = "trace")]
mod chrome;
mod matrix;
mod program;

pub(crate) use program::{ProgramRecord, Recorded, Step};

#[cfg(feature = "trace")]
pub(crate) use chrome::write_chrome_trace;
#[cfg(all(feature = "trace", feature = "mpi"))]
pub(crate) use chrome::{chrome_trace_bytes, write_merged_trace};

/// Without the `trace` feature nothing is recorded and no trace file is named (see
/// `Universe::trace_file`): there is nothing to write.
#[cfg(not(feature = "trace"))]
pub(crate) fn write_chrome_trace(
    _path: &std::path::Path,
    _ranks: Vec<(usize, Vec<Event>)>,
) -> std::io::Result<()> {
    Ok(())
}

/// Without the `trace` feature: nothing to merge.
#[cfg(all(not(feature = "trace"), feature = "mpi"))]
pub(crate) fn chrome_trace_bytes(_ranks: Vec<(usize, Vec<Event>)>) -> Vec<u8> {
    Vec::new()
}

/// Without the `trace` feature: nothing to write.
#[cfg(all(not(feature = "trace"), feature = "mpi"))]
pub(crate) fn write_merged_trace(
    _path: &std::path::Path,
    _parts: &[Vec<u8>],
) -> std::io::Result<()> {
    Ok(())
}
pub use matrix::CommMatrix;
pub(crate) use matrix::MatrixRow;

use std::any::TypeId;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// The file that the next run tracing to `path` writes: `path` itself for the first such run of
/// this process, then `stem.2.ext`, `stem.3.ext`, … (`trace.json`, `trace.2.json`, …), so that
/// each run of a program that runs several (nbody, osu) keeps its trace. Paths are told apart
/// as given (`trace.json` and `./trace.json` count apart).
pub(crate) fn claim_file(path: &Path) -> PathBuf {
    static RUNS: Mutex<BTreeMap<PathBuf, usize>> = Mutex::new(BTreeMap::new());
    let mut runs = RUNS.lock().unwrap_or_else(PoisonError::into_inner);
    let run = runs.entry(path.to_path_buf()).or_insert(0);
    *run += 1;
    match *run {
        1 => path.to_path_buf(),
        k => with_infix(path, &k.to_string()),
    }
}

/// `path` with `.infix` before its extension: `trace.json`, `rank3` → `trace.rank3.json`
/// (`trace` → `trace.rank3`).
pub(crate) fn with_infix(path: &Path, infix: &str) -> PathBuf {
    let mut name = path
        .file_stem()
        .unwrap_or(OsStr::new("trace"))
        .to_os_string();
    name.push(".");
    name.push(infix);
    if let Some(ext) = path.extension() {
        name.push(".");
        name.push(ext);
    }
    path.with_file_name(name)
}

/// One recorded event of one rank. Times are nanoseconds since the run started.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "trace"), allow(dead_code))] // only the trace export reads them
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
#[cfg_attr(not(feature = "trace"), allow(dead_code))] // only the trace export reads it
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

/// A message that arrived: its source (rank in the communicator), tag and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arrival {
    pub(crate) source: usize,
    pub(crate) tag: i32,
    pub(crate) bytes: usize,
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
    /// The message that arrived since the innermost open receive span began (see
    /// [`RankTrace::receive_span`]).
    arrival: Cell<Option<Arrival>>,
    /// The collective calls in progress, innermost last (see [`RankTrace::collective_span`]).
    collectives: RefCell<Vec<OpenCollective>>,
    /// Under a simulation: what the rank's program did (see [`RankTrace::simulated`]); its
    /// events on the real clock are then not kept (the trace of a simulation is on the virtual
    /// clock, made from the program's record).
    program: Option<ProgramRecord>,
}

/// A collective call in progress: the family of its algorithm (the type of its algorithm
/// enum) and the algorithm reported as run, once known.
#[derive(Debug)]
struct OpenCollective {
    family: TypeId,
    ran: Option<String>,
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
            arrival: Cell::new(None),
            collectives: RefCell::new(Vec::new()),
            program: None,
        }
    }

    /// Also records what the rank's program does for a simulation (`Universe::simulate`):
    /// its computation from now on, and every call and message (`detailed`: with what each call
    /// was about, for a trace of the simulated run). Made on the rank's thread.
    pub(crate) fn simulated(mut self, detailed: bool) -> Self {
        self.program = Some(ProgramRecord::new(detailed));
        self
    }

    /// Whether this rank runs under a simulation: its collectives then pass messages (the
    /// network model times messages, not shared memory).
    pub(crate) fn simulating(&self) -> bool {
        self.program.is_some()
    }

    /// A reduction step of a collective combined `bytes` bytes (`Channel::local_reduction`).
    pub(crate) fn reduction(&self, bytes: usize) {
        if let Some(p) = &self.program {
            p.reduce(bytes);
        }
    }

    /// Under a simulation, what the rank's program did (see [`ProgramRecord::take`]).
    pub(crate) fn take_program(&self) -> Option<Recorded> {
        self.program.as_ref().map(ProgramRecord::take)
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Starts a span; it is recorded when the guard drops.
    pub(crate) fn span(&self, name: &'static str, args: SpanArgs) -> Span<'_> {
        if let Some(p) = &self.program {
            p.enter();
        }
        Span {
            trace: self,
            name,
            start_ns: self.now_ns(),
            args,
            keep: true,
            of_arrival: false,
            collective: None,
        }
    }

    /// Starts the span of a collective call whose algorithm is of `family` (the type of its
    /// algorithm enum); `args` name the algorithm asked for. An algorithm of that family that
    /// [`RankTrace::runs`] reports before the span ends replaces it: so `Auto` shows as what it
    /// chose. A call built on another of its family (`allgather` on `allgather_into`, the
    /// typed forms on the byte collectives) shows what the inner one ran; when several report,
    /// the last does (the typed forms' signature check runs before their data moves).
    pub(crate) fn collective_span(
        &self,
        name: &'static str,
        args: SpanArgs,
        family: TypeId,
    ) -> Span<'_> {
        let mut open = self.collectives.borrow_mut();
        let mut span = self.span(name, args);
        span.collective = Some(open.len());
        open.push(OpenCollective { family, ran: None });
        span
    }

    /// The collective call in progress runs `algorithm`, of `family`: every open collective
    /// span of that family shows it (see [`RankTrace::collective_span`]).
    #[cold]
    pub(crate) fn runs(&self, family: TypeId, algorithm: String) {
        for open in self.collectives.borrow_mut().iter_mut() {
            if open.family == family {
                open.ran = Some(algorithm.clone());
            }
        }
    }

    /// Starts the span of a call that receives one message: the message that arrives before
    /// it ends (see [`RankTrace::flow_in`]) gives it its peer, tag and bytes. So a receive
    /// itself does nothing more for its span (with tracing off, every such step cost the
    /// blocking receive instructions: bench/trace_overhead.sh).
    pub(crate) fn receive_span(&self, name: &'static str, args: SpanArgs) -> Span<'_> {
        self.arrival.set(None);
        let mut span = self.span(name, args);
        span.of_arrival = true;
        span
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
            if let Some(p) = &self.program {
                p.send(0);
            }
            return 0;
        };
        *next += 1;
        if let Some(p) = &self.program {
            p.send(id);
            return id;
        }
        let at_ns = self.now_ns();
        self.events.borrow_mut().push(Event::FlowOut { id, at_ns });
        id
    }

    /// The message with flow `id` (0: none), `arrival`, was received at this rank now.
    #[cold]
    pub(crate) fn flow_in(&self, id: u32, arrival: Arrival) {
        self.arrival.set(Some(arrival));
        if let Some(p) = &self.program {
            p.recv(id, arrival.tag, arrival.bytes);
            return;
        }
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
    /// Whether it is recorded when dropped (see [`Span::discard`]).
    keep: bool,
    /// Whether the message that arrives during it describes it (see
    /// [`RankTrace::receive_span`]).
    of_arrival: bool,
    /// For a collective call's span, its place in the stack of open collective calls (see
    /// [`RankTrace::collective_span`]).
    collective: Option<usize>,
}

impl Span<'_> {
    /// Sets what is known now (e.g. after a receive from any source) of the peer, the tag and
    /// the bytes.
    pub(crate) fn describe(&mut self, peer: Option<usize>, tag: Option<i32>, bytes: Option<usize>) {
        self.args.peer = peer.or(self.args.peer);
        self.args.tag = tag.or(self.args.tag);
        self.args.bytes = bytes.or(self.args.bytes);
    }

    /// Ends the span without recording it: a poll that found nothing (`test`, `iprobe`), so
    /// that a polling loop leaves one span, for the poll that found something.
    pub(crate) fn discard(mut self) {
        self.keep = false;
    }
}

impl Drop for Span<'_> {
    #[cold]
    fn drop(&mut self) {
        if let Some(depth) = self.collective {
            let mut open = self.trace.collectives.borrow_mut();
            if let Some(ran) = open.get_mut(depth).and_then(|c| c.ran.take()) {
                self.args.algorithm = Some(ran);
            }
            open.truncate(depth);
        }
        if !self.keep {
            if let Some(p) = &self.trace.program {
                p.leave(None);
            }
            return;
        }
        if let Some(a) = self.of_arrival.then(|| self.trace.arrival.take()).flatten() {
            self.describe(Some(a.source), Some(a.tag), Some(a.bytes));
        }
        if let Some(p) = &self.trace.program {
            p.leave(Some((self.name, &self.args)));
            return;
        }
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
    fn each_run_tracing_to_a_path_gets_a_file_of_its_own() {
        let path = Path::new("/tmp/rpar-unit-claim/run.trace.json");
        let files: Vec<PathBuf> = (0..3).map(|_| claim_file(path)).collect();
        assert_eq!(
            files,
            [
                "/tmp/rpar-unit-claim/run.trace.json",
                "/tmp/rpar-unit-claim/run.trace.2.json",
                "/tmp/rpar-unit-claim/run.trace.3.json"
            ]
            .map(PathBuf::from)
        );
        // another path counts on its own; a name without extension gets the number at its end
        assert_eq!(
            claim_file(Path::new("/tmp/rpar-unit-claim/t")),
            Path::new("/tmp/rpar-unit-claim/t")
        );
        assert_eq!(
            claim_file(Path::new("/tmp/rpar-unit-claim/t")),
            Path::new("/tmp/rpar-unit-claim/t.2")
        );
        assert_eq!(
            with_infix(Path::new("a/trace.json"), "rank3"),
            Path::new("a/trace.rank3.json")
        );
    }

    #[test]
    fn a_collective_span_shows_what_its_family_ran_last() {
        #[derive(Debug)]
        struct Outer;
        #[derive(Debug)]
        struct Inner;
        let (outer, inner) = (TypeId::of::<Outer>(), TypeId::of::<Inner>());
        let t = RankTrace::new(0, 1, Instant::now());
        let asked = |a: &str| SpanArgs {
            algorithm: Some(a.to_string()),
            ..SpanArgs::default()
        };
        {
            let _typed = t.collective_span("typed", asked("Auto"), outer);
            {
                // a check of another family, then the data movement of the call's own
                let _check = t.collective_span("check", asked("Auto"), inner);
                t.runs(inner, "SharedMemory".into());
            }
            let _plain = t.collective_span("plain", asked("Auto"), outer);
            t.runs(outer, "Ring".into());
        }
        // nothing reported: the algorithm asked for
        drop(t.collective_span("explicit", asked("Binomial"), outer));
        // a report outside any span of its family changes nothing
        t.runs(inner, "Linear".into());
        let (_, events) = t.take();
        let shown: Vec<(&str, Option<&str>)> = events
            .iter()
            .map(|e| match e {
                Event::Span { name, args, .. } => (*name, args.algorithm.as_deref()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("check", Some("SharedMemory")),
                ("plain", Some("Ring")),
                ("typed", Some("Ring")),
                ("explicit", Some("Binomial")),
            ]
        );
        assert!(t.collectives.borrow().is_empty());
    }

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
