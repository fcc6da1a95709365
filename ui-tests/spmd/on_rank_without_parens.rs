// `on rank` needs the rank in parentheses.
fn main() {
    let _ = rpar::spmd!(ranks = 2, |world| {
        on rank 1 {
            println!("{}", world.rank());
        }
        Ok(())
    });
}
