//! [`Comm::using`]: how a call runs is a value, not a twin method. A collective's algorithm is
//! one the communicator carries for the calls made through it —
//! `world.using(Allreduce::Ring).allreduce(…)` runs the ring where `world.allreduce(…)` lets
//! `Auto` choose (as MPICH's `MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM` fixes the algorithm for a
//! whole run, but per call); selection, tracing and the mismatch checks see the chosen
//! algorithm exactly as they see `Auto`'s choice. A send mode is the other kind of choice:
//! `world.using(SendMode::Synchronous).send(…)` is MPI_Ssend (see [`ModeSends`]).

use super::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Scan, Scatter,
    Shift,
};
use crate::comm::{ModeSends, SendMode};
use crate::Comm;

/// The algorithm each collective family runs on a communicator: `Auto` everywhere unless a
/// [`Comm::using`] in force says otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Choices {
    barrier: Barrier,
    bcast: Bcast,
    gather: Gather,
    scatter: Scatter,
    allgather: Allgather,
    alltoall: Alltoall,
    reduce: Reduce,
    allreduce: Allreduce,
    reduce_scatter: ReduceScatter,
    scan: Scan,
    shift: Shift,
}

mod sealed {
    /// Only rpar's algorithm enums choose an algorithm.
    pub trait Sealed {
        /// Records this algorithm as its family's choice.
        fn choose(self, choices: &mut super::Choices);
        /// Its family's choice in `choices`.
        fn chosen(choices: &super::Choices) -> Self;
    }
}

/// An algorithm enum of a collective family ([`Bcast`], [`Allreduce`], …), a [`Choice`] for
/// [`Comm::using`]. Sealed: rpar's enums are the only ones.
pub trait CollectiveAlgorithm: sealed::Sealed + Copy + std::fmt::Debug {}

/// What [`Comm::using`] takes: a collective family's algorithm (any [`CollectiveAlgorithm`]),
/// giving a [`Using`], or a [`SendMode`], giving the [`ModeSends`] of that mode.
pub trait Choice {
    /// The communicator with this choice made.
    type Chosen<'c>;
    /// Makes the choice on `comm` (what [`Comm::using`] does).
    fn apply(self, comm: &Comm) -> Self::Chosen<'_>;
}

impl<A: CollectiveAlgorithm> Choice for A {
    type Chosen<'c> = Using<'c>;
    fn apply(self, comm: &Comm) -> Using<'_> {
        let before = comm.choices.get();
        let mut now = before;
        self.choose(&mut now);
        comm.choices.set(now);
        Using { comm, before }
    }
}

impl Choice for SendMode {
    type Chosen<'c> = ModeSends<'c>;
    fn apply(self, comm: &Comm) -> ModeSends<'_> {
        ModeSends::new(comm, self)
    }
}

macro_rules! choices {
    ($($family:ident . $field:ident),* $(,)?) => {$(
        impl sealed::Sealed for $family {
            fn choose(self, choices: &mut Choices) {
                choices.$field = self;
            }
            fn chosen(choices: &Choices) -> Self {
                choices.$field
            }
        }
        impl CollectiveAlgorithm for $family {}
    )*};
}

choices!(
    Barrier.barrier,
    Bcast.bcast,
    Gather.gather,
    Scatter.scatter,
    Allgather.allgather,
    Alltoall.alltoall,
    Reduce.reduce,
    Allreduce.allreduce,
    ReduceScatter.reduce_scatter,
    Scan.scan,
    Shift.shift,
);

/// A communicator with an algorithm chosen for one collective family, from
/// [`Comm::using`]: it is the communicator (it dereferences to [`Comm`]), and the calls made
/// through it while it lives run that algorithm. Dropping it restores the choice before it.
#[derive(Debug)]
#[must_use = "the algorithm is chosen only for calls made through this value"]
pub struct Using<'c> {
    comm: &'c Comm,
    before: Choices,
}

impl std::ops::Deref for Using<'_> {
    type Target = Comm;
    fn deref(&self) -> &Comm {
        self.comm
    }
}

impl Drop for Using<'_> {
    fn drop(&mut self) {
        self.comm.choices.set(self.before);
    }
}

impl Comm {
    /// This communicator with a choice made for the calls made through the returned value.
    ///
    /// An algorithm (a [`CollectiveAlgorithm`]) is chosen for the collective calls of its
    /// family; the returned [`Using`] dereferences to the communicator, the other families keep
    /// their choice, and the choice ends when the value drops (MPICH fixes an algorithm with
    /// `MPIR_CVAR_<OP>_INTRA_ALGORITHM`, for the whole run). Every rank must choose the same
    /// algorithm for a call. Choices nest: `world.using(a).using(b)` has both.
    ///
    /// A [`SendMode`] gives the sends of that mode ([`ModeSends`]):
    /// `world.using(SendMode::Synchronous).send(&x, dest, tag)` is MPI_Ssend, `.isend`
    /// MPI_Issend, `.send_init` MPI_Ssend_init.
    ///
    /// ```
    /// use rpar::{Allreduce, Bcast, Sum};
    /// let got = rpar::run(4, |world| {
    ///     let ring = world.using(Allreduce::Ring).allreduce(&[world.rank() as u32, 1][..], Sum)?;
    ///     let binomial = world.using(Bcast::Binomial);
    ///     let tuned = binomial.using(Allreduce::RecursiveDoubling);
    ///     let mut x = [world.rank() as u8];
    ///     tuned.bcast(&mut x[..], 2)?;                        // binomial
    ///     let sum = tuned.allreduce(&(x[0] as u32), Sum)?;    // recursive doubling
    ///     Ok((ring, sum))
    /// })?;
    /// assert_eq!(got, vec![(vec![6, 4], 8); 4]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn using<C: Choice>(&self, choice: C) -> C::Chosen<'_> {
        choice.apply(self)
    }

    /// The algorithm chosen for the family `A` (`Auto` unless a [`Comm::using`] is in force).
    #[inline]
    pub(crate) fn chosen<A: CollectiveAlgorithm>(&self) -> A {
        A::chosen(&self.choices.get())
    }
}
