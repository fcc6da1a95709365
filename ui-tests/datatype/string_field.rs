use rpar::Datatype;

#[derive(Datatype, Clone)]
struct Named {
    id: u32,
    name: String,
}

fn main() {}
