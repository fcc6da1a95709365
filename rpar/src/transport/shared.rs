//! [`Arena`]: memory that the ranks of one communicator share, through which the in-process
//! collective algorithms (`collective/shared.rs`) exchange data without messages.
//!
//! A shared-memory collective call is one or more *steps*. In every step each member *posts*
//! once — data copied into its own slot (small data), data lent in place from its buffer (large
//! data), or nothing — and then reads the posts it needs. Each member owns `depth` slots (see
//! [`depth`]), used in turn (step `s` uses slot `s % depth`), each with a *stamp*: `s + 1` once
//! the post of step `s` is in it. Each member also counts the steps it is *done* with (it reads
//! no post of them any more). Only the owner writes its slots, stamps and count.
//!
//! Why nobody reads memory while it is written, or after it is gone:
//!
//! - a member writes slot `s % depth` only once every member is done with step `s - depth`,
//!   the step that used the slot last. So a rank can run up to `depth` steps ahead of the
//!   slowest reader (a broadcast's root returns at once, as MPI's eager protocol allows);
//! - the owner's `Release` store of the stamp publishes the slot, and a reader's `Acquire` load
//!   that sees it sees the slot whole. Small posts live in the slot itself, so a reader finds
//!   stamp, description and data in neighbouring cache lines;
//! - a member that lends its buffer returns only once every member is done with the step — or,
//!   when the run aborts, once it has withdrawn the post and no reader is inside it (a reader
//!   counts itself in before it looks at the withdrawal, the owner withdraws before it counts:
//!   a Dekker pair of `SeqCst` operations, so one of them sees the other).
//!
//! Waiting: a member polls the stamp or count it waits for (see [`Endpoint::wait_until`]), then
//! adds itself to the waiter list of the member it waits for and parks on its mailbox. A member
//! that stores a stamp or its count then looks at its own list and sends each waiter a `Wake`.
//! The store and the list check are separated by a `SeqCst` fence, and so are the waiter's
//! registration and its last look, so that a wake-up is never lost. With many members, a wait
//! for all of them waits on a per-slot count of posts (or of members done) instead, woken once
//! by the member that completes it ([`Totals`]).
//!
//! Every post carries a key of the member's collective call; a reader compares it with its own
//! and, if they differ, the whole calls, so that ranks in different calls get
//! `Error::CollectiveMismatch` instead of each other's data.
//!
//! Only the in-process transport has an arena: on the MPI transport the ranks share no memory.

use super::endpoint::{CallKey, CollectiveCall, Endpoint, Envelope, Waiting};
use super::fabric::Fabric;
use super::message::ElemType;
use crate::{Error, Result};
use crossbeam_utils::CachePadded;
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, Weak};

/// Slots per member for a communicator of `p` ranks: how many steps a member may run ahead of
/// the slowest reader. Deep for few ranks (a small broadcast's root runs ahead and its readers
/// catch up in batches: on 2 cores, 8 B from 8 ranks' root took 1.18 us a call with 16 slots,
/// 0.46 with 64, 0.37 with 256), shallower for many (each slot is a few cache lines: 256 slots
/// take 96 KiB a member). A power of two, so that a step's slot is a mask away.
fn depth(p: usize) -> usize {
    let d = (4096 / p.max(1)).clamp(16, 256);
    1 << d.ilog2()
}

/// The alignment of slot storage: data of any element type aligned up to this can be read in
/// place from a slot.
pub(crate) const SLOT_ALIGN: usize = 64;

/// Posts up to this many bytes are kept in the slot itself, beside its stamp, so that a reader
/// finds stamp, description and data in neighbouring cache lines.
const INLINE_BYTES: usize = 64;

/// One aligned line of slot storage.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([MaybeUninit<u8>; SLOT_ALIGN]);

const EMPTY_LINE: Line = Line([MaybeUninit::uninit(); SLOT_ALIGN]);

/// What a member posted in one step (the part a reader always needs: one cache line with the
/// slot's stamp and small data).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Post {
    /// The bytes: in the slot, or in the member's own buffer when lent.
    pub(crate) data: *const u8,
    /// How many.
    pub(crate) bytes: usize,
    /// Their element type (`None` for an empty post).
    pub(crate) elem: Option<ElemType>,
    /// A hash of the collective call the member is in ([`call_key`]): readers compare the whole
    /// call only when the keys differ.
    key: u64,
    /// Whether the bytes are lent from the member's buffer.
    lent: bool,
}

