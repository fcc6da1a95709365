//! Export of recorded events as a Chrome trace-event JSON file (the format of
//! chrome://tracing, which Perfetto opens): one track (thread) per rank, an `X` event per span,
//! and a flow (`s` … `f`) from each send to its receive.

use super::Event;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Writes the ranks' events to `path`.
pub(crate) fn write_chrome_trace(
    path: &Path,
    ranks: Vec<(usize, Vec<Event>)>,
) -> std::io::Result<()> {
    let mut events: Vec<Value> = Vec::new();
    events.push(json!({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "rpar"}}));
    for (rank, recorded) in ranks {
        events.push(json!({
            "name": "thread_name", "ph": "M", "pid": 0, "tid": rank,
            "args": {"name": format!("rank {rank}")}
        }));
        for e in recorded {
            events.push(match e {
                Event::Span {
                    name,
                    start_ns,
                    dur_ns,
                    args,
                } => {
                    let mut a = serde_json::Map::new();
                    if let Some(p) = args.peer {
                        a.insert("peer".into(), json!(p));
                    }
                    if let Some(t) = args.tag {
                        a.insert("tag".into(), json!(t));
                    }
                    if let Some(b) = args.bytes {
                        a.insert("bytes".into(), json!(b));
                    }
                    if let Some(alg) = args.algorithm {
                        a.insert("algorithm".into(), json!(alg));
                    }
                    a.insert("communicator".into(), json!(args.communicator));
                    json!({
                        "name": name, "cat": "rpar", "ph": "X", "pid": 0, "tid": rank,
                        "ts": us(start_ns), "dur": us(dur_ns), "args": a
                    })
                }
                Event::FlowOut { id, at_ns } => json!({
                    "name": "message", "cat": "message", "ph": "s", "id": id,
                    "pid": 0, "tid": rank, "ts": us(at_ns)
                }),
                Event::FlowIn { id, at_ns } => json!({
                    "name": "message", "cat": "message", "ph": "f", "bp": "e", "id": id,
                    "pid": 0, "tid": rank, "ts": us(at_ns)
                }),
            });
        }
    }
    let doc = json!({ "traceEvents": events, "displayTimeUnit": "ns" });
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    serde_json::to_writer(&mut f, &doc)?;
    f.flush()
}
