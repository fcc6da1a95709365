// Coordinates are typed by dimension: three on a 2-D grid do not compile.
use rpar::prelude::*;

topology! {
    pub Torus = cart[4, 4] periodic[true, true];
}

fn main() {
    let _ = spmd!(topology = Torus, |grid| {
        let [row, col, depth] = grid.coords();
        let _ = grid.rank_of([row, col, depth])?;
        Ok(())
    });
}
