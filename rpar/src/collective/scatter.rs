//! Scatter (MPI_Scatter, MPI_Scatterv): the root's blocks, one to each rank, by two
//! algorithms.
//!
//! - [`Scatter::Linear`]: the root sends each rank its block in turn; `(p - 1)(alpha + beta m)`.
//! - [`Scatter::Binomial`]: the dual of the binomial gather: the root sends each child the
//!   blocks of the child's whole subtree (consecutive ranks) in one message, and so on down;
//!   `ceil(log2 p) alpha + (p - 1) beta m`. For scatterv each message is preceded by the
//!   subtree's counts, since only the root knows them.
//!
//! Non-root ranks need not know how much they will get: they receive whole messages.

use super::layout::Named;
use super::layout::{
    binomial, block_len, check_blocks_fit, check_count, check_len, check_per_rank, check_root,
    lengths, offsets_of_counts, offsets_uniform, span, Lengths, View,
};
use super::select::dispatched;
use super::tags;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Result};
use std::borrow::Cow;

const CALL_V: &str = "scatterv";

/// The scatter algorithm (for [`Comm::using`] and the other scatter forms).
///
/// An MPI library picks among such algorithms inside MPI_Scatter and MPI_Scatterv; MPICH lets the
/// user fix the choice with `MPIR_CVAR_SCATTER_INTRA_ALGORITHM`, as the `_with` forms do here.
///
/// Each variant's cost is for `p` ranks and `m` the bytes of one rank's block:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` ([`Scatter::select`], a row of the [table of every operation's
/// defaults](crate#default-algorithms); scatter has no shared-memory algorithm) depends on the
/// ranks `p` only, since the non-root ranks of [`Comm::scatter`] do not know the size of what
/// they will receive:
///
/// | ranks `p` | algorithm  |
/// |-----------|------------|
/// | `<= 8`    | `Linear`   |
/// | `> 8`     | `Binomial` |
///
/// (tuned on the 2-core machine with `cargo bench --bench collective_move`; 8 B on 8 ranks:
/// linear 51 us, binomial 72 us; on 16 and 32 ranks the binomial tree's shorter chain at the
/// root wins.)
///
/// ```
/// use rpar::Scatter;
/// assert_eq!(Scatter::select(2, 8, true), Scatter::Linear);
/// assert_eq!(Scatter::select(16, 8, true), Scatter::Binomial);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scatter {
    /// [`Scatter::select`] decides.
    #[default]
    Auto,
    /// The root sends to each rank in turn.
    /// Cost: `(p - 1)(alpha + beta m)`.
    Linear,
    /// Binomial tree.
    /// Cost: `ceil(log2 p) alpha + (p - 1) beta m`.
    Binomial,
}

impl Scatter {
    /// The algorithm `Auto` runs for `ranks` ranks (the table above), for every scatter form;
    /// `bytes` and `commutative` are ignored (the non-roots do not know the size, and a scatter
    /// combines nothing). No MPI routine: an MPI library makes this choice inside MPI_Scatter
    /// (in MPICH, what `MPIR_CVAR_SCATTER_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Scatter;
    /// assert_eq!(Scatter::select(8, 1 << 20, true), Scatter::Linear);
    /// assert_eq!(Scatter::select(9, 8, true), Scatter::Binomial);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Scatter {
        let _ = (bytes, commutative);
        if ranks <= 8 {
            Scatter::Linear
        } else {
            Scatter::Binomial
        }
    }
}

/// What the root of a scatter sends: rank `i` gets `send[displs[i]..][..counts[i]]`.
struct Source<'a, T> {
    send: &'a [T],
    counts: &'a [usize],
    displs: &'a [usize],
}

impl<T: Datatype> Source<'_, T> {
    fn block(&self, i: usize) -> &[T] {
        &self.send[self.displs[i]..self.displs[i] + self.counts[i]]
    }

    /// The blocks of `ranks`, in that order: a slice of `send` if they lie back to back there,
    /// else packed into a new `Vec`.
    fn blocks(&self, ranks: impl Iterator<Item = usize> + Clone) -> Cow<'_, [T]> {
        let first = ranks.clone().next().map_or(0, |i| self.displs[i]);
        let mut end = first;
        if ranks.clone().all(|i| {
            let ok = self.displs[i] == end || self.counts[i] == 0;
            end += self.counts[i];
            ok
        }) {
            return Cow::Borrowed(&self.send[first..end]);
        }
        let mut packed = Vec::new();
        for i in ranks {
            packed.extend_from_slice(self.block(i));
        }
        Cow::Owned(packed)
    }
}

