//! Message classes: a header once per kind of message, then the bytes alone.
//!
//! Most messages a process sends another repeat the header of an earlier one but for the count
//! (a ping-pong, a halo exchange, a stream of blocks): same communicator context, source, tag,
//! mode and element type. The sender numbers each such combination per destination, a
//! **class**; the first message of a class carries the full header and the class's number, and
//! every later one is its packed payload alone, on the MPI tag [`tag_of`] its number (the
//! user's buffer itself when large and gap-free). The receiver keeps each source's classes and
//! rebuilds the header from the class, the count from MPI's byte count. MPI keeps a pair's
//! messages in order for any receive that matches them all, which the receiver's probe on any
//! tag is, so a class is always known before its first bare message is probed.
//!
//! A message of a collective call is classed by its call's kind as well (operation, root,
//! reduction, bytes: everything ranks compare but the call's sequence number), and its bare
//! messages carry the sequence number after the payload ([`SEQ_BYTES`]): the receiver rebuilds
//! the whole call and compares it with its own as it would a full header's, so a bare message
//! of another call is a mismatch as certainly. Only small ones go bare
//! ([`MOST_BARE_CALL_BYTES`]: packed with the number, one `MPI_Send`; a larger one's header is
//! a small part of it). A direct class of a collective call's messages is received by MPI's
//! matching into a staging buffer, the number checked there (`direct.rs`). What follows of
//! channels holds of [`Stream`]s: on a collective context a channel carries one stream per kind
//! of call (an algorithm's tag serves every kind), and each kind has a direct class of its own.
//!
//! Messages whose headers say something of their own — a trace's flow id, a synchronous send's
//! number — and elements of no bytes (no count to recover) always travel with the full header.
//!
//! A destination has at most [`MOST_CLASSES`] classes at a time (a program that gives every
//! message a tag of its own would otherwise grow both tables without end); once they are all
//! taken, a new combination takes the number of the oldest, in turn, and its full header
//! redefines that number at the receiver — which sees the redefinition after every bare message
//! of the old class and before every one of the new, by the same ordering.
//!
//! **Direct classes.** The first class of a matching channel (context, source, tag) to a
//! destination is *direct* (unless it is a ready-mode one, or the destination already has
//! [`MOST_DIRECT`]): its defining header says so, and its count is the class's **bound**. While
//! it lives, every message of that channel to that destination is a bare message of it with 1
//! to `bound` elements. So a receiver that knows the class, has nothing of the channel queued
//! and no posted receive that could take it first may post `MPI_Irecv` on the class's tag
//! straight into a receive buffer of at least `bound` elements of the class's type: MPI's own
//! matching gives it the channel's next message, which fits (`Wire::recv_direct`). Any other
//! message on the channel (another type or mode, more elements than the bound, none, a header
//! of its own) first **retires** the direct class: the sender sends an empty message on its tag
//! (a *marker*: no bare message of a direct class is empty), which ends a receive posted there
//! (its buffer untouched, it goes the ordinary way) or, probed, tells the receiver that the
//! class is gone. A class retired because the count grew is followed by a direct class of the
//! larger bound; one whose messages have all been far below its bound for a while
//! ([`SHRINK_AFTER`] in a row of at most a [`SHRINK_RATIO`]th of it) is followed by one of the
//! smaller bound, so that a receive into a buffer sized for them takes the direct path again (a
//! channel changes its bound at most [`MOST_GROWTHS`] times). Any other retirement leaves the
//! channel without a direct class for good. The number of a live direct class is never taken by
//! another class.
//!
//! A class is known by its **id**: its number, and for a direct class the number's generation
//! (the how-manieth direct class to take that number, from 1 to as many as MPI's tags allow —
//! 32767 on MPICH and Open MPI, at least [`FEWEST_GENERATIONS`] — then again from 1), which
//! gives its bare messages tags of their own ([`tag_of`]). A receiver may post several direct
//! receives of one channel (`Endpoint::post_direct`); the marker ends the first that is still
//! waiting, and the receiver cancels the ones behind it as soon as it sees that; until then they
//! wait on tags that no later class of that number uses before the number has gone through all
//! its generations.

use super::sends::SMALL_BYTES;
use super::stand_ins::StandIn;
use crate::datatype::Compiled;
use crate::transport::endpoint::CallKind;
use crate::transport::{CallKey, Header};
use rustc_hash::FxHashMap as HashMap;
use std::cell::Cell;
use std::collections::VecDeque;

/// The MPI tag of the first class's bare messages on the link's communicator; class `n` (from
/// 1) travels on `FIRST_CLASS_TAG + n - 1`.
const FIRST_CLASS_TAG: i32 = 16;

/// The bytes after the payload of a bare message of a collective call: the call's sequence
/// number, little-endian (the rest of the call is its class's).
pub(super) const SEQ_BYTES: usize = 4;

/// The most payload bytes of a message of a collective call that goes bare: with its sequence
/// number, at most what one `MPI_Send` from the link's buffer takes ([`SMALL_BYTES`]).
const MOST_BARE_CALL_BYTES: usize = SMALL_BYTES - SEQ_BYTES;

/// The most classes a process keeps per destination (and per source): their tables take about
/// 100 bytes a class on each side.
pub(super) const MOST_CLASSES: u32 = 256;

/// The most live direct classes a process has per destination (and at most half of its
/// classes: a new class takes a number that is not a live direct class's). A new direct class
/// beyond them retires the oldest live one, whose channel then has none for good: each
/// channel is evicted at most once, so channels that take turns never evict each other again.
const MOST_DIRECT: u32 = 64;

/// How often a channel's direct class may be retired because a message had more elements than
/// its bound (or its messages stayed far below it) and be followed by one of another bound:
/// each costs a marker and a header. A channel whose sizes keep swinging then stays plain.
const MOST_GROWTHS: u8 = 16;

