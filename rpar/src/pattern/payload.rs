//! [`Payload`]: what a task farm can ship as a task or a result — a single [`Datatype`] or a
//! `Vec` of them — and how a batch of them travels: as one message (a `Datatype`), or as one
//! message of lengths and one of the concatenated elements (a `Vec`).

use crate::{Comm, Datatype, Error, Result};

/// A value a task farm sends as a task or a result.
///
/// Implemented for every [`Datatype`] (a batch is one message, moved without a copy) and for
/// `Vec<T>` of a `Datatype` (a batch is two messages: the lengths, then all elements in one
/// piece). Implement it for a type of your own to farm out, say, a struct holding a `Vec`: send
/// a batch with a fixed number of messages on `tag` and receive them back in the same order.
///
/// ```
/// use rpar::pattern::Payload;
///
/// let got = rpar::run(2, |world| {
///     if world.rank() == 0 {
///         Vec::<u16>::send_batch(&world, vec![vec![1, 2], vec![], vec![3]], 1, 0)?;
///         Ok(vec![])
///     } else {
///         Vec::<u16>::recv_batch(&world, 3, 0, 0)
///     }
/// })?;
/// assert_eq!(got[1], vec![vec![1, 2], vec![], vec![3]]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub trait Payload: Sized + Send + 'static {
    /// Sends `items` to rank `dest` of `comm` with `tag` (a fixed number of MPI_Send calls).
    /// See the [trait's example](Payload).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::send`] of a `Vec`: [`Error::RankOutOfRange`] for a bad `dest`,
    /// [`Error::InvalidTag`] for a bad tag, [`Error::Aborted`] if the run is aborted.
    fn send_batch(comm: &Comm, items: Vec<Self>, dest: usize, tag: i32) -> Result<()>;

    /// Receives a batch of `count` items that [`Payload::send_batch`] sent from `source` with
    /// `tag`. See the [trait's example](Payload).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the messages do not hold exactly `count` items;
    /// those of [`Comm::recv`] ([`Error::TypeMismatch`] for messages of another element type,
    /// [`Error::Aborted`] if the run is aborted).
    fn recv_batch(comm: &Comm, count: usize, source: usize, tag: i32) -> Result<Vec<Self>>;
}

/// The error of a batch whose size is not the announced one.
fn wrong_count(what: &str, expected: usize, got: usize) -> Error {
    Error::invalid(
        "Payload::recv_batch",
        format!("expected a batch of {expected} {what}, the messages held {got}"),
    )
}

impl<T: Datatype> Payload for T {
    fn send_batch(comm: &Comm, items: Vec<Self>, dest: usize, tag: i32) -> Result<()> {
        comm.send(items, dest, tag)
    }

    fn recv_batch(comm: &Comm, count: usize, source: usize, tag: i32) -> Result<Vec<Self>> {
        let (items, _) = comm.recv::<T>(source, tag)?;
        if items.len() != count {
            return Err(wrong_count("values", count, items.len()));
        }
        Ok(items)
    }
}

impl<T: Datatype> Payload for Vec<T> {
    fn send_batch(comm: &Comm, items: Vec<Self>, dest: usize, tag: i32) -> Result<()> {
        let lengths: Vec<u64> = items.iter().map(|v| v.len() as u64).collect();
        comm.send(lengths, dest, tag)?;
        comm.send(items.concat(), dest, tag)
    }

    fn recv_batch(comm: &Comm, count: usize, source: usize, tag: i32) -> Result<Vec<Self>> {
        let (lengths, _) = comm.recv::<u64>(source, tag)?;
        if lengths.len() != count {
            return Err(wrong_count("vectors", count, lengths.len()));
        }
        let (flat, _) = comm.recv::<T>(source, tag)?;
        let total: u64 = lengths.iter().sum();
        if total != flat.len() as u64 {
            return Err(wrong_count("elements in all", total as usize, flat.len()));
        }
        let mut rest = &flat[..];
        Ok(lengths
            .iter()
            .map(|&n| {
                let (head, tail) = rest.split_at(n as usize);
                rest = tail;
                head.to_vec()
            })
            .collect())
    }
}
