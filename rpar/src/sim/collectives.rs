//! The library's own collective algorithms in recording mode: [`record_collective`] runs
//! rpar's real `bcast`, `reduce`, `allreduce`, `allgather` and `alltoall` code (the very
//! functions a `Comm` runs) on [`Recorder`]s, so their schedules can be simulated and costed
//! beside the closed forms.

use super::recorder::{record, Recorder};
use super::Schedule;
use crate::collective::{
    allgather_algorithm, allreduce_algorithm, alltoall_algorithm, bcast_algorithm,
    reduce_algorithm, Named,
};
use crate::{Allgather, Allreduce, Alltoall, Bcast, Reduce, Result, Sum};

/// One of rpar's collectives with a chosen algorithm, for [`record_collective`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    /// `Comm::bcast_with` from rank 0.
    Bcast(Bcast),
    /// `Comm::reduce_with` (sum) to rank 0.
    Reduce(Reduce),
    /// `Comm::allreduce_with` (sum).
    Allreduce(Allreduce),
    /// `Comm::allgather_with`.
    Allgather(Allgather),
    /// `Comm::alltoall_with`.
    Alltoall(Alltoall),
}

impl Named for Recorder {
    fn comm_rank(&self, member: usize) -> usize {
        member
    }
}

/// Records `collective` on `p` ranks with `bytes` bytes per rank (for alltoall: per
/// destination block), running the same algorithm code as [`Comm`](crate::Comm).
///
/// ```
/// use rpar::sim::{record_collective, Collective};
/// use rpar::Allgather;
/// let ring = record_collective(8, 64, Collective::Allgather(Allgather::Ring))?;
/// assert_eq!(ring.messages(), 8 * 7); // p - 1 steps, one message per rank each
/// let doubling = record_collective(8, 64, Collective::Allgather(Allgather::RecursiveDoubling))?;
/// assert_eq!(doubling.messages(), 8 * 3); // log2 p steps
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
    }
}
