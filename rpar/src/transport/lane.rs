//! [`Lane`]: a single-producer/single-consumer unbounded queue from one rank to another, beside
//! the receiver's mailbox, and [`Inbox`]: what a lane's producer must know of its receiver
//! (parked? finished?). See `README.md` beside this file, "Lanes", for why and how they are used;
//! the queue is crossbeam-channel's `flavors/list.rs` cut down to one producer and one consumer.
//!
//! A lane is a chain of blocks of [`BLOCK_SLOTS`] slots. Each slot holds a value and a `state`
//! flag. The producer writes the value, then stores `state` with `Release`; the consumer loads
//! `state` with `Acquire` and then moves the value out. A small value ([`Pack`]: an envelope of
//! a point-to-point message with inline data or an owned buffer) travels in the slot's first
//! cache line, beside the flag, so that it costs the transfer of one line; a larger one in the
//! lines after it. The producer's position (`tail`) and the
//! consumer's (`head`) are each touched by one side only, so there is no compare-exchange and no
//! shared counter: a message costs the transfer of the cache lines of its slot and nothing more.
//! When the producer has filled a block it links a fresh one (`next`, `Release`); the consumer
//! follows the link (`Acquire`) once it has emptied a block, and hands the empty block back as
//! the lane's `spare`, which the producer takes for its next block: a busy lane allocates nothing.
//!
//! Invariants (every `unsafe` block below relies on them):
//!
//! 1. Only the [`Producer`] touches `tail` and only the [`Consumer`] touches `head`; each is
//!    unique (neither is `Clone`) and borrowed mutably while it does. Without either (`&mut
//!    Lane`: the sweep and `Drop`), the holder is the only one left.
//! 2. A slot is written once per use of its block, by the producer, while it is `EMPTY`; the
//!    consumer reads it only after seeing it `SMALL` or `FULL`, once, and moves on. So a value is
//!    never read twice, never read uninitialised, and never written while read.
//! 3. A block is freed or recycled only by the consumer side, only after `head` has left it,
//!    which requires its `next` to be set, which the producer does only once `tail` has left
//!    it: neither side ever touches a block the other has given up.

#[cfg(not(loom))]
use self::cell::UnsafeCell;
use crossbeam_utils::CachePadded;
#[cfg(loom)]
use loom::{
    cell::UnsafeCell,
    sync::atomic::{fence, AtomicPtr, AtomicU32, AtomicU8, Ordering},
    sync::Arc,
};
use std::mem::MaybeUninit;
use std::ptr::null_mut;
#[cfg(not(loom))]
use std::sync::{
    atomic::{fence, AtomicPtr, AtomicU32, AtomicU8, Ordering},
    Arc,
};

/// Slots per block: 16 slots of 192 bytes (the flag and a small value, then a large one) make
/// a 3 KiB block.
#[cfg(not(loom))]
const BLOCK_SLOTS: usize = 16;
/// In the loom models, one value per block, so that every value crosses a block boundary and
/// the third reuses the first block.
#[cfg(loom)]
const BLOCK_SLOTS: usize = 1;

/// What a lane carries: values with a compact form that fits in a slot's first cache line
/// beside the flag ([`Pack::Small`], at most 56 bytes), and others.
pub(crate) trait Pack: Sized {
    /// The compact form of a small value.
    type Small;
    /// The compact form of `self`, or `self` back if it is not small.
    fn pack(self) -> Result<Self::Small, Self>;
    /// The value again, from its compact form.
    fn unpack(small: Self::Small) -> Self;
}

/// A slot's state: nothing there yet (or any more; the consumer does not clear it).
const EMPTY: u8 = 0;
/// A slot's state: a small value, in the first line.
const SMALL: u8 = 1;
/// A slot's state: a value in full, after the first line.
const FULL: u8 = 2;

/// The first cache line of a slot: its state, and the value if it is small.
#[repr(C, align(64))]
struct Head<S> {
    state: AtomicU8,
    small: UnsafeCell<MaybeUninit<S>>,
}

/// One value of the queue and whether it is there: the state and a small value share the first
/// cache line, which is all that a small value moves between cores.
#[repr(C)]
struct Slot<T: Pack> {
    head: Head<T::Small>,
    full: UnsafeCell<MaybeUninit<T>>,
}

