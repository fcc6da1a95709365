use rpar::Datatype;

#[derive(Datatype)]
struct Shape {
    id: u32,
    area: dyn Fn() -> f64,
}

fn main() {}
