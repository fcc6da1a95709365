//! What a task farm measured: per-worker load ([`WorkerStats`]), the manager's service
//! ([`ManagerStats`]), and the verdicts drawn from them ([`FarmStats`]): load imbalance, how long
//! workers starved, and whether the manager was the bottleneck.

use std::time::Duration;

/// The load one rank carried in a task farm: an entry of [`FarmStats::workers`].
///
/// ```
/// let stats = rpar::run(3, |world| Ok(rpar::pattern::static_blocks(&world, 0..9u32, Ok)?.stats))?;
/// let workers = &stats[0].as_ref().unwrap().workers;
/// assert_eq!(workers.iter().map(|w| (w.rank, w.tasks, w.chunks)).collect::<Vec<_>>(),
///            [(0, 3, 1), (1, 3, 1), (2, 3, 1)]); // static blocks: one block of 3 each
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkerStats {
    /// The rank (in the farm's communicator).
    pub rank: usize,
    /// Tasks it computed.
    pub tasks: usize,
    /// Batches of tasks it was handed (one per request to the manager that brought work).
    pub chunks: usize,
    /// Time spent in the work closure.
    pub busy: Duration,
    /// Time spent exchanging messages with the manager: handing in results and waiting for the
    /// next chunk (manager-worker), or waiting for its block of tasks (static blocks).
    pub waiting: Duration,
}

impl WorkerStats {
    pub(crate) fn new(rank: usize) -> Self {
        WorkerStats {
            rank,
            ..Default::default()
        }
    }

    /// The stats as the four numbers a worker sends to the manager.
    pub(crate) fn encode(&self) -> [u64; 4] {
        [
            self.tasks as u64,
            self.chunks as u64,
            nanos(self.busy),
            nanos(self.waiting),
        ]
    }

