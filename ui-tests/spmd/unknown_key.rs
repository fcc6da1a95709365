// Only the keys rpar knows are accepted.
fn main() {
    let _ = rpar::spmd!(ranks = 2, threads = 4, |world| Ok(world.rank()));
}
