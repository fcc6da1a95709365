//! Barrier (MPI_Barrier), by three algorithms.
//!
//! - [`Barrier::Central`]: every rank reports to rank 0, which then releases them all;
//!   `2 (p - 1)` messages through one rank, `2 (p - 1) alpha` on its links.
//! - [`Barrier::Dissemination`] (Hensgen, Finkel and Manber 1988): in round `k` every rank
//!   signals rank `r + 2^k` and waits for rank `r - 2^k`; after `ceil(log2 p)` rounds every
//!   rank has heard, directly or not, from all others. `ceil(log2 p) alpha`.
//! - [`Barrier::Tree`]: a binomial-tree gather of empty messages to rank 0, then a binomial
//!   broadcast back; `2 ceil(log2 p) alpha`.

use super::layout::binomial;
use super::select::{dispatched, resolve, Native};
use super::shared;
use super::tags;
use super::{Channel, Partners};
use crate::comm::Call;
use crate::{Comm, Result};

/// The barrier algorithm (for [`Comm::using`]).
///
/// An MPI library picks among such algorithms inside MPI_Barrier; MPICH lets the user fix the
/// choice with `MPIR_CVAR_BARRIER_INTRA_ALGORITHM`, as [`Comm::using`] does here.
///
/// Each variant's cost is for `p` ranks, alpha per message.
///
/// `Auto` is a function of the ranks `p` (the [table of every operation's
/// defaults](crate#default-algorithms); tuned on the 2-core machine with `cargo bench --bench
/// collective_move`): in-process, where the ranks share memory, `SharedMemory`; elsewhere
/// (recordings; on MPI, `Auto` runs `MPI_Barrier`) [`Barrier::select`]:
///
/// | ranks `p` | algorithm |
/// |---|---|
/// | `<= 2` | `Central` |
/// | `3..=15` | `Dissemination` |
/// | `>= 16` | `Central` |
///
/// One barrier after another on the 2-core machine, nothing else running: shared memory 0.19,
/// 4.1, 16 and 201 us at 2, 4, 8 and 64 ranks against 0.88, 20, 65 and 491 us by the
/// message-passing rule. (Without shared memory, 4 ranks: dissemination 26 us, central 49 us;
/// 16 ranks: central 231 us, dissemination 297 us: with many more ranks than cores the central
/// rank's one wake-up per rank beats `log2 p` rounds of everyone waking everyone.)
///
/// ```
/// assert_eq!(rpar::Barrier::select(4, 0, true), rpar::Barrier::Dissemination);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Barrier {
    /// The default: `SharedMemory` in-process, else [`Barrier::select`].
    #[default]
    Auto,
    /// Gather at rank 0, then release.
    /// Cost: `2 (p - 1) alpha` on rank 0's links.
    Central,
    /// `ceil(log2 p)` rounds of signals to rank `r + 2^k`.
    /// Cost: `ceil(log2 p) alpha`.
    Dissemination,
    /// Binomial tree up, then down.
    /// Cost: `2 ceil(log2 p) alpha`.
    Tree,
    /// Through shared memory (in-process ranks only; elsewhere the message-passing default):
    /// every rank marks its arrival and waits for every other's.
    /// Cost: `c`, one synchronisation.
    SharedMemory,
}

impl Barrier {
    /// The message-passing algorithm `Auto` runs for `ranks` ranks where they share no memory
    /// (the table above; `bytes` and `commutative` are ignored: a barrier has neither). No MPI
    /// routine: an MPI library makes this choice inside MPI_Barrier (in MPICH, what
    /// `MPIR_CVAR_BARRIER_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Barrier;
    /// assert_eq!(Barrier::select(2, 0, true), Barrier::Central);
    /// assert_eq!(Barrier::select(8, 0, true), Barrier::Dissemination);
    /// assert_eq!(Barrier::select(64, 0, true), Barrier::Central);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Barrier {
        let _ = (bytes, commutative);
        if ranks <= 2 || ranks >= 16 {
            Barrier::Central
        } else {
            Barrier::Dissemination
        }
    }
}

impl Comm {
    /// [`Comm::barrier`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn barrier_with(&self, algorithm: Barrier) -> Result<()> {
        self.collective(Call::new("barrier"), &algorithm, || {
            if let (Barrier::Auto, Some(native)) = (algorithm, self.native()) {
                native.barrier()?;
                self.runs(Native::<Barrier>::of());
                return Ok(());
            }
            let shm = shared::available::<u8>(self);
            if resolve(algorithm, shm, self.size(), 0, true) == Barrier::SharedMemory {
                return shared::barrier(self);
            }
            barrier(self, algorithm)
        })
    }
}

fn signal<C: Channel>(ch: &C, to: usize, tag: i32) -> Result<()> {
    ch.send::<u8>(&[], to, tag)
}

fn wait_for<C: Channel>(ch: &C, from: usize, tag: i32) -> Result<()> {
    ch.recv_into::<u8>(&mut [], from, tag).map(|_| ())
}

/// Barrier on any channel (what `Comm::barrier_with` runs).
pub(crate) fn barrier<C: Channel>(ch: &C, algorithm: Barrier) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    // `Auto` and `SharedMemory` resolve to a message-passing algorithm here
    match dispatched(ch, algorithm, 0, true) {
        Barrier::Central | Barrier::Auto | Barrier::SharedMemory if r == 0 => {
            (1..p).try_for_each(|i| wait_for(ch, i, tags::BARRIER_CENTRAL))?;
            (1..p).try_for_each(|i| signal(ch, i, tags::BARRIER_CENTRAL))
        }
        Barrier::Central | Barrier::Auto | Barrier::SharedMemory => {
            signal(ch, 0, tags::BARRIER_CENTRAL)?;
            wait_for(ch, 0, tags::BARRIER_CENTRAL)
        }
        Barrier::Dissemination => {
            let mut dist = 1;
            while dist < p {
                let (dest, source) = ((r + dist) % p, (r + p - dist) % p);
                let tag = tags::BARRIER_DISSEMINATION;
                ch.sendrecv::<u8, u8>(&[], &mut [], Partners { dest, source, tag })?;
                dist *= 2;
            }
            Ok(())
        }
        Barrier::Tree => {
            for c in binomial::children(r, p) {
                wait_for(ch, c, tags::BARRIER_TREE_UP)?;
            }
            if r != 0 {
                signal(ch, binomial::parent(r), tags::BARRIER_TREE_UP)?;
                wait_for(ch, binomial::parent(r), tags::BARRIER_TREE_DOWN)?;
            }
            binomial::children(r, p)
                .rev()
                .try_for_each(|c| signal(ch, c, tags::BARRIER_TREE_DOWN))
        }
    }
}
