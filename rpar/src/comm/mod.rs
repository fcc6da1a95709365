//! [`Comm`]: a communicator — a group of ranks with an isolated message space — and
//! point-to-point messaging on it (blocking, non-blocking, scoped), probe, split and dup;
//! [`Group`]s and the communicators made from them (`group.rs`, `create.rs`); attributes
//! cached on them (`attr.rs`).
//!
//! Depends on `transport` and `datatype`.

mod attr;
mod buffer;
mod create;
mod delivery;
mod group;
mod hints;
pub(crate) mod idup;
mod inter;
mod matched;
pub(crate) mod modes;
mod nonblocking;
mod p2p;
mod packed;
mod persistent;
mod request;
mod scope;
mod split;
mod typed;

pub use attr::Keyval;
pub use buffer::{Buffer, BufferMut, RecvBuf, SendBuf};
pub use create::{SplitType, MAX_OBJECT_NAME};
pub use group::{Comparison, Group};
pub use inter::{
    InterAllgatherArgs, InterAlltoallArgs, InterComm, InterGatherArgs, InterReduceArgs,
    InterReduceScatterArgs, InterScatterArgs, InterScope, ROOT,
};
pub use matched::MatchedMessage;
pub use modes::{buffer_attach, buffer_detach, ModeSends, SendMode, BSEND_OVERHEAD};
pub use packed::Packed;
pub use persistent::{start_all, Persistent};
pub use request::{test_all, test_any, test_some, wait_all, wait_any, wait_some, Request, TestAny};
pub use scope::Scope;

use crate::collective::Label;
use crate::trace::{RankTrace, Span, SpanArgs};
use crate::transport::{Arena, CallKey, CollectiveCall, Endpoint, Matched, NativeComm};
use crate::{Error, Result};
use std::any::TypeId;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// Receive from any source (MPI_ANY_SOURCE): the `source` of a receive or probe that takes a
/// message from whichever rank sent it; its [`Status`] says which. A send to it is
/// [`Error::RankOutOfRange`].
///
/// ```
/// let got = rpar::run(3, |world| {
///     if world.rank() > 0 {
///         world.send(&(10 * world.rank()), 0, 0)?;
///         return Ok(vec![]);
///     }
///     let mut from = Vec::new();
///     for _ in 1..world.size() {
///         let (v, st) = world.recv::<usize>(rpar::ANY_SOURCE, 0)?;
///         assert_eq!(v, [10 * st.source]);
///         from.push(st.source);
///     }
///     assert!(matches!(
///         world.send(&1u8, rpar::ANY_SOURCE, 0),
///         Err(rpar::Error::RankOutOfRange { size: 3, .. })
///     ));
///     from.sort();
///     Ok(from)
/// })?;
/// assert_eq!(got[0], [1, 2]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub const ANY_SOURCE: usize = usize::MAX;
/// The null peer (MPI_PROC_NULL): a send to it or a receive or probe from it completes at
/// once and moves nothing, so code at the edge of a grid needs no special case. A receive from
/// it leaves its buffer as it was and returns [`Status::null`] (source `PROC_NULL`, tag
/// [`ANY_TAG`], count 0); a probe finds such an empty message. [`CartComm::shift`] returns it
/// off the edge of a non-periodic dim. Tags are still checked. It is not a rank: a collective's
/// root of `PROC_NULL` is [`Error::RankOutOfRange`].
///
/// [`CartComm::shift`]: crate::CartComm::shift
///
/// ```
/// let got = rpar::run(3, |world| {
///     let (r, p) = (world.rank(), world.size());
///     // a line, not a ring: the ends have one neighbour
///     let left = if r == 0 { rpar::PROC_NULL } else { r - 1 };
///     let right = if r + 1 == p { rpar::PROC_NULL } else { r + 1 };
///     let mut from_left = u32::MAX; // stays as it is at rank 0
///     let st = world.sendrecv(&(r as u32), right, 0, &mut from_left, left, 0)?;
///     assert_eq!(st.source, left);
///     if r == 0 {
///         assert_eq!(st, rpar::Status::null());
///     }
///     Ok(from_left)
/// })?;
/// assert_eq!(got, [u32::MAX, 0, 1]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub const PROC_NULL: usize = usize::MAX - 1;
/// Receive with any tag (MPI_ANY_TAG): the `tag` of a receive or probe that takes a message
/// whatever its tag; its [`Status`] says which. A send with it is [`Error::InvalidTag`].
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         world.send(&1u8, 1, 7)?;
///         assert_eq!(
///             world.send(&1u8, 1, rpar::ANY_TAG),
///             Err(rpar::Error::InvalidTag { tag: -1, max: rpar::TAG_UB })
///         );
///     } else {
///         let (_, st) = world.recv::<u8>(0, rpar::ANY_TAG)?;
///         assert_eq!(st.tag, 7);
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub const ANY_TAG: i32 = -1;
/// The largest tag a user may send with (MPI_TAG_UB, here a constant rather than an attribute of
/// the communicator): sends take tags `0..=TAG_UB`, and a negative one is [`Error::InvalidTag`].
/// Collectives use a message space of their own, so every tag is free for the program.
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         world.send(&1u8, 1, rpar::TAG_UB)?;
///         let err = world.send(&1u8, 1, -5).unwrap_err();
///         assert_eq!(err, rpar::Error::InvalidTag { tag: -5, max: rpar::TAG_UB });
///     } else {
///         assert_eq!(world.recv::<u8>(0, rpar::TAG_UB)?.1.tag, i32::MAX);
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub const TAG_UB: i32 = i32::MAX;

