//! Allgather (MPI_Allgather, MPI_Allgatherv): all-to-all broadcast, every rank's block to
//! every rank, the lecture's schemes on ring, hypercube and 2-D torus.
//!
//! - [`Allgather::Ring`]: `p - 1` steps, each passing on the block received last;
//!   `(p - 1)(alpha + beta m)`.
//! - [`Allgather::RecursiveDoubling`]: the hypercube scheme of the lecture's N-body program:
//!   in step `k` partners across dimension `k` swap everything they have, doubling it;
//!   `log2 p alpha + (p - 1) beta m`. Any `p`: the `p - p'` ranks above the largest power of
//!   two `p'` first fold their block into rank `r - p'` and get the result back at the end.
//! - [`Allgather::Pairwise`]: the N-body program's other scheme, `p - 1` steps in which every
//!   rank sends its own block to the `s`-th next rank (partner `r xor s` when `p` is a power of
//!   two); `(p - 1)(alpha + beta m)`.
//! - [`Allgather::Bruck`]: Bruck et al. 1997, `ceil(log2 p)` steps for any `p`, each sending
//!   the first `min(2^k, p - 2^k)` blocks of a rotated buffer to rank `r - 2^k`.
//! - [`Allgather::Torus`]: the 2-D torus two-phase scheme: ring allgather along each row of a
//!   `q1 x q2` grid, then along each column with the rows as blocks;
//!   `(q1 + q2 - 2) alpha + (p - 1) beta m`.
//!
//! All of them work on one buffer holding every rank's block at its offset, in place. For
//! allgatherv, whose ranks each pass the counts of all (and may pass different ones), every
//! message of more than one block (recursive doubling, Bruck, the torus's columns) is
//! preceded by the lengths of its blocks, which the receiver compares one by one with its own
//! counts: the total alone would let two wrong counts that add up to the right ones put one
//! rank's data in another's block.

use super::layout::Named;
use super::layout::{
    blocks_total, check_per_rank, check_recv_blocks, consecutive, exchange, grid_shape, is_pow2,
    lengths, offsets_of_counts, offsets_uniform, pairwise_partners, span, zeroed_vec, Lengths,
    View,
};
use super::select::{dispatched, message_passing, resolve, Native};
use super::shared;
use super::tags;
use super::Channel;
use crate::comm::Buffer;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Error, Result};
use std::ops::Range;

const CALL: &str = "allgather";
const CALL_V: &str = "allgatherv";

/// The allgather algorithm (for [`Comm::using`] and the other allgather forms).
///
/// An MPI library picks among such algorithms inside MPI_Allgather and MPI_Allgatherv; MPICH lets
/// the user fix the choice with `MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM`, as the `_with` forms do
/// here.
///
/// Each variant's cost is for `p` ranks and `m` the bytes of one rank's block:
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` picks by the number of ranks `p` and the total result size `p * m` in bytes (the [table
/// of every operation's defaults](crate#default-algorithms); tuned on the 2-core machine with
/// `cargo bench --bench collective_move`): in-process, where the ranks share memory and the blocks
/// are equal, `SharedMemory`; elsewhere (recordings, allgatherv; on MPI, `Auto` runs
/// `MPI_Allgather` except in place) [`Allgather::select`]:
///
/// | ranks `p` | result `p * m` | algorithm |
/// |---|---|---|
/// | any | `< 64 KiB` | `Ring` |
/// | power of two | `>= 64 KiB` | `RecursiveDoubling` |
/// | other | `>= 64 KiB` | `Torus` |
///
/// Shared memory against the message-passing rule on the 2-core machine, medians of 7 runs
/// with nothing else running (microseconds, blocks of `m` bytes; 4 and 8 ranks oversubscribe
/// the cores): 8 B 0.22 / 1.1 (2 ranks), 4.1 / 21 (4), 11 / 93 (8), 181 / 5022 (64); 64 KiB
/// 4.1 / 16, 22 / 54, 107 / 265, 12904 / 26284; 1 MiB 58 / 63, 368 / 689, 4282 / 6249. Each
/// rank copies every other rank's block once, straight from where it was posted. Without shared
/// memory, small messages cost thread wake-ups when ranks outnumber cores, and the ring's chain
/// of neighbour hand-offs was the fastest or close to it at 4 to 32 ranks; for large blocks the
/// fewer, larger steps of recursive doubling and the torus won.
///
/// ```
/// use rpar::Allgather;
/// assert_eq!(Allgather::select(8, 64, true), Allgather::Ring);
/// assert_eq!(Allgather::select(6, 1 << 20, true), Allgather::Torus);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Allgather {
    /// The default: `SharedMemory` in-process for equal blocks, else [`Allgather::select`].
    #[default]
    Auto,
    /// Ring: `p - 1` neighbour steps.
    /// Cost: `(p - 1)(alpha + beta m)`.
    Ring,
    /// Hypercube recursive doubling (any `p`).
    /// Cost: `log2 p alpha + (p - 1) beta m`.
    RecursiveDoubling,
    /// Pairwise exchange: `p - 1` steps, own block to the `s`-th next rank.
    /// Cost: `(p - 1)(alpha + beta m)`.
    Pairwise,
    /// Bruck's `ceil(log2 p)`-step algorithm.
    /// Cost: `ceil(log2 p) alpha + (p - 1) beta m`.
    Bruck,
    /// 2-D torus: rows, then columns.
    /// Cost: `(q1 + q2 - 2) alpha + (p - 1) beta m` on a q1 x q2 grid.
    Torus,
    /// Through shared memory (in-process ranks only, equal blocks; elsewhere the
    /// message-passing default): every rank posts its block (copied if small, else lent in
    /// place) and copies every other rank's straight into its result.
    /// Cost, with `c` one synchronisation: `c + (p - 1) beta m`.
    SharedMemory,
}

