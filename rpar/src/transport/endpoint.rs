//! [`Endpoint`]: one rank's receiving side — its mailbox, the unexpected-message queue and the
//! posted (non-blocking) receives — and MPI's matching rules over them.
//!
//! Only the owning rank's thread touches an endpoint's queues (they are in a `RefCell`), so
//! matching needs no lock: other ranks only push envelopes into the lock-free mailbox, or into
//! the single-producer lane they have to this rank (see `lane.rs`; the endpoint keeps both the
//! lanes it sends on and those it receives from).

mod direct;

pub(crate) use self::direct::SlotEnd;
use self::direct::{DirectSlot, Taken};
use super::fabric::{Fabric, Failure};
use super::lane::{Consumer, Notice, Pack, Producer};
use super::mailbox::Incoming;
use super::message::{Data, ElemType, Message, SmallMessage};
use super::watch::Parked;
use super::Wire;
use crate::error::{BlockedCall, Warning};
use crate::trace::{Arrival, MatrixRow, RankTrace};
use crate::{Error, Result};
use corosensei::Yielder;
use crossbeam_channel::TryRecvError;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ptr::NonNull;
use std::rc::{Rc, Weak};
use std::sync::Arc;

/// A non-blocking operation in progress, advanced by every wait of its rank.
pub(crate) trait Progress {
    /// Runs the operation until it would block or is done; whether it is done.
    fn advance(&self) -> bool;
}

/// What a coroutine's endpoint state is: the collective call it is in and the last one it
/// completed, swapped in and out of the endpoint as it is resumed and suspended.
pub(crate) type CallState = (Option<CollectiveCall>, Option<(u32, CollectiveCall)>);

/// What travels through a mailbox.
#[derive(Debug)]
// `Msg` is the hot variant: boxing it would cost an allocation per message, and a channel slot
// is as large as the largest variant anyway.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Envelope {
    /// A message.
    Msg(Header, Message),
    /// Wakes a rank blocked in a rendezvous send (its receiver copied the data, or finished),
    /// in a shared-memory wait, or parked while a lane producer pushed.
    Wake,
    /// A new lane from the rank that sent this: every message it sends this rank from now on
    /// comes through it (it comes through the mailbox after all that sender's earlier
    /// messages, so the receiver takes those first).
    Lane(Consumer<Envelope>),
    /// The run was aborted.
    Abort,
}

/// A point-to-point message with little data travels through a lane in its compact form,
/// within one cache line (see `lane.rs`).
impl Pack for Envelope {
    type Small = SmallMessage;

    #[inline]
    fn pack(self) -> std::result::Result<SmallMessage, Envelope> {
        match self {
            Envelope::Msg(header, message) => {
                SmallMessage::pack(header, message).map_err(|(h, m)| Envelope::Msg(h, m))
            }
            other => Err(other),
        }
    }

    #[inline]
    fn unpack(small: SmallMessage) -> Envelope {
        let (header, message) = small.unpack();
        Envelope::Msg(header, message)
    }
}

/// The matching information of a message: (communicator context, source, tag).
///
/// Every message is moved into and out of a channel slot and through the matching code, so the
/// header is kept small: the collective call travels as a [`CallKey`], not a [`CollectiveCall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) context: u32,
    /// The sender's rank in the communicator.
    pub(crate) source: u32,
    pub(crate) tag: i32,
    /// The trace flow id of the message (0 when tracing is off; see `RankTrace::flow_out`) in
    /// bits 0-30, and in bit 31 whether it was sent in ready mode (MPI_Rsend): a receive must
    /// be posted already. Bit 31 is cleared when a posted or running receive takes the message
    /// as it arrives; still set on a message that went to the unexpected queue, which its
    /// receive then reports (see `Comm::accept_arrival`). It travels wherever the flow does,
    /// to another process too, at no cost in size.
    pub(crate) flow: u32,
    /// On a collective context: the collective call that sent it (for mismatch detection).
    pub(crate) call: Option<CallKey>,
}

/// The ready-mode bit of [`Header::flow`].
const READY: u32 = 1 << 31;

impl Header {
    /// The trace flow id (0: none).
    #[inline]
    pub(crate) fn flow_id(&self) -> u32 {
        self.flow & !READY
    }

    /// Whether it was sent in ready mode and found no receive posted (see [`Header::flow`]).
    #[inline]
    pub(crate) fn ready(&self) -> bool {
        self.flow & READY != 0
    }

    /// Marks it as sent in ready mode, or (a receive took it) clears the mark.
    #[inline]
    pub(crate) fn set_ready(&mut self, ready: bool) {
        self.flow = self.flow_id() | if ready { READY } else { 0 };
    }
}

/// A [`CollectiveCall`] as it travels in a message header: everything that ranks compare, in
/// fixed-width fields, and not the caller's rank (the header's source is the sender).
///
/// Two keys are equal exactly when the calls they come from are (the derived `PartialEq`
/// compares the names as strings, like `CollectiveCall`'s): the encodings below lose nothing
/// a comparison can meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallKey {
    seq: u32,
    /// The root, or [`CallKey::NONE`]. A root is a rank, and headers carry ranks as `u32`; a
    /// root that does not fit is out of range on every communicator, refused by the call's root
    /// check before it sends anything, so it never reaches a comparison.
    root: u32,
    /// The bytes every rank contributes, or `u64::MAX` (no buffer is that large).
    bytes: u64,
    operation: &'static str,
    reduction: Option<&'static str>,
}

impl std::hash::Hash for CallKey {
    /// Every field but the names, of which their lengths: equal keys hash alike, and the
    /// names' bytes are compared only when the rest agrees (the MPI transport finds a direct
    /// class of a collective call's messages by its key on every receive).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.seq, self.root, self.bytes).hash(state);
        (self.operation.len(), self.reduction.map(str::len)).hash(state);
    }
}

/// A [`CallKey`] but its sequence number, with its names by where they are (address and
/// length): what the MPI transport's message classes key a collective message by. Two calls of
/// one kind may differ here (a name kept at two addresses): they are then two classes.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))] // keyed by the MPI link alone
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct CallKind {
    root: u32,
    bytes: u64,
    operation: (usize, usize),
    /// `(0, 0)` for none.
    reduction: (usize, usize),
}

impl CallKey {
    const NONE: u32 = u32::MAX;

    /// The number of the call among the communicator's collective calls.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))] // the MPI link's classes
    #[inline]
    pub(crate) fn seq(&self) -> u32 {
        self.seq
    }

    /// The same call numbered `seq`.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))] // the MPI link's classes
    #[inline]
    pub(crate) fn with_seq(self, seq: u32) -> CallKey {
        CallKey { seq, ..self }
    }

    /// Its kind: all but its sequence number.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))] // the MPI link's classes
    #[inline]
    pub(crate) fn kind(&self) -> CallKind {
        let at = |s: &'static str| (s.as_ptr() as usize, s.len());
        CallKind {
            root: self.root,
            bytes: self.bytes,
            operation: at(self.operation),
            reduction: self.reduction.map_or((0, 0), at),
        }
    }

    /// The call as the rank `rank` described it.
    pub(crate) fn call(&self, rank: usize) -> CollectiveCall {
        CollectiveCall {
            rank,
            seq: self.seq,
            operation: self.operation,
            root: (self.root != Self::NONE).then_some(self.root as usize),
            reduction: self.reduction,
            bytes: (self.bytes != u64::MAX).then_some(self.bytes as usize),
        }
    }
}

impl From<&CollectiveCall> for CallKey {
    #[inline]
    fn from(c: &CollectiveCall) -> Self {
        CallKey {
            seq: c.seq,
            root: c
                .root
                .map_or(Self::NONE, |r| u32::try_from(r).unwrap_or(Self::NONE)),
            bytes: c.bytes.map_or(u64::MAX, |b| b as u64),
            operation: c.operation,
            reduction: c.reduction,
        }
    }
}

