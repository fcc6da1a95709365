//! The lecture's prefix sums and the sum-reduction isoefficiency demo.
//!
//! **Prefix sums** (Grama et al., "Introduction to Parallel Computing", section 4.3): n numbers
//! split in blocks over p ranks; every rank computes the prefix sums of its block, then adds the
//! sum of all blocks before it — from `exscan` of the block totals, or from the inclusive `scan`
//! minus its own total — with each algorithm (`Scan::Linear`, the chain; `Scan::RecursiveDoubling`,
//! the hypercube one). Every variant is checked against the sequential prefix sums and timed.
//!
//! **Isoefficiency** (the lecture's sum of n numbers, `rpar::cost::SumOfNumbers`): the measured
//! efficiency E = T_1 / (p T_p) of "sum the local block, then `reduce`" against n and p, next to
//! the prediction of the same model with this machine's constants (time per addition measured,
//! time per combine step = calibrated alpha + 8 beta): T_1 = n t_add,
//! T_p = (n/p) t_add + log2 p (t_step + t_add). Then the isoefficiency function: the n that holds
//! E at 0.5 for growing p, which grows as p log2 p, and the efficiency measured at that n.
//!
//! Run: `cargo run --release --example prefix_sums [-- -p 8 --n 1000000]` (`-p` sets the
//! ranks of the prefix sums and the largest of the isoefficiency table, which measures the
//! powers of two up to it; `--procs 1,2,4` lists the table's rank counts instead; `--quick`:
//! small sizes, for the test suite; `--help`: every option). Exits non-zero if any prefix sum
//! or reduction is wrong. Timings are printed, not checked: on a shared 2-core machine, p > 2
//! means ranks share cores, and the measured efficiency falls below the model's there. The
//! program prints what each column means and why a measured efficiency can pass 1.

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use common::{median, note_oversubscribed, Progress};
use rpar::cost::{calibrate_sizes, efficiency, ScalingModel, SumOfNumbers};
use rpar::prelude::*;

mod common;

/// Prefix sums with scan / exscan on each algorithm, and the sum-reduction isoefficiency demo;
/// every result checked against the sequential one.
#[derive(Parser, Debug)]
#[command(name = "prefix_sums")]
struct Args {
    /// Ranks of the prefix sums, and the largest of the isoefficiency table.
    #[arg(short = 'p', long, default_value_t = 4)]
    ranks: usize,
    /// Numbers to prefix-sum.
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    /// Rank counts of the isoefficiency table [default: 1, 2, 4, … up to --ranks, and --ranks]
    #[arg(long, value_delimiter = ',')]
    procs: Option<Vec<usize>>,
    /// Problem sizes of the isoefficiency table.
    #[arg(long, value_delimiter = ',', default_values_t = [1 << 10, 1 << 14, 1 << 18, 1 << 22])]
    sizes: Vec<usize>,
    /// Timed repetitions of each measurement (the median is kept).
    #[arg(long, default_value_t = 15)]
    reps: usize,
    /// Small run for the test suite (n = 10000, sizes up to 2^14, 5 repetitions).
    #[arg(long)]
    quick: bool,
}

/// The k-th input number: deterministic, small, irregular.
fn value(k: usize) -> u64 {
    (k as u64).wrapping_mul(2_654_435_761) % 1000
}

/// The start and length of part `k` of `n` items split into `parts` nearly equal parts.
fn split(n: usize, parts: usize, k: usize) -> (usize, usize) {
    let (base, extra) = (n / parts, n % parts);
    (k * base + k.min(extra), base + usize::from(k < extra))
}

/// How a rank learns the sum of the blocks before it.
#[derive(Clone, Copy, Debug)]
enum Offset {
    /// `exscan` of the block totals (rank 0 gets none: its offset is 0).
    Exscan,
    /// Inclusive `scan` of the block totals, minus the rank's own.
    Scan,
}

/// The rank's block of the prefix sums, computed with `how` on `algorithm`.
fn prefix_block(world: &Comm, block: &[u64], how: Offset, algorithm: Scan) -> Result<Vec<u64>> {
    let mut sums: Vec<u64> = block
        .iter()
        .scan(0u64, |acc, x| {
            *acc += x;
            Some(*acc)
        })
        .collect();
    let total = sums.last().copied().unwrap_or(0);
    let offset = match how {
        Offset::Exscan => world.using(algorithm).exscan(&total, Sum)?.unwrap_or(0),
        Offset::Scan => world.using(algorithm).scan(&total, Sum)? - total,
    };
    for s in &mut sums {
        *s += offset;
    }
    Ok(sums)
}

