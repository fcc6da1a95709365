//! The names of rpar's collective algorithms on the command line (`--allreduce ring`, …), for
//! the benchmarks that time one algorithm beside MPICH's same one: each parser gives the
//! algorithm, or an error that lists the names.

use rpar::{Allgather, Allreduce, Alltoall, Bcast};

/// The algorithm named `name` among `choices`, or what the names are.
fn named<A: Copy>(name: &str, choices: &[(&str, A)]) -> std::result::Result<A, String> {
    let found = choices.iter().find(|(n, _)| *n == name);
    found.map(|&(_, a)| a).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        format!("expected one of {}", names.join(", "))
    })
}

pub(crate) fn allreduce_named(name: &str) -> std::result::Result<Allreduce, String> {
    use Allreduce::*;
    let choices = [
        ("auto", Auto),
        ("recursive-doubling", RecursiveDoubling),
        ("ring", Ring),
        ("rabenseifner", Rabenseifner),
        ("reduce-bcast", ReduceBcast),
        ("shared-memory", SharedMemory),
    ];
    named(name, &choices)
}

pub(crate) fn bcast_named(name: &str) -> std::result::Result<Bcast, String> {
    use Bcast::*;
    let choices = [
        ("auto", Auto),
        ("linear", Linear),
        ("binomial", Binomial),
        ("pipeline", Pipeline),
        ("scatter-allgather", ScatterAllgather),
        ("shared-memory", SharedMemory),
    ];
    named(name, &choices)
}

pub(crate) fn allgather_named(name: &str) -> std::result::Result<Allgather, String> {
    use Allgather::*;
    let choices = [
        ("auto", Auto),
        ("ring", Ring),
        ("recursive-doubling", RecursiveDoubling),
        ("pairwise", Pairwise),
        ("bruck", Bruck),
        ("shared-memory", SharedMemory),
    ];
    named(name, &choices)
}

pub(crate) fn alltoall_named(name: &str) -> std::result::Result<Alltoall, String> {
    use Alltoall::*;
    let choices = [
        ("auto", Auto),
        ("linear", Linear),
        ("pairwise", Pairwise),
        ("bruck", Bruck),
        ("hypercube", Hypercube),
        ("shared-memory", SharedMemory),
    ];
    named(name, &choices)
}
