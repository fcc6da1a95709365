//! Runs every example program at a small size: each verifies its own answer and exits non-zero
//! if it is wrong. `cargo test` builds the examples next to the test binaries.

mod common;

use common::run;

#[test]
fn hello_greets_from_every_rank() {
    // -p/--ranks as every example has it, and the rank count alone as before
    for args in [&["-p", "5"][..], &["--ranks", "5"], &["5"]] {
        let out = run("hello", args);
        assert_eq!(out.lines().count(), 5, "{args:?}: {out}");
        assert!(out.contains("hello from rank 4 of 5"), "{out}");
    }
}

/// The example programs, as cargo finds them: `examples/*.rs` and `examples/*/main.rs`
/// (`examples/common/` is their shared module, not an example).
fn every_example() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the examples folder")
        .filter_map(|entry| {
            let path = entry.expect("a folder entry").path();
            let name = path.file_stem()?.to_str()?.to_string();
            let single = path.extension().is_some_and(|e| e == "rs");
            (single || path.join("main.rs").is_file()).then_some(name)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn every_example_answers_help_with_its_usage() {
    let names = every_example();
    assert!(names.len() >= 15, "{names:?}");
    for name in names {
        for help in ["--help", "-h"] {
            let out = run(&name, &[help]);
            assert!(out.contains("Usage:"), "{name} {help}:\n{out}");
        }
    }
}

#[test]
fn examples_with_a_rank_count_take_it_as_p_and_ranks() {
    for name in [
        "nbody",
        "jacobi",
        "cannon",
        "prefix_sums",
        "manager_worker",
        "hello",
    ] {
        let out = run(name, &["--help"]);
        assert!(out.contains("-p, --ranks"), "{name}:\n{out}");
    }
}

#[test]
fn osu_prints_peer_compatible_json_lines() {
    let out = run("osu", &["--json", "--quick"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 9, "{out}");
    let mut point_to_point = std::collections::BTreeMap::<String, Vec<u64>>::new();
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).expect(line);
        assert_eq!(v["peer"], "rpar");
        assert!(
            v["figure"].is_string() && v["bytes"].is_u64() && v["value"].as_f64().unwrap() > 0.0,
            "{line}"
        );
        // byte for byte the form of peer_bench.c's printf: keys in its order, 3 decimals
        let ranks = v
            .get("ranks")
            .map_or(String::new(), |r| format!("\"ranks\":{r},"));
        let value = format!("{:.3}", v["value"].as_f64().unwrap());
        let printf = format!(
            "{{\"peer\":\"rpar\",\"figure\":{},{ranks}\"bytes\":{},\"value\":{value}}}",
            v["figure"], v["bytes"]
        );
        assert_eq!(line, printf);
        if v.get("ranks").is_none() {
            let figure = v["figure"].as_str().unwrap().to_string();
            point_to_point
                .entry(figure)
                .or_default()
                .push(v["bytes"].as_u64().unwrap());
        }
    }
    // the peers' sizes; the owned-Vec stream at the sizes of the bandwidth it is held against
    let stream = vec![65536, 1 << 20, 4 << 20];
    assert_eq!(point_to_point["latency_us"], [8, 1024, 65536, 1 << 20]);
    assert_eq!(point_to_point["bandwidth_GBps"], stream);
    assert_eq!(point_to_point["owned_vec_bandwidth_GBps"], stream);
}

#[test]
fn exchange_prints_the_figures_of_peer_exchange() {
    let out = run("exchange", &["--json", "--quick"]);
    let sizes: Vec<u64> = out
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect(line);
            assert_eq!(
                (v["peer"].as_str(), v["figure"].as_str()),
                (Some("rpar"), Some("exchange_us"))
            );
            assert!(v["value"].as_f64().unwrap() > 0.0, "{line}");
            v["bytes"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(sizes, [8, 1024, 65536, 1 << 20], "{out}");
    // one size, as a table
    let out = run("exchange", &["--quick", "--bytes", "4096"]);
    assert!(
        out.contains("exchange_us") && out.contains("4096 B"),
        "{out}"
    );
}

#[test]
fn small_calls_prints_the_figures_of_peer_small_calls() {
    let out = run("small_calls", &["--json", "--chunks", "3"]);
    let figures: Vec<String> = out
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect(line);
            assert_eq!(
                (v["peer"].as_str(), v["bytes"].as_u64()),
                (Some("rpar"), Some(8))
            );
            let (p10, median) = (v["value"].as_f64().unwrap(), v["median"].as_f64().unwrap());
            assert!(0.0 < p10 && p10 <= median, "{line}");
            v["figure"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        figures,
        ["pingpong_us", "bcast_us", "allreduce_us"],
        "{out}"
    );
}

#[test]
fn costmodel_predicts_simulates_and_checks_itself() {
    let out = run("costmodel", &["--quick"]);
    assert!(!out.is_empty());
}

#[test]
fn costmodel_redraws_the_committed_chart_from_its_table() {
    let svg = std::env::temp_dir().join(format!("rpar-costmodel-{}.svg", std::process::id()));
    let saved = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/costmodel.md");
    run(
        "costmodel",
        &[
            "--replot",
            saved,
            "--svg",
            svg.to_str().expect("a UTF-8 path"),
        ],
    );
    let chart = std::fs::read_to_string(&svg).expect("the chart");
    std::fs::remove_file(&svg).ok();
    // axis titles with units, and the four reference algorithms
    for text in [
        "ranks p",
        "time per call (µs)",
        "BinomialBcast",
        "RecursiveDoublingAllreduce",
    ] {
        assert!(chart.contains(text), "no {text:?} in the chart");
    }
}

#[test]
fn manager_worker_balances_uneven_tasks_and_checks_the_image() {
    let out = run("manager_worker", &["--quick"]);
    assert!(!out.is_empty());
}

#[test]
fn self_send_checks_every_value_blocking_and_not() {
    for args in [&["1000"][..], &["--nonblocking", "1000"]] {
        let out = run("self_send", args);
        assert!(out.contains("1000 self send+recv of 8 bytes"), "{out}");
    }
    assert!(!common::output("self_send", &["ten"]).status.success());
}

#[test]
fn examples_refuse_unknown_options() {
    for (name, args) in [
        ("costmodel", &["--no-such-option"][..]),
        ("struct_send", &["--bogus"]),
        ("osu", &["--jsn"]),
        ("osu", &["--page-offset", "5000"]),
        ("osu", &["--page-offset", "12"]),
        ("pack_bench", &["--rounds", "0"]),
    ] {
        let out = common::output(name, args);
        assert_eq!(out.status.code(), Some(2), "{name} {args:?}");
        // clap's error, which points at --help
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("error:") && stderr.contains("--help"),
            "{name} {args:?}: {stderr}"
        );
    }
}

#[test]
fn osu_prints_a_table_without_json() {
    let out = run("osu", &["--quick"]);
    let mut lines = out.lines();
    assert!(lines.next().unwrap().starts_with("peer"), "{out}");
    assert!(
        lines.any(|l| l.starts_with("rpar      latency_us")),
        "{out}"
    );
}
