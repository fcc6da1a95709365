// The closure gets exactly one argument: the communicator.
fn main() {
    let _ = rpar::spmd!(ranks = 2, || Ok(0));
}
