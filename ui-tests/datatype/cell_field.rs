use rpar::Datatype;
use std::cell::Cell;

#[derive(Datatype, Clone, Copy)]
struct Counter {
    id: u32,
    hits: Cell<u64>,
}

fn main() {}
