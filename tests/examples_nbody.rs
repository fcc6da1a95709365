//! Runs the `nbody` example at small sizes: it compares every body's final position with the
//! sequential run and exits non-zero if any differs by more than 1e-9 relative error.
//! `cargo test` builds the examples next to the test binaries.

mod common;

use std::process::Output;

fn nbody(args: &[&str]) -> Output {
    common::output("nbody", args)
}

fn run(args: &[&str]) -> String {
    common::run("nbody", args)
}

/// The table row of run `name`, split into its columns.
fn row<'a>(out: &'a str, name: &str) -> Vec<&'a str> {
    out.lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no row {name}:\n{out}"))
        .split_whitespace()
        .collect()
}

#[test]
fn both_schemes_match_the_sequential_run() {
    let out = run(&["--quick"]);
    assert!(
        out.contains("check: every body's position matches the sequential run"),
        "{out}"
    );
    // 103 bodies on 4 ranks: 26 per rank, one padding slot.
    assert!(
        out.contains("26 bodies per rank (1 padding slots)"),
        "{out}"
    );
    for name in ["pairwise", "doubling"] {
        let cols = row(&out, name);
        assert_eq!(cols[1], "4", "{out}");
        let err: f64 = cols[8].parse().expect("relative error column");
        assert!(err <= 1e-9, "{out}");
    }
}

#[test]
fn uneven_rank_counts_and_given_model_parameters() {
    // 103 bodies on 3 and 7 ranks; on 7 ranks the last rank owns 103 - 6 * 15 = 13 bodies.
    for ranks in ["3", "7"] {
        for scheme in ["pairwise", "doubling"] {
            let args = ["--quick", "--ranks", ranks, "--scheme", scheme];
            let out = run(&[&args[..], &["--alpha", "2", "--beta", "0.5"]].concat());
            assert!(out.contains("(given)"), "{out}");
            assert!(out.contains("check: every body's position"), "{out}");
            let other = if scheme == "pairwise" {
                "doubling"
            } else {
                "pairwise"
            };
            assert!(!out.lines().any(|l| l.starts_with(other)), "{out}");
        }
    }
    // The model column follows the lecture's formulas: 3 ranks, m = 35 * 32 B.
    let out = run(&["--quick", "--ranks", "3", "--alpha", "2", "--beta", "0.5"]);
    let model = |name| row(&out, name)[7].parse::<f64>().expect("model column");
    let m = 35.0 * 32.0 * 0.5e-3; // microseconds
    assert!((model("pairwise") - 2.0 * (2.0 + m)).abs() < 0.01, "{out}");
    assert!(
        (model("doubling") - (2.0 * 2.0 + 2.0 * m)).abs() < 0.01,
        "{out}"
    );
}

#[test]
fn matrix_shows_the_gather_traffic() {
    let out = run(&[
        "--quick", "--ranks", "2", "--scheme", "doubling", "--matrix",
    ]);
    assert!(
        out.contains("communication matrix of the doubling run"),
        "{out}"
    );
}

#[test]
fn bad_sizes_are_refused() {
    let out = nbody(&["--bodies", "0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("need at least 1 body"), "{err}");
}

#[test]
fn simulated_runs_match_the_sequential_run_and_the_closed_form() {
    let out = run(&[
        "--quick",
        "--simulate",
        "1",
        "2",
        "4",
        "8",
        "--network",
        "hypercube",
        "--alpha",
        "2",
        "--beta",
        "0.5",
    ]);
    assert!(
        out.contains("check: every body's position matches the sequential run"),
        "{out}"
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with("doubling"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    for cols in rows {
        // recursive doubling on a hypercube is contention-free: the simulated gather is the
        // lecture's alpha log2 p + (p - 1) m beta
        assert_eq!(cols[5], cols[6], "{out}");
        let step: f64 = cols[2].parse().expect("step column");
        assert!(step > 0.0, "{out}");
    }
}

#[test]
fn a_simulated_network_too_small_for_a_hypercube_is_refused() {
    let out = nbody(&["--quick", "--simulate", "6", "--network", "hypercube"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("power-of-two"), "{err}");
}
