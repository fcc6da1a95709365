use rpar::Datatype;

#[derive(Datatype)]
struct Samples {
    rate: f64,
    data: [f64],
}

fn main() {}
