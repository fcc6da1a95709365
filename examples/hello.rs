//! The first rpar program: every rank greets, rank 0 collects the greetings in rank order.
//!
//! Run: `cargo run --release --example hello -- -p 5` (default 4 ranks; `hello 5`, the rank
//! count alone, works too). Verifies its own output and exits non-zero if anything is wrong.

use clap::Parser;
use rpar::prelude::*;

/// The smallest rpar program: every rank greets, rank 0 collects the greetings in rank order.
#[derive(Parser, Debug)]
#[command(name = "hello")]
struct Args {
    /// Number of ranks.
    #[arg(short = 'p', long, default_value_t = 4)]
    ranks: usize,
    /// Number of ranks, given alone (`hello 5`): the same as -p 5.
    #[arg(value_name = "RANKS", conflicts_with = "ranks")]
    positional: Option<usize>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let ranks = args.positional.unwrap_or(args.ranks);
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
