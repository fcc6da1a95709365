//! A random mix of point-to-point traffic, in-process: the check of
//! `tests/common/traffic_mix.rs` (also run on MPI by `tests/mpi.rs`) for 2 to 5 ranks, several
//! mixes each (`RPAR_MIX_SEEDS` sets how many: a longer hunt).

#[path = "common/split_mix.rs"]
mod split_mix;
#[path = "common/traffic_mix.rs"]
mod traffic_mix;

#[test]
fn a_random_mix_of_messages_arrives_in_order_and_whole() {
    let seeds: u64 = std::env::var("RPAR_MIX_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(6);
    for p in 2..=5 {
        for seed in 1..=seeds {
            rpar::run(p, |world| traffic_mix::random_mix(&world, seed))
                .unwrap_or_else(|e| panic!("p = {p}, seed {seed}: {e}"));
        }
    }
}

#[test]
fn pingping_sendflood_and_sendself_deliver_in_order() {
    for p in 1..=6 {
        rpar::run(p, |world| traffic_mix::floods(&world))
            .unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}
