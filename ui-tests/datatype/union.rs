use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
union Bits {
    f: f32,
    u: u32,
}

fn main() {}
