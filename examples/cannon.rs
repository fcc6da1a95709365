//! Cannon's matrix multiplication C = A B on a periodic q x q grid of ranks (the lecture's
//! algorithm; Grama et al., "Introduction to Parallel Computing", section 8.2.2).
//!
//! Rank (i, j) holds the n/q x n/q blocks A_ij and B_ij. The initial skew shifts block row i of
//! A left by i and block column j of B up by j (`sendrecv_replace` along the grid's rows and
//! columns); then q steps of "multiply the local blocks into C_ij, shift A left by one and B up
//! by one". The grid comes from `dims_create` at run time, so the rank count is an option.
//!
//! Run: `cargo run --release --example cannon [-- -p 9 --n 480]` (`--quick`: n = 48, for
//! the test suite). Verifies C against a sequential multiplication and exits non-zero if they
//! differ. The entries are small integers, so every sum is exact in f64 and the check is
//! equality, whatever order the blocks arrive in.

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use rpar::prelude::*;

mod common;

/// Cannon's matrix multiplication on a periodic q x q grid of ranks, checked against the
/// sequential product.
#[derive(Parser, Debug)]
#[command(name = "cannon")]
struct Args {
    /// Number of ranks p; must be a perfect square q * q.
    #[arg(short = 'p', long, default_value_t = 4)]
    ranks: usize,
    /// Matrix order n; must be a multiple of q.
    #[arg(long, default_value_t = 480)]
    n: usize,
    /// Small run for the test suite (n = 48).
    #[arg(long)]
    quick: bool,
}

/// Entry (r, c) of A: a small integer, so that products and sums stay exact in f64.
fn a_entry(r: usize, c: usize) -> f64 {
    ((r * 7 + c * 3) % 11) as f64 - 5.0
}

/// Entry (r, c) of B.
fn b_entry(r: usize, c: usize) -> f64 {
    ((r * 5 + c * 2 + 1) % 13) as f64 - 6.0
}

/// The `b x b` block at block coordinates (bi, bj) of the matrix with entries `entry`, row-major.
fn block(entry: fn(usize, usize) -> f64, bi: usize, bj: usize, b: usize) -> Vec<f64> {
    (0..b * b)
        .map(|k| entry(bi * b + k / b, bj * b + k % b))
        .collect()
}

/// c += a * b for `m x m` row-major matrices (i-k-j loop order, unit stride inside).
fn multiply_add(c: &mut [f64], a: &[f64], b: &[f64], m: usize) {
    for i in 0..m {
        let row = &mut c[i * m..(i + 1) * m];
        for k in 0..m {
            let aik = a[i * m + k];
            for (cij, bkj) in row.iter_mut().zip(&b[k * m..(k + 1) * m]) {
                *cij += aik * bkj;
            }
        }
    }
}

/// Shifts `buf` by `disp` along `dim` of the periodic grid: sends it to the rank `disp` steps
/// ahead and receives the block of the rank `disp` steps back (MPI_Cart_shift +
/// MPI_Sendrecv_replace).
fn circular_shift(grid: &CartComm<2>, buf: &mut [f64], dim: usize, disp: isize) -> Result<()> {
    let (source, dest) = grid.shift(dim, disp)?;
    if source == rpar::PROC_NULL || dest == rpar::PROC_NULL {
        return Err(Error::user("Cannon's grid must be periodic"));
    }
    if source != grid.rank() {
        grid.sendrecv_replace(buf, dest, 0, source, 0)?;
    }
    Ok(())
}

/// Cannon's algorithm on this rank: returns its block C_ij and the time the multiplication took
/// (skew and q steps).
fn cannon(grid: &CartComm<2>, n: usize) -> Result<(Vec<f64>, f64)> {
    let q = grid.dims()[0];
    let b = n / q;
    let [i, j] = grid.coords();
    let mut a = block(a_entry, i, j, b);
    let mut bb = block(b_entry, i, j, b);
    let mut c = vec![0.0; b * b];
    grid.barrier()?;
    let start = Instant::now();
    // Skew: row i of A moves i blocks left (dim 1), column j of B moves j blocks up (dim 0).
    circular_shift(grid, &mut a, 1, -(i as isize))?;
    circular_shift(grid, &mut bb, 0, -(j as isize))?;
    for _ in 0..q {
        multiply_add(&mut c, &a, &bb, b);
        circular_shift(grid, &mut a, 1, -1)?;
        circular_shift(grid, &mut bb, 0, -1)?;
    }
    Ok((c, start.elapsed().as_secs_f64()))
}

/// Places each rank's block of C (indexed by grid rank) into the full n x n matrix.
fn assemble(blocks: &[Vec<f64>], q: usize, n: usize) -> Vec<f64> {
    let b = n / q;
    let mut c = vec![0.0; n * n];
    for (rank, blk) in blocks.iter().enumerate() {
        let (bi, bj) = (rank / q, rank % q);
        for r in 0..b {
            let row = (bi * b + r) * n + bj * b;
            c[row..row + b].copy_from_slice(&blk[r * b..(r + 1) * b]);
        }
    }
    c
}

fn main() -> ExitCode {
    let args = Args::parse();
    let n = if args.quick { 48 } else { args.n };
    let p = args.ranks;
    let mut dims = [0, 0];
    if let Err(e) = rpar::dims_create(p, &mut dims) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let q = dims[0];
    if dims[0] != dims[1] || n % q != 0 || n == 0 {
        eprintln!(
            "error: Cannon needs a square grid and q | n: {p} ranks give a {} x {} grid, n = {n}",
            dims[0], dims[1]
        );
        return ExitCode::FAILURE;
    }

    let result = rpar::run(p, |world| {
        let grid = CartComm::create(&world, dims, [true, true], false)?
            .ok_or_else(|| Error::user("every rank belongs to the q x q grid"))?;
        let (c, time) = cannon(&grid, n)?;
        let slowest = grid.allreduce(&time, Max)?;
        Ok((grid.rank(), c, slowest))
    });
    let mut per_rank = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    per_rank.sort_by_key(|(rank, _, _)| *rank);
    let parallel_time = per_rank[0].2;
    let blocks: Vec<Vec<f64>> = per_rank.into_iter().map(|(_, c, _)| c).collect();
    let c = assemble(&blocks, q, n);

    let a: Vec<f64> = (0..n * n).map(|k| a_entry(k / n, k % n)).collect();
    let b: Vec<f64> = (0..n * n).map(|k| b_entry(k / n, k % n)).collect();
    let mut expected = vec![0.0; n * n];
    let start = Instant::now();
    multiply_add(&mut expected, &a, &b, n);
    let serial_time = start.elapsed().as_secs_f64();

    let wrong = c.iter().zip(&expected).filter(|(x, y)| x != y).count();
    println!(
        "Cannon: n = {n}, p = {p} ({q} x {q} periodic grid), blocks of {0} x {0}",
        n / q
    );
    common::note_oversubscribed(p);
    println!("parallel time   {:10.3} ms", parallel_time * 1e3);
    println!("sequential time {:10.3} ms", serial_time * 1e3);
    println!(
        "speedup {:.2}, efficiency {:.2}",
        rpar::cost::speedup(serial_time, parallel_time),
        rpar::cost::efficiency(serial_time, parallel_time, p)
    );
    if wrong == 0 {
        println!(
            "check: C equals the sequential product in all {} entries: ok",
            n * n
        );
        ExitCode::SUCCESS
    } else {
        println!("check: {wrong} of {} entries differ: WRONG", n * n);
        ExitCode::FAILURE
    }
}
