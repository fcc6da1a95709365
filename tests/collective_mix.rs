//! A random sequence of collectives, in-process: the check of `tests/common/collective_mix.rs`
//! (also run on MPI by `tests/mpi.rs`) for 1 to 7 ranks, several seeds each.

#[path = "common/collective_mix.rs"]
mod collective_mix;
#[path = "common/split_mix.rs"]
mod split_mix;

#[test]
fn random_sequences_of_collectives_give_the_sequential_answers() {
    for p in 1..=7 {
        for seed in 1..=4 {
            rpar::run(p, |world| collective_mix::random_collectives(&world, seed))
                .unwrap_or_else(|e| panic!("p = {p}, seed {seed}: {e}"));
        }
    }
}
