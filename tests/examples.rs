//! Runs every example program at a small size: each verifies its own answer and exits non-zero
//! if it is wrong. `cargo test` builds the examples next to the test binaries.

use std::path::PathBuf;
use std::process::Command;

/// The debug build of example `name` (cargo puts examples in `target/<profile>/examples`).
fn example(name: &str) -> PathBuf {
    let mut dir = std::env::current_exe().expect("test binary path");
    dir.pop(); // deps/
    dir.pop();
    dir.join("examples").join(name)
}

fn run(name: &str, args: &[&str]) -> String {
    let path = example(name);
    let out = Command::new(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", path.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} {args:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn hello_greets_from_every_rank() {
    let out = run("hello", &["5"]);
    assert_eq!(out.lines().count(), 5);
    assert!(out.contains("hello from rank 4 of 5"));
}

#[test]
fn osu_prints_peer_compatible_json_lines() {
    let out = run("osu", &["--json", "--quick"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 9, "{out}");
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).expect(line);
        assert_eq!(v["peer"], "rpar");
        assert!(
            v["figure"].is_string() && v["bytes"].is_u64() && v["value"].as_f64().unwrap() > 0.0,
            "{line}"
        );
    }
}

#[test]
fn costmodel_predicts_simulates_and_checks_itself() {
    let out = run("costmodel", &["--quick"]);
    assert!(!out.is_empty());
}