impl<T: Pack> Slot<T> {
    /// The compiler checks that a small value leaves the state in its line (loom's atomics and
    /// cells are larger, so not in the models).
    const SMALL_FITS: () = assert!(cfg!(loom) || std::mem::size_of::<Head<T::Small>>() == 64);
}

struct Block<T: Pack> {
    slots: [Slot<T>; BLOCK_SLOTS],
    next: AtomicPtr<Block<T>>,
}

impl<T: Pack> Block<T> {
    /// A fresh block on the heap, every slot empty.
    fn allocate() -> *mut Block<T> {
        Box::into_raw(Box::new(Block {
            slots: std::array::from_fn(|_| Slot {
                head: Head {
                    state: AtomicU8::new(EMPTY),
                    small: UnsafeCell::new(MaybeUninit::uninit()),
                },
                full: UnsafeCell::new(MaybeUninit::uninit()),
            }),
            next: AtomicPtr::new(null_mut()),
        }))
    }
}

/// A place in the chain of blocks.
struct Position<T: Pack> {
    block: *mut Block<T>,
    index: usize,
}

/// The shared state of one lane; used through its [`Producer`] and [`Consumer`].
pub(crate) struct Lane<T: Pack> {
    /// The consumer's position (invariant 1).
    head: CachePadded<UnsafeCell<Position<T>>>,
    /// The producer's position (invariant 1).
    tail: CachePadded<UnsafeCell<Position<T>>>,
    /// An emptied block for the producer's next one, or null.
    spare: AtomicPtr<Block<T>>,
}

// SAFETY: a `Lane` moves values of `T` from the producer's thread to the consumer's (so `T:
// Send`); its raw pointers are to blocks that it owns, and the positions behind them are touched
// by one handle each (invariant 1), so sharing the lane between two threads shares no
// unsynchronised data.
unsafe impl<T: Pack + Send> Send for Lane<T> where T::Small: Send {}
// SAFETY: as above (a small value is a `T` in another form, and `Send` too).
unsafe impl<T: Pack + Send> Sync for Lane<T> where T::Small: Send {}

/// The sending end of a lane (one per lane; kept by the sender).
pub(crate) struct Producer<T: Pack>(Arc<Lane<T>>);

/// The receiving end of a lane (one per lane; kept by the receiver).
pub(crate) struct Consumer<T: Pack>(Arc<Lane<T>>);

/// A lane as whoever sweeps it once both ends are gone keeps it.
pub(crate) struct Kept<T: Pack>(Arc<Lane<T>>);

impl<T: Pack> Kept<T> {
    /// The lane, if both its ends are gone.
    pub(crate) fn alone(&mut self) -> Option<&mut Lane<T>> {
        Arc::get_mut(&mut self.0)
    }
}

/// A new lane: its two ends, and the lane itself for whoever sweeps it once both are gone.
pub(crate) fn lane<T: Pack>() -> (Producer<T>, Consumer<T>, Kept<T>) {
    let first = Block::allocate();
    let lane = Arc::new(Lane {
        head: CachePadded::new(UnsafeCell::new(Position {
            block: first,
            index: 0,
        })),
        tail: CachePadded::new(UnsafeCell::new(Position {
            block: first,
            index: 0,
        })),
        spare: AtomicPtr::new(null_mut()),
    });
    (Producer(lane.clone()), Consumer(lane.clone()), Kept(lane))
}

impl<T: Pack> Lane<T> {
    /// Producer: a block to link after the full one: the spare if there is one, else a new one.
    fn fresh_block(&self) -> *mut Block<T> {
        // Acquire: the consumer's last reads of the block happen before our writes to it
        let block = self.spare.swap(null_mut(), Ordering::Acquire);
        if block.is_null() {
            return Block::allocate();
        }
        // SAFETY: the consumer gave the block up (invariant 3) and the swap took it out of
        // `spare`, so it is ours alone. Every slot was read (its value moved out, so there is
        // nothing to drop): clear the flags. The consumer sees the cleared flags, since it reaches
        // the block only through the `Release` store of `next` that follows.
        unsafe {
            for slot in &(*block).slots {
                slot.head.state.store(EMPTY, Ordering::Relaxed);
            }
            (*block).next.store(null_mut(), Ordering::Relaxed);
        }
        block
    }

