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
    lengths, offsets_of_counts, offsets_uniform, pairwise_partners, recv_exact, require_pow2,
    zeroed_vec,
};
use super::select::{message_passing, resolve, Native};
use super::shared;
use super::tags;
use super::{Channel, Partners};
use crate::comm::Buffer;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::transport::RENDEZVOUS_BYTES;
use crate::{Comm, Error, Result};

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
/// Alltoallv, whose block sizes differ, takes `Pairwise`, and an owned [`Comm::alltoall`], whose
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

/// A v-operation's blocks as its arguments give them: counts, then displacements.
type CountsDispls<'a> = (&'a [usize], &'a [usize]);

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
                self.alltoall_into_with(Some(send), &mut recv, algorithm)?;
                Ok(recv)
            },
        )
    }

    /// The alltoall into the caller's buffer with the algorithm given (what the forms run with
    /// the one chosen by [`Comm::using`]): of `send` into `recv`, or with `send` `None` in
    /// place (`recv` sent, then overwritten).
    pub(crate) fn alltoall_into_with<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        algorithm: Alltoall,
    ) -> Result<()> {
        let bytes = std::mem::size_of_val(send.unwrap_or(recv));
        self.collective(Call::new("alltoall").bytes(bytes), &algorithm, || {
            let copied;
            let send = match send {
                Some(send) => send,
                None => {
                    copied = recv.to_vec();
                    &copied[..]
                }
            };
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
            let (shm, block) = (shared::available::<T>(self), size_of_val(&send[..n]));
            let chosen = resolve(algorithm, shm, p, block, true);
            if chosen == Alltoall::SharedMemory {
                return shared::alltoall(self, send, recv);
            }
            alltoall_uniform(self, send, recv, chosen)
        })
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

    /// The alltoallv into the caller's buffer with the algorithm given (what the forms run
    /// with the one chosen by [`Comm::using`]): of `send` and its blocks into `recv` at
    /// `recv_blocks`, or with `send` `None` in place (`recv` sent from `recv_blocks`, then
    /// overwritten).
    pub(crate) fn alltoallv_into_with<T: Datatype>(
        &self,
        send: Option<(&[T], CountsDispls<'_>)>,
        recv: &mut [T],
        recv_blocks: CountsDispls<'_>,
        algorithm: Alltoall,
    ) -> Result<()> {
        self.collective(Call::new(CALL_V), &algorithm, || {
            let copied;
            let (send, send_blocks) = match send {
                Some(send) => send,
                None => {
                    copied = recv.to_vec();
                    (&copied[..], recv_blocks)
                }
            };
            self.alltoallv_blocks(send, send_blocks, recv, recv_blocks, algorithm)
        })
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
        alltoall(self, Exchange { send, sb, recv, rb }, false, algorithm)
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
    let (sb, rb) = (blocks, blocks);
    alltoall(ch, Exchange { send, sb, recv, rb }, true, algorithm)
}

/// Alltoall on any channel (`uniform`: all blocks of all ranks have the same length, so no
/// lengths need to travel).
fn alltoall<C: Named, T: Datatype>(
    ch: &C,
    exchange: Exchange<'_, T>,
    uniform: bool,
    algorithm: Alltoall,
) -> Result<()> {
    let Exchange { send, sb, recv, rb } = exchange;
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
            linear(ch, Exchange { send, sb, recv, rb })
        }
        Alltoall::Pairwise | Alltoall::Auto | Alltoall::SharedMemory => {
            recv[rb.range(r)].copy_from_slice(&send[sb.range(r)]);
            pairwise(ch, Exchange { send, sb, recv, rb })
        }
        Alltoall::Bruck => place(bruck_blocks(ch, blocks_of(send, sb), moves)?, recv, rb),
        Alltoall::Hypercube => place(hypercube_blocks(ch, blocks_of(send, sb), moves)?, recv, rb),
    }
}

