//! [`Recorder`]: a [`Channel`] that records instead of moving data, and [`record`], which runs an
//! algorithm once per rank to produce its [`Schedule`].
//!
//! Recording never blocks — a receive is written down and returns at once, leaving the buffer
//! untouched — so the ranks need not run concurrently: [`record`] runs rank 0's program to the
//! end, then rank 1's, and so on, in one thread, appending to one flat operation list. That
//! makes 65536 ranks as cheap as the operations they record (no threads, no synchronization;
//! p = 4096 with a logarithmic algorithm records in milliseconds).
//!
//! The price: an algorithm sees no data, so it must not branch on received values, and
//! `recv_vec` returns an empty vector (the message's size is filled in by matching). Every
//! standard collective qualifies: their control flow depends only on rank, size and sizes.

use std::cell::RefCell;

use super::schedule::{Op, Schedule, UNKNOWN_BYTES};
use crate::collective::Channel;
use crate::comm::TAG_UB;
use crate::datatype::Datatype;
use crate::{Error, Result};

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
    ops: RefCell<Vec<Op>>,
}

impl Recorder {
    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    fn check(&self, peer: usize, tag: i32) -> Result<u32> {
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

    /// Records a send of `bytes` bytes to `dest` with `tag`.
    pub fn send_bytes(&self, dest: usize, tag: i32, bytes: usize) -> Result<()> {
        let to = self.check(dest, tag)?;
        self.ops.borrow_mut().push(Op::Send {
            to,
            tag,
            bytes: bytes as u64,
        });
        Ok(())
    }

    /// Records a receive from `source` with `tag` into a buffer of `bytes` bytes.
    pub fn recv_bytes(&self, source: usize, tag: i32, bytes: usize) -> Result<()> {
        self.recv_op(source, tag, bytes as u64)
    }

    fn recv_op(&self, source: usize, tag: i32, bytes: u64) -> Result<()> {
        let from = self.check(source, tag)?;
        self.ops.borrow_mut().push(Op::Recv { from, tag, bytes });
        Ok(())
    }

    /// Records a local reduction of `bytes` bytes.
    pub fn reduce_bytes(&self, bytes: usize) {
        self.ops.borrow_mut().push(Op::Reduce {
            bytes: bytes as u64,
        });
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

    /// Records the receive, of a size matching will fill in, and returns an empty vector.
    fn recv_vec<T: Datatype>(&self, source: usize, tag: i32) -> Result<Vec<T>> {
        self.recv_op(source, tag, UNKNOWN_BYTES)?;
        Ok(Vec::new())
    }

    fn sendrecv<T: Datatype, U: Datatype>(
        &self,
        send: &[T],
        dest: usize,
        send_tag: i32,
        recv: &mut [U],
        source: usize,
        recv_tag: i32,
    ) -> Result<usize> {
        Channel::send(self, send, dest, send_tag)?;
        Channel::recv_into(self, recv, source, recv_tag)
    }

    fn local_reduction(&self, bytes: usize) {
        self.reduce_bytes(bytes);
    }
}

/// Records the schedule of `program` on `p` ranks: runs it once per rank, rank 0 first, each
/// time on a [`Recorder`] for that rank, and matches the receives to the sends.
///
/// Errors: `p == 0`; an error of the program (as [`Error::RankFailed`] naming the rank); a
/// receive without a send or the other way round; a message larger than its receive buffer.
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
    };
    let mut starts = Vec::with_capacity(p + 1);
    starts.push(0);
    for rank in 0..p {
        recorder.rank = rank;
        program(&recorder).map_err(|e| Error::RankFailed {
            rank,
            source: Box::new(e),
        })?;
        starts.push(recorder.ops.borrow().len());
    }
    Schedule::from_flat(recorder.ops.into_inner(), starts)
}