/// A direct class whose last this many messages each had at most a [`SHRINK_RATIO`]th of its
/// bound is followed by one bounded by the largest of them (at the next message of that size).
const SHRINK_AFTER: u32 = 32;

/// See [`SHRINK_AFTER`].
const SHRINK_RATIO: usize = 4;

/// How many of the last keys sent to a destination a sender finds without hashing.
const RECENT: usize = 4;

/// The most streams whose direct history a process keeps per destination; past it, a stream
/// it has no history of gets no direct class (a program that gives every message a tag of its
/// own would otherwise grow the table without end).
const MOST_REMEMBERED: usize = 4096;

/// The bit of a defining header's class field that says the class is direct.
const DIRECT_BIT: u32 = 1 << 31;

/// The fewest generations a class number has while it names direct classes: the `g`th direct
/// class to take number `n` (counting from 1, then again after the link's generations, see
/// [`generations`]) travels on tags of its own, so that a direct receive posted for an earlier
/// class of that number and not yet cancelled (one posted behind the receive that the marker
/// ended) does not take a message of a later one. With fewer, a process keeps no classes.
const FEWEST_GENERATIONS: u32 = 64;

/// The most generations a class number has (they fit the 15 bits of a class id above its
/// number): what MPICH's `MPI_TAG_UB` (2^28 - 1) and Open MPI's (2^31 - 1) allow.
const MOST_GENERATIONS: u32 = (1 << 15) - 1;

/// How many generations a direct class number goes through before it starts again; see
/// [`FEWEST_GENERATIONS`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Generations(u32);

impl Default for Generations {
    fn default() -> Self {
        Generations(FEWEST_GENERATIONS)
    }
}

/// The bits of a class id below its generation: its number.
const NUMBER_BITS: u32 = 16;

/// The MPI tag of the bare messages of the class with id `class` (its number, and for a direct
/// class its generation, see [`id`]).
pub(super) fn tag_of(class: u32) -> i32 {
    let (number, generation) = (number_of(class), class >> NUMBER_BITS);
    FIRST_CLASS_TAG + (number - 1 + MOST_CLASSES * generation) as i32
}

/// The id of the class whose bare messages travel on MPI tag `tag`, if it is a class tag.
pub(super) fn of_tag(tag: i32) -> Option<u32> {
    let past = u32::try_from(tag.checked_sub(FIRST_CLASS_TAG)?).ok()?;
    Some(id(past % MOST_CLASSES + 1, past / MOST_CLASSES))
}

/// The id of class number `number` (1 to [`MOST_CLASSES`]) of generation `generation` (0 for
/// a class that is not direct).
fn id(number: u32, generation: u32) -> u32 {
    number | generation << NUMBER_BITS
}

/// The number of the class with id `class`: its place in the tables.
fn number_of(class: u32) -> u32 {
    class & ((1 << NUMBER_BITS) - 1)
}

/// How many classes a process may keep per destination when MPI's tags go up to `tag_ub`:
/// [`MOST_CLASSES`] if the tags of [`FEWEST_GENERATIONS`] are valid, else none (MPI guarantees
/// 32767, which holds them).
pub(super) fn limit(tag_ub: i32) -> u32 {
    match tag_ub >= tag_of(id(MOST_CLASSES, FEWEST_GENERATIONS)) {
        true => MOST_CLASSES,
        false => 0,
    }
}

/// The generations of direct class numbers when MPI's tags go up to `tag_ub`: as many as have
/// valid tags, up to [`MOST_GENERATIONS`].
pub(super) fn generations(tag_ub: i32) -> Generations {
    let past = (tag_ub.max(FIRST_CLASS_TAG) - FIRST_CLASS_TAG) as u32;
    let most = (past / MOST_CLASSES).saturating_sub(1);
    Generations(most.clamp(FEWEST_GENERATIONS, MOST_GENERATIONS))
}

/// The class field of a header that defines the class with id `class`, direct or not.
pub(super) fn encode(class: u32, direct: bool) -> u32 {
    class | if direct { DIRECT_BIT } else { 0 }
}

/// The class id and whether it is direct, from a header's class field.
pub(super) fn decode(field: u32) -> (u32, bool) {
    (field & !DIRECT_BIT, field & DIRECT_BIT != 0)
}

/// A matching channel: what a receive from a known source with a known tag names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Channel {
    pub(crate) context: u32,
    pub(crate) source: u32,
    pub(crate) tag: i32,
}

impl Channel {
    pub(crate) fn of(header: &Header) -> Channel {
        Channel {
            context: header.context,
            source: header.source,
            tag: header.tag,
        }
    }
}

/// What a direct class carries: the messages of one matching channel and, on a collective
/// context, of one kind of call — its [`CallKey`] numbered 0, the kind as its names say (alike
/// in both processes, whatever the strings' addresses) — so that the kinds of call that share a
/// channel (an algorithm's tag) each have a direct class of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Stream {
    channel: Channel,
    call: Option<CallKey>,
}

impl Stream {
    pub(crate) fn of(header: &Header) -> Stream {
        Stream {
            channel: Channel::of(header),
            call: header.call.map(|call| call.with_seq(0)),
        }
    }
}

/// What makes messages to one destination one class: every field of their headers but the
/// count (and a collective call's sequence number). The element type is its compiled map (one
/// per Rust type in a process, never freed), by address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    channel: Channel,
    /// The ready-mode bit (the flow id is 0: a traced message is never bare).
    flow: u32,
    ty: usize,
    /// The kind of the collective call the messages belong to: its number in
    /// [`Outgoing::kinds`], 0 for none (a number keeps the key as small as a point-to-point
    /// one, compared on every send).
    call: u32,
}

