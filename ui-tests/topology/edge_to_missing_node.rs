// An edge must lead to a node of the graph.
rpar::topology! {
    pub Star = graph { 0: [1, 2, 5], 1: [0], 2: [0] };
}

fn main() {}