/// The [`Status::count`] of a receive that got a part of an element (MPI_UNDEFINED, what
/// MPI_Get_count returns then); [`Status::get_count`] gives `None` for it.
///
/// ```
/// use rpar::{Datatype, TypeMap};
/// let triple = TypeMap::contiguous(3, &u8::type_map())?.commit();
/// let counts = rpar::run(2, |world| {
///     if world.rank() == 0 {
///         world.send(&[1u8, 2, 3, 4][..], 1, 0)?;
///         return Ok(0);
///     }
///     let mut buf = [0u8; 6];
///     Ok(world.recv_into(rpar::Typed::new(&mut buf, &triple, 2), 0, 0)?.count) // 4 bytes: 1 1/3 triples
/// })?;
/// assert_eq!(counts[1], rpar::UNDEFINED);
/// # Ok::<(), rpar::Error>(())
/// ```
pub const UNDEFINED: usize = usize::MAX;

/// What a completed receive (or a probe) tells about its message (MPI_Status; `count` is what
/// MPI_Get_count would say). MPI's `MPI_ERROR` field has no counterpart: errors are returned.
///
/// The status of a completed send request says this rank, the send's tag and its count.
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         world.send(&[1u32, 2, 3][..], 1, 4)?;
///     } else {
///         let mut buf = [0u32; 8];
///         let st = world.recv_into(&mut buf[..], rpar::ANY_SOURCE, rpar::ANY_TAG)?;
///         assert_eq!((st.source, st.tag, st.count), (0, 4, 3));
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Status {
    /// The sender's rank in the communicator (MPI_SOURCE).
    pub source: usize,
    /// The message's tag (MPI_TAG).
    pub tag: i32,
    /// Number of elements received, of the receive's element type (MPI_Get_count); for a probe,
    /// of the sender's element type. [`UNDEFINED`] where MPI_Get_count gives MPI_UNDEFINED: a
    /// typed receive ([`Comm::recv_into`] of a [`Typed`](crate::Typed) view) that got a number of bytes that is not a whole
    /// number of its elements; [`Status::get_count`] says the same as an `Option`.
    pub count: usize,
    /// Whether the operation was cancelled ([`Status::is_cancelled`]).
    cancelled: bool,
    /// For a typed receive of a part of an element (`count` [`UNDEFINED`]): the packed bytes
    /// received, for [`Status::get_elements`].
    bytes: usize,
}

impl Status {
    /// The status of a receive from [`PROC_NULL`] (MPI's empty status): source `PROC_NULL`,
    /// tag [`ANY_TAG`], count 0.
    pub const fn null() -> Status {
        Status::of(PROC_NULL, ANY_TAG, 0)
    }

    /// The status of an operation with `source`, `tag` and `count` that was not cancelled.
    #[inline]
    pub(crate) const fn of(source: usize, tag: i32, count: usize) -> Status {
        Status {
            source,
            tag,
            count,
            cancelled: false,
            bytes: 0,
        }
    }