/// The key of a retired class's number until another class takes it: matches no message (no
/// compiled map lives at address 0).
const RETIRED: Key = Key {
    channel: Channel {
        context: 0,
        source: 0,
        tag: 0,
    },
    flow: 0,
    ty: 0,
    call: 0,
};

/// A stream's direct history at one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direct {
    /// Its direct class is this number, after `growths` retired for growth.
    Live { class: u32, growths: u8 },
    /// It has had direct classes retired this many times for growth, and may have another.
    Grown(u8),
    /// It has no direct class, for good.
    Never,
}

/// One class a sender keeps.
struct Numbered {
    /// The generation of the last direct class that had its number (0 if none).
    generation: u32,
    key: Key,
    /// For a live direct class, its bound.
    bound: Option<usize>,
    /// For a live direct class, how many of its last messages in a row had at most a
    /// [`SHRINK_RATIO`]th of its bound, and the largest count among them.
    small: (u32, usize),
}

/// The classes of messages this process sends to one other.
#[derive(Default)]
pub(super) struct Outgoing {
    /// The classes of the last few keys sent, most found here without hashing (a halo
    /// exchange alternates between a few channels): key and class id, replaced in turn.
    recent: [Option<(Key, u32)>; RECENT],
    /// The entry of `recent` the next new key takes.
    next_recent: usize,
    /// How many generations its direct class numbers go through.
    generations: Generations,
    by_key: HashMap<Key, u32>,
    /// Each class, by number - 1.
    classes: Vec<Numbered>,
    /// The number the next new class takes once every number is taken.
    next_reused: u32,
    /// The kinds of collective call of its messages, numbered for their keys.
    kinds: Kinds,
    /// The streams' direct histories.
    direct: HashMap<Stream, Direct>,
    /// How many direct classes live.
    live_direct: u32,
    /// The streams given direct classes, oldest first (some since retired).
    given: VecDeque<Stream>,
}

/// The kinds of collective call a sender's messages belonged to, each numbered (from 1) for
/// the keys of their classes. Numbers are never given twice (a table grown past [`MOST_KINDS`]
/// starts again with new numbers: keys of the old ones no longer match, and their classes are
/// taken by others in turn).
#[derive(Default)]
struct Kinds {
    numbers: HashMap<CallKind, u32>,
    /// The last kind numbered, found without hashing (a run of one collective call).
    last: Option<(CallKind, u32)>,
    given: u32,
}

/// The most kinds of collective call a [`Kinds`] table holds (every size of an allreduce is a
/// kind of its own).
const MOST_KINDS: usize = 4096;

impl Kinds {
    /// The number of `kind`.
    #[inline]
    fn number(&mut self, kind: CallKind) -> u32 {
        match self.last {
            Some((last, n)) if last == kind => n,
            _ => self.look_up(kind),
        }
    }

    fn look_up(&mut self, kind: CallKind) -> u32 {
        let n = match self.numbers.get(&kind) {
            Some(&n) => n,
            None => {
                if self.numbers.len() >= MOST_KINDS {
                    self.numbers.clear();
                }
                // (after 2^32 kinds the numbers start again: no program gets there)
                self.given = self.given.wrapping_add(1).max(1);
                self.numbers.insert(kind, self.given);
                self.given
            }
        };
        self.last = Some((kind, n));
        n
    }
}

/// A lately sent key's channel and class, for [`Outgoing::forget_recent`].
#[derive(Debug, Clone, Copy)]
struct Recent {
    channel: Channel,
    class: u32,
}

/// What a sender does with a message of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    /// Sends it bare: its receiver knows the class.
    Known(u32),
    /// Sends it with the full header, which defines this new class (direct or not).
    New(u32, bool),
    /// Sends it with the full header only (the header has a field of its own, or the
    /// destination can have no class).
    None,
}

/// How a sender sends one message: first, if `retire` names a class, an empty message on its
/// tag (the marker that retires a direct class), then the message as `class` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) retire: Option<u32>,
    pub(super) class: Class,
}

impl Outgoing {
    /// The classes of one destination, whose direct class numbers go through `generations`.
    pub(super) fn new(generations: Generations) -> Outgoing {
        Outgoing {
            generations,
            ..Outgoing::default()
        }
    }

