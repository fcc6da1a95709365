//! Broadcast (MPI_Bcast): one-to-all broadcast from a root, the lecture's five ways.
//!
//! - [`Bcast::Linear`]: the root sends to every rank in turn; `(p - 1)(alpha + beta m)`.
//! - [`Bcast::Binomial`]: the hypercube's recursive doubling along a binomial tree;
//!   `ceil(log2 p)(alpha + beta m)`.
//! - [`Bcast::Pipeline`]: the ring (a chain from the root) with the message cut into segments
//!   of `s` bytes, so that all links work at once; `(p - 2 + m / s)(alpha + beta s)`.
//! - [`Bcast::ScatterAllgather`]: van de Geijn's scatter + allgather (binomial scatter of `p`
//!   blocks, then the ring allgather); `log2 p alpha + (p - 1) alpha + 2 beta m (p - 1) / p`.
//! - [`Bcast::Torus`]: the 2-D torus two-phase scheme: broadcast along the root's row of a
//!   `q1 x q2` grid, then down every column; `(log2 q1 + log2 q2)(alpha + beta m)`.
//!
//! Every algorithm is written for root 0 against [`Channel`]; other roots run it on a
//! rotated [`View`].

use super::allgather;
use super::layout::Named;
use super::layout::{binomial, grid_shape, offsets_even, recv_exact, span, View};
use super::select::{dispatched, resolve, Native};
use super::shared;
use super::tags;
use super::Channel;
use crate::comm::BufferMut;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Result};

/// Segment size of the pipelined broadcast: under the transport's rendezvous threshold, so
/// that a segment's send returns at once and the next can be received meanwhile.
const SEGMENT_BYTES: usize = 16 * 1024;

const CALL: &str = "bcast";

/// The broadcast algorithm (for [`Comm::using`]).
///
/// An MPI library picks among such algorithms inside MPI_Bcast; MPICH lets the user fix the choice
/// with `MPIR_CVAR_BCAST_INTRA_ALGORITHM`, as [`Comm::using`] does here.
///
/// Each variant's cost is for `p` ranks and `m` the bytes of the message:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` picks by the number of ranks `p` and the message size `m` in bytes (the [table of every
/// operation's defaults](crate#default-algorithms); tuned on the 2-core machine with
/// `cargo bench --bench collective_move`): in-process, where the ranks share memory,
/// `SharedMemory`; elsewhere (recordings; on MPI, `Auto` runs `MPI_Bcast`) [`Bcast::select`]:
///
/// | ranks `p` | message `m` | algorithm |
/// |---|---|---|
/// | 1 or 2 | any | `Linear` |
/// | `> 2` | any | `Binomial` |
///
/// Shared memory against the message-passing rule on the 2-core machine, medians of 7 runs
/// with nothing else running (microseconds; 4 and 8 ranks oversubscribe the cores): 8 B
/// 0.17-0.20 / 0.19-0.22 (2 ranks), 0.67 / 0.77 (4), 1.4 / 2.2 (8), 20 / 31 (64); 64 KiB
/// 2.0 / 2.5, 12 / 46, 39 / 166, 499 / 2059; 1 MiB 29 / 31, 90 / 195, 167 / 918. In one
/// process a large message costs memory copies, not link time: with shared memory every rank
/// copies the root's buffer once, directly; in the binomial tree every receiver copies it once
/// too (straight from its parent's buffer, by rendezvous) but waits for its parent, while van
/// de Geijn's scatter + allgather copies it twice and the pipeline's eager segments twice per
/// hop; at 1 MiB on 8 ranks the binomial tree was the fastest of the message-passing five.
///
/// There is no owned form (one that would hand the root's `Vec` to a receiver): every receiver
/// needs a copy of its own, and the root keeps its data (MPI_Bcast leaves the root's buffer as
/// it was), so a move would save one copy in `p - 1` only by taking the data from the root.
///
/// ```
/// use rpar::Bcast;
/// assert_eq!(Bcast::select(8, 8, true), Bcast::Binomial);
/// assert_eq!(Bcast::select(2, 1 << 20, true), Bcast::Linear);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bcast {
    /// The default: `SharedMemory` in-process, else [`Bcast::select`].
    #[default]
    Auto,
    /// The root sends to each rank in turn.
    /// Cost: `(p - 1)(alpha + beta m)`.
    Linear,
    /// Binomial tree (recursive doubling on a hypercube).
    /// Cost: `ceil(log2 p)(alpha + beta m)`.
    Binomial,
    /// Segmented pipeline along a ring.
    /// Cost: `(p - 2 + m / s)(alpha + beta s)` for segments of s bytes.
    Pipeline,
    /// Van de Geijn: binomial scatter, then ring allgather.
    /// Cost: `log2 p alpha + (p - 1) alpha + 2 beta m (p - 1) / p`.
    ScatterAllgather,
    /// 2-D torus: the root's row, then every column, of a `q1 x q2` grid.
    /// Cost: `(log2 q1 + log2 q2)(alpha + beta m)`.
    Torus,
    /// Through shared memory (in-process ranks only; elsewhere the message-passing default):
    /// the root posts the message (copied if small, else lent in place) and every rank copies
    /// it; a small message's root returns at once.
    /// Cost, with `c` one synchronisation: `c + beta m` per reader.
    SharedMemory,
}

