//! Shared by the integration tests: for those that run the example programs, where cargo put
//! an example's build, and running it (`cargo test` builds the examples next to the test
//! binaries, `target/<profile>/examples`); for the reduction tests, their sequential
//! references ([`reduction`]).

#![allow(dead_code)] // each test file uses the part it needs

pub(crate) mod reduction;

use std::path::PathBuf;
use std::process::{Command, Output};

/// The build of example `name`.
pub(crate) fn example(name: &str) -> PathBuf {
    let mut dir = std::env::current_exe().expect("test binary path");
    dir.pop(); // deps/
    dir.pop();
    dir.join("examples").join(name)
}

/// Runs example `name` with `args` and returns its output, whatever its exit status.
pub(crate) fn output(name: &str, args: &[&str]) -> Output {
    let path = example(name);
    Command::new(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", path.display()))
}

/// Runs example `name` with `args`, asserts that it succeeded, and returns its standard output.
pub(crate) fn run(name: &str, args: &[&str]) -> String {
    let out = output(name, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} {args:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
