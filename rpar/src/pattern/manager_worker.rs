//! The manager-worker scheme (task farm) for dynamic load balancing, as the lecture draws it:
//! rank 0, the manager, holds the tasks; every other rank, a worker, asks for work, computes
//! it, and hands the results in with its next request; when the tasks run out the manager
//! answers with a termination message. Fast workers simply ask more often, so tasks of very
//! uneven cost spread evenly without anyone knowing the costs in advance.
//!
//! The price is one manager that computes nothing and serves every request in turn: when tasks
//! are short and workers many, requests queue in front of it and it becomes the bottleneck —
//! handing out tasks in chunks divides its load by the chunk size ([`ManagerWorker::chunk`]).
//!
//! Protocol on a private duplicate of the communicator (MPI_Comm_dup), all point-to-point:
//! worker → manager `REQUEST [READY, n]` + `RESULTS` (the n results of its last chunk), or
//! `REQUEST [FAILED, task]` + `FAILURE` (the error message); manager → worker
//! `REPLY [WORK, first, count]` + `TASKS`, `REPLY [STOP]`, or `REPLY [ABORT, rank, task]` +
//! `FAILURE`; a stopped worker finally sends its `STATS`. The manager receives requests from
//! MPI_ANY_SOURCE; everything after a request comes from that worker, in order.

use super::{
    recv_exact, run_task, Farm, FarmStats, ManagerStats, Payload, TaskFailure, WorkerStats,
};
use super::{FAILED, READY};
use crate::{Comm, Error, Result, ANY_SOURCE};
use std::time::Instant;

/// Tags on the farm's private communicator.
const REQUEST: i32 = 1;
const RESULTS: i32 = 2;
const FAILURE: i32 = 3;
const REPLY: i32 = 4;
const TASKS: i32 = 5;
const STATS: i32 = 6;

/// First word of the manager's reply: a chunk of tasks follows.
const WORK: u64 = 0;
/// First word of the manager's reply: no tasks are left, send your stats and finish.
const STOP: u64 = 1;
/// First word of the manager's reply: a task failed on another worker, its message follows.
const ABORT: u64 = 2;

/// Runs `work` on every task, handed out one at a time by rank 0 to the other ranks as they
/// ask: the manager-worker scheme with default settings (see [`ManagerWorker`]). Collective:
/// every rank of `comm` calls it; only rank 0's `tasks` are read.
///
/// Returns, at rank 0, the results in task order (result `i` is that of the `i`-th task);
/// `None` on the other ranks. With one rank, rank 0 computes every task itself.
///
/// # Errors
///
/// The first task whose `work` fails stops the farm; rank 0 and the failing rank return
/// [`Error::TaskFailed`], the other workers [`Error::Aborted`].
///
/// ```
/// let squares = rpar::run(3, |world| {
///     rpar::pattern::manager_worker(&world, 1..=5u32, |n| Ok(n * n))
/// })?;
/// assert_eq!(squares[0], Some(vec![1, 4, 9, 16, 25]));
/// assert_eq!(squares[1], None);
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn manager_worker<T, R, I, F>(comm: &Comm, tasks: I, work: F) -> Result<Option<Vec<R>>>
where
    T: Payload,
    R: Payload,
    I: IntoIterator<Item = T>,
    F: FnMut(T) -> Result<R>,
{
    Ok(ManagerWorker::new().run(comm, tasks, work)?.results)
}

/// A manager-worker task farm, configured: how many tasks the manager hands out per request.
///
/// ```
/// use rpar::pattern::ManagerWorker;
///
/// // Rows of uneven length, 4 to a chunk; results are `Vec`s.
/// let rows = rpar::run(4, |world| {
///     let farm = ManagerWorker::new().chunk(4).run(&world, 0..10u16, |n| Ok(vec![n; n as usize]))?;
///     if let Some(stats) = &farm.stats {
///         assert_eq!(stats.workers.iter().map(|w| w.tasks).sum::<usize>(), 10);
///         assert_eq!(stats.workers.iter().map(|w| w.chunks).sum::<usize>(), 3); // 4 + 4 + 2
///     }
///     Ok(farm.results)
/// })?;
/// let rows = rows[0].as_ref().unwrap();
/// assert_eq!(rows[3], vec![3, 3, 3]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManagerWorker {
    chunk: usize,
}

impl Default for ManagerWorker {
    fn default() -> Self {
        Self::new()
    }
}

