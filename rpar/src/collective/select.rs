//! How `Auto` becomes an algorithm, the same way for every family: [`resolve`] layers the
//! in-process rule (the family's `SharedMemory` algorithm where the ranks share an arena) on top
//! of the family's message-passing rule, its public `select(ranks, bytes, commutative)` (the
//! table under "Default algorithms" in the crate root, `lib.rs`). The MPI transport's own
//! collectives, which `Auto` runs before either rule where MPI has one, are picked by each
//! `Comm` form itself.
//!
//! What a trace shows as a call's algorithm is its [`Label`]: the call's span opens with the
//! algorithm asked for, and the code that runs one reports it (`Channel::runs`: each family's
//! dispatch to its message-passing algorithms, each shared-memory algorithm, and each `Comm`
//! form where MPI's own collective ran, as [`Native`]), so that the span shows what ran.

use super::Channel;
use super::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Scan, Scatter,
    Shift,
};

/// What a trace shows as a collective call's algorithm: an algorithm enum by its variant's
/// name, MPI's own collective as `Mpi` ([`Native`]), or the fixed name of a call that has one
/// algorithm only (`split`: `GatherAtRank0`). A report of an algorithm reaches the open spans of
/// its [`Label::Family`].
pub(crate) trait Label: Copy + 'static {
    /// The algorithm enum of the family (for a fixed name, `&str`).
    type Family: 'static;
    /// The name shown.
    fn label(self) -> String;
    /// Whether a call with this algorithm may run MPI's own collective (`Auto`, on the MPI
    /// transport), whose messages carry nothing of rpar's: the processes then compare their
    /// calls before it runs (`NativeComm::note_call`). rpar's own algorithms carry the call in
    /// every message, and a receiver checks it.
    fn may_run_mpi(self) -> bool {
        false
    }
}

impl Label for &'static str {
    type Family = &'static str;
    fn label(self) -> String {
        self.to_string()
    }
}

/// MPI's own collective (`MPI_Allreduce`, …), which `Auto` runs on the MPI transport where MPI
/// has one, as an algorithm of the family `A`: labelled `Mpi`.
#[derive(Debug)]
pub(crate) struct Native<A>(std::marker::PhantomData<A>);

impl<A> Clone for Native<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for Native<A> {}

impl<A: Algorithm> Native<A> {
    /// MPI's own collective of family `A`.
    pub(crate) const fn of() -> Self {
        Native(std::marker::PhantomData)
    }
}

impl<A: Algorithm> Label for Native<A> {
    type Family = A;
    fn label(self) -> String {
        "Mpi".to_string()
    }
    fn may_run_mpi(self) -> bool {
        true
    }
}

/// An algorithm enum: its `Auto`, its shared-memory algorithm if the family has one, and its
/// message-passing rule.
pub(crate) trait Algorithm: Label<Family = Self> + PartialEq + std::fmt::Debug {
    /// The variant that lets the library choose.
    const AUTO: Self;
    /// The family's shared-memory algorithm (`None` for the families without one).
    const SHARED: Option<Self>;
    /// The family's public `select`: the message-passing algorithm for `ranks` ranks, `bytes`
    /// bytes (as the family's table defines them) and an operator that is `commutative` or not.
    fn rule(ranks: usize, bytes: usize, commutative: bool) -> Self;
}

/// The algorithm a call runs for `algorithm`: an explicit message-passing algorithm as chosen;
/// `Auto` the shared-memory algorithm where `shared` (the ranks share memory, the element type
/// fits the arena and the form has one) and the family's `select` elsewhere; an explicit
/// `SharedMemory` where it cannot run, `select`'s choice as well. The result is the shared-memory
/// algorithm only if `shared` holds.
pub(crate) fn resolve<A: Algorithm>(
    algorithm: A,
    shared: bool,
    ranks: usize,
    bytes: usize,
    commutative: bool,
) -> A {
    let is_shared = A::SHARED == Some(algorithm);
    if algorithm != A::AUTO && !is_shared {
        return algorithm;
    }
    match A::SHARED {
        Some(shm) if shared => shm,
        _ => A::rule(ranks, bytes, commutative),
    }
}

/// [`resolve`] on ranks that share no memory (a recording, an MPI rank, a v-form): `Auto` and
/// `SharedMemory` run the family's `select`.
pub(crate) fn message_passing<A: Algorithm>(
    algorithm: A,
    ranks: usize,
    bytes: usize,
    commutative: bool,
) -> A {
    resolve(algorithm, false, ranks, bytes, commutative)
}

/// What a family's dispatch on `ch` runs for `algorithm`: [`message_passing`] for `ch`'s ranks,
/// reported as the call's algorithm (`Channel::runs`).
pub(crate) fn dispatched<C: Channel, A: Algorithm>(
    ch: &C,
    algorithm: A,
    bytes: usize,
    commutative: bool,
) -> A {
    ch.runs(message_passing(algorithm, ch.size(), bytes, commutative))
}

macro_rules! algorithms {
    (@shared $name:ident) => { None };
    (@shared $name:ident $shm:ident) => { Some($name::$shm) };
    ($($name:ident $(: $shm:ident)?),* $(,)?) => {$(
        impl Label for $name {
            type Family = $name;
            fn label(self) -> String {
                format!("{self:?}")
            }
            fn may_run_mpi(self) -> bool {
                self == $name::Auto
            }
        }

        impl Algorithm for $name {
            const AUTO: Self = $name::Auto;
            const SHARED: Option<Self> = algorithms!(@shared $name $($shm)?);
            fn rule(ranks: usize, bytes: usize, commutative: bool) -> Self {
                $name::select(ranks, bytes, commutative)
            }
        }
    )*};
}

