//! The gravitational N-body problem (the lecture's flagship): N bodies, N/p per rank, each step
//! every rank needs every body's position, shared by an allgather of a derived datatype.
//!
//! Each rank owns a contiguous block of `c = ceil(N / p)` bodies (the last ranks may own fewer,
//! even none): rank r owns bodies `r c .. min((r + 1) c, N)`. Every rank sends exactly `c`
//! [`PointMass`] values per step, the unused slots padded with massless bodies, so each gather
//! is a plain `MPI_Allgather` of equal blocks, the message size `m = c * 32` bytes the cost
//! model needs, and the gathered array's first N entries are the bodies in global order. The
//! integrator is velocity Verlet (kick-drift-kick) with Plummer softening; the forces on body i
//! are summed over j in global order, in the sequential and the parallel program alike.
//!
//! Both of the lecture's gather schemes are selectable: `--scheme pairwise` (p - 1 steps; in
//! step s each rank sends its own block to the rank s ahead; model (p - 1)(alpha + m beta)),
//! `--scheme doubling` (recursive doubling, ceil(log2 p) steps with doubling messages; model
//! alpha log2 p + (p - 1) m beta), or `both` (the default, one after the other). alpha and beta
//! come from `rpar::cost::calibrate` (ping-pong between 2 ranks) unless given as options.
//!
//! Run: `cargo run --release --example nbody [-- --bodies 2048 --steps 20 -p 4]`
//! (`--quick`: 103 bodies, 4 steps, for the test suite; `--matrix`: print the communication
//! matrix of each run; `--help`: every option). Compares every body's final position with the
//! sequential run computed in the same program and exits non-zero if any differs by more than
//! 1e-9 relative error.
//!
//! The default is 4 ranks, so that the two schemes differ (3 pairwise steps against 2 doubling
//! ones; on 2 ranks both are one exchange). On a machine with fewer cores than ranks, ranks take
//! turns on the cores: the speedup cannot pass the number of cores, and the program says so.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use common::machine::MachineArgs;
use common::{median, note_oversubscribed, Progress};
use rpar::cost::{lecture, Params};
use rpar::prelude::*;
use rpar::{Allgather, CommMatrix};

mod common;

/// `println!` on the process that reports (on MPI every process computes the same report).
macro_rules! say {
    ($($arg:tt)*) => {
        if rpar::is_main_process() {
            println!($($arg)*);
        }
    };
}

/// Gravitational N-body simulation with the lecture's two allgather schemes, checked against
/// the sequential run.
#[derive(Parser, Debug)]
#[command(name = "nbody")]
struct Args {
    /// Number of bodies N (need not be a multiple of the rank count).
    #[arg(long, default_value_t = 2048)]
    bodies: usize,
    /// Number of time steps.
    #[arg(long, default_value_t = 20)]
    steps: usize,
    /// Number of ranks p.
    #[arg(short = 'p', long, default_value_t = 4)]
    ranks: usize,
    /// The allgather scheme that shares the positions each step.
    #[arg(long, value_enum, default_value_t = Scheme::Both)]
    scheme: Scheme,
    /// Print the communication matrix of each parallel run.
    #[arg(long)]
    matrix: bool,
    /// Small run for the test suite (103 bodies, 4 steps, short calibration).
    #[arg(long)]
    quick: bool,
    /// The machine of the cost model, and of `--simulate`.
    #[command(flatten)]
    machine: MachineArgs,
}

/// Which allgather scheme(s) to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Scheme {
    /// Pairwise exchange: p - 1 steps, one block each.
    Pairwise,
    /// Recursive doubling: ceil(log2 p) steps, messages doubling in size.
    Doubling,
    /// Both, one after the other.
    Both,
}

impl Scheme {
    /// The schemes to run, with their names and library algorithms.
    fn runs(self) -> Vec<(&'static str, Allgather)> {
        let pairwise = ("pairwise", Allgather::Pairwise);
        let doubling = ("doubling", Allgather::RecursiveDoubling);
        match self {
            Scheme::Pairwise => vec![pairwise],
            Scheme::Doubling => vec![doubling],
            Scheme::Both => vec![pairwise, doubling],
        }
    }
}

