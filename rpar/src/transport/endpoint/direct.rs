//! Non-blocking receives that MPI matches itself (`Endpoint::post_direct`): a posted receive
//! of a scope from another process whose channel has a live direct class goes to MPI as an
//! `MPI_Irecv` straight into its buffer (`transport/mpi/direct.rs`), so that a window of
//! receives posted ahead (a halo exchange, a stream of blocks) is filled by MPI's own progress,
//! as C's `MPI_Irecv`s are.
//!
//! Such a slot claims the channel's next messages in MPI, not in rpar's queues: it is never
//! [`Posted::open`], and rpar's matching skips it. It ends one of three ways:
//! - a bare message of the class arrives in its buffer ([`DirectSlot::Received`]);
//! - the marker that retires the class arrives in it: nothing in the buffer, the slot is open
//!   again, an ordinary posted receive in its place in post order;
//! - it is cancelled: by its request's `Drop` or `cancel`, by its scope's end (a request that
//!   was leaked), or because a later message of its channel reached rpar's matching. MPI gives
//!   a channel's messages to its posted receives in order, so such a message came after
//!   everything the slots ahead of it took, and after the marker, if one came: the slots are
//!   settled (cancelled and waited for) in post order before the message is filed, those that
//!   had nothing becoming open again.
//!
//! The order holds among the slots too. A slot found with a message numbers (in arrival order)
//! the earlier slots of its class first, which took earlier messages; a slot found with the
//! marker settles the later slots of its class at once, which wait for nothing now (no later
//! class uses their tag before its number has gone through its generations, `classes.rs`; one
//! that holds a message anyway fails its request instead of delivering another channel's).

use super::{Endpoint, Matched, Pattern, Posted, Queues, SlotId};
use crate::transport::message::{Data, ErasedVec, Message};
use crate::transport::{Direct, DirectPost, ElemType};
use crate::{Error, Result};

/// The largest messages (a channel's direct class's bound, in bytes) that a non-blocking
/// receive takes directly. Above it, posted ahead and polled with `MPI_Test`, they were slower
/// on Open MPI 4.1 than probed and received at once (a 2-process halo exchange, 1 MiB faces:
/// 250 us a step against 168 probed, C's pre-posted `MPI_Irecv`s 170, polled with
/// `MPI_Testall` or not; 64 KiB 17.9 against 15.9; 16 KiB the same), and no faster on MPICH
/// (`bench/mpi_exchange.sh`, BENCHMARKS.md).
const DIRECT_POSTED_BYTES: usize = 16 << 10;

/// What a direct slot has from MPI.
#[derive(Debug)]
pub(super) enum DirectSlot {
    /// Posted to MPI, straight into the buffer of `elem` at the address.
    Waiting(DirectPost, ElemType, *mut u8),
    /// This many elements arrived in the buffer (of `elem` at the address), numbered in
    /// arrival order as they ended (before any later message of the channel was filed).
    Received {
        elem: ElemType,
        dst: *mut u8,
        count: usize,
        seq: u64,
    },
    /// A message that came after its class's marker reached it (a tag reused before the slot
    /// was settled), or MPI's receive failed: an error when its request completes.
    Lost,
}

/// How a posted receive ended, for its request.
#[derive(Debug)]
pub(crate) enum SlotEnd {
    /// A message matched it in rpar's queues: the request delivers it into its buffer.
    Message(Matched),
    /// MPI wrote `count` elements straight into its buffer, of the message from `source` (a
    /// rank of the communicator) with `tag`.
    Direct {
        source: usize,
        tag: i32,
        count: usize,
    },
    /// It failed (see [`DirectSlot::Lost`]): the request is spent.
    Lost(Error),
}

/// What [`Endpoint::take_direct`] found.
#[derive(Debug)]
pub(super) enum Taken {
    /// The direct slot ended and is gone: how, for its request.
    Ended(SlotEnd),
    /// It still waits in MPI for its message.
    Waits,
    /// It is not (or no longer) a direct slot: an ordinary posted receive, if it is posted.
    NotDirect,
}

impl Posted {
    /// Whether rpar's matching may give this receive a message: none has, and MPI is not
    /// receiving one straight into its buffer.
    #[inline]
    pub(super) fn open(&self) -> bool {
        self.matched.is_none() && self.direct.is_none()
    }

