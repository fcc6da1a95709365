// Only `periodic[…]` and `reorder = …` may follow a grid.
rpar::topology! {
    pub Ring = cart[8] wrap[true];
}

fn main() {}
