//! A random mix of point-to-point traffic, in-process: the check of
//! `tests/common/traffic_mix.rs` (also run on MPI by `tests/mpi.rs`) for 2 to 5 ranks.

#[path = "common/traffic_mix.rs"]
mod traffic_mix;

#[test]
fn a_random_mix_of_messages_arrives_in_order_and_whole() {
    for p in 2..=5 {
        rpar::run(p, |world| traffic_mix::random_mix(&world))
            .unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}
