//! Draws the benchmark charts (SVG, with `plotters`) from the JSON lines that
//! `bench/compare.sh` leaves in `target/bench/`: latency and bandwidth against message size,
//! and each collective's time against the number of ranks, rpar next to MPICH and Open MPI.
//!
//! Axes are logarithmic; tick labels are sizes in B, KiB and MiB, times in microseconds and
//! rates in GB/s with at most three significant digits (`common::tick`, `common::tick_bytes`).
//!
//! Run: `cargo run --release --example bench_charts -- target/bench docs/charts` (the defaults);
//! `bench/results docs/charts` redraws the committed charts from the committed figures.

use clap::Parser;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

/// Draws the benchmark charts (SVG) from bench/compare.sh's JSON lines.
#[derive(Parser, Debug)]
#[command(name = "bench_charts")]
struct Args {
    /// The folder with peers.jsonl and rpar.jsonl (bench/compare.sh's output folder).
    #[arg(default_value = "target/bench")]
    input: PathBuf,
    /// The folder to write the charts to.
    #[arg(default_value = "docs/charts")]
    output: PathBuf,
}

/// How an axis's tick labels read.
#[derive(Clone, Copy)]
enum Ticks {
    /// Sizes: B, KiB, MiB.
    Bytes,
    /// Plain numbers (times, rates, ranks).
    Numbers,
}

impl Ticks {
    fn format(self) -> fn(&f64) -> String {
        match self {
            Ticks::Bytes => common::tick_bytes,
            Ticks::Numbers => common::tick,
        }
    }
}

type Series = BTreeMap<String, Vec<(f64, f64)>>;

/// (peer, figure, ranks, bytes, value) from the JSON lines of the files in `dir`; a figure
/// given several times (several rounds of `bench/compare.sh`) with its median.
fn load(dir: &Path) -> Vec<(String, String, u64, u64, f64)> {
    let mut values: BTreeMap<(String, String, u64, u64), Vec<f64>> = BTreeMap::new();
    for name in ["peers.jsonl", "rpar.jsonl"] {
        let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
            continue;
        };
        for line in text.lines().filter(|l| l.starts_with('{')) {
            let v: serde_json::Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(_) => continue,
            };
            let key = (
                v["peer"].as_str().unwrap_or("?").to_string(),
                v["figure"].as_str().unwrap_or("?").to_string(),
                v["ranks"].as_u64().unwrap_or(2),
                v["bytes"].as_u64().unwrap_or(0),
            );
            values
                .entry(key)
                .or_default()
                .push(v["value"].as_f64().unwrap_or(0.0));
        }
    }
    values
        .into_iter()
        .map(|((peer, figure, ranks, bytes), mut v)| {
            v.sort_by(f64::total_cmp);
            (peer, figure, ranks, bytes, v[v.len() / 2])
        })
        .collect()
}

fn chart(
    path: &Path,
    title: &str,
    (x_label, x_ticks): (&str, Ticks),
    y_label: &str,
    series: &Series,
) -> Result<(), Box<dyn std::error::Error>> {
    let points = series.values().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        return Ok(()); // nothing to draw
    }
    let root = SVGBackend::new(path, (720, 440)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut c = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(
            // sizes and rank counts are powers of two: ticks at powers of two
            (x0 * 0.8..x1 * 1.25).log_scale().base(2.0),
            (y0 * 0.8..y1 * 1.25).log_scale(),
        )?;
    let (x_format, y_format) = (x_ticks.format(), Ticks::Numbers.format());
    c.configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&x_format)
        .x_max_light_lines(0) // (between powers of two they would fall at odd sizes)
        .y_label_formatter(&y_format)
        .draw()?;
    let colors = [
        RGBColor(200, 60, 40),
        RGBColor(40, 90, 200),
        RGBColor(20, 150, 70),
        RGBColor(120, 60, 160),
    ];
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        c.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        c.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    c.configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()?;
    root.present()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { input, output } = Args::parse();
    std::fs::create_dir_all(&output)?;
    let rows = load(&input);
    if rows.is_empty() {
        return Err(format!(
            "no figures in {} (run bench/compare.sh first)",
            input.display()
        )
        .into());
    }
    let by_size = |figure: &str| -> Series {
        let mut s = Series::new();
        for (peer, f, ranks, bytes, v) in &rows {
            if f == figure && *ranks == 2 {
                s.entry(peer.clone()).or_default().push((*bytes as f64, *v));
            }
        }
        s
    };
    chart(
        &output.join("latency.svg"),
        "Ping-pong latency, 2 ranks (half a round trip)",
        ("message size", Ticks::Bytes),
        "latency (µs)",
        &by_size("latency_us"),
    )?;
    chart(
        &output.join("bandwidth.svg"),
        "Streaming bandwidth, 2 ranks",
        ("message size", Ticks::Bytes),
        "bandwidth (GB/s)",
        &by_size("bandwidth_GBps"),
    )?;
    for op in ["allreduce", "bcast", "allgather", "alltoall"] {
        for bytes in [8u64, 65536, 1 << 20] {
            let mut s = Series::new();
            for (peer, f, ranks, b, v) in &rows {
                if f == &format!("{op}_us") && *b == bytes {
                    s.entry(peer.clone()).or_default().push((*ranks as f64, *v));
                }
            }
            let file = output.join(format!("{op}_{bytes}B.svg"));
            chart(
                &file,
                &format!("{op}, {} per rank", common::tick_bytes(&(bytes as f64))),
                ("ranks", Ticks::Numbers),
                "time per call (µs)",
                &s,
            )?;
        }
    }
    println!("charts written to {}", output.display());
    Ok(())
}