    /// How to send a message with `header` of `count` elements of `ty`, with at most `limit`
    /// classes; `classed` false for a message that must carry its full header (a synchronous
    /// send's number, a committed type's signature). A bare message of a collective call
    /// carries its sequence number after the payload ([`SEQ_BYTES`]).
    pub(super) fn plan(
        &mut self,
        header: &Header,
        (ty, count): (&'static Compiled, usize),
        limit: u32,
        classed: bool,
    ) -> Plan {
        let large_call =
            header.call.is_some() && count.saturating_mul(ty.size) > MOST_BARE_CALL_BYTES;
        let unclassed = !classed || large_call || header.flow_id() != 0 || ty.size == 0;
        if unclassed || limit == 0 {
            return Plan {
                retire: self.unclassed(header),
                class: Class::None,
            };
        }
        let channel = Channel::of(header);
        let key = Key {
            channel,
            flow: header.flow,
            ty: std::ptr::from_ref(ty) as usize,
            call: match header.call {
                None => 0,
                Some(call) => self.kinds.number(call.kind()),
            },
        };
        // the direct class's counts already seen for this message (see `Outgoing::shrinks`)
        let mut shrink = None;
        if let Some(class) = self.recent_class(&key) {
            if self.fits(class, count) {
                shrink = Some(self.shrinks(class, count));
                if shrink == Some(false) {
                    return Plan {
                        retire: None,
                        class: Class::Known(class),
                    };
                }
            }
        }
        // a message the stream's direct class does not take retires it first, and so does
        // one that ends a long run of far smaller messages than its bound
        let stream = Stream::of(header);
        let mut retire = None;
        if let Some(&Direct::Live { class, .. }) = self.direct.get(&stream) {
            let same = self.numbered(class).key == key;
            if !same || !self.fits(class, count) {
                retire = self.retire(stream, same && count > 0);
            } else if shrink.unwrap_or_else(|| self.shrinks(class, count)) {
                retire = self.retire(stream, true);
            }
        }
        let class = match self.by_key.get(&key) {
            Some(&n) => Class::Known(n),
            None => {
                let growths = self.may_be_direct(stream, (header, count), limit);
                if growths.is_some() && self.live_direct >= MOST_DIRECT.min(limit / 2) {
                    retire = self.evict_oldest();
                }
                let n = self.take_number(key, limit, growths.map(|_| count));
                if let Some(growths) = growths {
                    // the stream's other keys no longer go bare without a marker first (nor,
                    // to keep it simple, the channel's other streams')
                    self.forget_recent(|entry| entry.channel == channel);
                    self.direct
                        .insert(stream, Direct::Live { class: n, growths });
                    self.live_direct += 1;
                    self.given.push_back(stream);
                    if self.given.len() > 4 * MOST_DIRECT as usize {
                        let direct = &self.direct;
                        self.given
                            .retain(|c| matches!(direct.get(c), Some(Direct::Live { .. })));
                    }
                }
                Class::New(n, growths.is_some())
            }
        };
        if let Class::Known(n) | Class::New(n, _) = class {
            self.remember(key, n);
        }
        Plan { retire, class }
    }

    /// Before a message with `header` that carries its full header and no class: the direct
    /// class of its stream, retired for good, if it had one (for the marker).
    pub(super) fn unclassed(&mut self, header: &Header) -> Option<u32> {
        match self.live_direct {
            0 => None,
            _ => self.retire(Stream::of(header), false),
        }
    }

    /// Whether a message of `count` elements may be a bare message of class `n`: any count
    /// for a class that is not direct, 1 to its bound for a direct one.
    fn fits(&self, n: u32, count: usize) -> bool {
        self.classes[number_of(n) as usize - 1]
            .bound
            .is_none_or(|bound| (1..=bound).contains(&count))
    }

    /// Counts a message of `count` elements of class `n`, which it fits: whether the class, if
    /// direct, should now be followed by one of a smaller bound — after [`SHRINK_AFTER`]
    /// messages in a row of at most a [`SHRINK_RATIO`]th of its bound, at one of the largest
    /// of them (the new class's bound is its defining message's count).
    fn shrinks(&mut self, n: u32, count: usize) -> bool {
        let numbered = self.numbered(n);
        let Some(bound) = numbered.bound else {
            return false;
        };
        let (run, most) = &mut numbered.small;
        if count.saturating_mul(SHRINK_RATIO) > bound {
            (*run, *most) = (0, 0);
            return false;
        }
        *run += 1;
        *most = (*most).max(count);
        *run >= SHRINK_AFTER && count == *most
    }

    /// Whether a new class of `stream` for a message with `header` of `count` elements is
    /// direct: if so, how often the stream's direct classes grew before it.
    fn may_be_direct(
        &self,
        stream: Stream,
        (header, count): (&Header, usize),
        limit: u32,
    ) -> Option<u8> {
        let growths = match self.direct.get(&stream) {
            None if self.direct.len() < MOST_REMEMBERED => 0,
            Some(&Direct::Grown(n)) if n <= MOST_GROWTHS => n,
            _ => return None,
        };
        let room = MOST_DIRECT.min(limit / 2) > 0;
        (count > 0 && !header.ready() && room).then_some(growths)
    }

    /// Retires the oldest live direct class, for good: its number, for the marker.
    fn evict_oldest(&mut self) -> Option<u32> {
        while let Some(stream) = self.given.pop_front() {
            if let Some(class) = self.retire(stream, false) {
                return Some(class);
            }
        }
        None
    }

    /// Retires `stream`'s direct class, if it has a live one: its number, for the marker.
    /// `grew`: because its bound no longer suits a message of its key, which had more elements
    /// or ended a long run of far fewer (the stream may then have another).
    fn retire(&mut self, stream: Stream, grew: bool) -> Option<u32> {
        let Some(&Direct::Live { class, growths }) = self.direct.get(&stream) else {
            return None;
        };
        let after = match grew {
            true => Direct::Grown(growths + 1),
            false => Direct::Never,
        };
        self.direct.insert(stream, after);
        self.live_direct -= 1;
        let numbered = self.numbered(class);
        let old = numbered.key;
        numbered.key = RETIRED;
        numbered.bound = None;
        self.by_key.remove(&old);
        self.forget_recent(|entry| entry.class == class);
        Some(class)
    }

    /// An id for the new class `key` (direct with `bound`, or not): the
    /// next free number, or once all `limit` are taken, the next in turn that is not a live
    /// direct class (its class forgotten); a direct class's id has the number's next generation.
    fn take_number(&mut self, key: Key, limit: u32, bound: Option<usize>) -> u32 {
        let n = if (self.classes.len() as u32) < limit {
            self.classes.push(Numbered {
                generation: 0,
                key: RETIRED,
                bound: None,
                small: (0, 0),
            });
            self.classes.len() as u32
        } else {
            let mut n = self.next_reused % limit + 1;
            while self.classes[n as usize - 1].bound.is_some() {
                n = n % limit + 1;
            }
            self.next_reused = n;
            n
        };
        self.forget_recent(|entry| number_of(entry.class) == n);
        let numbered = &mut self.classes[n as usize - 1];
        self.by_key.remove(&numbered.key);
        let mut generation = 0;
        if bound.is_some() {
            numbered.generation = numbered.generation % self.generations.0 + 1;
            generation = numbered.generation;
        }
        let class = id(n, generation);
        *numbered = Numbered {
            generation: numbered.generation,
            key,
            bound,
            small: (0, 0),
        };
        self.by_key.insert(key, class);
        class
    }

    /// The class of `key` if it was sent lately.
    #[inline]
    fn recent_class(&self, key: &Key) -> Option<u32> {
        self.recent
            .iter()
            .flatten()
            .find(|(k, _)| k == key)
            .map(|&(_, c)| c)
    }

    /// Remembers that `key` was just sent as class `class`.
    fn remember(&mut self, key: Key, class: u32) {
        if let Some(entry) = self.recent.iter_mut().flatten().find(|(k, _)| *k == key) {
            entry.1 = class;
            return;
        }
        self.recent[self.next_recent] = Some((key, class));
        self.next_recent = (self.next_recent + 1) % RECENT;
    }

    /// Forgets the lately sent keys that `gone` says may no longer go as their class (it was
    /// retired, its number taken by another, or their channel has a direct class now).
    fn forget_recent(&mut self, gone: impl Fn(Recent) -> bool) {
        for entry in &mut self.recent {
            if entry.is_some_and(|(key, class)| {
                gone(Recent {
                    channel: key.channel,
                    class,
                })
            }) {
                *entry = None;
            }
        }
    }

    /// The class with id `class`.
    fn numbered(&mut self, class: u32) -> &mut Numbered {
        &mut self.classes[number_of(class) as usize - 1]
    }
}

/// What a receiver knows of a class of another process's messages.
#[derive(Clone)]
pub(super) struct Known {
    pub(super) header: Header,
    pub(super) stand_in: StandIn,
    /// For a direct class, its bound.
    pub(super) bound: Option<usize>,
}

/// The classes this process knows of the messages other processes send it, by source.
#[derive(Default)]
pub(super) struct Incoming {
    by_source: Vec<Sourced>,
}

/// The classes of one source's messages.
#[derive(Default)]
struct Sourced {
    /// By number - 1: the id of the class that has the number, and what is known of it.
    classes: Vec<Option<(u32, Known)>>,
    /// Its live direct classes' ids: point-to-point ones by channel (found on the path of
    /// every direct receive, by the smaller key), collective calls' by stream.
    direct: HashMap<Channel, u32>,
    direct_calls: HashMap<Stream, u32>,
    /// The last collective stream found in `direct_calls`, by its channel and the asking
    /// call's kind by address (the same addresses are the same names), with what was found:
    /// the next receive of that call finds it without hashing and comparing the names. Any
    /// change of `direct_calls` forgets it.
    last_call: Cell<Option<(Channel, CallKind, Option<u32>)>>,
}

impl Sourced {
    /// The id of the live direct class of the stream of messages with `header`, if any.
    #[inline]
    fn live_direct(&self, header: &Header) -> Option<u32> {
        let Some(call) = header.call else {
            return self.direct.get(&Channel::of(header)).copied();
        };
        let (channel, kind) = (Channel::of(header), call.kind());
        if let Some((c, k, found)) = self.last_call.get() {
            if (c, k) == (channel, kind) {
                return found;
            }
        }
        let found = self.direct_calls.get(&Stream::of(header)).copied();
        self.last_call.set(Some((channel, kind, found)));
        found
    }

