//! [`Handoff`]: the state machine of a rendezvous, and [`Chunks`]: the pieces of a large copy
//! that its two sides share; alone, so that they can be model-checked with loom
//! (`RUSTFLAGS="--cfg loom" cargo test -p rpar --lib handoff`).
//!
//! ```text
//! PENDING --receiver claims--> COPYING --copy done--> DONE       (sender may reuse its buffer)
//! PENDING --sender withdraws (abort)--> CANCELLED              (receiver will not read)
//! PENDING --receiver drops it unread--> DROPPED                (sender gets an error)
//! ```
//!
//! The claim is an `AcqRel` compare-exchange; `DONE` is stored with `Release` and read with
//! `Acquire`, so the receiver's reads of the buffer happen before the sender sees `DONE`. A
//! withdrawal that loses the race to a claim waits out `COPYING`.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

const PENDING: u8 = 0;
const COPYING: u8 = 1;
const DONE: u8 = 2;
const CANCELLED: u8 = 3;
const DROPPED: u8 = 4;

/// How a hand-over ended, from the sender's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SendOutcome {
    /// Not finished yet.
    Pending,
    /// The receiver copied the data.
    Delivered,
    /// The receiver finished without receiving it.
    Dropped,
    /// The sender withdrew it (a cancelled send, or the run aborting).
    Withdrawn,
}

/// The shared state of one rendezvous.
#[derive(Debug)]
pub(crate) struct Handoff {
    state: AtomicU8,
}

impl Handoff {
    pub(crate) fn new() -> Self {
        Handoff {
            state: AtomicU8::new(PENDING),
        }
    }

