//! The topology examples verify themselves; this runs them as part of the suite.

#[path = "../examples/cart_grid.rs"]
mod cart_grid;
#[path = "../examples/graph.rs"]
mod graph;

use std::process::ExitCode;

#[test]
fn cart_grid_example_passes() {
    assert_eq!(cart_grid::run(), ExitCode::SUCCESS);
}

#[test]
fn graph_example_passes() {
    assert_eq!(graph::run(), ExitCode::SUCCESS);
}
