//! [`Schedule`]: what every rank of a collective does, in order — sends, receives and local
//! reductions — with each receive matched to its send by MPI's rules (same source, destination
//! and tag; FIFO between each pair). Dependencies are implied: a rank's operations happen in
//! order, and a receive cannot complete before its matched send has arrived.

use crate::{Error, Result};

const NO_MATCH: u32 = u32::MAX;

/// One step of one rank: what a [`Recorder`](super::Recorder) writes down and a
/// [`Schedule`] holds.
///
/// ```
/// use rpar::sim::{record, Op};
/// let s = record(2, |r| {
///     if r.rank() == 0 {
///         r.send_bytes(1, 5, 16)
///     } else {
///         r.recv_bytes(0, 5, 64)?; // a buffer of 64 bytes …
///         r.reduce_bytes(16);
///         Ok(())
///     }
/// })?;
/// assert_eq!(s.rank_ops(0), [Op::Send { to: 1, tag: 5, bytes: 16 }]);
/// // … holds the matched message's 16 bytes once the schedule is built
/// assert_eq!(s.rank_ops(1), [Op::Recv { from: 0, tag: 5, bytes: 16 }, Op::Reduce { bytes: 16 }]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Send `bytes` bytes to rank `to` with `tag`.
    Send {
        /// Destination rank.
        to: u32,
        /// Tag.
        tag: i32,
        /// Message size.
        bytes: u64,
    },
    /// Receive from rank `from` with `tag`; `bytes` is the matched message's size.
    Recv {
        /// Source rank.
        from: u32,
        /// Tag.
        tag: i32,
        /// Message size (the receive buffer's capacity before matching).
        bytes: u64,
    },
    /// Combine `bytes` bytes locally.
    Reduce {
        /// Bytes combined.
        bytes: u64,
    },
    /// Compute locally for `ns` nanoseconds of this machine's CPU time (what a simulated
    /// program did between its rpar calls: [`Universe::simulate`](crate::Universe::simulate)).
    Compute {
        /// CPU time in nanoseconds, before the simulator's
        /// [`cpu_scale`](super::Simulator::cpu_scale).
        ns: u64,
    },
}

/// The communication schedule of `ranks()` ranks, with every receive matched to its send.
///
/// ```
/// use rpar::sim::{Op, Schedule};
/// let s = Schedule::new(vec![
///     vec![Op::Send { to: 1, tag: 0, bytes: 8 }],
///     vec![Op::Recv { from: 0, tag: 0, bytes: 8 }, Op::Reduce { bytes: 8 }],
/// ])?;
/// assert_eq!((s.ranks(), s.messages(), s.bytes_sent()), (2, 1, 8));
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    ops: Vec<Op>,
    /// Rank r's operations are `ops[starts[r]..starts[r + 1]]`.
    starts: Vec<usize>,
    /// For each send, the index of its receive; for each receive, its send's; else NO_MATCH.
    partner: Vec<u32>,
}

impl Schedule {
    /// A schedule from each rank's operations; matches receives to sends and checks that
    /// every operation has a partner and that no message exceeds its receive's capacity.
    /// Matching is MPI's: the k-th send from a to b with tag t meets the k-th receive at b from
    /// a with tag t. On success each receive's `bytes` is its message's size.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a send to a rank the schedule does not have;
    /// [`Error::InvalidArgument`] for a send without a matching receive or the other way round
    /// (or more than 2^32 - 1 operations); [`Error::Truncated`] for a message larger than its
    /// receive's capacity.
    ///
    /// ```
    /// use rpar::sim::{Op, Schedule};
    /// let send = |bytes| vec![Op::Send { to: 1, tag: 0, bytes }];
    /// let recv = || vec![Op::Recv { from: 0, tag: 0, bytes: 8 }];
    /// assert!(Schedule::new(vec![send(8), recv()]).is_ok());
    /// assert!(matches!(
    ///     Schedule::new(vec![send(16), recv()]),
    ///     Err(rpar::Error::Truncated { needed: 16, capacity: 8, .. })
    /// ));
    /// assert!(Schedule::new(vec![send(8), vec![]]).is_err()); // nobody receives it
    /// ```
    pub fn new(per_rank: Vec<Vec<Op>>) -> Result<Self> {
        let mut starts = Vec::with_capacity(per_rank.len() + 1);
        let mut ops = Vec::with_capacity(per_rank.iter().map(Vec::len).sum());
        starts.push(0);
        for rank_ops in per_rank {
            ops.extend(rank_ops);
            starts.push(ops.len());
        }
        Schedule::from_flat(ops, starts)
    }

