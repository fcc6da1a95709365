//! The static block distribution, the manager-worker scheme's counterpart: rank 0 splits the
//! `n` tasks into `p` contiguous blocks — rank `r` gets tasks `r·n/p .. (r+1)·n/p`, as the
//! lecture's block mapping does — sends each rank its block (MPI_Scatterv-like), every rank
//! (rank 0 too) computes its own, and rank 0 gathers the results (MPI_Gatherv-like).
//!
//! No rank is lost to managing and there is one message each way per rank, but a rank whose
//! block holds the expensive tasks finishes last while the others idle: the load imbalance that
//! [`FarmStats::load_imbalance`] measures and the manager-worker scheme removes.
//!
//! Protocol on a private duplicate of the communicator (MPI_Comm_dup): rank 0 → rank r
//! `BLOCK [first, count]` + `TASKS`; rank r → rank 0 `REPORT [READY, count, stats…]` + `RESULTS`,
//! or `REPORT [FAILED, task, stats…]` + `FAILURE` (the error message).

use super::{recv_exact, run_task, Farm, FarmStats, Payload, TaskFailure, WorkerStats};
use super::{FAILED, READY};
use crate::{Comm, Result};
use std::time::Instant;

/// Tags on the private communicator.
const BLOCK: i32 = 1;
const TASKS: i32 = 2;
const REPORT: i32 = 3;
const RESULTS: i32 = 4;
const FAILURE: i32 = 5;

/// Runs `work` on every task with a static block distribution over all ranks of `comm`.
/// Collective; only rank 0's `tasks` are read (collected at once, to be split in blocks).
///
/// Returns, at rank 0, the results in task order and the [`FarmStats`] (every rank is a
/// worker, there is no manager); nothing elsewhere.
///
/// # Errors
///
/// A task whose `work` fails: [`Error::TaskFailed`](crate::Error::TaskFailed) at the
/// failing rank and, once every block is in, at rank 0 (the first failure in rank order).
///
/// ```
/// let farms = rpar::run(3, |world| {
///     rpar::pattern::static_blocks(&world, 0..7u32, |n| Ok(vec![n; 2]))
/// })?;
/// let stats = farms[0].stats.as_ref().unwrap();
/// // 7 tasks over 3 ranks: blocks of 2, 2 and 3
/// assert_eq!(stats.workers.iter().map(|w| w.tasks).collect::<Vec<_>>(), [2, 2, 3]);
/// assert_eq!(farms[0].results.as_ref().unwrap()[6], [6, 6]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn static_blocks<T, R, I, F>(comm: &Comm, tasks: I, mut work: F) -> Result<Farm<R>>
where
    T: Payload,
    R: Payload,
    I: IntoIterator<Item = T>,
    F: FnMut(T) -> Result<R>,
{
    let farm = comm.dup()?;
    if farm.rank() == 0 {
        scatter_compute_gather(&farm, tasks.into_iter().collect(), &mut work)
    } else {
        compute_block(&farm, &mut work)
    }
}

/// The first task of rank `rank`'s block of `n` tasks over `p` ranks (its end is the next
/// rank's first).
fn block_start(rank: usize, n: usize, p: usize) -> usize {
    rank * n / p
}

/// Rank 0: send out the blocks, compute its own, gather the others' in rank order.
fn scatter_compute_gather<T: Payload, R: Payload>(
    farm: &Comm,
    tasks: Vec<T>,
    work: &mut impl FnMut(T) -> Result<R>,
) -> Result<Farm<R>> {
    let start = Instant::now();
    let (n, p) = (tasks.len(), farm.size());
    let mut tasks = tasks.into_iter();
    let own: Vec<T> = tasks.by_ref().take(block_start(1, n, p)).collect();
    for rank in 1..p {
        let (first, end) = (block_start(rank, n, p), block_start(rank + 1, n, p));
        farm.send(&[first as u64, (end - first) as u64][..], rank, BLOCK)?;
        T::send_batch(
            farm,
            tasks.by_ref().take(end - first).collect(),
            rank,
            TASKS,
        )?;
    }
    let mut stats = WorkerStats::new(0);
    stats.chunks = usize::from(!own.is_empty());
    let mut results = Vec::with_capacity(n);
    let mut failure = None;
    for (i, task) in own.into_iter().enumerate() {
        match run_task(work, task, i, &mut stats) {
            Ok(r) => results.push(r),
            Err(f) => {
                failure = Some(f);
                break;
            }
        }
    }
    let mut workers = vec![stats];
    for rank in 1..p {
        let mut report = [0u64; 6];
        farm.recv_into(&mut report[..], rank, REPORT)?;
        let [kind, value, encoded @ ..] = report;
        workers.push(WorkerStats::decode(rank, encoded));
        if kind == FAILED {
            let (message, _) = farm.recv::<u8>(rank, FAILURE)?;
            failure.get_or_insert(TaskFailure {
                task: value as usize,
                rank,
                message: String::from_utf8_lossy(&message).into_owned(),
            });
        } else {
            let theirs = recv_exact::<R>(farm, value as usize, rank, RESULTS)?;
            results.extend(theirs);
        }
    }
    if let Some(f) = failure {
        return Err(f.into());
    }
    Ok(Farm {
        results: Some(results),
        stats: Some(FarmStats {
            elapsed: start.elapsed(),
            workers,
            manager: None,
        }),
    })
}

/// Ranks 1..: receive the block, compute it, report back.
fn compute_block<T: Payload, R: Payload>(
    farm: &Comm,
    work: &mut impl FnMut(T) -> Result<R>,
) -> Result<Farm<R>> {
    let mut stats = WorkerStats::new(farm.rank());
    let waiting = Instant::now();
    let mut block = [0u64; 2];
    farm.recv_into(&mut block[..], 0, BLOCK)?;
    let [first, count] = block.map(|x| x as usize);
    let tasks = recv_exact::<T>(farm, count, 0, TASKS)?;
    stats.waiting = waiting.elapsed();
    stats.chunks = usize::from(count > 0);
    let mut results = Vec::with_capacity(count);
    for (i, task) in tasks.into_iter().enumerate() {
        match run_task(work, task, first + i, &mut stats) {
            Ok(r) => results.push(r),
            Err(f) => {
                farm.send(&report(FAILED, f.task, &stats)[..], 0, REPORT)?;
                farm.send(f.message.as_bytes(), 0, FAILURE)?;
                return Err(f.into());
            }
        }
    }
    farm.send(&report(READY, count, &stats)[..], 0, REPORT)?;
    R::send_batch(farm, results, 0, RESULTS)?;
    Ok(Farm::worker())
}

/// A rank's report to rank 0: `[kind, count or failed task, its stats…]`.
fn report(kind: u64, value: usize, stats: &WorkerStats) -> [u64; 6] {
    let [tasks, chunks, busy, waiting] = stats.encode();
    [kind, value as u64, tasks, chunks, busy, waiting]
}
