// Each node has one neighbour list.
rpar::topology! {
    pub Pair = graph { 0: [1], 1: [0], 0: [1] };
}

fn main() {}
