//! The cost model at work: calibrates this machine's transport (alpha, beta by ping-pong and
//! least squares; gamma by timing a local reduction), then prints the predicted
//! (alpha-beta-gamma formula), simulated (schedule on a fully connected network) and measured
//! times for p = 2..16 — for the reference algorithms, and for every algorithm of rpar's own
//! collectives that has a formula (bcast, reduce, allreduce, allgather, alltoall, scan, exscan,
//! gather, scatter, reduce-scatter, barrier), recorded from the library's code; rpar's
//! Gray-code circular shift on a hypercube against the lecture's q-shift; and the lecture's
//! predicted times on ring, torus and hypercube for p up to 4096, simulating what it can.
//!
//! Run: `cargo run --release --example costmodel [-- --svg chart.svg] [--quick]` (`--quick`:
//! p = 2..8, 3 measured calls, tables up to p = 1024, for the test suite; `--svg`: the chart of
//! predicted against measured times, drawn with `plotters`; `--help`). Verifies its own
//! consistency — prediction equals simulation wherever the model says it must (and, for the
//! one-port formulas, the documented relation), recording 4096 ranks takes under a second (not
//! with `--quick`: a speed target is for a run by hand, not the test suite), the
//! lecture's isoefficiency numbers — and exits non-zero if not. Measured times are printed,
//! not checked: on a shared 2-core machine 16 ranks are 8 threads per core.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::{median, Progress};
use plotters::prelude::*;
use rpar::cost::{calibrate, lecture, Network, Params, ScalingModel, SumOfNumbers, Switching};
use rpar::sim::{record_collective, Reference, Simulator};

mod common;

/// `println!` with the progress bar out of the way.
macro_rules! out {
    ($progress:expr, $($arg:tt)*) => {{
        let line = format!($($arg)*);
        $progress.suspend(|| println!("{line}"))
    }};
}

/// The cost model at work: calibration, predicted vs simulated vs measured times, the lecture's
/// predictions up to p = 4096; checks its own consistency.
#[derive(Parser, Debug)]
#[command(name = "costmodel")]
struct Args {
    /// Also draw predicted (dashed) against measured (solid) time over p, as an SVG file.
    #[arg(long, value_name = "PATH")]
    svg: Option<PathBuf>,
    /// Small run for the test suite (p = 2..8, 3 measured calls, tables up to p = 1024).
    #[arg(long)]
    quick: bool,
    /// Measure nothing: redraw the --svg chart from the first table of a saved run's output
    /// (docs/costmodel.md holds one).
    #[arg(long, value_name = "OUTPUT", requires = "svg")]
    replot: Option<PathBuf>,
}

/// One algorithm's (p, predicted, measured) points.
type Series = (Reference, Vec<(usize, f64, f64)>);

/// Collects failed checks instead of stopping at the first.
#[derive(Default)]
struct Checks(Vec<String>);

impl Checks {
    fn close(&mut self, what: &str, a: f64, b: f64) {
        if (a - b).abs() > 1e-9 * a.abs().max(b.abs()).max(1e-300) {
            self.0.push(format!("{what}: {a:e} != {b:e}"));
        }
    }
    fn that(&mut self, what: &str, ok: bool) {
        if !ok {
            self.0.push(what.to_string());
        }
    }
}

/// gamma: seconds per byte of a byte-wise wrapping sum (what the reference allreduce applies).
fn measure_gamma() -> f64 {
    let (mut acc, inc) = (vec![1u8; 1 << 20], vec![3u8; 1 << 20]);
    let reps = 20;
    let start = Instant::now();
    for _ in 0..reps {
        for (a, b) in acc.iter_mut().zip(&inc) {
            *a = a.wrapping_add(*b);
        }
        std::hint::black_box(&mut acc);
    }
    start.elapsed().as_secs_f64() / (reps * acc.len()) as f64
}

