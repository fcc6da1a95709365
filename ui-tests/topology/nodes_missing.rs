// The nodes must be 0..n, none left out.
rpar::topology! {
    pub Gappy = graph { 0: [3], 3: [0], 4: [] };
}

fn main() {}
