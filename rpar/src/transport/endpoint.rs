//! [`Endpoint`]: one rank's receiving side — its mailbox, the unexpected-message queue and the
//! posted (non-blocking) receives — and MPI's matching rules over them.
//!
//! Only the owning rank's thread touches an endpoint's queues (they are in a `RefCell`), so
//! matching needs no lock: other ranks only push envelopes into the lock-free mailbox.

use super::fabric::Fabric;
use super::message::{Data, Message};
use crate::Result;
use crossbeam::channel::{Receiver, TryRecvError};
use crossbeam::utils::Backoff;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

/// What travels through a mailbox.
#[derive(Debug)]
pub(crate) enum Envelope {
    /// A message.
    Msg(Header, Message),
    /// Wakes a rank blocked in a rendezvous send (its receiver copied the data, or finished).
    Wake,
    /// The run was aborted.
    Abort,
}

/// The matching information of a message: (communicator context, source, tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) context: u32,
    /// The sender's rank in the communicator.
    pub(crate) source: u32,
    pub(crate) tag: i32,
}

/// What a receive accepts: a context, and a source and tag that may be wildcards (`None`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pattern {
    pub(crate) context: u32,
    pub(crate) source: Option<u32>,
    pub(crate) tag: Option<i32>,
}

impl Pattern {
    #[inline]
    fn matches(&self, h: &Header) -> bool {
        h.context == self.context
            && self.source.is_none_or(|s| s == h.source)
            && self.tag.is_none_or(|t| t == h.tag)
    }
}

/// A matched message: its arrival number (for putting it back in order), header and payload.
#[derive(Debug)]
pub(crate) struct Matched {
    seq: u64,
    pub(crate) header: Header,
    pub(crate) message: Message,
}

/// Identifies a posted non-blocking receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotId(u64);

#[derive(Debug)]
struct Posted {
    id: SlotId,
    pattern: Pattern,
    matched: Option<Matched>,
}

#[derive(Debug, Default)]
struct Queues {
    /// Arrived messages that no receive has claimed, in arrival order.
    unexpected: VecDeque<Matched>,
    /// Posted non-blocking receives, in post order.
    posted: Vec<Posted>,
    next_seq: u64,
    next_slot: u64,
}

/// One rank's receiving side.
#[derive(Debug)]
pub(crate) struct Endpoint {
    world_rank: usize,
    rx: Receiver<Envelope>,
    fabric: Arc<Fabric>,
    queues: RefCell<Queues>,
}

/// How long a blocked receive polls its mailbox before it parks the thread.
const SPIN_ROUNDS: u32 = 64;

