//! A graph topology (MPI_Graph_create from the lecture's index and edges arrays), each rank's
//! neighbours (MPI_Graph_neighbors), and a neighbourhood exchange (MPI_Neighbor_allgather):
//! every rank sends its rank squared to its neighbours and receives theirs.
//!
//! Run: `cargo run --example graph`. Verifies that each rank received exactly its
//! neighbours' values, in neighbour order, and exits non-zero otherwise.

use clap::Parser;
use rpar::prelude::*;

topology! {
    /// A small network: a ring 0-1-2-3-4-0 with a chord 0-2 and a leaf 5 on node 3.
    Net = graph {
        0: [1, 4, 2],
        1: [0, 2],
        2: [1, 3, 0],
        3: [2, 4, 5],
        4: [3, 0],
        5: [3],
    };
}

/// A graph topology, each rank's neighbours and a neighbourhood allgather; checked (it takes no
/// options).
#[derive(Parser, Debug)]
#[command(name = "graph")]
struct Args {}

// tests/topology_examples.rs includes this file and calls `run`, not `main`
#[cfg_attr(test, allow(dead_code))]
fn main() -> std::process::ExitCode {
    Args::parse();
    run()
}

/// Runs the example; `pub(crate)` so that `tests/topology_examples.rs` can run it too.
pub(crate) fn run() -> std::process::ExitCode {
    println!("index {:?}", Net::INDEX);
    println!("edges {:?}", Net::EDGES);
    let result = spmd!(topology = Net, |net| {
        let me = net.rank();
        let neighbors = net.neighbors(me)?.to_vec();
        let mut got = vec![0u64; neighbors.len()];
        net.neighbor_allgather(&[(me * me) as u64], &mut got)?;
        Ok((neighbors, got))
    });
    let per_rank = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut ok = true;
    for (rank, (neighbors, got)) in per_rank.iter().enumerate() {
        println!("rank {rank}: neighbours {neighbors:?}, received {got:?}");
        let want: Vec<u64> = neighbors.iter().map(|&n| (n * n) as u64).collect();
        ok &= *got == want;
        let start = if rank == 0 { 0 } else { Net::INDEX[rank - 1] };
        ok &= neighbors[..] == Net::EDGES[start..Net::INDEX[rank]];
    }
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        eprintln!("a rank did not receive its neighbours' values");
        std::process::ExitCode::FAILURE
    }
}
