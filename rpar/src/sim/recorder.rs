//! [`Recorder`]: a [`Channel`] that records instead of moving data, and [`record`], which runs an
//! algorithm once per rank to produce its [`Schedule`].
//!
//! Recording never blocks — a receive is written down and returns at once, leaving the buffer
//! untouched — so the ranks need not run concurrently: [`record`] runs rank 0's program to the
//! end, then rank 1's, and so on, in one thread. That makes 65536 ranks as cheap as the
//! operations they record (no threads, no synchronization; p = 4096 with a logarithmic
//! algorithm records in milliseconds).
//!
//! The price: an algorithm sees no data (received buffers keep what they held, `recv_vec`
//! returns zeros), so it must not branch on received values. Every standard collective
//! qualifies: their control flow depends only on rank, size and sizes. Sizes are real: a
//! `recv_vec` — a whole message whose length the receiver does not know — gets a vector of the
//! length its sender recorded; when the sender has not run yet, the receiver's run is cut
//! there and replayed after the sender's (a binomial gather's root is replayed once per child,
//! so recording stays O(p log p) for it).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};

use super::schedule::{Op, Schedule};
use crate::collective::{zeroed_vec, Channel, Partners};
use crate::comm::TAG_UB;
use crate::datatype::Datatype;
use crate::{Error, Result};

/// A message channel: source rank, destination rank, tag.
type Link = (u32, u32, i32);

/// One rank's view of a recording run: `rank()` of `size()`, and the operations so far.
///
/// Crate algorithms use it through `Channel`; programs outside rpar describe their messages
/// with [`Recorder::send_bytes`], [`Recorder::recv_bytes`] and [`Recorder::reduce_bytes`].
///
/// ```
/// // A ring shift: everyone sends 64 bytes right and receives from the left.
/// let s = rpar::sim::record(8, |r| {
///     let p = r.size();
///     r.send_bytes((r.rank() + 1) % p, 0, 64)?;
///     r.recv_bytes((r.rank() + p - 1) % p, 0, 64)
/// })?;
/// assert_eq!(s.messages(), 8);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct Recorder {
    rank: usize,
    size: usize,
    /// This run's operations.
    ops: RefCell<Vec<Op>>,
    /// How many receives this run has posted on each (source, tag), for FIFO matching.
    received: RefCell<HashMap<(u32, i32), usize>>,
    /// The sizes of the sends recorded so far on each channel, in order; filled only once a
    /// program has called `recv_vec` (programs that never do pay nothing for it).
    sent: RefCell<HashMap<Link, Vec<u64>>>,
    /// Set when this run's `recv_vec` needed a message its source has not recorded yet:
    /// the run is cut there and replayed later.
    waiting_for: Cell<Option<(usize, i32)>>,
}

