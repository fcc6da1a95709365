// `spmd!` needs to know how many ranks to launch.
fn main() {
    let _ = rpar::spmd!(|world| Ok(world.rank()));
}