    pub(crate) fn from_flat(mut ops: Vec<Op>, starts: Vec<usize>) -> Result<Self> {
        const CALL: &str = "sim::Schedule";
        let p = starts.len() - 1;
        if ops.len() >= NO_MATCH as usize || p > u32::MAX as usize {
            return Err(Error::invalid(
                CALL,
                format!(
                    "schedule too large: {} operations on {p} ranks (at most 2^32 - 1 each)",
                    ops.len()
                ),
            ));
        }
        let mut partner = vec![NO_MATCH; ops.len()];
        // The k-th send on channel (src, dst, tag) matches the k-th receive on it. Sorting the
        // sends and the receives by (channel, operation index) lines each channel's up in FIFO
        // order (an operation's index grows with its rank's program order); one merge pass
        // then pairs them. O(n log n), no hashing: 2^20 operations match in tens of ms.
        let key = |src: u32, dst: u32, tag: i32, i: usize| {
            (u128::from(src) << 96)
                | (u128::from(dst) << 64)
                | (u128::from(tag as u32) << 32)
                | i as u128
        };
        let channel = |k: u128| k >> 32;
        let index = |k: u128| (k as u32) as usize;
        let (mut sends, mut recvs) = (Vec::new(), Vec::new());
        for (r, window) in starts.windows(2).enumerate() {
            for (offset, op) in ops[window[0]..window[1]].iter().enumerate() {
                let i = window[0] + offset;
                match *op {
                    Op::Send { to, tag, .. } => {
                        if to as usize >= p {
                            return Err(Error::RankOutOfRange {
                                rank: to as usize,
                                size: p,
                            });
                        }
                        sends.push(key(r as u32, to, tag, i));
                    }
                    Op::Recv { from, tag, .. } => recvs.push(key(from, r as u32, tag, i)),
                    Op::Reduce { .. } | Op::Compute { .. } => {}
                }
            }
        }
        sends.sort_unstable();
        recvs.sort_unstable();
        let (mut a, mut b) = (0, 0);
        while a < sends.len() || b < recvs.len() {
            let send_channel = sends.get(a).map_or(u128::MAX, |&k| channel(k));
            let recv_channel = recvs.get(b).map_or(u128::MAX, |&k| channel(k));
            if send_channel < recv_channel {
                let (owner, s) = (owner_of(&starts, index(sends[a])), index(sends[a]));
                let Op::Send { to, tag, .. } = ops[s] else {
                    unreachable!("only sends are in the send list")
                };
                return Err(Error::invalid(
                    CALL,
                    format!("rank {owner} sends to rank {to} with tag {tag}, but no matching receive was recorded"),
                ));
            }
            let r = index(recvs[b]);
            let Op::Recv { from, tag, bytes } = ops[r] else {
                unreachable!("only receives are in the receive list")
            };
            if recv_channel < send_channel {
                let owner = owner_of(&starts, r);
                return Err(Error::invalid(
                    CALL,
                    format!("rank {owner} receives from rank {from} with tag {tag}, but no matching send was recorded"),
                ));
            }
            let s = index(sends[a]);
            let Op::Send { bytes: sent, .. } = ops[s] else {
                unreachable!("only sends are in the send list")
            };
            if sent > bytes {
                return Err(Error::Truncated {
                    needed: sent as usize,
                    capacity: bytes as usize,
                    source_rank: from as usize,
                    tag,
                });
            }
            ops[r] = Op::Recv {
                from,
                tag,
                bytes: sent,
            };
            partner[r] = s as u32;
            partner[s] = r as u32;
            a += 1;
            b += 1;
        }
        Ok(Schedule {
            ops,
            starts,
            partner,
        })
    }

