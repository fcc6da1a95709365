//! The lecture's manager-worker scheme for dynamic load balancing, on tasks of very uneven
//! cost: the rows of a Mandelbrot image (a row through the set costs `max_iter` iterations per
//! pixel, a row far outside it a handful).
//!
//! 1. The static block distribution (`rpar::pattern::static_blocks`): rank r computes rows
//!    r·h/p .. (r+1)·h/p. The view is off-centre, so the ranks whose blocks cross the set carry
//!    most of the work while the others idle.
//! 2. The manager-worker scheme (`rpar::pattern::ManagerWorker`): rank 0 hands out rows one (or
//!    `--chunk`) at a time to whichever worker asks; the load evens out, at the price of one
//!    rank that only manages.
//! 3. When the manager becomes the bottleneck: single pixels as tasks (a fraction of a
//!    microsecond each, on the image at a quarter of its width and height, at most 64
//!    iterations per pixel) and many workers — requests queue up in front of the manager and
//!    adding workers does not help — and how larger chunks cure it.
//!
//! Time and efficiency E = T1 / (p · Tp) are against a one-rank run of the same tasks. Each
//! manager-worker run gets a verdict from its own numbers: the manager keeps up (its workers
//! compute most of the time), it is the bottleneck (busy most of its time, requests queue), the
//! requests queue while the manager waits for a core (more ranks than cores), or a round trip
//! costs more than a task. Every image is checked against a sequential computation; the
//! program exits non-zero if one differs.
//!
//! Run: `cargo run --release --example manager_worker -- --help`; `--quick` for a small, fast
//! run (CI).

use clap::Parser;
use rpar::pattern::{static_blocks, FarmStats, ManagerWorker, Payload};
use std::process::ExitCode;
use std::time::Duration;

#[path = "../common/mod.rs"]
mod common;
mod mandelbrot;
use common::{cores, note_oversubscribed, oversubscribed, Progress};
use mandelbrot::{iterations, View};

/// Manager-worker against static blocks on Mandelbrot rows, and the manager as bottleneck;
/// every image checked against the sequential one.
#[derive(Parser, Debug)]
#[command(name = "manager_worker")]
struct Args {
    /// Ranks of the comparison (the manager-worker scheme uses one of them as its manager).
    #[arg(short = 'p', long, default_value_t = 4)]
    ranks: usize,
    /// Image width in pixels [default: 480, 120 with --quick]
    #[arg(long)]
    width: Option<usize>,
    /// Image height in pixels, one task per row [default: 288, 72 with --quick]
    #[arg(long)]
    height: Option<usize>,
    /// Iterations before a point counts as in the set [default: 600, 300 with --quick]
    #[arg(long)]
    max_iter: Option<u32>,
    /// Rows the manager hands out per request
    #[arg(long, default_value_t = 1)]
    chunk: usize,
    /// Most ranks in the bottleneck demo (it runs 2, 4, … up to this)
    #[arg(long, default_value_t = 8)]
    bottleneck_ranks: usize,
    /// Pixels per request in the bottleneck demo's cure [default: 256, 16 with --quick]
    #[arg(long)]
    big_chunk: Option<usize>,
    /// Timed runs of each configuration; the fastest counts [default: 2, 1 with --quick]
    #[arg(long)]
    repeat: Option<usize>,
    /// Small sizes and one run each: a check that finishes in well under a second
    #[arg(long)]
    quick: bool,
}

/// How the tasks are spread.
#[derive(Debug, Clone, Copy)]
enum Scheme {
    Static,
    ManagerWorker { chunk: usize },
}

impl Scheme {
    fn name(self) -> String {
        match self {
            Scheme::Static => "static blocks".into(),
            Scheme::ManagerWorker { chunk } => format!("manager-worker, chunk {chunk}"),
        }
    }
}

/// One farm's outcome: its results, stats, and the iterations each rank computed.
struct Measured<R> {
    results: Vec<R>,
    stats: FarmStats,
    iterations: Vec<u64>,
}

