use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
enum Shape {
    Circle,
    Square,
}

fn main() {}