    /// Consumer side: gives back a block that `head` has left.
    ///
    /// # Safety
    ///
    /// `block` must have been left by `head` (so every slot of it was read, and the producer
    /// left it too: invariant 3), and be given back once.
    unsafe fn recycle(&self, block: *mut Block<T>) {
        // Release: our reads of the block happen before the producer reuses it
        let old = self.spare.swap(block, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: a block in `spare` belongs to no position, and the swap took it out, so
            // nothing else can reach it; it came from `Box::into_raw` in `allocate`.
            drop(unsafe { Box::from_raw(old) });
        }
    }

    /// Consumer side: the next value, if one is there.
    ///
    /// # Safety
    ///
    /// The caller must be the only consumer (the [`Consumer`], borrowed mutably, or the holder
    /// of `&mut Lane`): invariant 1.
    #[inline]
    unsafe fn take(&self) -> Option<T> {
        self.head.with_mut(|head| {
            // SAFETY: only the consumer touches `head` (this function's contract).
            let head = unsafe { &mut *head };
            if head.index == BLOCK_SLOTS {
                // SAFETY: `head.block` is live: only this side frees it, after leaving it.
                let next = unsafe { (*head.block).next.load(Ordering::Acquire) };
                if next.is_null() {
                    return None;
                }
                let done = std::mem::replace(&mut head.block, next);
                head.index = 0;
                // SAFETY: `head` has just left `done`, whose every slot it read; the producer
                // set `next`, so it left `done` too.
                unsafe { self.recycle(done) };
            }
            // SAFETY: `head.block` is live (as above) and `head.index < BLOCK_SLOTS`.
            let slot = unsafe { &(*head.block).slots[head.index] };
            let state = slot.head.state.load(Ordering::Acquire);
            if state == EMPTY {
                return None;
            }
            // the slot is read now: move past it first, so that nothing can read it again
            head.index += 1;
            Some(if state == SMALL {
                // SAFETY: the state (Acquire, pairing with the producer's Release) says the
                // small value was written and published; it is read once (invariant 2).
                T::unpack(slot.head.small.with(|v| unsafe { (*v).assume_init_read() }))
            } else {
                // SAFETY: as above, for the value in full.
                slot.full.with(|v| unsafe { (*v).assume_init_read() })
            })
        })
    }

    /// The next value left in a lane that nobody produces into or consumes from any more.
    pub(crate) fn take_left(&mut self) -> Option<T> {
        // SAFETY: `&mut self`: no producer or consumer is left (invariant 1).
        unsafe { self.take() }
    }
}

impl<T: Pack> Drop for Lane<T> {
    fn drop(&mut self) {
        while let Some(value) = self.take_left() {
            drop(value);
        }
        // now `head` is at the end of what was written: its block is the last of the chain
        // (the producer links a block only when it writes into it)
        let (last, spare) = (
            self.head.with_mut(|head| {
                // SAFETY: `&mut self`: nobody else touches `head`.
                unsafe { (*head).block }
            }),
            self.spare.swap(null_mut(), Ordering::Relaxed),
        );
        for block in [last, spare] {
            if !block.is_null() {
                // SAFETY: `&mut self`: the lane owns these blocks alone; each came from
                // `Box::into_raw`, and they differ (the spare is never a position's block).
                drop(unsafe { Box::from_raw(block) });
            }
        }
    }
}

impl<T: Pack> Producer<T> {
    /// Appends `value` and publishes it (`Release`). Never blocks; allocates only when a block
    /// is full and the consumer has not handed one back.
    #[inline]
    pub(crate) fn push(&mut self, value: T) {
        let () = Slot::<T>::SMALL_FITS;
        let lane = &*self.0;
        lane.tail.with_mut(|tail| {
            // SAFETY: only the producer touches `tail`, and `&mut self` makes this the only call.
            let tail = unsafe { &mut *tail };
            if tail.index == BLOCK_SLOTS {
                let next = lane.fresh_block();
                // SAFETY: `tail.block` is live: the consumer gives a block up only after leaving
                // it, which needs this very link (invariant 3).
                unsafe { (*tail.block).next.store(next, Ordering::Release) };
                *tail = Position {
                    block: next,
                    index: 0,
                };
            }
            // SAFETY: `tail.block` is live (as above) and `tail.index < BLOCK_SLOTS`.
            let slot = unsafe { &(*tail.block).slots[tail.index] };
            // the slot at `tail` is `EMPTY`, so the consumer does not read it; the producer
            // writes it once (invariant 2), before it publishes it just below
            let state = match value.pack() {
                Ok(small) => {
                    // SAFETY: see above: the small value is written once, unread until published.
                    slot.head.small.with_mut(|v| unsafe { (*v).write(small) });
                    SMALL
                }
                Err(value) => {
                    // SAFETY: see above: the value in full is written once, unread until published.
                    slot.full.with_mut(|v| unsafe { (*v).write(value) });
                    FULL
                }
            };
            slot.head.state.store(state, Ordering::Release);
            tail.index += 1;
        });
    }
}

