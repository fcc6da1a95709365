//! The library's own collective algorithms in recording mode: [`record_collective`] runs
//! rpar's real code for every collective family — bcast, reduce, allreduce, allgather,
//! alltoall, scan and exscan, gather, scatter, reduce-scatter, barrier and the circular shift,
//! each with any of its algorithms (the very functions a `Comm` runs) — on [`Recorder`]s, so
//! their schedules can be simulated and costed beside the closed forms.

use super::recorder::{record, Recorder};
use super::Schedule;
use crate::collective::{
    allgather_algorithm, allreduce_algorithm, alltoall_algorithm, barrier_algorithm,
    bcast_algorithm, gather_algorithm, reduce_algorithm, reduce_scatter_algorithm, scan_algorithm,
    scatter_algorithm, shift_algorithm, Named, Prefix,
};
use crate::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Result, Scan,
    Scatter, Shift, Sum,
};

/// One of rpar's collectives with a chosen algorithm, for [`record_collective`].
///
/// Every algorithm family of the library is here; reductions use [`Sum`] on bytes, rooted
/// collectives root 0.
///
/// ```
/// use rpar::cost::{Network, Params, Switching};
/// use rpar::sim::{record_collective, Collective, Simulator};
/// use rpar::Bcast;
/// let net = Network::fully_connected(8);
/// let sim = Simulator::new(net, Switching::CutThrough, Params::hockney(1e-6, 1e-9));
/// let time = |alg, bytes| -> rpar::Result<f64> {
///     Ok(sim.run(&record_collective(8, bytes, Collective::Bcast(alg))?)?.time)
/// };
/// // small messages: the binomial tree's log2 p startups win
/// assert!(time(Bcast::Binomial, 8)? < time(Bcast::ScatterAllgather, 8)?);
/// // large ones: scatter + allgather moves 2 m instead of log2 p m on the critical path
/// assert!(time(Bcast::ScatterAllgather, 1 << 20)? < time(Bcast::Binomial, 1 << 20)?);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    /// `comm.using(algorithm).bcast(…)` from rank 0.
    Bcast(Bcast),
    /// `comm.using(algorithm).reduce(…, Sum, 0)`.
    Reduce(Reduce),
    /// `comm.using(algorithm).allreduce(…, Sum)`.
    Allreduce(Allreduce),
    /// `comm.using(algorithm).allgather(…)`.
    Allgather(Allgather),
    /// `comm.using(algorithm).alltoall(…)`.
    Alltoall(Alltoall),
    /// `comm.using(algorithm).scan(…, Sum)`, the inclusive prefix.
    Scan(Scan),
    /// `comm.using(algorithm).exscan(…, Sum)`, the exclusive prefix.
    Exscan(Scan),
    /// `comm.using(algorithm).gather(…, 0)`.
    Gather(Gather),
    /// `comm.using(algorithm).scatter(…, 0)`.
    Scatter(Scatter),
    /// `comm.using(algorithm).reduce_scatter(…, Sum)` with equal blocks (MPI_Reduce_scatter_block): each rank ends
    /// with one block of the reduction. With counts it runs the same code with other block
    /// sizes.
    ReduceScatter(ReduceScatter),
    /// `comm.using(algorithm).barrier()` (the byte count is ignored).
    Barrier(Barrier),
    /// `comm.using(algorithm).shift_circular(…, q)`.
    Shift(Shift, isize),
}

impl Named for Recorder {
    fn comm_rank(&self, member: usize) -> usize {
        member
    }
}

