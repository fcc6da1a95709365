//! Gather (MPI_Gather, MPI_Gatherv): every rank's block to the root, by two algorithms.
//!
//! - [`Gather::Linear`]: the root receives from each rank in turn, straight into place;
//!   `(p - 1)(alpha + beta m)`.
//! - [`Gather::Binomial`]: the dual of the binomial broadcast: each rank collects its subtree's
//!   blocks (consecutive ranks) and sends them to its parent in one message;
//!   `ceil(log2 p) alpha + (p - 1) beta m`. Inner ranks need not know the counts: for gatherv
//!   each message is preceded by the lengths of its subtree's blocks, which the root checks
//!   one by one against its own `counts` (the subtree's total alone would let two wrong counts
//!   that add up to the right ones put one rank's data in another's block).

use super::layout::Named;
use super::layout::{
    binomial, block_len, blocks_total, check_count, check_len, check_per_rank, check_recv_blocks,
    check_root, lengths, offsets_of_counts, offsets_uniform, recv_exact, zeroed_vec, Lengths, View,
};
use super::select::message_passing;
use super::tags;
use super::Channel;
use crate::comm::Buffer;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Result};
use std::borrow::Cow;

const CALL_V: &str = "gatherv";

/// The gather algorithm (for [`Comm::using`] and the other gather forms).
///
/// An MPI library picks among such algorithms inside MPI_Gather and MPI_Gatherv; MPICH lets the
/// user fix the choice with `MPIR_CVAR_GATHER_INTRA_ALGORITHM`, as the `_with` forms do here.
///
/// Each variant's cost is for `p` ranks and `m` the bytes of one rank's block:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` ([`Gather::select`], a row of the [table of every operation's
/// defaults](crate#default-algorithms), tuned on the 2-core machine with
/// `cargo bench --bench collective_move`; gather has no shared-memory algorithm) picks by ranks
/// `p` and the bytes `m` of one rank's block:
///
/// | ranks `p` | block `m` | algorithm |
/// |-----------|-----------|-----------|
/// | any       | any       | `Linear`  |
///
/// Linear won at every size measured (2 to 32 ranks, 8 B to 64 KiB; 8 B on 8 ranks: 62 us
/// against 149 us): the senders' eager messages cost the root one wake-up, while the tree
/// chains `log2 p` of them and copies blocks at every level. The v-forms (block sizes that
/// only the root knows) also take `Linear`.
///
/// ```
/// use rpar::Gather;
/// assert_eq!(Gather::select(8, 8, true), Gather::Linear);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Gather {
    /// [`Gather::select`] decides.
    #[default]
    Auto,
    /// The root receives from each rank in turn.
    /// Cost: `(p - 1)(alpha + beta m)`.
    Linear,
    /// Binomial tree.
    /// Cost: `ceil(log2 p) alpha + (p - 1) beta m`.
    Binomial,
}

impl Gather {
    /// The algorithm `Auto` runs for `ranks` ranks and blocks of `bytes` bytes (the table
    /// above; `commutative` is ignored: a gather combines nothing). No MPI routine: an MPI
    /// library makes this choice inside MPI_Gather (in MPICH, what
    /// `MPIR_CVAR_GATHER_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Gather;
    /// // Linear at every size measured: 2 to 32 ranks, 8 B to 64 KiB
    /// assert_eq!(Gather::select(2, 8, true), Gather::Linear);
    /// assert_eq!(Gather::select(32, 64 * 1024, true), Gather::Linear);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Gather {
        let _ = (ranks, bytes, commutative);
        Gather::Linear
    }

    /// `self`, or for `Auto` the choice for blocks of `bytes` (`None`: block sizes differ
    /// between ranks, as in gatherv, and only the root knows them: `Linear`).
    fn resolve(self, p: usize, bytes: Option<usize>) -> Gather {
        match (self, bytes) {
            (Gather::Auto, None) => Gather::Linear,
            (chosen, bytes) => message_passing(chosen, p, bytes.unwrap_or(0), true),
        }
    }
}

/// What the root of a gather holds: where each rank's block goes.
struct Target<'a, T> {
    recv: &'a mut [T],
    counts: &'a [usize],
    displs: &'a [usize],
    /// The root's own block, or `None` when it is already in place.
    own: Option<&'a [T]>,
}