    /// Whether this receive still waits for its message (in rpar's queues or in MPI).
    pub(super) fn unfilled(&self) -> bool {
        self.matched.is_none() && matches!(self.direct, None | Some(DirectSlot::Waiting(..)))
    }
}

impl Endpoint {
    /// Posts the non-blocking receive of `pattern` from world rank `from` as a direct receive
    /// into the `capacity` elements of `elem` at `dst`, where the channel has a live direct
    /// class that fits and rpar's matching allows it: a known source and tag, another process,
    /// nothing queued that the receive would take, and no open posted receive that would take
    /// the channel's next message first (direct ones ahead of it must be of the live class); and
    /// messages of at most [`DIRECT_POSTED_BYTES`].
    /// `None` where that does not apply (the caller posts it the ordinary way).
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `capacity` elements of `elem` until the slot is gone
    /// ([`Endpoint::cancel_slot`] settles it, and so do its completions).
    pub(crate) unsafe fn post_direct(
        &self,
        (pattern, scope): (Pattern, u64),
        from: usize,
        (elem, dst, capacity): (ElemType, *mut u8, usize),
    ) -> Option<SlotId> {
        let wire = self.wire.as_ref()?;
        let next = super::direct_channel(&pattern)?;
        let allowed = from != self.world_rank
            && pattern.seq.is_none()
            && self.trace.is_none()
            && self.coroutine.get().is_none();
        if !allowed {
            return None;
        }
        let mut q = self.queues.borrow_mut();
        let blocked = q.posted.iter().any(|p| {
            p.pattern.matches(&next)
                && match &p.direct {
                    Some(DirectSlot::Waiting(post, ..)) => !wire.direct_is_live(post),
                    Some(_) => false,
                    None => p.matched.is_none(),
                }
        });
        if blocked || q.unexpected.iter().any(|m| pattern.matches(&m.header)) {
            return None;
        }
        let target = (elem, dst, capacity);
        // SAFETY: the caller's guarantee on `dst`; the channel's next message not taken by the
        // direct receives ahead is the one to receive (above), and what rpar files later
        // settles this slot first (`Endpoint::settle_direct`).
        let post = unsafe { wire.post_direct(from, &next, target, DIRECT_POSTED_BYTES)? };
        let id = SlotId(q.next_slot);
        q.next_slot += 1;
        q.direct_slots += 1;
        q.posted.push(Posted {
            id,
            pattern,
            matched: None,
            held: 0,
            direct: Some(DirectSlot::Waiting(post, elem, dst)),
            scope,
        });
        Some(id)
    }

    /// Before a message with `header` is filed: settles, in post order, the direct slots that
    /// its channel's earlier messages went to (see the module). One test when there are none.
    #[inline]
    pub(super) fn settle_direct(&self, header: &super::Header) {
        if self.queues.borrow().direct_slots > 0 {
            self.settle_direct_now(header);
        }
    }

    #[cold]
    #[inline(never)]
    fn settle_direct_now(&self, header: &super::Header) {
        let Some(wire) = &self.wire else { return };
        let mut q = self.queues.borrow_mut();
        for i in 0..q.posted.len() {
            if q.posted[i].pattern.matches(header) {
                step(wire, &mut q, i, true);
            }
        }
        q.recount_direct();
    }

    /// Where posted receive `id` is a direct slot: tests it once, or settles it if it waits for
    /// nothing (its class retired), and takes it if it is complete.
    pub(super) fn take_direct(&self, id: SlotId) -> Taken {
        let Some(wire) = &self.wire else {
            return Taken::NotDirect;
        };
        let mut q = self.queues.borrow_mut();
        let Some(i) = q.posted.iter().position(|p| p.id == id) else {
            return Taken::NotDirect;
        };
        if q.posted[i].direct.is_none() {
            return Taken::NotDirect;
        }
        if step(wire, &mut q, i, false) {
            q.recount_direct();
        }
        let p = &q.posted[i];
        let end = match (&p.direct, p.pattern.source, p.pattern.tag) {
            (None, ..) => return Taken::NotDirect,
            (Some(DirectSlot::Waiting(..)), ..) => return Taken::Waits,
            (Some(DirectSlot::Received { count, .. }), Some(source), Some(tag)) => {
                SlotEnd::Direct {
                    source: source as usize,
                    tag,
                    count: *count,
                }
            }
            _ => SlotEnd::Lost(lost()),
        };
        q.posted.remove(i);
        q.direct_slots -= 1;
        Taken::Ended(end)
    }