impl Bcast {
    /// The message-passing algorithm `Auto` runs for `ranks` ranks and a message of `bytes`
    /// bytes where the ranks share no memory (the table above; `commutative` is ignored: a
    /// broadcast combines nothing). No MPI routine: an MPI library makes this choice inside
    /// MPI_Bcast (in MPICH, what `MPIR_CVAR_BCAST_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Bcast;
    /// assert_eq!(Bcast::select(2, 8, true), Bcast::Linear);
    /// assert_eq!(Bcast::select(64, 64 << 20, true), Bcast::Binomial);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Bcast {
        let _ = (bytes, commutative); // the binomial tree won at every size measured
        if ranks <= 2 {
            Bcast::Linear
        } else {
            Bcast::Binomial
        }
    }
}

impl Comm {
    /// [`Comm::bcast`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn bcast_with<B: BufferMut + ?Sized>(
        &self,
        buf: &mut B,
        root: usize,
        algorithm: Bcast,
    ) -> Result<()> {
        self.collective(
            Call::new("bcast")
                .root(root)
                .bytes(std::mem::size_of_val(buf.as_elems())),
            &algorithm,
            || {
                let buf = buf.as_elems_mut();
                if let (Bcast::Auto, Some(native)) = (algorithm, self.native()) {
                    super::layout::check_root(self, root)?;
                    if native.bcast(buf, root)? {
                        self.runs(Native::<Bcast>::of());
                        return Ok(());
                    }
                }
                let (shm, bytes) = (shared::available::<B::Elem>(self), size_of_val(buf));
                let chosen = resolve(algorithm, shm, self.size(), bytes, true);
                if chosen == Bcast::SharedMemory {
                    super::layout::check_root(self, root)?;
                    return shared::bcast(self, buf, root);
                }
                bcast(self, buf, root, chosen)
            },
        )
    }
}

/// Broadcast on any channel: checks, rotation to root 0, dispatch.
pub(crate) fn bcast<C: Named, T: Datatype>(
    ch: &C,
    buf: &mut [T],
    root: usize,
    algorithm: Bcast,
) -> Result<()> {
    super::layout::check_root(ch, root)?;
    let p = ch.size();
    // `Auto` and `SharedMemory` resolve to a message-passing algorithm here
    let algorithm = dispatched(ch, algorithm, size_of_val(buf), true);
    if p == 1 || buf.is_empty() {
        return Ok(());
    }
    let view = View::rotated(ch, root);
    match algorithm {
        Bcast::Linear | Bcast::Auto | Bcast::SharedMemory => linear(&view, buf),
        Bcast::Binomial => binomial_tree(&view, buf, tags::BCAST_BINOMIAL),
        Bcast::Pipeline => pipeline(&view, buf),
        Bcast::ScatterAllgather => scatter_allgather(&view, buf),
        Bcast::Torus => torus(&view, buf),
    }
}

fn linear<C: Named, T: Datatype>(ch: &C, buf: &mut [T]) -> Result<()> {
    if ch.rank() == 0 {
        (1..ch.size()).try_for_each(|r| ch.send(buf, r, tags::BCAST_LINEAR))
    } else {
        recv_exact(ch, buf, 0, tags::BCAST_LINEAR, CALL)
    }
}

/// Binomial-tree broadcast from member 0 of `ch`.
fn binomial_tree<C: Named, T: Datatype>(ch: &C, buf: &mut [T], tag: i32) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    if r != 0 {
        recv_exact(ch, buf, binomial::parent(r), tag, CALL)?;
    }
    // farthest child (largest subtree) first, so that it starts forwarding soonest
    binomial::children(r, p)
        .rev()
        .try_for_each(|c| ch.send(buf, c, tag))
}

fn pipeline<C: Named, T: Datatype>(ch: &C, buf: &mut [T]) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    // zero-sized elements have no bytes to pipeline: one segment of all of them (any count
    // of them, up to usize::MAX, would otherwise be cut into count / SEGMENT_BYTES messages)
    let seg = match std::mem::size_of::<T>() {
        0 => buf.len().max(1),
        size => (SEGMENT_BYTES / size).max(1),
    };
    for chunk in buf.chunks_mut(seg) {
        if r != 0 {
            recv_exact(ch, chunk, r - 1, tags::BCAST_PIPELINE, CALL)?;
        }
        if r + 1 < p {
            ch.send(chunk, r + 1, tags::BCAST_PIPELINE)?;
        }
    }
    Ok(())
}

fn scatter_allgather<C: Named, T: Datatype>(ch: &C, buf: &mut [T]) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let off = offsets_even(buf.len(), p);
    // binomial scatter: member r receives the blocks of its subtree, then hands on its
    // children's
    if r != 0 {
        let mine = span(&off, r..binomial::subtree_end(r, p));
        recv_exact(
            ch,
            &mut buf[mine],
            binomial::parent(r),
            tags::BCAST_SCATTER,
            CALL,
        )?;
    }
    for c in binomial::children(r, p).rev() {
        let theirs = span(&off, c..binomial::subtree_end(c, p));
        ch.send(&buf[theirs], c, tags::BCAST_SCATTER)?;
    }
    allgather::ring(ch, buf, &off, tags::BCAST_ALLGATHER)
}

fn torus<C: Named, T: Datatype>(ch: &C, buf: &mut [T]) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let (q1, q2) = grid_shape(p);
    let (row, col) = (r / q2, r % q2);
    if row == 0 {
        binomial_tree(&View::strided(ch, 0, 1, q2, col), buf, tags::BCAST_ROW)?;
    }
    binomial_tree(
        &View::strided(ch, col, q2, q1, row),
        buf,
        tags::BCAST_COLUMN,
    )
}
