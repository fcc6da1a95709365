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
//! Messages whose headers say something of their own — a collective call (its sequence
//! number), a trace's flow id, a synchronous send's number — and elements of no bytes (no count
//! to recover) always travel with the full header.
//!
//! A destination has at most [`MOST_CLASSES`] classes at a time (a program that gives every
//! message a tag of its own would otherwise grow both tables without end); once they are all
//! taken, a new combination takes the number of the oldest, in turn, and its full header
//! redefines that number at the receiver — which sees the redefinition after every bare message
//! of the old class and before every one of the new, by the same ordering.

use super::stand_ins::StandIn;
use crate::datatype::Compiled;
use crate::transport::Header;
use std::collections::HashMap;
use std::sync::Arc;

/// The MPI tag of the first class's bare messages on the link's communicator; class `n` (from
/// 1) travels on `FIRST_CLASS_TAG + n - 1`.
const FIRST_CLASS_TAG: i32 = 16;

/// The most classes a process keeps per destination (and per source): their tables take about
/// 100 bytes a class on each side.
pub(super) const MOST_CLASSES: u32 = 256;

/// The MPI tag of the bare messages of class `class`.
pub(super) fn tag_of(class: u32) -> i32 {
    FIRST_CLASS_TAG + class as i32 - 1
}

/// The class whose bare messages travel on MPI tag `tag`, if it is a class tag.
pub(super) fn of_tag(tag: i32) -> Option<u32> {
    (tag >= FIRST_CLASS_TAG).then(|| (tag - FIRST_CLASS_TAG + 1) as u32)
}

/// What makes messages to one destination one class: every field of their headers but the
/// count. The element type is its compiled map (one per Rust type in a process), by address,
/// kept alive by the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    context: u32,
    source: u32,
    tag: i32,
    /// The ready-mode bit (the flow id is 0: a traced message is never bare).
    flow: u32,
    ty: usize,
}

/// The classes of messages this process sends to one other.
#[derive(Default)]
pub(super) struct Outgoing {
    last: Option<(Key, u32)>,
    by_key: HashMap<Key, u32>,
    /// Each class's key and element type (kept alive, so that no other type takes its
    /// address), by number - 1.
    classes: Vec<(Key, Arc<Compiled>)>,
    /// The number the next new class takes once every number is taken.
    next_reused: u32,
}

/// What a sender does with a message of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    /// Sends it bare: its receiver knows the class.
    Known(u32),
    /// Sends it with the full header, which defines this new class.
    New(u32),
    /// Sends it with the full header only (the header has a field of its own, or the
    /// destination can have no class).
    None,
}

impl Outgoing {
    /// The class of a message with `header` of elements of `ty`, at most `limit` classes.
    pub(super) fn class_of(&mut self, header: &Header, ty: &Arc<Compiled>, limit: u32) -> Class {
        if header.call.is_some() || header.flow_id() != 0 || ty.size == 0 || limit == 0 {
            return Class::None;
        }
        let key = Key {
            context: header.context,
            source: header.source,
            tag: header.tag,
            flow: header.flow,
            ty: Arc::as_ptr(ty) as usize,
        };
        if let Some((last, class)) = self.last {
            if last == key {
                return Class::Known(class);
            }
        }
        let (class, n) = match self.by_key.get(&key) {
            Some(&n) => (Class::Known(n), n),
            None => {
                let n = self.take_number(key, ty, limit);
                (Class::New(n), n)
            }
        };
        self.last = Some((key, n));
        class
    }

    /// A number for the new class `key` of elements of `ty`: the next free one, or once all
    /// `limit` are taken, the oldest's in turn (its class forgotten).
    fn take_number(&mut self, key: Key, ty: &Arc<Compiled>, limit: u32) -> u32 {
        let n = if (self.classes.len() as u32) < limit {
            self.classes.push((key, ty.clone()));
            self.classes.len() as u32
        } else {
            let n = self.next_reused % limit + 1;
            self.next_reused = n;
            let old = std::mem::replace(&mut self.classes[n as usize - 1], (key, ty.clone()));
            self.by_key.remove(&old.0);
            n
        };
        self.by_key.insert(key, n);
        n
    }
}

/// The classes this process knows of the messages other processes send it, by source.
#[derive(Default)]
pub(super) struct Incoming {
    by_source: Vec<Vec<Option<(Header, StandIn)>>>,
}

impl Incoming {
    /// Learns class `class` of process `from`: its messages have `header` and elements of
    /// `stand_in`'s signature.
    pub(super) fn define(&mut self, from: usize, class: u32, header: Header, stand_in: StandIn) {
        if self.by_source.len() <= from {
            self.by_source.resize_with(from + 1, Vec::new);
        }
        let classes = &mut self.by_source[from];
        let at = class as usize - 1;
        if classes.len() <= at {
            classes.resize_with(at + 1, || None);
        }
        classes[at] = Some((header, stand_in));
    }

    /// Class `class` of process `from`, if known.
    pub(super) fn get(&self, from: usize, class: u32) -> Option<&(Header, StandIn)> {
        let at = (class as usize).checked_sub(1)?;
        self.by_source.get(from)?.get(at)?.as_ref()
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

    #[test]
    fn a_class_per_header_and_type() {
        let (f, u) = (
            crate::datatype::Compiled::of_type::<f64>(),
            crate::datatype::Compiled::of_type::<u8>(),
        );
        let mut out = Outgoing::default();
        assert_eq!(out.class_of(&header(5), &f, 10), Class::New(1));
        assert_eq!(out.class_of(&header(5), &f, 10), Class::Known(1));
        assert_eq!(out.class_of(&header(5), &u, 10), Class::New(2));
        assert_eq!(out.class_of(&header(6), &f, 10), Class::New(3));
        assert_eq!(out.class_of(&header(5), &f, 10), Class::Known(1));
        // every number taken: the oldest's, in turn, and its class is new again after
        assert_eq!(out.class_of(&header(7), &f, 3), Class::New(1));
        assert_eq!(out.class_of(&header(7), &f, 3), Class::Known(1));
        assert_eq!(out.class_of(&header(5), &f, 3), Class::New(2));
        assert_eq!(out.class_of(&header(6), &f, 3), Class::Known(3));
        assert_eq!(out.class_of(&header(7), &f, 3), Class::Known(1));
        assert_eq!(out.class_of(&header(5), &f, 0), Class::None); // no class at all
        let traced = Header {
            flow: 9,
            ..header(5)
        };
        assert_eq!(out.class_of(&traced, &f, 10), Class::None);
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
            ..header(5)
        };
        assert_eq!(out.class_of(&collective, &f, 10), Class::None);
        let empty = crate::datatype::Compiled::of_type::<[f64; 0]>();
        assert_eq!(out.class_of(&header(5), &empty, 10), Class::None);
    }

    #[test]
    fn class_tags_round_trip() {
        for class in [1, 2, 1000] {
            assert_eq!(of_tag(tag_of(class)), Some(class));
        }
        assert_eq!(of_tag(7), None);
    }
}
