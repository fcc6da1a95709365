// A graph needs at least one node.
rpar::topology! {
    pub Empty = graph {};
}

fn main() {}
