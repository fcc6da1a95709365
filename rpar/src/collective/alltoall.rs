//! All-to-all personalized exchange (MPI_Alltoall, MPI_Alltoallv): rank `i`'s block `j` goes
//! to rank `j`'s block `i`, by four algorithms.
//!
//! - [`Alltoall::Linear`]: every rank posts all its sends (eager), then receives from each
//!   rank; `(p - 1)(alpha + beta m)` per rank, all at once.
//! - [`Alltoall::Pairwise`]: `p - 1` steps; in step `s` rank `r` sends to `r + s` and
//!   receives from `r - s` (partner `r xor s` when `p` is a power of two);
//!   `(p - 1)(alpha + beta m)`.
//! - [`Alltoall::Bruck`]: Bruck et al. 1997: after a local rotation, `ceil(log2 p)` steps, in
//!   step `k` the blocks whose index has bit `k` set go to rank `r + 2^k`;
//!   `ceil(log2 p)(alpha + beta m p / 2)`, the small-message choice.
//! - [`Alltoall::Hypercube`]: the lecture's dimension exchange on a hypercube (`p` a power of
//!   two): in step `k` partners across dimension `k` swap the `p / 2` blocks bound for the
//!   other half; `log2 p (alpha + beta m p / 2)`.
//!
//! Bruck and Hypercube forward other ranks' blocks; for alltoallv each of their messages is
//! preceded by the lengths of the blocks it carries. [`Comm::alltoall_owned`] runs the same
//! schedules with every block an owned `Vec` of its own, moved from rank to rank uncopied.

use super::layout::Named;
use super::layout::{
    block_len, check_blocks_fit, check_count, check_len, check_per_rank, check_recv_blocks,
    is_pow2, lengths, offsets_of_counts, offsets_uniform, recv_exact, require_pow2, zeroed_vec,
};
use super::select::{message_passing, resolve, Native};
use super::shared;
use super::Channel;
use crate::comm::Buffer;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::transport::RENDEZVOUS_BYTES;
use crate::{Comm, Error, Result};

const TAG_LINEAR: i32 = 240;
const TAG_PAIRWISE: i32 = 241;
const TAG_BRUCK: i32 = 242;
const TAG_HYPERCUBE: i32 = 243;
const TAG_LENGTHS: i32 = 244;

const CALL: &str = "alltoall";
const CALL_V: &str = "alltoallv";

/// The alltoall algorithm (for [`Comm::using`]).
///
/// An MPI library picks among such algorithms inside MPI_Alltoall and MPI_Alltoallv; MPICH lets the
/// user fix the choice with `MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM`, as the `_with` forms do here.
///
/// Each variant's cost is for `p` ranks and `m` the bytes of one block (one rank to one rank):
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` picks by the ranks `p` and the bytes `m` of one block (the [table of every operation's
/// defaults](crate#default-algorithms); tuned on the 2-core machine with `cargo bench --bench
/// collective_move`): in-process, where the ranks share memory and the blocks are equal,
/// `SharedMemory`; elsewhere (recordings; on MPI, `Auto` runs `MPI_Alltoall`) [`Alltoall::select`].
/// Alltoallv, whose block sizes differ, takes `Pairwise`, and [`Comm::alltoall_owned`], whose
/// blocks move rather than being copied, `Linear`.
///
/// | ranks `p` | block `m` | algorithm |
/// |---|---|---|
/// | `>= 16` | `<= 256 B` | `Bruck` |
/// | any | `<= 32 KiB` (eager) | `Linear` |
/// | any | `> 32 KiB` | `Pairwise` |
///
/// Shared memory against the message-passing rule on the 2-core machine, medians of 7 runs
/// with nothing else running (microseconds; 4 and 8 ranks oversubscribe the cores): 8 B
/// 0.22 / 0.46 (2 ranks), 3.7 / 15 (4), 11 / 49 (8), 182 / 1825 (64); 64 KiB 3.1 / 3.9,
/// 27 / 75, 132 / 471, 22727 / 43428; 1 MiB 54 / 62, 976 / 1457, 5517 / 8296. Each rank copies
/// its block of every other rank's buffer once, straight from where it was posted. Without
/// shared memory, eager messages let the linear scheme post everything at once and wait once;
/// above the rendezvous threshold its sends must be copied first, while the pairwise exchange
/// copies each block once, straight into place. Bruck's `log2 p` steps paid off only for tiny
/// blocks on 16 ranks and more.
///
/// ```
/// use rpar::Alltoall;
/// assert_eq!(Alltoall::select(8, 8, true), Alltoall::Linear);
/// assert_eq!(Alltoall::select(8, 65536, true), Alltoall::Pairwise);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Alltoall {
    /// The default: `SharedMemory` in-process for equal blocks, else [`Alltoall::select`].
    #[default]
    Auto,
    /// All sends posted at once, then all receives.
    /// Cost: `(p - 1)(alpha + beta m)` per rank, all at once.
    Linear,
    /// `p - 1` pairwise exchange steps.
    /// Cost: `(p - 1)(alpha + beta m)`.
    Pairwise,
    /// Bruck's `ceil(log2 p)`-step algorithm.
    /// Cost: `ceil(log2 p)(alpha + beta m p / 2)`.
    Bruck,
    /// Hypercube dimension exchange (`p` a power of two).
    /// Cost: `log2 p (alpha + beta m p / 2)`.
    Hypercube,
    /// Through shared memory (in-process ranks only, equal blocks; elsewhere the
    /// message-passing default): every rank posts its send buffer (copied if small, else lent
    /// in place) and copies its block of every other rank's straight into its result.
    /// Cost, with `c` one synchronisation: `c + (p - 1) beta m`.
    SharedMemory,
}