impl Endpoint {
    pub(crate) fn new(world_rank: usize, rx: Receiver<Envelope>, fabric: Arc<Fabric>) -> Self {
        Endpoint {
            world_rank,
            rx,
            fabric,
            queues: RefCell::default(),
        }
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

    /// The next envelope from the mailbox, blocking: spins briefly, then parks.
    fn next_blocking(&self) -> Result<Envelope> {
        let backoff = Backoff::new();
        for _ in 0..SPIN_ROUNDS {
            match self.rx.try_recv() {
                Ok(env) => return Ok(env),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => return Err(self.fabric.abort_error()),
            }
            if backoff.is_completed() {
                break;
            }
            backoff.snooze();
        }
        self.rx.recv().map_err(|_| self.fabric.abort_error())
    }

    /// Takes one envelope (blocking) and files it: a message goes to the first posted receive it
    /// matches, else to the unexpected queue. Returns the message if it matches `wanted` and no
    /// posted receive took it (the blocking receive that called this then owns it).
    /// With `release_borrowed`, a rendezvous message that is filed is copied out at once so its
    /// sender is not held up (used while this rank is itself blocked in a send).
    fn pump(&self, wanted: Option<&Pattern>, release_borrowed: bool) -> Result<Option<Matched>> {
        match self.next_blocking()? {
            Envelope::Msg(header, message) => {
                Ok(self.file(header, message, wanted, release_borrowed))
            }
            Envelope::Wake => Ok(None),
            Envelope::Abort => Err(self.fabric.abort_error()),
        }
    }

    fn file(
        &self,
        header: Header,
        message: Message,
        wanted: Option<&Pattern>,
        release_borrowed: bool,
    ) -> Option<Matched> {
        let mut q = self.queues.borrow_mut();
        let seq = q.next_seq;
        q.next_seq += 1;
        let mut m = Matched {
            seq,
            header,
            message,
        };
        if let Some(slot) = q
            .posted
            .iter_mut()
            .find(|p| p.matched.is_none() && p.pattern.matches(&header))
        {
            if release_borrowed {
                release(&mut m);
            }
            slot.matched = Some(m);
            return None;
        }
        if wanted.is_some_and(|w| w.matches(&header)) {
            return Some(m);
        }
        if release_borrowed {
            release(&mut m);
        }
        q.unexpected.push_back(m);
        None
    }

    fn take_unexpected(&self, pattern: &Pattern) -> Option<Matched> {
        let mut q = self.queues.borrow_mut();
        let i = q
            .unexpected
            .iter()
            .position(|m| pattern.matches(&m.header))?;
        q.unexpected.remove(i)
    }

    /// Blocking receive: the first message matching `pattern` in arrival order that no posted
    /// receive has claimed.
    pub(crate) fn recv(&self, pattern: &Pattern) -> Result<Matched> {
        self.check_live()?;
        if let Some(m) = self.take_unexpected(pattern) {
            return Ok(m);
        }
        loop {
            if let Some(m) = self.pump(Some(pattern), false)? {
                return Ok(m);
            }
            // a Wake or a message for someone else; it may have been an earlier one that a
            // cancelled receive put back, so look again
            if let Some(m) = self.take_unexpected(pattern) {
                return Ok(m);
            }
        }
    }

    /// Puts a matched message back where it was in arrival order (after a truncation error or a
    /// cancelled receive), so that it is not lost and order is kept.
    pub(crate) fn put_back(&self, m: Matched) {
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
                if let Some(m) = q.unexpected.iter().find(|m| pattern.matches(&m.header)) {
                    return Ok(Some((m.header, m.message.count, m.message.bytes())));
                }
            }
            if !block {
                return Ok(None);
            }
            if let Some(m) = self.pump(None, false)? {
                self.put_back(m);
            }
        }
    }

    /// Files every envelope already in the mailbox, without blocking.
    fn drain_ready(&self) -> Result<()> {
        loop {
            match self.rx.try_recv() {
                Ok(Envelope::Msg(h, m)) => {
                    let _ = self.file(h, m, None, false);
                }
                Ok(Envelope::Wake) => {}
                Ok(Envelope::Abort) | Err(TryRecvError::Disconnected) => {
                    return Err(self.fabric.abort_error())
                }
                Err(TryRecvError::Empty) => return Ok(()),
            }
        }
    }

    /// Posts a non-blocking receive; it claims the first unclaimed matching message already
    /// here, or the first that arrives.
    pub(crate) fn post(&self, pattern: Pattern) -> SlotId {
        let matched = self.take_unexpected(&pattern);
        let mut q = self.queues.borrow_mut();
        let id = SlotId(q.next_slot);
        q.next_slot += 1;
        q.posted.push(Posted {
            id,
            pattern,
            matched,
        });
        id
    }

    fn take_slot(&self, id: SlotId) -> Option<Matched> {
        let mut q = self.queues.borrow_mut();
        let i = q.posted.iter().position(|p| p.id == id)?;
        if q.posted[i].matched.is_none() {
            return None;
        }
        q.posted.remove(i).matched
    }

    /// Waits until the posted receive `id` has its message, and removes it.
    pub(crate) fn wait_slot(&self, id: SlotId) -> Result<Matched> {
        self.check_live()?;
        loop {
            if let Some(m) = self.take_slot(id) {
                return Ok(m);
            }
            if let Some(m) = self.pump(None, false)? {
                self.put_back(m);
            }
        }
    }

    /// The message of posted receive `id` if it has arrived (files what is in the mailbox first).
    pub(crate) fn test_slot(&self, id: SlotId) -> Result<Option<Matched>> {
        self.check_live()?;
        self.drain_ready()?;
        Ok(self.take_slot(id))
    }

    /// Waits for any one envelope to arrive and files it (used by `wait_any` between tests).
    pub(crate) fn wait_progress(&self) -> Result<()> {
        if let Some(m) = self.pump(None, false)? {
            self.put_back(m);
        }
        Ok(())
    }

    /// Withdraws a posted receive; a message it had claimed goes back to the unexpected queue.
    pub(crate) fn cancel_slot(&self, id: SlotId) {
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
    pub(crate) fn wait_send(&self, done: impl Fn() -> bool) -> Result<()> {
        if done() {
            return Ok(());
        }
        self.release_all_borrowed();
        while !done() {
            self.check_live()?;
            if let Some(m) = self.pump(None, true)? {
                self.put_back(m);
            }
        }
        Ok(())
    }

    fn release_all_borrowed(&self) {
        let mut q = self.queues.borrow_mut();
        let q = &mut *q;
        q.unexpected.iter_mut().for_each(release);
        q.posted
            .iter_mut()
            .filter_map(|p| p.matched.as_mut())
            .for_each(release);
    }

    /// Called when the rank's program has returned: the messages nobody received. Rendezvous
    /// senders still waiting on this rank are released with an error (their tickets drop).
    pub(crate) fn finish(&self) -> usize {
        let mut left = 0;
        while let Ok(env) = self.rx.try_recv() {
            if let Envelope::Msg(..) = env {
                left += 1;
            }
        }
        let mut q = self.queues.borrow_mut();
        left += q.unexpected.len() + q.posted.iter().filter(|p| p.matched.is_some()).count();
        q.unexpected.clear();
        q.posted.clear();
        left
    }
}

/// Turns a rendezvous message into an owned copy, releasing its sender.
fn release(m: &mut Matched) {
    let msg = &mut m.message;
    // a derived-datatype rendezvous is packed into an owned buffer
    if let Data::Typed(t) = &mut msg.data {
        if !t.release() {
            msg.data = Data::Empty; // the sender withdrew: the run is aborting
        }
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