    /// MPI's empty status (source [`ANY_SOURCE`], tag [`ANY_TAG`], count 0): that of an
    /// inactive request, and of a completed collective request.
    pub(crate) const fn empty() -> Status {
        Status::of(ANY_SOURCE, ANY_TAG, 0)
    }

    /// The status of a cancelled operation (MPI's: source and tag undefined, here those of
    /// [`Status::empty`]).
    pub(crate) const fn cancelled() -> Status {
        Status {
            cancelled: true,
            ..Status::empty()
        }
    }

    /// The status of a completed send by rank `source` to `dest` of `count` elements with
    /// `tag`: [`Status::null`] for a send to [`PROC_NULL`].
    pub(crate) const fn of_send(source: usize, dest: usize, tag: i32, count: usize) -> Status {
        if dest == PROC_NULL {
            Status::null()
        } else {
            Status::of(source, tag, count)
        }
    }

    /// Whether the operation this status completes was cancelled by [`Request::cancel`]
    /// (MPI_Test_cancelled): then nothing was received, or the message was not sent.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// The number of basic elements received (MPI_Get_elements), for a receive of elements of
    /// `ty` (the receive's type: for a plain receive of `T`, `T`'s committed map): unlike
    /// [`Status::count`] it counts the basic elements of a part of an element too.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let triple = TypeMap::contiguous(3, &f64::type_map())?.commit();
    /// let got = rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         world.send(&[1.0f64; 6][..], 1, 0)?; // two triples
    ///         world.send(&[2.0f64; 4][..], 1, 0)?; // a triple and a third
    ///         return Ok((0, 0, 0));
    ///     }
    ///     let mut buf = [0.0f64; 6];
    ///     let two = world.recv_into(rpar::Typed::new(&mut buf[..], &triple, 2), 0, 0)?;
    ///     let part = world.recv_into(rpar::Typed::new(&mut buf[..], &triple, 2), 0, 0)?;
    ///     Ok((two.get_elements(&triple), part.count, part.get_elements(&triple)))
    /// })?;
    /// assert_eq!(got[1], (6, rpar::UNDEFINED, 4)); // MPI_Get_count would say MPI_UNDEFINED
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn get_elements(&self, ty: &crate::CommittedType) -> usize {
        let c = &*ty.inner;
        let per_element: usize = c.signature.iter().map(|&(_, n)| n).sum();
        if self.count != UNDEFINED {
            return self.count * per_element;
        }
        let (whole, mut rest) = (self.bytes / c.size.max(1), self.bytes % c.size.max(1));
        let mut basic = whole * per_element;
        for &(b, n) in &c.signature {
            let taken = (rest / b.size()).min(n);
            basic += taken;
            rest -= taken * b.size();
            if taken < n {
                break;
            }
        }
        basic
    }

    /// The number of elements received, or `None` if the received bytes are not a whole
    /// number of elements of the receive's type (MPI_Get_count, with `None` for
    /// MPI_UNDEFINED). Only a typed receive ([`Comm::recv_into`] of a [`Typed`](crate::Typed) view) can get a part of an
    /// element: a plain one takes whole elements or refuses the message.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let pair = TypeMap::contiguous(2, &i32::type_map())?.commit();
    /// let counts = rpar::run(2, |world| {
    ///     if world.rank() == 0 {
    ///         world.send(&[1, 2, 3][..], 1, 0)?; // three i32: one pair and a half
    ///         world.send(&[4, 5][..], 1, 0)?;
    ///         return Ok(vec![]);
    ///     }
    ///     let mut buf = [0i32; 4];
    ///     let half = world.recv_into(rpar::Typed::new(&mut buf, &pair, 2), 0, 0)?;
    ///     assert_eq!(half.count, rpar::UNDEFINED);
    ///     let whole = world.recv_into(rpar::Typed::new(&mut buf, &pair, 2), 0, 0)?;
    ///     Ok(vec![half.get_count(), whole.get_count()])
    /// })?;
    /// assert_eq!(counts[1], [None, Some(1)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn get_count(&self) -> Option<usize> {
        (self.count != UNDEFINED).then_some(self.count)
    }
}