impl Allgather {
    /// The message-passing algorithm `Auto` runs for `ranks` ranks and blocks of `bytes` bytes
    /// (the mean block for allgatherv) where the ranks share no memory (the table above, by the
    /// result `ranks * bytes`; `commutative` is ignored: an allgather combines nothing). No MPI
    /// routine: an MPI library makes this choice inside MPI_Allgather (in MPICH, what
    /// `MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Allgather;
    /// assert_eq!(Allgather::select(2, 16, true), Allgather::Ring);
    /// assert_eq!(Allgather::select(64, 1 << 20, true), Allgather::RecursiveDoubling);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Allgather {
        let _ = commutative;
        if ranks.saturating_mul(bytes) < 64 * 1024 {
            Allgather::Ring
        } else if is_pow2(ranks) {
            Allgather::RecursiveDoubling
        } else {
            Allgather::Torus
        }
    }
}

impl Comm {
    /// [`Comm::allgather`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn allgather_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        algorithm: Allgather,
    ) -> Result<Vec<B::Elem>> {
        self.collective(
            Call::new("allgather").bytes(std::mem::size_of_val(send.as_elems())),
            &algorithm,
            || {
                let send = send.as_elems();
                let mut recv = zeroed_vec(blocks_total(send.len(), self.size(), CALL)?, CALL)?;
                self.allgather_into_with(Some(send), &mut recv, algorithm)?;
                Ok(recv)
            },
        )
    }

    /// The allgather into the caller's buffer with the algorithm given (what the forms run with
    /// the one chosen by [`Comm::using`]): of `send` into `recv`, or with `send` `None` in
    /// place, this rank's block already at its place in `recv`.
    pub(crate) fn allgather_into_with<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        algorithm: Allgather,
    ) -> Result<()> {
        let bytes = std::mem::size_of_val(send.unwrap_or(recv));
        self.collective(Call::new("allgather").bytes(bytes), &algorithm, || {
            let (p, r) = (self.size(), self.rank());
            let n = match send {
                Some(send) => {
                    super::layout::check_len(recv.len(), send.len() * p, "receive buffer", CALL)?;
                    send.len()
                }
                None => super::layout::block_len(recv.len(), p, "allgather", CALL)?,
            };
            if let (Allgather::Auto, Some(native), Some(send)) = (algorithm, self.native(), send) {
                if native.allgather(send, recv)? {
                    self.runs(Native::<Allgather>::of());
                    return Ok(());
                }
            }
            let off = offsets_uniform(n, p);
            let own = span(&off, r..r + 1);
            let block = std::mem::size_of_val(&recv[own.clone()]);
            let chosen = resolve(algorithm, shared::available::<T>(self), p, block, true);
            if chosen == Allgather::SharedMemory {
                return match send {
                    Some(send) => shared::allgather(self, send, recv),
                    None => {
                        let own = recv[own].to_vec();
                        shared::allgather(self, &own, recv)
                    }
                };
            }
            if let Some(send) = send {
                recv[own].copy_from_slice(send);
            }
            allgather(self, recv, &off, chosen)
        })
    }

    /// [`Comm::allgatherv`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn allgatherv_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        counts: &[usize],
        algorithm: Allgather,
    ) -> Result<Vec<B::Elem>> {
        self.collective(Call::new(CALL_V), &algorithm, || {
            check_per_rank(counts.len(), self.size(), "counts", CALL_V)?;
            let off = offsets_of_counts(counts, CALL_V)?;
            let mut recv = zeroed_vec(off[self.size()], CALL_V)?;
            let blocks = (counts, &off[..self.size()]);
            self.allgatherv_blocks(Some(send.as_elems()), &mut recv, blocks, algorithm)?;
            Ok(recv)
        })
    }

    /// The allgatherv into the caller's buffer with the algorithm given (what the forms run
    /// with the one chosen by [`Comm::using`]): `send` and `recv` as for
    /// [`allgather_into_with`](Comm::allgather_into_with), `blocks` the counts and
    /// displacements.
    pub(crate) fn allgatherv_into_with<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        blocks: (&[usize], &[usize]),
        algorithm: Allgather,
    ) -> Result<()> {
        self.collective(Call::new(CALL_V), &algorithm, || {
            self.allgatherv_blocks(send, recv, blocks, algorithm)
        })
    }

    /// What every allgatherv form runs: checks, then the algorithm on `recv` itself when the
    /// blocks lie back to back in rank order from 0, else on a packed copy whose blocks are
    /// then copied into place. `own`: this rank's block, or `None` when it is in place.
    fn allgatherv_blocks<T: Datatype>(
        &self,
        own: Option<&[T]>,
        recv: &mut [T],
        (counts, displs): (&[usize], &[usize]),
        algorithm: Allgather,
    ) -> Result<()> {
        let (p, r) = (self.size(), self.rank());
        check_per_rank(counts.len(), p, "counts", CALL_V)?;
        check_per_rank(displs.len(), p, "displs", CALL_V)?;
        if let Some(send) = own {
            if counts[r] != send.len() {
                return Err(Error::invalid(
                    CALL_V,
                    format!(
                        "counts[{r}] is {} but this rank sends {} elements",
                        counts[r],
                        send.len()
                    ),
                ));
            }
        }
        check_recv_blocks(counts, displs, recv.len(), CALL_V)?;
        let off = offsets_of_counts(counts, CALL_V)?;
        let total = off[p];
        let mean_block = std::mem::size_of::<T>().saturating_mul(total) / p;
        let chosen = message_passing(algorithm, p, mean_block, true);
        let mine = displs[r]..displs[r] + counts[r];
        // the ranks' `counts` may disagree: their lengths travel with the blocks
        let blocks = Blocks::new(self, &off, Lengths::Sent);
        if consecutive(counts, displs) {
            if let Some(send) = own {
                recv[mine].copy_from_slice(send);
            }
            return allgather_blocks(self, &mut recv[..total], blocks, chosen);
        }
        let mut packed = zeroed_vec(total, CALL_V)?;
        packed[span(&off, r..r + 1)].copy_from_slice(own.unwrap_or(&recv[mine]));
        allgather_blocks(self, &mut packed, blocks, chosen)?;
        for (i, &d) in displs.iter().enumerate() {
            recv[d..d + counts[i]].copy_from_slice(&packed[span(&off, i..i + 1)]);
        }
        Ok(())
    }
}