    /// Makes `class` the live direct class of the stream of messages with `header`.
    fn set_live_direct(&mut self, header: &Header, class: u32) {
        match header.call {
            None => self.direct.insert(Channel::of(header), class),
            Some(_) => {
                self.last_call.set(None);
                self.direct_calls.insert(Stream::of(header), class)
            }
        };
    }

    /// Drops `old`, the class with id `class`, from the direct classes if it was the live one
    /// of its stream.
    fn forget_direct(&mut self, class: u32, old: &Known) {
        if old.bound.is_some() && self.live_direct(&old.header) == Some(class) {
            match old.header.call {
                None => self.direct.remove(&Channel::of(&old.header)),
                Some(_) => {
                    self.last_call.set(None);
                    self.direct_calls.remove(&Stream::of(&old.header))
                }
            };
        }
    }
}

impl Incoming {
    /// Learns the class with id `class` of process `from` (replacing what had its number): its
    /// messages have `header` and elements of `stand_in`'s signature, and if direct, 1 to
    /// `bound` of them.
    pub(super) fn define(&mut self, from: usize, class: u32, known: Known) {
        if self.by_source.len() <= from {
            self.by_source.resize_with(from + 1, Default::default);
        }
        let source = &mut self.by_source[from];
        let at = number_of(class) as usize - 1;
        if source.classes.len() <= at {
            source.classes.resize_with(at + 1, || None);
        }
        if let Some((old, known)) = source.classes[at].take() {
            source.forget_direct(old, &known);
        }
        if known.bound.is_some() {
            source.set_live_direct(&known.header, class);
        }
        source.classes[at] = Some((class, known));
    }

    /// Forgets the class with id `class` of process `from` if it still has its number: its
    /// marker came (a direct class retired).
    pub(super) fn retire(&mut self, from: usize, class: u32) {
        let Some(source) = self.by_source.get_mut(from) else {
            return;
        };
        let Some(entry) = source.classes.get_mut(number_of(class) as usize - 1) else {
            return;
        };
        if let Some((old, known)) = entry.take_if(|(old, _)| *old == class) {
            source.forget_direct(old, &known);
        }
    }

    /// The class with id `class` of process `from`, if known (and not replaced since).
    pub(super) fn get(&self, from: usize, class: u32) -> Option<&Known> {
        let at = (number_of(class) as usize).checked_sub(1)?;
        match self.by_source.get(from)?.classes.get(at)? {
            Some((id, known)) if *id == class => Some(known),
            _ => None,
        }
    }

