// An `on` clause needs a block.
fn main() {
    let _ = rpar::spmd!(ranks = 2, |world| {
        on root println!("{}", world.rank());
        Ok(())
    });
}
