//! Tracing: a written Chrome trace loads as JSON with one track per rank, spans that nest, and a
//! receive for every send's flow arrow; the communication matrix counts what was sent.

use rpar::{Result, Universe};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn a_trace_has_every_rank_nested_spans_and_matched_flows() -> Result<()> {
    let path = std::env::temp_dir().join(format!("rpar-trace-test-{}.json", std::process::id()));
    Universe::new(4).trace(&path).run(|w| {
        let (r, p) = (w.rank(), w.size());
        let mut got = [0u32; 8];
        w.sendrecv(
            &[r as u32; 8][..],
            (r + 1) % p,
            1,
            &mut got[..],
            (r + p - 1) % p,
            1,
        )?;
        if r == 0 {
            for src in 1..p {
                w.recv::<u64>(src, 2)?;
            }
        } else {
            w.send(&vec![r as u64; 10_000][..], 0, 2)?;
        }
        w.barrier()?;
        Ok(())
    })?;
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    let events = doc["traceEvents"].as_array().expect("traceEvents");

    let tracks: BTreeSet<u64> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| e["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(tracks, (0..4).collect());

    // spans per rank: any two either nest or are disjoint
    let mut spans: BTreeMap<u64, Vec<(f64, f64, String)>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let ts = e["ts"].as_f64().unwrap();
        let end = ts + e["dur"].as_f64().unwrap();
        spans.entry(e["tid"].as_u64().unwrap()).or_default().push((
            ts,
            end,
            e["name"].as_str().unwrap().into(),
        ));
    }
    for (rank, list) in &spans {
        let names: BTreeSet<&str> = list.iter().map(|s| s.2.as_str()).collect();
        assert!(
            names.contains("sendrecv") && names.contains("barrier"),
            "rank {rank}: {names:?}"
        );
        for a in list {
            for b in list {
                let disjoint = a.1 <= b.0 || b.1 <= a.0;
                let nested = (a.0 <= b.0 && b.1 <= a.1) || (b.0 <= a.0 && a.1 <= b.1);
                assert!(disjoint || nested, "rank {rank}: {a:?} and {b:?} overlap");
            }
        }
    }
    assert_eq!(spans[&0].iter().filter(|s| s.2 == "recv").count(), 3);

    // every flow that starts also ends, on another track or the same
    let starts: BTreeSet<u64> = events
        .iter()
        .filter(|e| e["ph"] == "s")
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    let ends: BTreeSet<u64> = events
        .iter()
        .filter(|e| e["ph"] == "f")
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    assert!(!starts.is_empty());
    assert_eq!(starts, ends);
    Ok(())
}

#[test]
fn the_matrix_counts_point_to_point_and_collective_traffic() -> Result<()> {
    let report = Universe::new(3).record_matrix(true).run_report(|w| {
        if w.rank() == 1 {
            w.send(&[1u16; 50][..], 2, 0)?;
        }
        if w.rank() == 2 {
            w.recv::<u16>(1, 0)?;
        }
        Ok(())
    })?;
    let m = report.matrix.expect("matrix recorded");
    assert_eq!((m.messages(1, 2), m.bytes(1, 2)), (1, 100));
    assert_eq!(m.total_messages(), 1);
    let table = m.to_string();
    assert!(table.contains("100 (1)"), "{table}");
    Ok(())
}