impl Alltoall {
    /// The message-passing algorithm `Auto` runs for `ranks` ranks and blocks of `bytes` bytes
    /// where the ranks share no memory (the table above; `commutative` is ignored: an alltoall
    /// combines nothing). No MPI routine: an MPI library makes this choice inside MPI_Alltoall
    /// (in MPICH, what `MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Alltoall;
    /// assert_eq!(Alltoall::select(2, 8, true), Alltoall::Linear);
    /// assert_eq!(Alltoall::select(64, 8, true), Alltoall::Bruck);
    /// assert_eq!(Alltoall::select(64, 1 << 20, true), Alltoall::Pairwise);
    /// ```
    pub fn select(ranks: usize, bytes: usize, commutative: bool) -> Alltoall {
        let _ = commutative;
        if ranks >= 16 && bytes <= 256 {
            Alltoall::Bruck
        } else if bytes <= RENDEZVOUS_BYTES {
            Alltoall::Linear
        } else {
            Alltoall::Pairwise
        }
    }
}

/// Where the blocks lie: block `i` is `displs[i]..displs[i] + counts[i]`.
#[derive(Clone, Copy)]
struct Blocks<'a> {
    counts: &'a [usize],
    displs: &'a [usize],
}

impl Blocks<'_> {
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.displs[i]..self.displs[i] + self.counts[i]
    }
}