/// Runs the tasks on `ranks` ranks with `scheme`, `repeat` times, and keeps the fastest run.
/// `work` returns a task's result and its cost in iterations.
fn measure<T, R>(
    ranks: usize,
    scheme: Scheme,
    repeat: usize,
    tasks: impl Fn() -> Vec<T> + Sync,
    work: impl Fn(T) -> (R, u64) + Sync,
) -> rpar::Result<Measured<R>>
where
    T: Payload,
    R: Payload + rpar::RankResult,
{
    let mut best: Option<Measured<R>> = None;
    for _ in 0..repeat.max(1) {
        let mut outcomes = rpar::run(ranks, |world| {
            let mut iterations = 0u64;
            let counted = |task| {
                let (result, cost) = work(task);
                iterations += cost;
                Ok(result)
            };
            let farm = match scheme {
                Scheme::Static => static_blocks(&world, tasks(), counted)?,
                Scheme::ManagerWorker { chunk } => {
                    ManagerWorker::new()
                        .chunk(chunk)
                        .run(&world, tasks(), counted)?
                }
            };
            Ok((farm, iterations))
        })?;
        let iterations = outcomes.iter().map(|(_, i)| *i).collect();
        let (farm, _) = outcomes.swap_remove(0);
        let run = Measured {
            results: farm.results.expect("rank 0 holds the results"),
            stats: farm.stats.expect("rank 0 holds the stats"),
            iterations,
        };
        if best
            .as_ref()
            .is_none_or(|b| run.stats.elapsed < b.stats.elapsed)
        {
            best = Some(run);
        }
    }
    Ok(best.expect("at least one run"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `name: time, speedup, efficiency` against the one-rank time `t1`.
fn summary_line(name: &str, ranks: usize, stats: &FarmStats, t1: Duration) -> String {
    let speedup = t1.as_secs_f64() / stats.elapsed.as_secs_f64();
    format!(
        "{name:<30} p = {ranks:<3} {:>9.2} ms   speedup {speedup:>5.2}   efficiency {:>5.1}%",
        ms(stats.elapsed),
        100.0 * speedup / ranks as f64
    )
}

/// The per-rank load table of one farm.
fn print_load(m: &Measured<Vec<u32>>) {
    let total: u64 = m.iterations.iter().sum();
    println!("    rank  rows  share of iterations   busy ms  waiting ms");
    if let Some(manager) = &m.stats.manager {
        println!(
            "    {:>4}  manager: {} requests, serving {:.1}% of its time, {:.0}% found a queue",
            0,
            manager.requests,
            100.0 * manager.utilisation(),
            100.0 * manager.queued_fraction()
        );
    }
    for w in &m.stats.workers {
        let share = 100.0 * m.iterations[w.rank] as f64 / total.max(1) as f64;
        println!(
            "    {:>4}  {:>4}  {:>17.1}%  {:>8.2}  {:>10.2}",
            w.rank,
            w.tasks,
            share,
            ms(w.busy),
            ms(w.waiting)
        );
    }
    println!(
        "    load imbalance (busiest / mean busy time): {:.2}",
        m.stats.load_imbalance()
    );
}

/// Checks a farm's image against the sequential one; says what differs.
fn check<R: PartialEq>(what: &str, got: &[R], expected: &[R]) -> Result<(), String> {
    if got.len() != expected.len() {
        return Err(format!(
            "{what}: {} tasks' results, expected {}",
            got.len(),
            expected.len()
        ));
    }
    match got.iter().zip(expected).position(|(a, b)| a != b) {
        Some(i) => Err(format!(
            "{what}: task {i} differs from the sequential result"
        )),
        None => Ok(()),
    }
}

fn run(args: &Args) -> Result<(), String> {
    let (width, height, max_iter, repeat, big_chunk) = if args.quick {
        (120, 72, 300, 1, 16)
    } else {
        (480, 288, 600, 2, 256)
    };
    let view = View {
        width: args.width.unwrap_or(width),
        height: args.height.unwrap_or(height),
        max_iter: args.max_iter.unwrap_or(max_iter),
    };
    let repeat = args.repeat.unwrap_or(repeat);
    let big_chunk = args.big_chunk.unwrap_or(big_chunk);
    if args.ranks == 0 || args.bottleneck_ranks == 0 || args.chunk == 0 || big_chunk == 0 {
        return Err(
            "--ranks, --bottleneck-ranks, --chunk and --big-chunk must be at least 1".into(),
        );
    }
    println!(
        "Mandelbrot {}x{}, at most {} iterations per pixel, one task per row; {} core(s)",
        view.width,
        view.height,
        view.max_iter,
        cores()
    );
    note_oversubscribed(args.ranks);
    let expected = view.sequential();
    let rows = || (0..view.height as u32).collect::<Vec<u32>>();
    let row_work = |row: u32| {
        let r = view.row(row as usize);
        let c = iterations(&r);
        (r, c)
    };
    let rpar_err = |e: rpar::Error| e.to_string();

    // 1 and 2: one rank, static blocks, manager-worker.
    let one = measure(1, Scheme::Static, repeat, rows, row_work).map_err(rpar_err)?;
    check("one rank", &one.results, &expected)?;
    let t1 = one.stats.elapsed;
    println!("\n{}", summary_line("one rank", 1, &one.stats, t1));
    let schemes = [Scheme::Static, Scheme::ManagerWorker { chunk: args.chunk }];
    let mut measured = Vec::new();
    for scheme in schemes {
        let m = measure(args.ranks, scheme, repeat, rows, row_work).map_err(rpar_err)?;
        check(&scheme.name(), &m.results, &expected)?;
        println!("{}", summary_line(&scheme.name(), args.ranks, &m.stats, t1));
        measured.push((scheme, m));
    }
    for (scheme, m) in &measured {
        println!("\n  {} on {} ranks:", scheme.name(), args.ranks);
        print_load(m);
        if m.stats.manager.is_some() {
            println!("    {}", verdict(&m.stats, args.ranks).text());
        }
    }

    // 3: single pixels as tasks: the manager's service time now exceeds a task's.
    let pixels_view = View {
        width: view.width / 4,
        height: view.height / 4,
        max_iter: 64,
    };
    let pixels = || {
        (0..pixels_view.height as u32)
            .flat_map(|row| (0..pixels_view.width as u32).map(move |col| [col, row]))
            .collect::<Vec<[u32; 2]>>()
    };
    let pixel_work = |[col, row]: [u32; 2]| {
        let n = pixels_view.pixel(col as usize, row as usize);
        (n, u64::from(n))
    };
    let expected_pixels: Vec<u32> = expected_pixels(&pixels_view);
    println!(
        "\nWhen the manager becomes the bottleneck: {} single-pixel tasks ({}x{}, at most {} \
         iterations each)",
        pixels_view.width * pixels_view.height,
        pixels_view.width,
        pixels_view.height,
        pixels_view.max_iter
    );
    let one = measure(1, Scheme::Static, repeat, pixels, pixel_work).map_err(rpar_err)?;
    check("pixels, one rank", &one.results, &expected_pixels)?;
    let t1 = one.stats.elapsed;
    println!("{}", summary_line("one rank", 1, &one.stats, t1));
    let mut ranks_list: Vec<usize> = std::iter::successors(Some(2), |p| Some(p * 2))
        .take_while(|&p| p < args.bottleneck_ranks)
        .collect();
    ranks_list.push(args.bottleneck_ranks.max(2));
    let progress = Progress::new("manager_worker", 2 * ranks_list.len() as u64, false);
    // per chunk size: the fastest run's time, and its workers' waiting fraction
    let mut best: Vec<(usize, Duration, f64)> = Vec::new();
    for chunk in [1, big_chunk] {
        for &p in &ranks_list {
            let scheme = Scheme::ManagerWorker { chunk };
            progress.step(format!("{} on {p} ranks", scheme.name()));
            let m = measure(p, scheme, repeat, pixels, pixel_work).map_err(rpar_err)?;
            check(
                &format!("pixels, {}", scheme.name()),
                &m.results,
                &expected_pixels,
            )?;
            let manager = m.stats.manager.unwrap_or_default();
            let waiting = m.stats.worker_waiting_fraction();
            progress.suspend(|| {
                println!(
                    "{}   manager serving {:>3.0}%, queued {:>3.0}%, workers waiting {:>3.0}%: {}",
                    summary_line(&scheme.name(), p, &m.stats, t1),
                    100.0 * manager.utilisation(),
                    100.0 * manager.queued_fraction(),
                    100.0 * waiting,
                    verdict(&m.stats, p).short()
                )
            });
            match best.iter_mut().find(|b| b.0 == chunk) {
                Some(b) if b.1 <= m.stats.elapsed => {}
                Some(b) => *b = (chunk, m.stats.elapsed, waiting),
                None => best.push((chunk, m.stats.elapsed, waiting)),
            }
        }
    }
    drop(progress);
    if let [(_, small, small_wait), (_, big, big_wait)] = best[..] {
        println!(
            "Best of each: one pixel per request {:.2} ms (workers waiting {:.0}%), chunks of \
             {big_chunk} {:.2} ms (workers waiting {:.0}%): {}",
            ms(small),
            100.0 * small_wait,
            ms(big),
            100.0 * big_wait,
            if big < small {
                format!(
                    "{:.1}x faster with {big_chunk}x fewer requests.",
                    small.as_secs_f64() / big.as_secs_f64()
                )
            } else {
                "larger chunks did not help on this run.".to_string()
            }
        );
        if big > t1 {
            println!(
                "Both are slower than one rank: the whole image is {:.2} ms of work, less than \
                 starting the ranks and their round trips cost.",
                ms(t1)
            );
        }
    }
    Ok(())
}

/// What limited a manager-worker farm, read from its own numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Verdict {
    /// The workers compute most of the time (they wait under a fifth of it).
    KeepsUp { waiting: f64 },
    /// The manager is busy most of its time and most requests find a queue.
    Bottleneck { serving: f64, queued: f64 },
    /// Requests queue, yet the manager is mostly idle: with more ranks than cores it waits for a
    /// core (`cores` of them for `ranks` ranks), and its replies with it.
    WaitsForCore {
        serving: f64,
        queued: f64,
        ranks: usize,
        cores: usize,
    },
    /// Requests queue, yet the manager is mostly idle, every rank having a core: its replies
    /// are slow to arrive (waking the manager and the worker).
    SlowReplies { serving: f64, queued: f64 },
    /// No queue, but the workers still wait most of the time: a request's round trip costs more
    /// than the task it brings.
    RoundTrip { waiting: f64 },
}

fn verdict(stats: &FarmStats, ranks: usize) -> Verdict {
    let manager = stats.manager.unwrap_or_default();
    let (serving, queued, waiting) = (
        manager.utilisation(),
        manager.queued_fraction(),
        stats.worker_waiting_fraction(),
    );
    if waiting < 0.2 {
        Verdict::KeepsUp { waiting }
    } else if queued >= 0.5 && serving >= 0.5 {
        Verdict::Bottleneck { serving, queued }
    } else if queued >= 0.5 && oversubscribed(ranks).is_some() {
        Verdict::WaitsForCore {
            serving,
            queued,
            ranks,
            cores: cores(),
        }
    } else if queued >= 0.5 {
        Verdict::SlowReplies { serving, queued }
    } else {
        Verdict::RoundTrip { waiting }
    }
}

impl Verdict {
    /// A few words, for a row of the table.
    fn short(self) -> &'static str {
        match self {
            Verdict::KeepsUp { .. } => "manager keeps up",
            Verdict::Bottleneck { .. } => "manager is the bottleneck",
            Verdict::WaitsForCore { .. } => "requests queue while the manager waits for a core",
            Verdict::SlowReplies { .. } => "requests queue, the manager's replies are slow",
            Verdict::RoundTrip { .. } => "no queue, but a round trip costs more than a task",
        }
    }

    /// The verdict with its numbers and what to try.
    fn text(self) -> String {
        let pct = |x: f64| format!("{:.0}%", 100.0 * x);
        match self {
            Verdict::KeepsUp { waiting } => format!(
                "the manager keeps up: the workers wait for it {} of their time",
                pct(waiting)
            ),
            Verdict::Bottleneck { serving, queued } => format!(
                "the manager is the bottleneck: it serves {} of its time and {} of the requests \
                 find a queue; a larger --chunk means fewer requests",
                pct(serving),
                pct(queued)
            ),
            Verdict::WaitsForCore {
                serving,
                queued,
                ranks,
                cores,
            } => format!(
                "{} of the requests find a queue, yet the manager serves only {} of its time: \
                 {ranks} ranks share {cores} core(s), so the manager waits for a core and the \
                 workers for it; fewer ranks (-p {}: a core per worker) or a larger --chunk (fewer requests) help",
                pct(queued),
                pct(serving),
                cores + 1
            ),
            Verdict::SlowReplies { serving, queued } => format!(
                "{} of the requests find a queue, yet the manager serves only {} of its time: \
                 its replies are slow to arrive; a larger --chunk means fewer of them",
                pct(queued),
                pct(serving)
            ),
            Verdict::RoundTrip { waiting } => format!(
                "no queue, but the workers wait {} of their time: a request's round trip costs \
                 more than its task; a larger --chunk brings more work per trip",
                pct(waiting)
            ),
        }
    }
}

fn expected_pixels(view: &View) -> Vec<u32> {
    view.sequential().concat()
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => {
            println!("\nverified: every image equals the sequential computation");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("manager_worker: {e}");
            ExitCode::FAILURE
        }
    }
}
