use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct Named {
    id: u32,
    name: String,
}

fn main() {}