impl<T: Pack> Consumer<T> {
    /// The next value, if one is there (`Acquire`).
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        // SAFETY: `&mut self` on the one consumer (invariant 1).
        unsafe { self.0.take() }
    }
}

impl<T: Pack> std::fmt::Debug for Lane<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane").finish_non_exhaustive()
    }
}

impl<T: Pack> std::fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Kept").finish()
    }
}

impl<T: Pack> std::fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Producer").finish()
    }
}

impl<T: Pack> std::fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Consumer").finish()
    }
}

/// The receiver is parked on its mailbox: a producer that pushed must wake it.
const PARKED: u8 = 1;
/// The receiver has finished: nothing sent now will be received.
const CLOSED: u8 = 2;

/// What lane producers must know of a receiver: whether it is parked (then the producer that
/// sees it sends a `Wake` through the mailbox) or has finished, and how many lanes lead to it.
///
/// The receiver publishes `PARKED`, then a `SeqCst` fence, then looks at its lanes once more
/// before it parks; a producer stores a value's slot state, then a `SeqCst` fence, then reads
/// the state. Of two such fences one comes first in their single total order, so either the
/// receiver's last look sees the value or the producer sees `PARKED`: no wake-up is lost.
/// `CLOSED` and the receiver's last drain (`Endpoint::finish`) pair with a producer's push the
/// same way: either the drain takes the value or the producer learns that it may be left over.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    state: AtomicU8,
    lanes: AtomicU32,
}

/// What a producer learns after a push ([`Inbox::after_push`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Notice {
    /// The receiver was parked and this producer took on waking it: send it a `Wake`.
    pub(crate) wake: bool,
    /// The receiver has finished: the value may never be taken.
    pub(crate) closed: bool,
}

impl Inbox {
    /// Producer, before a push: whether the receiver has finished.
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Producer, after a push: the other half of the parking and closing handshakes.
    #[inline]
    pub(crate) fn after_push(&self) -> Notice {
        fence(Ordering::SeqCst);
        let state = self.state.load(Ordering::Relaxed);
        if state == 0 {
            return Notice {
                wake: false,
                closed: false,
            };
        }
        self.after_push_slow(state)
    }

    #[cold]
    fn after_push_slow(&self, state: u8) -> Notice {
        // of the producers that see the receiver parked, the one that clears the flag wakes it
        let wake =
            state & PARKED != 0 && self.state.fetch_and(!PARKED, Ordering::AcqRel) & PARKED != 0;
        Notice {
            wake,
            closed: state & CLOSED != 0,
        }
    }

    /// Producer, after a send through the receiver's mailbox: whether the receiver has
    /// finished (then its last drain may have missed the message, which stays in the mailbox
    /// for the sweep). The same pairing of fences as [`Inbox::after_push`].
    #[inline]
    pub(crate) fn closed_after_send(&self) -> bool {
        fence(Ordering::SeqCst);
        self.state.load(Ordering::Relaxed) & CLOSED != 0
    }

