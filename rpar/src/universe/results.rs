//! [`RankResult`] and [`RunResult`]: rank results that can cross processes. In-process the results of all ranks
//! simply come back to the caller; on the MPI transport each process ran one rank, so each sends
//! its result to the others, and every process gets the results of all ranks in rank order.

use crate::comm::Buffer;
use crate::datatype::Datatype;
use crate::{Comm, Error, Result};

/// The tag of result traffic, on the world communicator's collective context.
const TAG_RESULT: i32 = 9;

/// One rank's end of a result transfer to or from another rank (see [`RankResult`]): rpar hands
/// one to [`RankResult::send_result`] and [`RankResult::recv_result`]; a program never makes
/// one itself. Only runs on the MPI transport use it — in-process, results come back to the
/// caller directly — so the examples here show implementations, which an in-process run
/// compiles but does not call.
///
/// The parts of a result travel in order: receive them in the order they were sent.
///
/// ```
/// use rpar::{RankResult, ResultLink};
/// struct Sample { id: u32, values: Vec<f64> }
/// impl RankResult for Sample {
///     fn send_result(&self, link: &ResultLink<'_>) -> rpar::Result<()> {
///         link.send_value(&self.id)?;
///         link.send(&self.values[..])
///     }
///     fn recv_result(link: &ResultLink<'_>) -> rpar::Result<Self> {
///         let id = link.recv_value()?;
///         Ok(Sample { id, values: link.recv()? })
///     }
/// }
/// let samples = rpar::run(2, |world| Ok(Sample { id: world.rank() as u32, values: vec![0.5; 2] }))?;
/// assert_eq!((samples[1].id, samples[1].values.len()), (1, 2));
/// # Ok::<(), rpar::Error>(())
/// ```
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

    /// Sends `data` (one part of a result: a slice of [`Datatype`]s) to the peer as one message.
    ///
    /// # Errors
    ///
    /// Those of a send (see [`Comm::send`]); [`Error::Aborted`] if the run is aborted.
    ///
    /// ```
    /// use rpar::{RankResult, ResultLink};
    /// struct Histogram([u64; 8]);
    /// impl RankResult for Histogram {
    ///     fn send_result(&self, link: &ResultLink<'_>) -> rpar::Result<()> {
    ///         link.send(&self.0[..])
    ///     }
    ///     fn recv_result(link: &ResultLink<'_>) -> rpar::Result<Self> {
    ///         let bins: Vec<u64> = link.recv()?;
    ///         bins.try_into().map(Histogram).map_err(|_| rpar::Error::user("expected 8 bins"))
    ///     }
    /// }
    /// let h = rpar::run(2, |world| Ok(Histogram([world.rank() as u64; 8])))?;
    /// assert_eq!(h[1].0.iter().sum::<u64>(), 8);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn send<B: Buffer + ?Sized>(&self, data: &B) -> Result<()> {
        let ctx = self.comm.collective_context();
        self.comm
            .send_in(ctx, data.as_elems(), self.peer, TAG_RESULT)
    }

    /// Receives the next part of the peer's result, as sent by [`ResultLink::send`], whatever
    /// its length.
    ///
    /// # Errors
    ///
    /// Those of a receive (see [`Comm::recv`]): [`Error::TypeMismatch`] if the part was
    /// sent with another element type; [`Error::Aborted`] if the run is aborted.
    ///
    /// ```
    /// use rpar::{RankResult, ResultLink};
    /// struct Path { nodes: Vec<u32>, cost: Vec<f32> }
    /// impl RankResult for Path {
    ///     fn send_result(&self, link: &ResultLink<'_>) -> rpar::Result<()> {
    ///         link.send(&self.nodes[..])?;
    ///         link.send(&self.cost[..])
    ///     }
    ///     fn recv_result(link: &ResultLink<'_>) -> rpar::Result<Self> {
    ///         let nodes = link.recv::<u32>()?; // first part first
    ///         Ok(Path { nodes, cost: link.recv::<f32>()? })
    ///     }
    /// }
    /// let paths = rpar::run(2, |world| Ok(Path { nodes: vec![0, 1], cost: vec![world.rank() as f32] }))?;
    /// assert_eq!(paths[1].cost, [1.0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn recv<T: Datatype>(&self) -> Result<Vec<T>> {
        let ctx = self.comm.collective_context();
        Ok(self.comm.recv_in(ctx, self.peer, TAG_RESULT)?.0)
    }
}