/// One rank's view of the collective call it is in: compared between ranks on every message of
/// the call, so that ranks that disagree learn it from the first message, at no extra cost.
///
/// MPI leaves a mismatch undefined (correctness tools such as MUST catch it); rpar ends the run
/// with [`Error::CollectiveMismatch`], whose `calls` are the ranks' calls written as this type
/// displays them. Two views are equal when all but the caller's `rank` agree. No rpar call takes
/// or returns one; the error carries their text.
///
/// ```
/// use rpar::CollectiveCall;
/// let mine = CollectiveCall {
///     rank: 0,
///     seq: 0,
///     operation: "bcast",
///     root: Some(0),
///     reduction: None,
///     bytes: Some(8),
/// };
/// assert_eq!(mine, CollectiveCall { rank: 1, ..mine }); // the caller's rank is not compared
/// assert_ne!(mine, CollectiveCall { bytes: Some(16), ..mine });
/// assert_eq!(mine.to_string(), "bcast(root 0, 8 bytes) as collective call #0");
///
/// let err = rpar::run(2, |world| {
///     let mut x = vec![0u64; world.rank() + 1]; // rank 1 broadcasts 16 bytes, rank 0 8
///     world.bcast(&mut x[..], 0)
/// })
/// .unwrap_err();
/// let rpar::Error::CollectiveMismatch { calls, .. } = err else { panic!("{err}") };
/// assert!(calls.contains(&(0, mine.to_string())));
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Eq)]
pub struct CollectiveCall {
    /// The caller's rank in the communicator (not compared).
    pub rank: usize,
    /// The number of this call among the collective calls on the communicator (0, 1, …).
    pub seq: u32,
    /// The operation (`bcast`, `allreduce`, …).
    pub operation: &'static str,
    /// The root, for rooted operations.
    pub root: Option<usize>,
    /// The reduction operator's type name (as `std::any::type_name` gives it), for
    /// reductions; displayed without its path.
    pub reduction: Option<&'static str>,
    /// Bytes this rank contributes, where every rank must contribute the same (else `None`).
    pub bytes: Option<usize>,
}

impl PartialEq for CollectiveCall {
    /// Two ranks' views of one call agree when all but the caller's rank agree.
    fn eq(&self, other: &Self) -> bool {
        // the names are `'static` strings, almost always the very same ones: compare where
        // they are before what they say
        let same = |a: &'static str, b: &'static str| std::ptr::eq(a, b) || a == b;
        (self.seq, self.root, self.bytes) == (other.seq, other.root, other.bytes)
            && same(self.operation, other.operation)
            && match (self.reduction, other.reduction) {
                (Some(a), Some(b)) => same(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
    }
}

impl std::fmt::Display for CollectiveCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.operation)?;
        let mut parts = Vec::new();
        if let Some(r) = self.root {
            parts.push(format!("root {r}"));
        }
        if let Some(op) = self.reduction {
            parts.push(format!("op {}", short_type_name(op)));
        }
        if let Some(b) = self.bytes {
            parts.push(format!("{b} bytes"));
        }
        write!(f, "({}) as collective call #{}", parts.join(", "), self.seq)
    }
}

/// `rpar::collective::op::Sum` → `Sum`; generic names are kept whole.
fn short_type_name(name: &str) -> &str {
    if name.contains('<') {
        name
    } else {
        name.rfind(':').map_or(name, |i| &name[i + 1..])
    }
}

/// What a receive accepts: a context, and a source and tag that may be wildcards (`None`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pattern {
    pub(crate) context: u32,
    pub(crate) source: Option<u32>,
    pub(crate) tag: Option<i32>,
    /// On a collective context: the sequence number of the collective call receiving, which the
    /// message's call must have — so that the messages of calls in progress at once (a
    /// non-blocking collective beside later calls) never take each other's place.
    pub(crate) seq: Option<u32>,
}

impl Pattern {
    #[inline]
    fn matches(&self, h: &Header) -> bool {
        h.context == self.context
            && self.source.is_none_or(|s| s == h.source)
            && self.tag.is_none_or(|t| t == h.tag)
            && self.seq.is_none_or(|s| h.call.is_some_and(|c| c.seq == s))
    }
}

/// A matched message: its arrival number (for putting it back in order), header and payload.
#[derive(Debug)]
pub(crate) struct Matched {
    seq: u64,
    pub(crate) header: Header,
    pub(crate) message: Message,
}

#[cfg(test)]
impl Matched {
    /// A matched message as a receive gets it, for tests of delivery.
    pub(crate) fn for_test(header: Header, message: Message) -> Matched {
        Matched {
            seq: 0,
            header,
            message,
        }
    }
}

