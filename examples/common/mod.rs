//! What the example programs share: the median of timings, the note that ranks outnumber this
//! machine's cores (which every example that reports timing prints), progress for long runs,
//! and the simulated machine of `--simulate` (`machine.rs`). Not an example itself: cargo builds `examples/*.rs` and `examples/*/main.rs`; each
//! example declares `mod common;` (`#[path = "../common/mod.rs"]` from a folder).
//!
//! Progress: an `indicatif` bar on stderr when stderr is a terminal; under an MPI launcher,
//! which pipes every process's output (so whether the user watches a terminal is unknown), one
//! line per step on stderr from the main process, so that a job silent for minutes says what
//! it is doing; nothing otherwise (output to a file or a pipe, the test suite) or with
//! `--json`.

#![allow(dead_code)] // each example uses the part it needs

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub(crate) mod algorithms;
pub(crate) mod machine;

/// The name a benchmark's figures go under in the form of `shared/peers/run.sh`: `rpar-mpi` on
/// the MPI transport, `rpar` in-process.
pub(crate) fn peer() -> &'static str {
    match rpar::mpi_processes() {
        Some(_) => "rpar-mpi",
        None => "rpar",
    }
}

/// Ends a benchmark whose run returned `run` (each rank's figures): prints the first rank's with
/// `print` (given [`peer`]) on the main process only, or `example`'s error.
pub(crate) fn report<T>(
    example: &str,
    run: rpar::Result<Vec<T>>,
    print: impl FnOnce(T, &str),
) -> std::process::ExitCode {
    match run {
        Err(e) => {
            eprintln!("{example}: {e}");
            std::process::ExitCode::FAILURE
        }
        Ok(per_rank) => {
            if let Some(first) = per_rank
                .into_iter()
                .next()
                .filter(|_| rpar::is_main_process())
            {
                print(first, peer());
            }
            std::process::ExitCode::SUCCESS
        }
    }
}

/// The median of `samples` (the upper one of the two middle values for an even count); NaN for
/// none.
pub(crate) fn median(samples: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = samples.into_iter().collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The cores this process may use, as std sees them (`std::thread::available_parallelism`:
/// the CPU affinity mask and cgroup quota included); 1 if it cannot tell.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// When the ranks on this machine outnumber its cores: a note saying so, and what it does to
/// the timings (ranks take turns on the cores, so the speedup is at most the number of cores and
/// the efficiency at most cores / ranks). In-process all `ranks` are threads here; on the MPI
/// transport the launcher says how many of the job's processes it started on this machine
/// (MPICH's `MPI_LOCALNRANKS`, Open MPI's `OMPI_COMM_WORLD_LOCAL_SIZE`; unknown: no note).
/// `None` when every rank has a core.
pub(crate) fn oversubscribed(ranks: usize) -> Option<String> {
    let cores = cores();
    let here = if rpar::mpi_processes().is_some() {
        ["MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"]
            .iter()
            .find_map(|v| std::env::var(v).ok()?.parse::<usize>().ok())?
            .min(ranks)
    } else {
        ranks
    };
    (here > cores).then(|| {
        format!(
            "note: {here} ranks on {cores} core(s) take turns on them: the speedup is at most \
             {cores}, the efficiency at most {cores}/{here} = {:.2}",
            cores as f64 / here as f64
        )
    })
}

/// Prints [`oversubscribed`]'s note, if there is one, on the process that reports.
pub(crate) fn note_oversubscribed(ranks: usize) {
    if let Some(note) = oversubscribed(ranks) {
        if rpar::is_main_process() {
            println!("{note}");
        }
    }
}

/// Progress of a long run: `steps` steps, each announced with [`Progress::step`] as it starts.
#[derive(Debug)]
pub(crate) struct Progress {
    how: Shown,
    /// Steps started so far (atomic, so that a rank's closure can announce steps too).
    started: AtomicU64,
    steps: u64,
}

#[derive(Debug)]
enum Shown {
    /// An `indicatif` bar on stderr (a terminal).
    Bar(ProgressBar),
    /// A line per step on stderr (under an MPI launcher), headed by the program's name.
    Lines(&'static str),
    Nothing,
}

impl Progress {
    /// Progress of `steps` steps of the program `name`; shown only on the main process, never
    /// when `quiet` (`--json`), as a bar when stderr is a terminal, as lines under MPI.
    pub(crate) fn new(name: &'static str, steps: u64, quiet: bool) -> Progress {
        let how = if quiet || !rpar::is_main_process() {
            Shown::Nothing
        } else if std::io::stderr().is_terminal() {
            let style = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
            )
            .expect("a valid template");
            let bar = ProgressBar::new(steps).with_style(style);
            bar.set_prefix(name);
            bar.enable_steady_tick(Duration::from_millis(200));
            Shown::Bar(bar)
        } else if rpar::launched_by_mpi() {
            Shown::Lines(name)
        } else {
            Shown::Nothing
        };
        Progress {
            how,
            started: AtomicU64::new(0),
            steps,
        }
    }

    /// Starts the next step, `what` (the one before is done).
    pub(crate) fn step(&self, what: impl Into<String>) {
        let started = self.started.fetch_add(1, Ordering::Relaxed) + 1;
        match &self.how {
            Shown::Bar(bar) => {
                bar.set_position(started - 1);
                bar.set_message(what.into());
            }
            Shown::Lines(name) => {
                eprintln!("{name}: [{started}/{}] {}", self.steps, what.into());
            }
            Shown::Nothing => {}
        }
    }

    /// Runs `f` (which prints to stdout) with the bar hidden meanwhile, so that the two do not
    /// mix on a terminal.
    pub(crate) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.how {
            Shown::Bar(bar) => bar.suspend(f),
            _ => f(),
        }
    }
}

impl Drop for Progress {
    /// Every step is done (or the run failed): the bar goes.
    fn drop(&mut self) {
        if let Shown::Bar(bar) = &self.how {
            bar.finish_and_clear();
        }
    }
}

/// A chart's tick label for a number (a time, a rate, a rank count): at most 3 significant
/// digits, no trailing `.0`, thousands and millions as `k` and `M` (`1000000.0` is `1M`).
pub(crate) fn tick(v: &f64) -> String {
    let v = *v;
    let (scaled, unit) = match v.abs() {
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e4 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    format!("{}{unit}", significant(scaled))
}

/// A chart's tick label for a size in bytes: `8 B`, `64 KiB`, `1 MiB`.
pub(crate) fn tick_bytes(v: &f64) -> String {
    let v = *v;
    let (scaled, unit) = match v.abs() {
        a if a >= f64::from(1 << 30) => (v / f64::from(1 << 30), "GiB"),
        a if a >= f64::from(1 << 20) => (v / f64::from(1 << 20), "MiB"),
        a if a >= 1024.0 => (v / 1024.0, "KiB"),
        _ => (v, "B"),
    };
    format!("{} {unit}", significant(scaled))
}

/// `v` with at most 3 significant digits and no trailing zeros.
fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}