/// Gravitational constant (units where G = 1).
const G: f64 = 1.0;
/// Time step.
const DT: f64 = 1e-3;
/// Plummer softening length squared (bodies are spread over the unit ball).
const EPS2: f64 = 0.05 * 0.05;
/// The largest relative position error accepted against the sequential run.
const TOLERANCE: f64 = 1e-9;

/// What each rank shares every step: a body's position and mass, sent as one derived datatype
/// (a struct of `[f64; 3]` and `f64`, 32 bytes).
#[derive(Datatype, Clone, Copy, Debug, Default, PartialEq)]
struct PointMass {
    pos: [f64; 3],
    mass: f64,
}

/// A body's full state; only the owning rank knows its velocity, so it is never sent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Body {
    pos: [f64; 3],
    vel: [f64; 3],
    mass: f64,
}

impl Body {
    fn point_mass(&self) -> PointMass {
        PointMass {
            pos: self.pos,
            mass: self.mass,
        }
    }
}

/// A small deterministic generator (SplitMix64), so every rank builds the same initial state.
struct SplitMix(u64);

impl SplitMix {
    /// A uniform number in [-1, 1).
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// N bodies of total mass 1 spread over the unit ball, slowly rotating about the z axis.
fn initial_bodies(n: usize) -> Vec<Body> {
    let mut rng = SplitMix(2010);
    let mut bodies = Vec::with_capacity(n);
    while bodies.len() < n {
        let pos = [rng.next(), rng.next(), rng.next()];
        if pos.iter().map(|x| x * x).sum::<f64>() > 1.0 {
            continue;
        }
        let jitter = [rng.next(), rng.next(), rng.next()];
        let vel = [
            -0.5 * pos[1] + 0.05 * jitter[0],
            0.5 * pos[0] + 0.05 * jitter[1],
            0.05 * jitter[2],
        ];
        bodies.push(Body {
            pos,
            vel,
            mass: 1.0 / n as f64,
        });
    }
    bodies
}

/// The accelerations of `own` (global indices `first..`) from all of `sources`, each summed
/// over the sources in order (the same order in every run, so the results are reproducible).
fn accelerations(own: &[Body], first: usize, sources: &[PointMass]) -> Vec<[f64; 3]> {
    own.iter()
        .enumerate()
        .map(|(k, body)| {
            let mut a = [0.0; 3];
            for (j, src) in sources.iter().enumerate() {
                if j == first + k {
                    continue;
                }
                let d = [
                    src.pos[0] - body.pos[0],
                    src.pos[1] - body.pos[1],
                    src.pos[2] - body.pos[2],
                ];
                let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS2;
                let s = G * src.mass / (r2 * r2.sqrt());
                for (ai, di) in a.iter_mut().zip(d) {
                    *ai += s * di;
                }
            }
            a
        })
        .collect()
}

/// Kinetic and potential energy of `own` (the potential halved: each pair is seen from both
/// sides, the sum over all ranks counts it once).
fn energy(own: &[Body], first: usize, sources: &[PointMass]) -> [f64; 2] {
    let mut e = [0.0; 2];
    for (k, body) in own.iter().enumerate() {
        e[0] += 0.5 * body.mass * body.vel.iter().map(|v| v * v).sum::<f64>();
        for (j, src) in sources.iter().enumerate() {
            if j != first + k {
                let r2: f64 = (0..3).map(|i| (src.pos[i] - body.pos[i]).powi(2)).sum();
                e[1] -= 0.5 * G * body.mass * src.mass / (r2 + EPS2).sqrt();
            }
        }
    }
    e
}

/// Half a kick (v += a dt / 2) for every body.
fn kick(own: &mut [Body], acc: &[[f64; 3]]) {
    for (body, a) in own.iter_mut().zip(acc) {
        for (v, ai) in body.vel.iter_mut().zip(a) {
            *v += 0.5 * DT * ai;
        }
    }
}

/// A drift (x += v dt) for every body.
fn drift(own: &mut [Body]) {
    for body in own {
        for (x, v) in body.pos.iter_mut().zip(body.vel) {
            *x += DT * v;
        }
    }
}

/// One rank's block: global index of its first body and how many it owns (`chunk` slots).
fn block(rank: usize, chunk: usize, n: usize) -> (usize, usize) {
    let first = (rank * chunk).min(n);
    (first, (first + chunk).min(n) - first)
}

/// What one rank reports: its bodies' final positions, the time of all steps, the time of each
/// step's gather, the times of the same gather repeated alone after the run, and the total
/// energy before and after (summed over all ranks).
struct RankResult {
    positions: Vec<[f64; 3]>,
    total: f64,
    gathers: Vec<f64>,
    alone: Vec<f64>,
    energy: (f64, f64),
}

/// A rank's outcome travels to the other processes field by field (the MPI transport).
impl rpar::RankResult for RankResult {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        (self.total, self.energy).send_result(link)?;
        self.positions.send_result(link)?;
        self.gathers.send_result(link)?;
        self.alone.send_result(link)
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        let (total, energy) = rpar::RankResult::recv_result(link)?;
        Ok(RankResult {
            total,
            energy,
            positions: rpar::RankResult::recv_result(link)?,
            gathers: rpar::RankResult::recv_result(link)?,
            alone: rpar::RankResult::recv_result(link)?,
        })
    }
}