/// Records `collective` on `p` ranks with `bytes` bytes per rank, running the same algorithm
/// code as [`Comm`](crate::Comm). `bytes` is what each rank contributes: the vector of bcast,
/// reduce, allreduce, scan and exscan; one rank's block of allgather, gather, scatter and
/// shift; for alltoall the block for each destination, for reduce-scatter the block each rank
/// ends with (each rank's input is `p` of them).
///
/// # Errors
///
/// Those of [`record`](super::record): [`Error::InvalidArgument`](crate::Error::InvalidArgument)
/// for `p == 0`, and an algorithm's own refusal (say, of a `p` it does not support) as
/// [`Error::RankFailed`](crate::Error::RankFailed) naming the rank.
///
/// ```
/// use rpar::sim::{record_collective, Collective};
/// use rpar::{Allgather, Gather};
/// let ring = record_collective(8, 64, Collective::Allgather(Allgather::Ring))?;
/// assert_eq!(ring.messages(), 8 * 7); // p - 1 steps, one message per rank each
/// let doubling = record_collective(8, 64, Collective::Allgather(Allgather::RecursiveDoubling))?;
/// assert_eq!(doubling.messages(), 8 * 3); // log2 p steps
/// // a binomial gather forwards whole subtrees: ranks 1..8 send 1, 2, 1, 4, 1, 2, 1 blocks
/// let tree = record_collective(8, 64, Collective::Gather(Gather::Binomial))?;
/// assert_eq!((tree.messages(), tree.bytes_sent()), (7, 12 * 64));
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn record_collective(p: usize, bytes: usize, collective: Collective) -> Result<Schedule> {
    match collective {
        Collective::Bcast(a) => {
            let mut buf = vec![0u8; bytes];
            record(p, |r| bcast_algorithm(r, &mut buf, 0, a))
        }
        Collective::Reduce(a) => {
            let mut buf = vec![0u8; bytes];
            record(p, |r| reduce_algorithm(r, &mut buf, &Sum, 0, a))
        }
        Collective::Allreduce(a) => {
            let mut buf = vec![0u8; bytes];
            record(p, |r| allreduce_algorithm(r, &mut buf, &Sum, a))
        }
        Collective::Allgather(a) => {
            let mut buf = vec![0u8; bytes * p];
            let offsets: Vec<usize> = (0..=p).map(|i| i * bytes).collect();
            record(p, |r| allgather_algorithm(r, &mut buf, &offsets, a))
        }
        Collective::Alltoall(a) => {
            let send = vec![0u8; bytes * p];
            let mut recv = vec![0u8; bytes * p];
            record(p, |r| alltoall_algorithm(r, &send, &mut recv, a))
        }
        Collective::Scan(a) => record_prefix(p, bytes, a, Prefix::Inclusive),
        Collective::Exscan(a) => record_prefix(p, bytes, a, Prefix::Exclusive),
        Collective::Gather(a) => {
            let send = vec![0u8; bytes];
            let mut all = vec![0u8; bytes * p];
            record(p, |r| {
                // the receive buffer counts at the root only, as in MPI_Gather
                let recv = if r.rank() == 0 { &mut all[..] } else { &mut [] };
                gather_algorithm(r, &send, recv, true, 0, a)
            })
        }
        Collective::Scatter(a) => {
            let all = vec![0u8; bytes * p];
            record(p, |r| {
                let send = if r.rank() == 0 { &all[..] } else { &[] };
                scatter_algorithm(r, send, 0, a).map(drop)
            })
        }
        Collective::ReduceScatter(a) => {
            let data = vec![0u8; bytes * p];
            let displs: Vec<usize> = (0..=p).map(|i| i * bytes).collect();
            record(p, |r| {
                reduce_scatter_algorithm(r, &data, &displs, &Sum, a).map(drop)
            })
        }
        Collective::Barrier(a) => record(p, |r| barrier_algorithm(r, a)),
        Collective::Shift(a, q) => {
            record(p, |r| shift_algorithm(r, vec![0u8; bytes], q, a).map(drop))
        }
    }
}

fn record_prefix(p: usize, bytes: usize, algorithm: Scan, kind: Prefix) -> Result<Schedule> {
    let mut acc = vec![0u8; bytes];
    record(p, |r| {
        scan_algorithm(r, &mut acc, &Sum, algorithm, kind).map(drop)
    })
}

#[cfg(test)]
mod tests {
    //! Each family's recorded schedule against what its algorithm must do: messages, bytes
    //! and rounds (the critical path in messages: the simulated time with alpha = 1 and
    //! nothing else, on a fully connected network), for powers of two and other p.
    use super::*;
    use crate::cost::{Network, Params, Switching};
    use crate::sim::Simulator;

    const M: usize = 24;
    const PS: [usize; 9] = [1, 2, 3, 4, 5, 7, 8, 12, 16];

    fn ceil_log2(p: usize) -> usize {
        p.next_power_of_two().trailing_zeros() as usize
    }

    /// (messages, bytes sent, rounds) of `c` on `p` ranks with M bytes.
    fn shape(p: usize, c: Collective) -> (usize, u64, usize) {
        let s = record_collective(p, M, c).unwrap();
        let alpha_only = Params::new(1.0, 0.0, 0.0, 0.0);
        let sim = Simulator::new(
            Network::fully_connected(p),
            Switching::CutThrough,
            alpha_only,
        );
        let rounds = sim.run(&s).unwrap().time;
        (s.messages(), s.bytes_sent(), rounds as usize)
    }

    fn bytes(blocks: usize) -> u64 {
        (blocks * M) as u64
    }

    #[test]
    fn scan_and_exscan() {
        for p in PS {
            let (l, chain) = (ceil_log2(p), p - 1);
            for c in [
                Collective::Scan(Scan::Linear),
                Collective::Exscan(Scan::Linear),
            ] {
                assert_eq!(shape(p, c), (chain, bytes(chain), chain), "{c:?} p = {p}");
            }
            // every pair (r, r ^ 2^k) inside 0..p exchanges once
            let pairs: usize = (0..l)
                .map(|k| (0..p).filter(|r| r ^ (1 << k) < p).count())
                .sum();
            for c in [
                Collective::Scan(Scan::RecursiveDoubling),
                Collective::Exscan(Scan::RecursiveDoubling),
            ] {
                assert_eq!(shape(p, c), (pairs, bytes(pairs), l), "{c:?} p = {p}");
            }
        }
        assert_eq!(shape(8, Collective::Scan(Scan::RecursiveDoubling)).0, 8 * 3);
    }

