//! That every rank passed the same arguments to a topology constructor: MPI_Cart_create and
//! MPI_Graph_create describe the whole topology on every rank, and a rank that describes
//! another one makes the call erroneous (MPI leaves it undefined: MPICH builds an incoherent
//! communicator). rpar sees every rank, so it says so, on every rank.
//!
//! One allgather of a fixed-size digest per call (the number of entries and a hash of the
//! arguments); only when the digests differ, a second exchange of the arguments written out —
//! one description per distinct digest, from the lowest rank that has it — so that the error
//! names every version. Both are the communicator's ordinary collectives, so the check runs
//! alike on the in-process and the MPI transport (where every process runs the same binary, so
//! the same hash).

use crate::{Comm, Error, Result};
use std::fmt::{self, Debug};
use std::hash::{DefaultHasher, Hash, Hasher};

/// At most this many ranks are listed as sharing a version of the arguments.
const SHOWN_RANKS: usize = 8;
/// Arrays longer than this are shortened in a description (with their hash, so that two long
/// arrays that differ past the cut still read differently).
const SHOWN_ENTRIES: usize = 32;

/// Checks that every rank of `comm` passed the same `args` (with `entries` entries: dims or
/// nodes) to a topology constructor; `describe` writes them out as the call, for the error.
///
/// # Errors
///
/// [`Error::CollectiveMismatch`] on every rank if any two ranks differ, naming each version
/// of the arguments and the ranks that passed it; and the errors of the collectives it runs.
pub(super) fn same_arguments<A: Hash + ?Sized>(
    comm: &Comm,
    entries: usize,
    args: &A,
    describe: impl FnOnce() -> String,
) -> Result<()> {
    let mine = [entries as u64, digest(args)];
    let all: Vec<u64> = comm.allgather(&mine[..])?;
    let digests: Vec<&[u64]> = all.chunks_exact(2).collect();
    if digests.iter().all(|d| *d == digests[0]) {
        return Ok(());
    }
    // the first rank of each version describes it; the others send nothing
    let first_with = |d: &[u64]| digests.iter().position(|x| *x == d).unwrap_or(0);
    let me = comm.rank();
    let text = if first_with(digests[me]) == me {
        describe()
    } else {
        String::new()
    };
    let lengths: Vec<u64> = comm.allgather(&[text.len() as u64][..])?;
    let counts: Vec<usize> = lengths.iter().map(|&n| n as usize).collect();
    let texts: Vec<u8> = comm.allgather((text.as_bytes(), rpar::Counts(&counts)))?;
    let mut calls = Vec::new();
    let mut at = 0;
    for (rank, &n) in counts.iter().enumerate() {
        let text = String::from_utf8_lossy(&texts[at..at + n]);
        at += n;
        if first_with(digests[rank]) != rank {
            continue;
        }
        let others: Vec<usize> = (rank + 1..digests.len())
            .filter(|&r| digests[r] == digests[rank])
            .collect();
        calls.push((rank, format!("{text}{}", also(&others))));
    }
    Err(Error::CollectiveMismatch {
        communicator: comm.id(),
        calls,
    })
}

/// " (so did ranks 1, 3)" for the other ranks that passed the same arguments.
fn also(others: &[usize]) -> String {
    let shown: Vec<String> = others
        .iter()
        .take(SHOWN_RANKS)
        .map(ToString::to_string)
        .collect();
    let more = match others.len().saturating_sub(SHOWN_RANKS) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    match others.len() {
        0 => String::new(),
        1 => format!(" (so did rank {})", shown[0]),
        _ => format!(" (so did ranks {}{more})", shown.join(", ")),
    }
}

/// A hash of `args`, the same on every rank for the same arguments.
fn digest<A: Hash + ?Sized>(args: &A) -> u64 {
    // SipHash with fixed keys: the same value in every thread and every process of one binary
    let mut h = DefaultHasher::new();
    args.hash(&mut h);
    h.finish()
}

/// An array as `[a, b, c]` for a description; long ones shortened, with their hash.
pub(super) fn list<T: Debug + Hash>(v: &[T]) -> impl fmt::Display + '_ {
    struct List<'a, T>(&'a [T]);
    impl<T: Debug + Hash> fmt::Display for List<'_, T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            if self.0.len() <= SHOWN_ENTRIES {
                return write!(f, "{:?}", self.0);
            }
            f.write_str("[")?;
            for x in &self.0[..SHOWN_ENTRIES] {
                write!(f, "{x:?}, ")?;
            }
            write!(
                f,
                "… {} entries in all, hash {:016x}]",
                self.0.len(),
                digest(self.0)
            )
        }
    }
    List(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_shortened_and_still_tell_apart() {
        assert_eq!(list(&[1, 2, 3]).to_string(), "[1, 2, 3]");
        let a: Vec<usize> = (0..100).collect();
        let mut b = a.clone();
        b[99] = 0;
        let (a, b) = (list(&a).to_string(), list(&b).to_string());
        assert!(
            a.starts_with("[0, 1, 2, ") && a.contains("… 100 entries in all"),
            "{a}"
        );
        assert_ne!(a, b);
    }

    #[test]
    fn the_ranks_that_agree() {
        assert_eq!(also(&[]), "");
        assert_eq!(also(&[3]), " (so did rank 3)");
        assert_eq!(also(&[1, 3]), " (so did ranks 1, 3)");
        let many: Vec<usize> = (1..=10).collect();
        assert_eq!(
            also(&many),
            " (so did ranks 1, 2, 3, 4, 5, 6, 7, 8 and 2 more)"
        );
    }
}
