//! [`RankResult`] and [`RunResult`]: rank results that can cross processes. In-process the results of all ranks
//! simply come back to the caller; on the MPI transport each process ran one rank, so each sends
//! its result to the others, and every process gets the results of all ranks in rank order.

use crate::comm::Buffer;
use crate::datatype::Datatype;
use crate::{Comm, Error, Result};

/// The tag of result traffic, on the world communicator's collective context.
const TAG_RESULT: i32 = 9;

/// One rank's end of a result transfer to or from another rank (see [`RankResult`]).
#[derive(Debug)]
pub struct ResultLink<'a> {
    comm: &'a Comm,
    peer: usize,
}

impl ResultLink<'_> {
    #[cfg(any(feature = "mpi", test))]
    pub(crate) fn new(comm: &Comm, peer: usize) -> ResultLink<'_> {
        ResultLink { comm, peer }
    }

    /// Sends `data` (one part of a result) to the peer.
    pub fn send<B: Buffer + ?Sized>(&self, data: &B) -> Result<()> {
        let ctx = self.comm.collective_context();
        self.comm
            .send_in(ctx, data.as_elems(), self.peer, TAG_RESULT)
    }

    /// Receives the next part of the peer's result.
    pub fn recv<T: Datatype>(&self) -> Result<Vec<T>> {
        let ctx = self.comm.collective_context();
        Ok(self.comm.recv_in(ctx, self.peer, TAG_RESULT)?.0)
    }
}

/// What a rank's program may return: any `Send` type; with the `mpi` cargo feature, a `Send`
/// type that is also a [`RankResult`] (it must travel between processes).
#[cfg(not(feature = "mpi"))]
pub trait RunResult: Send {}

/// What a rank's program may return: any `Send` type; with the `mpi` cargo feature, a `Send`
/// type that is also a [`RankResult`] (it must travel between processes).
#[cfg(feature = "mpi")]
pub trait RunResult: Send + RankResult {}

#[cfg(not(feature = "mpi"))]
impl<T: Send> RunResult for T {}

#[cfg(feature = "mpi")]
impl<T: Send + RankResult> RunResult for T {}

/// A rank's result that can travel between processes, so that on the MPI transport every
/// process gets the results of all ranks (as the caller of an in-process run does).
///
/// Implemented for the basic types, arrays, `#[derive(Datatype)]` structs, `String`, `()`,
/// and `Vec`s, `Option`s and tuples (up to four) of results; for a type
/// of your own, send and receive its parts through the [`ResultLink`]. Only runs on MPI need it
/// (see [`RunResult`]).
///
/// ```
/// use rpar::{RankResult, ResultLink};
/// struct Histogram { bins: Vec<u64>, label: String }
/// impl RankResult for Histogram {
///     fn send_result(&self, link: &ResultLink<'_>) -> rpar::Result<()> {
///         self.bins.send_result(link)?;
///         self.label.send_result(link)
///     }
///     fn recv_result(link: &ResultLink<'_>) -> rpar::Result<Self> {
///         Ok(Histogram { bins: RankResult::recv_result(link)?, label: String::recv_result(link)? })
///     }
/// }
/// let h = rpar::run(2, |world| Ok(Histogram { bins: vec![world.rank() as u64], label: "x".into() }))?;
/// assert_eq!(h[1].bins, [1]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub trait RankResult: Sized {
    /// Sends this result to another rank.
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()>;

    /// Receives another rank's result.
    fn recv_result(link: &ResultLink<'_>) -> Result<Self>;

    /// Sends a slice of results (a `Vec<Self>` result): by default its length, then each in
    /// turn. [`Datatype`] values send the whole slice as one message instead.
    fn send_all(items: &[Self], link: &ResultLink<'_>) -> Result<()> {
        link.send_value(&(items.len() as u64))?;
        items.iter().try_for_each(|item| item.send_result(link))
    }

    /// Receives a slice sent by [`RankResult::send_all`].
    fn recv_all(link: &ResultLink<'_>) -> Result<Vec<Self>> {
        let n = link.recv_value::<u64>()?;
        (0..n).map(|_| Self::recv_result(link)).collect()
    }
}

impl ResultLink<'_> {
    /// Sends one value (the whole result, for a [`Datatype`]).
    pub fn send_value<T: Datatype>(&self, value: &T) -> Result<()> {
        self.send(std::slice::from_ref(value))
    }

    /// Receives one value sent by [`ResultLink::send_value`].
    pub fn recv_value<T: Datatype>(&self) -> Result<T> {
        self.recv::<T>()?
            .pop()
            .ok_or_else(|| Error::invalid("a rank result", "one value, got an empty message"))
    }
}