impl Comm {
    /// Sends block `j` of `send` (`p` equal blocks) to rank `j` and returns the blocks received,
    /// block `i` from rank `i` (MPI_Alltoall).
    ///
    /// Cost: that of the algorithm `Auto` picks (see [`Alltoall`] and [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the length of `send` is not a multiple of `p`; and, as for
    /// every collective, [`Error::CollectiveMismatch`] if the ranks call different collectives (or
    /// this one with buffers of different lengths) and [`Error::Aborted`] if another rank fails
    /// during the call.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank() as u32;
    ///     world.alltoall(&[10 * r, 10 * r + 1, 10 * r + 2][..])
    /// })?;
    /// assert_eq!(got[1], [1, 11, 21]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall<B: Buffer + ?Sized>(&self, send: &B) -> Result<Vec<B::Elem>> {
        self.alltoall_with(send, self.chosen::<Alltoall>())
    }

    /// [`Comm::alltoall`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn alltoall_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        algorithm: Alltoall,
    ) -> Result<Vec<B::Elem>> {
        self.collective(
            Call::new("alltoall").bytes(std::mem::size_of_val(send.as_elems())),
            &algorithm,
            || {
                let send = send.as_elems();
                let mut recv = zeroed_vec(send.len(), CALL)?;
                self.alltoall_into_with(send, &mut recv, algorithm)?;
                Ok(recv)
            },
        )
    }

    /// Alltoall into `recv` (as long as `send`), MPI_Alltoall's own form.
    ///
    /// Cost: that of the algorithm `Auto` picks (see [`Alltoall`] and [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the length of `send` is not a multiple of `p` or `recv` is not
    /// as long as `send`; and, as for every collective, [`Error::CollectiveMismatch`] if the ranks
    /// call different collectives (or this one with buffers of different lengths) and
    /// [`Error::Aborted`] if another rank fails during the call.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let mut got = [0u8; 2];
    ///     let r = world.rank() as u8;
    ///     world.alltoall_into(&[2 * r, 2 * r + 1][..], &mut got)?;
    ///     assert_eq!(got, [r, r + 2]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall_into<B: Buffer + ?Sized>(&self, send: &B, recv: &mut [B::Elem]) -> Result<()> {
        self.alltoall_into_with(send, recv, self.chosen::<Alltoall>())
    }

    /// [`Comm::alltoall_into`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn alltoall_into_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        recv: &mut [B::Elem],
        algorithm: Alltoall,
    ) -> Result<()> {
        self.collective(
            Call::new("alltoall").bytes(std::mem::size_of_val(send.as_elems())),
            &algorithm,
            || {
                let send = send.as_elems();
                let p = self.size();
                if let (Alltoall::Auto, Some(native)) = (algorithm, self.native()) {
                    // MPI's own for well-formed buffers; rpar's checks report the others
                    if send.len() == recv.len()
                        && send.len().is_multiple_of(p)
                        && native.alltoall(send, recv)?
                    {
                        self.runs(Native::<Alltoall>::of());
                        return Ok(());
                    }
                }
                let n = block_len(send.len(), p, "send", CALL)?;
                check_len(recv.len(), send.len(), "receive buffer", CALL)?;
                let (shm, block) = (shared::available::<B::Elem>(self), size_of_val(&send[..n]));
                let chosen = resolve(algorithm, shm, p, block, true);
                if chosen == Alltoall::SharedMemory {
                    return shared::alltoall(self, send, recv);
                }
                alltoall_uniform(self, send, recv, chosen)
            },
        )
    }

    /// Alltoall in place (MPI_Alltoall with MPI_IN_PLACE): `buf`'s blocks are sent and replaced
    /// by the blocks received.
    ///
    /// Cost: that of the algorithm `Auto` picks (see [`Alltoall`] and [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the length of `buf` is not a multiple of `p`; and, as for
    /// every collective, [`Error::CollectiveMismatch`] if the ranks call different collectives (or
    /// this one with buffers of different lengths) and [`Error::Aborted`] if another rank fails
    /// during the call.
    ///
    /// ```
    /// let got = rpar::run(2, |world| {
    ///     let mut buf = [world.rank() as u8 * 2, world.rank() as u8 * 2 + 1];
    ///     world.alltoall_in_place(&mut buf)?;
    ///     Ok(buf)
    /// })?;
    /// assert_eq!(got, vec![[0, 2], [1, 3]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall_in_place<T: Datatype>(&self, buf: &mut [T]) -> Result<()> {
        self.alltoall_in_place_with(buf, self.chosen::<Alltoall>())
    }

    /// [`Comm::alltoall_in_place`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn alltoall_in_place_with<T: Datatype>(
        &self,
        buf: &mut [T],
        algorithm: Alltoall,
    ) -> Result<()> {
        self.collective(
            Call::new("alltoall").bytes(std::mem::size_of_val(buf)),
            &algorithm,
            || {
                let send = buf.to_vec();
                self.alltoall_into_with(&send[..], buf, algorithm)
            },
        )
    }

    /// Alltoall with blocks of different lengths (MPI_Alltoallv): `send_counts[j]` elements at
    /// `send_displs[j]` go to rank `j`; `recv_counts[i]` elements come from rank `i` and are
    /// returned one after another in rank order.
    ///
    /// Cost: that of `Pairwise`, which `Auto` always takes here (see
    /// [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if a count or displacement argument has not one entry per rank, a
    /// block does not fit in `send`, or `send_counts[rank()]` differs from `recv_counts[rank()]`;
    /// [`Error::InvalidArgument`] or [`Error::Truncated`] if a block that arrives is not as long as
    /// `recv_counts` says; and, as for every collective, [`Error::CollectiveMismatch`] if the ranks
    /// call different collectives and [`Error::Aborted`] if another rank fails during the call.
    ///
    /// ```
    /// let got = rpar::run(2, |world| {
    ///     let r = world.rank();
    ///     // rank 0 sends [1] to 0 and [2, 3] to 1; rank 1 sends [4] to 0 and nothing to 1
    ///     let (send, sc, sd, rc) = if r == 0 {
    ///         (vec![1, 2, 3], [1, 2], [0, 1], [1, 1])
    ///     } else {
    ///         (vec![4], [1, 0], [0, 1], [2, 0])
    ///     };
    ///     world.alltoallv(&send, &sc, &sd, &rc)
    /// })?;
    /// assert_eq!(got, vec![vec![1, 4], vec![2, 3]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoallv<B: Buffer + ?Sized>(
        &self,
        send: &B,
        send_counts: &[usize],
        send_displs: &[usize],
        recv_counts: &[usize],
    ) -> Result<Vec<B::Elem>> {
        self.alltoallv_with(
            send,
            send_counts,
            send_displs,
            recv_counts,
            self.chosen::<Alltoall>(),
        )
    }

    /// [`Comm::alltoallv`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn alltoallv_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        send_counts: &[usize],
        send_displs: &[usize],
        recv_counts: &[usize],
        algorithm: Alltoall,
    ) -> Result<Vec<B::Elem>> {
        self.collective(Call::new(CALL_V), &algorithm, || {
            check_per_rank(recv_counts.len(), self.size(), "recv_counts", CALL_V)?;
            let roff = offsets_of_counts(recv_counts, CALL_V)?;
            let mut recv = zeroed_vec(roff[self.size()], CALL_V)?;
            let sb = (send_counts, send_displs);
            let rb = (recv_counts, &roff[..self.size()]);
            self.alltoallv_blocks(send.as_elems(), sb, &mut recv, rb, algorithm)?;
            Ok(recv)
        })
    }

    /// Alltoall with blocks of different lengths into `recv` (MPI_Alltoallv's own form):
    /// `send_counts[j]` elements at `send_displs[j]` go to rank `j`; `recv_counts[i]` elements
    /// come from rank `i` into `recv` at `recv_displs[i]`. Elements of `recv` outside the
    /// blocks are left as they were.
    ///
    /// Cost: that of `Pairwise`, which `Auto` always takes here (see
    /// [`Comm::using`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if a count or displacement argument has not one entry per rank, a
    /// block does not fit in its buffer, two receive blocks overlap (MPI calls such a call
    /// erroneous; send blocks may overlap), or `send_counts[rank()]` differs from
    /// `recv_counts[rank()]`; [`Error::InvalidArgument`] or [`Error::Truncated`] if a block that
    /// arrives is not as long as `recv_counts` says; and, as for every collective,
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives and [`Error::Aborted`]
    /// if another rank fails during the call.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let r = world.rank();
    ///     // each rank sends [10 r + 1] to rank 0 and [10 r + 2, 10 r + 3] to rank 1
    ///     let x = 10 * r as u8;
    ///     let send = [x + 1, x + 2, x + 3];
    ///     let (sc, sd) = ([1, 2], [0, 1]);
    ///     let rc = if r == 0 { [1, 1] } else { [2, 2] };
    ///     let mut recv = [0u8; 5];
    ///     // the block from rank 1 first, then the one from rank 0, one element apart
    ///     let rd = if r == 0 { [2, 0] } else { [3, 0] };
    ///     world.alltoallv_into(&send[..], &sc, &sd, &mut recv, &rc, &rd)?;
    ///     let want = if r == 0 { [11, 0, 1, 0, 0] } else { [12, 13, 0, 2, 3] };
    ///     assert_eq!(recv, want);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoallv_into<B: Buffer + ?Sized>(
        &self,
        send: &B,
        send_counts: &[usize],
        send_displs: &[usize],
        recv: &mut [B::Elem],
        recv_counts: &[usize],
        recv_displs: &[usize],
    ) -> Result<()> {
        let sb = (send_counts, send_displs);
        self.alltoallv_into_with(
            send,
            sb,
            recv,
            (recv_counts, recv_displs),
            self.chosen::<Alltoall>(),
        )
    }

    /// [`Comm::alltoallv_into`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn alltoallv_into_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        send_blocks: (&[usize], &[usize]),
        recv: &mut [B::Elem],
        recv_blocks: (&[usize], &[usize]),
        algorithm: Alltoall,
    ) -> Result<()> {
        self.collective(Call::new(CALL_V), &algorithm, || {
            self.alltoallv_blocks(send.as_elems(), send_blocks, recv, recv_blocks, algorithm)
        })
    }

    /// Alltoallv in place (MPI_Alltoallv with MPI_IN_PLACE): block `j` of `buf`, `counts[j]`
    /// elements at `displs[j]`, is sent to rank `j` and replaced by the block rank `j` sends
    /// (which must be as long: what rank `i` sends rank `j` is `counts[j]` at rank `i` and
    /// `counts[i]` at rank `j`).
    ///
    /// Cost: that of `Pairwise`, which `Auto` always takes here, and one copy of `buf`.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::alltoallv_into`] for the blocks of `buf`.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank();
    ///     // rank r exchanges r + j + 1 elements with rank j
    ///     let counts: Vec<usize> = (0..3).map(|j| r + j + 1).collect();
    ///     let displs = [0, counts[0], counts[0] + counts[1]];
    ///     let block = |j: usize| vec![(10 * r + j) as u8; counts[j]];
    ///     let mut buf: Vec<u8> = (0..3).flat_map(block).collect();
    ///     world.alltoallv_in_place(&mut buf, &counts, &displs)?;
    ///     Ok(buf)
    /// })?;
    /// assert_eq!(got[1], [1, 1, 11, 11, 11, 21, 21, 21, 21]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoallv_in_place<T: Datatype>(
        &self,
        buf: &mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        self.alltoallv_in_place_with(buf, counts, displs, self.chosen::<Alltoall>())
    }

    /// [`Comm::alltoallv_in_place`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn alltoallv_in_place_with<T: Datatype>(
        &self,
        buf: &mut [T],
        counts: &[usize],
        displs: &[usize],
        algorithm: Alltoall,
    ) -> Result<()> {
        self.collective(Call::new(CALL_V), &algorithm, || {
            let send = buf.to_vec();
            self.alltoallv_blocks(&send, (counts, displs), buf, (counts, displs), algorithm)
        })
    }

    /// Alltoall of owned `Vec`s: `send[j]` moves to rank `j`, uncopied in-process, and the
    /// result's entry `i` is the `Vec` rank `i` sent (MPI_Alltoallv, with the counts carried by
    /// the `Vec`s: lengths may differ, and nobody needs to know them in advance). `send` must
    /// hold one `Vec` per rank.
    ///
    /// Cost: that of `Linear`, which `Auto` takes here: `(p - 1) alpha` per rank, all at once,
    /// and no copy (on MPI, each move is a copy: `(p - 1)(alpha + beta m)`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `send` has not one entry per rank; and, as for every
    /// collective, [`Error::CollectiveMismatch`] if the ranks call different collectives and
    /// [`Error::Aborted`] if another rank fails during the call.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank();
    ///     // rank r sends rank j a Vec of j + 1 copies of r
    ///     let send: Vec<Vec<usize>> = (0..3).map(|j| vec![r; j + 1]).collect();
    ///     world.alltoall_owned(send)
    /// })?;
    /// assert_eq!(got[1], vec![vec![0, 0], vec![1, 1], vec![2, 2]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall_owned<T: Datatype>(&self, send: Vec<Vec<T>>) -> Result<Vec<Vec<T>>> {
        self.alltoall_owned_with(send, self.chosen::<Alltoall>())
    }

    /// [`Comm::alltoall_owned`] with the algorithm given (what it runs with the one chosen by
    /// [`Comm::using`], and what other forms run inside).
    pub(crate) fn alltoall_owned_with<T: Datatype>(
        &self,
        send: Vec<Vec<T>>,
        algorithm: Alltoall,
    ) -> Result<Vec<Vec<T>>> {
        self.collective(Call::new("alltoall_owned"), &algorithm, || {
            check_per_rank(send.len(), self.size(), "send", "alltoall_owned")?;
            let algorithm = match algorithm {
                Alltoall::Auto | Alltoall::SharedMemory => Alltoall::Linear,
                chosen => chosen,
            };
            alltoall_owned(self, send, algorithm)
        })
    }

    /// What every alltoallv form runs: the checks, then the algorithm (`Pairwise` for `Auto`).
    fn alltoallv_blocks<T: Datatype>(
        &self,
        send: &[T],
        (send_counts, send_displs): (&[usize], &[usize]),
        recv: &mut [T],
        (recv_counts, recv_displs): (&[usize], &[usize]),
        algorithm: Alltoall,
    ) -> Result<()> {
        let p = self.size();
        check_per_rank(send_counts.len(), p, "send_counts", CALL_V)?;
        check_per_rank(send_displs.len(), p, "send_displs", CALL_V)?;
        check_per_rank(recv_counts.len(), p, "recv_counts", CALL_V)?;
        check_per_rank(recv_displs.len(), p, "recv_displs", CALL_V)?;
        check_blocks_fit(send_counts, send_displs, send.len(), "send", CALL_V)?;
        check_recv_blocks(recv_counts, recv_displs, recv.len(), CALL_V)?;
        let algorithm = match algorithm {
            Alltoall::Auto | Alltoall::SharedMemory => Alltoall::Pairwise,
            chosen => chosen,
        };
        let sb = Blocks {
            counts: send_counts,
            displs: send_displs,
        };
        let rb = Blocks {
            counts: recv_counts,
            displs: recv_displs,
        };
        alltoall(self, send, sb, recv, rb, false, algorithm)
    }
}