/// Allgather on any channel, in place: block `i` of `buf` is `off[i]..off[i + 1]`, this rank's
/// own block is already there, and the ranks agree on the blocks' lengths (the uniform forms,
/// whose calls name the bytes of a block, the broadcast, and the recordings of `sim`).
pub(crate) fn allgather<C: Named, T: Datatype>(
    ch: &C,
    buf: &mut [T],
    off: &[usize],
    algorithm: Allgather,
) -> Result<()> {
    allgather_blocks(ch, buf, Blocks::new(ch, off, Lengths::Agreed), algorithm)
}

/// [`allgather`] on `blocks`, whose lengths travel with them if `blocks.lengths` says so.
fn allgather_blocks<C: Named, T: Datatype>(
    ch: &C,
    buf: &mut [T],
    blocks: Blocks<'_>,
    algorithm: Allgather,
) -> Result<()> {
    let p = ch.size();
    // `Auto` and `SharedMemory` resolve to a message-passing algorithm here
    let mean_block = std::mem::size_of_val(buf) / p;
    let algorithm = dispatched(ch, algorithm, mean_block, true);
    if p == 1 {
        return Ok(());
    }
    match algorithm {
        Allgather::Ring | Allgather::Auto | Allgather::SharedMemory => {
            ring_of_groups(ch, buf, blocks, 1, tags::ALLGATHER_RING)
        }
        Allgather::RecursiveDoubling => recursive_doubling(ch, buf, blocks),
        Allgather::Pairwise => pairwise(ch, buf, blocks),
        Allgather::Bruck => bruck(ch, buf, blocks),
        Allgather::Torus => torus(ch, buf, blocks),
    }
}

