//! Reference implementations of three collective algorithms, written against [`Channel`] only,
//! to show that one algorithm's code both runs on a [`Comm`] (moving data) and records its
//! schedule on a [`Recorder`](super::Recorder): binomial broadcast, ring allgather,
//! recursive-doubling allgather, and recursive-doubling allreduce (which notes its local
//! reductions, so the simulator charges gamma). The library's own collectives plug into [`record`] the same way.
//!
//! Tags 501..=504 of the collective context (rpar's range 500..=599 belongs to `cost` and `sim`).

use super::recorder::record;
use super::schedule::Schedule;
use crate::collective::Channel;
use crate::comm::Call;
use crate::cost::Algorithm;
use crate::datatype::Datatype;
use crate::{Comm, Error, Result};

const BCAST_TAG: i32 = 501;
const RING_TAG: i32 = 502;
const DOUBLING_TAG: i32 = 503;
const ALLREDUCE_TAG: i32 = 504;

/// Broadcast of `buf` from `root` down a binomial tree: a rank at relative position `rel`
/// receives from `rel - lowbit(rel)`, then sends to `rel + 2^k` for every 2^k below its low
/// bit, largest first. ceil(log2 p) rounds.
pub(crate) fn binomial_bcast<C: Channel, T: Datatype>(
    ch: &C,
    buf: &mut [T],
    root: usize,
) -> Result<()> {
    let (p, r) = (ch.size(), ch.rank());
    let rel = (r + p - root) % p;
    let mut mask = 1;
    while mask < p {
        if rel & mask != 0 {
            ch.recv_into(buf, (rel - mask + root) % p, BCAST_TAG)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < p {
            ch.send(buf, (rel + mask + root) % p, BCAST_TAG)?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// Splits `out` (blocks of `n`) into block `send` (shared) and block `recv` (mutable).
fn two_blocks<T>(out: &mut [T], n: usize, send: usize, recv: usize) -> (&[T], &mut [T]) {
    if send < recv {
        let (a, b) = out.split_at_mut(recv * n);
        (&a[send * n..(send + 1) * n], &mut b[..n])
    } else {
        let (a, b) = out.split_at_mut(send * n);
        (&b[..n], &mut a[recv * n..(recv + 1) * n])
    }
}

fn place_own<T: Datatype>(mine: &[T], out: &mut [T], rank: usize) {
    out[rank * mine.len()..(rank + 1) * mine.len()].copy_from_slice(mine);
}

/// Allgather around a ring: in step s every rank passes block (rank - s) to its right
/// neighbour and receives block (rank - s - 1) from its left. p - 1 steps.
pub(crate) fn ring_allgather<C: Channel, T: Datatype>(
    ch: &C,
    mine: &[T],
    out: &mut [T],
) -> Result<()> {
    let (p, r, n) = (ch.size(), ch.rank(), mine.len());
    place_own(mine, out, r);
    let (right, left) = ((r + 1) % p, (r + p - 1) % p);
    for s in 0..p - 1 {
        let (send, recv) = two_blocks(out, n, (r + p - s) % p, (r + 2 * p - s - 1) % p);
        ch.sendrecv(send, right, RING_TAG, recv, left, RING_TAG)?;
    }
    Ok(())
}

/// Allgather by recursive doubling (p a power of two): in step k a rank exchanges the 2^k
/// blocks it holds with partner rank ^ 2^k. log2 p steps.
pub(crate) fn recursive_doubling_allgather<C: Channel, T: Datatype>(
    ch: &C,
    mine: &[T],
    out: &mut [T],
) -> Result<()> {
    let (p, r, n) = (ch.size(), ch.rank(), mine.len());
    if !p.is_power_of_two() {
        return Err(Error::invalid(
            "recursive_doubling_allgather",
            format!("expected a power-of-two number of ranks, got {p}"),
        ));
    }
    place_own(mine, out, r);
    let mut k = 1;
    while k < p {
        let partner = r ^ k;
        let (mine_at, theirs_at) = ((r & !(k - 1)) * n, (partner & !(k - 1)) * n);
        let (send, recv) = if mine_at < theirs_at {
            let (a, b) = out.split_at_mut(theirs_at);
            (&a[mine_at..mine_at + k * n], &mut b[..k * n])
        } else {
            let (a, b) = out.split_at_mut(mine_at);
            (&b[..k * n], &mut a[theirs_at..theirs_at + k * n])
        };
        ch.sendrecv(send, partner, DOUBLING_TAG, recv, partner, DOUBLING_TAG)?;
        k <<= 1;
    }
    Ok(())
}

/// Allreduce (wrapping byte-wise sum) by recursive doubling (p a power of two): in step k a
/// rank exchanges its whole partial sum with partner rank ^ 2^k and adds the partner's in.
/// log2 p steps.
pub(crate) fn recursive_doubling_allreduce<C: Channel>(ch: &C, buf: &mut [u8]) -> Result<()> {
    let (p, r) = (ch.size(), ch.rank());
    if !p.is_power_of_two() {
        return Err(Error::invalid(
            "recursive_doubling_allreduce",
            format!("expected a power-of-two number of ranks, got {p}"),
        ));
    }
    let mut incoming = vec![0u8; buf.len()];
    let mut k = 1;
    while k < p {
        ch.sendrecv(
            buf,
            r ^ k,
            ALLREDUCE_TAG,
            &mut incoming,
            r ^ k,
            ALLREDUCE_TAG,
        )?;
        ch.local_reduction(buf.len());
        for (b, i) in buf.iter_mut().zip(&incoming) {
            *b = b.wrapping_add(*i);
        }
        k <<= 1;
    }
    Ok(())
}

/// The reference algorithms, for recording, running and predicting.
///
/// ```
/// use rpar::sim::Reference;
/// let s = Reference::RecursiveDoublingAllgather.record(4096, 8)?;
/// assert_eq!(s.messages(), 4096 * 12);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reference {
    /// Binomial-tree broadcast from rank 0 (MPI_Bcast).
    BinomialBcast,
    /// Ring allgather (MPI_Allgather).
    RingAllgather,
    /// Recursive-doubling allgather, p a power of two (MPI_Allgather).
    RecursiveDoublingAllgather,
    /// Recursive-doubling allreduce of a wrapping byte-wise sum, p a power of two
    /// (MPI_Allreduce).
    RecursiveDoublingAllreduce,
}

impl Reference {
    /// All of them.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::{Reference, Simulator};
    /// // on a fully connected network each reference schedule takes what its formula says
    /// let params = Params::new(1e-6, 0.0, 1e-9, 0.5e-9);
    /// let sim = Simulator::new(Network::fully_connected(16), Switching::CutThrough, params);
    /// for alg in Reference::ALL {
    ///     let simulated = sim.run(&alg.record(16, 1024)?)?.time;
    ///     let predicted = alg.model().time(&params, 16, 1024)?;
    ///     assert!((simulated - predicted).abs() < 1e-12, "{alg:?}");
    /// }
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub const ALL: [Reference; 4] = [
        Reference::BinomialBcast,
        Reference::RingAllgather,
        Reference::RecursiveDoublingAllgather,
        Reference::RecursiveDoublingAllreduce,
    ];

    /// The cost model's name for it: its [`Algorithm`], whose formula predicts its time.
    ///
    /// ```
    /// use rpar::{cost::Algorithm, sim::Reference};
    /// assert_eq!(Reference::BinomialBcast.model(), Algorithm::BinomialBcast);
    /// let c = Reference::RingAllgather.model().cost(8, 64)?;
    /// assert_eq!(c.messages, 7.0);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn model(self) -> Algorithm {
        match self {
            Reference::BinomialBcast => Algorithm::BinomialBcast,
            Reference::RingAllgather => Algorithm::RingAllgather,
            Reference::RecursiveDoublingAllgather => Algorithm::RecursiveDoublingAllgather,
            Reference::RecursiveDoublingAllreduce => Algorithm::RecursiveDoublingAllreduce,
        }
    }

    /// Runs it on channel `ch` with `bytes` bytes per rank (the broadcast message, or each
    /// rank's block); rank r's input is [`Reference::input`]`(r, bytes)`. Leaves the output in
    /// `out` (the broadcast message, all p blocks, or the sum), which is the caller's buffer as
    /// in MPI — so a recording run reuses one buffer for all ranks instead of allocating (and
    /// zeroing) p of them.
    fn execute<C: Channel>(self, ch: &C, bytes: usize, out: &mut Vec<u8>) -> Result<()> {
        let (p, r) = (ch.size(), ch.rank());
        match self {
            Reference::BinomialBcast => {
                out.resize(bytes, 0);
                if r == 0 {
                    out.copy_from_slice(&Reference::input(0, bytes));
                }
                binomial_bcast(ch, out, 0)
            }
            Reference::RingAllgather => {
                out.resize(p * bytes, 0);
                ring_allgather(ch, &Reference::input(r, bytes), out)
            }
            Reference::RecursiveDoublingAllgather => {
                out.resize(p * bytes, 0);
                recursive_doubling_allgather(ch, &Reference::input(r, bytes), out)
            }
            Reference::RecursiveDoublingAllreduce => {
                out.clear();
                out.extend(Reference::input(r, bytes));
                recursive_doubling_allreduce(ch, out)
            }
        }
    }

    /// Rank `rank`'s input block: byte i is (31 rank + i) mod 256.
    ///
    /// ```
    /// use rpar::sim::Reference;
    /// assert_eq!(Reference::input(0, 3), [0, 1, 2]);
    /// assert_eq!(Reference::input(9, 2), [23, 24]); // 279 mod 256 = 23
    /// ```
    pub fn input(rank: usize, bytes: usize) -> Vec<u8> {
        (0..bytes).map(|i| (31 * rank + i) as u8).collect()
    }

    /// Runs it on `comm`, moving real data (collective: every rank calls it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for the recursive-doubling algorithms on a `comm`
    /// whose size is not a power of two; those of the point-to-point calls underneath
    /// ([`Error::Aborted`] if another rank fails meanwhile).
    ///
    /// ```
    /// use rpar::sim::Reference;
    /// let out = rpar::run(4, |world| Reference::RingAllgather.run(&world, 2))?;
    /// let expected: Vec<u8> = (0..4).flat_map(|r| Reference::input(r, 2)).collect();
    /// assert!(out.iter().all(|o| *o == expected));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn run(self, comm: &Comm, bytes: usize) -> Result<Vec<u8>> {
        // One collective call, so that a trace shows it as a span (algorithm `Reference…`)
        // holding its messages' arrows, and ranks that call something else are told so.
        let (call, algorithm) = match self {
            Reference::BinomialBcast => (Call::new("bcast").root(0), "ReferenceBinomialBcast"),
            Reference::RingAllgather => (Call::new("allgather"), "ReferenceRingAllgather"),
            Reference::RecursiveDoublingAllgather => (
                Call::new("allgather"),
                "ReferenceRecursiveDoublingAllgather",
            ),
            Reference::RecursiveDoublingAllreduce => (
                Call::new("allreduce"),
                "ReferenceRecursiveDoublingAllreduce",
            ),
        };
        let mut out = Vec::new();
        comm.collective(call, &algorithm, || self.execute(comm, bytes, &mut out))?;
        Ok(out)
    }

    /// Records its schedule on `p` ranks with `bytes` bytes per rank (see [`record`]).
    ///
    /// # Errors
    ///
    /// Those of [`record`]; the recursive-doubling algorithms on `p` not a power of
    /// two fail in rank 0's run ([`Error::RankFailed`] for rank 0).
    ///
    /// ```
    /// use rpar::sim::Reference;
    /// let s = Reference::RecursiveDoublingAllreduce.record(8, 32)?;
    /// assert_eq!((s.messages(), s.bytes_sent()), (8 * 3, 8 * 3 * 32));
    /// assert!(matches!(
    ///     Reference::RecursiveDoublingAllreduce.record(6, 32),
    ///     Err(rpar::Error::RankFailed { rank: 0, .. })
    /// ));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn record(self, p: usize, bytes: usize) -> Result<Schedule> {
        let mut out = Vec::new();
        record(p, |rec| self.execute(rec, bytes, &mut out))
    }
}
