// `periodic` must give one entry per dim.
rpar::topology! {
    pub Torus = cart[4, 4] periodic[true];
}

fn main() {}