    /// Waits until direct slot `id` ends, and takes it if something arrived in its buffer;
    /// `Ok(None)` if it is open again (or was never direct): the caller waits the ordinary way.
    /// While it waits, this rank files what arrives from elsewhere and advances its
    /// non-blocking operations, as any wait.
    pub(super) fn wait_direct(&self, id: SlotId) -> Result<Option<SlotEnd>> {
        let mut since = None;
        for round in 0u32.. {
            match self.take_direct(id) {
                Taken::Ended(end) => return Ok(Some(end)),
                Taken::NotDirect => return Ok(None),
                Taken::Waits => self.idle_direct(round, None, &mut since)?,
            }
        }
        unreachable!("the loop returns")
    }

    /// MPI_Cancel of direct slot `id`: settles it; `Some(true)` if nothing had arrived (the
    /// slot is gone), `Some(false)` if something had (it stays, for its request to complete),
    /// `None` if it is not a direct slot (the caller cancels it the ordinary way).
    pub(super) fn cancel_direct_unmatched(&self, id: SlotId) -> Option<bool> {
        let wire = self.wire.as_ref()?;
        let mut q = self.queues.borrow_mut();
        let i = q.posted.iter().position(|p| p.id == id)?;
        q.posted[i].direct.as_ref()?;
        step(wire, &mut q, i, true);
        let cancelled = q.posted[i].direct.is_none();
        if cancelled {
            q.posted.remove(i);
        }
        q.recount_direct();
        Some(cancelled)
    }

    /// While this rank waits on the MPI transport: tests one of the direct slots that wait (in
    /// turn, by `round`); whether it ended, so that a wait for any of several requests looks
    /// at them again.
    pub(super) fn direct_progressed(&self, round: u32) -> bool {
        let Some(wire) = &self.wire else { return false };
        let mut q = self.queues.borrow_mut();
        if q.direct_slots == 0 {
            return false;
        }
        let waiting = |p: &Posted| matches!(p.direct, Some(DirectSlot::Waiting(..)));
        let n = q.posted.iter().filter(|p| waiting(p)).count();
        let turn = (n > 0).then(|| round as usize % n);
        let Some(i) = turn.and_then(|turn| {
            let mut at = q.posted.iter().enumerate().filter(|(_, p)| waiting(p));
            at.nth(turn).map(|(i, _)| i)
        }) else {
            return false;
        };
        let ended = step(wire, &mut q, i, false);
        if ended {
            q.recount_direct();
        }
        ended
    }

    /// Cancels direct slot `id` (a request dropped or cancelled): settles it with MPI, and a
    /// message that arrived in its buffer meanwhile goes back to the unexpected queue (copied
    /// out of the buffer, which is still the slot's), so that it stays receivable. Whether the
    /// slot is gone; `false` if it is not direct (or open again: the caller cancels it the
    /// ordinary way).
    pub(super) fn cancel_direct_slot(&self, id: SlotId) -> bool {
        let Some(wire) = &self.wire else { return false };
        let (pattern, slot) = {
            let mut q = self.queues.borrow_mut();
            let Some(i) = q.posted.iter().position(|p| p.id == id) else {
                return false;
            };
            step(wire, &mut q, i, true);
            if q.posted[i].direct.is_none() {
                q.recount_direct();
                return false;
            }
            let p = q.posted.remove(i);
            q.direct_slots -= 1;
            (p.pattern, p.direct)
        };
        if let (
            Some(DirectSlot::Received {
                elem,
                dst,
                count,
                seq,
            }),
            Some(header),
        ) = (slot, super::direct_channel(&pattern))
        {
            let copy = |to: *mut u8| {
                // SAFETY: MPI wrote `count` elements of `elem` at `dst`, which the slot's
                // owner keeps valid until the slot is gone (now); `to` holds as many.
                unsafe { std::ptr::copy_nonoverlapping(dst, to, count * elem.size) }
            };
            let message = Message {
                elem,
                count,
                data: Data::Owned(ErasedVec::filled_with(elem, count, copy)),
            };
            self.put_back(Matched {
                seq,
                header,
                message,
            });
        }
        true
    }