/// The alltoall of equal blocks (MPI_Alltoall) on any channel: `send` holds `p` blocks.
pub(crate) fn alltoall_uniform<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    recv: &mut [T],
    algorithm: Alltoall,
) -> Result<()> {
    let p = ch.size();
    let n = block_len(send.len(), p, "send", CALL)?;
    check_len(recv.len(), send.len(), "receive buffer", CALL)?;
    let off = offsets_uniform(n, p);
    let blocks = Blocks {
        counts: &vec![n; p],
        displs: &off[..p],
    };
    let algorithm = message_passing(algorithm, p, n * std::mem::size_of::<T>(), true);
    alltoall(ch, send, blocks, recv, blocks, true, algorithm)
}

/// Alltoall on any channel (`uniform`: all blocks of all ranks have the same length, so no
/// lengths need to travel).
fn alltoall<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    sb: Blocks<'_>,
    recv: &mut [T],
    rb: Blocks<'_>,
    uniform: bool,
    algorithm: Alltoall,
) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    if sb.counts[r] != rb.counts[r] {
        return Err(Error::invalid(
            "alltoallv",
            format!(
                "this rank sends itself {} elements (send_counts[{r}]) but expects {} \
                 (recv_counts[{r}])",
                sb.counts[r], rb.counts[r]
            ),
        ));
    }
    if algorithm == Alltoall::Hypercube {
        require_pow2(p, "hypercube", CALL)?;
    }
    let moves = Moves::Packed(uniform.then(|| sb.counts[0]));
    // `Auto` has been resolved by the callers, the same on every rank
    match ch.runs(algorithm) {
        Alltoall::Linear => {
            recv[rb.range(r)].copy_from_slice(&send[sb.range(r)]);
            linear(ch, send, sb, recv, rb)
        }
        Alltoall::Pairwise | Alltoall::Auto | Alltoall::SharedMemory => {
            recv[rb.range(r)].copy_from_slice(&send[sb.range(r)]);
            pairwise(ch, send, sb, recv, rb)
        }
        Alltoall::Bruck => place(bruck_blocks(ch, blocks_of(send, sb), moves)?, recv, rb),
        Alltoall::Hypercube => place(hypercube_blocks(ch, blocks_of(send, sb), moves)?, recv, rb),
    }
}