/// A probed message: its status and its size in bytes (MPI_Probe + MPI_Get_count on MPI_BYTE),
/// returned by [`Comm::probe`] and [`Comm::iprobe`]. The message stays queued.
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         world.send(&[[1.0f32, 2.0]; 3][..], 1, 0)?;
///     } else {
///         let p = world.probe(0, 0)?;
///         // three elements of the sender's type, [f32; 2]: 24 bytes
///         assert_eq!((p.status.count, p.bytes), (3, 24));
///         let (v, st) = world.recv::<f32>(0, 0)?; // received as f32: 6 elements
///         assert_eq!((v.len(), st.count), (6, 6));
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probed {
    /// Source, tag, and count in the sender's elements.
    pub status: Status,
    /// Size of the message in bytes.
    pub bytes: usize,
}

impl Probed {
    /// What a probe of [`PROC_NULL`] finds: [`Status::null`], 0 bytes.
    pub(crate) const fn null() -> Probed {
        Probed {
            status: Status::null(),
            bytes: 0,
        }
    }
}

/// The topology of a communicator (MPI_Topo_test's answer), as [`TopoKind::of`] gives it for
/// a [`Comm`], [`CartComm`](crate::CartComm), [`GraphComm`](crate::GraphComm) or
/// [`DistGraphComm`](crate::DistGraphComm).
///
/// ```
/// use rpar::TopoKind;
/// rpar::run(2, |world| {
///     let grid = rpar::CartComm::create(&world, [2], [true], false)?.unwrap();
///     let graph = rpar::GraphComm::from_adjacency(&world, &[[1], [0]], false)?.unwrap();
///     let dist = rpar::DistGraphComm::dist_graph_create_adjacent(&world, &[], &[], false)?;
///     let kinds = [TopoKind::of(&world), TopoKind::of(&grid), TopoKind::of(&graph), TopoKind::of(&dist)];
///     assert_eq!(kinds, [TopoKind::None, TopoKind::Cart, TopoKind::Graph, TopoKind::DistGraph]);
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TopoKind {
    /// No topology (MPI_UNDEFINED): a plain [`Comm`].
    None,
    /// A Cartesian grid (MPI_CART): [`CartComm`](crate::CartComm).
    Cart,
    /// A graph (MPI_GRAPH): [`GraphComm`](crate::GraphComm).
    Graph,
    /// A distributed graph (MPI_DIST_GRAPH): [`DistGraphComm`](crate::DistGraphComm).
    DistGraph,
}

/// A communicator: the ranks of a group and a message space of their own (MPI_Comm).
///
/// Each rank's closure gets the world communicator; [`Comm::split`] and [`Comm::dup`] make
/// others. Messages on one communicator never match receives on another.
///
/// ```
/// let ranks = rpar::run(3, |world| Ok((world.rank(), world.size())))?;
/// assert_eq!(ranks, vec![(0, 3), (1, 3), (2, 3)]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub struct Comm {
    ep: Rc<Endpoint>,
    /// World rank of each rank of this communicator.
    group: Arc<[usize]>,
    rank: usize,
    /// Communicator id: point-to-point traffic uses context 2 id, collectives 2 id + 1.
    id: u32,
    /// Number of collective calls made on this communicator so far.
    coll_seq: std::cell::Cell<u32>,
    /// The algorithm of each collective family for calls made now (`Comm::using`).
    pub(crate) choices: std::cell::Cell<crate::collective::Choices>,
    /// The topology it was made for (MPI_Topo_test), set by the topology constructors.
    topology: std::cell::Cell<TopoKind>,
    /// The shared-memory arena of the communicator's ranks, once a collective has asked for it.
    arena: std::cell::OnceCell<Arc<Arena>>,
    /// On the MPI transport: the MPI communicator that mirrors this one, for MPI's own
    /// collectives (always `None` in-process; without the `mpi` feature it has no values).
    native: Option<Rc<NativeComm>>,
    /// Its info hints (`Comm::set_info`).
    hints: std::cell::Cell<hints::Hints>,
    /// This rank's attributes on it (`Comm::set_attr`).
    attributes: attr::Attributes,
}

impl fmt::Debug for Comm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Comm")
            .field("rank", &self.rank)
            .field("size", &self.group.len())
            .field("id", &self.id)
            .finish()
    }
}

/// What a collective call is, as every rank must agree on it (see [`CollectiveCall`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    pub(crate) operation: &'static str,
    pub(crate) root: Option<usize>,
    pub(crate) reduction: Option<&'static str>,
    pub(crate) bytes: Option<usize>,
}

