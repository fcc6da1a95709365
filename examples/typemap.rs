//! Prints the type maps of the lecture's derived-datatype examples and of a derived struct, in
//! the lecture's notation, with their size, extent and bounds. Run:
//! `cargo run --example typemap`. Each map is checked against the lecture's and the program
//! exits non-zero if one differs.

use clap::Parser;
use rpar::prelude::*;
use rpar::Order;

/// The type maps of the lecture's derived-datatype examples, with size, extent and bounds;
/// checked (it takes no options).
#[derive(Parser, Debug)]
#[command(name = "typemap")]
struct Args {}

#[derive(Datatype, Clone, Copy)]
struct Particle {
    c: u8,
    d: f64,
    i: i32,
}

fn show(name: &str, map: &TypeMap, want: &str, failures: &mut u32) {
    let got = map.to_string();
    println!("{name}\n  {got}");
    println!(
        "  size {}, extent {}, lb {}, ub {}, true lb {}, true extent {}",
        map.size(),
        map.extent(),
        map.lb(),
        map.ub(),
        map.true_lb(),
        map.true_extent()
    );
    if got != want {
        eprintln!("  WRONG: expected {want}");
        *failures += 1;
    }
}

fn main() -> Result<()> {
    Args::parse();
    let (f64_, i32_, i8_) = (f64::type_map(), i32::type_map(), i8::type_map());
    let mut failures = 0;
    show(
        "contiguous(3, f64)",
        &TypeMap::contiguous(3, &f64_)?,
        "{(f64, 0), (f64, 8), (f64, 16)}",
        &mut failures,
    );
    show(
        "vector(count 2, blocklen 3, stride 4, f64)",
        &TypeMap::vector(2, 3, 4, &f64_)?,
        "{(f64, 0), (f64, 8), (f64, 16), (f64, 32), (f64, 40), (f64, 48)}",
        &mut failures,
    );
    show(
        "vector(3, 1, -2, i32): a negative stride",
        &TypeMap::vector(3, 1, -2, &i32_)?,
        "{(i32, 0), (i32, -8), (i32, -16)}",
        &mut failures,
    );
    show(
        "indexed(blocklens [3, 1], displacements [4, 0], f64)",
        &TypeMap::indexed(&[(3, 4), (1, 0)], &f64_)?,
        "{(f64, 32), (f64, 40), (f64, 48), (f64, 0)}",
        &mut failures,
    );
    show(
        "struct {i8 @0, f64 @8, i32 @16}",
        &TypeMap::structure(&[(1, 0, &i8_), (1, 8, &f64_), (1, 16, &i32_)])?,
        "{(i8, 0), (f64, 8), (i32, 16)}",
        &mut failures,
    );
    show(
        "column of a 3 x 3 f64 matrix, resized to one f64",
        &TypeMap::vector(3, 1, 3, &f64_)?.resized(0, 8)?,
        "{(f64, 0), (f64, 24), (f64, 48)}",
        &mut failures,
    );
    show(
        "subarray 2 x 2 at (1, 1) of a 3 x 3 i32 matrix, C order",
        &TypeMap::subarray(&[3, 3], &[2, 2], &[1, 1], Order::C, &i32_)?,
        "{(i32, 16), (i32, 20), (i32, 28), (i32, 32)}",
        &mut failures,
    );
    let p = Particle::type_map();
    let want = format!(
        "{{(u8, {}), (f64, {}), (i32, {})}}",
        std::mem::offset_of!(Particle, c),
        std::mem::offset_of!(Particle, d),
        std::mem::offset_of!(Particle, i)
    );
    show(
        "#[derive(Datatype)] struct Particle { c: u8, d: f64, i: i32 }",
        &p,
        &want,
        &mut failures,
    );
    if failures > 0 {
        return Err(Error::user(format!(
            "{failures} type maps differ from the lecture's"
        )));
    }
    Ok(())
}