fn linear<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    sb: Blocks<'_>,
    recv: &mut [T],
    rb: Blocks<'_>,
) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    for s in 1..p {
        let dest = (r + s) % p;
        let block = &send[sb.range(dest)];
        if std::mem::size_of_val(block) <= RENDEZVOUS_BYTES {
            ch.send(block, dest, TAG_LINEAR)?; // eager: returns at once
        } else {
            ch.send_owned(block.to_vec(), dest, TAG_LINEAR)?; // a rendezvous would wait
        }
    }
    for s in 1..p {
        let source = (r + p - s) % p;
        recv_exact(ch, &mut recv[rb.range(source)], source, TAG_LINEAR, CALL)?;
    }
    Ok(())
}

fn pairwise<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    sb: Blocks<'_>,
    recv: &mut [T],
    rb: Blocks<'_>,
) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    for s in 1..p {
        let (dest, source) = if is_pow2(p) {
            (r ^ s, r ^ s)
        } else {
            ((r + s) % p, (r + p - s) % p)
        };
        let into = &mut recv[rb.range(source)];
        let expected = into.len();
        let got = ch.sendrecv(
            &send[sb.range(dest)],
            dest,
            TAG_PAIRWISE,
            into,
            source,
            TAG_PAIRWISE,
        )?;
        check_count(got, expected, source, CALL)?;
    }
    Ok(())
}

