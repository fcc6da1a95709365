//! The lecture's Cartesian grid program: 25 ranks as a 5 x 5 periodic grid (MPI_Cart_create),
//! each asks for its coordinates (MPI_Cart_coords) and reports "Process rank R has coordinates
//! I J"; rank 0 prints the reports in rank order.
//!
//! Run: `cargo run --example cart_grid`. Verifies its own output (coordinates row-major, each
//! rank's neighbours one step away, with wrap-around) and exits non-zero if anything is wrong.

use clap::Parser;
use rpar::prelude::*;

topology! {
    /// The lecture's 5 x 5 grid, periodic in both dims.
    Grid = cart[5, 5] periodic[true, true];
}

/// This rank's report, and whether its neighbours sit where a torus puts them.
fn report(grid: &CartComm<2>) -> Result<(String, bool)> {
    let [i, j] = grid.coords();
    let line = format!("Process rank {} has coordinates {i} {j}", grid.rank());
    let mut ok = grid.coords_of(grid.rank())? == [i, j];
    for dim in 0..2 {
        let (src, dst) = grid.shift(dim, 1)?;
        if src == rpar::PROC_NULL || dst == rpar::PROC_NULL {
            return Ok((line, false));
        }
        let (mut back, mut fwd) = ([i, j], [i, j]);
        back[dim] = (back[dim] + 4) % 5;
        fwd[dim] = (fwd[dim] + 1) % 5;
        ok &= grid.coords_of(src)? == back && grid.coords_of(dst)? == fwd;
    }
    Ok((line, ok))
}

/// The lecture's Cartesian grid program: 25 ranks as a 5 x 5 periodic grid report their
/// coordinates; checked (it takes no options).
#[derive(Parser, Debug)]
#[command(name = "cart_grid")]
struct Args {}

// tests/topology_examples.rs includes this file and calls `run`, not `main`
#[cfg_attr(test, allow(dead_code))]
fn main() -> std::process::ExitCode {
    Args::parse();
    run()
}

/// Runs the example; `pub(crate)` so that `tests/topology_examples.rs` can run it too.
pub(crate) fn run() -> std::process::ExitCode {
    let result = spmd!(topology = Grid, |grid| {
        let (line, ok) = report(&grid)?;
        if grid.rank() != 0 {
            grid.send(line.as_bytes(), 0, 0)?;
            grid.send(&u8::from(ok), 0, 1)?;
            return Ok(Vec::new());
        }
        let mut lines = vec![(line, ok)];
        for source in 1..grid.size() {
            let (bytes, _) = grid.recv::<u8>(source, 0)?;
            let (ok, _) = grid.recv::<u8>(source, 1)?;
            lines.push((String::from_utf8(bytes).map_err(Error::user)?, ok == [1]));
        }
        for (line, _) in &lines {
            println!("{line}");
        }
        Ok(lines)
    });
    let lines = match result {
        Ok(mut per_rank) => per_rank.swap_remove(0),
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let expected: Vec<String> = (0..25)
        .map(|r| format!("Process rank {r} has coordinates {} {}", r / 5, r % 5))
        .collect();
    let got: Vec<&String> = lines.iter().map(|(l, _)| l).collect();
    if got.iter().copied().eq(expected.iter()) && lines.iter().all(|(_, ok)| *ok) {
        std::process::ExitCode::SUCCESS
    } else {
        eprintln!("wrong coordinates or neighbours: {lines:?}");
        std::process::ExitCode::FAILURE
    }
}