/// Median over repetitions of the slowest rank's time for one call of `alg`.
fn measure(alg: Reference, p: usize, bytes: usize, reps: usize) -> rpar::Result<f64> {
    let per_rank = rpar::run(p, |world| {
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            world.barrier()?;
            let start = Instant::now();
            alg.run(&world, bytes)?;
            times.push(start.elapsed().as_secs_f64());
        }
        Ok(times)
    })?;
    Ok(median((0..reps).map(|i| {
        per_rank.iter().map(|t| t[i]).fold(0.0, f64::max)
    })))
}

/// How the simulated schedule must relate to the formula on a fully connected network, for
/// the p measured here (powers of two; the test `sim_closed_forms.rs` covers p = 1..=33).
#[derive(Clone, Copy)]
enum Agreement {
    /// The same time.
    Exact,
    /// The formula's receiver takes its messages one at a time, the simulator's all at once:
    /// only `on_path(p)` of the formula's messages lie on the simulated critical path.
    OnePort(fn(usize) -> f64),
}

/// rpar's collectives next to their cost model: predicted, simulated from the library's own
/// recorded schedule, and measured through `Comm`.
fn library_collectives(
    params: &Params,
    (bytes, max_p, reps): (usize, usize, usize),
    checks: &mut Checks,
    progress: &Progress,
) -> rpar::Result<()> {
    out!(progress, "\nrpar's own collectives, {bytes} B per rank (simulated: the schedule the library's code records)");
    out!(
        progress,
        "{:<40} {:>3} {:>10} {:>10} {:>10}",
        "collective",
        "p",
        "predicted",
        "simulated",
        "measured"
    );
    for (collective, model, agreement) in library_cases() {
        progress.step(format!("{collective:?}"));
        for p in [2usize, 4, 8, 16].into_iter().filter(|&p| p <= max_p) {
            let predicted = model.time(params, p, bytes)?;
            let schedule = record_collective(p, bytes, collective)?;
            let simulated =
                Simulator::new(Network::fully_connected(p), Switching::CutThrough, *params)
                    .run(&schedule)?
                    .time;
            // the library's code sends what its cost formula says: the two agree exactly
            let what = format!("{collective:?} p={p}: predicted vs simulated");
            match agreement {
                Agreement::Exact => checks.close(&what, predicted, simulated),
                Agreement::OnePort(on_path) => {
                    let messages = model.cost(p, bytes)?.messages;
                    checks.close(&what, predicted / messages * on_path(p), simulated);
                }
            }
            let measured = measure_collective(collective, p, bytes, reps)?;
            out!(
                progress,
                "{:<40} {p:>3} {} {} {}",
                format!("{collective:?}"),
                us(predicted),
                us(simulated),
                us(measured)
            );
        }
    }
    Ok(())
}

