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
//! preceded by the lengths of the blocks it carries.

use super::layout::Named;
use super::layout::{
    block_len, check_blocks_fit, check_count, check_len, check_per_rank, is_pow2,
    offsets_of_counts, offsets_uniform, recv_exact, require_pow2, zeroed_vec,
};
use super::shared;
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

/// The alltoall algorithm (for [`Comm::alltoall_with`] and [`Comm::alltoallv_with`]).
///
/// An MPI library picks among such algorithms inside MPI_Alltoall and MPI_Alltoallv; MPICH lets the
/// user fix the choice with `MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM`, as the `_with` forms do here.
///
/// Each variant's cost is for `p` ranks and `m` the bytes of one block (one rank to one rank):
/// alpha per message, beta per byte, gamma per byte combined.
///
/// `Auto` ([`Alltoall::choose`], tuned on the 2-core machine with
/// `cargo bench --bench collective_move`) picks by the ranks `p` and the bytes `m` of one block
/// (alltoallv, whose block sizes differ, takes `Pairwise`):
///
/// | ranks share memory (in-process) | ranks `p` | block `m` | algorithm |
/// |---|---|---|---|
/// | yes (equal blocks) | any | any | `SharedMemory` |
/// | no (recordings; on MPI, `Auto` runs `MPI_Alltoall`) | `>= 16` | `<= 256 B` | `Bruck` |
/// | no | any | `<= 32 KiB` (eager) | `Linear` |
/// | no | any | `> 32 KiB` | `Pairwise` |
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
/// assert_eq!(Alltoall::choose(8, 8), Alltoall::SharedMemory);
/// assert_eq!(Alltoall::choose(8, 65536), Alltoall::SharedMemory);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Alltoall {
    /// [`Alltoall::choose`] decides.
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
    /// The algorithm `Auto` runs for `p` ranks and blocks of `bytes` bytes (the table above):
    /// `SharedMemory`, which where ranks share no memory runs the table's message-passing rule.
    /// No MPI routine: an MPI library makes this choice inside MPI_Alltoall (in MPICH, what
    /// `MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=auto` leaves to its tuning).
    ///
    /// ```
    /// use rpar::Alltoall;
    /// assert_eq!(Alltoall::choose(2, 8), Alltoall::SharedMemory);
    /// assert_eq!(Alltoall::choose(64, 1 << 20), Alltoall::SharedMemory);
    /// ```
    pub fn choose(p: usize, bytes: usize) -> Alltoall {
        let _ = (p, bytes); // shared memory won at every size measured
        Alltoall::SharedMemory
    }
}

