// A grid dim of 0 is refused, at the 0.
rpar::topology! {
    pub Grid = cart[4, 0] periodic[false, true];
}

fn main() {}