/// One rank's side of an alltoall: what it sends and where it receives, each with its blocks.
struct Exchange<'a, T> {
    send: &'a [T],
    sb: Blocks<'a>,
    recv: &'a mut [T],
    rb: Blocks<'a>,
}

/// All sends posted at once, then all receives.
fn linear<C: Named, T: Datatype>(ch: &C, exchange: Exchange<'_, T>) -> Result<()> {
    let Exchange { send, sb, recv, rb } = exchange;
    let (r, p) = (ch.rank(), ch.size());
    for s in 1..p {
        let dest = (r + s) % p;
        let block = &send[sb.range(dest)];
        if std::mem::size_of_val(block) <= RENDEZVOUS_BYTES {
            ch.send(block, dest, tags::ALLTOALL_LINEAR)?; // eager: returns at once
        } else {
            ch.send_owned(block.to_vec(), dest, tags::ALLTOALL_LINEAR)?; // a rendezvous would wait
        }
    }
    for s in 1..p {
        let source = (r + p - s) % p;
        recv_exact(
            ch,
            &mut recv[rb.range(source)],
            source,
            tags::ALLTOALL_LINEAR,
            CALL,
        )?;
    }
    Ok(())
}

/// `p - 1` steps, each sending one block to one partner and receiving one from another.
fn pairwise<C: Named, T: Datatype>(ch: &C, exchange: Exchange<'_, T>) -> Result<()> {
    let Exchange { send, sb, recv, rb } = exchange;
    let (r, p) = (ch.rank(), ch.size());
    for s in 1..p {
        let (dest, source) = pairwise_partners(r, p, s);
        let into = &mut recv[rb.range(source)];
        let expected = into.len();
        let tag = tags::ALLTOALL_PAIRWISE;
        let got = ch.sendrecv(&send[sb.range(dest)], into, Partners { dest, source, tag })?;
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
            lengths::send(ch, out_lens, dest, tags::ALLTOALL_LENGTHS)?;
            lengths::recv(ch, inc.len(), source, tags::ALLTOALL_LENGTHS, CALL_V)?
        }
    };
    let off = offsets_of_counts(&in_lens, CALL)?;
    let mut incoming = zeroed_vec(off[inc.len()], CALL)?;
    let got = ch.sendrecv(&packed, &mut incoming, Partners { dest, source, tag })?;
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
            ch,
            &mut store,
            &moving,
            dest,
            &moving,
            source,
            moves,
            tags::ALLTOALL_BRUCK,
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
            tags::ALLTOALL_HYPERCUBE,
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
    // `Auto` has been resolved by the caller
    match ch.runs(algorithm) {
        Alltoall::Bruck => return bruck_blocks(ch, send, Moves::Owned),
        Alltoall::Hypercube => return hypercube_blocks(ch, send, Moves::Owned),
        Alltoall::Linear | Alltoall::Pairwise | Alltoall::Auto | Alltoall::SharedMemory => {}
    }
    let (r, p) = (ch.rank(), ch.size());
    let mut recv: Vec<Vec<T>> = vec![Vec::new(); p];
    recv[r] = std::mem::take(&mut send[r]);
    let partners = |s: usize| {
        if algorithm == Alltoall::Pairwise {
            pairwise_partners(r, p, s)
        } else {
            ((r + s) % p, (r + p - s) % p)
        }
    };
    if algorithm == Alltoall::Pairwise {
        for s in 1..p {
            let (dest, source) = partners(s);
            ch.send_owned(
                std::mem::take(&mut send[dest]),
                dest,
                tags::ALLTOALL_PAIRWISE,
            )?;
            recv[source] = ch.recv_vec(source, tags::ALLTOALL_PAIRWISE)?;
        }
        return Ok(recv);
    }
    for s in 1..p {
        let dest = partners(s).0;
        ch.send_owned(std::mem::take(&mut send[dest]), dest, tags::ALLTOALL_LINEAR)?;
    }
    for s in 1..p {
        let source = partners(s).1;
        recv[source] = ch.recv_vec(source, tags::ALLTOALL_LINEAR)?;
    }
    Ok(recv)
}