/// What a parallel run computes: `n` bodies for `steps` steps, the positions shared with
/// `algorithm`, then that gather `reps` times alone.
#[derive(Debug, Clone, Copy)]
struct Work {
    n: usize,
    steps: usize,
    algorithm: Allgather,
    reps: usize,
}

/// The parallel simulation on this rank.
fn simulate(world: &Comm, work: Work) -> Result<RankResult> {
    let Work {
        n,
        steps,
        algorithm,
        reps,
    } = work;
    let p = world.size();
    let chunk = n.div_ceil(p);
    let (first, count) = block(world.rank(), chunk, n);
    let all = initial_bodies(n);
    let mut own = all[first..first + count].to_vec();
    // The gathered positions: p blocks of `chunk`, padding after the N real bodies.
    let mut gathered = vec![PointMass::default(); chunk * p];
    for (g, b) in gathered.iter_mut().zip(&all) {
        *g = b.point_mass();
    }
    let mut local = vec![PointMass::default(); chunk];
    let e0 = world.allreduce(&energy(&own, first, &gathered[..n]), Sum)?;

    let mut gathers = Vec::with_capacity(steps);
    world.barrier()?;
    let start = Instant::now();
    let mut acc = accelerations(&own, first, &gathered[..n]);
    for _ in 0..steps {
        kick(&mut own, &acc);
        drift(&mut own);
        for (slot, body) in local.iter_mut().zip(&own) {
            *slot = body.point_mass();
        }
        let t = Instant::now();
        world
            .using(algorithm)
            .allgather((&local[..], &mut gathered))?;
        gathers.push(t.elapsed().as_secs_f64());
        acc = accelerations(&own, first, &gathered[..n]);
        kick(&mut own, &acc);
    }
    let total = start.elapsed().as_secs_f64();

    let e1 = world.allreduce(&energy(&own, first, &gathered[..n]), Sum)?;

    // The same gather alone, every rank starting together after a barrier.
    let mut alone = Vec::with_capacity(reps);
    for _ in 0..reps {
        world.barrier()?;
        let t = Instant::now();
        world
            .using(algorithm)
            .allgather((&local[..], &mut gathered))?;
        alone.push(t.elapsed().as_secs_f64());
    }
    Ok(RankResult {
        positions: own.iter().map(|b| b.pos).collect(),
        total,
        gathers,
        alone,
        energy: (e0[0] + e0[1], e1[0] + e1[1]),
    })
}

/// The sequential reference: final positions, time and (initial, final) energy.
fn sequential(n: usize, steps: usize) -> (Vec<[f64; 3]>, f64, (f64, f64)) {
    let mut bodies = initial_bodies(n);
    let masses = |b: &[Body]| b.iter().map(Body::point_mass).collect::<Vec<_>>();
    let total_energy = |b: &[Body]| {
        let e = energy(b, 0, &masses(b));
        e[0] + e[1]
    };
    let e0 = total_energy(&bodies);
    let start = Instant::now();
    let mut acc = accelerations(&bodies, 0, &masses(&bodies));
    for _ in 0..steps {
        kick(&mut bodies, &acc);
        drift(&mut bodies);
        acc = accelerations(&bodies, 0, &masses(&bodies));
        kick(&mut bodies, &acc);
    }
    let time = start.elapsed().as_secs_f64();
    let e1 = total_energy(&bodies);
    (bodies.iter().map(|b| b.pos).collect(), time, (e0, e1))
}

