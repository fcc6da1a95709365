//! Point-to-point beyond send and receive, in-process: the checks of `tests/common/p2p_more.rs`
//! (also run on MPI by `tests/mpi.rs`) for 1 to 6 ranks.

#[path = "common/p2p_more.rs"]
mod p2p_more;

fn on_every_size(check: fn(&rpar::Comm) -> rpar::Result<()>) {
    for p in 1..=6 {
        rpar::run(p, |world| check(&world)).unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn proc_null_is_a_peer_that_completes_at_once() {
    on_every_size(p2p_more::proc_null);
}