    /// The live direct class of the stream of messages with `header` from process `from`,
    /// if any: its id and what is known of it.
    pub(super) fn direct(&self, from: usize, header: &Header) -> Option<(u32, &Known)> {
        let class = self.by_source.get(from)?.live_direct(header)?;
        Some((class, self.get(from, class)?))
    }

    /// Whether the class with id `class` of process `from` is a live direct class.
    pub(super) fn is_live_direct(&self, from: usize, class: u32) -> bool {
        self.get(from, class)
            .is_some_and(|known| known.bound.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::CallKey;

    fn header(tag: i32) -> Header {
        Header {
            context: 2,
            source: 1,
            tag,
            flow: 0,
            call: None,
        }
    }

    /// The plan for a message with `h` of `count` elements of `ty`, classed, at most `limit`
    /// classes: (the class retired first, the class).
    fn plan(
        out: &mut Outgoing,
        h: &Header,
        ty: &'static Compiled,
        count: usize,
        limit: u32,
    ) -> (Option<u32>, Class) {
        let p = out.plan(h, (ty, count), limit, true);
        (p.retire, p.class)
    }

    #[test]
    fn a_class_per_header_and_type() {
        let (f, u) = (Compiled::of_type::<f64>(), Compiled::of_type::<u8>());
        let mut out = Outgoing::default();
        // the first class of a channel is direct, bounded by its first count
        assert_eq!(
            plan(&mut out, &header(5), f, 4, 10),
            (None, Class::New(id(1, 1), true))
        );
        assert_eq!(
            plan(&mut out, &header(5), f, 4, 10),
            (None, Class::Known(id(1, 1)))
        );
        assert_eq!(
            plan(&mut out, &header(5), f, 1, 10),
            (None, Class::Known(id(1, 1)))
        );
        assert_eq!(
            plan(&mut out, &header(6), f, 1, 10),
            (None, Class::New(id(2, 1), true))
        );
        // another type on a channel retires its direct class, for good, and the key's class
        // with it
        assert_eq!(
            plan(&mut out, &header(5), u, 4, 10),
            (Some(id(1, 1)), Class::New(3, false))
        );
        assert_eq!(
            plan(&mut out, &header(5), f, 4, 10),
            (None, Class::New(4, false))
        );
        assert_eq!(
            plan(&mut out, &header(5), u, 9, 10),
            (None, Class::Known(3))
        );
        assert_eq!(
            plan(&mut out, &header(5), f, 0, 10),
            (None, Class::Known(4))
        );
        // every number taken: the next in turn that is not a live direct class (2 is)
        assert_eq!(
            plan(&mut out, &header(7), f, 1, 4),
            (None, Class::New(id(1, 2), true))
        );
        assert_eq!(
            plan(&mut out, &header(6), f, 1, 4),
            (None, Class::Known(id(2, 1)))
        );
        // at most half of the numbers direct: the oldest live one (channel 6's) is evicted,
        // and its channel has none from then on
        assert_eq!(
            plan(&mut out, &header(8), f, 1, 4),
            (Some(id(2, 1)), Class::New(id(2, 2), true))
        );
        assert_eq!(
            plan(&mut out, &header(6), f, 1, 4),
            (None, Class::New(3, false))
        );
        assert_eq!(
            plan(&mut out, &header(5), u, 1, 4),
            (None, Class::New(4, false))
        );
        assert_eq!(
            plan(&mut out, &header(8), f, 1, 4),
            (None, Class::Known(id(2, 2)))
        );
        assert_eq!(plan(&mut out, &header(5), f, 1, 0), (None, Class::None)); // no class at all
        let traced = Header {
            flow: 9,
            ..header(8)
        };
        assert_eq!(
            plan(&mut out, &traced, f, 1, 10),
            (Some(id(2, 2)), Class::None)
        );
        let call = crate::transport::CollectiveCall {
            rank: 1,
            seq: 3,
            operation: "bcast",
            root: Some(0),
            reduction: None,
            bytes: None,
        };
        let collective = Header {
            call: Some(CallKey::from(&call)),
            ..header(9)
        };
        // a collective call's message: a class of its call's kind, whatever the call's number,
        // direct for its stream (the channel and the kind of call)
        let mut out = Outgoing::default();
        assert_eq!(
            plan(&mut out, &collective, f, 1, 10),
            (None, Class::New(id(1, 1), true))
        );
        let next = |seq| Header {
            call: Some(CallKey::from(&crate::transport::CollectiveCall {
                seq,
                ..call
            })),
            ..collective
        };
        assert_eq!(plan(&mut out, &next(4), f, 1, 10).1, Class::Known(id(1, 1)));
        // another kind of call on the channel: a stream of its own, which leaves the first's
        // direct class live; and so is the point-to-point stream of the same channel
        let other_root = CallKey::from(&crate::transport::CollectiveCall {
            root: Some(1),
            ..call
        });
        let other = Header {
            call: Some(other_root),
            ..collective
        };
        assert_eq!(
            plan(&mut out, &other, f, 1, 10),
            (None, Class::New(id(2, 1), true))
        );
        assert_eq!(
            plan(&mut out, &header(9), f, 1, 10),
            (None, Class::New(id(3, 1), true))
        );
        assert_eq!(
            plan(&mut out, &next(5), f, 1, 10),
            (None, Class::Known(id(1, 1)))
        );
        // a large one carries its header, and retires its stream's direct class
        let most = MOST_BARE_CALL_BYTES / 8;
        assert_eq!(
            plan(&mut out, &next(6), f, most + 1, 10),
            (Some(id(1, 1)), Class::None)
        );
        assert_eq!(
            plan(&mut out, &next(7), f, most, 10),
            (None, Class::New(4, false))
        );
        let empty = Compiled::of_type::<[f64; 0]>();
        assert_eq!(plan(&mut out, &header(9), empty, 1, 10).1, Class::None);
    }

    #[test]
    fn kinds_of_call_get_numbers_never_given_twice() {
        let kind = |bytes| {
            let call = crate::transport::CollectiveCall {
                rank: 0,
                seq: 0,
                operation: "allreduce",
                root: None,
                reduction: Some("Sum"),
                bytes: Some(bytes),
            };
            CallKey::from(&call).kind()
        };
        let mut kinds = Kinds::default();
        let first = kinds.number(kind(8));
        assert_eq!(kinds.number(kind(16)), first + 1);
        assert_eq!(kinds.number(kind(8)), first); // found again, by hashing
                                                  // past MOST_KINDS the table starts again, with numbers not given before
        let given: std::collections::HashSet<u32> =
            (0..2 * MOST_KINDS).map(|b| kinds.number(kind(b))).collect();
        assert_eq!(given.len(), 2 * MOST_KINDS);
        // kind 8 was forgotten with the table: a number of its own again, never given before
        let again = kinds.number(kind(8));
        assert!(!given.contains(&again));
        assert_eq!(kinds.number(kind(8)), again);
    }

    #[test]
    fn a_direct_class_grows_with_its_count_and_ends_otherwise() {
        let f = Compiled::of_type::<f64>();
        let mut out = Outgoing::default();
        assert_eq!(
            plan(&mut out, &header(5), f, 2, 10),
            (None, Class::New(id(1, 1), true))
        );
        // more than the bound: retired, and a direct class of the larger bound
        assert_eq!(
            plan(&mut out, &header(5), f, 3, 10),
            (Some(id(1, 1)), Class::New(id(2, 1), true))
        );
        assert_eq!(
            plan(&mut out, &header(5), f, 3, 10),
            (None, Class::Known(id(2, 1)))
        );
        // an empty message: retired for good; the channel's classes are plain from then on
        assert_eq!(
            plan(&mut out, &header(5), f, 0, 10),
            (Some(id(2, 1)), Class::New(3, false))
        );
        assert_eq!(
            plan(&mut out, &header(5), f, 99, 10),
            (None, Class::Known(3))
        );
        // a message with a header of its own (a synchronous send) retires it too
        assert_eq!(
            plan(&mut out, &header(6), f, 1, 10),
            (None, Class::New(id(4, 1), true))
        );
        let sync = out.plan(&header(6), (f, 1), 10, false);
        assert_eq!((sync.retire, sync.class), (Some(id(4, 1)), Class::None));
        assert_eq!(out.plan(&header(6), (f, 1), 10, false).retire, None);
        // growth at most MOST_GROWTHS times
        let mut out = Outgoing::default();
        for count in 1..=MOST_GROWTHS as usize + 1 {
            let (_, class) = plan(&mut out, &header(5), f, count, 300);
            assert_eq!(class, Class::New(id(count as u32, 1), true));
        }
        let last = MOST_GROWTHS as u32 + 1;
        let next = MOST_GROWTHS as usize + 2;
        assert_eq!(
            plan(&mut out, &header(5), f, next, 300),
            (Some(id(last, 1)), Class::New(last + 1, false))
        );
        // a ready-mode send's class is never direct
        let mut ready = header(7);
        ready.set_ready(true);
        assert_eq!(
            plan(&mut out, &ready, f, 1, 300),
            (None, Class::New(last + 2, false))
        );
    }

    #[test]
    fn a_direct_class_shrinks_after_a_run_of_far_smaller_messages() {
        let f = Compiled::of_type::<f64>();
        let mut out = Outgoing::default();
        let mut send = |count| plan(&mut out, &header(5), f, count, 10);
        assert_eq!(send(100), (None, Class::New(id(1, 1), true)));
        // counts of at most a quarter of the bound, but one larger, which starts the run over
        let small = |i: u32| if i.is_multiple_of(2) { 3 } else { 5 };
        for i in 0..SHRINK_AFTER - 1 {
            assert_eq!(send(small(i)), (None, Class::Known(id(1, 1))));
        }
        assert_eq!(send(30), (None, Class::Known(id(1, 1))));
        for i in 0..SHRINK_AFTER - 1 {
            assert_eq!(
                send(small(i)),
                (None, Class::Known(id(1, 1))),
                "message {i} of the run"
            );
        }
        // the run is long enough, but this message is not of its largest count
        assert_eq!(send(3), (None, Class::Known(id(1, 1))));
        // one of its largest count retires the class for one of that bound
        assert_eq!(send(5), (Some(id(1, 1)), Class::New(id(2, 1), true)));
        assert_eq!(send(5), (None, Class::Known(id(2, 1))));
        assert_eq!(send(6), (Some(id(2, 1)), Class::New(id(3, 1), true)));
    }

    #[test]
    fn a_number_taken_by_another_key_is_not_found_for_the_old_one() {
        let f = Compiled::of_type::<f64>();
        let mut out = Outgoing::default();
        // ready-mode sends: plain classes, whose ids are their numbers
        let ready = |tag| {
            let mut h = header(tag);
            h.set_ready(true);
            h
        };
        let mut send = |tag| plan(&mut out, &ready(tag), f, 1, 2).1;
        assert_eq!(send(5), Class::New(1, false));
        assert_eq!(send(6), Class::New(2, false));
        assert_eq!(send(5), Class::Known(1));
        assert_eq!(send(6), Class::Known(2));
        // a third key takes number 1 in turn: key 5's class is forgotten, its next message
        // defines a class again
        assert_eq!(send(7), Class::New(1, false));
        assert_eq!(send(5), Class::New(2, false));
        assert_eq!(send(7), Class::Known(1));
        assert_eq!(send(6), Class::New(1, false));
    }

    #[test]
    fn a_key_sent_lately_retires_its_channels_new_direct_class_first() {
        let (f, u) = (Compiled::of_type::<f64>(), Compiled::of_type::<u8>());
        let mut out = Outgoing::default();
        // an empty message: a plain class, and the channel has no direct history
        assert_eq!(
            plan(&mut out, &header(5), u, 0, 10),
            (None, Class::New(1, false))
        );
        assert_eq!(
            plan(&mut out, &header(5), f, 4, 10),
            (None, Class::New(id(2, 1), true))
        );
        // the first key again: the direct class is retired before it (a receive posted on
        // the direct class's tag must not miss it)
        assert_eq!(
            plan(&mut out, &header(5), u, 1, 10),
            (Some(id(2, 1)), Class::Known(1))
        );
    }

    #[test]
    fn a_receiver_knows_the_live_direct_class_of_each_channel() {
        let f64s = [(crate::datatype::BasicType::F64, 1)];
        let stand_in = StandIn::of_signature(&f64s).unwrap();
        let known = |tag, bound| Known {
            header: header(tag),
            stand_in: stand_in.clone(),
            bound,
        };
        let channel = header(5);
        let mut incoming = Incoming::default();
        incoming.define(3, id(2, 1), known(5, Some(4)));
        assert_eq!(
            incoming.direct(3, &channel).map(|(n, k)| (n, k.bound)),
            Some((id(2, 1), Some(4)))
        );
        assert!(incoming.is_live_direct(3, id(2, 1)));
        assert!(incoming.direct(1, &channel).is_none());
        // redefined as another channel's plain class: no longer direct
        incoming.define(3, 2, known(6, None));
        assert!(incoming.direct(3, &channel).is_none());
        assert!(!incoming.is_live_direct(3, id(2, 1)));
        incoming.define(3, id(3, 1), known(5, Some(1)));
        incoming.retire(3, id(3, 1));
        assert!(incoming.direct(3, &channel).is_none());
        assert!(incoming.get(3, id(3, 1)).is_none());
        assert!(incoming.get(3, 2).is_some());
        // a class is known by its id: an earlier generation of its number is not it, and its
        // retirement leaves the later one
        incoming.define(3, id(3, 2), known(5, Some(1)));
        assert!(incoming.get(3, id(3, 1)).is_none());
        incoming.retire(3, id(3, 1));
        assert!(incoming.is_live_direct(3, id(3, 2)));
    }

    #[test]
    fn a_receiver_finds_a_collective_streams_direct_class_by_the_calls_names() {
        let f64s = [(crate::datatype::BasicType::F64, 1)];
        let stand_in = StandIn::of_signature(&f64s).unwrap();
        let call = |seq, root, operation: &'static str| {
            Some(CallKey::from(&crate::transport::CollectiveCall {
                rank: 1,
                seq,
                operation,
                root: Some(root),
                reduction: None,
                bytes: Some(8),
            }))
        };
        // the class's names arrived from another process: same bytes, other addresses
        let theirs: &'static str = String::from("bcast").leak();
        let class_header = Header {
            call: call(0, 0, theirs),
            ..header(5)
        };
        let known = Known {
            header: class_header,
            stand_in,
            bound: Some(1),
        };
        let mut incoming = Incoming::default();
        incoming.define(3, id(1, 1), known.clone());
        let mine = |seq, root| Header {
            call: call(seq, root, "bcast"),
            ..header(5)
        };
        // any call's number; twice, the second found again without the table
        for seq in [7, 8, 8] {
            assert_eq!(
                incoming.direct(3, &mine(seq, 0)).map(|(n, _)| n),
                Some(id(1, 1))
            );
        }
        assert!(incoming.direct(3, &mine(9, 1)).is_none()); // another root: another stream
        assert!(incoming.direct(3, &header(5)).is_none()); // the channel's point-to-point stream
                                                           // retired, then defined again: the last lookup is forgotten each time
        incoming.retire(3, id(1, 1));
        assert!(incoming.direct(3, &mine(10, 0)).is_none());
        incoming.define(3, id(2, 1), known);
        assert_eq!(
            incoming.direct(3, &mine(11, 0)).map(|(n, _)| n),
            Some(id(2, 1))
        );
    }

    #[test]
    fn class_tags_and_fields_round_trip() {
        let ids = [
            id(1, 0),
            id(2, 0),
            id(256, 0),
            id(1, 1),
            id(7, 3),
            id(256, FEWEST_GENERATIONS),
            id(256, MOST_GENERATIONS),
        ];
        for class in ids {
            assert_eq!(of_tag(tag_of(class)), Some(class));
            for direct in [false, true] {
                assert_eq!(decode(encode(class, direct)), (class, direct));
            }
        }
        // every generation's tags are apart
        let tags: std::collections::HashSet<i32> = ids.iter().map(|&c| tag_of(c)).collect();
        assert_eq!(tags.len(), ids.len());
        assert_eq!(of_tag(7), None);
        assert_eq!((limit(32767), limit(16000)), (MOST_CLASSES, 0));
        // as many generations as MPI's tags allow: MPI's least, MPICH's, Open MPI's
        let most = |tag_ub| generations(tag_ub).0;
        assert_eq!(most(32767), FEWEST_GENERATIONS.max(32767 / 256 - 1));
        assert_eq!(most((1 << 28) - 1), MOST_GENERATIONS);
        assert_eq!(most(i32::MAX), MOST_GENERATIONS);
        assert!(tag_of(id(MOST_CLASSES, MOST_GENERATIONS)) < 1 << 28);
        assert!(tag_of(id(MOST_CLASSES, most(32767))) <= 32767);
    }
}
