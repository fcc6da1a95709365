// `ranks` beside a `topology` must equal its size.
use rpar::prelude::*;

topology! {
    pub Torus = cart[4, 4] periodic[true, true];
}

fn main() {
    let _ = spmd!(topology = Torus, ranks = 8, |grid| Ok(grid.rank()));
}
