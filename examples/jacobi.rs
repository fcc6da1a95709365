//! A 2-D Laplace solver by Jacobi iteration on a Cartesian decomposition (the lecture's heat /
//! Laplace example): the n x n interior of the unit square, u = 1 on the top edge and 0 on the
//! other three, each point replaced by the mean of its four neighbours until no point moves by
//! more than the tolerance.
//!
//! `dims_create` shapes the p ranks into a px x py grid; each rank owns a block of rows and
//! columns (sizes differ by at most one) with a one-point halo. Each sweep exchanges the halo
//! with the four grid neighbours — either by `shift` along each dim (rows with `sendrecv`,
//! columns in place with a vector datatype), or in one `neighbor_alltoall`
//! (`--exchange alltoall`) — and the largest change is agreed on by
//! `allreduce(Max)`.
//!
//! Run: `cargo run --release --example jacobi [-- -p 6 --n 96 --exchange alltoall]`
//! (`--quick`: n = 16, tolerance 1e-4, for the test suite; `--help`: every option). Verifies
//! against the sequential solver: the same number of sweeps and the same field (Jacobi does the
//! same arithmetic on every point either way, so they agree to the last bit; the check allows
//! 1e-12), and exits non-zero if not.
//!
//! Whether the parallel run pays is a matter of size and of cores: every sweep each rank
//! updates its (n/px) x (n/py) block, then waits for its four halos and for the allreduce of
//! the largest change, and with more ranks than cores every sweep also waits for a rank to get a
//! core. The defaults — one rank per core (under `mpiexec`, every process of the job) and
//! n = 128 — pay on a 2-core machine: 2 ranks, 8399 sweeps, 1.75 to 1.9 times as fast as the
//! sequential solver on a quiet machine (less when other work takes a core: every sweep waits
//! for the slower rank). The old defaults did not: 4 ranks on 2 cores at
//! n = 64 (3302 sweeps of 1024 points per rank, each with three waits) took 45 ms against the
//! sequential 30 ms. The program prints the speedup and, when there is none, where the time
//! went.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use common::machine::MachineArgs;
use rpar::cost::Params;
use rpar::prelude::*;

mod common;

/// The default grid side: with a rank per core, large enough that the parallel run pays.
const DEFAULT_N: usize = 128;

/// Jacobi iteration for the 2-D Laplace equation on a Cartesian grid of ranks, checked against
/// the sequential solver.
#[derive(Parser, Debug)]
#[command(name = "jacobi")]
struct Args {
    /// Number of ranks p, shaped into a 2-D grid by dims_create [default: one per core; under
    /// mpiexec, every process of the job]
    #[arg(short = 'p', long)]
    ranks: Option<usize>,
    /// Interior points per side of the square.
    #[arg(long, default_value_t = DEFAULT_N)]
    n: usize,
    /// Stop when no point changes by more than this in a sweep.
    #[arg(long, default_value_t = 1e-5)]
    tol: f64,
    /// Give up (and fail) after this many sweeps.
    #[arg(long, default_value_t = 200_000)]
    max_sweeps: usize,
    /// How the halo is exchanged.
    #[arg(long, value_enum, default_value_t = Exchange::Shift)]
    exchange: Exchange,
    /// Small run for the test suite (n = 16, tolerance 1e-4).
    #[arg(long)]
    quick: bool,
    /// The machine of `--simulate`.
    #[command(flatten)]
    machine: MachineArgs,
}

/// The halo exchange variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Exchange {
    /// `shift` to find the neighbours, then one `sendrecv` per direction.
    Shift,
    /// One `neighbor_alltoall` on the Cartesian communicator.
    Alltoall,
}

/// The temperature on the top edge; the other edges are held at 0.
const TOP: f64 = 1.0;

/// A block of the field with a one-point halo, row-major, `(rows + 2) x (cols + 2)`.
struct Block {
    rows: usize,
    cols: usize,
    u: Vec<f64>,
}

impl Block {
    /// A zero block; its top halo holds the boundary value when it touches the top edge.
    fn new(rows: usize, cols: usize, on_top_edge: bool) -> Block {
        let mut u = vec![0.0; (rows + 2) * (cols + 2)];
        if on_top_edge {
            u[1..=cols].fill(TOP);
        }
        Block { rows, cols, u }
    }

    fn width(&self) -> usize {
        self.cols + 2
    }