impl Call {
    /// A call with no root, operator or common size.
    pub(crate) fn new(operation: &'static str) -> Self {
        Call {
            operation,
            root: None,
            reduction: None,
            bytes: None,
        }
    }

    /// With a root.
    pub(crate) fn root(self, root: usize) -> Self {
        Call {
            root: Some(root),
            ..self
        }
    }

    /// With a reduction operator (named by its type; shortened only where it is shown, since
    /// this runs on every reduction call).
    pub(crate) fn reduction<O>(self) -> Self {
        Call {
            reduction: Some(std::any::type_name::<O>()),
            ..self
        }
    }

    /// With the bytes every rank contributes alike.
    pub(crate) fn bytes(self, bytes: usize) -> Self {
        Call {
            bytes: Some(bytes),
            ..self
        }
    }
}

/// What a traced call is about: its peer, tag and bytes, each if known.
pub(crate) type Subject = (Option<usize>, Option<i32>, Option<usize>);

/// A call about several requests, or whose subject is known only at its end.
pub(crate) const UNKNOWN: Subject = (None, None, None);

/// Whether a traced call receives one message, which then gives its span the message's
/// source, tag and bytes (see `RankTrace::receive_span`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Receives {
    Nothing,
    OneMessage,
}

/// A trace span on `ep` for a call on communicator `communicator` (nothing when tracing is
/// off). Only the test is inlined: opening a span is out of line, so that the calls it wraps
/// are compiled as they are without tracing.
#[inline]
pub(crate) fn span_on<'e>(
    ep: &'e Endpoint,
    name: &'static str,
    communicator: u32,
    subject: Subject,
    receives: Receives,
) -> Option<Span<'e>> {
    let trace = ep.trace()?;
    Some(open_span(trace, name, communicator, subject, receives))
}

/// Ends the span of a poll (`test`, `iprobe`): not recorded if the poll found nothing, so that
/// a polling loop leaves one span, for the poll that found something (which `describe` gives
/// the span).
#[inline]
pub(crate) fn end_poll<T>(
    span: Option<Span<'_>>,
    polled: &Result<Option<T>>,
    describe: impl FnOnce(&mut Span<'_>, &T),
) {
    if let Some(mut s) = span {
        match polled {
            Ok(None) => s.discard(),
            Ok(Some(found)) => describe(&mut s, found),
            Err(_) => {}
        }
    }
}

#[cold]
#[inline(never)]
fn open_span<'a>(
    trace: &'a RankTrace,
    name: &'static str,
    communicator: u32,
    (peer, tag, bytes): Subject,
    receives: Receives,
) -> Span<'a> {
    let args = SpanArgs {
        peer,
        tag,
        bytes,
        algorithm: None,
        communicator,
    };
    match receives {
        Receives::Nothing => trace.span(name, args),
        Receives::OneMessage => trace.receive_span(name, args),
    }
}

