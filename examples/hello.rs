//! The first rpar program: every rank greets, rank 0 collects the greetings in rank order.
//!
//! Run: `cargo run --release --example hello -- [ranks]` (default 4). Verifies its own output and
//! exits non-zero if anything is wrong.

use rpar::prelude::*;

fn main() -> std::process::ExitCode {
    let ranks = std::env::args()
        .nth(1)
        .map_or(Ok(4), |a| a.parse::<usize>())
        .unwrap_or_else(|_| {
            eprintln!("usage: hello [ranks]");
            std::process::exit(2)
        });
    let result = spmd!(ranks = ranks, |world| {
        let greeting = format!("hello from rank {} of {}", world.rank(), world.size());
        if world.rank() != 0 {
            world.send(greeting.as_bytes(), 0, 0)?;
            return Ok(Vec::new());
        }
        let mut all = vec![greeting];
        for source in 1..world.size() {
            let (bytes, _) = world.recv::<u8>(source, 0)?;
            all.push(String::from_utf8(bytes).map_err(Error::user)?);
        }
        on root {
            for line in &all {
                println!("{line}");
            }
        }
        Ok(all)
    });
    match result {
        Ok(per_rank) => {
            let expected: Vec<String> = (0..ranks)
                .map(|r| format!("hello from rank {r} of {ranks}"))
                .collect();
            if per_rank[0] == expected {
                std::process::ExitCode::SUCCESS
            } else {
                eprintln!("wrong greetings: {:?}", per_rank[0]);
                std::process::ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
