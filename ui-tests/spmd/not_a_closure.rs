// The last argument is the program, as a closure.
fn program(world: rpar::Comm) -> rpar::Result<usize> {
    Ok(world.rank())
}
fn main() {
    let _ = rpar::spmd!(ranks = 2, program);
}