/// Runs one prefix-sum variant on `p` ranks: (whether it matches `expected`, median slowest-rank
/// time of the whole computation, median slowest-rank time of the collective alone).
fn prefix_variant(
    p: usize,
    n: usize,
    reps: usize,
    how: Offset,
    algorithm: Scan,
    expected: &[u64],
) -> Result<(bool, f64, f64)> {
    let per_rank = rpar::run(p, |world| {
        let (start, len) = split(n, p, world.rank());
        let block: Vec<u64> = (start..start + len).map(value).collect();
        let mut result = Vec::new();
        let (mut whole, mut collective) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            world.barrier()?;
            let t = Instant::now();
            result = prefix_block(&world, &block, how, algorithm)?;
            whole.push(world.allreduce(&t.elapsed().as_secs_f64(), Max)?);
            world.barrier()?;
            let t = Instant::now();
            match how {
                Offset::Exscan => _ = world.using(algorithm).exscan(&1u64, Sum)?,
                Offset::Scan => _ = world.using(algorithm).scan(&1u64, Sum)?,
            }
            collective.push(world.allreduce(&t.elapsed().as_secs_f64(), Max)?);
        }
        let ok = result[..] == expected[start..start + len];
        Ok((ok, median(whole), median(collective)))
    })?;
    let ok = per_rank.iter().all(|r| r.0);
    Ok((ok, per_rank[0].1, per_rank[0].2))
}

/// The lecture's sum-of-n-numbers model with this machine's constants: T_1 = n t_add,
/// T_p = (n/p) t_add + log2 p (t_step + t_add) — [`SumOfNumbers`] with its unit steps priced.
#[derive(Debug, Clone, Copy)]
struct MeasuredSum {
    /// Seconds per addition.
    t_add: f64,
    /// Seconds per combine step's message.
    t_step: f64,
}

impl ScalingModel for MeasuredSum {
    fn serial_time(&self, n: f64) -> f64 {
        n * self.t_add
    }

    fn parallel_time(&self, n: f64, p: usize) -> f64 {
        n / p as f64 * self.t_add + (p as f64).log2() * (self.t_step + self.t_add)
    }
}

/// Median time of the sequential sum of the first `n` numbers, and the sum.
fn serial_sum(n: usize, reps: usize) -> (f64, u64) {
    let data: Vec<u64> = (0..n).map(value).collect();
    let mut sum = 0;
    let times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            sum = std::hint::black_box(&data).iter().sum::<u64>();
            t.elapsed().as_secs_f64()
        })
        .collect();
    (median(times), sum)
}

/// Median slowest-rank time of "sum the local block, reduce to rank 0" for n numbers on p
/// ranks, and the sum rank 0 got.
fn parallel_sum(n: usize, p: usize, reps: usize) -> Result<(f64, u64)> {
    let per_rank = rpar::run(p, |world| {
        let (start, len) = split(n, p, world.rank());
        let block: Vec<u64> = (start..start + len).map(value).collect();
        let mut total = None;
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            world.barrier()?;
            let t = Instant::now();
            let local: u64 = std::hint::black_box(&block).iter().sum();
            total = world.reduce(&local, Sum, 0)?;
            times.push(world.allreduce(&t.elapsed().as_secs_f64(), Max)?);
        }
        Ok((median(times), total))
    })?;
    let sum = per_rank[0]
        .1
        .ok_or_else(|| Error::user("reduce gave rank 0 no result"))?;
    Ok((per_rank[0].0, sum))
}

/// Collects failed checks instead of stopping at the first.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }
}

fn prefix_sums(args: &Args, n: usize, reps: usize, failures: &mut Failures) -> Result<()> {
    let p = args.ranks;
    let mut acc = 0u64;
    let expected: Vec<u64> = (0..n)
        .map(|k| {
            acc += value(k);
            acc
        })
        .collect();
    println!("prefix sums of n = {n} numbers on p = {p} ranks (median of {reps}, slowest rank)");
    note_oversubscribed(p);
    println!(
        "{:<8} {:<18} {:>12} {:>16}  check",
        "call", "algorithm", "total us", "collective us"
    );
    for how in [Offset::Exscan, Offset::Scan] {
        for algorithm in [Scan::Linear, Scan::RecursiveDoubling] {
            let (ok, whole, collective) = prefix_variant(p, n, reps, how, algorithm, &expected)?;
            println!(
                "{:<8} {:<18} {:>12.1} {:>16.2}  {}",
                format!("{how:?}").to_lowercase(),
                format!("{algorithm:?}"),
                whole * 1e6,
                collective * 1e6,
                if ok { "ok" } else { "WRONG" }
            );
            failures.check(ok, || {
                format!("{how:?} with {algorithm:?}: wrong prefix sums")
            });
        }
    }
    Ok(())
}

/// The rank counts of the isoefficiency table: `--procs`, else 1, 2, 4, … below `--ranks`, and
/// `--ranks` itself.
fn table_procs(args: &Args) -> Vec<usize> {
    if let Some(procs) = &args.procs {
        return procs.clone();
    }
    let mut procs: Vec<usize> = std::iter::successors(Some(1), |p| Some(p * 2))
        .take_while(|&p| p < args.ranks)
        .collect();
    procs.push(args.ranks);
    procs
}

