use rpar::Datatype;

#[derive(Clone, Copy)]
struct Plain {
    x: f64,
}

#[derive(Datatype, Clone, Copy)]
struct Outer {
    id: u32,
    inner: Plain,
}

fn main() {}