    fn at(&self, r: usize, c: usize) -> usize {
        r * self.width() + c
    }

    /// Halo row `r` (0 or rows + 1) or interior row `r`, without its halo columns.
    fn row(&self, r: usize) -> std::ops::Range<usize> {
        self.at(r, 1)..self.at(r, 1) + self.cols
    }

    /// Copies column `c` (rows 1..=rows) into a contiguous buffer.
    fn pack_column(&self, c: usize, out: &mut [f64]) {
        for (r, x) in out.iter_mut().enumerate().take(self.rows) {
            *x = self.u[self.at(r + 1, c)];
        }
    }

    /// Copies a contiguous buffer into column `c` (rows 1..=rows).
    fn unpack_column(&mut self, c: usize, from: &[f64]) {
        for (r, x) in from.iter().enumerate().take(self.rows) {
            let i = self.at(r + 1, c);
            self.u[i] = *x;
        }
    }

    /// The interior, row by row, without the halo.
    fn interior(&self) -> Vec<f64> {
        (1..=self.rows)
            .flat_map(|r| self.u[self.row(r)].iter().copied())
            .collect()
    }
}

/// One Jacobi sweep from `old` into `new` (same shape, halos already filled); returns the largest
/// change of any point.
fn sweep(old: &Block, new: &mut Block) -> f64 {
    let w = old.width();
    let mut change = 0.0f64;
    for r in 1..=old.rows {
        for c in 1..=old.cols {
            let i = r * w + c;
            let v = 0.25 * (old.u[i - w] + old.u[i + w] + old.u[i - 1] + old.u[i + 1]);
            change = change.max((v - old.u[i]).abs());
            new.u[i] = v;
        }
    }
    change
}

/// Halo exchange along dim 0: the first and last interior rows (contiguous) go to the ranks
/// above and below; their rows fill the top and bottom halo rows.
fn exchange_rows(grid: &CartComm<2>, b: &mut Block) -> Result<()> {
    // off the grid's edge a neighbour is PROC_NULL: nothing is sent there, and a halo row
    // received from it keeps its boundary values
    let (up, down) = grid.shift(0, 1)?;
    // Downwards: my last row to the rank below, the row of the rank above into my top halo.
    let last = b.u[b.row(b.rows)].to_vec();
    let top = b.row(0);
    grid.sendrecv(&last[..], down, 0, &mut b.u[top], up, 0)?;
    // Upwards: my first row to the rank above, the row of the rank below into my bottom halo.
    let first = b.u[b.row(1)].to_vec();
    let bottom = b.row(b.rows + 1);
    grid.sendrecv(&first[..], up, 0, &mut b.u[bottom], down, 0)?;
    Ok(())
}

/// The column of a block as a derived datatype (MPI_Type_vector: `rows` blocks of one `f64`,
/// stride `cols + 2`, the width of a row with its halo), committed once per rank.
fn column_type(b: &Block) -> Result<CommittedType> {
    Ok(TypeMap::vector(b.rows, 1, (b.cols + 2) as isize, &f64::type_map())?.commit())
}

/// Halo exchange along dim 1: the first and last interior columns go to the ranks left and
/// right. A column is strided in memory; the vector datatype `column` sends it in place, from
/// the block straight into the neighbour's halo column — no packing on either side.
fn exchange_columns(grid: &CartComm<2>, b: &mut Block, column: &CommittedType) -> Result<()> {
    let (left, right) = grid.shift(1, 1)?;
    // rightwards: my last interior column to the right, my left neighbour's into my left halo
    column_edge(grid, b, column, (b.cols, right), (0, left))?;
    // leftwards: my first interior column to the left, the right one's into my right halo
    column_edge(grid, b, column, (1, left), (b.cols + 1, right))
}

/// Sends column `from` of the block to `dest` and receives column `into` from `source`
/// (either may be PROC_NULL, off the grid). Columns of at most 32 KiB are copied when sent, so
/// sending first cannot deadlock; larger ones are handed over by rendezvous, which rpar
/// completes even when neighbours send to each other at once.
fn column_edge(
    grid: &CartComm<2>,
    b: &mut Block,
    column: &CommittedType,
    (from, dest): (usize, usize),
    (into, source): (usize, usize),
) -> Result<()> {
    grid.send(rpar::Typed::new(&b.u, column, 1).at(b.at(1, from)), dest, 1)?;
    let at = b.at(1, into);
    grid.recv_into(rpar::Typed::new(&mut b.u, column, 1).at(at), source, 1)?;
    Ok(())
}

