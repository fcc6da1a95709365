// An attribute error is the only error: the stub impl keeps the uses below from adding
// "`Datatype` is not implemented" errors.
use rpar::{Datatype, TypeMap};

#[derive(Datatype, Clone, Copy)]
struct P {
    #[rpar(skp)]
    x: f64,
}

fn main() {
    let _ = P::type_map();
    let _ = TypeMap::contiguous(2, &<[P; 2]>::type_map());
}