    /// Receiver: takes the right to read the sender's buffer. False if withdrawn.
    pub(crate) fn claim(&self) -> bool {
        self.state
            .compare_exchange(PENDING, COPYING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Receiver: done reading (after a successful claim).
    pub(crate) fn complete(&self) {
        self.state.store(DONE, Ordering::Release);
    }

    /// Receiver: gives the offer up unread. True if it was still pending (the sender must be
    /// woken to learn it).
    pub(crate) fn drop_unread(&self) -> bool {
        self.state
            .compare_exchange(PENDING, DROPPED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Sender: whether the receiver is copying right now (`Acquire`: what the receiver wrote
    /// before its claim is visible after this returns true).
    pub(crate) fn copying(&self) -> bool {
        self.state.load(Ordering::Acquire) == COPYING
    }

    /// Receiver: whether the sender has withdrawn the offer (cancelled its send, or gave up as
    /// the run aborts): the message is then as if never sent.
    pub(crate) fn withdrawn(&self) -> bool {
        self.state.load(Ordering::Acquire) == CANCELLED
    }

    /// Sender: the outcome so far.
    pub(crate) fn outcome(&self) -> SendOutcome {
        match self.state.load(Ordering::Acquire) {
            DONE => SendOutcome::Delivered,
            DROPPED => SendOutcome::Dropped,
            CANCELLED => SendOutcome::Withdrawn,
            _ => SendOutcome::Pending,
        }
    }

    /// Sender: withdraws the offer; afterwards the receiver does not read the buffer (a copy in
    /// progress is waited out). Returns the final outcome.
    pub(crate) fn cancel(&self) -> SendOutcome {
        if self
            .state
            .compare_exchange(PENDING, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return SendOutcome::Withdrawn;
        }
        let backoff = crossbeam_utils::Backoff::new();
        while self.state.load(Ordering::Acquire) == COPYING {
            #[cfg(loom)]
            loom::thread::yield_now();
            #[cfg(not(loom))]
            backoff.snooze();
        }
        let _ = &backoff;
        self.outcome()
    }
}

/// The `count` pieces of one large copy, each taken by exactly one of the sides that work on
/// it (the receiver, and the sender while it waits for the copy to end); the receiver ends the
/// copy only once every piece is copied.
#[derive(Debug)]
pub(crate) struct Chunks {
    /// Pieces handed out so far (it stops at `count`).
    next: AtomicUsize,
    /// Pieces copied.
    done: AtomicUsize,
    count: usize,
}

impl Chunks {
    pub(crate) fn new(count: usize) -> Self {
        Chunks {
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            count,
        }
    }

    /// How many pieces the copy has (0: it is not shared).
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The next piece nobody has taken, if any: its taker copies it, then calls
    /// [`Chunks::finish`]. (`Relaxed`: the index only divides the work; the bytes are
    /// published by `finish`.)
    pub(crate) fn take(&self) -> Option<usize> {
        self.next
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.count).then_some(n + 1)
            })
            .ok()
    }

    /// One taken piece is copied (`Release`: its bytes are written before the count says so).
    pub(crate) fn finish(&self) {
        self.done.fetch_add(1, Ordering::Release);
    }

    /// Whether every piece is copied (`Acquire`: then every piece's bytes are visible).
    pub(crate) fn all_done(&self) -> bool {
        self.done.load(Ordering::Acquire) == self.count
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    //! The sender's buffer is a loom `UnsafeCell`: loom reports any read by the receiver that is
    //! not ordered before the sender's reuse of the buffer.
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;
    use loom::thread;

    fn receiver(h: &Handoff, buf: &UnsafeCell<u64>) -> Option<u64> {
        if h.claim() {
            // SAFETY (model): reading is allowed in the COPYING state
            let v = buf.with(|p| unsafe { *p });
            h.complete();
            Some(v)
        } else {
            None
        }
    }

    #[test]
    fn a_copy_always_happens_before_the_sender_reuses_its_buffer() {
        loom::model(|| {
            let h = Arc::new(Handoff::new());
            let buf = Arc::new(UnsafeCell::new(7u64));
            let (h2, buf2) = (h.clone(), buf.clone());
            let r = thread::spawn(move || receiver(&h2, &buf2));
            // the sender waits for the outcome, and gives up after one look (an abort)
            let outcome = match h.outcome() {
                SendOutcome::Pending => h.cancel(),
                o => o,
            };
            // the buffer is the sender's again: write it
            buf.with_mut(|p| unsafe { *p = 8 });
            let got = r.join().unwrap();
            match outcome {
                SendOutcome::Delivered => assert_eq!(got, Some(7)),
                SendOutcome::Dropped | SendOutcome::Withdrawn => assert_eq!(got, None),
                SendOutcome::Pending => panic!("cancel returned pending"),
            }
        });
    }

    #[test]
    fn a_shared_copy_is_whole_when_the_receiver_ends_it() {
        // two pieces; the receiver takes pieces and waits for all of them, the sender takes
        // pieces while the copy is on: every piece is written once, and all before the end
        loom::model(|| {
            let h = Arc::new(Handoff::new());
            let chunks = Arc::new(Chunks::new(2));
            let dst = Arc::new([UnsafeCell::new(0u8), UnsafeCell::new(0u8)]);
            let (h2, chunks2, dst2) = (h.clone(), chunks.clone(), dst.clone());
            let r = thread::spawn(move || {
                assert!(h2.claim());
                while let Some(c) = chunks2.take() {
                    dst2[c].with_mut(|p| unsafe { *p += 1 });
                    chunks2.finish();
                }
                while !chunks2.all_done() {
                    loom::thread::yield_now();
                }
                // the receive buffer is whole: read it all
                let got = [
                    dst2[0].with(|p| unsafe { *p }),
                    dst2[1].with(|p| unsafe { *p }),
                ];
                h2.complete();
                got
            });
            if h.copying() {
                while let Some(c) = chunks.take() {
                    dst[c].with_mut(|p| unsafe { *p += 1 });
                    chunks.finish();
                }
            }
            assert_eq!(r.join().unwrap(), [1, 1]);
        });
    }

    #[test]
    fn a_ticket_dropped_unread_releases_the_sender_once() {
        loom::model(|| {
            let h = Arc::new(Handoff::new());
            let h2 = h.clone();
            let r = thread::spawn(move || h2.drop_unread());
            let cancelled = h.cancel();
            let dropped_first = r.join().unwrap();
            // exactly one of the two won the race out of PENDING, and either way nothing reads
            let want = if dropped_first {
                SendOutcome::Dropped
            } else {
                SendOutcome::Withdrawn
            };
            assert_eq!((cancelled, h.outcome()), (want, want));
        });
    }
}
