//! A rank's mailbox, counted at both ends for the deadlock watch: [`Mailbox`] is the sending
//! side (any rank, and the rendezvous tickets that wake a sender), [`Incoming`] the owning
//! rank's receiving side.
//!
//! Every envelope is counted in the receiver's `posted` *before* it is sent, and the receiving
//! rank counts the envelopes it takes. A rank that parks publishes how many it had taken
//! (`watch.rs`); while `posted` still equals that number, nothing has been sent to it since,
//! so it is still blocked. An empty mailbox does not say as much: a rank that has just taken
//! the envelope that wakes it, and is preempted before it clears its parked flag, has an empty
//! mailbox and looks blocked (a false deadlock report, 20 ranks on 2 busy cores in CI).

use super::endpoint::Envelope;
use crossbeam_channel::{Receiver, RecvError, SendError, Sender, TryRecvError};
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The sending side of one rank's mailbox.
#[derive(Debug, Clone)]
pub(crate) struct Mailbox {
    tx: Sender<Envelope>,
    /// Envelopes ever sent to this mailbox (counted before each is sent).
    posted: Arc<CachePadded<AtomicU64>>,
}

/// The owning rank's receiving side of its mailbox.
#[derive(Debug)]
pub(crate) struct Incoming {
    rx: Receiver<Envelope>,
    /// Envelopes taken so far.
    taken: Cell<u64>,
}

/// A new mailbox: its sending side, the owning rank's receiving side, and a receiving end
/// that takes without counting (kept by the fabric for what is left when the rank has gone).
pub(crate) fn mailbox() -> (Mailbox, Incoming, Receiver<Envelope>) {
    let (tx, rx) = crossbeam_channel::unbounded();
    let sending = Mailbox {
        tx,
        posted: Arc::default(),
    };
    let kept = rx.clone();
    let incoming = Incoming {
        rx,
        taken: Cell::new(0),
    };
    (sending, incoming, kept)
}

impl Mailbox {
    /// Sends `envelope`, counting it first (an error only if every receiving end is gone).
    #[inline]
    pub(crate) fn send(&self, envelope: Envelope) -> Result<(), SendError<Envelope>> {
        self.posted.fetch_add(1, Ordering::SeqCst);
        self.tx.send(envelope)
    }

    /// Envelopes sent to this mailbox so far, or being sent.
    pub(crate) fn posted(&self) -> u64 {
        self.posted.load(Ordering::SeqCst)
    }
}

impl Incoming {
    /// An envelope that is here, if any.
    #[inline]
    pub(crate) fn try_recv(&self) -> Result<Envelope, TryRecvError> {
        let envelope = self.rx.try_recv()?;
        self.taken.set(self.taken.get() + 1);
        Ok(envelope)
    }

    /// The next envelope, blocking until one comes.
    pub(crate) fn recv(&self) -> Result<Envelope, RecvError> {
        let envelope = self.rx.recv()?;
        self.taken.set(self.taken.get() + 1);
        Ok(envelope)
    }

    /// Envelopes taken so far.
    pub(crate) fn taken(&self) -> u64 {
        self.taken.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_posted_and_not_taken_is_in_the_count() {
        let (tx, rx, _kept) = mailbox();
        tx.send(Envelope::Wake).unwrap();
        tx.send(Envelope::Wake).unwrap();
        assert_eq!((tx.posted(), rx.taken()), (2, 0));
        rx.try_recv().unwrap();
        rx.recv().unwrap();
        assert!(rx.try_recv().is_err());
        assert_eq!((tx.posted(), rx.taken()), (2, 2));
    }
}
