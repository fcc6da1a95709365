//! Shared machinery of the data-movement collectives: where each rank's block lies in a buffer
//! ([`offsets_even`], [`offsets_of_counts`]), sub-groups of ranks as a [`Channel`] of their own
//! ([`View`]: a root-rotated group, a row or a column of a 2-D grid), the 2-D grid shape of the
//! torus algorithms ([`grid_shape`]), exchanges between two disjoint parts of one buffer
//! ([`exchange`]), and receive buffers ([`zeroed_vec`]).
//!
//! Every algorithm in `bcast.rs`, `gather.rs`, `scatter.rs`, `allgather.rs` and `alltoall.rs`
//! is written for root 0 on some `Channel`; a [`View`] rotated by the root turns it into the
//! algorithm for any root without touching its code.

use super::{Channel, Partners};
use crate::datatype::{BasicType, Datatype};
use crate::{Comm, Error, Result};
use std::ops::Range;

/// A `Vec` of `len` values whose bytes are all zero: a receive buffer to be overwritten,
/// allocated zeroed (untouched pages of a large one cost nothing until written).
///
/// # Errors
///
/// [`Error::InvalidArgument`] (naming `call`) if `len` values of `T` exceed the largest possible
/// allocation (`isize::MAX` bytes) or the allocator cannot provide them: `len` comes from users'
/// counts.
pub(crate) fn zeroed_vec<T: Datatype>(len: usize, call: &'static str) -> Result<Vec<T>> {
    debug_assert!(T::type_map()
        .entries()
        .iter()
        .all(|&(b, _)| zero_is_valid(b)));
    let too_large = || {
        Error::invalid(
            call,
            format!(
                "a receive buffer of {len} elements of {} bytes cannot be allocated",
                std::mem::size_of::<T>()
            ),
        )
    };
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| too_large())?;
    if layout.size() == 0 {
        return Ok(without_bytes(len));
    }
    // SAFETY: `layout` has non-zero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if ptr.is_null() {
        return Err(too_large());
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `len` values of
    // `T`, as `Vec<T>` with capacity `len` does. The `Datatype` contract says every byte of a
    // `T` is either padding or part of a value of one of the basic types of its type map, and
    // `zero_is_valid` holds for every basic type (an exhaustive match: a new basic type must
    // decide), so the all-zero bytes are `len` initialised, valid values of `T`.
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// [`zeroed_vec`] where `len` values of `T` have no bytes at all (`len` is 0 or `T` is
/// zero-sized): made in one step, not value by value, since a user's count of zero-sized
/// values may be anything up to `usize::MAX`.
#[allow(clippy::uninit_vec)] // values without bytes: there is nothing to initialise
fn without_bytes<T: Datatype>(len: usize) -> Vec<T> {
    debug_assert!(len == 0 || std::mem::size_of::<T>() == 0);
    let mut v = Vec::new();
    // SAFETY: `len` is within the capacity: `set_len(0)` is always sound, and a `Vec` of a
    // zero-sized `T` never allocates and has capacity usize::MAX. The values have no bytes,
    // so there is nothing to initialise: by the `Datatype` contract every byte of a `T` is
    // padding or a value of a basic type, so a `T` of no bytes is one of no basic values, the
    // empty byte sequence, like every other.
    unsafe { v.set_len(len) };
    v
}

/// `parts` blocks of `each` elements: their total, or an error naming `call` if it overflows.
pub(crate) fn blocks_total(each: usize, parts: usize, call: &'static str) -> Result<usize> {
    each.checked_mul(parts).ok_or_else(|| {
        Error::invalid(
            call,
            format!("{parts} blocks of {each} elements overflow usize"),
        )
    })
}

/// Whether the all-zero bit pattern is a value of `b` (for [`zeroed_vec`]).
const fn zero_is_valid(b: BasicType) -> bool {
    use BasicType::*;
    match b {
        I8 | I16 | I32 | I64 | I128 | Isize | U8 | U16 | U32 | U64 | U128 | Usize => true,
        F32 | F64 | Bool | Char | Byte => true, // 0.0, false, '\0', 0x00
        C32 | C64 => true,                      // 0 + 0i
    }
}