/// The whole halo exchange in one MPI_Neighbor_alltoall. Neighbour order is MPI's: up, down,
/// left, right. Alltoall sends blocks of one length on every rank, while block sides differ by
/// up to one between ranks and between rows and columns: each block is `n / min(px, py)` rounded
/// up long, the longest side any rank has, its tail unused. Slot "from up" holds what the rank above sent
/// down, its last row. Slots off the edge are left untouched, and not unpacked.
fn exchange_alltoall(grid: &CartComm<2>, b: &mut Block, n: usize) -> Result<()> {
    let m = n.div_ceil(grid.dims()[0].min(grid.dims()[1]));
    let mut out = vec![0.0; 4 * m];
    out[..b.cols].copy_from_slice(&b.u[b.row(1)]);
    out[m..m + b.cols].copy_from_slice(&b.u[b.row(b.rows)]);
    b.pack_column(1, &mut out[2 * m..3 * m]);
    b.pack_column(b.cols, &mut out[3 * m..]);
    let mut halo = vec![0.0; 4 * m];
    grid.neighbor_alltoall(&out, &mut halo, m)?;
    let [up, down, left, right] = [0, 1, 2, 3].map(|k| grid.in_neighbors()[k].is_some());
    if up {
        let r = b.row(0);
        b.u[r].copy_from_slice(&halo[..b.cols]);
    }
    if down {
        let r = b.row(b.rows + 1);
        b.u[r].copy_from_slice(&halo[m..m + b.cols]);
    }
    if left {
        b.unpack_column(0, &halo[2 * m..3 * m]);
    }
    if right {
        b.unpack_column(b.cols + 1, &halo[3 * m..]);
    }
    Ok(())
}

/// The start and length of part `k` of `n` points split into `parts` nearly equal parts.
fn split(n: usize, parts: usize, k: usize) -> (usize, usize) {
    let (base, extra) = (n / parts, n % parts);
    (k * base + k.min(extra), base + usize::from(k < extra))
}

/// What one rank computed: where its block sits, the block's interior, the sweeps taken.
struct Solved {
    origin: (usize, usize),
    shape: (usize, usize),
    interior: Vec<f64>,
    sweeps: usize,
}

/// A rank's block travels to the other processes field by field (needed on the MPI transport).
impl RankResult for Solved {
    fn send_result(&self, link: &ResultLink<'_>) -> Result<()> {
        (self.origin, self.shape, self.sweeps).send_result(link)?;
        self.interior.send_result(link)
    }
    fn recv_result(link: &ResultLink<'_>) -> Result<Self> {
        let (origin, shape, sweeps) = RankResult::recv_result(link)?;
        let interior = RankResult::recv_result(link)?;
        Ok(Solved {
            origin,
            shape,
            interior,
            sweeps,
        })
    }
}

/// The parallel solver on this rank's block of the grid.
fn solve_parallel(grid: &CartComm<2>, args: &Args, n: usize, tol: f64) -> Result<Solved> {
    let ([pr, pc], [i, j]) = (grid.dims(), grid.coords());
    let ((r0, rows), (c0, cols)) = (split(n, pr, i), split(n, pc, j));
    let mut old = Block::new(rows, cols, i == 0);
    let mut new = Block::new(rows, cols, i == 0);
    let column = column_type(&old)?;
    for sweeps in 1..=args.max_sweeps {
        match args.exchange {
            Exchange::Shift => {
                exchange_rows(grid, &mut old)?;
                exchange_columns(grid, &mut old, &column)?;
            }
            Exchange::Alltoall => exchange_alltoall(grid, &mut old, n)?,
        }
        let change = grid.allreduce(&sweep(&old, &mut new), Max)?;
        std::mem::swap(&mut old, &mut new);
        if change <= tol {
            return Ok(Solved {
                origin: (r0, c0),
                shape: (rows, cols),
                interior: old.interior(),
                sweeps,
            });
        }
    }
    Err(Error::user(format!(
        "no convergence to {tol} in {} sweeps",
        args.max_sweeps
    )))
}

