use rpar::{Datatype, TypeMap};

fn main() {
    let pair = TypeMap::contiguous(2, &i32::type_map()).unwrap(); // not committed
    let _ = pair.pack_to_vec(&[1, 2], 1);
}