/// How the Bruck and hypercube steps move blocks that are held as `Vec`s.
#[derive(Clone, Copy)]
enum Moves {
    /// All blocks of a step packed into one message, preceded by their lengths unless every
    /// block has this many elements.
    Packed(Option<usize>),
    /// Every block as an owned message of its own (moved, not copied).
    Owned,
}

/// Sends the blocks `store[i]` for `i` in `out` to `dest` and receives the blocks for `inc`
/// from `source`, as `moves` says. The sent blocks are left empty.
#[allow(clippy::too_many_arguments)] // two block lists, two peers, the tag and the way
fn swap_blocks<C: Named, T: Datatype>(
    ch: &C,
    store: &mut [Vec<T>],
    out: &[usize],
    dest: usize,
    inc: &[usize],
    source: usize,
    moves: Moves,
    tag: i32,
) -> Result<()> {
    let uniform = match moves {
        Moves::Packed(uniform) => uniform,
        Moves::Owned => {
            for &i in out {
                ch.send_owned(std::mem::take(&mut store[i]), dest, tag)?;
            }
            for &i in inc {
                store[i] = ch.recv_vec(source, tag)?;
            }
            return Ok(());
        }
    };
    let out_lens: Vec<usize> = out.iter().map(|&i| store[i].len()).collect();
    let mut packed = Vec::with_capacity(out_lens.iter().sum());
    for &i in out {
        packed.extend_from_slice(&std::mem::take(&mut store[i]));
    }
    let in_lens = match uniform {
        Some(n) => vec![n; inc.len()],
        None => {
            lengths::send(ch, out_lens, dest, TAG_LENGTHS)?;
            lengths::recv(ch, inc.len(), source, TAG_LENGTHS, CALL_V)?
        }
    };
    let off = offsets_of_counts(&in_lens, CALL)?;
    let mut incoming = zeroed_vec(off[inc.len()], CALL)?;
    let got = ch.sendrecv(&packed, dest, tag, &mut incoming, source, tag)?;
    check_count(got, incoming.len(), source, CALL)?;
    for (k, &i) in inc.iter().enumerate() {
        store[i] = incoming[off[k]..off[k + 1]].to_vec();
    }
    Ok(())
}

