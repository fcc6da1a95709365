// `on` takes `root` or `rank(k)`.
fn main() {
    let _ = rpar::spmd!(ranks = 2, |world| {
        on leader {
            println!("{}", world.rank());
        }
        Ok(())
    });
}