/// Block offsets of `parts` blocks of `each` elements: `parts + 1` entries, block `i` is
/// `off[i]..off[i + 1]`.
pub(crate) fn offsets_uniform(each: usize, parts: usize) -> Vec<usize> {
    (0..=parts).map(|i| i * each).collect()
}

/// Block offsets that split `n` elements into `parts` nearly equal consecutive blocks (the
/// first `n % parts` blocks one longer).
pub(crate) fn offsets_even(n: usize, parts: usize) -> Vec<usize> {
    let (q, r) = (n / parts, n % parts);
    (0..=parts).map(|i| i * q + i.min(r)).collect()
}

/// Block offsets of consecutive blocks of the given lengths (prefix sums).
///
/// # Errors
///
/// [`Error::InvalidArgument`] (naming `call`) if the lengths add up to more than `usize::MAX`.
pub(crate) fn offsets_of_counts(counts: &[usize], call: &'static str) -> Result<Vec<usize>> {
    let mut off = Vec::with_capacity(counts.len() + 1);
    let mut at = 0usize;
    off.push(0);
    for (i, &c) in counts.iter().enumerate() {
        at = at.checked_add(c).ok_or_else(|| {
            Error::invalid(
                call,
                format!(
                    "the counts of ranks 0..={i} add up to more than usize::MAX ({}) elements",
                    usize::MAX
                ),
            )
        })?;
        off.push(at);
    }
    Ok(off)
}

/// Whether blocks `displs[i]..displs[i] + counts[i]` lie back to back in rank order from 0 (as
/// [`offsets_of_counts`] lays them out; an empty block may be anywhere).
pub(crate) fn consecutive(counts: &[usize], displs: &[usize]) -> bool {
    let mut at = 0usize;
    counts.iter().zip(displs).all(|(&c, &d)| {
        let here = c == 0 || d == at;
        at = at.saturating_add(c);
        here
    })
}

/// The range of blocks `a..b` of a layout.
#[inline]
pub(crate) fn span(off: &[usize], blocks: Range<usize>) -> Range<usize> {
    off[blocks.start]..off[blocks.end]
}

/// Sends `buf[send]` to `dest` and receives exactly `buf[recv]` from `source` in one call; the
/// two ranges must not overlap.
#[allow(clippy::too_many_arguments)] // a sendrecv on one buffer, plus the call for errors
pub(crate) fn exchange<C: Named, T: Datatype>(
    ch: &C,
    buf: &mut [T],
    send: Range<usize>,
    dest: usize,
    recv: Range<usize>,
    source: usize,
    tag: i32,
    call: &'static str,
) -> Result<()> {
    let (s, r): (&[T], &mut [T]) = if send.is_empty() {
        (&[], &mut buf[recv])
    } else if recv.is_empty() {
        (&buf[send], &mut [])
    } else if send.end <= recv.start {
        let (lo, hi) = buf.split_at_mut(recv.start);
        (&lo[send], &mut hi[..recv.end - recv.start])
    } else {
        debug_assert!(
            recv.end <= send.start,
            "overlapping ranges {send:?} and {recv:?}"
        );
        let (lo, hi) = buf.split_at_mut(send.start);
        (&hi[..send.end - send.start], &mut lo[recv])
    };
    sendrecv_exact(ch, s, dest, r, source, tag, call)
}

/// [`Channel::sendrecv`] with one tag that also checks that exactly `recv.len()` elements
/// arrived.
#[allow(clippy::too_many_arguments)] // sendrecv's own arguments plus the call for errors
pub(crate) fn sendrecv_exact<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    dest: usize,
    recv: &mut [T],
    source: usize,
    tag: i32,
    call: &'static str,
) -> Result<()> {
    let got = ch.sendrecv(send, recv, Partners { dest, source, tag })?;
    check_count(got, recv.len(), ch.comm_rank(source), call)
}

/// Receives exactly `buf.len()` elements from `source`, or says who sent how many.
pub(crate) fn recv_exact<C: Named, T: Datatype>(
    ch: &C,
    buf: &mut [T],
    source: usize,
    tag: i32,
    call: &'static str,
) -> Result<()> {
    let got = ch.recv_into(buf, source, tag)?;
    check_count(got, buf.len(), ch.comm_rank(source), call)
}

