use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct P {
    x: f64,
    #[rpar(skip)]
    cache: u32,
}

fn main() {}
