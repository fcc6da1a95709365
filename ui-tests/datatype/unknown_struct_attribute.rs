use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
#[rpar(packed)]
struct P {
    x: f64,
}

fn main() {}