    /// Receiver: about to park. It must look at its lanes once more after this, and park only
    /// if they are empty (a push that this look misses sees `PARKED`).
    pub(crate) fn park(&self) {
        self.state.fetch_or(PARKED, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    /// Receiver: awake again (or did not park after all).
    pub(crate) fn unpark(&self) {
        self.state.fetch_and(!PARKED, Ordering::Relaxed);
    }

    /// Receiver: finished. It must drain its lanes and mailbox after this.
    pub(crate) fn close(&self) {
        self.state.fetch_or(CLOSED, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    /// Producer: reserves one of the `limit` lanes a receiver may have. False when all are taken
    /// (the pair then keeps to the mailbox).
    pub(crate) fn reserve_lane(&self, limit: u32) -> bool {
        self.lanes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then_some(n + 1)
            })
            .is_ok()
    }
}

/// `std::cell::UnsafeCell` with loom's interface, so that the same code runs in the models.
#[cfg(not(loom))]
mod cell {
    pub(super) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(super) const fn new(value: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(value))
        }

        #[inline(always)]
        pub(super) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        #[inline(always)]
        pub(super) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

/// Test values: even numbers travel small, odd ones in full, so that both ways are used.
#[cfg(test)]
impl Pack for u32 {
    type Small = u32;
    fn pack(self) -> Result<u32, u32> {
        if self.is_multiple_of(2) {
            Ok(self)
        } else {
            Err(self)
        }
    }
    fn unpack(small: u32) -> u32 {
        small
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Boxes travel small (the box itself), vectors of even length too, others in full.
    impl Pack for Box<u64> {
        type Small = Box<u64>;
        fn pack(self) -> Result<Self, Self> {
            Ok(self)
        }
        fn unpack(small: Self) -> Self {
            small
        }
    }

    impl Pack for Vec<u8> {
        type Small = Vec<u8>;
        fn pack(self) -> Result<Self, Self> {
            if self.len().is_multiple_of(2) {
                Ok(self)
            } else {
                Err(self)
            }
        }
        fn unpack(small: Self) -> Self {
            small
        }
    }

    #[test]
    fn values_come_out_in_order_across_blocks() {
        let (mut p, mut c, _) = lane::<u32>();
        for round in 0..5 {
            for i in 0..3 * BLOCK_SLOTS as u32 + 1 {
                p.push(round * 1000 + i);
            }
            for i in 0..3 * BLOCK_SLOTS as u32 + 1 {
                assert_eq!(c.pop(), Some(round * 1000 + i));
            }
            assert_eq!(c.pop(), None);
        }
    }

    #[test]
    fn values_left_over_are_dropped_once() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct Counted(bool);
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        impl Pack for Counted {
            type Small = Counted;
            fn pack(self) -> Result<Self, Self> {
                if self.0 {
                    Ok(self)
                } else {
                    Err(self)
                }
            }
            fn unpack(small: Self) -> Self {
                small
            }
        }
        let (mut p, mut c, lane) = lane::<Counted>();
        for i in 0..2 * BLOCK_SLOTS + 3 {
            p.push(Counted(i % 3 == 0));
        }
        for _ in 0..BLOCK_SLOTS + 1 {
            drop(c.pop());
        }
        assert_eq!(DROPS.load(Ordering::Relaxed), BLOCK_SLOTS + 1);
        drop((p, c, lane));
        assert_eq!(DROPS.load(Ordering::Relaxed), 2 * BLOCK_SLOTS + 3);
    }

    #[test]
    fn a_swept_lane_gives_what_was_left() {
        let (mut p, c, mut lane) = lane::<Vec<u8>>();
        for i in 0..BLOCK_SLOTS as u8 + 2 {
            p.push(vec![i; 2 + usize::from(i % 2)]);
        }
        drop((p, c));
        let lane = lane.alone().expect("both ends are gone");
        let left: Vec<_> = std::iter::from_fn(|| lane.take_left()).collect();
        assert_eq!(left.len(), BLOCK_SLOTS + 2);
        assert_eq!(left[BLOCK_SLOTS + 1], vec![BLOCK_SLOTS as u8 + 1; 3]);
        assert_eq!(left[BLOCK_SLOTS], vec![BLOCK_SLOTS as u8; 2]);
    }

    #[test]
    fn two_threads_pass_a_million_values_in_order() {
        let (mut p, mut c, _) = lane::<Box<u64>>();
        const N: u64 = 1_000_000;
        std::thread::scope(|s| {
            s.spawn(move || {
                for i in 0..N {
                    p.push(Box::new(i));
                }
            });
            let mut expected = 0;
            while expected < N {
                match c.pop() {
                    Some(v) => {
                        assert_eq!(*v, expected);
                        expected += 1;
                    }
                    None => std::hint::spin_loop(),
                }
            }
            assert_eq!(c.pop(), None);
        });
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    //! The lane and its handshakes, model-checked: `RUSTFLAGS="--cfg loom"
    //! CARGO_TARGET_DIR=target/loom cargo test -p rpar --lib lane`. A block holds one value
    //! here, so that each value crosses a block boundary and the third reuses the spare block.
    use super::*;
    use loom::sync::{Condvar, Mutex};
    use loom::thread;

    /// Runs `f` under loom with at most `bound` preemptions per execution (enough for these
    /// two-thread protocols, and it keeps the models to seconds).
    fn model(bound: usize, f: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(bound);
        builder.check(f);
    }

    #[test]
    fn values_cross_blocks_in_order_and_the_spare_block_is_reused_safely() {
        model(3, || {
            let (mut p, mut c, _) = lane::<u32>();
            let t = thread::spawn(move || {
                for i in 0..3 {
                    p.push(i);
                }
            });
            let mut next = 0;
            while next < 3 {
                match c.pop() {
                    Some(v) => {
                        assert_eq!(v, next);
                        next += 1;
                    }
                    None => thread::yield_now(),
                }
            }
            t.join().unwrap();
            assert_eq!(c.pop(), None);
        });
    }

    /// The mailbox, reduced to what parking needs: a count of `Wake`s and a condition variable.
    #[derive(Default)]
    struct Mailbox {
        wakes: Mutex<usize>,
        ready: Condvar,
    }

    impl Mailbox {
        fn wake(&self) {
            *self.wakes.lock().unwrap() += 1;
            self.ready.notify_one();
        }

        /// Blocks until a `Wake` is there, and takes it (`rx.recv()`).
        fn recv(&self) {
            let mut wakes = self.wakes.lock().unwrap();
            while *wakes == 0 {
                wakes = self.ready.wait(wakes).unwrap();
            }
            *wakes -= 1;
        }
    }

    #[test]
    fn a_parked_receiver_is_always_woken_and_gets_every_value_in_order() {
        model(3, || {
            let (mut p, mut c, _) = lane::<u32>();
            let inbox = Arc::new(Inbox::default());
            let mailbox = Arc::new(Mailbox::default());
            let (inbox2, mailbox2) = (inbox.clone(), mailbox.clone());
            // the producer: push, then the other half of the handshake (`Endpoint::deliver`)
            let t = thread::spawn(move || {
                for i in 0..2 {
                    p.push(i);
                    if inbox2.after_push().wake {
                        mailbox2.wake();
                    }
                }
            });
            // the receiver: look; if empty, park as `Endpoint::park` does (a lost wake-up
            // leaves it blocked for ever, which loom reports as a deadlock)
            let mut next = 0;
            while next < 2 {
                let got = match c.pop() {
                    Some(v) => Some(v),
                    None => {
                        inbox.park();
                        let v = c.pop();
                        if v.is_none() {
                            mailbox.recv();
                        }
                        inbox.unpark();
                        v
                    }
                };
                if let Some(v) = got {
                    assert_eq!(v, next);
                    next += 1;
                }
            }
            t.join().unwrap();
            assert_eq!(c.pop(), None);
        });
    }

    #[test]
    fn a_value_pushed_while_the_receiver_closes_is_drained_or_the_producer_knows() {
        model(3, || {
            let (mut p, mut c, mut lane) = lane::<u32>();
            let inbox = Arc::new(Inbox::default());
            let inbox2 = inbox.clone();
            // the producer: checks before it pushes and after, as `Endpoint::deliver` does;
            // returns the values it counted itself (never pushed) and those it learnt may be
            // left over
            let t = thread::spawn(move || {
                let (mut counted, mut warned) = (Vec::new(), Vec::new());
                for i in 0..2 {
                    if inbox2.is_closed() {
                        counted.push(i);
                        continue;
                    }
                    p.push(i);
                    if inbox2.after_push().closed {
                        warned.push(i);
                    }
                }
                (counted, warned)
            });
            // the receiver finishes at once: close, then drain (`Endpoint::finish`)
            inbox.close();
            let mut drained = Vec::new();
            while let Some(v) = c.pop() {
                drained.push(v);
            }
            drop(c);
            let (counted, warned) = t.join().unwrap();
            // the sweep after the run (`Fabric::sweep_unreceived`): what neither took
            let lane = lane.alone().expect("both ends are gone");
            let left: Vec<u32> = std::iter::from_fn(|| lane.take_left()).collect();
            // every value is counted exactly once
            let mut all: Vec<u32> = [&counted, &drained, &left]
                .into_iter()
                .flatten()
                .copied()
                .collect();
            all.sort_unstable();
            assert_eq!(all, vec![0, 1]);
            // a value left over is one whose producer learnt it might be (a rendezvous sender
            // then withdraws instead of waiting for a receiver that is gone)
            assert!(left.iter().all(|v| warned.contains(v)));
        });
    }
}
