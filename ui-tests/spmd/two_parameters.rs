// The closure gets exactly one argument: the communicator.
fn main() {
    let _ = rpar::spmd!(ranks = 2, |world, rank| Ok(rank));
}