algorithms!(
    Barrier: SharedMemory,
    Bcast: SharedMemory,
    Gather,
    Scatter,
    Allgather: SharedMemory,
    Alltoall: SharedMemory,
    Reduce: SharedMemory,
    Allreduce: SharedMemory,
    ReduceScatter,
    Scan,
    Shift,
);

#[cfg(test)]
mod tests {
    //! The boundaries of every row of the default table ("Default algorithms" in `lib.rs`).

    use super::*;

    const KIB: usize = 1024;

    #[test]
    fn auto_takes_shared_memory_in_process_and_select_elsewhere() {
        assert_eq!(resolve(Bcast::Auto, true, 8, 8, true), Bcast::SharedMemory);
        assert_eq!(resolve(Bcast::Auto, false, 8, 8, true), Bcast::Binomial);
        // an explicit SharedMemory where it cannot run: the message-passing default
        assert_eq!(
            resolve(Bcast::SharedMemory, false, 2, 8, true),
            Bcast::Linear
        );
        // an explicit algorithm runs as chosen, shared memory or not
        assert_eq!(resolve(Bcast::Torus, true, 8, 8, true), Bcast::Torus);
        // families without a shared-memory algorithm ignore `shared`
        assert_eq!(
            resolve(Scan::Auto, true, 16, 8, true),
            Scan::RecursiveDoubling
        );
        assert_eq!(
            message_passing(Allreduce::SharedMemory, 4, 8, false),
            Allreduce::RecursiveDoubling
        );
    }

    #[test]
    fn barrier_rule() {
        for (p, want) in [
            (1, Barrier::Central),
            (2, Barrier::Central),
            (3, Barrier::Dissemination),
            (15, Barrier::Dissemination),
            (16, Barrier::Central),
        ] {
            assert_eq!(Barrier::select(p, 0, true), want, "p = {p}");
            assert_eq!(
                Barrier::select(p, 1 << 20, false),
                want,
                "bytes are ignored"
            );
        }
    }

    #[test]
    fn bcast_rule() {
        assert_eq!(Bcast::select(1, 8, true), Bcast::Linear);
        assert_eq!(Bcast::select(2, 1 << 20, true), Bcast::Linear);
        assert_eq!(Bcast::select(3, 8, true), Bcast::Binomial);
        assert_eq!(Bcast::select(64, 1 << 20, false), Bcast::Binomial);
    }

    #[test]
    fn gather_and_scatter_rules() {
        assert_eq!(Gather::select(2, 0, true), Gather::Linear);
        assert_eq!(Gather::select(1024, 1 << 20, true), Gather::Linear);
        assert_eq!(Scatter::select(8, 1 << 20, true), Scatter::Linear);
        assert_eq!(Scatter::select(9, 8, true), Scatter::Binomial);
    }

    #[test]
    fn allgather_rule() {
        // the result p * m against 64 KiB, then the power of two
        assert_eq!(Allgather::select(8, 8 * KIB - 1, true), Allgather::Ring);
        assert_eq!(
            Allgather::select(8, 8 * KIB, true),
            Allgather::RecursiveDoubling
        );
        assert_eq!(Allgather::select(6, 10922, true), Allgather::Ring); // 65532 bytes
        assert_eq!(Allgather::select(6, 10923, true), Allgather::Torus); // 65538 bytes
        assert_eq!(
            Allgather::select(1, 64 * KIB, true),
            Allgather::RecursiveDoubling
        );
        assert_eq!(Allgather::select(3, usize::MAX, true), Allgather::Torus);
    }

    #[test]
    fn alltoall_rule() {
        assert_eq!(Alltoall::select(16, 256, true), Alltoall::Bruck);
        assert_eq!(Alltoall::select(16, 257, true), Alltoall::Linear);
        assert_eq!(Alltoall::select(15, 256, true), Alltoall::Linear);
        assert_eq!(Alltoall::select(4, 32 * KIB, true), Alltoall::Linear);
        assert_eq!(Alltoall::select(4, 32 * KIB + 1, true), Alltoall::Pairwise);
    }

    #[test]
    fn reduction_rules() {
        for comm in [true, false] {
            assert_eq!(Reduce::select(8, 1 << 20, comm), Reduce::Linear);
            assert_eq!(Reduce::select(9, 8 * KIB - 1, comm), Reduce::Linear);
            assert_eq!(Reduce::select(9, 8 * KIB, comm), Reduce::Binomial);
            assert_eq!(
                Allreduce::select(64, 4 * KIB - 1, comm),
                Allreduce::RecursiveDoubling
            );
            assert_eq!(Allreduce::select(2, 4 * KIB, comm), Allreduce::ReduceBcast);
            assert_eq!(
                ReduceScatter::select(8, 16 * KIB - 1, comm),
                ReduceScatter::RecursiveHalving
            );
            assert_eq!(
                ReduceScatter::select(3, 16 * KIB, comm),
                ReduceScatter::Pairwise
            );
            assert_eq!(Scan::select(8, 8, comm), Scan::Linear);
            assert_eq!(Scan::select(9, 8 * KIB - 1, comm), Scan::RecursiveDoubling);
            assert_eq!(Scan::select(9, 8 * KIB, comm), Scan::Linear);
        }
    }

    #[test]
    fn no_default_reorders_a_non_commutative_operator() {
        for p in 1..=70 {
            for bytes in [0, 8, 4 * KIB, 16 * KIB, 1 << 20] {
                assert_ne!(Allreduce::select(p, bytes, false), Allreduce::Ring);
                assert_ne!(ReduceScatter::select(p, bytes, false), ReduceScatter::Ring);
            }
        }
    }

    #[test]
    fn shift_rule() {
        assert_eq!(Shift::select(16, 8, true), Shift::Direct);
        assert_eq!(Shift::select(6, 1 << 20, true), Shift::Direct);
    }
}
