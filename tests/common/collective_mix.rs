//! A random sequence of collectives, written once over a communicator: run in-process by
//! `tests/collective_mix.rs` and as MPI processes by `tests/mpi.rs`. Every rank draws the same
//! steps from a seed — allreduce, reduce, scan, bcast, allgather, alltoall or a barrier, on the
//! world or on its half of a split, with a random root, length (empty to 5 000 elements) and
//! algorithm (`Auto`, which on MPI runs MPI's own, or one of rpar's), blocking or started in a
//! scope — and checks each result against the answer worked out from every rank's data, which
//! every rank can compute.

use rpar::{Allgather, Allreduce, Alltoall, Bcast, Comm, Reduce, Result, Sum};

use super::split_mix::SplitMix;

/// Steps of one sequence.
const STEPS: usize = 60;

/// Rank `r`'s `n` values at `step` (small: sums of them never overflow).
fn data(r: usize, step: usize, n: usize) -> Vec<u64> {
    (0..n)
        .map(|k| ((r * 1_000_003 + step * 7919 + k * 31) % 1_000_000) as u64)
        .collect()
}

/// Runs the sequence of `seed` on `world`, each step checked.
pub(crate) fn random_collectives(world: &Comm, seed: u64) -> Result<()> {
    let half = world
        .split(Some((world.rank() % 2) as u32), 0)?
        .expect("every rank has a half");
    let mut rng = SplitMix(seed.wrapping_mul(0x2545_f491_4f6c_dd1d));
    for step in 0..STEPS {
        let comm = if rng.below(3) == 0 { &half } else { world };
        let n = [0, 1, 7, 300, 5000][rng.below(5)];
        let root = rng.below(comm.size());
        let started = rng.below(4) == 0;
        let pick = rng.below(5);
        let what = format!("step {step} on {} ranks, {n} values", comm.size());
        match rng.below(7) {
            0 => allreduce(comm, step, n, pick, started).map_err(|e| at(e, &what))?,
            1 => reduce(comm, step, n, (root, pick)).map_err(|e| at(e, &what))?,
            2 => scan(comm, step, n).map_err(|e| at(e, &what))?,
            3 => bcast(comm, step, n, (root, pick), started).map_err(|e| at(e, &what))?,
            4 => allgather(comm, step, n, pick, started).map_err(|e| at(e, &what))?,
            5 => alltoall(comm, step, n, pick).map_err(|e| at(e, &what))?,
            _ => comm.barrier()?,
        }
    }
    Ok(())
}

/// `e`, saying at which step it happened.
fn at(e: rpar::Error, what: &str) -> rpar::Error {
    rpar::Error::user(format!("{what}: {e}"))
}

/// The step's data of every rank of `comm` (by its rank in `comm`).
fn everyone(comm: &Comm, step: usize, n: usize) -> Vec<Vec<u64>> {
    (0..comm.size()).map(|r| data(r, step, n)).collect()
}

/// The elementwise sums of `all`'s first `n` values.
fn summed(all: &[Vec<u64>], n: usize) -> Vec<u64> {
    (0..n).map(|k| all.iter().map(|v| v[k]).sum()).collect()
}

fn allreduce(comm: &Comm, step: usize, n: usize, pick: usize, started: bool) -> Result<()> {
    let mine = data(comm.rank(), step, n);
    let want = summed(&everyone(comm, step, n), n);
    let alg = [
        Allreduce::Auto,
        Allreduce::RecursiveDoubling,
        Allreduce::Ring,
        Allreduce::Rabenseifner,
        Allreduce::ReduceBcast,
    ][pick];
    let got = if started {
        let mut got = vec![0u64; n];
        comm.using(alg).scope(|s| {
            s.iallreduce((&mine[..], &mut got[..]), Sum)?
                .wait()
                .map(drop)
        })?;
        got
    } else {
        comm.using(alg).allreduce(&mine[..], Sum)?
    };
    assert_eq!(got, want, "allreduce {alg:?}");
    Ok(())
}

fn reduce(comm: &Comm, step: usize, n: usize, (root, pick): (usize, usize)) -> Result<()> {
    let mine = data(comm.rank(), step, n);
    let alg = [
        Reduce::Auto,
        Reduce::Linear,
        Reduce::Binomial,
        Reduce::Rabenseifner,
        Reduce::Auto,
    ][pick];
    let got = comm.using(alg).reduce(&mine[..], Sum, root)?;
    if comm.rank() == root {
        assert_eq!(
            got,
            Some(summed(&everyone(comm, step, n), n)),
            "reduce {alg:?} to {root}"
        );
    } else {
        assert_eq!(got, None, "reduce {alg:?}: nothing off the root");
    }
    Ok(())
}

fn scan(comm: &Comm, step: usize, n: usize) -> Result<()> {
    let mine = data(comm.rank(), step, n);
    let got = comm.scan(&mine[..], Sum)?;
    let before = &everyone(comm, step, n)[..=comm.rank()];
    assert_eq!(got, summed(before, n), "scan");
    Ok(())
}

fn bcast(
    comm: &Comm,
    step: usize,
    n: usize,
    (root, pick): (usize, usize),
    started: bool,
) -> Result<()> {
    let alg = [
        Bcast::Auto,
        Bcast::Linear,
        Bcast::Binomial,
        Bcast::Pipeline,
        Bcast::ScatterAllgather,
    ][pick];
    let mut buf = if comm.rank() == root {
        data(root, step, n)
    } else {
        vec![0; n]
    };
    if started {
        comm.using(alg)
            .scope(|s| s.ibcast(&mut buf[..], root)?.wait().map(drop))?;
    } else {
        comm.using(alg).bcast(&mut buf[..], root)?;
    }
    assert_eq!(buf, data(root, step, n), "bcast {alg:?} from {root}");
    Ok(())
}

fn allgather(comm: &Comm, step: usize, n: usize, pick: usize, started: bool) -> Result<()> {
    let mine = data(comm.rank(), step, n);
    let alg = [
        Allgather::Auto,
        Allgather::Ring,
        Allgather::RecursiveDoubling,
        Allgather::Pairwise,
        Allgather::Bruck,
    ][pick];
    let got = if started {
        let mut got = vec![0u64; n * comm.size()];
        comm.using(alg)
            .scope(|s| s.iallgather((&mine[..], &mut got[..]))?.wait().map(drop))?;
        got
    } else {
        comm.using(alg).allgather(&mine[..])?
    };
    assert_eq!(got, everyone(comm, step, n).concat(), "allgather {alg:?}");
    Ok(())
}

fn alltoall(comm: &Comm, step: usize, n: usize, pick: usize) -> Result<()> {
    let p = comm.size();
    let send = data(comm.rank(), step, n * p);
    let alg = [
        Alltoall::Auto,
        Alltoall::Linear,
        Alltoall::Pairwise,
        Alltoall::Bruck,
        Alltoall::Auto,
    ][pick];
    let got = comm.using(alg).alltoall(&send[..])?;
    let me = comm.rank();
    let want: Vec<u64> = (0..p)
        .flat_map(|r| data(r, step, n * p)[me * n..(me + 1) * n].to_vec())
        .collect();
    assert_eq!(got, want, "alltoall {alg:?}");
    Ok(())
}