    #[test]
    fn gather_and_scatter() {
        for p in PS {
            let l = ceil_log2(p);
            // the binomial tree: rank r > 0 passes on its subtree r..r + lowbit(r) (cut at p)
            let subtrees: usize = (1..p)
                .map(|r| (r + (r & r.wrapping_neg())).min(p) - r)
                .sum();
            let n = p - 1;
            let gather = |a| shape(p, Collective::Gather(a));
            let scatter = |a| shape(p, Collective::Scatter(a));
            // linear gather: the p - 1 messages travel at once (the root is not a resource)
            assert_eq!(gather(Gather::Linear), (n, bytes(n), n.min(1)), "p = {p}");
            // binomial gather: as many rounds as the tree is high, since a rank's children
            // send at once (ceil(log2 p) for a power of two; the root's sends in scatter are
            // one after another, so ceil(log2 p) always)
            let height = (0..p).map(|r| r.count_ones() as usize).max().unwrap_or(0);
            assert_eq!(
                gather(Gather::Binomial),
                (n, bytes(subtrees), height),
                "p = {p}"
            );
            // linear scatter: the root pays a startup per message, one after another
            assert_eq!(scatter(Scatter::Linear), (n, bytes(n), n), "p = {p}");
            assert_eq!(
                scatter(Scatter::Binomial),
                (n, bytes(subtrees), l),
                "p = {p}"
            );
            if p.is_power_of_two() {
                assert_eq!((bytes(subtrees), height), (bytes(p * l / 2), l));
            }
        }
    }

    #[test]
    fn reduce_scatter() {
        for p in PS {
            let n = p * (p - 1);
            for a in [ReduceScatter::Pairwise, ReduceScatter::Ring] {
                let c = Collective::ReduceScatter(a);
                assert_eq!(shape(p, c), (n, bytes(n), p - 1), "{a:?} p = {p}");
            }
            // fold the p - p2 extra ranks in (whole vectors), halve among p2, send blocks back
            let p2 = 1usize << p.ilog2();
            let (rem, l) = (p - p2, p2.trailing_zeros() as usize);
            let halving = p2 * l + 2 * rem;
            // each of the p2 ranks sends (p2 - 1) / p2 of the p blocks
            let moved = (p2 - 1) * p + rem * p + rem;
            let folds = if rem > 0 { 2 } else { 0 };
            let c = Collective::ReduceScatter(ReduceScatter::RecursiveHalving);
            assert_eq!(shape(p, c), (halving, bytes(moved), l + folds), "p = {p}");
        }
    }

    #[test]
    fn barrier() {
        for p in PS {
            let (l, n) = (ceil_log2(p), p - 1);
            let b = |a| shape(p, Collective::Barrier(a));
            assert_eq!(b(Barrier::Dissemination), (p * l, 0, l), "p = {p}");
            // everyone reports at once; rank 0 releases them one after another
            assert_eq!(b(Barrier::Central), (2 * n, 0, n.min(1) + n), "p = {p}");
            let (messages, _, rounds) = b(Barrier::Tree);
            assert_eq!(messages, 2 * n, "p = {p}");
            // up and down the tree; for p not a power of two the root's last subtree is short
            assert!(rounds <= 2 * l, "p = {p}");
            if p.is_power_of_two() {
                assert_eq!(rounds, 2 * l, "p = {p}");
            }
        }
    }

    #[test]
    fn circular_shift() {
        for p in PS {
            for q in [0isize, 1, 3, -1] {
                let moved = q.rem_euclid(p as isize) != 0;
                let want = if moved { (p, bytes(p), 1) } else { (0, 0, 0) };
                assert_eq!(shape(p, Collective::Shift(Shift::Direct, q)), want);
            }
        }
        for d in 0..=5u32 {
            let p = 1usize << d;
            for q in 0..p {
                // a shift by 2^k is one hop of the hypercube for k = 0, two hops for k > 0
                let hops: usize = (0..d)
                    .filter(|k| q >> k & 1 == 1)
                    .map(|k| 1 + usize::from(k > 0))
                    .sum();
                let c = Collective::Shift(Shift::GrayCode, q as isize);
                assert_eq!(
                    shape(p, c),
                    (p * hops, bytes(p * hops), hops),
                    "p = {p}, q = {q}"
                );
            }
        }
        let refused = record_collective(6, M, Collective::Shift(Shift::GrayCode, 1));
        assert!(refused.is_err(), "the Gray code needs a power of two");
    }
}