/// What a rank's program may return: any `Send` type; with the `mpi` cargo feature, a `Send`
/// type that is also a [`RankResult`] (it must travel between processes). Implemented
/// automatically; name it as the bound of code generic over a run's result.
///
/// ```
/// fn on_every_rank<R: rpar::RunResult>(n: usize, f: impl Fn(usize) -> R + Sync) -> rpar::Result<Vec<R>> {
///     rpar::run(n, |world| Ok(f(world.rank())))
/// }
/// assert_eq!(on_every_rank(3, |r| r * 10)?, vec![0, 10, 20]);
/// assert_eq!(on_every_rank(2, |r| format!("rank {r}"))?, ["rank 0", "rank 1"]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[cfg(not(feature = "mpi"))]
pub trait RunResult: Send {}

/// What a rank's program may return: any `Send` type; with the `mpi` cargo feature, a `Send`
/// type that is also a [`RankResult`] (it must travel between processes). Implemented
/// automatically; name it as the bound of code generic over a run's result.
///
/// ```
/// fn on_every_rank<R: rpar::RunResult>(n: usize, f: impl Fn(usize) -> R + Sync) -> rpar::Result<Vec<R>> {
///     rpar::run(n, |world| Ok(f(world.rank())))
/// }
/// assert_eq!(on_every_rank(3, |r| r * 10)?, vec![0, 10, 20]);
/// assert_eq!(on_every_rank(2, |r| format!("rank {r}"))?, ["rank 0", "rank 1"]);
/// # Ok::<(), rpar::Error>(())
/// ```
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
    /// Sends this result to another rank, in parts through `link` (see the
    /// [trait's example](RankResult)).
    ///
    /// # Errors
    ///
    /// Those of [`ResultLink::send`].
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()>;

    /// Receives another rank's result, its parts in the order
    /// [`send_result`](RankResult::send_result) sent them (see the [trait's example](RankResult)).
    ///
    /// # Errors
    ///
    /// Those of [`ResultLink::recv`], and any the implementation raises for parts that
    /// do not fit together.
    fn recv_result(link: &ResultLink<'_>) -> Result<Self>;

    /// Sends a slice of results (a `Vec<Self>` result): by default its length, then each in
    /// turn. [`Datatype`] values send the whole slice as one message instead.
    ///
    /// Override it (with [`recv_all`](RankResult::recv_all)) to send many results in fewer
    /// messages; the default serves every type:
    ///
    /// ```
    /// use rpar::{RankResult, ResultLink};
    /// #[derive(Clone)]
    /// struct Word(String);
    /// impl RankResult for Word {
    ///     fn send_result(&self, link: &ResultLink<'_>) -> rpar::Result<()> { self.0.send_result(link) }
    ///     fn recv_result(link: &ResultLink<'_>) -> rpar::Result<Self> { String::recv_result(link).map(Word) }
    /// }
    /// // `Vec<Word>` is a rank result through the default send_all / recv_all
    /// let words = rpar::run(2, |world| Ok(vec![Word("hi".into()); world.rank() + 1]))?;
    /// assert_eq!(words[1].len(), 2);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`ResultLink::send`].
    fn send_all(items: &[Self], link: &ResultLink<'_>) -> Result<()> {
        link.send_value(&(items.len() as u64))?;
        items.iter().try_for_each(|item| item.send_result(link))
    }

    /// Receives a slice sent by [`RankResult::send_all`] (see its example).
    ///
    /// # Errors
    ///
    /// Those of [`ResultLink::recv`].
    fn recv_all(link: &ResultLink<'_>) -> Result<Vec<Self>> {
        let n = link.recv_value::<u64>()?;
        (0..n).map(|_| Self::recv_result(link)).collect()
    }
}

