use rpar::Datatype;

#[derive(Datatype, Clone)]
struct Everything<'a> {
    r: &'a u8,
    p: *mut u8,
    f: fn(u8) -> u8,
    #[rpar(nope)]
    x: u8,
}

fn main() {}