/// rpar's collectives that have a cost formula, each with its formula and how the simulated
/// schedule relates to it.
fn library_cases() -> Vec<(rpar::sim::Collective, rpar::cost::Algorithm, Agreement)> {
    use rpar::cost::Algorithm as A;
    use rpar::sim::Collective as C;
    use rpar::{
        Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Scan,
        Scatter,
    };
    use Agreement::{Exact, OnePort};
    vec![
        (C::Bcast(Bcast::Binomial), A::BinomialBcast, Exact),
        (C::Reduce(Reduce::Binomial), A::BinomialReduce, Exact),
        (C::Allgather(Allgather::Ring), A::RingAllgather, Exact),
        (
            C::Allgather(Allgather::RecursiveDoubling),
            A::RecursiveDoublingAllgather,
            Exact,
        ),
        (C::Allgather(Allgather::Bruck), A::BruckAllgather, Exact),
        (
            C::Allreduce(Allreduce::RecursiveDoubling),
            A::RecursiveDoublingAllreduce,
            Exact,
        ),
        (C::Allreduce(Allreduce::Ring), A::RingAllreduce, Exact),
        (C::Alltoall(Alltoall::Pairwise), A::PairwiseAlltoall, Exact),
        (C::Alltoall(Alltoall::Bruck), A::BruckAlltoall, Exact),
        (C::Scan(Scan::Linear), A::LinearScan, Exact),
        (
            C::Scan(Scan::RecursiveDoubling),
            A::RecursiveDoublingScan,
            Exact,
        ),
        (C::Exscan(Scan::Linear), A::LinearScan, Exact),
        (
            C::Exscan(Scan::RecursiveDoubling),
            A::RecursiveDoublingExscan,
            Exact,
        ),
        // all p - 1 blocks arrive at once in the simulator
        (C::Gather(Gather::Linear), A::LinearGather, OnePort(|_| 1.0)),
        (C::Gather(Gather::Binomial), A::BinomialGather, Exact),
        (C::Scatter(Scatter::Linear), A::LinearScatter, Exact),
        (C::Scatter(Scatter::Binomial), A::BinomialScatter, Exact),
        (
            C::ReduceScatter(ReduceScatter::Pairwise),
            A::PairwiseReduceScatter,
            Exact,
        ),
        (
            C::ReduceScatter(ReduceScatter::Ring),
            A::RingReduceScatter,
            Exact,
        ),
        (
            C::ReduceScatter(ReduceScatter::RecursiveHalving),
            A::RecursiveHalvingReduceScatter,
            Exact,
        ),
        (
            C::Barrier(Barrier::Dissemination),
            A::DisseminationBarrier,
            Exact,
        ),
        (C::Barrier(Barrier::Tree), A::TreeBarrier, Exact),
        // p - 1 reports at once, then p - 1 releases one after another
        (
            C::Barrier(Barrier::Central),
            A::CentralBarrier,
            OnePort(|p| p as f64),
        ),
    ]
}

/// Median over `reps` calls of the slowest rank's time for one call of `collective` through
/// `Comm`, with `bytes` per rank as `record_collective` counts them.
fn measure_collective(
    collective: rpar::sim::Collective,
    p: usize,
    bytes: usize,
    reps: usize,
) -> rpar::Result<f64> {
    use rpar::sim::Collective as C;
    use rpar::Sum;
    let per_rank = rpar::run(p, |w| {
        let mut buf = vec![1u8; bytes * p];
        let mut out = vec![0u8; bytes * p];
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            w.barrier()?;
            let t0 = Instant::now();
            match collective {
                C::Bcast(a) => w.using(a).bcast(&mut buf[..bytes], 0)?,
                C::Reduce(a) => drop(w.using(a).reduce(&buf[..bytes], Sum, 0)?),
                C::Allgather(a) => w.using(a).allgather((&buf[..bytes], &mut out))?,
                C::Allreduce(a) => w
                    .using(a)
                    .allreduce(rpar::InPlace(&mut buf[..bytes]), Sum)?,
                C::Alltoall(a) => w.using(a).alltoall((&buf[..], &mut out))?,
                C::Scan(a) => drop(w.using(a).scan(&buf[..bytes], Sum)?),
                C::Exscan(a) => drop(w.using(a).exscan(&buf[..bytes], Sum)?),
                C::Gather(a) => w.using(a).gather((&buf[..bytes], &mut out), 0)?,
                C::Scatter(a) => w.using(a).scatter((&buf, &mut out[..bytes]), 0)?,
                C::ReduceScatter(a) => drop(w.using(a).reduce_scatter(&buf[..], Sum)?),
                C::Barrier(a) => w.using(a).barrier()?,
                C::Shift(a, q) => drop(w.using(a).shift_circular(&buf[..bytes], q)?),
            }
            times.push(t0.elapsed().as_secs_f64());
        }
        Ok(times)
    })?;
    Ok(median((0..reps).map(|i| {
        per_rank.iter().map(|t| t[i]).fold(0.0, f64::max)
    })))
}

/// Neighbour steps of an upward shift by `q` through the Gray-code embedding: 1 for the
/// shift by 2^0, 2 for each 2^k, k > 0.
fn gray_steps(q: usize) -> u32 {
    (0..usize::BITS)
        .filter(|k| q >> k & 1 == 1)
        .map(|k| if k == 0 { 1 } else { 2 })
        .sum()
}