/// One parallel run's summary.
struct Run {
    positions: Vec<[f64; 3]>,
    /// Seconds per step of the slowest rank.
    step: f64,
    /// Seconds per gather in the steps: per step the fastest rank's gather (the last to arrive
    /// waits least for the others' computation), then the median over the steps.
    gather: f64,
    /// Seconds per gather alone (after a barrier, what the cost model describes): per
    /// repetition the slowest rank, then the median over the repetitions.
    alone: f64,
    energy: (f64, f64),
    matrix: Option<CommMatrix>,
}

/// Runs the simulation on `p` ranks (and its gathers alone after it) and summarizes it.
fn run_parallel(p: usize, work: Work, matrix: bool) -> Result<Run> {
    let Work { steps, reps, .. } = work;
    let report = Universe::new(p)
        .record_matrix(matrix)
        .run_report(|world| simulate(&world, work))?;
    let ranks = report.results;
    let slowest = ranks.iter().map(|r| r.total).fold(0.0, f64::max);
    // Per sample i, the fastest or slowest rank's time times(r)[i].
    let across = |count: usize, times: fn(&RankResult) -> &[f64], fastest: bool| {
        (0..count)
            .map(|i| {
                let each = ranks.iter().map(|r| times(r)[i]);
                if fastest {
                    each.fold(f64::INFINITY, f64::min)
                } else {
                    each.fold(0.0, f64::max)
                }
            })
            .collect::<Vec<_>>()
    };
    Ok(Run {
        positions: ranks
            .iter()
            .flat_map(|r| r.positions.iter().copied())
            .collect(),
        step: slowest / steps as f64,
        gather: median(across(steps, |r| &r.gathers, true)),
        alone: median(across(reps, |r| &r.alone, false)),
        energy: ranks[0].energy,
        matrix: report.matrix,
    })
}

/// The largest relative difference |x - y| / |y| over all bodies' positions.
fn max_relative_error(got: &[[f64; 3]], want: &[[f64; 3]]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(x, y)| {
            let diff = (0..3).map(|i| (x[i] - y[i]).powi(2)).sum::<f64>().sqrt();
            let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
            diff / norm.max(f64::MIN_POSITIVE)
        })
        .fold(0.0, f64::max)
}

/// One line of the table: the run's name, seven figures, its error and energy drift.
fn print_row(cells: [String; 8], tail: [String; 2]) {
    let [name, rest @ ..] = cells;
    let mut line = format!("{name:<10}");
    for (cell, width) in rest.iter().zip([5, 9, 8, 5, 10, 9, 9]) {
        line.push_str(&format!(" {cell:>width$}"));
    }
    say!("{line} {:>8} {:>9}", tail[0], tail[1]);
}

/// |E_end - E_0| / |E_0|.
fn drift_of((e0, e1): (f64, f64)) -> f64 {
    ((e1 - e0) / e0).abs()
}

fn model_params(args: &Args, progress: &Progress) -> Result<Params> {
    if args.machine.alpha.is_none() {
        progress.step("calibrating alpha and beta by ping-pong on 2 ranks");
    }
    let (params, line) = args.machine.params(args.quick)?;
    progress.suspend(|| say!("{line}"));
    Ok(params)
}