impl Recorder {
    /// The rank whose program is being recorded (MPI_Comm_rank).
    ///
    /// ```
    /// // every rank but 0 sends its rank's worth of bytes to rank 0
    /// let s = rpar::sim::record(4, |r| {
    ///     if r.rank() == 0 {
    ///         (1..r.size()).try_for_each(|src| r.recv_bytes(src, 0, src))
    ///     } else {
    ///         r.send_bytes(0, 0, r.rank())
    ///     }
    /// })?;
    /// assert_eq!(s.bytes_sent(), 1 + 2 + 3);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks being recorded, the `p` given to [`record`] (MPI_Comm_size).
    ///
    /// ```
    /// let s = rpar::sim::record(6, |r| {
    ///     assert_eq!(r.size(), 6);
    ///     let p = r.size();
    ///     r.send_bytes((r.rank() + 1) % p, 0, 8)?;
    ///     r.recv_bytes((r.rank() + p - 1) % p, 0, 8)
    /// })?;
    /// assert_eq!(s.messages(), 6);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.size
    }

    fn check(&self, peer: usize, tag: i32) -> Result<u32> {
        if self.waiting_for.get().is_some() {
            return Err(self.cut());
        }
        if peer >= self.size {
            return Err(Error::RankOutOfRange {
                rank: peer,
                size: self.size,
            });
        }
        if !(0..=TAG_UB).contains(&tag) {
            return Err(Error::InvalidTag { tag, max: TAG_UB });
        }
        Ok(peer as u32)
    }

    /// What every operation of a run returns after `recv_vec` has cut it (never seen by
    /// callers of [`record`], which replays the run).
    fn cut(&self) -> Error {
        Error::invalid(
            "sim::record",
            format!(
                "rank {}'s run waits for a message not recorded yet",
                self.rank
            ),
        )
    }

    /// Records a send of `bytes` bytes to `dest` with `tag` (MPI_Send). Never blocks.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a `dest` beyond [`size`](Recorder::size);
    /// [`Error::InvalidTag`] for a tag outside `0..=TAG_UB`.
    ///
    /// ```
    /// let s = rpar::sim::record(2, |r| {
    ///     assert!(matches!(r.send_bytes(2, 0, 8), Err(rpar::Error::RankOutOfRange { rank: 2, size: 2 })));
    ///     assert!(matches!(r.send_bytes(0, -1, 8), Err(rpar::Error::InvalidTag { tag: -1, .. })));
    ///     r.send_bytes(1 - r.rank(), 0, 8)?;
    ///     r.recv_bytes(1 - r.rank(), 0, 8)
    /// })?;
    /// assert_eq!((s.messages(), s.bytes_sent()), (2, 16)); // the refused sends left no trace
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn send_bytes(&self, dest: usize, tag: i32, bytes: usize) -> Result<()> {
        let to = self.check(dest, tag)?;
        self.ops.borrow_mut().push(Op::Send {
            to,
            tag,
            bytes: bytes as u64,
        });
        Ok(())
    }

    /// Records a receive from `source` with `tag` into a buffer of `bytes` bytes (MPI_Recv).
    /// Never blocks: the receive is matched to its send when the schedule is built, where a
    /// message larger than `bytes` is an [`Error::Truncated`].
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a `source` beyond [`size`](Recorder::size);
    /// [`Error::InvalidTag`] for a tag outside `0..=TAG_UB` (wildcards cannot be recorded).
    ///
    /// ```
    /// use rpar::sim::{record, Op};
    /// let s = record(2, |r| match r.rank() {
    ///     0 => r.send_bytes(1, 3, 100),
    ///     _ => r.recv_bytes(0, 3, 4096), // a buffer larger than the message
    /// })?;
    /// assert_eq!(s.rank_ops(1), [Op::Recv { from: 0, tag: 3, bytes: 100 }]);
    /// let too_small = record(2, |r| match r.rank() {
    ///     0 => r.send_bytes(1, 3, 100),
    ///     _ => r.recv_bytes(0, 3, 10),
    /// });
    /// assert!(matches!(too_small, Err(rpar::Error::Truncated { needed: 100, capacity: 10, .. })));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn recv_bytes(&self, source: usize, tag: i32, bytes: usize) -> Result<()> {
        let from = self.check(source, tag)?;
        self.post_recv(from, tag, bytes as u64);
        Ok(())
    }

    /// Records a receive and returns its position among this run's receives on (from, tag).
    fn post_recv(&self, from: u32, tag: i32, bytes: u64) -> usize {
        self.ops.borrow_mut().push(Op::Recv { from, tag, bytes });
        let mut received = self.received.borrow_mut();
        let n = received.entry((from, tag)).or_insert(0);
        *n += 1;
        *n - 1
    }

    /// Records a local reduction of `bytes` bytes: the simulator charges `bytes` gamma.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::{record, Simulator};
    /// // rank 1 sends 8 bytes to rank 0, which combines them with its own
    /// let s = record(2, |r| {
    ///     if r.rank() == 1 {
    ///         return r.send_bytes(0, 0, 8);
    ///     }
    ///     r.recv_bytes(1, 0, 8)?;
    ///     r.reduce_bytes(8);
    ///     Ok(())
    /// })?;
    /// let params = Params::new(1.0, 0.0, 0.25, 0.5);
    /// let report = Simulator::new(Network::ring(2), Switching::CutThrough, params).run(&s)?;
    /// assert_eq!(report.time, 1.0 + 8.0 * 0.25 + 8.0 * 0.5); // t_n + m t_c + m gamma
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn reduce_bytes(&self, bytes: usize) {
        if self.waiting_for.get().is_none() {
            self.ops.borrow_mut().push(Op::Reduce {
                bytes: bytes as u64,
            });
        }
    }

    /// The size of the `k`-th message from `from` to this rank with `tag`, if its sender has
    /// recorded it.
    fn sent_size(&self, from: u32, tag: i32, k: usize) -> Option<u64> {
        let me = self.rank as u32;
        if from == me {
            // a message to itself: this run's own sends (not indexed until the run ends)
            let ops = self.ops.borrow();
            let mut own = ops.iter().filter_map(|op| match *op {
                Op::Send { to, tag: t, bytes } if to == me && t == tag => Some(bytes),
                _ => None,
            });
            return own.nth(k);
        }
        let sent = self.sent.borrow();
        sent.get(&(from, me, tag))?.get(k).copied()
    }

    /// Starts a new run of the program as `rank`.
    fn start_run(&mut self, rank: usize) {
        self.rank = rank;
        self.ops.get_mut().clear();
        self.received.get_mut().clear();
        self.waiting_for.set(None);
    }
}