impl Comm {
    /// [`Comm::scatter`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn scatter_with<T: Datatype>(
        &self,
        send: &[T],
        root: usize,
        algorithm: Scatter,
    ) -> Result<Vec<T>> {
        self.collective(Call::new("scatter").root(root), &algorithm, || {
            scatter_uniform(self, send, root, algorithm)
        })
    }

    /// [`Comm::scatter_owned`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn scatter_owned_with<T: Datatype>(
        &self,
        mut send: Vec<T>,
        root: usize,
        algorithm: Scatter,
    ) -> Result<Vec<T>> {
        self.collective(Call::new("scatter").root(root), &algorithm, || {
            check_root(self, root)?;
            if self.rank() != root {
                return scatter_to_me(self, root, algorithm);
            }
            let n = scatter_from_me(self, &send, root, algorithm)?;
            send.truncate((root + 1) * n);
            send.drain(..root * n);
            Ok(send)
        })
    }

    /// The scatter into the caller's buffer with the algorithm given (what the forms run with
    /// the one chosen by [`Comm::using`]): of the root's `send` (ignored elsewhere) into `recv`,
    /// or with `send` `None` in place: the root's `recv` holds every block and keeps its own.
    pub(crate) fn scatter_into_with<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        root: usize,
        algorithm: Scatter,
    ) -> Result<()> {
        self.collective(Call::new("scatter").root(root), &algorithm, || {
            check_root(self, root)?;
            if self.rank() != root {
                let mine = scatter_to_me(self, root, algorithm)?;
                check_count(mine.len(), recv.len(), root, "scatter")?;
                recv.copy_from_slice(&mine);
                return Ok(());
            }
            let Some(send) = send else {
                return scatter_from_me(self, recv, root, algorithm).map(|_| ());
            };
            check_len(
                send.len(),
                recv.len() * self.size(),
                "send buffer",
                "scatter",
            )?;
            let n = scatter_from_me(self, send, root, algorithm)?;
            recv.copy_from_slice(&send[root * n..(root + 1) * n]);
            Ok(())
        })
    }

    /// [`Comm::scatterv`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn scatterv_with<T: Datatype>(
        &self,
        send: &[T],
        counts: &[usize],
        displs: &[usize],
        root: usize,
        algorithm: Scatter,
    ) -> Result<Vec<T>> {
        self.collective(Call::new(CALL_V).root(root), &algorithm, || {
            match self.scatterv_blocks(send, (counts, displs), root, algorithm)? {
                Some(mine) => Ok(mine),
                // the root's own block: `scatterv_blocks` checked that it lies in `send`
                None => Ok(send[displs[root]..displs[root] + counts[root]].to_vec()),
            }
        })
    }

    /// The scatterv into the caller's buffer with the algorithm given (what the forms run with
    /// the one chosen by [`Comm::using`]): `send` and `recv` as for
    /// [`scatter_into_with`](Comm::scatter_into_with), `blocks` the root's counts and
    /// displacements.
    pub(crate) fn scatterv_into_with<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        (counts, displs): (&[usize], &[usize]),
        root: usize,
        algorithm: Scatter,
    ) -> Result<()> {
        self.collective(Call::new(CALL_V).root(root), &algorithm, || {
            let is_root = self.rank() == root;
            let from: &[T] = match send {
                Some(send) => send,
                None if is_root => recv,
                None => &[],
            };
            match self.scatterv_blocks(from, (counts, displs), root, algorithm)? {
                Some(mine) => {
                    check_count(mine.len(), recv.len(), root, CALL_V)?;
                    recv.copy_from_slice(&mine);
                }
                // the root's own block: `scatterv_blocks` checked that it lies in `send`
                None => {
                    if let Some(send) = send {
                        let own = &send[displs[root]..displs[root] + counts[root]];
                        check_len(recv.len(), own.len(), "receive buffer", CALL_V)?;
                        recv.copy_from_slice(own);
                    }
                }
            }
            Ok(())
        })
    }

    /// What every scatterv form runs: at the root the checks of `counts` and `displs` against
    /// `send`, then the scatter (`None`: the root keeps its block where it is); elsewhere the
    /// block received.
    fn scatterv_blocks<T: Datatype>(
        &self,
        send: &[T],
        (counts, displs): (&[usize], &[usize]),
        root: usize,
        algorithm: Scatter,
    ) -> Result<Option<Vec<T>>> {
        check_root(self, root)?;
        let p = self.size();
        if self.rank() != root {
            return scatter(self, None, Lengths::Sent, root, algorithm)
                .map(|mine| Some(mine.unwrap_or_default()));
        }
        check_per_rank(counts.len(), p, "counts", CALL_V)?;
        check_per_rank(displs.len(), p, "displs", CALL_V)?;
        check_blocks_fit(counts, displs, send.len(), "send", CALL_V)?;
        let source = Source {
            send,
            counts,
            displs,
        };
        scatter(self, Some(&source), Lengths::Sent, root, algorithm)?;
        Ok(None)
    }
}