impl ManagerWorker {
    /// A farm that hands out one task per request (the same as `ManagerWorker::default()`).
    ///
    /// ```
    /// use rpar::pattern::ManagerWorker;
    /// assert_eq!(ManagerWorker::new().chunk_size(), 1);
    /// assert_eq!(ManagerWorker::new(), ManagerWorker::default());
    /// let doubled = rpar::run(2, |world| Ok(ManagerWorker::new().run(&world, [1u32, 2, 3], |x| Ok(2 * x))?.results))?;
    /// assert_eq!(doubled[0], Some(vec![2, 4, 6]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub const fn new() -> Self {
        ManagerWorker { chunk: 1 }
    }

    /// Hands out up to `tasks` tasks per request (at least 1; 0 is refused by [`run`]):
    /// fewer, larger messages relieve the manager, at the cost of a coarser balance at the end.
    ///
    /// [`run`]: ManagerWorker::run
    ///
    /// ```
    /// use rpar::pattern::ManagerWorker;
    /// let requests = rpar::run(3, |world| {
    ///     let farm = ManagerWorker::new().chunk(10).run(&world, 0..100u64, |n| Ok(n + 1))?;
    ///     Ok(farm.stats.map(|s| s.workers.iter().map(|w| w.chunks).sum::<usize>()))
    /// })?;
    /// assert_eq!(requests[0], Some(10)); // 100 tasks in chunks of 10
    /// let refused = rpar::run(2, |world| ManagerWorker::new().chunk(0).run(&world, 0..4u8, Ok).map(drop));
    /// assert!(refused.is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub const fn chunk(self, tasks: usize) -> Self {
        ManagerWorker { chunk: tasks }
    }

    /// The number of tasks handed out per request.
    ///
    /// ```
    /// use rpar::pattern::ManagerWorker;
    /// const FARM: ManagerWorker = ManagerWorker::new().chunk(16);
    /// assert_eq!(FARM.chunk_size(), 16);
    /// ```
    pub const fn chunk_size(&self) -> usize {
        self.chunk
    }

    /// Runs the farm: rank 0 hands out `tasks` in chunks to the other ranks as they ask, they
    /// compute each with `work`. Collective over `comm`; only rank 0's `tasks` are read (the
    /// iterator is consumed lazily, a chunk at a time). With one rank, rank 0 computes every
    /// task itself.
    ///
    /// Returns at rank 0 the results in task order and the [`FarmStats`]; nothing elsewhere.
    ///
    /// # Errors
    ///
    /// A chunk size of 0 ([`Error::InvalidArgument`]); a task whose `work` fails:
    /// [`Error::TaskFailed`] at rank 0 and the failing rank, [`Error::Aborted`] at the other
    /// workers, once every worker has been told to stop.
    ///
    /// ```
    /// use rpar::pattern::ManagerWorker;
    ///
    /// let err = rpar::run(3, |world| {
    ///     ManagerWorker::new().run(&world, 0..10i32, |n| {
    ///         if n == 7 { Err(rpar::Error::user("seven is unlucky")) } else { Ok(n) }
    ///     })
    /// })
    /// .unwrap_err();
    /// assert!(err.to_string().contains("task 7 failed"), "{err}");
    /// assert!(err.to_string().contains("seven is unlucky"), "{err}");
    /// ```
    pub fn run<T, R, I, F>(&self, comm: &Comm, tasks: I, mut work: F) -> Result<Farm<R>>
    where
        T: Payload,
        R: Payload,
        I: IntoIterator<Item = T>,
        F: FnMut(T) -> Result<R>,
    {
        if self.chunk == 0 {
            return Err(Error::invalid(
                "ManagerWorker::run",
                "expected a chunk of at least 1 task per request, got 0",
            ));
        }
        let farm = comm.dup()?;
        match (farm.rank(), farm.size()) {
            (0, 1) => compute_alone(tasks, &mut work),
            (0, _) => self.manage(&farm, tasks.into_iter()),
            _ => serve(&farm, &mut work),
        }
    }

    /// The manager's loop: answer requests until every worker is stopped, then gather stats.
    fn manage<T: Payload, R: Payload>(
        &self,
        farm: &Comm,
        tasks: impl Iterator<Item = T>,
    ) -> Result<Farm<R>> {
        let start = Instant::now();
        let mut tasks = tasks.fuse();
        let mut results: Vec<Option<R>> = Vec::new();
        // (first task, count) of the chunk each rank is working on.
        let mut handed = vec![(0usize, 0usize); farm.size()];
        // Workers that asked when no tasks were left: they wait for their reply until every
        // chunk is back, so that a failure in a chunk still out reaches them too.
        let mut idle = Vec::with_capacity(farm.size() - 1);
        let mut failure: Option<TaskFailure> = None;
        let mut active = farm.size() - 1;
        let mut stats = ManagerStats::default();
        while active > 0 {
            let wait = Instant::now();
            let queued = farm.iprobe(ANY_SOURCE, REQUEST)?.is_some();
            let mut request = [0u64; 2];
            let worker = farm.recv_into(&mut request, ANY_SOURCE, REQUEST)?.source;
            let serve = Instant::now();
            stats.idle += serve - wait;
            stats.requests += 1;
            if request[0] == FAILED {
                let (message, _) = farm.recv::<u8>(worker, FAILURE)?;
                failure.get_or_insert(TaskFailure {
                    task: request[1] as usize,
                    rank: worker,
                    message: String::from_utf8_lossy(&message).into_owned(),
                });
                active -= 1;
            } else {
                let (first, count) = handed[worker];
                debug_assert_eq!(request, [READY, count as u64]);
                if count > 0 {
                    stats.returns += 1;
                    stats.queued += usize::from(queued);
                }
                let done = recv_exact::<R>(farm, count, worker, RESULTS)?;
                for (slot, r) in results[first..first + count].iter_mut().zip(done) {
                    *slot = Some(r);
                }
                let chunk: Vec<T> = match failure {
                    None => tasks.by_ref().take(self.chunk).collect(),
                    Some(_) => Vec::new(),
                };
                if let Some(f) = &failure {
                    tell_failure(farm, f, worker)?;
                    active -= 1;
                } else if chunk.is_empty() {
                    idle.push(worker);
                    active -= 1;
                } else {
                    let first = results.len();
                    handed[worker] = (first, chunk.len());
                    results.extend(chunk.iter().map(|_| None));
                    farm.send(&[WORK, first as u64, chunk.len() as u64][..], worker, REPLY)?;
                    T::send_batch(farm, chunk, worker, TASKS)?;
                }
            }
            stats.busy += serve.elapsed();
        }
        idle.sort_unstable();
        if let Some(f) = failure {
            for &worker in &idle {
                tell_failure(farm, &f, worker)?;
            }
            return Err(f.into());
        }
        for &worker in &idle {
            farm.send(&[STOP, 0, 0][..], worker, REPLY)?;
        }
        let mut workers = Vec::with_capacity(idle.len());
        for rank in idle {
            let mut encoded = [0u64; 4];
            farm.recv_into(&mut encoded[..], rank, STATS)?;
            workers.push(WorkerStats::decode(rank, encoded));
        }
        let results = results
            .into_iter()
            .collect::<Option<Vec<R>>>()
            .expect("every worker handed in its last chunk before it was stopped");
        Ok(Farm {
            results: Some(results),
            stats: Some(FarmStats {
                elapsed: start.elapsed(),
                workers,
                manager: Some(stats),
            }),
        })
    }
}