/// Bruck's schedule on `mine`, this rank's blocks by destination; returns the blocks received,
/// by source.
fn bruck_blocks<C: Named, T: Datatype>(
    ch: &C,
    mut mine: Vec<Vec<T>>,
    moves: Moves,
) -> Result<Vec<Vec<T>>> {
    let (r, p) = (ch.rank(), ch.size());
    // block j: bound for rank r + j; after the steps, the one from rank r - j
    mine.rotate_left(r);
    let mut store = mine;
    let mut d = 1;
    while d < p {
        let moving: Vec<usize> = (0..p).filter(|j| j & d != 0).collect();
        let (dest, source) = ((r + d) % p, (r + p - d) % p);
        swap_blocks(
            ch, &mut store, &moving, dest, &moving, source, moves, TAG_BRUCK,
        )?;
        d *= 2;
    }
    // block j is from rank r - j: reversed, then rotated, block s is from rank s
    store.reverse();
    store.rotate_right(r + 1);
    Ok(store)
}

/// The hypercube's dimension exchange on `mine`, this rank's blocks by destination; returns the
/// blocks received, by source.
fn hypercube_blocks<C: Named, T: Datatype>(
    ch: &C,
    mine: Vec<Vec<T>>,
    moves: Moves,
) -> Result<Vec<Vec<T>>> {
    let (r, p) = (ch.rank(), ch.size());
    require_pow2(p, "hypercube", CALL)?;
    // store[s * p + t]: the block from rank s to rank t, while this rank holds it
    let mut store: Vec<Vec<T>> = vec![Vec::new(); p * p];
    for (t, block) in mine.into_iter().enumerate() {
        store[r * p + t] = block;
    }
    // before step k rank x holds the blocks (s, t) with s >> k == x >> k and t % 2^k == x % 2^k
    let held = |x: usize, k: u32| {
        let low = (1usize << k) - 1;
        (0..p * p).filter(move |&i| (i / p) >> k == x >> k && (i % p) & low == x & low)
    };
    let mut k = 0;
    while 1 << k < p {
        let d = 1 << k;
        let partner = r ^ d;
        let out: Vec<usize> = held(r, k).filter(|&i| (i % p) & d == partner & d).collect();
        let inc: Vec<usize> = held(partner, k).filter(|&i| (i % p) & d == r & d).collect();
        swap_blocks(
            ch,
            &mut store,
            &out,
            partner,
            &inc,
            partner,
            moves,
            TAG_HYPERCUBE,
        )?;
        k += 1;
    }
    Ok((0..p)
        .map(|s| std::mem::take(&mut store[s * p + r]))
        .collect())
}

