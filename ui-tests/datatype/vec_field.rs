use rpar::Datatype;

#[derive(Datatype, Clone)]
struct Samples {
    rate: f64,
    data: Vec<f64>,
}

fn main() {}