fn bytes_of<T>(count: usize) -> usize {
    count * std::mem::size_of::<T>()
}

impl Channel for Recorder {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn send<T: Datatype>(&self, data: &[T], dest: usize, tag: i32) -> Result<()> {
        self.send_bytes(dest, tag, bytes_of::<T>(data.len()))
    }

    fn send_owned<T: Datatype>(&self, data: Vec<T>, dest: usize, tag: i32) -> Result<()> {
        self.send_bytes(dest, tag, bytes_of::<T>(data.len()))
    }

    /// Records the receive and reports the buffer as filled; the buffer is left untouched.
    fn recv_into<T: Datatype>(&self, buf: &mut [T], source: usize, tag: i32) -> Result<usize> {
        self.recv_bytes(source, tag, bytes_of::<T>(buf.len()))?;
        Ok(buf.len())
    }

    /// Records the receive and returns a zeroed vector of the message's length, once the
    /// sender's run has recorded the message; until then the run is cut here and [`record`]
    /// replays it later.
    fn recv_vec<T: Datatype>(&self, source: usize, tag: i32) -> Result<Vec<T>> {
        let from = self.check(source, tag)?;
        let k = self
            .received
            .borrow()
            .get(&(from, tag))
            .copied()
            .unwrap_or(0);
        let Some(bytes) = self.sent_size(from, tag, k) else {
            self.waiting_for.set(Some((source, tag)));
            return Err(self.cut());
        };
        self.post_recv(from, tag, bytes);
        let elem = std::mem::size_of::<T>().max(1);
        zeroed_vec(bytes as usize / elem, "recv")
    }

    fn sendrecv<T, U>(&self, send: &[T], recv: &mut [U], with: Partners) -> Result<usize>
    where
        T: Datatype,
        U: Datatype,
    {
        Channel::send(self, send, with.dest, with.tag)?;
        Channel::recv_into(self, recv, with.source, with.tag)
    }

    fn local_reduction(&self, bytes: usize) {
        self.reduce_bytes(bytes);
    }
}

/// Records the schedule of `program` on `p` ranks: runs it once per rank, rank 0 first, each
/// time on a [`Recorder`] for that rank, and matches the receives to the sends.
///
/// A run that receives a whole message of a size it cannot know (`recv_vec`, which the
/// binomial gather and scatter and the Gray-code shift use) before the sender's run has
/// recorded that message is cut there and replayed, from the start, once the sender has
/// recorded more: the run then gets a vector of the message's real length, so that what it
/// forwards has the right size. The program must therefore be deterministic (the same
/// operations for the same sizes), as every collective is.
///
/// # Errors
///
/// `p == 0`; an error of the program (as [`Error::RankFailed`] naming the rank); a
/// receive without a send or the other way round; a message larger than its receive buffer;
/// `recv_vec`s that wait for each other (a deadlock).
///
/// ```
/// // Rank 0 sends 1 KiB to everyone (a linear scatter of the same block).
/// let s = rpar::sim::record(4, |r| {
///     if r.rank() == 0 {
///         (1..r.size()).try_for_each(|d| r.send_bytes(d, 7, 1024))
///     } else {
///         r.recv_bytes(0, 7, 1024)
///     }
/// })?;
/// assert_eq!((s.messages(), s.bytes_sent()), (3, 3072));
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn record<F>(p: usize, mut program: F) -> Result<Schedule>
where
    F: FnMut(&Recorder) -> Result<()>,
{
    if p == 0 {
        return Err(Error::invalid(
            "sim::record",
            "expected at least 1 rank, got 0",
        ));
    }
    let mut recorder = Recorder {
        rank: 0,
        size: p,
        ops: RefCell::new(Vec::new()),
        received: RefCell::new(HashMap::new()),
        sent: RefCell::new(HashMap::new()),
        waiting_for: Cell::new(None),
    };
    // Each rank's operations so far (all of them once `done`), and how many of them are in
    // `recorder.sent` (a replayed run repeats its earlier prefix exactly).
    let mut ops: Vec<Vec<Op>> = vec![Vec::new(); p];
    let mut indexed = vec![0usize; p];
    let mut done = vec![false; p];
    // Runs cut in `recv_vec`, by the source they wait for.
    let mut waiters: Vec<Vec<usize>> = vec![Vec::new(); p];
    let mut queue: VecDeque<usize> = (0..p).collect();
    let mut index_sends = false;
    while let Some(rank) = queue.pop_front() {
        recorder.start_run(rank);
        let result = program(&recorder);
        let waiting = recorder.waiting_for.get();
        ops[rank] = std::mem::take(recorder.ops.get_mut());
        let first_wait = waiting.is_some() && !index_sends;
        if first_wait {
            // The first `recv_vec` that found no message: from now on sends are indexed by
            // channel, beginning with those of the runs already recorded (no one waits yet).
            index_sends = true;
            for r in 0..p {
                index(recorder.sent.get_mut(), r, &ops[r], &mut indexed[r]);
            }
        } else if index_sends
            && index(
                recorder.sent.get_mut(),
                rank,
                &ops[rank],
                &mut indexed[rank],
            )
        {
            queue.extend(waiters[rank].drain(..));
        }
        match (waiting, result) {
            // its message may have been recorded before sends were indexed: try again
            (Some(_), _) if first_wait => queue.push_back(rank),
            (Some((source, _)), _) => waiters[source].push(rank),
            (None, Ok(())) => done[rank] = true,
            (None, Err(e)) => {
                return Err(Error::RankFailed {
                    rank,
                    source: Box::new(e),
                })
            }
        }
    }
    if let Some(source) = (0..p).find(|&s| !waiters[s].is_empty()) {
        let rank = waiters[source][0];
        let why = if done[source] {
            "which never sends it"
        } else {
            "which waits itself: the program deadlocks"
        };
        return Err(Error::RankFailed {
            rank,
            source: Box::new(Error::invalid(
                "sim::record",
                format!("rank {rank} receives a whole message from rank {source}, {why}"),
            )),
        });
    }
    let mut starts = Vec::with_capacity(p + 1);
    starts.push(0);
    for rank_ops in &ops {
        starts.push(starts[starts.len() - 1] + rank_ops.len());
    }
    Schedule::from_flat(ops.concat(), starts)
}