/// What a blocked call waits for (described to the deadlock watch only if it parks).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Waiting<'a> {
    /// A blocking receive.
    Recv(&'a Pattern),
    /// A blocking probe.
    Probe(&'a Pattern),
    /// The wait of a posted receive.
    Slot(SlotId),
    /// A `wait_any` over several requests.
    AnyRequest,
    /// A rendezvous send to `dest` (a rank of the communicator of `context`).
    Send { context: u32, dest: usize, tag: i32 },
    /// A shared-memory collective step on the collective `context`, waiting for `member`.
    Shared { context: u32, member: usize },
}

/// The name of a blocking call on `context`: collective traffic is named as such.
fn call_name(call: &str, context: u32, collective: Option<CollectiveCall>) -> String {
    match collective {
        Some(c) if context % 2 == 1 => format!("{c} ({call} inside it)"),
        _ if context % 2 == 1 => format!("a collective operation ({call} inside it)"),
        _ => call.to_string(),
    }
}

/// Identifies a posted non-blocking receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotId(u64);

#[derive(Debug)]
struct Posted {
    id: SlotId,
    pattern: Pattern,
    matched: Option<Matched>,
    /// How many calls running now complete this receive (its `wait`, `test`, or a `wait_all`
    /// over it): while one does, a rendezvous it matched is left in the sender's buffer for
    /// that call to copy straight into the receive buffer.
    held: u32,
    /// For a receive that MPI matches itself, straight into its buffer: what it has from MPI
    /// (see `endpoint/direct.rs`).
    direct: Option<DirectSlot>,
    /// The scope that settles it if it is a direct slot whose request was leaked (0: none).
    scope: u64,
}

#[derive(Debug, Default)]
struct Queues {
    /// Arrived messages that no receive has claimed, in arrival order.
    unexpected: VecDeque<Matched>,
    /// Posted non-blocking receives, in post order.
    posted: Vec<Posted>,
    /// Whether a posted receive may hold a rendezvous still in its sender's buffer (see
    /// [`Endpoint::release_unheld`]).
    unreleased: bool,
    /// The posted receive a `wait` on its request is completing now, if any: held as
    /// [`Posted::held`] holds, without a search of the posted list (the common case of one
    /// request waited for).
    waited: Option<SlotId>,
    /// While an unexpected message's payload is still in MPI (its sender waits for it): how
    /// many more empty polls of MPI this rank makes before it receives every such payload into
    /// a buffer of its own (see [`Endpoint::queue`]).
    remote_grace: Option<u32>,
    /// How many posted receives are direct slots (`endpoint/direct.rs`).
    direct_slots: usize,
    /// The number of the last scope opened (`Endpoint::open_scope`).
    next_scope: u64,
    next_seq: u64,
    next_slot: u64,
}

/// How many lanes may lead into one rank: the first senders to send it [`PROMOTE_AFTER`]
/// messages get one, later ones keep to its mailbox. Few enough that the receiver polls each
/// of them on every look, and that 1024 ranks' lanes take at most 8192 blocks of 2 KiB.
const LANES_PER_RANK: u32 = 8;

/// A pair gets a lane once the sender has sent this many messages to the receiver through its
/// mailbox, so that a sender that sends once (a start-up exchange) takes no lane from a busier
/// one.
const PROMOTE_AFTER: u32 = 4;

/// After this many envelopes in a row from lanes, a look tries the mailbox first, so that a
/// busy lane cannot hold back a `Lane`, `Wake` or `Abort` (or another sender's message) there.
const LANE_STREAK: u32 = 64;

/// How a rank sends to another rank of its process.
#[derive(Debug)]
enum Route {
    /// Through the receiver's mailbox; `sent` messages so far.
    Mailbox { sent: u32 },
    /// Through a lane of its own.
    Lane(Producer<Envelope>),
    /// Through the mailbox for good (the receiver had all the lanes it may have).
    MailboxOnly,
}

/// The lanes of one rank, touched only by its thread.
#[derive(Debug, Default)]
struct Lanes {
    /// How this rank sends to each world rank (empty until the first send).
    out: RefCell<Vec<Route>>,
    /// The lanes into this rank, looked at in turn from `cursor`.
    inbound: RefCell<Vec<Consumer<Envelope>>>,
    cursor: Cell<usize>,
    /// Envelopes taken from lanes in a row (see [`LANE_STREAK`]).
    streak: Cell<u32>,
}

/// One rank's receiving side.
#[derive(Debug)]
pub(crate) struct Endpoint {
    world_rank: usize,
    rx: Incoming,
    lanes: Lanes,
    fabric: Arc<Fabric>,
    queues: RefCell<Queues>,
    trace: Option<RankTrace>,
    matrix: Option<MatrixRow>,
    /// The collective call this rank is in, if any.
    collective: Cell<Option<CollectiveCall>>,
    /// The last collective call this rank completed, with its communicator's id (for the
    /// deadlock watch).
    last_collective: Cell<Option<(u32, CollectiveCall)>>,
    /// While a non-blocking operation's coroutine runs (`comm/nonblocking.rs`): its yielder, by
    /// which a call that would block suspends the coroutine instead, back to the `test` or
    /// `wait` that resumed it.
    coroutine: Cell<Option<NonNull<Yielder<(), ()>>>>,
    /// The non-blocking operations in progress, advanced wherever this rank waits (MPI's
    /// progress rule: every call makes progress on every pending operation).
    outstanding: RefCell<Vec<Weak<dyn Progress>>>,
    /// Set while this rank's own context advances the operations one last time before it
    /// parks: a coroutine that then finds its shared-memory condition unmet registers for a
    /// wake-up (until then it polls, registering nothing).
    parking: Cell<bool>,
    /// A `Wake` was taken in by something other than the wait it may be for (a non-blocking
    /// operation's receive, a drain of the mailbox): a wait registered for a wake-up may have
    /// lost its registration with it, so this rank looks again instead of parking
    /// ([`Endpoint::advance_before_parking`]).
    wake_taken: Cell<bool>,
    /// On the MPI transport: the link to the other processes (in-process: always `None`, and
    /// without the `mpi` feature `Wire` has no values, so every use compiles away).
    wire: Option<Wire>,
    /// The names given to communicators with `Comm::set_name` (MPI_Comm_set_name), by
    /// communicator id: a name belongs to the communicator, so every handle of it sees it.
    names: RefCell<std::collections::HashMap<u32, Rc<str>>>,
}

/// The header of the next message of the channel `pattern` names, if it names one (a known
/// source and tag): what a direct receive of it matches.
fn direct_channel(pattern: &Pattern) -> Option<Header> {
    Some(Header {
        context: pattern.context,
        source: pattern.source?,
        tag: pattern.tag?,
        flow: 0,
        call: None,
    })
}

/// The out-of-line part of [`Endpoint::flow_in`].
#[cold]
#[inline(never)]
fn record_arrival(t: &RankTrace, m: &Matched) {
    let arrival = Arrival {
        source: m.header.source as usize,
        tag: m.header.tag,
        bytes: m.message.bytes(),
    };
    t.flow_in(m.header.flow_id(), arrival);
}

/// On the MPI transport, how many empty polls of MPI an unexpected message's payload may stay
/// in MPI, holding its sender, in case a receive for it comes meanwhile (see
/// [`Endpoint::queue`]): about 10-20 us of polling.
const REMOTE_GRACE_POLLS: u32 = 64;

/// On the MPI transport, a wait this long goes on to pause between polls.
const LONG_WAIT: std::time::Duration = std::time::Duration::from_millis(5);

impl Endpoint {
    pub(crate) fn new(
        world_rank: usize,
        rx: Incoming,
        fabric: Arc<Fabric>,
        trace: Option<RankTrace>,
        matrix: Option<MatrixRow>,
    ) -> Self {
        Endpoint {
            world_rank,
            rx,
            lanes: Lanes::default(),
            fabric,
            queues: RefCell::default(),
            trace,
            matrix,
            collective: Cell::new(None),
            last_collective: Cell::new(None),
            coroutine: Cell::new(None),
            outstanding: RefCell::new(Vec::new()),
            parking: Cell::new(false),
            wake_taken: Cell::new(false),
            wire: None,
            names: RefCell::default(),
        }
    }

    /// The endpoint of a process on the MPI transport: messages to other ranks go over `wire`.
    #[cfg(feature = "mpi")]
    pub(crate) fn with_wire(self, wire: Wire) -> Self {
        Endpoint {
            wire: Some(wire),
            ..self
        }
    }

    /// The MPI link to world rank `to`, if `to` is another process (never in-process).
    #[inline]
    pub(crate) fn wire_to(&self, to: usize) -> Option<&Wire> {
        self.wire.as_ref().filter(|_| to != self.world_rank)
    }

    /// The MPI link of this process, if it runs on the MPI transport.
    #[inline]
    pub(crate) fn wire(&self) -> Option<&Wire> {
        self.wire.as_ref()
    }

    /// The collective call this rank is in.
    #[inline]
    pub(crate) fn collective(&self) -> Option<CollectiveCall> {
        self.collective.get()
    }

    /// Makes `yielder` (a coroutine's, or `None` for the rank's own context) the one that calls
    /// which would block suspend; returns the one before.
    pub(crate) fn set_coroutine(
        &self,
        yielder: Option<NonNull<Yielder<(), ()>>>,
    ) -> Option<NonNull<Yielder<(), ()>>> {
        self.coroutine.replace(yielder)
    }

    /// Swaps the per-context collective state (see [`CallState`]) with `state`.
    pub(crate) fn swap_call_state(&self, state: CallState) -> CallState {
        (
            self.collective.replace(state.0),
            self.last_collective.replace(state.1),
        )
    }

    /// Where a call would block: inside a non-blocking operation's coroutine, suspends it (back
    /// to whoever resumed it) and returns true; in the rank's own context, returns false.
    #[inline]
    fn suspend(&self) -> bool {
        match self.coroutine.get() {
            None => false,
            Some(yielder) => {
                // SAFETY: the pointer is set only while the coroutine whose yielder it is runs
                // (`comm/nonblocking.rs` sets it on every resume and clears it when the
                // coroutine suspends or ends), and that coroutine is the one running now.
                unsafe { yielder.as_ref() }.suspend(());
                true
            }
        }
    }

    /// Registers a non-blocking operation to be advanced wherever this rank waits.
    pub(crate) fn track(&self, op: Weak<dyn Progress>) {
        self.outstanding.borrow_mut().push(op);
    }

    /// Advances every non-blocking operation in progress (from the rank's own context only),
    /// forgetting those that are done or gone; whether one completed (then what the caller
    /// waits for may be there: it should look again before it waits on). One test of a list
    /// when there is none.
    #[inline]
    fn advance_outstanding(&self) -> bool {
        self.coroutine.get().is_none()
            && !self.outstanding.borrow().is_empty()
            && self.advance_outstanding_now()
    }

    #[cold]
    #[inline(never)]
    fn advance_outstanding_now(&self) -> bool {
        let ops: Vec<_> = self.outstanding.borrow().clone();
        let going: Vec<bool> = ops
            .iter()
            .map(|op| op.upgrade().is_some_and(|op| !op.advance()))
            .collect();
        if going.iter().all(|&g| g) {
            return false;
        }
        // operations registered meanwhile (none: only this context registers, and it is here)
        // stay; those done or dropped go
        let mut list = self.outstanding.borrow_mut();
        let mut i = 0;
        list.retain(|_| {
            let keep = going.get(i).copied().unwrap_or(true);
            i += 1;
            keep
        });
        true
    }

    /// Leaves the collective call this rank is in, `call` on the communicator `comm`, completed
    /// (for the deadlock watch, which names it as the last one). (Given, not read back from the
    /// call in progress: its caller has it at hand.)
    #[inline]
    pub(crate) fn completed_collective(&self, comm: u32, call: CollectiveCall) {
        self.collective.set(None);
        self.last_collective.set(Some((comm, call)));
    }

    /// Enters (or, with the previous value, leaves) a collective call; returns the previous one.
    #[inline]
    pub(crate) fn set_collective(&self, call: Option<CollectiveCall>) -> Option<CollectiveCall> {
        self.collective.replace(call)
    }

    /// This rank's trace recorder, if tracing is on. Without the `trace` cargo feature this is
    /// a constant `None`, so the compiler removes every tracing branch.
    #[inline]
    pub(crate) fn trace(&self) -> Option<&RankTrace> {
        self.trace.as_ref().filter(|_| cfg!(feature = "trace"))
    }

    /// Records the arrival of a matched message in the trace (the head of its flow arrow, and
    /// what the span of the receive is about). A message carries a flow id only when tracing
    /// is on, and that is the cheaper test.
    #[inline]
    pub(crate) fn flow_in(&self, m: &Matched) {
        if cfg!(feature = "trace") && m.header.flow_id() != 0 {
            if let Some(t) = self.trace() {
                record_arrival(t, m);
            }
        }
    }

    /// This rank's row of the communication matrix, if it is recorded.
    #[inline]
    pub(crate) fn matrix(&self) -> Option<&MatrixRow> {
        self.matrix.as_ref()
    }

    pub(crate) fn world_rank(&self) -> usize {
        self.world_rank
    }

    pub(crate) fn fabric(&self) -> &Arc<Fabric> {
        &self.fabric
    }

    /// Fails with the abort error if the run was aborted.
    #[inline]
    pub(crate) fn check_live(&self) -> Result<()> {
        if self.fabric.is_aborted() {
            Err(self.fabric.abort_error())
        } else {
            Ok(())
        }
    }

    /// The next envelope from the mailbox, blocking: spins briefly, then parks (telling the
    /// deadlock watch what it waits for).
    fn next_blocking(&self, waiting: Waiting<'_>) -> Result<Envelope> {
        self.release_unheld();
        if self.coroutine.get().is_some() {
            return self.next_suspending();
        }
        if self.advance_outstanding() {
            return Ok(Envelope::Wake);
        }
        if let Some(wire) = &self.wire {
            return self.next_from_wire(wire);
        }
        // poll tightly first: one pause between looks, so a message that arrives is seen
        // within a few nanoseconds (an exponential backoff would sleep past it)
        let tracking = !self.outstanding.borrow().is_empty();
        for round in 0..self.fabric.spin_rounds() {
            if let Some(env) = self.try_next() {
                return Ok(env);
            }
            if tracking && round % 16 == 15 && self.advance_outstanding() {
                return Ok(Envelope::Wake);
            }
            std::hint::spin_loop();
        }
        // then poll while yielding the core, up to the fabric's budget: a reply that comes
        // within it costs no park and no wake-up system call
        let budget = self.fabric.poll_budget();
        if !budget.is_zero() {
            let start = std::time::Instant::now();
            loop {
                if let Some(env) = self.try_next() {
                    return Ok(env);
                }
                if start.elapsed() >= budget {
                    break;
                }
                std::thread::yield_now();
                if self.advance_outstanding() {
                    return Ok(Envelope::Wake);
                }
            }
        }
        if self.advance_before_parking() {
            return Ok(Envelope::Wake);
        }
        self.park(waiting)
    }

    /// Advances the operations in progress one last time before this rank parks, letting
    /// those that wait in shared memory register for a wake-up; whether one completed or a
    /// `Wake` was taken in elsewhere since the last look (then the caller looks again at what
    /// it waits for, and registers again, instead of parking: the wake-up may have been its
    /// own, taken off its waker's list with its registration).
    fn advance_before_parking(&self) -> bool {
        self.parking.set(true);
        let completed = self.advance_outstanding();
        self.parking.set(false);
        completed | self.wake_taken.take()
    }

    /// The next envelope, inside a non-blocking operation's coroutine: one that is here, else
    /// the coroutine suspends, and once resumed returns a `Wake` — whoever resumed it may have
    /// filed what arrived meanwhile (and parked if need be), so the caller looks again at what
    /// it waits for.
    fn next_suspending(&self) -> Result<Envelope> {
        self.check_live()?;
        if let Some(env) = self.try_next() {
            if matches!(env, Envelope::Wake) {
                self.wake_taken.set(true); // perhaps another wait's
            }
            return Ok(env);
        }
        if let Some(wire) = &self.wire {
            if let Some((header, message)) = wire.poll()? {
                return Ok(Envelope::Msg(header, message));
            }
        }
        self.suspend();
        Ok(Envelope::Wake)
    }

    /// Parks on the mailbox until an envelope comes, telling the deadlock watch what it waits
    /// for; first publishes that it parks and looks at its lanes once more, so that a lane
    /// producer either is seen here or sees it parked and sends a `Wake` (see `Inbox`).
    fn park(&self, waiting: Waiting<'_>) -> Result<Envelope> {
        let inbox = self.fabric.inbox(self.world_rank);
        inbox.park();
        if let Some(env) = self.pop_lane() {
            inbox.unpark();
            return Ok(env);
        }
        let watch = self.fabric.watch();
        let parked = Parked {
            call: self.describe(waiting),
            collective: self.collective(),
            previous: self.last_collective.get(),
        };
        watch.parking(self.world_rank, parked, self.rx.taken());
        let env = self.rx.recv();
        watch.unparked(self.world_rank);
        inbox.unpark();
        env.map_err(|_| self.fabric.abort_error())
    }

    /// An envelope that is already here: from a lane, else from the mailbox (the mailbox
    /// first after [`LANE_STREAK`] lane envelopes in a row).
    #[inline(always)]
    fn try_next(&self) -> Option<Envelope> {
        let streak = self.lanes.streak.get();
        if streak >= LANE_STREAK {
            self.lanes.streak.set(0);
            if let Ok(env) = self.rx.try_recv() {
                return Some(env);
            }
        }
        if let Some(env) = self.pop_lane() {
            self.lanes.streak.set(self.lanes.streak.get() + 1);
            return Some(env);
        }
        self.lanes.streak.set(0);
        self.rx.try_recv().ok()
    }

    /// The next envelope from a lane into this rank, looking at each once, in turn.
    #[inline(always)]
    fn pop_lane(&self) -> Option<Envelope> {
        let mut inbound = self.lanes.inbound.borrow_mut();
        match inbound.len() {
            0 => None,
            1 => inbound[0].pop(),
            n => {
                let start = self.lanes.cursor.get();
                for k in 0..n {
                    let i = if start + k < n {
                        start + k
                    } else {
                        start + k - n
                    };
                    if let Some(env) = inbound[i].pop() {
                        self.lanes.cursor.set(if i + 1 < n { i + 1 } else { 0 });
                        return Some(env);
                    }
                }
                None
            }
        }
    }

    /// Takes on a lane another rank opened to this one.
    fn adopt(&self, lane: Consumer<Envelope>) {
        self.lanes.inbound.borrow_mut().push(lane);
    }

    /// Hands a message to world rank `to` of this process: through this rank's lane to it, or
    /// its mailbox (a pair gets a lane after [`PROMOTE_AFTER`] messages, if the receiver has
    /// fewer than [`LANES_PER_RANK`]). A message to a rank that has finished is counted as never
    /// received, and its rendezvous, if any, withdrawn (the sender then learns it at once).
    #[inline]
    pub(crate) fn deliver(&self, to: usize, header: Header, message: Message) {
        let fabric = &*self.fabric;
        let inbox = fabric.inbox(to);
        if inbox.is_closed() {
            fabric.note_warnings(vec![fabric.unreceived(to, &header, &message)]);
            return;
        }
        let rendezvous = message.data.rendezvous();
        let closed = match self.push_to_lane(to, Envelope::Msg(header, message)) {
            Ok(notice) => {
                if notice.wake {
                    let _ = fabric.mailbox(to).send(Envelope::Wake);
                }
                notice.closed
            }
            Err(envelope) => {
                // cannot fail: the fabric keeps a receiving end of every mailbox
                let _ = fabric.mailbox(to).send(envelope);
                rendezvous.is_some() && inbox.closed_after_send()
            }
        };
        if closed {
            // the receiver finished: its last drain took the message (and dropped the ticket),
            // or the sweep at the end of the run will; either way nobody will read the
            // buffer, so do not wait for that
            if let Some(pending) = rendezvous {
                pending.cancel();
            }
        }
    }

    /// Pushes `envelope` into this rank's lane to world rank `to`, opening the lane if the pair
    /// has earned one; gives it back if the pair keeps to the mailbox.
    #[inline]
    fn push_to_lane(&self, to: usize, envelope: Envelope) -> std::result::Result<Notice, Envelope> {
        // on the MPI transport the blocking loop polls only the mailbox (and MPI)
        if self.wire.is_some() {
            return Err(envelope);
        }
        let mut out = self.lanes.out.borrow_mut();
        if out.is_empty() {
            out.resize_with(self.fabric.size(), || Route::Mailbox { sent: 0 });
        }
        let route = &mut out[to];
        if let Route::Mailbox { sent } = route {
            *sent += 1;
            if *sent > PROMOTE_AFTER {
                *route = self.open_lane(to);
            }
        }
        match route {
            Route::Lane(lane) => {
                lane.push(envelope);
                Ok(self.fabric.inbox(to).after_push())
            }
            Route::Mailbox { .. } | Route::MailboxOnly => Err(envelope),
        }
    }

    /// Opens a lane to world rank `to`, if it may have another: the lane's consumer goes to it
    /// through its mailbox, behind every message this rank sent it so far.
    #[cold]
    fn open_lane(&self, to: usize) -> Route {
        let fabric = &*self.fabric;
        if !fabric.inbox(to).reserve_lane(LANES_PER_RANK) {
            return Route::MailboxOnly;
        }
        let (producer, consumer) = fabric.new_lane(to);
        match fabric.mailbox(to).send(Envelope::Lane(consumer)) {
            Ok(()) => Route::Lane(producer),
            Err(_) => Route::MailboxOnly,
        }
    }

    /// Blocks until `ready()` holds, for a condition that another rank of this process makes
    /// true in shared memory (see `shared.rs`): polls it, tightly and then yielding the core for
    /// the poll budget, as [`Endpoint::next_blocking`] polls the mailbox; then parks on the
    /// mailbox after `register()` has arranged for a `Wake` once the condition may hold, and
    /// looks again after each envelope. Messages that arrive meanwhile are filed; an abort
    /// returns its error.
    pub(crate) fn wait_until(
        &self,
        waiting: Waiting<'_>,
        ready: impl Fn() -> bool,
        register: impl Fn(),
    ) -> Result<()> {
        self.release_unheld();
        if self.coroutine.get().is_some() {
            // polled by whoever resumes it; registered for a wake-up once that context is
            // about to park (then the condition is looked at once more)
            let mut registered = false;
            loop {
                if ready() {
                    return Ok(());
                }
                self.check_live()?;
                if !registered && self.parking.get() {
                    register();
                    registered = true;
                    continue;
                }
                self.suspend();
                // whoever resumed it may have taken a wake-up of the list it is on (a waker
                // takes the whole list, also for a store that is not this wait's: the member's
                // other step, or done with one): register again before that context parks,
                // as the rank's own wait does on a `Wake`, or the store it waits for finds
                // nobody to wake
                registered = false;
            }
        }
        let _ = self.advance_outstanding();
        for _ in 0..self.fabric.spin_rounds() {
            if ready() {
                return Ok(());
            }
            std::hint::spin_loop();
        }
        self.check_live()?;
        let budget = self.fabric.poll_budget();
        let start = std::time::Instant::now();
        while start.elapsed() < budget {
            if ready() {
                return Ok(());
            }
            std::thread::yield_now();
            self.check_live()?;
            let _ = self.advance_outstanding();
        }
        let mut registered = false;
        loop {
            if !registered {
                register();
                registered = true;
            }
            if ready() {
                return Ok(());
            }
            self.check_live()?;
            if self.advance_before_parking() {
                // an operation completed, or a `Wake` was taken in elsewhere (perhaps this
                // wait's, its registration gone with it): look and register again
                registered = false;
                continue;
            }
            if ready() {
                return Ok(());
            }
            match self.park(waiting)? {
                Envelope::Msg(header, message) => {
                    let _ = self.file(header, message, None, false);
                    // another rank's message of this very call that cannot be part of it
                    if let Waiting::Shared { context, .. } = waiting {
                        self.check_conflicts(context, Some(1))?;
                    }
                }
                // the waited-for rank took our registration with it: register again (the wake
                // may have come from a lane producer instead: registering twice costs a
                // second wake, nothing more)
                Envelope::Wake => registered = false,
                Envelope::Lane(lane) => self.adopt(lane),
                Envelope::Abort => return Err(self.fabric.abort_error()),
            }
        }
    }

    /// The next envelope on the MPI transport: from this process's own mailbox (messages to
    /// itself) or from MPI. Polls both (there is no one to wake a parked process), tightly at
    /// first, then yielding the core, then pausing between looks once the wait is long.
    fn next_from_wire(&self, wire: &Wire) -> Result<Envelope> {
        let mut since = None;
        for round in 0u32.. {
            match self.rx.try_recv() {
                Ok(env) => return Ok(env),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => return Err(self.fabric.abort_error()),
            }
            if let Some((header, message)) = wire.poll()? {
                return Ok(Envelope::Msg(header, message));
            }
            self.spend_remote_grace();
            if wire.progressed_since() {
                return Ok(Envelope::Wake); // a send may be waiting for it
            }
            if self.direct_progressed(round) {
                return Ok(Envelope::Wake); // a receive straight into its buffer ended
            }
            self.back_off(round, &mut since);
        }
        unreachable!("the polling loop returns")
    }

    /// The pause after `round` empty polls of a wait: spin first, then yield the core, then
    /// sleep briefly once the wait is long. `since` is when it stopped spinning, read from the
    /// clock only then (a wait that ends while spinning, most of them, never reads it).
    fn back_off(&self, round: u32, since: &mut Option<std::time::Instant>) {
        if round < self.fabric.spin_rounds() {
            std::hint::spin_loop();
        } else if since.get_or_insert_with(std::time::Instant::now).elapsed() < LONG_WAIT {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// What a blocked call waits for, for a deadlock report.
    fn describe(&self, waiting: Waiting<'_>) -> BlockedCall {
        let from_pattern = |call: &str, p: &Pattern| BlockedCall {
            rank: self.world_rank,
            call: call_name(call, p.context, self.collective()),
            peer: p.source.map(|s| s as usize),
            tag: p.tag,
            communicator: p.context / 2,
        };
        match waiting {
            Waiting::Recv(p) => from_pattern("recv", p),
            Waiting::Probe(p) => from_pattern("probe", p),
            Waiting::Slot(id) => {
                let q = self.queues.borrow();
                match q.posted.iter().find(|s| s.id == id) {
                    Some(slot) => from_pattern("wait", &slot.pattern),
                    None => from_pattern(
                        "wait",
                        &Pattern {
                            context: 0,
                            source: None,
                            tag: None,
                            seq: None,
                        },
                    ),
                }
            }
            Waiting::AnyRequest => BlockedCall {
                rank: self.world_rank,
                call: "wait_any".into(),
                peer: None,
                tag: None,
                communicator: 0,
            },
            Waiting::Send { context, dest, tag } => BlockedCall {
                rank: self.world_rank,
                call: call_name("send", context, self.collective()),
                peer: Some(dest),
                tag: Some(tag),
                communicator: context / 2,
            },
            Waiting::Shared { context, member } => BlockedCall {
                rank: self.world_rank,
                call: call_name("shared-memory wait", context, self.collective()),
                peer: Some(member),
                tag: None,
                communicator: context / 2,
            },
        }
    }

    /// Takes one envelope (blocking) and files it: a message goes to the first posted receive it
    /// matches, else to the unexpected queue. Returns the message if it matches `wanted` and no
    /// posted receive took it (the blocking receive that called this then owns it).
    /// With `release_borrowed`, a rendezvous message that is filed is copied out at once so its
    /// sender is not held up (used while this rank is itself blocked in a send).
    // `pump`, `next_envelope` and `file` are inlined so that a received message is built once,
    // where the caller keeps it: out of line, each layer (`Option`, `Result`) moved it again
    // (callgrind: 6 of the 7 moves of a self send + receive were these)
    #[inline(always)]
    fn pump(
        &self,
        waiting: Waiting<'_>,
        wanted: Option<&Pattern>,
        release_borrowed: bool,
    ) -> Result<Option<Matched>> {
        match self.next_envelope(waiting)? {
            Some((header, message)) => Ok(self.file(header, message, wanted, release_borrowed)),
            None => Ok(None),
        }
    }

    /// The next message from the mailbox (blocking), or `None` for a `Wake`.
    ///
    /// Inlined, and an envelope already there is taken without a `Result` around it, so that it
    /// lands in the caller's frame: a `Result<Envelope>` lays it out 8 bytes further on, and
    /// every move of it out of one missed the store-to-load forwarding of the move in.
    #[inline(always)]
    fn next_envelope(&self, waiting: Waiting<'_>) -> Result<Option<(Header, Message)>> {
        let ready = match self.wire {
            None => self.try_next(),
            Some(_) => None,
        };
        let envelope = match ready {
            Some(envelope) => envelope,
            None => self.next_blocking(waiting)?,
        };
        match envelope {
            Envelope::Msg(header, message) => Ok(Some((header, message))),
            Envelope::Wake => Ok(None),
            Envelope::Lane(lane) => {
                self.adopt(lane);
                Ok(None)
            }
            Envelope::Abort => Err(self.fabric.abort_error()),
        }
    }

    /// The next arrival number.
    #[inline]
    fn next_seq(&self) -> u64 {
        let mut q = self.queues.borrow_mut();
        q.next_seq += 1;
        q.next_seq - 1
    }

    /// Whether a receive of `wanted` takes a message with `header` that just arrived: it
    /// matches, and no posted receive (which comes first) does.
    #[inline]
    fn takes(&self, wanted: &Pattern, header: &Header) -> bool {
        wanted.matches(header) && {
            let q = self.queues.borrow();
            !q.posted
                .iter()
                .any(|p| p.open() && p.pattern.matches(header))
        }
    }

    /// Numbers an arrived message and files it (see `pump`).
    #[inline(always)]
    fn file(
        &self,
        header: Header,
        message: Message,
        wanted: Option<&Pattern>,
        release_borrowed: bool,
    ) -> Option<Matched> {
        if message.data.is_withdrawn() {
            return None; // a cancelled send: as if never sent
        }
        if self.wire.is_some() {
            self.settle_direct(&header);
        }
        let m = Matched {
            seq: self.next_seq(),
            header,
            message,
        };
        if wanted.is_some_and(|w| self.takes(w, &m.header)) {
            let mut m = m;
            m.header.set_ready(false); // a receive was waiting for it
            return Some(m); // acknowledged by `recv`, which took it
        }
        self.queue(m, release_borrowed);
        None
    }

    /// Gives an arrived message to the first posted receive it matches, else to the unexpected
    /// queue (with `release_borrowed`, copying out a rendezvous payload first).
    ///
    /// A rendezvous that a posted receive matches is copied out at once unless a call running
    /// now completes that receive: MPI's progress rule (MPI-4.0 §3.7.4) says a send whose
    /// receive is posted completes whatever else the receiver does, and the receive buffer
    /// itself may be written only by a call on its request (a request leaked with
    /// `mem::forget` no longer keeps it alive).
    ///
    /// An unexpected message whose payload is still in MPI (another process's large message)
    /// stays there for a grace of [`REMOTE_GRACE_POLLS`] empty polls of MPI by this rank, then
    /// is received into a buffer of its own: its sender waits meanwhile, as MPI lets a
    /// standard send wait for its receive, and the grace bounds that wait while this rank
    /// keeps calling rpar. A receive that comes within it (a ping-pong whose reply arrives
    /// while this rank still waits for its own send to complete) takes the payload straight
    /// into its buffer: one copy, not two.
    #[inline(never)]
    fn queue(&self, mut m: Matched, release_borrowed: bool) {
        if release_borrowed {
            release_unmatched(&mut m);
        }
        let mut q = self.queues.borrow_mut();
        let q = &mut *q;
        match q
            .posted
            .iter_mut()
            .find(|p| p.open() && p.pattern.matches(&m.header))
        {
            Some(slot) => {
                m.header.set_ready(false); // its receive was posted
                self.acknowledge(&m);
                if m.message.data.is_borrowed() {
                    if slot.held == 0 && q.waited != Some(slot.id) {
                        release(&mut m);
                    } else {
                        q.unreleased = true;
                    }
                }
                slot.matched = Some(m);
            }
            None => {
                // a payload still in MPI holds its sender until received: left there for a
                // grace of polls, then taken out
                if m.message.data.is_remote() && q.remote_grace.is_none() {
                    q.remote_grace = Some(REMOTE_GRACE_POLLS);
                }
                q.unexpected.push_back(m)
            }
        }
    }

    /// Counts an empty poll of MPI against the grace of the unexpected payloads still in MPI;
    /// once it is spent, receives each into a buffer of its own, releasing its sender. One test
    /// when there is none.
    #[inline]
    fn spend_remote_grace(&self) {
        let mut q = self.queues.borrow_mut();
        match q.remote_grace {
            None => {}
            Some(0) => {
                q.remote_grace = None;
                for m in q.unexpected.iter_mut() {
                    if m.message.data.is_remote() {
                        release(m);
                    }
                }
            }
            Some(n) => q.remote_grace = Some(n - 1),
        }
    }

    /// Copies out every rendezvous that a posted receive holds while no running call completes
    /// that receive, releasing its sender (MPI's progress rule; see [`Endpoint::queue`]). Called
    /// wherever this rank waits or polls, so that a sender never waits for a receive the
    /// receiver is not completing. One test of a flag when there is none.
    #[inline]
    fn release_unheld(&self) {
        if self.queues.borrow().unreleased {
            self.release_unheld_now();
        }
    }

    #[cold]
    #[inline(never)]
    fn release_unheld_now(&self) {
        let mut q = self.queues.borrow_mut();
        let (mut left, waited) = (false, q.waited);
        for p in &mut q.posted {
            if let Some(m) = p.matched.as_mut().filter(|m| m.message.data.is_borrowed()) {
                if p.held == 0 && waited != Some(p.id) {
                    release(m);
                } else {
                    left = true;
                }
            }
        }
        q.unreleased = left;
    }

    /// Marks the posted receives `ids` as completed by a call running now (or, with `by` -1, no
    /// longer): see [`Posted::held`].
    pub(crate) fn hold(&self, ids: impl IntoIterator<Item = SlotId>, by: i32) {
        let mut q = self.queues.borrow_mut();
        for id in ids {
            if let Some(p) = q.posted.iter_mut().find(|p| p.id == id) {
                p.held = p.held.saturating_add_signed(by);
            }
        }
    }

    #[inline]
    fn take_unexpected(&self, pattern: &Pattern) -> Option<Matched> {
        let mut q = self.queues.borrow_mut();
        if q.unexpected.is_empty() {
            return None;
        }
        let i = q
            .unexpected
            .iter()
            .position(|m| pattern.matches(&m.header))?;
        let m = q.unexpected.remove(i)?;
        if m.message.data.is_withdrawn() {
            drop(q);
            return self.take_unexpected_after_withdrawn(pattern);
        }
        Some(m) // acknowledged by whoever took it (a receive's `accept_arrival`, `post`)
    }

    /// A receive has matched `m`: if a synchronous send in another process sent it, that
    /// process is told, once (MPI_Ssend completes when a receive matches, not when this
    /// process takes the message from MPI).
    #[inline(always)]
    pub(crate) fn acknowledge(&self, m: &Matched) {
        // in-process (no wire) nothing is ever acknowledged: one test of the link
        if self.wire.is_some() {
            self.acknowledge_remote(m);
        }
    }

    #[cold]
    #[inline(never)]
    fn acknowledge_remote(&self, m: &Matched) {
        if let (Some(wire), Data::Typed(t)) = (&self.wire, &m.message.data) {
            if let Some((to, sync)) = t.ack.take() {
                // a failure to send it ends the run anyway (MPI aborts the job)
                let _ = wire.acknowledge(to, sync);
            }
        }
    }

    /// Waits until the acknowledgement of this process's synchronous send `sync` arrives (MPI
    /// transport), receiving meanwhile.
    pub(crate) fn wait_ack(&self, sync: u32, waiting: Waiting<'_>) -> Result<()> {
        let Some(wire) = &self.wire else {
            return Ok(());
        };
        self.wait_send(|| wire.acked(sync), waiting)?;
        wire.forget_ack(sync);
        Ok(())
    }

    /// Whether the acknowledgement of synchronous send `sync` has arrived (taken once).
    pub(crate) fn test_ack(&self, sync: u32) -> Result<bool> {
        let Some(wire) = &self.wire else {
            return Ok(true);
        };
        self.drain_ready()?;
        let acked = wire.acked(sync);
        if acked {
            wire.forget_ack(sync);
        }
        Ok(acked)
    }

    /// [`Endpoint::take_unexpected`] again, a cancelled send's message having been dropped (as
    /// if never sent).
    #[cold]
    #[inline(never)]
    fn take_unexpected_after_withdrawn(&self, pattern: &Pattern) -> Option<Matched> {
        self.take_unexpected(pattern)
    }

    /// Blocking receive: the first message matching `pattern` in arrival order that no posted
    /// receive has claimed.
    #[inline]
    pub(crate) fn recv(&self, pattern: &Pattern) -> Result<Matched> {
        self.check_live()?;
        if let Some(m) = self.take_unexpected(pattern) {
            return Ok(m);
        }
        self.check_conflicts(pattern.context, None)?;
        loop {
            if let Some(m) = self.pump(Waiting::Recv(pattern), Some(pattern), false)? {
                return Ok(m); // acknowledged by the receive's `Comm::accept_arrival`
            }
            self.check_conflicts(pattern.context, Some(1))?;
            // a Wake or a message for someone else; it may have been an earlier one that a
            // cancelled receive put back, so look again
            if let Some(m) = self.take_unexpected(pattern) {
                return Ok(m);
            }
        }
    }

    /// The bound of the direct class of the channel `pattern` names from world rank `from`, if
    /// it has one of elements of `elem` (see [`Endpoint::recv_direct`]).
    pub(crate) fn direct_bound(
        &self,
        pattern: &Pattern,
        from: usize,
        elem: ElemType,
    ) -> Option<usize> {
        self.wire
            .as_ref()?
            .direct_bound(from, &direct_channel(pattern)?, elem)
    }

    /// A blocking receive of `pattern` from world rank `from`, another process, straight into
    /// the `capacity` elements of `elem` at `dst` by MPI's own matching (`Wire::recv_direct`),
    /// where rpar's matching allows it: a known source and tag (on a collective context, in
    /// the collective call in progress), nothing queued that the receive would take, and no
    /// posted receive that would take the channel's next message first. The count received,
    /// or `None` where that does not apply (nothing was received: the caller receives the
    /// ordinary way; a message of another call that MPI gave the receive is filed as any
    /// arrival). While it waits, this rank files what arrives from elsewhere and advances its
    /// non-blocking operations, as any wait.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `capacity` elements of `elem` for this call.
    pub(crate) unsafe fn recv_direct(
        &self,
        pattern: &Pattern,
        from: usize,
        buffer: (ElemType, *mut u8, usize),
    ) -> Result<Option<usize>> {
        let (Some(wire), Some(mut next)) = (&self.wire, direct_channel(pattern)) else {
            return Ok(None);
        };
        let direct_allowed =
            from != self.world_rank && self.trace.is_none() && self.coroutine.get().is_none();
        if !direct_allowed {
            return Ok(None);
        }
        if let Some(seq) = pattern.seq {
            // a collective call's receive: the call in progress's (its number is checked
            // against the message's, `Wire::recv_direct`)
            match self.collective.get() {
                Some(mine) if mine.seq == seq => next.call = Some(CallKey::from(&mine)),
                _ => return Ok(None),
            }
        }
        {
            // (in a collective call, a message of another call that MPI gives the receive goes
            // back behind those queued, before those still in MPI: its place in the channel)
            let q = self.queues.borrow();
            let posted_first = q
                .posted
                .iter()
                .any(|p| p.unfilled() && p.pattern.matches(&next));
            let queued = || q.unexpected.iter().any(|m| pattern.matches(&m.header));
            if posted_first || (!q.unexpected.is_empty() && queued()) {
                return Ok(None);
            }
        }
        self.check_live()?;
        let mut since = None;
        let call = pattern.seq.map(|_| pattern.context);
        let idle = |round: u32| self.idle_direct(round, call, &mut since);
        let put_back = |header, message| {
            let _ = self.file(header, message, None, false);
        };
        // SAFETY: the caller's guarantee on `dst`; the channel's next message is the one to
        // receive: nothing of it is queued and no posted receive would take it first (above),
        // and what `idle` files arrives after the direct receive matched (MPI gives a message to
        // the posted receive it matches before a later probe sees it).
        unsafe { wire.recv_direct(from, &next, buffer, idle, put_back) }
    }

    /// The pause after `round` tests of a direct receive that found it unfinished: now and
    /// then this rank files what arrived from elsewhere and advances its non-blocking
    /// operations, as any wait does — and for a collective call's receive (`call`: its
    /// context), fails on a message of another process's same call that differs (of another
    /// kind than the receive's stream: the direct receive would never get it).
    fn idle_direct(
        &self,
        round: u32,
        call: Option<u32>,
        since: &mut Option<std::time::Instant>,
    ) -> Result<()> {
        if round % 16 == 15 {
            self.drain_ready()?;
            if let Some(context) = call {
                self.check_conflicts(context, None)?;
            }
            let _ = self.advance_outstanding();
        }
        self.back_off(round, since);
        Ok(())
    }

    /// While in a collective call on `context`: fails if a queued message (the last `newest` of
    /// them, or all) comes from the same collective call of another rank — same communicator,
    /// same sequence number — but that rank called something else. Its message can never match,
    /// so waiting for it would hang.
    #[inline]
    fn check_conflicts(&self, context: u32, newest: Option<usize>) -> Result<()> {
        // only messages on a collective context carry a call (this test is inlined, the rest not)
        if context.is_multiple_of(2) {
            return Ok(());
        }
        self.check_collective_conflicts(context, newest)
    }

    /// [`Endpoint::check_conflicts`] on a collective context.
    #[inline(never)]
    fn check_collective_conflicts(&self, context: u32, newest: Option<usize>) -> Result<()> {
        let Some(mine) = self.collective.get() else {
            return Ok(());
        };
        let key = CallKey::from(&mine);
        let q = self.queues.borrow();
        let skip = newest.map_or(0, |n| q.unexpected.len().saturating_sub(n));
        let conflict = q.unexpected.iter().skip(skip).find_map(|m| {
            let theirs = m.header.call?;
            let source = m.header.source as usize;
            (m.header.context == context && theirs.seq == key.seq && theirs != key)
                .then(|| (source, theirs.call(source)))
        });
        match conflict {
            None => Ok(()),
            Some((source, theirs)) => {
                Err(self.collective_mismatch(context / 2, mine, (source, theirs)))
            }
        }
    }

    /// Aborts the run with a collective mismatch between this rank's call and another's, so
    /// that every rank gets it (a mismatched collective cannot be recovered from), and returns it.
    pub(crate) fn collective_mismatch(
        &self,
        communicator: u32,
        mine: CollectiveCall,
        (source, theirs): (usize, CollectiveCall),
    ) -> Error {
        let err = Error::CollectiveMismatch {
            communicator,
            calls: vec![(mine.rank, mine.to_string()), (source, theirs.to_string())],
        };
        self.fabric
            .abort(self.world_rank, Failure::Collective(err.clone()));
        self.fabric.abort_error()
    }

    /// Aborts the run with `err`, a disagreement between ranks found inside a collective call
    /// (type signatures or sizes that differ), as everyone's error: the other ranks' calls
    /// cannot complete, and every rank gets the same error. Returns the run's error (`err`,
    /// unless another rank's failure came first).
    pub(crate) fn collective_failure(&self, err: Error) -> Error {
        self.fabric.abort(self.world_rank, Failure::Collective(err));
        self.fabric.abort_error()
    }

    /// Takes the first unclaimed message matching `pattern` out of matching for a matched probe
    /// (MPI_Mprobe, or MPI_Improbe without `block`), its payload copied out of the sender's
    /// buffer so that the sender is not held up until the message is received.
    pub(crate) fn take_matching(&self, pattern: &Pattern, block: bool) -> Result<Option<Matched>> {
        let taken = if block {
            Some(self.recv(pattern)?)
        } else {
            self.check_live()?;
            self.drain_ready()?;
            self.take_unexpected(pattern)
        };
        Ok(taken.map(|mut m| {
            release(&mut m);
            m
        }))
    }

    /// Puts a matched message back where it was in arrival order (after a truncation error or a
    /// cancelled receive), so that it is not lost and order is kept.
    pub(crate) fn put_back(&self, mut m: Matched) {
        if m.message.data.is_remote() {
            release(&mut m); // unexpected again: see `Endpoint::queue`
        }
        let mut q = self.queues.borrow_mut();
        let i = q.unexpected.partition_point(|x| x.seq < m.seq);
        q.unexpected.insert(i, m);
    }

    /// Blocking or non-blocking probe: the header and size of the first unclaimed matching
    /// message, left in place.
    pub(crate) fn probe(
        &self,
        pattern: &Pattern,
        block: bool,
    ) -> Result<Option<(Header, usize, usize)>> {
        self.check_live()?;
        loop {
            self.drain_ready()?;
            {
                let q = self.queues.borrow();
                let found = q
                    .unexpected
                    .iter()
                    .find(|m| pattern.matches(&m.header) && !m.message.data.is_withdrawn());
                if let Some(m) = found {
                    return Ok(Some((m.header, m.message.count, m.message.bytes())));
                }
            }
            if !block {
                return Ok(None);
            }
            if let Some(m) = self.pump(Waiting::Probe(pattern), None, false)? {
                self.put_back(m);
            }
        }
    }

    /// Files every envelope already in the lanes and the mailbox, without blocking.
    pub(crate) fn drain_ready(&self) -> Result<()> {
        self.release_unheld();
        while let Some(envelope) = self.try_next() {
            match envelope {
                Envelope::Msg(h, m) => {
                    let _ = self.file(h, m, None, false);
                }
                Envelope::Wake => self.wake_taken.set(true), // perhaps a wait's
                Envelope::Lane(lane) => self.adopt(lane),
                Envelope::Abort => return Err(self.fabric.abort_error()),
            }
        }
        if let Some(wire) = &self.wire {
            while let Some((h, m)) = wire.poll()? {
                let _ = self.file(h, m, None, false);
            }
            self.spend_remote_grace();
        }
        Ok(())
    }

    /// Posts a non-blocking receive; it claims the first unclaimed matching message already
    /// here, or the first that arrives.
    pub(crate) fn post(&self, pattern: Pattern) -> SlotId {
        let matched = self.take_unexpected(&pattern);
        if let Some(m) = &matched {
            self.acknowledge(m); // a synchronous send from another process: it is matched
        }
        let mut q = self.queues.borrow_mut();
        let id = SlotId(q.next_slot);
        q.next_slot += 1;
        // a rendezvous taken now stays in its sender's buffer until this rank next waits or
        // polls (most posts are waited for at once, which then copies it straight in)
        q.unreleased |= matched
            .as_ref()
            .is_some_and(|m| m.message.data.is_borrowed());
        q.posted.push(Posted {
            id,
            pattern,
            matched,
            held: 0,
            direct: None,
            scope: 0,
        });
        id
    }

    // inlined into its callers as before cancellation needed the check below (out of line,
    // callgrind counted 190 more instructions per irecv + send + wait)
    #[inline(always)]
    fn take_slot(&self, id: SlotId) -> Option<Matched> {
        let mut q = self.queues.borrow_mut();
        let i = q.posted.iter().position(|p| p.id == id)?;
        if q.posted[i].matched.as_ref()?.message.data.is_withdrawn() {
            drop(q);
            return self.rematch_slot(id);
        }
        q.posted.remove(i).matched
    }

    /// The send whose message posted receive `id` holds was cancelled before the copy: the
    /// receive takes the next matching message instead, if one is here.
    #[cold]
    #[inline(never)]
    fn rematch_slot(&self, id: SlotId) -> Option<Matched> {
        let pattern = {
            let mut q = self.queues.borrow_mut();
            let p = q.posted.iter_mut().find(|p| p.id == id)?;
            p.matched = None;
            p.pattern
        };
        let next = self.take_unexpected(&pattern);
        if let Some(m) = &next {
            self.acknowledge(m);
        }
        let mut q = self.queues.borrow_mut();
        let i = q.posted.iter().position(|p| p.id == id)?;
        q.posted[i].matched = next;
        q.posted[i].matched.as_ref()?;
        q.posted.remove(i).matched
    }

    /// Withdraws the posted receive `id` if no message has matched it yet (what has arrived is
    /// filed first): MPI_Cancel of a receive. True if it was withdrawn.
    pub(crate) fn cancel_unmatched(&self, id: SlotId) -> Result<bool> {
        self.drain_ready()?;
        if let Some(cancelled) = self.cancel_direct_unmatched(id) {
            return Ok(cancelled);
        }
        let mut q = self.queues.borrow_mut();
        let Some(i) = q.posted.iter().position(|p| p.id == id) else {
            return Ok(false);
        };
        if q.posted[i].matched.is_some() {
            return Ok(false);
        }
        q.posted.remove(i);
        Ok(true)
    }

    /// Waits until the posted receive `id` has its message, and removes it.
    pub(crate) fn wait_slot(&self, id: SlotId) -> Result<SlotEnd> {
        self.check_live()?;
        if let Some(m) = self.take_slot(id) {
            return Ok(SlotEnd::Message(m));
        }
        if self.queues.borrow().direct_slots > 0 {
            if let Some(end) = self.wait_direct(id)? {
                return Ok(end);
            }
        }
        // held while this call runs (see `Posted::held`); a nested wait (a coroutine's) saves
        // and restores the outer one
        let outer = self.queues.borrow_mut().waited.replace(id);
        let got = loop {
            if let Some(m) = self.take_slot(id) {
                break Ok(m);
            }
            match self.pump(Waiting::Slot(id), None, false) {
                Ok(Some(m)) => self.put_back(m),
                Ok(None) => {}
                Err(e) => break Err(e),
            }
        };
        self.queues.borrow_mut().waited = outer;
        got.map(SlotEnd::Message)
    }

    /// The message of posted receive `id` if it has arrived (files what is in the mailbox first).
    pub(crate) fn test_slot(&self, id: SlotId) -> Result<Option<SlotEnd>> {
        self.check_live()?;
        self.hold([id], 1);
        let drained = self.drain_ready();
        self.hold([id], -1);
        drained?;
        if self.queues.borrow().direct_slots > 0 {
            if let Taken::Ended(end) = self.take_direct(id) {
                return Ok(Some(end));
            }
        }
        Ok(self.take_slot(id).map(SlotEnd::Message))
    }

    /// Waits for any one envelope to arrive and files it (used by `wait_any` between tests).
    pub(crate) fn wait_progress(&self) -> Result<()> {
        if let Some(m) = self.pump(Waiting::AnyRequest, None, false)? {
            self.put_back(m);
        }
        Ok(())
    }

    /// Withdraws a posted receive; a message it had claimed goes back to the unexpected queue.
    pub(crate) fn cancel_slot(&self, id: SlotId) {
        if self.queues.borrow().direct_slots > 0 && self.cancel_direct_slot(id) {
            return;
        }
        let removed = {
            let mut q = self.queues.borrow_mut();
            match q.posted.iter().position(|p| p.id == id) {
                Some(i) => q.posted.remove(i).matched,
                None => None,
            }
        };
        if let Some(m) = removed {
            self.put_back(m);
        }
    }

    /// Blocks until a rendezvous send completes (`done` returns true), making progress on this
    /// rank's own mailbox meanwhile. Rendezvous messages that reach this rank while it waits
    /// are copied out at once, so that ranks sending large messages to each other never wait on
    /// each other in a cycle.
    pub(crate) fn wait_send(&self, done: impl Fn() -> bool, waiting: Waiting<'_>) -> Result<()> {
        if done() {
            return Ok(());
        }
        self.release_all_borrowed();
        while !done() {
            self.check_live()?;
            if let Some((header, message)) = self.next_envelope(waiting)? {
                // a rendezvous offer that comes while this send waits is copied out, so that
                // two ranks sending to each other do not wait for each other; but once this
                // send is done (the offer of a reply, through a lane, can overtake the `Wake`
                // that says so) the receive that this rank is about to post copies it once
                let release_borrowed = !done();
                let unwanted = self.file(header, message, None, release_borrowed);
                debug_assert!(unwanted.is_none(), "no message is wanted here");
            }
        }
        Ok(())
    }

    fn release_all_borrowed(&self) {
        let mut q = self.queues.borrow_mut();
        let q = &mut *q;
        q.unexpected.iter_mut().for_each(release_unmatched);
        q.posted
            .iter_mut()
            .filter_map(|p| p.matched.as_mut())
            .for_each(release);
    }

    /// Called when the rank's program has returned: what it left behind (messages nobody
    /// received, receives never completed). Rendezvous senders still waiting on this rank are
    /// released with an error (their tickets drop).
    ///
    /// It first marks the rank finished (`Inbox::close`), so that a lane producer either pushes
    /// before the drain below looks (and the drain finds the message) or sees the mark; what is
    /// pushed after the drain stays in the lane until `Fabric::sweep_unreceived` counts it.
    pub(crate) fn finish(&self) -> Vec<Warning> {
        self.fabric.inbox(self.world_rank).close();
        // a cancelled send's message was never sent
        let unreceived = |h: &Header, m: &Message| {
            (!m.data.is_withdrawn()).then(|| self.fabric.unreceived(self.world_rank, h, m))
        };
        self.abandon_direct();
        let mut left = Vec::new();
        let mut q = self.queues.borrow_mut();
        for m in &q.unexpected {
            left.extend(unreceived(&m.header, &m.message));
        }
        for p in &q.posted {
            if let Some(m) = &p.matched {
                left.extend(unreceived(&m.header, &m.message));
            }
            left.push(Warning::IncompleteReceive {
                rank: self.world_rank,
                source: p.pattern.source.map(|s| s as usize),
                tag: p.pattern.tag,
                communicator: p.pattern.context / 2,
            });
        }
        while let Some(env) = self.try_next() {
            match env {
                Envelope::Msg(h, m) => left.extend(unreceived(&h, &m)),
                Envelope::Lane(lane) => self.adopt(lane),
                Envelope::Wake | Envelope::Abort => {}
            }
        }
        q.unexpected.clear();
        q.posted.clear();
        left
    }
}

/// As [`release`], for a message no receive has matched yet: a synchronous send's stays in the
/// sender's buffer, because its sender may return only once a receive matches it (MPI_Ssend),
/// and a payload still in MPI stays there for its grace (see [`Endpoint::queue`]).
fn release_unmatched(m: &mut Matched) {
    let stays = match &m.message.data {
        Data::Borrowed(t) => t.synchronous(),
        data => data.is_remote(),
    };
    if !stays {
        release(m);
    }
}

/// Turns a rendezvous message into an owned copy, releasing its sender.
fn release(m: &mut Matched) {
    let msg = &mut m.message;
    // a derived-datatype rendezvous is packed into an owned buffer
    if let Data::Typed(t) = &mut msg.data {
        t.release();
        return;
    }
    if let Data::Borrowed(_) = msg.data {
        let Data::Borrowed(ticket) = std::mem::replace(&mut msg.data, Data::Empty) else {
            unreachable!("checked just above")
        };
        if let Some(v) = ticket.into_owned(msg.elem, msg.count) {
            msg.data = Data::Owned(v);
        }
        // else the sender withdrew (the run is aborting): the message stays Empty
    }
}

/// The names of communicators (`comm/create.rs`).
impl Endpoint {
    /// The name given to communicator `id`, if one was.
    pub(crate) fn comm_name(&self, id: u32) -> Option<Rc<str>> {
        self.names.borrow().get(&id).cloned()
    }

    /// Gives communicator `id` the name `name`.
    pub(crate) fn set_comm_name(&self, id: u32, name: &str) {
        self.names.borrow_mut().insert(id, name.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn an_envelope_stays_small() {
        // every message is moved into and out of a channel slot of this size, and through the
        // matching code as a `Matched`: up to 128 bytes a move is a few vector moves, above it
        // a call to memcpy (and a channel block, zeroed when allocated, holds 31 of them)
        let (envelope, matched) = (size_of::<Envelope>(), size_of::<Matched>());
        println!("envelope: {envelope} bytes, header {}", size_of::<Header>());
        assert!(envelope <= 128, "an envelope grew to {envelope} bytes");
        assert!(matched <= 128, "a matched message grew to {matched} bytes");
        // a small message and a lane slot's state share one cache line (`lane.rs` checks it
        // too, when it is compiled)
        let small = size_of::<SmallMessage>();
        assert!(small <= 56, "a small message grew to {small} bytes");
    }
}