/// Results that are one [`Datatype`] value.
macro_rules! value_results {
    ($($t:ty),*) => {$(
        impl RankResult for $t {
            fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
                link.send_value(self)
            }
            fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
                link.recv_value()
            }
            fn send_all(items: &[Self], link: &ResultLink<'_>) -> Result<()> {
                link.send(items)
            }
            fn recv_all(link: &ResultLink<'_>) -> Result<Vec<Self>> {
                link.recv()
            }
        }
    )*};
}

value_results!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, bool, char
);

impl<T: Datatype, const N: usize> RankResult for [T; N] {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        link.send(&self[..])
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        let v = link.recv::<T>()?;
        let got = v.len();
        v.try_into().map_err(|_| {
            Error::invalid(
                "a rank result",
                format!("an array of {N}, got {got} elements"),
            )
        })
    }
    fn send_all(items: &[Self], link: &ResultLink<'_>) -> Result<()> {
        link.send(items)
    }
    fn recv_all(link: &ResultLink<'_>) -> Result<Vec<Self>> {
        link.recv()
    }
}

impl<T: RankResult> RankResult for Vec<T> {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        T::send_all(self, link)
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        T::recv_all(link)
    }
}

impl RankResult for () {
    fn send_result(&self, _: &ResultLink<'_>) -> Result<()> {
        Ok(())
    }
    fn recv_result(_: &ResultLink<'_>) -> Result<Self> {
        Ok(())
    }
}

impl RankResult for String {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        link.send(self.as_bytes())
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        String::from_utf8(link.recv::<u8>()?)
            .map_err(|_| Error::invalid("a String rank result", "UTF-8, got other bytes"))
    }
}

impl<T: RankResult> RankResult for Option<T> {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        link.send_value(&self.is_some())?;
        match self {
            Some(v) => v.send_result(link),
            None => Ok(()),
        }
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        match link.recv_value::<bool>()? {
            true => T::recv_result(link).map(Some),
            false => Ok(None),
        }
    }
}

/// Tuples of results, sent field by field.
macro_rules! tuple_results {
    ($($t:ident $i:tt),+) => {
        impl<$($t: RankResult),+> RankResult for ($($t,)+) {
            fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
                $(self.$i.send_result(link)?;)+
                Ok(())
            }
            fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
                Ok(($($t::recv_result(link)?,)+))
            }
        }
    };
}

tuple_results!(A 0);
tuple_results!(A 0, B 1);
tuple_results!(A 0, B 1, C 2);
tuple_results!(A 0, B 1, C 2, D 3);

/// The results of ranks `0..n` (the run's), in rank order, on every rank of `all` (the
/// run's ranks and perhaps more, which contribute `None`): each of the run's ranks sends its
/// result to every other rank.
#[cfg(any(feature = "mpi", test))]
pub(crate) fn exchange<R: RankResult>(all: &Comm, mine: Option<R>, n: usize) -> Result<Vec<R>> {
    let me = all.rank();
    if let Some(result) = &mine {
        for dest in (0..all.size()).filter(|&d| d != me) {
            result.send_result(&ResultLink::new(all, dest))?;
        }
    }
    // a rank of the run (me < n) has its own result; the others receive all n
    let mut mine = mine;
    (0..n)
        .map(|src| match mine.take_if(|_| src == me) {
            Some(own) => Ok(own),
            None => R::recv_result(&ResultLink::new(all, src)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_result_crosses_between_ranks() {
        type Mixed = (usize, Vec<f64>, Option<String>, Vec<(String, [u8; 2])>);
        let got = crate::run(4, |world| {
            let r = world.rank();
            let mine: Mixed = (
                r,
                vec![r as f64; r],
                (r != 1).then(|| format!("r{r}")),
                vec![(format!("{r}"), [r as u8; 2]); r],
            );
            exchange(&world, (r < 3).then_some(mine), 3)
        })
        .unwrap();
        let want: Vec<Mixed> = (0..3)
            .map(|r| {
                (
                    r,
                    vec![r as f64; r],
                    (r != 1).then(|| format!("r{r}")),
                    vec![(format!("{r}"), [r as u8; 2]); r],
                )
            })
            .collect();
        assert!(got.iter().all(|all| *all == want));
    }
}
