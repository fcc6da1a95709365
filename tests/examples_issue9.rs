//! Runs the example programs of issue 9 (`cannon`, `jacobi`, `prefix_sums`) at small sizes:
//! each verifies its answer against a sequential computation and exits non-zero if it is
//! wrong. `cargo test` builds the examples next to the test binaries.

mod common;

use common::{output, run};

#[test]
fn cannon_multiplies_on_square_grids() {
    for ranks in ["1", "4", "9"] {
        let out = run("cannon", &["--quick", "--ranks", ranks]);
        assert!(
            out.contains("check: C equals the sequential product"),
            "{out}"
        );
    }
    let out = run("cannon", &["--ranks", "4", "--n", "30"]);
    assert!(out.contains("2 x 2 periodic grid"), "{out}");
}

#[test]
fn cannon_refuses_a_grid_that_is_not_square() {
    let out = output("cannon", &["--quick", "--ranks", "6"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("3 x 2 grid"), "{stderr}");
}

#[test]
fn jacobi_matches_the_sequential_solver_with_both_exchanges() {
    for exchange in ["shift", "alltoall"] {
        // 6 ranks as 3 x 2 on 16 points: blocks of unequal sides.
        for ranks in ["4", "6"] {
            let out = run(
                "jacobi",
                &["--quick", "--ranks", ranks, "--exchange", exchange],
            );
            assert!(out.contains("max |u - u_seq| = 0e0"), "{out}");
        }
    }
}

#[test]
fn jacobi_simulated_on_other_machines_matches_the_sequential_solver() {
    let out = run(
        "jacobi",
        &[
            "--quick",
            "--simulate",
            "2",
            "4",
            "9",
            "--network",
            "mesh",
            "--alpha",
            "1",
            "--beta",
            "0.5",
        ],
    );
    assert!(out.contains("max |u - u_seq| = 0e0"), "{out}");
    assert!(out.contains("3x3"), "{out}");
}

#[test]
fn jacobi_fails_when_it_cannot_converge() {
    let out = output("jacobi", &["--n", "16", "--max-sweeps", "5"]);
    assert!(!out.status.success());
}

#[test]
fn prefix_sums_check_every_algorithm_and_print_the_isoefficiency_table() {
    let out = run(
        "prefix_sums",
        &["--quick", "--ranks", "5", "--procs", "1,2"],
    );
    for variant in [
        "exscan   Linear",
        "exscan   RecursiveDoubling",
        "scan     Linear",
    ] {
        assert!(out.contains(variant), "{out}");
    }
    assert_eq!(out.matches("  ok").count(), 4, "{out}");
    assert!(out.contains("isoefficiency at E = 0.5"), "{out}");
    assert!(
        out.contains("every prefix sum and reduction equals the sequential one"),
        "{out}"
    );
}

#[test]
fn prefix_sums_table_follows_the_rank_count() {
    // without --procs the isoefficiency table measures 1, 2, 4, … up to -p
    let out = run("prefix_sums", &["--quick", "-p", "3"]);
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("n ") && l.contains("p = 1"))
        .unwrap_or_else(|| panic!("no efficiency table:\n{out}"));
    assert!(
        header.contains("p = 2") && header.contains("p = 3") && !header.contains("p = 4"),
        "{header}"
    );
    // the columns are explained
    assert!(out.contains("lecture n (unit steps): "), "{out}");
}

#[test]
fn examples_have_help() {
    for name in ["cannon", "jacobi", "prefix_sums"] {
        let out = run(name, &["--help"]);
        assert!(out.contains("--ranks") && out.contains("--quick"), "{out}");
    }
}