fn main() -> ExitCode {
    let args = Args::parse();
    match report(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs everything and prints the table; `Ok(false)` if a parallel result is wrong.
fn report(args: &Args) -> Result<bool> {
    let (n, steps) = if args.quick {
        (103, 4)
    } else {
        (args.bodies, args.steps)
    };
    let p = args.ranks;
    if n == 0 || steps == 0 || p == 0 {
        return Err(Error::user(format!(
            "need at least 1 body, 1 step and 1 rank, got --bodies {n} --steps {steps} --ranks {p}"
        )));
    }
    if !args.machine.simulate.is_empty() {
        return predict(args, n, steps);
    }
    let chunk = n.div_ceil(p);
    let m = chunk * std::mem::size_of::<PointMass>();
    say!(
        "N-body: {n} bodies, {steps} steps of dt = {DT}, softening {}, velocity Verlet",
        EPS2.sqrt()
    );
    say!(
        "{p} ranks, {chunk} bodies per rank ({} padding slots), {m} B per rank per gather",
        chunk * p - n
    );
    note_oversubscribed(p);
    let calibrating = u64::from(args.machine.alpha.is_none());
    let progress = Progress::new(
        "nbody",
        calibrating + 2 + args.scheme.runs().len() as u64,
        false,
    );
    let params = model_params(args, &progress)?;

    let reps = if args.quick { 3 } else { 50 };
    progress.step("the sequential run");
    let (reference, seq_time, seq_energy) = sequential(n, steps);
    progress.step("the one-rank run");
    let one = run_parallel(
        1,
        Work {
            n,
            steps,
            algorithm: Allgather::Pairwise,
            reps,
        },
        false,
    )?;
    let mut worst = max_relative_error(&one.positions, &reference);
    let mut ok = one.positions.len() == n && worst <= TOLERANCE;
    say!();
    print_row(
        [
            "run",
            "ranks",
            "step ms",
            "speedup",
            "eff",
            "gather us",
            "alone us",
            "model us",
        ]
        .map(String::from),
        ["rel err", "E drift"].map(String::from),
    );
    let dash = || "-".to_string();
    print_row(
        [
            "sequential".into(),
            "1".into(),
            format!("{:.3}", seq_time * 1e3 / steps as f64),
            dash(),
            dash(),
            dash(),
            dash(),
            dash(),
        ],
        [dash(), format!("{:.2e}", drift_of(seq_energy))],
    );
    let mut runs = vec![("one rank", 1, 0.0, worst, one)];
    let mut matrices = Vec::new();
    for (name, algorithm) in args.scheme.runs() {
        progress.step(format!("{name} on {p} ranks"));
        let mut run = run_parallel(
            p,
            Work {
                n,
                steps,
                algorithm,
                reps,
            },
            args.matrix,
        )?;
        let err = max_relative_error(&run.positions, &reference);
        ok &= run.positions.len() == n && err <= TOLERANCE;
        worst = worst.max(err);
        let model = match algorithm {
            Allgather::Pairwise => lecture::nbody_gather_ring(&params, p, m),
            _ => lecture::nbody_gather_doubling(&params, p, m),
        };
        if let Some(matrix) = run.matrix.take() {
            matrices.push((name, matrix));
        }
        runs.push((name, p, model, err, run));
    }
    drop(progress);
    let t1 = runs[0].4.step;
    for (name, ranks, model, err, run) in &runs {
        print_row(
            [
                name.to_string(),
                ranks.to_string(),
                format!("{:.3}", run.step * 1e3),
                format!("{:.2}", rpar::cost::speedup(t1, run.step)),
                format!("{:.2}", rpar::cost::efficiency(t1, run.step, *ranks)),
                format!("{:.2}", run.gather * 1e6),
                format!("{:.2}", run.alone * 1e6),
                format!("{:.2}", model * 1e6),
            ],
            [
                format!("{err:.1e}"),
                format!("{:.2e}", drift_of(run.energy)),
            ],
        );
    }
    say!("step ms: time per time step (slowest rank); speedup, eff: against the one-rank run,");
    say!("  T1 / Tp and T1 / (p Tp).");
    say!("gather us: per step the fastest rank's allgather (it waits least for the others'");
    say!("  computation), median over the steps; alone us: the same allgather repeated after a");
    say!("  barrier, {reps} times, slowest rank, median: what the cost model describes.");
    if common::oversubscribed(p).is_some() {
        say!(
            "  Here ranks outnumber cores: in the steps a rank's gather also waits while the ranks"
        );
        say!("  it needs compute, or wait for a core, so gather us can far exceed alone us.");
    }
    say!("model us: the lecture's gather time with m = {m} B per rank and the alpha, beta above:");
    say!("  (p-1)(alpha + m beta) for pairwise, alpha log2 p + (p-1) m beta for doubling.");
    say!("rel err: the largest |x - x_seq| / |x_seq| over the bodies' final positions (0: the");
    say!("  same bits). E drift: |E_end - E_0| / |E_0| of the total energy, the integrator's");
    say!("  error (dt = {DT}), the same in every row since every run computes the same numbers.");
    for (name, matrix) in matrices {
        say!("\ncommunication matrix of the {name} run (from \\ to):\n{matrix}");
    }
    say!();
    if ok {
        say!(
            "check: every body's position matches the sequential run (max relative error {worst:.1e} <= {TOLERANCE:.0e})"
        );
    } else {
        say!(
            "check FAILED: positions differ from the sequential run (max relative error {worst:.1e} > {TOLERANCE:.0e})"
        );
    }
    Ok(ok)
}

/// A simulated run's figures (`--simulate`).
struct Predicted {
    /// Seconds per step of the slowest rank, on the virtual clock.
    step: f64,
    /// Seconds of the gather alone after a barrier (from the last rank's start to the last
    /// rank's end, median of the repetitions).
    alone: f64,
    /// The share of the slowest rank's step time that is computation.
    compute: f64,
    /// The bodies' final positions (the program really ran).
    positions: Vec<[f64; 3]>,
}

/// Simulates the run on `p` ranks of `machine` ([`Universe::simulate`]) and reads its step
/// time off the ranks' calls on the virtual clock: from the end of the barrier before the steps
/// to the start of the energy's allreduce after them.
fn predicted(machine: &rpar::sim::Simulator, p: usize, work: Work) -> Result<Predicted> {
    let Work { steps, reps, .. } = work;
    let run = Universe::new(p)
        .simulate(machine)
        .run(|world| simulate(&world, work))?;
    // each rank's calls: allreduce, barrier, `steps` allgathers, allreduce, then per
    // repetition a barrier and an allgather
    let (mut step, mut compute) = (0.0, 0.0);
    // per repetition: the latest start and the latest end over the ranks, so that a rank that
    // left the barrier early and waits for the others does not count its wait
    let mut alone = vec![(0.0f64, 0.0f64); reps];
    for r in 0..p {
        let calls = run.calls(r);
        let names: Vec<&str> = calls.iter().map(|c| c.name).collect();
        if names.len() != 3 + steps + 2 * reps
            || names[1] != "barrier"
            || names[2 + steps] != "allreduce"
        {
            return Err(Error::user(format!(
                "unexpected calls on rank {r}: {names:?}"
            )));
        }
        let t = (calls[2 + steps].start - calls[1].end) / steps as f64;
        if t > step {
            step = t;
            compute = run.ranks[r].compute;
        }
        for (k, slot) in alone.iter_mut().enumerate() {
            let gather = calls[3 + steps + 2 * k + 1];
            *slot = (slot.0.max(gather.start), slot.1.max(gather.end));
        }
    }
    let total = run.ranks.iter().map(|r| r.finish).fold(0.0, f64::max);
    Ok(Predicted {
        step,
        alone: median(alone.iter().map(|(start, end)| end - start)),
        compute: compute / total,
        positions: run
            .results
            .iter()
            .flat_map(|r| r.positions.iter().copied())
            .collect(),
    })
}

/// `--simulate P…`: each scheme's predicted step time on each P on the simulated machine, with
/// speedup and efficiency against the simulated one-rank run and the lecture's gather model
/// beside the simulated gather; where this machine has a core per rank, the step time measured
/// here too. Every simulated run's positions are checked against the sequential run.
fn predict(args: &Args, n: usize, steps: usize) -> Result<bool> {
    let ps = args.machine.rank_counts()?;
    say!(
        "N-body: {n} bodies, {steps} steps of dt = {DT}, predicted on {}",
        args.machine.describe()
    );
    let calibrating = u64::from(args.machine.alpha.is_none());
    let runs = 2 + ps.len() as u64 * args.scheme.runs().len() as u64;
    let progress = Progress::new("nbody", calibrating + runs, false);
    let params = model_params(args, &progress)?;
    let reps = 3;
    progress.step("the sequential run");
    let (reference, _, _) = sequential(n, steps);
    progress.step("the simulated one-rank run");
    let work = |algorithm| Work {
        n,
        steps,
        algorithm,
        reps,
    };
    let one = predicted(
        &args.machine.machine(1, params)?,
        1,
        work(Allgather::Pairwise),
    )?;
    let mut worst = max_relative_error(&one.positions, &reference);
    let mut rows = Vec::new();
    for (name, algorithm) in args.scheme.runs() {
        for &p in ps {
            progress.step(format!("{name} on {p} simulated ranks"));
            let machine = args.machine.machine(p, params)?;
            let work = work(algorithm);
            let run = predicted(&machine, p, work)?;
            worst = worst.max(max_relative_error(&run.positions, &reference));
            let measured = if p <= common::cores() {
                Some(run_parallel(p, work, false)?.step)
            } else {
                None
            };
            let m = n.div_ceil(p) * std::mem::size_of::<PointMass>();
            let model = match algorithm {
                Allgather::Pairwise => lecture::nbody_gather_ring(&params, p, m),
                _ => lecture::nbody_gather_doubling(&params, p, m),
            };
            let core = one_core_step(n, p) + model;
            rows.push((name, p, run, model, measured, core));
        }
    }
    drop(progress);
    say!();
    say!(
        "{:<10} {:>6} {:>10} {:>8} {:>5} {:>9} {:>9} {:>8} {:>11} {:>9} {:>9} {:>9}",
        "run",
        "ranks",
        "step ms",
        "speedup",
        "eff",
        "gather us",
        "model us",
        "compute",
        "measured ms",
        "pred/meas",
        "core ms",
        "pred/core"
    );
    for (name, p, run, model, measured, core) in &rows {
        let (meas, ratio) = measured.map_or(("-".into(), "-".into()), |t| {
            (format!("{:.3}", t * 1e3), format!("{:.2}", run.step / t))
        });
        say!(
            "{:<10} {:>6} {:>10.3} {:>8.2} {:>5.2} {:>9.2} {:>9.2} {:>7.0}% {:>11} {:>9} {:>9.3} {:>9.2}",
            name,
            p,
            run.step * 1e3,
            one.step / run.step,
            one.step / (*p as f64 * run.step),
            run.alone * 1e6,
            model * 1e6,
            run.compute * 100.0,
            meas,
            ratio,
            core * 1e3,
            run.step / core
        );
    }
    say!("step ms: predicted time per step (slowest rank) on the simulated machine; speedup, eff:");
    say!(
        "  against the simulated one-rank run ({:.3} ms per step).",
        one.step * 1e3
    );
    say!("gather us: the simulated allgather alone after a barrier, from the last rank's start to");
    say!("  the last rank's end; model us: the lecture's closed form for the same m,");
    say!(
        "  (p-1)(alpha + m beta) pairwise, alpha log2 p + (p-1) m beta doubling; they agree where"
    );
    say!(
        "  the network carries the scheme without contention (doubling on a hypercube, any scheme"
    );
    say!("  fully connected).");
    say!("compute: the share of the slowest rank's predicted time spent computing (its own CPU time).");
    say!("measured ms: the same run timed here, where this machine has a core per rank.");
    say!(
        "core ms: a step with a core per rank, measured another way: the largest rank's share of a"
    );
    say!("  step computed alone on this machine's core (wall time, median of 5), plus model us.");
    let ok = worst <= TOLERANCE;
    say!();
    say!(
        "check: {} (max relative error of the simulated runs' positions {worst:.1e})",
        if ok {
            "every body's position matches the sequential run"
        } else {
            "FAILED"
        }
    );
    Ok(ok)
}

/// A step of the rank with the most bodies on `p` ranks, computed alone on this thread (which
/// has a core to itself, as each rank would): the seconds of its forces, kicks and drift,
/// median of 5 steps. Measured by the wall clock, independently of what a simulation records.
fn one_core_step(n: usize, p: usize) -> f64 {
    let chunk = n.div_ceil(p);
    let all = initial_bodies(n);
    let sources: Vec<PointMass> = all.iter().map(Body::point_mass).collect();
    let mut own = all[..chunk.min(n)].to_vec();
    let mut acc = accelerations(&own, 0, &sources);
    let times = (0..5).map(|_| {
        let t = Instant::now();
        kick(&mut own, &acc);
        drift(&mut own);
        acc = accelerations(&own, 0, &sources);
        kick(&mut own, &acc);
        std::hint::black_box(&own);
        t.elapsed().as_secs_f64()
    });
    median(times.collect::<Vec<_>>())
}
