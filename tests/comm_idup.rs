//! MPI_Comm_idup in-process: the shared checks (`common/idup_checks.rs`, also run on the MPI
//! transport by `tests/mpi.rs`) on every p in 1..=6.

#[path = "common/idup_checks.rs"]
mod idup_checks;

#[test]
fn shared_checks_on_every_size() {
    for p in 1..=6 {
        rpar::run(p, |world| idup_checks::all(&world)).unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}
