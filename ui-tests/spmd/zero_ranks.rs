// A run needs at least one rank.
fn main() {
    let _ = rpar::spmd!(ranks = 0, |world| Ok(world.rank()));
}
