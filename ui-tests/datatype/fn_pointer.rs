use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct Callback {
    id: u32,
    handler: fn(u32) -> u32,
}

fn main() {}