/// The message-passing algorithm `Auto` runs where ranks share no memory (the table above).
fn message_passing(p: usize, bytes: usize) -> Alltoall {
    if p >= 16 && bytes <= 256 {
        Alltoall::Bruck
    } else if bytes <= RENDEZVOUS_BYTES {
        Alltoall::Linear
    } else {
        Alltoall::Pairwise
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
    /// Errors: [`Error::InvalidArgument`] if the length of `send` is not a multiple of `p`; and,
    /// as for every collective,
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives (or this one with
    /// buffers of different lengths) and [`Error::Aborted`] if another rank fails during the
    /// call.
    ///
    /// Cost: that of the algorithm `Auto` picks (see [`Alltoall`] and [`Comm::alltoall_with`]).
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
        self.alltoall_with(send, Alltoall::Auto)
    }

    /// [`Comm::alltoall`] with a chosen algorithm (MPI_Alltoall, with the algorithm fixed as
    /// MPICH's `MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM` fixes it).
    ///
    /// Errors: those of [`Comm::alltoall`], and [`Error::InvalidArgument`] for `Hypercube` on a
    /// number of ranks that is not a power of two.
    ///
    /// Cost, for `m` the bytes of one block: `Linear` and `Pairwise` `(p - 1)(alpha + beta m)`,
    /// `Bruck` `ceil(log2 p)(alpha + beta m p / 2)`, `Hypercube` `log2 p (alpha + beta m p / 2)`,
    /// `SharedMemory` `c + (p - 1) beta m` with `c` one synchronisation.
    ///
    /// ```
    /// use rpar::Alltoall;
    /// let got = rpar::run(4, |world| {
    ///     let r = world.rank() as u8;
    ///     let send: Vec<u8> = (0..4).map(|j| 10 * r + j).collect();
    ///     let cube = world.alltoall_with(&send, Alltoall::Hypercube)?;
    ///     assert_eq!(cube, world.alltoall(&send)?); // the same as Auto's choice
    ///     Ok(cube)
    /// })?;
    /// assert_eq!(got[2], [2, 12, 22, 32]);
    ///
    /// rpar::run(3, |world| {
    ///     let three = world.alltoall_with(&[1u8, 2, 3][..], Alltoall::Hypercube);
    ///     assert!(matches!(three, Err(rpar::Error::InvalidArgument { .. }))); // not 2^k ranks
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        algorithm: Alltoall,
    ) -> Result<Vec<B::Elem>> {
        self.collective(
            Call::new("alltoall").bytes(std::mem::size_of_val(send.as_elems())),
            &algorithm,
            || {
                let send = send.as_elems();
                let mut recv = zeroed_vec(send.len());
                self.alltoall_into_with(send, &mut recv, algorithm)?;
                Ok(recv)
            },
        )
    }

    /// Alltoall into `recv` (as long as `send`), MPI_Alltoall's own form.
    ///
    /// Errors: [`Error::InvalidArgument`] if the length of `send` is not a multiple of `p` or
    /// `recv` is not as long as `send`; and, as for every collective,
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives (or this one with
    /// buffers of different lengths) and [`Error::Aborted`] if another rank fails during the
    /// call.
    ///
    /// Cost: that of the algorithm `Auto` picks (see [`Alltoall`] and [`Comm::alltoall_with`]).
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
        self.alltoall_into_with(send, recv, Alltoall::Auto)
    }

    /// [`Comm::alltoall_into`] with a chosen algorithm (MPI_Alltoall).
    ///
    /// Errors: those of [`Comm::alltoall_into`], and [`Error::InvalidArgument`] for `Hypercube`
    /// on a number of ranks that is not a power of two. Cost: as [`Comm::alltoall_with`].
    ///
    /// ```
    /// use rpar::Alltoall;
    /// rpar::run(5, |world| {
    ///     let r = world.rank() as u32;
    ///     let send: Vec<u32> = (0..5).map(|j| 100 * r + j).collect();
    ///     let mut got = [0u32; 5];
    ///     world.alltoall_into_with(&send, &mut got, Alltoall::Bruck)?;
    ///     assert_eq!(got, [r, 100 + r, 200 + r, 300 + r, 400 + r]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall_into_with<B: Buffer + ?Sized>(
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
                        return Ok(());
                    }
                }
                let n = block_len(send.len(), p, "send", CALL)?;
                check_len(recv.len(), send.len(), "receive buffer", CALL)?;
                let chosen = match algorithm {
                    Alltoall::Auto => Alltoall::choose(p, std::mem::size_of_val(&send[..n])),
                    chosen => chosen,
                };
                if chosen == Alltoall::SharedMemory && shared::available::<B::Elem>(self) {
                    return shared::alltoall(self, send, recv);
                }
                alltoall_uniform(self, send, recv, chosen)
            },
        )
    }

    /// Alltoall in place (MPI_Alltoall with MPI_IN_PLACE): `buf`'s blocks are sent and replaced
    /// by the blocks received.
    ///
    /// Errors: [`Error::InvalidArgument`] if the length of `buf` is not a multiple of `p`; and,
    /// as for every collective,
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives (or this one with
    /// buffers of different lengths) and [`Error::Aborted`] if another rank fails during the
    /// call.
    ///
    /// Cost: that of the algorithm `Auto` picks (see [`Alltoall`] and [`Comm::alltoall_with`]).
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
        self.alltoall_in_place_with(buf, Alltoall::Auto)
    }

    /// [`Comm::alltoall_in_place`] with a chosen algorithm (MPI_Alltoall with MPI_IN_PLACE).
    ///
    /// Errors: those of [`Comm::alltoall_in_place`], and [`Error::InvalidArgument`] for
    /// `Hypercube` on a number of ranks that is not a power of two. Cost: as
    /// [`Comm::alltoall_with`].
    ///
    /// ```
    /// use rpar::Alltoall;
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank() as u8;
    ///     let mut buf = [3 * r, 3 * r + 1, 3 * r + 2];
    ///     world.alltoall_in_place_with(&mut buf, Alltoall::Pairwise)?;
    ///     Ok(buf)
    /// })?;
    /// assert_eq!(got, vec![[0, 3, 6], [1, 4, 7], [2, 5, 8]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoall_in_place_with<T: Datatype>(
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
    /// Errors: [`Error::InvalidArgument`] if a count or displacement argument has not one entry
    /// per rank, a block does not fit in `send`, or `send_counts[rank()]` differs from
    /// `recv_counts[rank()]`; [`Error::InvalidArgument`] or [`Error::Truncated`] if a block
    /// that arrives is not as long as `recv_counts` says; and, as for every collective,
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives and
    /// [`Error::Aborted`] if another rank fails during the call.
    ///
    /// Cost: that of `Pairwise`, which `Auto` always takes here (see
    /// [`Comm::alltoallv_with`]).
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
        self.alltoallv_with(send, send_counts, send_displs, recv_counts, Alltoall::Auto)
    }

    /// [`Comm::alltoallv`] with a chosen algorithm (MPI_Alltoallv). `SharedMemory`, like
    /// `Auto`, runs `Pairwise`.
    ///
    /// Errors: those of [`Comm::alltoallv`], and [`Error::InvalidArgument`] for `Hypercube` on
    /// a number of ranks that is not a power of two.
    ///
    /// Cost: as [`Comm::alltoall_with`], with `m` the mean bytes of a block; `Bruck` and
    /// `Hypercube` send each message's block lengths ahead of it (twice the `alpha` terms).
    ///
    /// ```
    /// use rpar::Alltoall;
    /// let got = rpar::run(3, |world| {
    ///     let r = world.rank();
    ///     // rank r sends r + 1 copies of its number to every rank
    ///     let send = vec![r as u8; 3 * (r + 1)];
    ///     let (counts, displs) = ([r + 1; 3], [0, r + 1, 2 * (r + 1)]);
    ///     world.alltoallv_with(&send, &counts, &displs, &[1, 2, 3], Alltoall::Bruck)
    /// })?;
    /// assert!(got.iter().all(|g| *g == [0, 1, 1, 2, 2, 2]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alltoallv_with<B: Buffer + ?Sized>(
        &self,
        send: &B,
        send_counts: &[usize],
        send_displs: &[usize],
        recv_counts: &[usize],
        algorithm: Alltoall,
    ) -> Result<Vec<B::Elem>> {
        self.collective(Call::new("alltoallv"), &algorithm, || {
            let send = send.as_elems();
            let p = self.size();
            check_per_rank(send_counts.len(), p, "send_counts", "alltoallv")?;
            check_per_rank(send_displs.len(), p, "send_displs", "alltoallv")?;
            check_per_rank(recv_counts.len(), p, "recv_counts", "alltoallv")?;
            check_blocks_fit(send_counts, send_displs, send.len(), "send", "alltoallv")?;
            let roff = offsets_of_counts(recv_counts);
            let mut recv = zeroed_vec(roff[p]);
            let algorithm = match algorithm {
                Alltoall::Auto | Alltoall::SharedMemory => Alltoall::Pairwise,
                chosen => chosen,
            };
            let sblocks = Blocks {
                counts: send_counts,
                displs: send_displs,
            };
            let rblocks = Blocks {
                counts: recv_counts,
                displs: &roff[..p],
            };
            alltoall(self, send, sblocks, &mut recv, rblocks, false, algorithm)?;
            Ok(recv)
        })
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
    let algorithm = match algorithm {
        Alltoall::Auto | Alltoall::SharedMemory => message_passing(p, n * std::mem::size_of::<T>()),
        chosen => chosen,
    };
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
    // `Auto` has been resolved by the callers, the same on every rank
    match algorithm {
        Alltoall::Linear => {
            recv[rb.range(r)].copy_from_slice(&send[sb.range(r)]);
            linear(ch, send, sb, recv, rb)
        }
        Alltoall::Pairwise | Alltoall::Auto | Alltoall::SharedMemory => {
            recv[rb.range(r)].copy_from_slice(&send[sb.range(r)]);
            pairwise(ch, send, sb, recv, rb)
        }
        Alltoall::Bruck => bruck(ch, send, sb, recv, rb, uniform),
        Alltoall::Hypercube => hypercube(ch, send, sb, recv, rb, uniform),
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

/// Sends the blocks `store[i]` for `i` in `out` (one message, preceded by their lengths unless
/// every block has `uniform` elements) to `dest`, and receives the blocks for `inc` from
/// `source` the same way. The sent blocks are left empty.
#[allow(clippy::too_many_arguments)] // two block lists, two peers, the tag and the length rule
fn swap_blocks<C: Named, T: Datatype>(
    ch: &C,
    store: &mut [Vec<T>],
    out: &[usize],
    dest: usize,
    inc: &[usize],
    source: usize,
    uniform: Option<usize>,
    tag: i32,
) -> Result<()> {
    let out_lens: Vec<usize> = out.iter().map(|&i| store[i].len()).collect();
    let mut packed = Vec::with_capacity(out_lens.iter().sum());
    for &i in out {
        packed.extend_from_slice(&std::mem::take(&mut store[i]));
    }
    let in_lens = match uniform {
        Some(n) => vec![n; inc.len()],
        None => {
            let mut lens = vec![0usize; inc.len()];
            let got = ch.sendrecv(&out_lens, dest, TAG_LENGTHS, &mut lens, source, TAG_LENGTHS)?;
            check_count(got, inc.len(), source, CALL)?;
            lens
        }
    };
    let off = offsets_of_counts(&in_lens);
    let mut incoming = zeroed_vec(off[inc.len()]);
    let got = ch.sendrecv(&packed, dest, tag, &mut incoming, source, tag)?;
    check_count(got, incoming.len(), source, CALL)?;
    for (k, &i) in inc.iter().enumerate() {
        store[i] = incoming[off[k]..off[k + 1]].to_vec();
    }
    Ok(())
}

fn bruck<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    sb: Blocks<'_>,
    recv: &mut [T],
    rb: Blocks<'_>,
    uniform: bool,
) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let n = uniform.then(|| sb.counts[0]);
    // block j: bound for rank r + j; after the steps, the one from rank r - j
    let mut store: Vec<Vec<T>> = (0..p)
        .map(|j| send[sb.range((r + j) % p)].to_vec())
        .collect();
    let mut d = 1;
    while d < p {
        let moving: Vec<usize> = (0..p).filter(|j| j & d != 0).collect();
        swap_blocks(
            ch,
            &mut store,
            &moving,
            (r + d) % p,
            &moving,
            (r + p - d) % p,
            n,
            TAG_BRUCK,
        )?;
        d *= 2;
    }
    for (j, block) in store.iter().enumerate() {
        let source = (r + p - j) % p;
        check_count(block.len(), rb.counts[source], source, CALL)?;
        recv[rb.range(source)].copy_from_slice(block);
    }
    Ok(())
}

fn hypercube<C: Named, T: Datatype>(
    ch: &C,
    send: &[T],
    sb: Blocks<'_>,
    recv: &mut [T],
    rb: Blocks<'_>,
    uniform: bool,
) -> Result<()> {
    let (r, p) = (ch.rank(), ch.size());
    let n = uniform.then(|| sb.counts[0]);
    // store[s * p + t]: the block from rank s to rank t, while this rank holds it
    let mut store: Vec<Vec<T>> = vec![Vec::new(); p * p];
    for t in 0..p {
        store[r * p + t] = send[sb.range(t)].to_vec();
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
            n,
            TAG_HYPERCUBE,
        )?;
        k += 1;
    }
    for s in 0..p {
        let block = &store[s * p + r];
        check_count(block.len(), rb.counts[s], s, CALL)?;
        recv[rb.range(s)].copy_from_slice(block);
    }
    Ok(())
}