/// The manager's reply to `worker` once a task has failed: stop, and why.
fn tell_failure(farm: &Comm, f: &TaskFailure, worker: usize) -> Result<()> {
    farm.send(&[ABORT, f.rank as u64, f.task as u64][..], worker, REPLY)?;
    farm.send(f.message.as_bytes(), worker, FAILURE)
}

/// One rank: the manager computes every task itself, in order.
fn compute_alone<T, R>(
    tasks: impl IntoIterator<Item = T>,
    work: &mut impl FnMut(T) -> Result<R>,
) -> Result<Farm<R>> {
    let start = Instant::now();
    let mut stats = WorkerStats::new(0);
    let results = tasks
        .into_iter()
        .enumerate()
        .map(|(i, task)| run_task(work, task, i, &mut stats))
        .collect::<Result<Vec<R>, TaskFailure>>()?;
    stats.chunks = usize::from(!results.is_empty());
    Ok(Farm {
        results: Some(results),
        stats: Some(FarmStats {
            elapsed: start.elapsed(),
            workers: vec![stats],
            manager: None,
        }),
    })
}

/// A worker's loop: hand in the last results with the next request, compute what comes back.
fn serve<T: Payload, R: Payload>(
    farm: &Comm,
    work: &mut impl FnMut(T) -> Result<R>,
) -> Result<Farm<R>> {
    let mut stats = WorkerStats::new(farm.rank());
    let mut done: Vec<R> = Vec::new();
    loop {
        let asking = Instant::now();
        farm.send(&[READY, done.len() as u64][..], 0, REQUEST)?;
        R::send_batch(farm, std::mem::take(&mut done), 0, RESULTS)?;
        let mut reply = [0u64; 3];
        farm.recv_into(&mut reply[..], 0, REPLY)?;
        match reply {
            [WORK, first, count] => {
                let tasks = recv_exact::<T>(farm, count as usize, 0, TASKS)?;
                stats.waiting += asking.elapsed();
                stats.chunks += 1;
                for (i, task) in tasks.into_iter().enumerate() {
                    match run_task(work, task, first as usize + i, &mut stats) {
                        Ok(r) => done.push(r),
                        Err(f) => {
                            farm.send(&[FAILED, f.task as u64][..], 0, REQUEST)?;
                            farm.send(f.message.as_bytes(), 0, FAILURE)?;
                            return Err(f.into());
                        }
                    }
                }
            }
            [ABORT, rank, task] => {
                let (message, _) = farm.recv::<u8>(0, FAILURE)?;
                return Err(Error::Aborted {
                    rank: farm.world_rank_of(rank as usize)?,
                    message: format!("task {task} failed: {}", String::from_utf8_lossy(&message)),
                });
            }
            _ => {
                stats.waiting += asking.elapsed();
                farm.send(&stats.encode()[..], 0, STATS)?;
                return Ok(Farm::worker());
            }
        }
    }
}
