//! The lecture's struct send: rank 0 sends `{a: 3.14159, b: 2.71828, n: 2010}` as ONE message of
//! a derived datatype, rank 1 receives and prints it.
//!
//! Two ways, as in the lecture: the type map written by `#[derive(Datatype)]`, and the same
//! type built by hand with `MPI_Type_create_struct` (blocklengths, displacements, types) and
//! received with `recv_typed`. Run: `cargo run --example struct_send`. Verifies what arrived and
//! exits non-zero if it is wrong.

use clap::Parser;
use rpar::prelude::*;
use std::mem::offset_of;

/// The lecture's struct sent as one derived-datatype message, by the derive and by hand;
/// checked (it takes no options).
#[derive(Parser, Debug)]
#[command(name = "struct_send")]
struct Args {}

/// The lecture's data: two floats and an int, sent as one message.
#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Input {
    a: f32,
    b: f32,
    n: i32,
}

fn main() -> std::process::ExitCode {
    Args::parse();
    #[allow(clippy::approx_constant)] // the lecture's literal values, not pi and e
    let sent = Input {
        a: 3.14159,
        b: 2.71828,
        n: 2010,
    };
    let result = spmd!(ranks = 2, |world| {
        // Build_derived_type: blocklengths {1, 1, 1}, displacements from the addresses, types
        let (f, i) = (f32::type_map(), i32::type_map());
        let by_hand = TypeMap::structure(&[
            (1, offset_of!(Input, a) as isize, &f),
            (1, offset_of!(Input, b) as isize, &f),
            (1, offset_of!(Input, n) as isize, &i),
        ])?;
        if by_hand != Input::type_map() {
            return Err(Error::user(format!("hand-built {by_hand} differs from the derived {}", Input::type_map())));
        }
        let by_hand = by_hand.commit();
        on rank(0) {
            world.send(&sent, 1, 0)?; // the derived type
            world.send(rpar::Typed::new(&[sent], &by_hand, 1), 1, 1)?; // the hand-built committed type
        }
        on rank(1) {
            let mut got = Input { a: 0.0, b: 0.0, n: 0 };
            world.recv_into(&mut got, 0, 0)?;
            println!("rank 1 received a = {}, b = {}, n = {}", got.a, got.b, got.n);
            let mut again = [Input { a: 0.0, b: 0.0, n: 0 }];
            world.recv_into(rpar::Typed::new(&mut again, &by_hand, 1), 0, 1)?;
            println!("rank 1 received {:?} with the type map {}", again[0], by_hand);
            return Ok(Some((got, again[0])));
        }
        Ok(None)
    });
    match result {
        Ok(r) if r[1] == Some((sent, sent)) => std::process::ExitCode::SUCCESS,
        Ok(r) => {
            eprintln!("wrong data arrived: {:?}", r[1]);
            std::process::ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