/// Adds the sends of `ops[*from..]` (rank `rank`'s) to `sent`; returns whether there were any.
fn index(sent: &mut HashMap<Link, Vec<u64>>, rank: usize, ops: &[Op], from: &mut usize) -> bool {
    let mut any = false;
    for op in &ops[*from..] {
        if let Op::Send { to, tag, bytes } = *op {
            sent.entry((rank as u32, to, tag)).or_default().push(bytes);
            any = true;
        }
    }
    *from = ops.len();
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rank 0 forwards to rank 2 whatever rank 1 sends it, not knowing its size.
    fn relay(r: &Recorder) -> Result<()> {
        match r.rank() {
            0 => {
                let got: Vec<u32> = r.recv_vec(1, 0)?;
                Channel::send(r, &got, 2, 0)
            }
            1 => Channel::send(r, &[7u32; 3], 0, 0),
            _ => r.recv_bytes(0, 0, 64),
        }
    }

    #[test]
    fn recv_vec_waits_for_its_sender_and_gets_the_real_size() {
        let s = record(3, relay).unwrap();
        assert_eq!(
            s.rank_ops(0)[0],
            Op::Recv {
                from: 1,
                tag: 0,
                bytes: 12
            }
        );
        assert_eq!(
            s.rank_ops(0)[1],
            Op::Send {
                to: 2,
                tag: 0,
                bytes: 12
            }
        );
        assert_eq!(
            s.rank_ops(2),
            [Op::Recv {
                from: 0,
                tag: 0,
                bytes: 12
            }]
        );
        // a message to itself is found in the run's own sends
        let s = record(1, |r| {
            Channel::send(r, &[1u8; 5], 0, 3)?;
            r.recv_vec::<u8>(0, 3).map(|v| assert_eq!(v.len(), 5))
        })
        .unwrap();
        assert_eq!(s.messages(), 1);
    }

    #[test]
    fn recv_vecs_that_cannot_be_served_are_errors() {
        // both wait for the other's message first
        let err = record(2, |r| {
            let other = 1 - r.rank();
            let got: Vec<u8> = r.recv_vec(other, 0)?;
            Channel::send(r, &got, other, 0)
        })
        .unwrap_err();
        assert!(err.to_string().contains("deadlocks"), "{err}");
        // the sender finishes without sending
        let err = record(2, |r| match r.rank() {
            0 => r.recv_vec::<u8>(1, 0).map(drop),
            _ => Ok(()),
        })
        .unwrap_err();
        assert!(err.to_string().contains("never sends it"), "{err}");
    }
}
