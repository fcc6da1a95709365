use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct Node {
    value: i64,
    next: *const Node,
}

fn main() {}