impl Comm {
    /// [`Comm::gather`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn gather_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        root: usize,
        algorithm: Gather,
    ) -> Result<Option<Vec<B::Elem>>> {
        self.collective(
            Call::new("gather")
                .root(root)
                .bytes(std::mem::size_of_val(send.as_elems())),
            &algorithm,
            || {
                check_root(self, root)?;
                let send = send.as_elems();
                if self.rank() != root {
                    let algorithm =
                        algorithm.resolve(self.size(), Some(std::mem::size_of_val(send)));
                    gather(self, send, None, root, (algorithm, Lengths::Agreed))?;
                    return Ok(None);
                }
                let len = blocks_total(send.len(), self.size(), "gather")?;
                let mut recv = zeroed_vec(len, "gather")?;
                self.gather_into_with(Some(send), &mut recv, root, algorithm)?;
                Ok(Some(recv))
            },
        )
    }

    /// The gather into the caller's buffer with the algorithm given (what the forms run with the
    /// one chosen by [`Comm::using`]): of `send` into the root's `recv` (`recv` ignored
    /// elsewhere), or with `send` `None` in place: the root's own block already in `recv`, every
    /// other rank's `recv` its block.
    pub(crate) fn gather_into_with<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        root: usize,
        algorithm: Gather,
    ) -> Result<()> {
        // in place, the root's block is a p-th of its buffer (if it is not, the root says so)
        let block = match send {
            Some(send) => std::mem::size_of_val(send),
            None if self.rank() == root => std::mem::size_of_val(recv) / self.size(),
            None => std::mem::size_of_val(recv),
        };
        let call = Call::new("gather").root(root).bytes(block);
        self.collective(call, &algorithm, || {
            let (send, recv, with_own) = rooted_in_place(self.rank() == root, send, recv);
            gather_uniform(self, send, recv, with_own, root, algorithm)
        })
    }

    /// [`Comm::gatherv`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn gatherv_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        counts: &[usize],
        root: usize,
        algorithm: Gather,
    ) -> Result<Option<Vec<B::Elem>>> {
        self.collective(Call::new(CALL_V).root(root), &algorithm, || {
            let send = send.as_elems();
            check_root(self, root)?;
            if self.rank() != root {
                self.gatherv_blocks(send, &mut [], (counts, &[]), true, root, algorithm)?;
                return Ok(None);
            }
            check_per_rank(counts.len(), self.size(), "counts", CALL_V)?;
            let off = offsets_of_counts(counts, CALL_V)?;
            let mut recv = zeroed_vec(off[self.size()], CALL_V)?;
            let blocks = (counts, &off[..self.size()]);
            self.gatherv_blocks(send, &mut recv, blocks, true, root, algorithm)?;
            Ok(Some(recv))
        })
    }

    /// The gatherv into the caller's buffer with the algorithm given (what the forms run with
    /// the one chosen by [`Comm::using`]): `send` and `recv` as for
    /// [`gather_into_with`](Comm::gather_into_with), `blocks` the root's counts and
    /// displacements.
    pub(crate) fn gatherv_into_with<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        blocks: (&[usize], &[usize]),
        root: usize,
        algorithm: Gather,
    ) -> Result<()> {
        self.collective(Call::new(CALL_V).root(root), &algorithm, || {
            let (send, recv, with_own) = rooted_in_place(self.rank() == root, send, recv);
            self.gatherv_blocks(send, recv, blocks, with_own, root, algorithm)
        })
    }

    /// [`Comm::gather_owned`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn gather_owned_with<T: Datatype>(
        &self,
        send: Vec<T>,
        root: usize,
        algorithm: Gather,
    ) -> Result<Option<Vec<Vec<T>>>> {
        self.collective(Call::new("gather_owned").root(root), &algorithm, || {
            check_root(self, root)?;
            match self.runs(algorithm.resolve(self.size(), None)) {
                Gather::Binomial => binomial_owned(&View::rotated(self, root), send, root),
                Gather::Linear | Gather::Auto => linear_owned(self, send, root),
            }
        })
    }

    /// What every gatherv form runs. At the root: the checks of `counts`, `displs` and (with
    /// `own`, which says whether `send` is the root's block or the root's block is in place)
    /// `send`, then the gather into `recv`; elsewhere `send` is sent and the rest is not read.
    fn gatherv_blocks<T: Datatype>(
        &self,
        send: &[T],
        recv: &mut [T],
        (counts, displs): (&[usize], &[usize]),
        own: bool,
        root: usize,
        algorithm: Gather,
    ) -> Result<()> {
        check_root(self, root)?;
        let algorithm = (algorithm.resolve(self.size(), None), Lengths::Sent);
        if self.rank() != root {
            return gather(self, send, None, root, algorithm);
        }
        let p = self.size();
        check_per_rank(counts.len(), p, "counts", CALL_V)?;
        check_per_rank(displs.len(), p, "displs", CALL_V)?;
        check_recv_blocks(counts, displs, recv.len(), CALL_V)?;
        if own {
            check_len(
                send.len(),
                counts[root],
                "root's send buffer (counts[root])",
                CALL_V,
            )?;
        }
        let target = Target {
            recv,
            counts,
            displs,
            own: own.then_some(send),
        };
        gather(self, send, Some(target), root, algorithm)
    }
}

