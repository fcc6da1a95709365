use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct Reading {
    value: f64,
    error: Option<f64>,
}

fn main() {}