fn isoefficiency(args: &Args, sizes: &[usize], reps: usize, failures: &mut Failures) -> Result<()> {
    let table = table_procs(args);
    let largest = sizes.iter().copied().max().unwrap_or(1).max(1);
    let (t_largest, _) = serial_sum(largest, reps);
    let cal = rpar::run(2, |world| calibrate_sizes(&world, &[8, 64, 512, 4096], 20))?;
    let model = MeasuredSum {
        t_add: t_largest / largest as f64,
        t_step: cal[0].alpha + 8.0 * cal[0].beta,
    };
    println!();
    println!(
        "sum reduction: t_add = {:.3} ns, t_step = alpha + 8 beta = {:.3} us (calibrated)",
        model.t_add * 1e9,
        model.t_step * 1e6
    );
    note_oversubscribed(table.iter().copied().max().unwrap_or(1));
    println!("efficiency E = T_1 / (p T_p), measured / model:");
    let mut header = format!("{:>10}", "n");
    for p in &table {
        header += &format!("  {:>13}", format!("p = {p}"));
    }
    println!("{header}");
    let progress = Progress::new("prefix_sums", (sizes.len() * table.len()) as u64, false);
    for &n in sizes {
        let (t1, expected) = serial_sum(n, reps);
        let mut line = format!("{n:>10}");
        for &p in &table {
            progress.step(format!("sum of {n} numbers on {p} ranks"));
            let (tp, sum) = parallel_sum(n, p, reps)?;
            failures.check(sum == expected, || {
                format!("sum of {n} on {p} ranks: {sum}, expected {expected}")
            });
            let measured = efficiency(t1, tp, p);
            line += &format!("  {measured:>6.2} / {:<4.2}", model.efficiency(n as f64, p));
        }
        progress.suspend(|| println!("{line}"));
    }
    drop(progress);
    println!(
        "measured: T_1 the sequential sum, T_p the slowest rank's local sum + reduce, medians of {reps}."
    );
    println!(
        "model: T_1 = n t_add, T_p = (n/p) t_add + log2 p (t_step + t_add), t_add measured at"
    );
    println!(
        "  n = {largest}, t_step calibrated. A measured E above 1 (superlinear) is the memory"
    );
    println!(
        "  hierarchy: each rank's n/p numbers fit in its core's cache where all n do not, so a"
    );
    println!(
        "  rank adds faster per number than the sequential sum; below the model's, ranks that"
    );
    println!(
        "  share cores, a loaded machine, or a reduce that costs more than one message per step."
    );

    println!();
    println!("isoefficiency at E = 0.5: the n the model needs, and E measured there");
    println!(
        "{:>4} {:>12} {:>14} {:>10} {:>20}",
        "p", "n (model)", "n / p log2 p", "E meas.", "lecture n (unit steps)"
    );
    let mut rows = Vec::new();
    let mut procs: Vec<usize> = table.iter().copied().filter(|&p| p > 1).collect();
    let measured_up_to = procs.iter().copied().max().unwrap_or(1);
    procs.extend([8, 16, 32, 64].into_iter().filter(|&p| p > measured_up_to));
    for p in procs {
        let n = model.min_problem_size(0.5, p)? as usize;
        let measured = if p <= measured_up_to {
            let (t1, expected) = serial_sum(n, reps);
            let (tp, sum) = parallel_sum(n, p, reps)?;
            failures.check(sum == expected, || {
                format!("sum of {n} on {p} ranks: {sum}")
            });
            format!("{:.2}", efficiency(t1, tp, p))
        } else {
            "-".to_string()
        };
        let plogp = p as f64 * (p as f64).log2();
        rows.push(format!(
            "{p:>4} {n:>12} {:>14.1} {measured:>10} {:>20}",
            n as f64 / plogp,
            SumOfNumbers.min_problem_size(0.5, p)?
        ));
    }
    for row in rows {
        println!("{row}");
    }
    let ratio = (model.t_step + model.t_add) / model.t_add;
    println!(
        "n (model): the smallest n at which the model above gives E = 0.5 on p ranks; E meas.:"
    );
    println!("  measured there (\"-\": p above the table's ranks, not run).");
    println!(
        "n / p log2 p: constant, as isoefficiency W = K p log2 p says: here K = (t_step + t_add)"
    );
    println!("  / t_add = {ratio:.1}, a combine step costs as much as {ratio:.0} additions.");
    println!("lecture n (unit steps): the lecture's own count, an addition and a combine step one");
    println!("  time unit each (T_p = n/p + log2 p): n = p log2 p, K = 1.");
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (n, sizes, reps) = if args.quick {
        (10_000, vec![1 << 8, 1 << 14], 5)
    } else {
        (args.n, args.sizes.clone(), args.reps)
    };
    if args.ranks == 0 || reps == 0 || table_procs(&args).contains(&0) {
        eprintln!("error: ranks, procs and reps must be at least 1");
        return ExitCode::FAILURE;
    }
    let mut failures = Failures::default();
    let run = prefix_sums(&args, n, reps, &mut failures)
        .and_then(|()| isoefficiency(&args, &sizes, reps, &mut failures));
    if let Err(e) = run {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    if failures.0.is_empty() {
        println!("check: every prefix sum and reduction equals the sequential one: ok");
        ExitCode::SUCCESS
    } else {
        for f in &failures.0 {
            eprintln!("WRONG: {f}");
        }
        ExitCode::FAILURE
    }
}