impl Post {
    const EMPTY: Post = Post {
        data: std::ptr::null(),
        bytes: 0,
        elem: None,
        key: 0,
        lent: false,
    };
}

/// Posts up to this many bytes fit in the first cache line of their slot, beside the stamp and
/// the post (a 2-rank allreduce of one `f64` touches one line of the other rank's slot).
const SMALL_BYTES: usize = 16;

/// A hash of everything ranks compare of a collective call (see `CollectiveCall`'s `eq`):
/// equal calls have equal keys (the names are `'static`, hashed by where they are, so that the
/// same name always hashes alike); different keys send the reader to the whole call.
fn call_key(call: &Option<CollectiveCall>) -> u64 {
    let Some(c) = call else {
        return 0;
    };
    let mix = |h: u64, x: u64| (h.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    let name = |s: &'static str| s.as_ptr() as u64 ^ (s.len() as u64) << 48;
    [
        u64::from(c.seq),
        c.root.map_or(u64::MAX, |r| r as u64),
        c.bytes.map_or(u64::MAX, |b| b as u64),
        name(c.operation),
        c.reduction.map_or(u64::MAX, name),
    ]
    .into_iter()
    .fold(0x243f_6a88_85a3_08d3, mix)
}

/// Asks the core for the cache line at `slot` in the exclusive state, as a write would, without
/// waiting for it: the owner of a slot takes its first line (stamp, post, small data) back from
/// the readers this way some steps before it posts there. On 2 cores, a 2-rank 8-byte
/// broadcast took 0.128 us a call without it and 0.079 with it 32 steps ahead (the post's
/// stores had stalled on that line); a hint only — nothing is read or written.
#[inline(always)]
fn prefetch_for_write(slot: &Slot) {
    let line: *const Slot = slot;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetchw` only moves a cache line (a NOP where the CPU lacks it, as x86 decodes
    // it since the 3DNow! days); it never faults, reads or writes no register but its address,
    // and leaves the flags alone.
    unsafe {
        std::arch::asm!("prefetchw [{}]", in(reg) line, options(nostack, preserves_flags, readonly));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `prfm` is a hint: it never faults and changes no register, flag or memory.
    unsafe {
        std::arch::asm!("prfm pstl1keep, [{}]", in(reg) line, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = line;
}

/// One of a member's slots: the stamp of the step posted in it, the post, and room for its
/// bytes. The first cache line holds the stamp, the post and the smallest data; a reader goes
/// further only for larger data, or for the whole call when its key differs.
#[repr(C)]
struct Slot {
    /// `s + 1` once the post of step `s` is here (written by the owner, `Release`).
    stamp: AtomicU64,
    /// The post of the step that uses the slot.
    post: UnsafeCell<Post>,
    /// The smallest posts' bytes (aligned to 16 by the layout: 8 + 40 bytes before it).
    small: UnsafeCell<[MaybeUninit<u128>; SMALL_BYTES / 16]>,
    /// The collective call of the post.
    call: UnsafeCell<Option<CollectiveCall>>,
    /// Small posts' bytes.
    inline: UnsafeCell<Line>,
    /// Larger copied posts' bytes; grown by the owner only while nobody reads the slot.
    storage: UnsafeCell<Vec<Line>>,
}

/// Members parked until something happens, to be woken through their mailboxes.
struct Waiters {
    list: Mutex<Vec<usize>>,
    any: AtomicBool,
}

impl Waiters {
    fn new() -> Self {
        Waiters {
            list: Mutex::new(Vec::new()),
            any: AtomicBool::new(false),
        }
    }

    /// Adds member `me`; the fence after it pairs with the one in [`Waiters::wake`]: either the
    /// waiter's next look sees what it waits for, or the notifier sees the waiter.
    fn register(&self, me: usize) {
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        // once: a member may register again after a `Wake` that was not this list's (a lane
        // producer's), while it is still on it
        if !list.contains(&me) {
            list.push(me);
        }
        self.any.store(true, Ordering::Relaxed);
        drop(list);
        fence(Ordering::SeqCst);
    }

    /// Wakes every waiter (call after the store they may wait for), through its mailbox.
    fn wake(&self, fabric: &Fabric, world: &[usize]) {
        fence(Ordering::SeqCst);
        if !self.any.load(Ordering::Relaxed) {
            return;
        }
        let waiters = {
            let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
            self.any.store(false, Ordering::Relaxed);
            std::mem::take(&mut *list)
        };
        for w in waiters {
            let _ = fabric.mailbox(world[w]).send(Envelope::Wake);
        }
    }
}

/// How many members have posted, and are done with, the steps of one slot index: a wait for
/// every member at once waits for one count and is woken once, by the member that completes
/// it, instead of once per member it finds missing (only kept for many ranks, see
/// [`TOTALS_FROM`]: the count is a write to one shared line per member and step).
struct Totals {
    posted: AtomicU64,
    done: AtomicU64,
    waiters: Waiters,
}

/// From this many ranks on, waits for every member use [`Totals`].
const TOTALS_FROM: usize = 16;

/// What a member's step counters and wake-up list are (one cache line of their own, apart
/// from the slots that readers poll).
struct Member {
    /// Steps finished: it no longer reads others' posts of them (written by the owner).
    done: AtomicU64,
    /// Members parked until this one bumps a stamp or `done`.
    waiters: Waiters,
    /// Readers inside this member's lent post right now.
    reading: AtomicUsize,
    /// `s + 1` once this member withdrew its lent post of step `s` (the run is aborting).
    withdrawn: AtomicU64,
}

/// What only the owner touches: its step count, the least `done` it has seen of anyone, and
/// how many of its steps it has compared with its successor's (see [`Log`]).
struct Own {
    next_step: AtomicU64,
    min_done_seen: AtomicU64,
    checked: AtomicU64,
}

/// The collective calls of a member's last `2 depth` steps, so that every step of every member
/// is compared with the same step of its successor (`me + 1`, around) — every member with every
/// other, by transitivity — even in steps where neither reads the other's post (ranks naming
/// different roots of a broadcast, say). The successor compares (`Arena::check_log`) each time
/// it learns that everyone is done with more steps (in `begin`, where it waits for that anyway),
/// and the last member out compares what is left (`Arena::drop`). The owner writes entry
/// `s % len` when it posts step `s`; the `Release` of its `done` count publishes it; it writes
/// that entry again only at step `s + 2 depth`, which needs every member done with step
/// `s + depth` — and its predecessor compares step `s` at the latest when it begins step
/// `s + depth`. So every step is compared before it is overwritten.
struct Log {
    /// The hash of each step's call ([`call_key`]): what is compared.
    keys: Box<[AtomicU64]>,
    /// Each step's call itself: read only to report a mismatch.
    calls: Box<[UnsafeCell<Option<CallKey>>]>,
}

impl Log {
    fn new(depth: usize) -> Self {
        Log {
            keys: (0..2 * depth).map(|_| AtomicU64::new(0)).collect(),
            calls: (0..2 * depth).map(|_| UnsafeCell::new(None)).collect(),
        }
    }

    fn at(&self, s: u64) -> usize {
        s as usize & (self.keys.len() - 1)
    }
}

/// One member's part of the arena.
struct Part {
    member: CachePadded<Member>,
    own: CachePadded<Own>,
    slots: Box<[CachePadded<Slot>]>,
    log: Log,
}

impl Part {
    fn new(depth: usize) -> Self {
        Part {
            member: CachePadded::new(Member {
                done: AtomicU64::new(0),
                waiters: Waiters::new(),
                reading: AtomicUsize::new(0),
                withdrawn: AtomicU64::new(0),
            }),
            own: CachePadded::new(Own {
                next_step: AtomicU64::new(0),
                min_done_seen: AtomicU64::new(0),
                checked: AtomicU64::new(0),
            }),
            log: Log::new(depth),
            slots: (0..depth)
                .map(|_| {
                    CachePadded::new(Slot {
                        stamp: AtomicU64::new(0),
                        post: UnsafeCell::new(Post::EMPTY),
                        small: UnsafeCell::new([MaybeUninit::uninit(); SMALL_BYTES / 16]),
                        call: UnsafeCell::new(None),
                        inline: UnsafeCell::new(EMPTY_LINE),
                        storage: UnsafeCell::new(Vec::new()),
                    })
                })
                .collect(),
        }
    }
}

impl Part {
    /// The slot of step `s`.
    fn slot(&self, s: u64) -> &Slot {
        // the length is a power of two (`depth`)
        &self.slots[s as usize & (self.slots.len() - 1)]
    }
}

/// The shared memory of one communicator's ranks.
pub(crate) struct Arena {
    /// The communicator's collective context (for deadlock reports).
    context: u32,
    /// The world rank of each member (to wake it through its mailbox).
    world: Box<[usize]>,
    parts: Box<[Part]>,
    /// Per slot index, for many ranks (see [`Totals`]).
    totals: Option<Box<[CachePadded<Totals>]>>,
    /// The run's fabric, to report a mismatch that the last member out finds ([`Log`]).
    fabric: Weak<Fabric>,
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("context", &self.context)
            .field("members", &self.world.len())
            .finish()
    }
}

// SAFETY: a slot's cells are written only by the member that owns it, and only while no other
// member reads them (the `done` guard of `Arena::begin`); readers reach them only after an
// `Acquire` load of the slot's stamp that saw the `Release` store following the write. Lent
// posts point at `T: Datatype` values, which are `Sync`, kept alive and unmodified until every
// reader is out (`Arena::lend`). Everything else is atomics or a mutex.
unsafe impl Sync for Arena {}
// SAFETY: as above; the raw pointers in posts are only read under that protocol.
unsafe impl Send for Arena {}

/// What a wait waits for: a member's post of a step (its slot's stamp), or its `done`.
#[derive(Debug, Clone, Copy)]
enum Until {
    Posted,
    Done,
}

impl Arena {
    /// The arena of a communicator whose collective context is `context`, with the members
    /// `world` (their world ranks, in communicator order).
    pub(crate) fn new(context: u32, world: &[usize], fabric: Weak<Fabric>) -> Self {
        Arena::with_depth(context, world, fabric, depth(world.len()))
    }

    /// An arena of `depth` slots per member (a power of two, at least 2).
    pub(crate) fn with_depth(
        context: u32,
        world: &[usize],
        fabric: Weak<Fabric>,
        depth: usize,
    ) -> Self {
        debug_assert!(depth.is_power_of_two() && depth >= 2);
        let totals = (world.len() >= TOTALS_FROM).then(|| {
            (0..depth)
                .map(|_| {
                    CachePadded::new(Totals {
                        posted: AtomicU64::new(0),
                        done: AtomicU64::new(0),
                        waiters: Waiters::new(),
                    })
                })
                .collect()
        });
        Arena {
            context,
            world: world.into(),
            parts: world.iter().map(|_| Part::new(depth)).collect(),
            totals,
            fabric,
        }
    }

    /// Begins member `me`'s next step by posting `data` copied into its slot (nothing if
    /// `None`). Waits first, if need be, until everyone has read the slot's previous post.
    /// The step ends — the member is done reading in it — when the returned [`Step`] drops.
    pub(crate) fn step<'a>(
        &'a self,
        ep: &'a Endpoint,
        me: usize,
        data: Option<(&[MaybeUninit<u8>], ElemType)>,
    ) -> Result<Step<'a>> {
        let step = self.begin(ep, me)?;
        let post = match data {
            None => Post::EMPTY,
            Some((bytes, elem)) => {
                let slot = step.own_slot();
                let dst: *mut u8 = if bytes.len() <= SMALL_BYTES {
                    slot.small.get().cast()
                } else if bytes.len() <= INLINE_BYTES {
                    slot.inline.get().cast()
                } else {
                    // SAFETY: the slot is this member's, and `begin` waited until every member
                    // was done with the step that used it last: nobody reads it now.
                    let storage = unsafe { &mut *slot.storage.get() };
                    let lines = bytes.len().div_ceil(SLOT_ALIGN);
                    if storage.len() < lines {
                        storage.resize(lines, EMPTY_LINE);
                    }
                    storage.as_mut_ptr().cast()
                };
                // SAFETY: `dst` has room for `bytes.len()` bytes (inline, or just grown), no
                // one reads it (as above), and a caller's slice cannot overlap memory that only
                // this arena owns.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast(), dst, bytes.len()) };
                Post {
                    data: dst,
                    bytes: bytes.len(),
                    elem: Some(elem),
                    key: 0,
                    lent: false,
                }
            }
        };
        self.publish(&step, post);
        crate::fault::point("shared: posted")?;
        Ok(step)
    }

    /// Begins member `me`'s next step by lending `data` in place (no copy) and runs `f` in it.
    /// Returns once every member is done with the step — so once nobody reads `data` — even
    /// when `f` fails; when the run aborts, or `f` panics, once the post is withdrawn and nobody
    /// is inside it (the caller's `data` may be freed right after, also by an unwind).
    pub(crate) fn lend<'a, R>(
        &'a self,
        ep: &'a Endpoint,
        me: usize,
        data: &[MaybeUninit<u8>],
        elem: ElemType,
        f: impl FnOnce(&Step<'a>) -> Result<R>,
    ) -> Result<R> {
        let step = self.begin(ep, me)?;
        let post = Post {
            data: data.as_ptr().cast(),
            bytes: data.len(),
            elem: Some(elem),
            key: 0,
            lent: true,
        };
        self.publish(&step, post);
        let loan = Loan {
            arena: self,
            ep,
            me,
            s: step.s,
        };
        let result = crate::fault::point("shared: lent").and_then(|()| f(&step));
        drop(step); // this member is done reading
        loan.end(result)
    }

    /// Withdraws member `me`'s lent post of step `s` and waits until no reader is inside it;
    /// readers that come later see the withdrawal and do not enter (a `SeqCst` Dekker pair with
    /// [`Step::read`]'s count).
    fn withdraw(&self, me: usize, s: u64) {
        let mine = &self.parts[me].member;
        mine.withdrawn.store(s + 1, Ordering::SeqCst);
        while mine.reading.load(Ordering::SeqCst) != 0 {
            std::thread::yield_now();
        }
    }

    /// Starts a step of member `me`: its number, once the slot it uses is free again (every
    /// member is done with the step `depth` before it).
    fn begin<'a>(&'a self, ep: &'a Endpoint, me: usize) -> Result<Step<'a>> {
        ep.check_live()?;
        crate::fault::point("shared: begin")?;
        let own = &self.parts[me].own;
        let s = own.next_step.load(Ordering::Relaxed);
        let depth = self.parts[me].slots.len() as u64;
        if let Some(last_use) = s.checked_sub(depth) {
            // `done` counters only grow: a minimum seen before still holds
            if own.min_done_seen.load(Ordering::Relaxed) <= last_use {
                self.wait_all(ep, me, last_use, Until::Done)?;
                let min = (0..self.parts.len())
                    .map(|r| self.parts[r].member.done.load(Ordering::Acquire))
                    .min()
                    .unwrap_or(u64::MAX);
                own.min_done_seen.store(min, Ordering::Relaxed);
            }
            self.check_log(ep, me, own.min_done_seen.load(Ordering::Relaxed))?;
        }
        own.next_step.store(s + 1, Ordering::Relaxed);
        // the slot this member writes `depth / 8` steps from now: ask for its first line now, so
        // that taking it back from the readers (who read it `depth` steps ago) overlaps with
        // the steps between instead of stalling the post
        prefetch_for_write(self.parts[me].slot(s + depth / 8));
        Ok(Step {
            arena: self,
            ep,
            me,
            s,
            key: call_key(&ep.collective()),
            unwoken: Cell::new(false),
        })
    }

    /// Writes `post` into the step's slot and publishes it. Members parked until it is there
    /// are woken later, once — when this member is about to wait itself ([`Step::flush`]) or
    /// when it is done with the step — rather than here: a waker's fence per step saved, and only
    /// waiters that have used up their poll budget (parked) need a wake-up at all.
    fn publish(&self, step: &Step<'_>, post: Post) {
        let slot = step.own_slot();
        // SAFETY: as in `step`: this member's slot, free since `begin`.
        let call = step.ep.collective();
        let log = &self.parts[step.me].log;
        let at = log.at(step.s);
        // SAFETY: as in `step`: this member's slot, free since `begin`; the log entry is
        // this member's too, and nobody reads it until its `done` count says the step is over
        // (`Log`: the entry is not read again once it is this old).
        unsafe {
            *slot.post.get() = Post {
                key: step.key,
                ..post
            };
            *slot.call.get() = call;
            *log.calls[at].get() = call.as_ref().map(CallKey::from);
        }
        log.keys[at].store(step.key, Ordering::Relaxed);
        slot.stamp.store(step.s + 1, Ordering::Release);
        self.count(step.ep.fabric(), step.s, Until::Posted);
        step.unwoken.set(true);
    }

    /// Counts one more member that posted (or is done with) step `s`, for [`Totals`]; the one
    /// that completes the count wakes those who wait for it.
    fn count(&self, fabric: &Fabric, s: u64, what: Until) {
        let Some(totals) = &self.totals else {
            return;
        };
        let t = &totals[s as usize % totals.len()];
        let counter = match what {
            Until::Posted => &t.posted,
            Until::Done => &t.done,
        };
        if counter.fetch_add(1, Ordering::AcqRel) + 1 == self.complete(s, totals.len()) {
            t.waiters.wake(fabric, &self.world);
        }
    }

    /// The count of a slot index's [`Totals`] once every member has posted (or is done with)
    /// step `s`: each generation of the index adds one per member.
    fn complete(&self, s: u64, depth: usize) -> u64 {
        (s / depth as u64 + 1) * self.parts.len() as u64
    }

    /// Compares member `me`'s calls of its steps below `upto` (every member is done with them)
    /// with its successor's, from where it stopped last (see [`Log`]); a difference aborts the
    /// run with [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch).
    fn check_log(&self, ep: &Endpoint, me: usize, upto: u64) -> Result<()> {
        let next = (me + 1) % self.parts.len();
        let own = &self.parts[me].own;
        let from = own.checked.load(Ordering::Relaxed);
        if next == me || from >= upto {
            return Ok(());
        }
        own.checked.store(upto, Ordering::Relaxed);
        match self.first_difference(me, next, from..upto) {
            None => Ok(()),
            Some((mine, theirs)) => Err(ep.collective_mismatch(self.context / 2, mine, theirs)),
        }
    }

    /// The first step in `steps` whose call differs between members `a` and `b`, as the two
    /// calls. Both must have posted every step in `steps`, recently enough (see [`Log`]).
    fn first_difference(
        &self,
        a: usize,
        b: usize,
        steps: std::ops::Range<u64>,
    ) -> Option<(CollectiveCall, (usize, CollectiveCall))> {
        let (la, lb) = (&self.parts[a].log, &self.parts[b].log);
        let s = steps.into_iter().find(|&s| {
            la.keys[la.at(s)].load(Ordering::Relaxed) != lb.keys[lb.at(s)].load(Ordering::Relaxed)
        })?;
        // SAFETY: entries of posted steps that are not overwritten yet (the caller's promise),
        // published to this thread by the `Acquire` loads of the members' `done` counts (or by
        // their departure: see `Drop`).
        let (ca, cb) = unsafe { (*la.calls[la.at(s)].get(), *lb.calls[lb.at(s)].get()) };
        let describe = |c: Option<CallKey>, rank: usize, step: u64| {
            c.map_or_else(
                || CollectiveCall {
                    rank,
                    seq: step as u32,
                    operation: "a step outside any collective call",
                    root: None,
                    reduction: None,
                    bytes: None,
                },
                |k| k.call(rank),
            )
        };
        Some((describe(ca, a, s), (b, describe(cb, b, s))))
    }

    /// Waits until every member has posted step `s` (or is done with it): on one count when
    /// there are [`Totals`], else member by member.
    fn wait_all(&self, ep: &Endpoint, me: usize, s: u64, until: Until) -> Result<()> {
        let Some(totals) = &self.totals else {
            return (0..self.parts.len()).try_for_each(|r| self.wait(ep, me, r, s, until));
        };
        let t = &totals[s as usize % totals.len()];
        let complete = self.complete(s, totals.len());
        let ready = || {
            let counter = match until {
                Until::Posted => &t.posted,
                Until::Done => &t.done,
            };
            counter.load(Ordering::Acquire) >= complete
        };
        if ready() {
            return Ok(());
        }
        // described as waiting for the first member that has not got there
        let missing = (0..self.parts.len())
            .find(|&r| !self.reached(r, s, until))
            .unwrap_or(me);
        let waiting = Waiting::Shared {
            context: self.context,
            member: missing,
        };
        ep.wait_until(waiting, ready, || t.waiters.register(me))
    }

    /// Whether member `r` has posted step `s` (or is done with it).
    fn reached(&self, r: usize, s: u64, until: Until) -> bool {
        let part = &self.parts[r];
        match until {
            Until::Posted => part.slot(s).stamp.load(Ordering::Acquire) > s,
            Until::Done => part.member.done.load(Ordering::Acquire) > s,
        }
    }

    /// Waits until member `r` has posted step `s` (its slot's stamp) or is done with it.
    fn wait(&self, ep: &Endpoint, me: usize, r: usize, s: u64, until: Until) -> Result<()> {
        let ready = || self.reached(r, s, until);
        if ready() {
            return Ok(());
        }
        let waiting = Waiting::Shared {
            context: self.context,
            member: r,
        };
        ep.wait_until(waiting, ready, || self.parts[r].member.waiters.register(me))
    }
}

impl Arena {
    /// For an arena that not every member took (the fabric held it to the end of the run): a
    /// mismatch if some member made steps in it, which the members that never took it did not.
    pub(crate) fn unjoined(&self) -> Option<Error> {
        let (r, part) = self
            .parts
            .iter()
            .enumerate()
            .find(|(_, part)| part.own.next_step.load(Ordering::Relaxed) > 0)?;
        let log = &part.log;
        // SAFETY: step 0 of member `r`, posted; every member's thread has ended.
        let call = unsafe { *log.calls[log.at(0)].get() };
        Some(Error::CollectiveMismatch {
            communicator: self.context / 2,
            calls: vec![(
                r,
                call.map_or_else(|| "a collective call".into(), |k| k.call(r).to_string()),
            )],
        })
    }
}

impl Drop for Arena {
    /// The last member out compares what the members' successors did not (their last steps,
    /// see [`Log`]), and whether every member made as many steps; a difference is a collective
    /// mismatch, reported as the run's error if nothing else fails (a member that failed may
    /// have left early). Nobody else holds the arena now: every member's writes happened before
    /// its reference was dropped, which this drop comes after.
    fn drop(&mut self) {
        let Some(fabric) = self.fabric.upgrade() else {
            return;
        };
        if fabric.is_aborted() || std::thread::panicking() {
            return;
        }
        let p = self.parts.len();
        for a in 0..p {
            let b = (a + 1) % p;
            if a == b {
                continue;
            }
            let steps = |r: usize| self.parts[r].own.next_step.load(Ordering::Relaxed);
            let from = self.parts[a].own.checked.load(Ordering::Relaxed);
            let (na, nb) = (steps(a), steps(b));
            let mismatch = match self.first_difference(a, b, from..na.min(nb)) {
                Some((mine, theirs)) => Some(Error::CollectiveMismatch {
                    communicator: self.context / 2,
                    calls: vec![(a, mine.to_string()), (theirs.0, theirs.1.to_string())],
                }),
                None if na != nb => {
                    let (more, fewer) = if na > nb { (a, b) } else { (b, a) };
                    let last = na.max(nb) - 1;
                    let log = &self.parts[more].log;
                    // SAFETY: the last step of `more`, posted, published as above
                    let call = unsafe { *log.calls[log.at(last)].get() };
                    Some(Error::CollectiveMismatch {
                        communicator: self.context / 2,
                        calls: vec![
                            (more, call.map_or_else(|| "a collective call".into(), |k| k.call(more).to_string())),
                            (fewer, format!("no such call (it made {} shared-memory steps on this communicator, rank {more} {})", na.min(nb), na.max(nb))),
                        ],
                    })
                }
                None => None,
            };
            if let Some(err) = mismatch {
                fabric.note_unmatched(err);
                return;
            }
        }
    }
}

/// One member's step of a shared-memory collective: it has posted, and reads others' posts.
/// Dropping it marks the member done with the step.
pub(crate) struct Step<'a> {
    arena: &'a Arena,
    ep: &'a Endpoint,
    me: usize,
    s: u64,
    /// The key of the collective call this member is in (the call itself is the endpoint's).
    key: u64,
    /// Whether this member's post is published but those parked until it came not yet woken.
    unwoken: Cell<bool>,
}

impl std::fmt::Debug for Step<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Step")
            .field("member", &self.me)
            .field("step", &self.s)
            .finish()
    }
}

impl Step<'_> {
    fn own_slot(&self) -> &Slot {
        self.arena.parts[self.me].slot(self.s)
    }

    /// Wakes the members parked until this member's post came, if that is still to do: before
    /// this member waits itself (a member never waits while others may wait, parked, for what
    /// it has done — so no wake-up is held back for long) and when the step ends.
    fn flush(&self) {
        if self.unwoken.replace(false) {
            let arena = self.arena;
            arena.parts[self.me]
                .member
                .waiters
                .wake(self.ep.fabric(), &arena.world);
        }
    }

    /// The number of this step among the member's steps on the communicator (0, 1, …).
    pub(crate) fn number(&self) -> u64 {
        self.s
    }

    /// Looks, without waiting, at the post of the next member (`me + 1`, around) if it is
    /// there, and fails as [`Step::read`] does if that member is in another collective call.
    /// For the ranks of a rooted collective that read no post or only the root's: where ranks
    /// disagree about the root, some rank then sees a neighbour that disagrees (one that
    /// disagrees with nobody's neighbour agrees with everybody), unless that neighbour has not
    /// posted yet.
    pub(crate) fn check_next(&self) -> Result<()> {
        let r = (self.me + 1) % self.arena.parts.len();
        let slot = self.arena.parts[r].slot(self.s);
        if r == self.me || slot.stamp.load(Ordering::Acquire) <= self.s {
            return Ok(());
        }
        // SAFETY: as in `read`: the stamp says the post of this step is there, and its owner
        // cannot write the slot again while this member is not done with the step.
        let post = unsafe { *slot.post.get() };
        if post.key != self.key {
            // SAFETY: as above.
            let theirs = unsafe { *slot.call.get() };
            if theirs != self.ep.collective() {
                return Err(self.mismatch(r, theirs));
            }
        }
        Ok(())
    }

    /// Waits until every member has posted this step (one wait, where many single ones would
    /// each park and be woken): for algorithms that read every post.
    pub(crate) fn await_all(&self) -> Result<()> {
        if self.arena.totals.is_none() {
            return Ok(()); // few members: `read` waits for each, which costs no more
        }
        self.flush();
        self.arena.wait_all(self.ep, self.me, self.s, Until::Posted)
    }

    /// Waits for member `r`'s post of this step, checks that `r` is in the same collective call
    /// (else the run aborts with [`Error::CollectiveMismatch`](crate::Error)), and runs `f` on
    /// the post; its bytes may be read during `f` (and only then).
    pub(crate) fn read<R>(&self, r: usize, f: impl FnOnce(&Post) -> Result<R>) -> Result<R> {
        crate::fault::point("shared: read")?;
        let arena = self.arena;
        if !arena.reached(r, self.s, Until::Posted) {
            self.flush();
            arena.wait(self.ep, self.me, r, self.s, Until::Posted)?;
        }
        let part = &arena.parts[r];
        let slot = part.slot(self.s);
        // SAFETY: the slot's stamp `> s` was seen with Acquire, so the owner's writes of this
        // post and its call are visible, and the owner does not write the slot again until this
        // member is done with the step (this `Step` is alive).
        let post = unsafe { *slot.post.get() };
        if post.key != self.key {
            // SAFETY: as above.
            let theirs = unsafe { *slot.call.get() };
            if theirs != self.ep.collective() {
                return Err(self.mismatch(r, theirs));
            }
        }
        if !post.lent || r == self.me {
            return f(&post);
        }
        // a lent post: count ourselves in, then make sure it was not withdrawn
        let member = &part.member;
        member.reading.fetch_add(1, Ordering::SeqCst);
        let _inside = Inside(&member.reading);
        if member.withdrawn.load(Ordering::SeqCst) > self.s {
            return Err(self.ep.fabric().abort_error());
        }
        crate::fault::panic_point("shared: inside a lent post");
        f(&post)
    }
}

impl Step<'_> {
    /// The error of a post of member `r` from the call `theirs`, not this member's: a collective
    /// mismatch, which aborts the run.
    fn mismatch(&self, r: usize, theirs: Option<CollectiveCall>) -> crate::Error {
        match (self.ep.collective(), theirs) {
            (Some(mine), Some(theirs)) => {
                self.ep
                    .collective_mismatch(self.arena.context / 2, mine, (r, theirs))
            }
            _ => crate::Error::invalid(
                "a shared-memory collective",
                "a post outside any collective call",
            ),
        }
    }
}

impl Drop for Step<'_> {
    fn drop(&mut self) {
        let arena = self.arena;
        let fabric = self.ep.fabric();
        arena.parts[self.me]
            .member
            .done
            .store(self.s + 1, Ordering::Release);
        arena.count(fabric, self.s, Until::Done);
        arena.parts[self.me]
            .member
            .waiters
            .wake(fabric, &arena.world);
    }
}

/// A member's lent post, from its publication until nobody reads it any more. Ended by
/// [`Loan::end`]; dropped without it, the lender is unwinding from a panic: the post is
/// withdrawn at once (after aborting the run, so that the readers turned away report the
/// lender's panic and not a failure of their own), before the unwind frees the buffer.
struct Loan<'a> {
    arena: &'a Arena,
    ep: &'a Endpoint,
    me: usize,
    s: u64,
}

impl Loan<'_> {
    /// Waits until every member is done with the step (or, when the run aborts meanwhile,
    /// withdraws the post), then returns `result`.
    fn end<R>(self, result: Result<R>) -> Result<R> {
        let released = self.arena.wait_all(self.ep, self.me, self.s, Until::Done);
        if released.is_err() {
            self.arena.withdraw(self.me, self.s);
        }
        std::mem::forget(self); // ended: nobody reads the post any more
        released.and(result)
    }
}

impl Drop for Loan<'_> {
    fn drop(&mut self) {
        self.ep.fabric().abort_unwinding(self.ep.world_rank());
        self.arena.withdraw(self.me, self.s);
    }
}

/// A reader inside a lent post; counts itself out when dropped (also when unwinding).
struct Inside<'a>(&'a AtomicUsize);

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
