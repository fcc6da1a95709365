//! Runs the datatype examples: each verifies its own answer and exits non-zero if it is wrong.

mod common;

use common::run;

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
    assert_eq!(figures.len(), 3, "{out}");
    // the memcpy in the same form as the peers' copy_GBps, so bench/table.py fills rpar's row
    for (v, name) in figures.iter().zip([
        "pack_vector_stride2_GBps",
        "pack_vector_4of8_GBps",
        "copy_GBps",
    ]) {
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
