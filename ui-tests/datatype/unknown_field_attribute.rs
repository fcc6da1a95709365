use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct P {
    #[rpar(rename = "y")]
    x: f64,
}

fn main() {}