/// A message sent in ready mode (MPI_Rsend) must find its receive posted when it arrives; one
/// that had to wait in the unexpected queue is reported by the receive that takes it. Certain:
/// a receive posted (or running) when the message arrived always clears the mark, so a correct
/// program is never reported; a late receive is missed only if it was posted before this rank
/// looked at its mailbox again.
#[inline]
pub(crate) fn check_ready(m: &Matched) -> Result<()> {
    if m.header.ready() {
        return Err(ready_too_early(m));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn ready_too_early(m: &Matched) -> Error {
    Error::invalid(
        "a receive of a ready-mode send",
        format!(
            "rank {} sent with tag {} in ready mode (MPI_Rsend), which requires the receive to \
             be posted first, but no receive was posted when it arrived: the program is \
             erroneous under MPI",
            m.header.source, m.header.tag
        ),
    )
}

/// A wildcard source or tag as a span's peer or tag: none.
pub(crate) fn known(source: usize, tag: i32) -> (Option<usize>, Option<i32>) {
    (
        (source != ANY_SOURCE).then_some(source),
        (tag != ANY_TAG).then_some(tag),
    )
}

impl Comm {
    /// The world communicator of the rank of `ep`; `group` is `0..size` (one allocation that all
    /// the ranks of a run share: at 16 000 ranks a copy each would take 2 GB).
    pub(crate) fn world(
        ep: Rc<Endpoint>,
        group: Arc<[usize]>,
        native: Option<Rc<NativeComm>>,
    ) -> Self {
        let rank = ep.world_rank();
        Comm {
            ep,
            group,
            rank,
            id: 0,
            coll_seq: Default::default(),
            choices: Default::default(),
            topology: std::cell::Cell::new(TopoKind::None),
            arena: Default::default(),
            native,
            hints: Default::default(),
            attributes: Default::default(),
        }
    }

    /// The topology this communicator was made for.
    #[inline]
    pub(crate) fn topology(&self) -> TopoKind {
        self.topology.get()
    }

    /// Marks this communicator as made for a topology of kind `kind` (the topology
    /// constructors).
    pub(crate) fn set_topology(&self, kind: TopoKind) {
        self.topology.set(kind);
    }

    /// The MPI communicator that mirrors this one, on the MPI transport.
    #[inline]
    pub(crate) fn native(&self) -> Option<&NativeComm> {
        self.native.as_deref()
    }

    /// The communicator's id (0 is the world), as errors and traces name it.
    #[inline]
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// This rank's number in the communicator, `0..size()` (MPI_Comm_rank). Ranks are numbered
    /// per communicator: after a [`Comm::split`] a rank usually has another number.
    ///
    /// ```
    /// let ranks = rpar::run(4, |world| {
    ///     let pair = world.split(Some((world.rank() / 2) as u32), 0)?.unwrap();
    ///     Ok((world.rank(), pair.rank()))
    /// })?;
    /// assert_eq!(ranks, [(0, 0), (1, 1), (2, 0), (3, 1)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks in the communicator (MPI_Comm_size).
    ///
    /// ```
    /// let sizes = rpar::run(5, |world| {
    ///     let half = world.split(Some((world.rank() % 2) as u32), 0)?.unwrap();
    ///     Ok((world.size(), half.size()))
    /// })?;
    /// assert_eq!(sizes, [(5, 3), (5, 2), (5, 3), (5, 2), (5, 3)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn size(&self) -> usize {
        self.group.len()
    }

    /// The world rank of rank `rank` of this communicator (see [`Group::world_rank_of`]).
    pub(crate) fn world_rank_of(&self, rank: usize) -> Result<usize> {
        self.check_rank(rank)?;
        Ok(self.group[rank])
    }

    /// The shared memory of this communicator's ranks, for the shared-memory collective
    /// algorithms: in-process only (`None` on the MPI transport, where ranks are processes, and
    /// under a simulation, whose network model times messages).
    pub(crate) fn arena(&self) -> Option<&Arena> {
        if self.ep.wire().is_some() || self.ep.trace().is_some_and(RankTrace::simulating) {
            return None;
        }
        let context = self.collective_context();
        Some(
            self.arena
                .get_or_init(|| self.ep.fabric().arena(context, &self.group)),
        )
    }

    #[inline]
    pub(crate) fn p2p_context(&self) -> u32 {
        2 * self.id
    }

    #[inline]
    pub(crate) fn collective_context(&self) -> u32 {
        2 * self.id + 1
    }

    #[inline]
    pub(crate) fn check_rank(&self, rank: usize) -> Result<()> {
        if rank < self.group.len() {
            Ok(())
        } else {
            Err(Error::RankOutOfRange {
                rank,
                size: self.group.len(),
            })
        }
    }

    pub(crate) fn endpoint(&self) -> &Rc<Endpoint> {
        &self.ep
    }

    /// A trace span for a call on this communicator with `peer`, `tag` and `bytes` (nothing
    /// when tracing is off). As [`span_on`], but the hot paths' form: everything past the test
    /// is out of line (through [`span_on`] the blocking send+recv ran 11 instructions more with
    /// tracing off, by callgrind: bench/trace_overhead.sh).
    #[inline]
    pub(crate) fn span(
        &self,
        name: &'static str,
        peer: Option<usize>,
        tag: Option<i32>,
        bytes: usize,
    ) -> Option<Span<'_>> {
        let trace = self.ep.trace()?;
        Some(self.open_span(trace, name, (peer, tag, bytes)))
    }

    #[cold]
    #[inline(never)]
    fn open_span<'a>(
        &self,
        trace: &'a RankTrace,
        name: &'static str,
        (peer, tag, bytes): (Option<usize>, Option<i32>, usize),
    ) -> Span<'a> {
        open_span(
            trace,
            name,
            self.id,
            (peer, tag, Some(bytes)),
            Receives::Nothing,
        )
    }

    /// The span of a call that receives one message from `source` with `tag` (wildcards
    /// allowed): the message gives it its peer, tag and bytes when it arrives. In the hot
    /// paths' form, as [`Comm::span`].
    #[inline]
    pub(crate) fn receive_span(
        &self,
        name: &'static str,
        source: usize,
        tag: i32,
    ) -> Option<Span<'_>> {
        let trace = self.ep.trace()?;
        Some(self.open_receive_span(trace, name, source, tag))
    }

    #[cold]
    #[inline(never)]
    fn open_receive_span<'a>(
        &self,
        trace: &'a RankTrace,
        name: &'static str,
        source: usize,
        tag: i32,
    ) -> Span<'a> {
        let (peer, tag) = known(source, tag);
        open_span(
            trace,
            name,
            self.id,
            (peer, tag, None),
            Receives::OneMessage,
        )
    }

    /// Runs `f` as one collective call: traced as a span named `operation` with its algorithm
    /// (the one asked for until `f` reports the one it runs: `Channel::runs`), and checked
    /// against the other ranks' calls (see [`Comm::in_collective`]).
    pub(crate) fn collective<R, A: Label>(
        &self,
        call: Call,
        algorithm: &A,
        f: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        let _span = self
            .ep
            .trace()
            .map(|t| self.open_collective_span(t, &call, *algorithm));
        self.in_collective(call, algorithm.may_run_mpi(), f)
    }

    #[cold]
    #[inline(never)]
    fn open_collective_span<'a, A: Label>(
        &self,
        trace: &'a RankTrace,
        call: &Call,
        algorithm: A,
    ) -> Span<'a> {
        let args = SpanArgs {
            peer: call.root,
            tag: None,
            bytes: call.bytes,
            algorithm: Some(algorithm.label()),
            communicator: self.id,
        };
        trace.collective_span(call.operation, args, TypeId::of::<A::Family>())
    }

    /// Takes note of a matched message: records it in the trace (the head of its flow arrow)
    /// and, on the collective context, checks that the sender is in the same collective call.
    #[inline]
    pub(crate) fn accept_arrival(&self, m: &Matched) -> Result<()> {
        self.ep.flow_in(m);
        self.ep.acknowledge(m); // a synchronous send from another process: it is matched
        check_ready(m)?;
        if let Some(theirs) = m.header.call {
            let source = m.header.source as usize;
            match self.ep.collective() {
                Some(mine) if CallKey::from(&mine) == theirs => {}
                Some(mine) => {
                    let theirs = theirs.call(source);
                    return Err(self.ep.collective_mismatch(self.id, mine, (source, theirs)));
                }
                None => {
                    return Err(Error::invalid(
                        "a collective",
                        format!(
                            "a message of {} arrived outside any collective call",
                            theirs.call(source)
                        ),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Runs `f` as the collective call `call`. Messages it sends carry the call, and a message
    /// of a different call from another rank is an [`Error::CollectiveMismatch`] (on every rank:
    /// the run aborts with it). On the MPI transport the call is also folded into the
    /// processes' digest of their calls, compared at the end of the run (a rank that made more
    /// calls, or one nobody received from); a call that `may_run_mpi` (whose messages, MPI's
    /// own, carry nothing of rpar's) counts towards the periodic comparison before it runs.
    pub(crate) fn in_collective<R>(
        &self,
        call: Call,
        may_run_mpi: bool,
        f: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        let Call {
            operation,
            root,
            reduction,
            bytes,
        } = call;
        if self.ep.collective().is_some() {
            // a collective built on another (e.g. an in-place form calling the plain one, which
            // some ranks do and others not): it is part of the outer call
            return f();
        }
        let seq = self.coll_seq.get();
        self.coll_seq.set(seq.wrapping_add(1));
        let call = CollectiveCall {
            rank: self.rank,
            seq,
            operation,
            root,
            reduction,
            bytes,
        };
        if let Some(native) = self.native() {
            native
                .note_call(&call, self.id, may_run_mpi)
                .map_err(|e| self.ep.collective_failure(e))?;
        }
        // (no collective call is in progress here: see above)
        self.ep.set_collective(Some(call));
        let r = f();
        self.ep.completed_collective(self.id, call);
        r
    }
}