    /// A schedule whose messages are already matched, as the run of a program matched them
    /// (`Universe::simulate`): `pairs` are (send, receive) indices into `ops`, rank r's
    /// operations being `ops[starts[r]..starts[r + 1]]`; every send and receive is in exactly
    /// one pair, and each receive's `bytes` is its message's.
    pub(crate) fn matched(
        ops: Vec<Op>,
        starts: Vec<usize>,
        pairs: &[(usize, usize)],
    ) -> Result<Self> {
        if ops.len() >= NO_MATCH as usize {
            return Err(Error::invalid(
                "Universe::simulate",
                format!(
                    "the program did {} operations; a simulation holds at most 2^32 - 1",
                    ops.len()
                ),
            ));
        }
        let mut partner = vec![NO_MATCH; ops.len()];
        for &(send, recv) in pairs {
            debug_assert!(
                matches!(ops[send], Op::Send { .. }) && matches!(ops[recv], Op::Recv { .. })
            );
            partner[send] = recv as u32;
            partner[recv] = send as u32;
        }
        Ok(Schedule {
            ops,
            starts,
            partner,
        })
    }

    /// Number of ranks.
    ///
    /// ```
    /// let s = rpar::sim::Reference::BinomialBcast.record(5, 8)?;
    /// assert_eq!(s.ranks(), 5);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ranks(&self) -> usize {
        self.starts.len() - 1
    }

    /// Rank `rank`'s operations, in order.
    ///
    /// # Panics
    ///
    /// If `rank >= self.ranks()`, like indexing a slice out of bounds.
    ///
    /// ```
    /// use rpar::sim::{Op, Reference};
    /// // binomial broadcast from rank 0 on 4 ranks: 0 sends to 2, then to 1; 2 passes on to 3
    /// let s = Reference::BinomialBcast.record(4, 8)?;
    /// let dests: Vec<u32> = s.rank_ops(0).iter().filter_map(|op| match *op {
    ///     Op::Send { to, .. } => Some(to),
    ///     _ => None,
    /// }).collect();
    /// assert_eq!(dests, [2, 1]);
    /// assert!(matches!(s.rank_ops(3), [Op::Recv { from: 2, .. }]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn rank_ops(&self, rank: usize) -> &[Op] {
        &self.ops[self.starts[rank]..self.starts[rank + 1]]
    }

    /// Number of messages (of sends).
    ///
    /// ```
    /// use rpar::sim::Reference;
    /// assert_eq!(Reference::RingAllgather.record(8, 64)?.messages(), 8 * 7); // p (p - 1)
    /// assert_eq!(Reference::BinomialBcast.record(8, 64)?.messages(), 7); // p - 1
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn messages(&self) -> usize {
        self.ops
            .iter()
            .filter(|op| matches!(op, Op::Send { .. }))
            .count()
    }

    /// Total bytes sent, over all messages.
    ///
    /// ```
    /// use rpar::sim::Reference;
    /// // recursive doubling: log2 p exchanges, (p - 1) m bytes sent by each rank
    /// assert_eq!(Reference::RecursiveDoublingAllgather.record(8, 64)?.bytes_sent(), 8 * 7 * 64);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn bytes_sent(&self) -> u64 {
        self.ops
            .iter()
            .map(|op| match op {
                Op::Send { bytes, .. } => *bytes,
                _ => 0,
            })
            .sum()
    }

    pub(crate) fn ops(&self) -> &[Op] {
        &self.ops
    }

    pub(crate) fn start(&self, rank: usize) -> usize {
        self.starts[rank]
    }

    /// The matched partner (send <-> receive) of operation `i`.
    pub(crate) fn partner(&self, i: usize) -> usize {
        self.partner[i] as usize
    }

    /// The rank that owns operation `i`.
    pub(crate) fn owner(&self, i: usize) -> usize {
        owner_of(&self.starts, i)
    }
}

fn owner_of(starts: &[usize], i: usize) -> usize {
    starts.partition_point(|&s| s <= i) - 1
}
