//! Runs the datatype examples: each verifies its own answer and exits non-zero if it is wrong.

use std::path::PathBuf;
use std::process::Command;

/// The build of example `name` next to this test binary.
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
        "{name} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn struct_send_delivers_the_lectures_struct() {
    let out = run("struct_send", &[]);
    assert!(out.contains("a = 3.14159, b = 2.71828, n = 2010"), "{out}");
}

#[test]
fn typemap_prints_the_lectures_maps() {
    let out = run("typemap", &[]);
    assert!(
        out.contains("{(f64, 0), (f64, 8), (f64, 16), (f64, 32), (f64, 40), (f64, 48)}"),
        "{out}"
    );
}

#[test]
fn pack_bench_prints_peer_compatible_json_lines() {
    let out = run("pack_bench", &["--quick"]);
    let figures: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect();
    assert_eq!(figures.len(), 2, "{out}");
    for (v, name) in figures
        .iter()
        .zip(["pack_vector_stride2_GBps", "pack_vector_4of8_GBps"])
    {
        assert_eq!(
            (v["peer"].as_str(), v["figure"].as_str()),
            (Some("rpar"), Some(name))
        );
        assert!(
            v["bytes"].is_u64() && v["value"].as_f64().unwrap() > 0.0,
            "{v}"
        );
    }
}