    pub(crate) fn decode(rank: usize, [tasks, chunks, busy, waiting]: [u64; 4]) -> Self {
        WorkerStats {
            rank,
            tasks: tasks as usize,
            chunks: chunks as usize,
            busy: Duration::from_nanos(busy),
            waiting: Duration::from_nanos(waiting),
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// How the manager of a manager-worker farm spent its time: [`FarmStats::manager`].
///
/// ```
/// use rpar::pattern::ManagerWorker;
/// let stats = rpar::run(3, |world| Ok(ManagerWorker::new().run(&world, 0..10u32, Ok)?.stats))?;
/// let manager = stats[0].as_ref().unwrap().manager.expect("a manager-worker farm of 3 ranks");
/// // two workers' first requests, then one per task handed in (the last learns it is done)
/// assert_eq!((manager.requests, manager.returns), (2 + 10, 10));
/// assert!(manager.queued <= manager.returns);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ManagerStats {
    /// Requests served: each worker's first, then one per chunk it computed (handing in its
    /// results), the last of which learns that it is done.
    pub requests: usize,
    /// Requests that handed in results: one per chunk computed.
    pub returns: usize,
    /// Of those, the ones the manager found already waiting when it turned to them
    /// (MPI_Iprobe): a queue of workers in front of it. (Workers' first requests, which all
    /// arrive at once by construction, are left out.)
    pub queued: usize,
    /// Time spent serving requests: receiving results, handing out tasks.
    pub busy: Duration,
    /// Time spent waiting for the next request.
    pub idle: Duration,
}

impl ManagerStats {
    /// The fraction of its time the manager was serving, in `0.0..=1.0` (0 if it never ran):
    /// busy / (busy + idle).
    ///
    /// ```
    /// use rpar::pattern::ManagerStats;
    /// use std::time::Duration;
    /// let m = ManagerStats { busy: Duration::from_secs(1), idle: Duration::from_secs(3), ..Default::default() };
    /// assert_eq!(m.utilisation(), 0.25);
    /// assert_eq!(ManagerStats::default().utilisation(), 0.0);
    /// ```
    pub fn utilisation(&self) -> f64 {
        fraction(self.busy, self.busy + self.idle)
    }

    /// The fraction of result-bearing requests that found the manager with a queue, in
    /// `0.0..=1.0` (0 if none came): queued / returns.
    ///
    /// ```
    /// use rpar::pattern::ManagerStats;
    /// let m = ManagerStats { returns: 40, queued: 30, ..Default::default() };
    /// assert_eq!(m.queued_fraction(), 0.75);
    /// ```
    pub fn queued_fraction(&self) -> f64 {
        if self.returns == 0 {
            0.0
        } else {
            self.queued as f64 / self.returns as f64
        }
    }
}

fn fraction(part: Duration, whole: Duration) -> f64 {
    if whole.is_zero() {
        0.0
    } else {
        part.as_secs_f64() / whole.as_secs_f64()
    }
}

/// What a farm measured, reported at the manager (rank 0).
///
/// ```
/// use rpar::pattern::ManagerWorker;
///
/// let stats = rpar::run(3, |world| {
///     let farm = ManagerWorker::new().run(&world, 0..100u64, |n| Ok(n * n))?;
///     Ok(farm.stats)
/// })?;
/// let stats = stats[0].as_ref().expect("the manager has the stats");
/// assert_eq!(stats.workers.iter().map(|w| w.tasks).sum::<usize>(), 100);
/// assert_eq!(stats.workers.len(), 2); // ranks 1 and 2 worked, rank 0 managed
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FarmStats {
    /// Wall-clock time of the whole farm at the manager, from the first task to the last result.
    pub elapsed: Duration,
    /// The ranks that computed tasks, in rank order: ranks 1.. for a manager-worker farm of more
    /// than one rank, every rank otherwise.
    pub workers: Vec<WorkerStats>,
    /// The manager's service; `None` where no rank managed (one rank, static blocks).
    pub manager: Option<ManagerStats>,
}

impl FarmStats {
    /// Total time spent in the work closure, over all workers.
    ///
    /// ```
    /// use rpar::pattern::{FarmStats, WorkerStats};
    /// use std::time::Duration;
    /// let worker = |rank, ms| WorkerStats { rank, busy: Duration::from_millis(ms), ..Default::default() };
    /// let stats = FarmStats { workers: vec![worker(1, 30), worker(2, 50)], ..Default::default() };
    /// assert_eq!(stats.total_busy(), Duration::from_millis(80));
    /// ```
    pub fn total_busy(&self) -> Duration {
        self.workers.iter().map(|w| w.busy).sum()
    }

    /// The busiest worker's busy time over the mean busy time: 1.0 is a perfect balance, `k`
    /// means the slowest worker had k times its share (0 if no work was done).
    ///
    /// ```
    /// use rpar::pattern::{FarmStats, WorkerStats};
    /// use std::time::Duration;
    /// let worker = |rank, s| WorkerStats { rank, busy: Duration::from_secs(s), ..Default::default() };
    /// let even = FarmStats { workers: vec![worker(0, 2), worker(1, 2)], ..Default::default() };
    /// let skewed = FarmStats { workers: vec![worker(0, 1), worker(1, 3)], ..Default::default() };
    /// assert_eq!(even.load_imbalance(), 1.0);
    /// assert_eq!(skewed.load_imbalance(), 1.5); // 3 s against a mean of 2 s
    /// ```
    pub fn load_imbalance(&self) -> f64 {
        let max = self
            .workers
            .iter()
            .map(|w| w.busy)
            .max()
            .unwrap_or_default();
        let mean = self.total_busy().as_secs_f64() / self.workers.len().max(1) as f64;
        if mean == 0.0 {
            0.0
        } else {
            max.as_secs_f64() / mean
        }
    }

    /// The fraction of the workers' time spent waiting for the manager rather than computing,
    /// in `0.0..=1.0`: total waiting / (total waiting + total busy).
    ///
    /// ```
    /// use rpar::pattern::{FarmStats, WorkerStats};
    /// use std::time::Duration;
    /// let secs = Duration::from_secs;
    /// let w = WorkerStats { rank: 1, busy: secs(3), waiting: secs(1), ..Default::default() };
    /// let stats = FarmStats { workers: vec![w], ..Default::default() };
    /// assert_eq!(stats.worker_waiting_fraction(), 0.25);
    /// ```
    pub fn worker_waiting_fraction(&self) -> f64 {
        let waiting: Duration = self.workers.iter().map(|w| w.waiting).sum();
        fraction(waiting, waiting + self.total_busy())
    }

    /// Whether the manager limited the farm: most requests found others already queued in
    /// front of it, and the workers spent at least a fifth of their time waiting for it. (Its
    /// [utilisation](ManagerStats::utilisation) tells the same on a machine with a core per
    /// rank; where ranks share cores a saturated manager also waits to be scheduled, which
    /// counts as idle, but the queue still forms.) The cure is larger chunks — fewer, larger
    /// messages — or fewer workers. Always `false` without a manager.
    ///
    /// ```
    /// use rpar::pattern::{FarmStats, ManagerStats, WorkerStats};
    /// use std::time::Duration;
    /// let ms = Duration::from_millis;
    /// let starved = WorkerStats { rank: 1, busy: ms(10), waiting: ms(30), ..Default::default() };
    /// let swamped = ManagerStats { returns: 100, queued: 80, ..Default::default() };
    /// let stats = FarmStats { workers: vec![starved], manager: Some(swamped), ..Default::default() };
    /// assert!(stats.manager_is_bottleneck()); // 80% queued, workers wait 75% of the time
    /// let no_manager = FarmStats { manager: None, ..stats.clone() };
    /// assert!(!no_manager.manager_is_bottleneck());
    /// ```
    pub fn manager_is_bottleneck(&self) -> bool {
        self.manager
            .is_some_and(|m| m.queued_fraction() >= 0.5 && self.worker_waiting_fraction() >= 0.2)
    }
}