/// The sequential solver: the same sweeps on one block holding the whole grid.
fn solve_sequential(n: usize, tol: f64, max_sweeps: usize) -> Option<(Vec<f64>, usize)> {
    let (mut old, mut new) = (Block::new(n, n, true), Block::new(n, n, true));
    for sweeps in 1..=max_sweeps {
        let change = sweep(&old, &mut new);
        std::mem::swap(&mut old, &mut new);
        if change <= tol {
            return Some((old.interior(), sweeps));
        }
    }
    None
}

/// The speedup, and when the parallel run is slower, where its time went: per sweep, the
/// sequential sweep's share of one rank (T_seq / p) against what the rank spent in all
/// (T_par): the rest is its halo exchanges and the allreduce, waiting for its neighbours.
fn explain_speedup(ranks: usize, n: usize, sweeps: usize, parallel: f64, serial: f64) {
    let speedup = serial / parallel;
    println!(
        "speedup T_seq / T_par = {speedup:.2}, efficiency {:.2}",
        speedup / ranks as f64
    );
    if speedup >= 1.0 || sweeps == 0 {
        return;
    }
    let per_sweep = |t: f64| t / sweeps as f64 * 1e6;
    let short_of_cores = common::oversubscribed(ranks).is_some();
    println!(
        "the parallel run is slower: per sweep a rank's share of the work takes {:.1} us \
         (T_seq / p), but the sweep took {:.1} us: {:.1} us of halo exchanges and allreduce, \
         waiting for the neighbours{}. {}",
        per_sweep(serial) / ranks as f64,
        per_sweep(parallel),
        per_sweep(parallel) - per_sweep(serial) / ranks as f64,
        if short_of_cores {
            " and for a core"
        } else {
            ""
        },
        if short_of_cores {
            format!(
                "A rank per core (-p {}) and more points per rank (--n {}) help.",
                common::cores(),
                2 * n
            )
        } else {
            format!(
                "Each rank's block needs more points (--n {}) to outweigh them.",
                2 * n
            )
        }
    );
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (n, tol) = if args.quick {
        (16, 1e-4)
    } else {
        (args.n, args.tol)
    };
    let outcome = if args.machine.simulate.is_empty() {
        let ranks = args
            .ranks
            .unwrap_or_else(|| rpar::mpi_processes().unwrap_or_else(common::cores));
        run_here(&args, ranks, n, tol)
    } else {
        predict(&args, n, tol)
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The ranks' grid: `dims_create`'s shape of `ranks`, which must fit an `n` x `n` field.
fn grid_shape(ranks: usize, n: usize) -> Result<[usize; 2]> {
    let mut dims = [0, 0];
    rpar::dims_create(ranks, &mut dims)?;
    if dims[0] > n || dims[1] > n {
        return Err(Error::user(format!(
            "a {} x {} grid of ranks needs n >= {}",
            dims[0],
            dims[1],
            dims[0].max(dims[1])
        )));
    }
    Ok(dims)
}

/// One rank's program: the grid, then the solver between a barrier and the allreduce of the
/// ranks' times (the solve's wall time here, the slowest rank's).
fn rank_program(world: &Comm, args: &Args, n: usize, tol: f64) -> Result<(Solved, f64)> {
    let dims = grid_shape(world.size(), n)?;
    let grid = CartComm::create(world, dims, [false, false], false)?
        .ok_or_else(|| Error::user("every rank belongs to the grid"))?;
    grid.barrier()?;
    let start = Instant::now();
    let solved = solve_parallel(&grid, args, n, tol)?;
    let time = grid.allreduce(&start.elapsed().as_secs_f64(), Max)?;
    Ok((solved, time))
}

/// The ranks' blocks as the whole `n` x `n` field.
fn assemble(blocks: &[Solved], n: usize) -> Vec<f64> {
    let mut field = vec![0.0; n * n];
    for b in blocks {
        let ((r0, c0), (rows, cols)) = (b.origin, b.shape);
        for r in 0..rows {
            let at = (r0 + r) * n + c0;
            field[at..at + cols].copy_from_slice(&b.interior[r * cols..(r + 1) * cols]);
        }
    }
    field
}

/// The largest difference between the ranks' field and the sequential one, and whether every
/// rank took the sequential solver's sweeps.
fn check(blocks: &[Solved], n: usize, expected: &[f64], expected_sweeps: usize) -> (f64, bool) {
    let deviation = assemble(blocks, n)
        .iter()
        .zip(expected)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let sweeps_agree = blocks.iter().all(|b| b.sweeps == expected_sweeps);
    (deviation, sweeps_agree && deviation <= 1e-12)
}

/// Runs the solver on `ranks` ranks here, times it against the sequential solver, checks it.
fn run_here(args: &Args, ranks: usize, n: usize, tol: f64) -> Result<bool> {
    let dims = grid_shape(ranks, n)?;
    let (blocks, times): (Vec<Solved>, Vec<f64>) =
        rpar::run(ranks, |world| rank_program(&world, args, n, tol))?
            .into_iter()
            .unzip();
    let parallel_time = times[0];
    let sweeps = blocks[0].sweeps;

    let start = Instant::now();
    let (expected, expected_sweeps) = solve_sequential(n, tol, args.max_sweeps)
        .ok_or_else(|| Error::user("the sequential solver did not converge"))?;
    let serial_time = start.elapsed().as_secs_f64();
    let (deviation, ok) = check(&blocks, n, &expected, expected_sweeps);

    println!(
        "Jacobi: {n} x {n} interior, tolerance {tol:e}, p = {} as a {} x {} grid, exchange {:?}",
        ranks, dims[0], dims[1], args.exchange
    );
    common::note_oversubscribed(ranks);
    println!(
        "parallel   {sweeps:6} sweeps {:10.3} ms",
        parallel_time * 1e3
    );
    println!(
        "sequential {expected_sweeps:6} sweeps {:10.3} ms",
        serial_time * 1e3
    );
    explain_speedup(ranks, n, sweeps, parallel_time, serial_time);
    println!("u at the centre: {:.6}", expected[(n / 2) * n + n / 2]);
    println!(
        "check: max |u - u_seq| = {deviation:e}, sweeps {sweeps} vs {expected_sweeps}: {}",
        if ok { "ok" } else { "WRONG" }
    );
    Ok(ok)
}

/// A simulated solve: seconds per sweep on the virtual clock (slowest rank, from the end of
/// the barrier before the solve to the start of the allreduce of the times after it), the
/// share of it spent computing, and the ranks' blocks.
fn predicted(
    args: &Args,
    p: usize,
    n: usize,
    tol: f64,
    params: Params,
) -> Result<(f64, f64, Vec<Solved>)> {
    let machine = args.machine.machine(p, params)?;
    let run = Universe::new(p)
        .simulate(&machine)
        .run(|world| rank_program(&world, args, n, tol))?;
    let sweeps = run.results[0].0.sweeps as f64;
    let (mut sweep, mut compute) = (0.0, 0.0);
    for r in 0..p {
        let calls = run.calls(r);
        let barrier = calls.iter().rposition(|c| c.name == "barrier");
        let (Some(b), Some(last)) = (barrier, calls.last()) else {
            return Err(Error::user(format!(
                "rank {r} made no barrier before its solve"
            )));
        };
        let t = (last.start - calls[b].end) / sweeps;
        if t > sweep {
            sweep = t;
            compute = run.ranks[r].compute / run.ranks[r].finish;
        }
    }
    let blocks = run.results.into_iter().map(|(b, _)| b).collect();
    Ok((sweep, compute, blocks))
}

/// `--simulate P…`: the predicted time per sweep on each P on the simulated machine, with
/// speedup and efficiency against the simulated one-rank run, the lecture's model of a sweep
/// beside it, and where this machine has a core per rank the time measured here. Every
/// simulated run's field is checked against the sequential solver.
fn predict(args: &Args, n: usize, tol: f64) -> Result<bool> {
    let ps = args.machine.rank_counts()?;
    println!(
        "Jacobi: {n} x {n} interior, tolerance {tol:e}, exchange {:?}, predicted on {}",
        args.exchange,
        args.machine.describe()
    );
    let (params, line) = args.machine.params(args.quick)?;
    println!("{line}");
    let (expected, expected_sweeps) = solve_sequential(n, tol, args.max_sweeps)
        .ok_or_else(|| Error::user("the sequential solver did not converge"))?;
    let (one, _, blocks) = predicted(args, 1, n, tol, params)?;
    let (mut worst, mut ok) = check(&blocks, n, &expected, expected_sweeps);
    // the lecture's sweep on p ranks of a sqrt(p) x sqrt(p) grid: its share of the points,
    // four halo messages of n / sqrt(p) values, and a recursive-doubling allreduce of 8 bytes
    let point = one / (n * n) as f64;
    let communication = |p: f64| {
        let halo = params.t_n + params.t_c * 8.0 * n as f64 / p.sqrt();
        let allreduce = p.log2() * (params.t_n + params.t_c * 8.0);
        if p > 1.0 {
            4.0 * halo + allreduce
        } else {
            0.0
        }
    };
    let model = |p: f64| point * (n * n) as f64 / p + communication(p);
    println!();
    println!(
        "{:>6} {:>7} {:>10} {:>10} {:>8} {:>5} {:>8} {:>11} {:>9} {:>9} {:>9}",
        "ranks",
        "grid",
        "sweep us",
        "model us",
        "speedup",
        "eff",
        "compute",
        "measured us",
        "pred/meas",
        "core us",
        "pred/core"
    );
    for &p in ps {
        let dims = grid_shape(p, n)?;
        let (sweep, compute, blocks) = predicted(args, p, n, tol, params)?;
        let (deviation, agree) = check(&blocks, n, &expected, expected_sweeps);
        worst = worst.max(deviation);
        ok &= agree;
        let measured = if p <= common::cores() {
            let (blocks, times): (Vec<Solved>, Vec<f64>) =
                rpar::run(p, |world| rank_program(&world, args, n, tol))?
                    .into_iter()
                    .unzip();
            Some(times[0] / blocks[0].sweeps as f64)
        } else {
            None
        };
        let (meas, ratio) = measured.map_or(("-".into(), "-".into()), |t| {
            (format!("{:.2}", t * 1e6), format!("{:.2}", sweep / t))
        });
        let core = one_core_sweep(n, dims) + communication(p as f64);
        println!(
            "{:>6} {:>7} {:>10.2} {:>10.2} {:>8.2} {:>5.2} {:>7.0}% {:>11} {:>9} {:>9.2} {:>9.2}",
            p,
            format!("{}x{}", dims[0], dims[1]),
            sweep * 1e6,
            model(p as f64) * 1e6,
            one / sweep,
            one / (p as f64 * sweep),
            compute * 100.0,
            meas,
            ratio,
            core * 1e6,
            sweep / core
        );
    }
    println!("sweep us: predicted time per sweep ({expected_sweeps} sweeps), slowest rank; speedup, eff: against");
    println!(
        "  the simulated one-rank run ({:.2} us per sweep).",
        one * 1e6
    );
    println!(
        "model us: the lecture's sweep, t_point n^2 / p + 4 (alpha + 8 beta n / sqrt p) + log2 p"
    );
    println!("  (alpha + 8 beta), with t_point from the one-rank run: the halo shrinks as 1 / sqrt p, the");
    println!(
        "  work as 1 / p, so the efficiency holds only if n^2 grows like p log2 p (isoefficiency)."
    );
    println!(
        "compute: the share of the slowest rank's predicted time spent computing (its CPU time)."
    );
    println!("measured us: the same solve timed here, where this machine has a core per rank.");
    println!(
        "core us: a sweep with a core per rank, measured another way: the largest block's sweep"
    );
    println!(
        "  alone on this machine's core (wall time, median of 5 runs of 1000), plus the model's"
    );
    println!("  halo exchanges and allreduce.");
    println!(
        "check: max |u - u_seq| = {worst:e} over the simulated runs, sweeps {expected_sweeps}: {}",
        if ok { "ok" } else { "WRONG" }
    );
    Ok(ok)
}

/// A sweep of the largest block of a `dims` grid of ranks over an `n` x `n` field, computed
/// alone on this thread (which has a core to itself, as each rank would): seconds per sweep,
/// median of 5 runs of 1000 sweeps. Measured by the wall clock, independently of what a
/// simulation records.
fn one_core_sweep(n: usize, dims: [usize; 2]) -> f64 {
    let ((_, rows), (_, cols)) = (split(n, dims[0], 0), split(n, dims[1], 0));
    let (mut old, mut new) = (Block::new(rows, cols, true), Block::new(rows, cols, true));
    let runs = (0..5).map(|_| {
        let t = Instant::now();
        for _ in 0..1000 {
            std::hint::black_box(sweep(&old, &mut new));
            std::mem::swap(&mut old, &mut new);
        }
        t.elapsed().as_secs_f64() / 1000.0
    });
    common::median(runs.collect::<Vec<_>>())
}
