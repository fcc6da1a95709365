use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct Samples {
    rate: f64,
    data: Vec<f64>,
}

fn main() {}