impl ResultLink<'_> {
    /// Sends one value (the whole result, for a [`Datatype`]) as one message.
    ///
    /// # Errors
    ///
    /// Those of [`ResultLink::send`].
    ///
    /// ```
    /// use rpar::{RankResult, ResultLink};
    /// struct Timing { rank: usize, seconds: f64 }
    /// impl RankResult for Timing {
    ///     fn send_result(&self, link: &ResultLink<'_>) -> rpar::Result<()> {
    ///         link.send_value(&self.rank)?;
    ///         link.send_value(&self.seconds)
    ///     }
    ///     fn recv_result(link: &ResultLink<'_>) -> rpar::Result<Self> {
    ///         Ok(Timing { rank: link.recv_value()?, seconds: link.recv_value()? })
    ///     }
    /// }
    /// let t = rpar::run(3, |world| Ok(Timing { rank: world.rank(), seconds: 0.25 }))?;
    /// assert_eq!(t.iter().map(|t| t.rank).collect::<Vec<_>>(), [0, 1, 2]);
    /// assert_eq!(t[2].seconds, 0.25);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn send_value<T: Datatype>(&self, value: &T) -> Result<()> {
        self.send(std::slice::from_ref(value))
    }

    /// Receives one value sent by [`ResultLink::send_value`].
    ///
    /// # Errors
    ///
    /// Those of [`ResultLink::recv`], and [`Error::InvalidArgument`] if the message
    /// holds no value.
    ///
    /// ```
    /// use rpar::{RankResult, ResultLink};
    /// struct Verdict { passed: bool, worst: f64 }
    /// impl RankResult for Verdict {
    ///     fn send_result(&self, link: &ResultLink<'_>) -> rpar::Result<()> {
    ///         link.send_value(&(self.passed, self.worst))
    ///     }
    ///     fn recv_result(link: &ResultLink<'_>) -> rpar::Result<Self> {
    ///         let (passed, worst) = link.recv_value::<(bool, f64)>()?;
    ///         Ok(Verdict { passed, worst })
    ///     }
    /// }
    /// let v = rpar::run(2, |world| Ok(Verdict { passed: world.rank() == 0, worst: 1e-9 }))?;
    /// assert!(v[0].passed && !v[1].passed);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn recv_value<T: Datatype>(&self) -> Result<T> {
        self.recv::<T>()?
            .pop()
            .ok_or_else(|| Error::invalid("a rank result", "one value, got an empty message"))
    }
}

/// Results that are one [`Datatype`] value: `value_results!(u8, f64)`, or for a generic type
/// `value_results!(@one [T] Complex<T> [Complex<T>: Datatype])` (its generics, the type, its
/// bounds).
macro_rules! value_results {
    ($($t:ty),*) => {$(
        value_results!(@one [] $t []);
    )*};
    (@one [$($generics:tt)*] $t:ty [$($bounds:tt)*]) => {
        impl<$($generics)*> $crate::RankResult for $t where $($bounds)* {
            fn send_result(&self, link: &$crate::ResultLink<'_>) -> $crate::Result<()> {
                link.send_value(self)
            }
            fn recv_result(link: &$crate::ResultLink<'_>) -> $crate::Result<Self> {
                link.recv_value()
            }
            fn send_all(items: &[Self], link: &$crate::ResultLink<'_>) -> $crate::Result<()> {
                link.send(items)
            }
            fn recv_all(link: &$crate::ResultLink<'_>) -> $crate::Result<Vec<Self>> {
                link.recv()
            }
        }
    };
}
pub(crate) use value_results;

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
