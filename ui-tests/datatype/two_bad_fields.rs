// Each field that is not a Datatype gets one error, at its type, and nothing else does: the
// impl holds only where every field is a Datatype (a generic struct's fields included).
use rpar::Datatype;
use std::time::Duration;

#[derive(Datatype, Clone, Copy)]
struct Best<T> {
    value: T,
    found: Option<T>,
    after: Duration,
    rank: u32,
}

fn main() {}