/// Scatter of the root's `send` (`p` equal blocks; ignored elsewhere) on any channel; returns
/// this rank's block: what `Comm::scatter` runs, and what `sim::record_collective` records.
pub(crate) fn scatter_uniform<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    root: usize,
    algorithm: Scatter,
) -> Result<Vec<T>> {
    check_root(ch, root)?;
    if ch.rank() != root {
        return scatter_to_me(ch, root, algorithm);
    }
    let n = scatter_from_me(ch, send, root, algorithm)?;
    Ok(send[root * n..(root + 1) * n].to_vec())
}

/// The root's part of a uniform scatter of `send` (`p` equal blocks); returns the length of a
/// block.
fn scatter_from_me<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    root: usize,
    algorithm: Scatter,
) -> Result<usize> {
    let p = ch.size();
    let n = block_len(send.len(), p, "send", "scatter")?;
    let off = offsets_uniform(n, p);
    let source = Source {
        send,
        counts: &vec![n; p],
        displs: &off[..p],
    };
    scatter(ch, Some(&source), Lengths::Agreed, root, algorithm)?;
    Ok(n)
}

/// A non-root's part of a uniform scatter.
fn scatter_to_me<C: Named, T: Datatype>(ch: &C, root: usize, algorithm: Scatter) -> Result<Vec<T>> {
    Ok(scatter(ch, None, Lengths::Agreed, root, algorithm)?.unwrap_or_default())
}

/// Scatter on any channel: the root passes its [`Source`] and gets `None`; the others get their
/// block. [`Lengths::Agreed`]: all blocks have the same length (no counts need to travel).
fn scatter<C: Named, T: Datatype>(
    ch: &C,
    source: Option<&Source<'_, T>>,
    lengths: Lengths,
    root: usize,
    algorithm: Scatter,
) -> Result<Option<Vec<T>>> {
    let p = ch.size();
    match (dispatched(ch, algorithm, 0, true), source) {
        (Scatter::Linear, Some(src)) => {
            for i in (0..p).filter(|&i| i != root) {
                ch.send(src.block(i), i, tags::SCATTER_LINEAR)?;
            }
            Ok(None)
        }
        (Scatter::Linear, None) => ch.recv_vec(root, tags::SCATTER_LINEAR).map(Some),
        (_, source) => binomial_scatter(&View::rotated(ch, root), source, lengths, root),
    }
}

/// Binomial scatter on a view rotated so that the root is member 0 (`root`: its real rank).
/// With [`Lengths::Sent`] each message is preceded by the counts of its subtree's members.
fn binomial_scatter<C: Named, T: Datatype>(
    ch: &C,
    source: Option<&Source<'_, T>>,
    lengths: Lengths,
    root: usize,
) -> Result<Option<Vec<T>>> {
    let (r, p) = (ch.rank(), ch.size());
    let end = binomial::subtree_end(r, p);
    let sent = lengths == Lengths::Sent;
    if let Some(src) = source {
        for c in binomial::children(r, p).rev() {
            let members = (c..binomial::subtree_end(c, p)).map(|m| (m + root) % p);
            if sent {
                let counts = members.clone().map(|i| src.counts[i]).collect();
                lengths::send(ch, counts, c, tags::SCATTER_COUNTS)?;
            }
            match src.blocks(members) {
                Cow::Borrowed(data) => ch.send(data, c, tags::SCATTER_BINOMIAL)?,
                Cow::Owned(data) => ch.send_owned(data, c, tags::SCATTER_BINOMIAL)?,
            }
        }
        return Ok(None);
    }
    let parent = binomial::parent(r);
    let counts = if sent {
        Some(lengths::recv(
            ch,
            end - r,
            parent,
            tags::SCATTER_COUNTS,
            CALL_V,
        )?)
    } else {
        None
    };
    let mut data: Vec<T> = ch.recv_vec(parent, tags::SCATTER_BINOMIAL)?;
    let off = match counts {
        Some(counts) => offsets_of_counts(&counts, CALL_V)?,
        None => offsets_uniform(
            block_len(data.len(), end - r, "received", "scatter")?,
            end - r,
        ),
    };
    check_count(data.len(), off[end - r], root, "scatter")?;
    for c in binomial::children(r, p).rev() {
        let theirs = c - r..binomial::subtree_end(c, p) - r;
        if sent {
            lengths::send(
                ch,
                lengths::of(&off, theirs.clone()),
                c,
                tags::SCATTER_COUNTS,
            )?;
        }
        ch.send(&data[span(&off, theirs)], c, tags::SCATTER_BINOMIAL)?;
    }
    data.truncate(off[1]);
    Ok(Some(data))
}