/// What a rank of a gather into the caller's buffer sends and receives into, and whether the
/// root's `send` holds its own block: with `send` given, `send` and `recv`; in place (`None`),
/// the root receives into `recv`, its own block already there, and another rank sends `recv`.
fn rooted_in_place<'a, T>(
    is_root: bool,
    send: Option<&'a [T]>,
    recv: &'a mut [T],
) -> (&'a [T], &'a mut [T], bool) {
    match send {
        Some(send) => (send, recv, true),
        None if is_root => (&[], recv, false),
        None => (recv, &mut [], false),
    }
}

/// Gather of equal blocks on any channel into `recv` at the root (ignored elsewhere;
/// `with_own`: copy `send` into the root's block, otherwise it is in place; at the other ranks
/// `send` is what they send): what `Comm::gather_into` and `Comm::gather_in_place` run, and
/// what `sim::record_collective` records. The callers' calls name the bytes of a block, so
/// the ranks agree on the blocks' lengths ([`Lengths::Agreed`]).
pub(crate) fn gather_uniform<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    recv: &mut [T],
    with_own: bool,
    root: usize,
    algorithm: Gather,
) -> Result<()> {
    check_root(ch, root)?;
    if ch.rank() != root {
        let algorithm = algorithm.resolve(ch.size(), Some(std::mem::size_of_val(send)));
        return gather(ch, send, None, root, (algorithm, Lengths::Agreed));
    }
    let p = ch.size();
    let n = block_len(recv.len(), p, "receive", "gather")?;
    if with_own {
        check_len(send.len(), n, "root's send buffer", "gather")?;
    }
    let algorithm = algorithm.resolve(p, Some(n * std::mem::size_of::<T>()));
    let off = offsets_uniform(n, p);
    let counts = vec![n; p];
    let target = Target {
        recv,
        counts: &counts,
        displs: &off[..p],
        own: with_own.then_some(send),
    };
    gather(ch, send, Some(target), root, (algorithm, Lengths::Agreed))
}

/// Gather on any channel: non-roots pass `target: None`, the root its [`Target`]; `lengths`
/// says whether the binomial tree's messages carry the lengths of their blocks.
fn gather<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    target: Option<Target<'_, T>>,
    root: usize,
    (algorithm, lengths): (Gather, Lengths),
) -> Result<()> {
    check_root(ch, root)?;
    let target = target.map(|mut t| {
        if let Some(own) = t.own.take() {
            let at = t.displs[root];
            t.recv[at..at + own.len()].copy_from_slice(own);
        }
        t
    });
    // `Auto` has been resolved by the callers (`Gather::resolve`), the same on every rank
    match ch.runs(algorithm) {
        Gather::Binomial => binomial_gather(&View::rotated(ch, root), send, target, root, lengths),
        Gather::Linear | Gather::Auto => linear(ch, send, target, root),
    }
}

fn linear<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    target: Option<Target<'_, T>>,
    root: usize,
) -> Result<()> {
    let Some(t) = target else {
        return ch.send(send, root, tags::GATHER_LINEAR);
    };
    for i in (0..ch.size()).filter(|&i| i != root) {
        let block = t.displs[i]..t.displs[i] + t.counts[i];
        recv_exact(ch, &mut t.recv[block], i, tags::GATHER_LINEAR, "gather")?;
    }
    Ok(())
}

