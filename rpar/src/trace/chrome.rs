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
    write(path, &document(ranks))
}

/// The ranks' events as the bytes of a trace file, for another process to merge (see
/// [`write_merged_trace`]).
#[cfg(feature = "mpi")]
pub(crate) fn chrome_trace_bytes(ranks: Vec<(usize, Vec<Event>)>) -> Vec<u8> {
    serde_json::to_vec(&document(ranks)).unwrap_or_default()
}

/// Writes the traces of several processes, each as [`chrome_trace_bytes`] made it, as one
/// file: their events side by side (their clocks aligned beforehand), one process name.
#[cfg(feature = "mpi")]
pub(crate) fn write_merged_trace(path: &Path, parts: &[Vec<u8>]) -> std::io::Result<()> {
    let mut events: Vec<Value> = Vec::new();
    for part in parts {
        let doc: Value = serde_json::from_slice(part)?;
        let Some(Value::Array(these)) = doc.get("traceEvents").cloned() else {
            continue;
        };
        let repeated = |e: &Value| !events.is_empty() && e["name"] == "process_name";
        let kept: Vec<Value> = these.into_iter().filter(|e| !repeated(e)).collect();
        events.extend(kept);
    }
    write(
        path,
        &json!({ "traceEvents": events, "displayTimeUnit": "ns" }),
    )
}

fn write(path: &Path, doc: &Value) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    serde_json::to_writer(&mut f, doc)?;
    f.flush()
}

/// The Chrome trace document of the ranks' events.
fn document(ranks: Vec<(usize, Vec<Event>)>) -> Value {
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
    json!({ "traceEvents": events, "displayTimeUnit": "ns" })
}
