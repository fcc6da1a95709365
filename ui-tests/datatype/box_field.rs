use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct Tree {
    value: i64,
    left: Box<i64>,
}

fn main() {}
