use rpar::Datatype;

#[derive(Datatype, Clone, Copy)]
struct View<'a> {
    len: usize,
    data: &'a [f64; 4],
}

fn main() {}
