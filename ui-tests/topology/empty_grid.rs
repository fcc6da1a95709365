// A grid needs at least one dim.
rpar::topology! {
    pub Nothing = cart[];
}

fn main() {}
