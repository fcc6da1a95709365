//! [`Handoff`]: the state machine of a rendezvous, alone, so that it can be model-checked with
//! loom (`RUSTFLAGS="--cfg loom" cargo test -p rpar --lib handoff`).
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
use loom::sync::atomic::{AtomicU8, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU8, Ordering};

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
    /// The receiver finished without receiving it, or the sender withdrew it.
    Dropped,
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

    /// Sender: the outcome so far.
    pub(crate) fn outcome(&self) -> SendOutcome {
        match self.state.load(Ordering::Acquire) {
            DONE => SendOutcome::Delivered,
            DROPPED | CANCELLED => SendOutcome::Dropped,
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
            return SendOutcome::Dropped;
        }
        let backoff = crossbeam::utils::Backoff::new();
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
                SendOutcome::Dropped => assert_eq!(got, None),
                SendOutcome::Pending => panic!("cancel returned pending"),
            }
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
            assert_eq!(cancelled, SendOutcome::Dropped);
            // exactly one of the two won the race out of PENDING, and either way nothing reads
            assert!(dropped_first || h.outcome() == SendOutcome::Dropped);
        });
    }
}