/// The blocks of an allgather's buffer as one of its steps sees them: block `i` is
/// `off[i]..off[i + 1]`, the block of rank `(first + i) % ranks` of the channel the allgather
/// runs on. With [`Lengths::Sent`] every message of more than one block is preceded by the
/// blocks' lengths, and its receiver compares them with its own (a single block's length is
/// its message's, which every receive checks).
#[derive(Clone, Copy)]
struct Blocks<'a> {
    off: &'a [usize],
    first: usize,
    ranks: usize,
    lengths: Lengths,
}

impl<'a> Blocks<'a> {
    /// Block `i` is rank `i`'s.
    fn new<C: Named>(ch: &C, off: &'a [usize], lengths: Lengths) -> Self {
        Blocks {
            off,
            first: 0,
            ranks: ch.size(),
            lengths,
        }
    }

    /// Blocks `range` as a layout of their own (block 0 is the first of them).
    fn sub(self, range: std::ops::RangeInclusive<usize>) -> Self {
        Blocks {
            first: self.first + range.start(),
            off: &self.off[range],
            ..self
        }
    }

    /// Sends the lengths of blocks `out` to `dest` ahead of their message, if they travel.
    fn send_lengths<C: Named>(&self, ch: &C, out: Range<usize>, dest: usize) -> Result<()> {
        if self.lengths == Lengths::Sent && out.len() > 1 {
            lengths::send(
                ch,
                lengths::of(self.off, out),
                dest,
                tags::ALLGATHER_LENGTHS,
            )?;
        }
        Ok(())
    }

    /// Receives the lengths of blocks `inc` from `source`, if they travel, and checks them
    /// against this rank's.
    fn recv_lengths<C: Named>(&self, ch: &C, inc: Range<usize>, source: usize) -> Result<()> {
        if self.lengths == Lengths::Sent && inc.len() > 1 {
            let got = lengths::recv(ch, inc.len(), source, tags::ALLGATHER_LENGTHS, CALL_V)?;
            let mine = inc.map(|i| ((self.first + i) % self.ranks, self.off[i + 1] - self.off[i]));
            lengths::check(&got, mine, CALL_V)?;
        }
        Ok(())
    }

    /// Sends blocks `out` to `dest` and receives blocks `inc` from `source` into place, each
    /// preceded by its lengths if they travel.
    fn exchange<C: Named, T: Datatype>(
        &self,
        ch: &C,
        buf: &mut [T],
        (out, dest): (Range<usize>, usize),
        (inc, source): (Range<usize>, usize),
        tag: i32,
    ) -> Result<()> {
        self.send_lengths(ch, out.clone(), dest)?;
        self.recv_lengths(ch, inc.clone(), source)?;
        let (out, inc) = (span(self.off, out), span(self.off, inc));
        exchange(ch, buf, out, dest, inc, source, tag, CALL)
    }
}

/// Ring allgather over the members of `ch` (also the second phase of the van de Geijn
/// broadcast), the ranks agreeing on the blocks' lengths.
pub(crate) fn ring<C, T>(ch: &C, buf: &mut [T], off: &[usize], tag: i32) -> Result<()>
where
    C: Named,
    T: Datatype,
{
    ring_of_groups(ch, buf, Blocks::new(ch, off, Lengths::Agreed), 1, tag)
}

/// Ring allgather over the members of `ch`, member `i` holding blocks
/// `i * group..(i + 1) * group` of `blocks` (the phases of the torus scheme: rows are groups).
fn ring_of_groups<C: Named, T: Datatype>(
    ch: &C,
    buf: &mut [T],
    blocks: Blocks<'_>,
    group: usize,
    tag: i32,
) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let (next, prev) = ((r + 1) % p, (r + p - 1) % p);
    let of = |member: usize| member * group..(member + 1) * group;
    for s in 0..p - 1 {
        let out = (r + p - s) % p;
        let inc = (r + 2 * p - s - 1) % p;
        blocks.exchange(ch, buf, (of(out), next), (of(inc), prev), tag)?;
    }
    Ok(())
}