/// Checks that `got` elements came where `expected` were due from `source` (a rank of the
/// communicator).
pub(crate) fn check_count(
    got: usize,
    expected: usize,
    source: usize,
    call: &'static str,
) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::invalid(
            call,
            format!(
                "rank {source} contributed {got} elements where {expected} were expected \
                 (all ranks must pass matching counts)"
            ),
        ))
    }
}

/// Whether the receivers of a collective's messages that carry several ranks' blocks learn
/// the blocks' lengths from the sender (see [`lengths`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lengths {
    /// No: every block is as long as the receiver's own arguments say, and the ranks agree on
    /// them because every rank's call names the bytes of its block alike (a message of a call
    /// with other bytes is an [`Error::CollectiveMismatch`] where it arrives), or because one
    /// rank, the root of a scatter, alone decides them.
    Agreed,
    /// Yes: the lengths travel ahead of each such message ([`lengths::send`]), and its
    /// receiver takes them (scatterv, alltoallv) or compares them one by one with its own
    /// (gatherv, allgatherv). A message's total alone would let two wrong lengths that add up
    /// to the right one put one rank's data in another's block.
    Sent,
}

/// The lengths of the blocks of a message that carries several ranks' blocks, sent ahead of
/// it as a message of their own (see [`Lengths::Sent`]).
pub(crate) mod lengths {
    use super::{check_count, Named};
    use crate::{Error, Result};
    use std::ops::Range;

    /// The lengths of blocks `blocks` of a layout with offsets `off`.
    pub(crate) fn of(off: &[usize], blocks: Range<usize>) -> Vec<usize> {
        blocks.map(|i| off[i + 1] - off[i]).collect()
    }

    /// Sends `lens`, the lengths of the blocks of the message that follows, to `dest`
    /// (returns at once: the `Vec` moves).
    pub(crate) fn send<C: Named>(ch: &C, lens: Vec<usize>, dest: usize, tag: i32) -> Result<()> {
        ch.send_owned(lens, dest, tag)
    }

    /// Receives from `source` the lengths of the `blocks` blocks of the message that follows.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (naming `call`) if they are not `blocks` lengths.
    pub(crate) fn recv<C: Named>(
        ch: &C,
        blocks: usize,
        source: usize,
        tag: i32,
        call: &'static str,
    ) -> Result<Vec<usize>> {
        let lens: Vec<usize> = ch.recv_vec(source, tag)?;
        if lens.len() == blocks {
            return Ok(lens);
        }
        Err(Error::invalid(
            call,
            format!(
                "rank {} sent the lengths of {} blocks where {blocks} were expected",
                ch.comm_rank(source),
                lens.len()
            ),
        ))
    }

    /// Checks the lengths `got` of blocks that arrived against `expected`, this rank's own
    /// (the rank whose block it is, and its length), block by block.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (naming `call` and the first rank whose block is not as long as
    /// expected).
    pub(crate) fn check(
        got: &[usize],
        expected: impl IntoIterator<Item = (usize, usize)>,
        call: &'static str,
    ) -> Result<()> {
        got.iter()
            .zip(expected)
            .try_for_each(|(&n, (rank, due))| check_count(n, due, rank, call))
    }
}

/// Checks the length of a local buffer (inlined: on the path of every call with two buffers;
/// the error is built out of it).
#[inline]
pub(crate) fn check_len(len: usize, expected: usize, what: &str, call: &'static str) -> Result<()> {
    if len == expected {
        return Ok(());
    }
    Err(wrong_len(len, expected, what, call))
}

/// [`check_len`]'s error.
#[cold]
#[inline(never)]
fn wrong_len(len: usize, expected: usize, what: &str, call: &'static str) -> Error {
    Error::invalid(
        call,
        format!("the {what} has {len} elements, {expected} were expected"),
    )
}

/// Checks a root argument.
pub(crate) fn check_root<C: Channel>(ch: &C, root: usize) -> Result<()> {
    if root < ch.size() {
        Ok(())
    } else {
        Err(Error::RankOutOfRange {
            rank: root,
            size: ch.size(),
        })
    }
}

/// Checks that a per-rank argument (counts, displacements) has one entry per rank.
pub(crate) fn check_per_rank(len: usize, p: usize, what: &str, call: &'static str) -> Result<()> {
    invalid_unless(len == p, call, || {
        format!("{what} has {len} entries, but the communicator has {p} ranks")
    })
}