/// Binomial gather on a view rotated so that the root is member 0 (`root` is its real rank,
/// for placing blocks). With [`Lengths::Sent`] each message is preceded by the lengths of its
/// blocks (member order), and the root checks every one of them against its `counts`.
fn binomial_gather<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    target: Option<Target<'_, T>>,
    root: usize,
    lengths: Lengths,
) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let children = binomial::children(r, p);
    let Some(t) = target else {
        let parent = binomial::parent(r);
        let mut lens = vec![send.len()];
        let mut children = children.peekable();
        let subtree = if children.peek().is_none() {
            Cow::Borrowed(send)
        } else {
            let mut subtree = send.to_vec();
            for c in children {
                let (theirs, data) = recv_subtree::<_, T>(ch, c, lengths)?;
                lens.extend(theirs.into_iter().flatten());
                subtree.extend_from_slice(&data);
            }
            Cow::Owned(subtree)
        };
        if lengths == Lengths::Sent {
            lengths::send(ch, lens, parent, tags::GATHER_LENGTHS)?;
        }
        return match subtree {
            Cow::Borrowed(data) => ch.send(data, parent, tags::GATHER_BINOMIAL),
            Cow::Owned(data) => ch.send_owned(data, parent, tags::GATHER_BINOMIAL),
        };
    };
    for c in binomial::children(r, p) {
        let members = (c..binomial::subtree_end(c, p)).map(|m| (m + root) % p);
        let (lens, got) = recv_subtree::<_, T>(ch, c, lengths)?;
        if let Some(lens) = lens {
            lengths::check(&lens, members.clone().map(|i| (i, t.counts[i])), "gather")?;
        }
        let due: usize = members.clone().map(|i| t.counts[i]).sum();
        check_count(got.len(), due, (c + root) % p, "gather")?;
        let mut at = 0;
        for i in members {
            let n = t.counts[i];
            t.recv[t.displs[i]..t.displs[i] + n].copy_from_slice(&got[at..at + n]);
            at += n;
        }
    }
    Ok(())
}

/// Receives the blocks of child `c`'s subtree: with [`Lengths::Sent`] their lengths first
/// (checked to add up to the data that follows), then the data.
fn recv_subtree<C: Named, T: Datatype>(
    ch: &C,
    c: usize,
    lengths: Lengths,
) -> Result<(Option<Vec<usize>>, Vec<T>)> {
    let lens = match lengths {
        Lengths::Sent => {
            let members = binomial::subtree_end(c, ch.size()) - c;
            Some(lengths::recv(
                ch,
                members,
                c,
                tags::GATHER_LENGTHS,
                "gather",
            )?)
        }
        Lengths::Agreed => None,
    };
    let data: Vec<T> = ch.recv_vec(c, tags::GATHER_BINOMIAL)?;
    if let Some(lens) = &lens {
        check_count(data.len(), lens.iter().sum(), ch.comm_rank(c), "gather")?;
    }
    Ok((lens, data))
}

/// The root receives every rank's `Vec`, moved, in rank order.
fn linear_owned<C: Named, T: Datatype>(
    ch: &C,
    send: Vec<T>,
    root: usize,
) -> Result<Option<Vec<Vec<T>>>> {
    if ch.rank() != root {
        ch.send_owned(send, root, tags::GATHER_OWNED)?;
        return Ok(None);
    }
    let mut all: Vec<Vec<T>> = vec![Vec::new(); ch.size()];
    for (i, slot) in all.iter_mut().enumerate().filter(|&(i, _)| i != root) {
        *slot = ch.recv_vec(i, tags::GATHER_OWNED)?;
    }
    all[root] = send;
    Ok(Some(all))
}

/// Binomial gather of owned `Vec`s on a view rotated so that the root is member 0 (`root`: its
/// real rank): each member passes its subtree's `Vec`s up, one message each, in member order.
fn binomial_owned<C: Named, T: Datatype>(
    ch: &C,
    send: Vec<T>,
    root: usize,
) -> Result<Option<Vec<Vec<T>>>> {
    let (r, p) = (ch.rank(), ch.size());
    let mut subtree = Vec::with_capacity(binomial::subtree_end(r, p) - r);
    subtree.push(send);
    // the children nearest first: their subtrees follow this rank's in member order
    for c in binomial::children(r, p) {
        for _ in c..binomial::subtree_end(c, p) {
            subtree.push(ch.recv_vec(c, tags::GATHER_OWNED)?);
        }
    }
    if r != 0 {
        let parent = binomial::parent(r);
        return subtree
            .into_iter()
            .try_for_each(|v| ch.send_owned(v, parent, tags::GATHER_OWNED))
            .map(|()| None);
    }
    // member m is rank (m + root) mod p
    subtree.rotate_right(root);
    Ok(Some(subtree))
}