/// rpar's Gray-code circular shift on a store-and-forward hypercube (ranks on the nodes of the
/// Gray-code ring embedding) against the lecture's q-shift: equal where shifting up, which the
/// library always does, is the cheaper direction.
fn gray_code_shift(params: &Params, checks: &mut Checks, progress: &Progress) -> rpar::Result<()> {
    use rpar::sim::Collective;
    let (d, m) = (4u32, 1024);
    let (p, net) = (1usize << d, Network::hypercube(d));
    let sf = Switching::StoreAndForward;
    out!(
        progress,
        "\nrpar's Gray-code q-shift, p = {p}, {m} B, store-and-forward hypercube; times in us"
    );
    out!(progress, "{:>3} {:>12} {:>12}", "q", "simulated", "lecture");
    for q in [1usize, 2, 3, 5, 8, 9, 12, 15] {
        let shift = Collective::Shift(rpar::Shift::GrayCode, q as isize);
        let s = record_collective(p, m, shift)?;
        let sim = Simulator::new(net, sf, *params)
            .with_placement((0..p).map(rpar::gray_code).collect())
            .run(&s)?;
        let formula = lecture::circular_shift(params, &net, sf, m, q)?;
        // the lecture takes the cheaper direction; the library shifts up by the bits of q
        if gray_steps(q) <= gray_steps(p - q) {
            checks.close(&format!("Gray-code shift q={q}"), formula, sim.time);
        } else {
            checks.that(
                &format!("Gray-code shift q={q} costs more upwards"),
                sim.time > formula,
            );
        }
        out!(
            progress,
            "{q:>3} {:>12.1} {:>12.1}",
            sim.time * 1e6,
            formula * 1e6
        );
    }
    Ok(())
}