    /// A number for a new scope, whose direct slots it settles when it ends
    /// ([`Endpoint::close_scope`]).
    pub(crate) fn open_scope(&self) -> u64 {
        let mut q = self.queues.borrow_mut();
        q.next_scope += 1;
        q.next_scope
    }

    /// The end of scope `scope`: its direct slots still here, whose requests were leaked, are
    /// cancelled ([`Endpoint::cancel_slot`]: a message that arrived goes back to the unexpected
    /// queue), before the scope's buffers go.
    pub(crate) fn close_scope(&self, scope: u64) {
        loop {
            let leaked = {
                let q = self.queues.borrow();
                if q.direct_slots == 0 {
                    return;
                }
                let mine = |p: &&Posted| p.scope == scope && p.direct.is_some();
                q.posted.iter().find(mine).map(|p| p.id)
            };
            match leaked {
                Some(id) => self.cancel_slot(id),
                None => return,
            }
        }
    }

    /// Settles every direct slot still waiting, its buffer's owner gone or going (the end of
    /// the run): what arrived in them is dropped.
    pub(super) fn abandon_direct(&self) {
        let Some(wire) = &self.wire else { return };
        let mut q = self.queues.borrow_mut();
        for p in &mut q.posted {
            if let Some(DirectSlot::Waiting(post, ..)) = &mut p.direct {
                let _ = wire.cancel_direct(post);
                p.direct = Some(DirectSlot::Lost);
            }
        }
    }
}

impl Queues {
    /// Counts the direct slots again, after some may have ended.
    fn recount_direct(&mut self) {
        self.direct_slots = self.posted.iter().filter(|p| p.direct.is_some()).count();
    }
}

/// Tests the direct receive of slot `i` — or settles it (cancelled and waited for) with
/// `cancel` or once its class is retired, when it waits for nothing — whether it ended; its
/// `direct` then says how (`None`: nothing arrived, the receive is open again). Keeps the
/// order among the slots of its class (see the module): a message is numbered after the
/// earlier slots' messages, a marker settles the later slots.
fn step(wire: &crate::transport::Wire, q: &mut Queues, i: usize, cancel: bool) -> bool {
    let Some(DirectSlot::Waiting(post, elem, dst)) = &mut q.posted[i].direct else {
        return false;
    };
    let (elem, dst, class) = (*elem, *dst, post.class());
    let live = !cancel && wire.direct_is_live(post);
    let ended = match live {
        true => wire.test_direct(post),
        false => wire.cancel_direct(post),
    };
    if live && matches!(ended, Ok(None)) {
        return false;
    }
    // settled: no longer waiting, whatever the slots around it do below
    q.posted[i].direct = Some(DirectSlot::Lost);
    let of_class = |p: &Posted| matches!(&p.direct, Some(DirectSlot::Waiting(other, ..)) if other.class() == class);
    q.posted[i].direct = match ended {
        Ok(Some(Direct::Received(count))) => {
            for j in 0..i {
                if of_class(&q.posted[j]) {
                    step(wire, q, j, true);
                }
            }
            q.next_seq += 1;
            Some(DirectSlot::Received {
                elem,
                dst,
                count,
                seq: q.next_seq - 1,
            })
        }
        Ok(Some(Direct::Retired)) => {
            for j in i + 1..q.posted.len() {
                // something on the retired class's tag after its marker is another's
                if of_class(&q.posted[j]) && step(wire, q, j, true) && q.posted[j].direct.is_some()
                {
                    q.posted[j].direct = Some(DirectSlot::Lost);
                }
            }
            None
        }
        Ok(None) => None,
        Err(_) => Some(DirectSlot::Lost),
    };
    true
}

/// The error of a direct receive that failed (see [`DirectSlot::Lost`]).
fn lost() -> Error {
    Error::invalid(
        "the MPI transport",
        "a receive straight into its buffer failed: it took a malformed message, or one of a \
         later class on its tag before it was cancelled",
    )
}