/// Copies the blocks received, by source, into their places in `recv`.
fn place<T: Datatype>(blocks: Vec<Vec<T>>, recv: &mut [T], rb: Blocks<'_>) -> Result<()> {
    for (s, block) in blocks.iter().enumerate() {
        check_count(block.len(), rb.counts[s], s, CALL)?;
        recv[rb.range(s)].copy_from_slice(block);
    }
    Ok(())
}

/// This rank's blocks of `send`, by destination, as `Vec`s (for Bruck and the hypercube).
fn blocks_of<T: Datatype>(send: &[T], sb: Blocks<'_>) -> Vec<Vec<T>> {
    (0..sb.counts.len())
        .map(|t| send[sb.range(t)].to_vec())
        .collect()
}

/// Alltoall of owned blocks on any channel: `send[j]` moves to rank `j`; the result's entry `i`
/// came from rank `i`. `Auto` has been resolved by the caller.
fn alltoall_owned<C: Named, T: Datatype>(
    ch: &C,
    mut send: Vec<Vec<T>>,
    algorithm: Alltoall,
) -> Result<Vec<Vec<T>>> {
    let (r, p) = (ch.rank(), ch.size());
    // `Auto` has been resolved by the caller
    match ch.runs(algorithm) {
        Alltoall::Bruck => return bruck_blocks(ch, send, Moves::Owned),
        Alltoall::Hypercube => return hypercube_blocks(ch, send, Moves::Owned),
        Alltoall::Linear | Alltoall::Pairwise | Alltoall::Auto | Alltoall::SharedMemory => {}
    }
    let mut recv: Vec<Vec<T>> = vec![Vec::new(); p];
    recv[r] = std::mem::take(&mut send[r]);
    let partners = |s: usize| {
        if algorithm == Alltoall::Pairwise && is_pow2(p) {
            (r ^ s, r ^ s)
        } else {
            ((r + s) % p, (r + p - s) % p)
        }
    };
    if algorithm == Alltoall::Pairwise {
        for s in 1..p {
            let (dest, source) = partners(s);
            ch.send_owned(std::mem::take(&mut send[dest]), dest, TAG_PAIRWISE)?;
            recv[source] = ch.recv_vec(source, TAG_PAIRWISE)?;
        }
        return Ok(recv);
    }
    for s in 1..p {
        let dest = partners(s).0;
        ch.send_owned(std::mem::take(&mut send[dest]), dest, TAG_LINEAR)?;
    }
    for s in 1..p {
        let source = partners(s).1;
        recv[source] = ch.recv_vec(source, TAG_LINEAR)?;
    }
    Ok(recv)
}