/// `Ok` if the check `holds`, else [`Error::InvalidArgument`] of `call` saying `why`.
fn invalid_unless(holds: bool, call: &'static str, why: impl FnOnce() -> String) -> Result<()> {
    if holds {
        Ok(())
    } else {
        Err(Error::invalid(call, why()))
    }
}

/// Checks that blocks `displs[i]..displs[i] + counts[i]` fit in a buffer of `len` elements.
pub(crate) fn check_blocks_fit(
    counts: &[usize],
    displs: &[usize],
    len: usize,
    what: &str,
    call: &'static str,
) -> Result<()> {
    for (i, (&c, &d)) in counts.iter().zip(displs).enumerate() {
        if d.checked_add(c).is_none_or(|end| end > len) {
            return Err(Error::invalid(
                call,
                format!(
                    "the block of rank {i} ({c} elements at displacement {d}) does not fit in \
                     the {what} buffer of {len} elements"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks the blocks of a receive buffer: each must fit in its `len` elements
/// ([`check_blocks_fit`]) and no two may overlap (MPI calls a receive that writes an element
/// twice erroneous; empty blocks overlap nothing).
pub(crate) fn check_recv_blocks(
    counts: &[usize],
    displs: &[usize],
    len: usize,
    call: &'static str,
) -> Result<()> {
    check_blocks_fit(counts, displs, len, "receive", call)?;
    check_disjoint(counts, displs, call)
}

/// Checks that no two receive blocks `displs[i]..displs[i] + counts[i]` overlap (empty blocks
/// overlap nothing; every block's end fits in `usize`, as [`check_blocks_fit`] checks).
pub(crate) fn check_disjoint(counts: &[usize], displs: &[usize], call: &'static str) -> Result<()> {
    let mut blocks: Vec<(usize, usize, usize)> = (0..counts.len())
        .filter(|&i| counts[i] > 0)
        .map(|i| (displs[i], counts[i], i))
        .collect();
    blocks.sort_unstable();
    match blocks.windows(2).find(|w| w[0].0 + w[0].1 > w[1].0) {
        None => Ok(()),
        Some(w) => {
            let ((da, ca, a), (db, cb, b)) = (w[0], w[1]);
            Err(Error::invalid(
                call,
                format!(
                    "the blocks of rank {a} ({ca} elements at displacement {da}) and rank {b} \
                     ({cb} elements at displacement {db}) overlap in the receive buffer: every \
                     element may be received once only"
                ),
            ))
        }
    }
}

/// Checks that a buffer of `len` elements splits into `p` equal blocks.
pub(crate) fn block_len(len: usize, p: usize, what: &str, call: &'static str) -> Result<usize> {
    if len.is_multiple_of(p) {
        Ok(len / p)
    } else {
        Err(Error::invalid(
            call,
            format!(
                "the {what} buffer has {len} elements, which is not a multiple of the {p} ranks"
            ),
        ))
    }
}

/// Whether `p` is a power of two (1 included).
#[inline]
pub(crate) fn is_pow2(p: usize) -> bool {
    p.is_power_of_two()
}

/// The partners of rank `r` of `p` in step `s` (of `1..p`) of a pairwise exchange, `(dest,
/// source)`: it sends to `r + s` and receives from `r - s`, or, when `p` is a power of two,
/// sends to and receives from `r xor s` (the partners pair off in every step).
pub(crate) fn pairwise_partners(r: usize, p: usize, s: usize) -> (usize, usize) {
    if is_pow2(p) {
        (r ^ s, r ^ s)
    } else {
        ((r + s) % p, (r + p - s) % p)
    }
}

/// Refuses an algorithm that needs a power-of-two number of ranks.
pub(crate) fn require_pow2(p: usize, algorithm: &str, call: &'static str) -> Result<()> {
    if is_pow2(p) {
        Ok(())
    } else {
        Err(Error::invalid(
            call,
            format!(
                "the {algorithm} algorithm needs a power-of-two number of ranks, the \
                 communicator has {p}"
            ),
        ))
    }
}

/// The `q1 x q2` grid of the 2-D torus algorithms: `q1` the largest divisor of `p` that is at
/// most `sqrt(p)` (so `q1 <= q2`, as square as `p` allows; a prime `p` gives one row).
pub(crate) fn grid_shape(p: usize) -> (usize, usize) {
    let mut q1 = 1;
    let mut d = 1;
    while d * d <= p {
        if p.is_multiple_of(d) {
            q1 = d;
        }
        d += 1;
    }
    (q1, p / q1)
}

/// A [`Channel`] whose members can be named by their rank in the communicator, for error
/// messages: the identity for a `Comm`, the renumbering of a [`View`].
pub(crate) trait Named: Channel {
    /// The communicator rank of member `member`.
    fn comm_rank(&self, member: usize) -> usize;
}

impl Named for Comm {
    fn comm_rank(&self, member: usize) -> usize {
        member
    }
}

impl<C: Named> Named for View<'_, C> {
    fn comm_rank(&self, member: usize) -> usize {
        self.ch.comm_rank(self.real(member))
    }
}

/// A group of ranks of a channel, seen as a channel of its own: member `i` is rank
/// `(start + i * stride) % p` of the underlying channel. `View::rotated(ch, root)` renumbers
/// so that `root` is member 0; rows and columns of a grid are views with stride 1 and `q2`.
pub(crate) struct View<'a, C> {
    ch: &'a C,
    start: usize,
    stride: usize,
    len: usize,
    me: usize,
}

impl<'a, C: Channel> View<'a, C> {
    /// All ranks, renumbered so that `root` is member 0.
    pub(crate) fn rotated(ch: &'a C, root: usize) -> Self {
        let p = ch.size();
        View {
            ch,
            start: root,
            stride: 1,
            len: p,
            me: (ch.rank() + p - root) % p,
        }
    }

    /// Members `start + i * stride` (mod p) for `i < len`; this rank is member `me`.
    pub(crate) fn strided(ch: &'a C, start: usize, stride: usize, len: usize, me: usize) -> Self {
        debug_assert_eq!((start + me * stride) % ch.size(), ch.rank());
        View {
            ch,
            start,
            stride,
            len,
            me,
        }
    }

    #[inline]
    fn real(&self, member: usize) -> usize {
        (self.start + member * self.stride) % self.ch.size()
    }
}

impl<C: Channel> Channel for View<'_, C> {
    fn rank(&self) -> usize {
        self.me
    }

    fn size(&self) -> usize {
        self.len
    }

    fn send<T: Datatype>(&self, data: &[T], dest: usize, tag: i32) -> Result<()> {
        self.ch.send(data, self.real(dest), tag)
    }

    fn send_owned<T: Datatype>(&self, data: Vec<T>, dest: usize, tag: i32) -> Result<()> {
        self.ch.send_owned(data, self.real(dest), tag)
    }

    fn recv_into<T: Datatype>(&self, buf: &mut [T], source: usize, tag: i32) -> Result<usize> {
        self.ch.recv_into(buf, self.real(source), tag)
    }

    fn recv_vec<T: Datatype>(&self, source: usize, tag: i32) -> Result<Vec<T>> {
        self.ch.recv_vec(self.real(source), tag)
    }

    fn sendrecv<T, U>(&self, send: &[T], recv: &mut [U], with: Partners) -> Result<usize>
    where
        T: Datatype,
        U: Datatype,
    {
        let (dest, source) = (self.real(with.dest), self.real(with.source));
        self.ch.sendrecv(
            send,
            recv,
            Partners {
                dest,
                source,
                ..with
            },
        )
    }

    fn runs<L: super::select::Label>(&self, algorithm: L) -> L {
        self.ch.runs(algorithm)
    }
}

/// The binomial tree of `p` ranks rooted at 0 (MPICH's numbering): the parent of `r > 0` is
/// `r` with its lowest set bit cleared; the children of `r` are `r + m` for the powers of two
/// `m` below `r`'s lowest set bit (below `p` for the root), and the subtree of `r` is the
/// consecutive ranks `r..r + lowbit(r)` (cut at `p`).
pub(crate) mod binomial {
    /// The parent of `r` (`r > 0`).
    #[inline]
    pub(crate) fn parent(r: usize) -> usize {
        r & (r - 1)
    }

    /// One past the last rank of the subtree of `r`.
    #[inline]
    pub(crate) fn subtree_end(r: usize, p: usize) -> usize {
        if r == 0 {
            p
        } else {
            (r + (1 << r.trailing_zeros())).min(p)
        }
    }

    /// The children of `r`, nearest first (smallest subtree first).
    pub(crate) fn children(r: usize, p: usize) -> impl DoubleEndedIterator<Item = usize> {
        let limit = if r == 0 {
            p.next_power_of_two()
        } else {
            1 << r.trailing_zeros()
        };
        // the offsets 1, 2, 4, … below `limit` that keep `r` + offset below `p`: a run of the
        // first powers of two (both bounds hold up to some power), counted without a buffer
        let within = |k: u32| {
            let m = 1usize << k;
            m < limit && r.checked_add(m).is_some_and(|c| c < p)
        };
        let count = (0..usize::BITS).take_while(|&k| within(k)).count() as u32;
        (0..count).map(move |k| r + (1 << k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_tree_covers_every_rank_once() {
        for p in 1..=70 {
            let mut seen = vec![0; p];
            for r in 0..p {
                for c in binomial::children(r, p) {
                    assert_eq!(binomial::parent(c), r);
                    seen[c] += 1;
                    assert!(binomial::subtree_end(c, p) <= binomial::subtree_end(r, p));
                }
            }
            assert!(seen[1..].iter().all(|&n| n == 1), "p = {p}");
        }
    }

    #[test]
    fn grid_shapes_are_as_square_as_possible() {
        assert_eq!(grid_shape(1), (1, 1));
        assert_eq!(grid_shape(12), (3, 4));
        assert_eq!(grid_shape(16), (4, 4));
        assert_eq!(grid_shape(17), (1, 17));
        assert_eq!(grid_shape(32), (4, 8));
    }

    #[test]
    fn even_offsets_split_exactly() {
        assert_eq!(offsets_even(7, 3), vec![0, 3, 5, 7]);
        assert_eq!(offsets_even(2, 4), vec![0, 1, 2, 2, 2]);
        assert_eq!(
            offsets_of_counts(&[2, 0, 3], "t").unwrap(),
            vec![0, 2, 2, 5]
        );
        assert!(consecutive(&[2, 0, 3], &[0, 2, 2]));
        assert!(consecutive(&[2, 0, 3], &[0, 7, 2])); // an empty block may be anywhere
        assert!(!consecutive(&[2, 0, 3], &[0, 2, 3]));
    }

    #[test]
    fn zeroed_vec_is_zero() {
        assert_eq!(zeroed_vec::<f64>(3, "t").unwrap(), vec![0.0; 3]);
        assert_eq!(zeroed_vec::<char>(2, "t").unwrap(), vec!['\0'; 2]);
        assert!(zeroed_vec::<u16>(0, "t").unwrap().is_empty());
        // zero-sized values: any number of them at once, not one by one
        let none = zeroed_vec::<[u8; 0]>(usize::MAX, "t").unwrap();
        assert_eq!(none.len(), usize::MAX);
        assert_eq!(none[usize::MAX - 1], [0u8; 0]);
    }

    #[test]
    fn sizes_that_overflow_are_errors() {
        let err = offsets_of_counts(&[1, usize::MAX], "gatherv").unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument { call: "gatherv", message }
                if message.contains("ranks 0..=1")),
            "{err}"
        );
        assert!(zeroed_vec::<u64>(usize::MAX / 4, "allgatherv").is_err());
        assert!(zeroed_vec::<u8>(isize::MAX as usize, "t").is_err()); // no such allocation
        assert!(blocks_total(usize::MAX / 2, 3, "t").is_err());
        assert_eq!(blocks_total(4, 3, "t").unwrap(), 12);
    }

    #[test]
    fn receive_blocks_must_fit_and_not_overlap() {
        assert!(check_recv_blocks(&[2, 0, 3], &[3, 1, 0], 5, "t").is_ok());
        assert!(check_recv_blocks(&[2, 3], &[0, 1], 5, "t").is_err()); // 0..2 and 1..4
        assert!(check_recv_blocks(&[2, 2], &[0, 2], 3, "t").is_err()); // 2..4 > 3
        assert!(check_recv_blocks(&[1, 1], &[usize::MAX, 0], 3, "t").is_err());
        assert!(check_recv_blocks(&[0, 0], &[0, 0], 0, "t").is_ok());
    }
}