fn recursive_doubling<C: Named, T: Datatype>(
    ch: &C,
    buf: &mut [T],
    blocks: Blocks<'_>,
) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let off = blocks.off;
    let low = 1 << p.ilog2(); // p': the hypercube
    let extra = p - low; // ranks low..p fold into 0..extra
    if r >= low {
        ch.send(&buf[span(off, r..r + 1)], r - low, tags::ALLGATHER_DOUBLING)?;
        blocks.recv_lengths(ch, 0..p, r - low)?;
        let whole = buf.len();
        let got = ch.recv_into(buf, r - low, tags::ALLGATHER_DOUBLING)?;
        return super::layout::check_count(got, whole, r - low, CALL);
    }
    if r < extra {
        let folded = span(off, r + low..r + low + 1);
        super::layout::recv_exact(
            ch,
            &mut buf[folded],
            r + low,
            tags::ALLGATHER_DOUBLING,
            CALL,
        )?;
    }
    let mut d = 1;
    while d < low {
        let partner = r ^ d;
        let (mine, theirs) = (r & !(d - 1), partner & !(d - 1));
        let group = |base: usize| base..base + d;
        let folded = |base: usize| base.min(extra) + low..(base + d).min(extra) + low;
        let with = |range| (range, partner);
        let tag = tags::ALLGATHER_DOUBLING;
        blocks.exchange(ch, buf, with(group(mine)), with(group(theirs)), tag)?;
        if mine < extra || theirs < extra {
            blocks.exchange(ch, buf, with(folded(mine)), with(folded(theirs)), tag)?;
        }
        d *= 2;
    }
    if r < extra {
        blocks.send_lengths(ch, 0..p, r + low)?;
        ch.send(buf, r + low, tags::ALLGATHER_DOUBLING)?;
    }
    Ok(())
}

fn pairwise<C: Named, T: Datatype>(ch: &C, buf: &mut [T], blocks: Blocks<'_>) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    for s in 1..p {
        let (dest, source) = pairwise_partners(r, p, s);
        let own = (r..r + 1, dest);
        blocks.exchange(
            ch,
            buf,
            own,
            (source..source + 1, source),
            tags::ALLGATHER_PAIRWISE,
        )?;
    }
    Ok(())
}

fn bruck<C: Named, T: Datatype>(ch: &C, buf: &mut [T], blocks: Blocks<'_>) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let off = blocks.off;
    // block j of the rotated order is rank r + j's: own block first. Only the own block holds
    // anything yet (every other position is received below), so it is moved alone: rotating
    // the whole buffer cost rank r > 0 a pass over all of it (at 1 MiB a rank on 2 processes,
    // twice the time of MPICH's Bruck)
    if off[r] > 0 {
        buf.copy_within(off[r]..off[r + 1], 0);
    }
    let lens: Vec<usize> = (0..p)
        .map(|j| off[(r + j) % p + 1] - off[(r + j) % p])
        .collect();
    let roff = offsets_of_counts(&lens, CALL)?;
    let rotated = Blocks {
        off: &roff,
        first: blocks.first + r,
        ..blocks
    };
    let mut d = 1;
    while d < p {
        let count = d.min(p - d);
        let (dest, source) = ((r + p - d) % p, (r + d) % p);
        rotated.exchange(
            ch,
            buf,
            (0..count, dest),
            (d..d + count, source),
            tags::ALLGATHER_BRUCK,
        )?;
        d *= 2;
    }
    buf.rotate_right(off[r]);
    Ok(())
}

fn torus<C: Named, T: Datatype>(ch: &C, buf: &mut [T], blocks: Blocks<'_>) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let (q1, q2) = grid_shape(p);
    let (row, col) = (r / q2, r % q2);
    let row_view = View::strided(ch, row * q2, 1, q2, col);
    let row_blocks = blocks.sub(row * q2..=(row + 1) * q2);
    ring_of_groups(&row_view, buf, row_blocks, 1, tags::ALLGATHER_ROW)?;
    // then the rows, each a group of q2 blocks, along the columns
    let column = View::strided(ch, col, q2, q1, row);
    ring_of_groups(&column, buf, blocks, q2, tags::ALLGATHER_COLUMN)
}