fn us(t: f64) -> String {
    format!("{:10.2}", t * 1e6)
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let (Some(saved), Some(svg)) = (&args.replot, &args.svg) {
        return match saved_series(saved).and_then(|series| chart(svg, &series, 4096)) {
            Ok(()) => {
                println!("wrote {} from {}", svg.display(), saved.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match report(&args) {
        Ok(checks) if checks.0.is_empty() => {
            println!("\nall consistency checks passed");
            ExitCode::SUCCESS
        }
        Ok(checks) => {
            for c in &checks.0 {
                eprintln!("FAILED: {c}");
            }
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn report(args: &Args) -> rpar::Result<Checks> {
    let quick = args.quick;
    let mut checks = Checks::default();
    let (max_p, reps, max_log_p) = if quick { (8, 3, 10) } else { (16, 15, 12) };
    common::note_oversubscribed(max_p);
    let steps = 1 + Reference::ALL.len() + library_cases().len() + 1;
    let progress = Progress::new("costmodel", steps as u64, false);

    // 1. Calibration.
    progress.step("calibration");
    let cal = rpar::run(2, |world| calibrate(&world))?.remove(0);
    let gamma = measure_gamma();
    out!(
        progress,
        "calibration (ping-pong between 2 ranks, median of 20 round trips / 2):"
    );
    for (m, t) in &cal.samples {
        out!(progress, "  {m:>8} B  {} us", us(*t));
    }
    out!(
        progress,
        "  fit: alpha = {:.3} us, beta = {:.4} ns/B ({:.2} GB/s), R^2 = {:.4}; gamma = {:.4} ns/B",
        cal.alpha * 1e6,
        cal.beta * 1e9,
        1e-9 / cal.beta,
        cal.r_squared,
        gamma * 1e9
    );
    // A measurement is not a check: on a loaded machine the fit can come out with a slope or
    // intercept of the wrong sign. Say so, and go on with a physical floor.
    let beta = if cal.beta > 0.0 {
        cal.beta
    } else {
        out!(
            progress,
            "  (the fit's slope is not positive on this noisy run: using 0.05 ns/B instead)"
        );
        0.05e-9
    };
    let params = Params::new(cal.alpha.max(0.0), 0.0, beta, gamma);

    // 2. Predicted vs simulated vs measured, p = 2..16.
    let bytes = 4096;
    out!(
        progress,
        "\n{bytes} B per rank; times in us (measured: slowest rank, median of {reps} calls)"
    );
    out!(
        progress,
        "{:<28} {:>3} {:>10} {:>10} {:>10} {:>7}",
        "algorithm",
        "p",
        "predicted",
        "simulated",
        "measured",
        "meas/pred"
    );
    let mut series: Vec<Series> = Vec::new();
    for alg in Reference::ALL {
        progress.step(format!("{alg:?}"));
        let mut points = Vec::new();
        for p in 2..=max_p {
            let Ok(predicted) = alg.model().time(&params, p, bytes) else {
                continue;
            };
            if alg == Reference::RecursiveDoublingAllreduce && !p.is_power_of_two() {
                continue;
            }
            let schedule = alg.record(p, bytes)?;
            let sim = Simulator::new(Network::fully_connected(p), Switching::CutThrough, params)
                .run(&schedule)?;
            checks.close(
                &format!("{alg:?} p={p}: predicted vs simulated"),
                predicted,
                sim.time,
            );
            let measured = measure(alg, p, bytes, reps)?;
            out!(
                progress,
                "{:<28} {p:>3} {} {} {} {:>9.2}",
                format!("{alg:?}"),
                us(predicted),
                us(sim.time),
                us(measured),
                measured / predicted
            );
            points.push((p, predicted, measured));
        }
        series.push((alg, points));
    }

    // 2b. rpar's own collectives: the model's prediction, the simulation of the schedule that
    //     the library's code records (sim::record_collective), and the measured call.
    library_collectives(&params, (bytes, max_p, reps), &mut checks, &progress)?;
    progress.step("the lecture's closed forms, simulated up to p = 4096");

    // 3. The lecture's predictions on ring, torus and hypercube up to 4096 ranks, with an
    //    assumed per-hop time t_s = alpha / 10 (this machine has no network), simulated where the
    //    simulator runs the same program contention-free.
    let hw = Params::new(params.t_n, params.t_n / 10.0, params.t_c, params.gamma);
    // rpar's Gray-code shift against the lecture's q-shift on the hypercube.
    gray_code_shift(&hw, &mut checks, &progress)?;
    let m = 1024;
    out!(
        progress,
        "\nlecture closed forms, m = {m} B, t_s = alpha/10, cut-through; times in us (sim: simulated)"
    );
    out!(
        progress,
        "{:>5} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "p",
        "bcast ring",
        "bcast torus",
        "bcast cube",
        "sim cube",
        "allg ring",
        "allg cube",
        "a2a cube"
    );
    for d in (2..=max_log_p).step_by(2) {
        let p = 1usize << d;
        let (ring, torus, cube) = (
            Network::ring(p),
            Network::square_torus(p)?,
            Network::hypercube(d),
        );
        let ct = Switching::CutThrough;
        let bcast_cube = lecture::one_to_all_broadcast(&hw, &cube, ct, m)?;
        let sim = Simulator::new(cube, ct, hw).run(&Reference::BinomialBcast.record(p, m)?)?;
        checks.close(&format!("bcast hypercube p={p}"), bcast_cube, sim.time);
        let torus_sim =
            Simulator::new(torus, ct, hw).run(&Reference::BinomialBcast.record(p, m)?)?;
        let bcast_torus = lecture::one_to_all_broadcast(&hw, &torus, ct, m)?;
        checks.close(&format!("bcast torus p={p}"), bcast_torus, torus_sim.time);
        let allg_cube = lecture::all_to_all_broadcast(&hw, &cube, ct, m)?;
        let allg_sim = Simulator::new(cube, ct, hw)
            .run(&Reference::RecursiveDoublingAllgather.record(p, m / 64)?)?;
        let allg_small = lecture::all_to_all_broadcast(&hw, &cube, ct, m / 64)?;
        checks.close(
            &format!("allgather hypercube p={p}"),
            allg_small,
            allg_sim.time,
        );
        out!(
            progress,
            "{p:>5} {:>12.1} {:>12.1} {:>12.1} {:>12.1} {:>12.1} {:>12.1} {:>12.1}",
            lecture::one_to_all_broadcast(&hw, &ring, ct, m)? * 1e6,
            bcast_torus * 1e6,
            bcast_cube * 1e6,
            sim.time * 1e6,
            lecture::all_to_all_broadcast(&hw, &ring, ct, m)? * 1e6,
            allg_cube * 1e6,
            lecture::all_to_all_personalized(&hw, &cube, ct, m)? * 1e6,
        );
    }

    // 4. The same two allgathers on a ring network: recursive doubling's long-distance
    //    exchanges share links (contention), the ring algorithm's neighbour steps never do.
    out!(
        progress,
        "\nallgather of {m} B per rank on a ring network, cut-through, simulated; times in us"
    );
    out!(
        progress,
        "{:>5} {:>14} {:>14} {:>16} {:>16}",
        "p",
        "ring alg",
        "rec. doubling",
        "rd: formula",
        "rd: link wait"
    );
    for d in (2..=max_log_p - 2).step_by(2) {
        let p = 1usize << d;
        let sim = Simulator::new(Network::ring(p), Switching::CutThrough, hw);
        let ring = sim.run(&Reference::RingAllgather.record(p, m)?)?;
        let rd = sim.run(&Reference::RecursiveDoublingAllgather.record(p, m)?)?;
        checks.that(
            &format!("ring allgather on a ring p={p} is contention-free"),
            ring.link_wait == 0.0,
        );
        checks.close(
            &format!("ring allgather on a ring p={p}"),
            ring.time,
            lecture::all_to_all_broadcast(&hw, &Network::ring(p), Switching::CutThrough, m)?,
        );
        out!(
            progress,
            "{p:>5} {:>14.1} {:>14.1} {:>16.1} {:>16.1}",
            ring.time * 1e6,
            rd.time * 1e6,
            rpar::cost::Algorithm::RecursiveDoublingAllgather.time(&hw, p, m)? * 1e6,
            rd.link_wait * 1e6
        );
    }

    // 5. Recording scale.
    let start = Instant::now();
    let s4096 = Reference::RecursiveDoublingAllgather.record(4096, 8)?;
    let t4096 = start.elapsed().as_secs_f64();
    // --quick (debug builds in the test suite): the cheap binomial broadcast at 65536 ranks.
    let big = if quick {
        Reference::BinomialBcast
    } else {
        Reference::RecursiveDoublingAllgather
    };
    let start = Instant::now();
    let s65536 = big.record(65536, 8)?;
    let t65536 = start.elapsed().as_secs_f64();
    out!(
        progress,
        "\nrecording recursive-doubling allgather, p = 4096: {} messages in {:.1} ms; {big:?}, p = 65536: {} messages in {:.1} ms",
        s4096.messages(),
        t4096 * 1e3,
        s65536.messages(),
        t65536 * 1e3
    );
    // a speed target, checked only when run by hand (--quick is the test suite's run, on a
    // machine other jobs may load: 1.65 s there once)
    if !quick {
        checks.that("recording 4096 ranks takes under a second", t4096 < 1.0);
    }
    let expected = if quick { 65535 } else { 65536 * 16 };
    checks.that(
        "65536 ranks record all messages",
        s65536.messages() == expected,
    );
    if !quick {
        // The library's Gray-code shift by p - 1 (23 hops at p = 4096), whose ranks forward
        // what they receive: the recorder replays runs until each message's size is known.
        let shift = rpar::sim::Collective::Shift(rpar::Shift::GrayCode, 4095);
        let start = Instant::now();
        let s = rpar::sim::record_collective(4096, 8, shift)?;
        let took = start.elapsed().as_secs_f64();
        out!(
            progress,
            "recording rpar's Gray-code shift by 4095, p = 4096: {} messages in {:.1} ms",
            s.messages(),
            took * 1e3
        );
        checks.that(
            "recording the Gray-code shift of 4096 ranks takes under a second",
            took < 1.0,
        );
        checks.that(
            "the Gray-code shift records 23 hops",
            s.messages() == 4096 * 23,
        );
    }

    // 6. Isoefficiency of the lecture's sum of n numbers.
    let (n16, n32) = (
        SumOfNumbers.min_problem_size(0.5, 16)?,
        SumOfNumbers.min_problem_size(0.5, 32)?,
    );
    out!(
        progress,
        "\nsum of n numbers at E = 0.5: n >= {n16} on 16 ranks, n >= {n32} on 32 ranks ({}x)",
        n32 as f64 / n16 as f64
    );
    checks.that("n >= 64 at p = 16", n16 == 64);
    checks.that("16 -> 32 ranks grows n 2.5x", n32 * 2 == n16 * 5);

    drop(progress);
    if let Some(path) = &args.svg {
        chart(path, &series, bytes).map_err(|e| rpar::Error::user(e.to_string()))?;
        println!("wrote {}", path.display());
    }
    Ok(checks)
}

/// The reference algorithms' (p, predicted, measured) points from the first table of a saved
/// run's output: the rows after the `algorithm  p  predicted  simulated  measured` header, up
/// to the first line that is not one, times in microseconds.
fn saved_series(path: &Path) -> Result<Vec<Series>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    let mut lines = text.lines().skip_while(|l| !l.starts_with("algorithm "));
    lines
        .next()
        .ok_or("no table headed 'algorithm  p  predicted …'")?;
    let mut series: Vec<Series> = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split_whitespace().collect();
        let Some(alg) = Reference::ALL
            .into_iter()
            .find(|r| cells.first() == Some(&format!("{r:?}").as_str()))
        else {
            break;
        };
        let [_, p, predicted, _, measured, ..] = cells[..] else {
            return Err(format!("a short row: {line}").into());
        };
        let point = (
            p.parse()?,
            predicted.parse::<f64>()? * 1e-6,
            measured.parse::<f64>()? * 1e-6,
        );
        match series.iter_mut().find(|(a, _)| *a == alg) {
            Some((_, points)) => points.push(point),
            None => series.push((alg, vec![point])),
        }
    }
    if series.is_empty() {
        return Err("the table has no rows".into());
    }
    Ok(series)
}

/// The chart of predicted (dashed) against measured (solid) time over p for the reference
/// algorithms, time on a log scale in microseconds, drawn with `plotters`.
fn chart(path: &Path, series: &[Series], bytes: usize) -> Result<(), Box<dyn std::error::Error>> {
    let times = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().flat_map(|&(_, a, b)| [a * 1e6, b * 1e6]));
    let (lo, hi) = times.fold((f64::MAX, f64::MIN), |(l, h), t| (l.min(t), h.max(t)));
    let max_p = series
        .iter()
        .flat_map(|(_, pts)| pts.iter().map(|p| p.0))
        .max()
        .unwrap_or(2);
    if lo > hi {
        return Err("no measured points to draw".into());
    }
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut c = ChartBuilder::on(&root)
        .caption(
            format!(
                "Predicted (dashed) against measured (solid), {} per rank",
                common::tick_bytes(&(bytes as f64))
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(1.5f64..max_p as f64 + 0.5, (lo * 0.7..hi * 1.5).log_scale())?;
    c.configure_mesh()
        .x_desc("ranks p")
        .y_desc("time per call (µs)")
        .x_labels(max_p.min(16))
        .x_label_formatter(&|p| format!("{p:.0}"))
        .y_label_formatter(&common::tick)
        .draw()?;
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ];
    for (i, (alg, pts)) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        let predicted = pts.iter().map(|&(p, t, _)| (p as f64, t * 1e6));
        let measured = pts.iter().map(|&(p, _, t)| (p as f64, t * 1e6));
        c.draw_series(DashedLineSeries::new(
            predicted,
            6,
            4,
            color.stroke_width(2),
        ))?;
        c.draw_series(LineSeries::new(measured, color.stroke_width(2)))?
            .label(format!("{alg:?}"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()?;
    root.present()?;
    Ok(())
}
