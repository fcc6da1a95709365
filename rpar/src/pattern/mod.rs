//! Reusable parallel patterns, written on point-to-point messages the way an MPI program would
//! write them: the manager-worker task farm for dynamic load balancing
//! ([`manager_worker`], [`ManagerWorker`]) and, for comparison, the static block distribution
//! ([`static_blocks`]).
//!
//! Both take the tasks as an iterator (read at rank 0 only), a work closure run on the ranks
//! that compute, and return the results at rank 0 in task order, with [`FarmStats`] that tell
//! how the load was spread and whether the manager became the bottleneck. Each call works on a
//! duplicate of the communicator (MPI_Comm_dup), so its messages never meet the program's own.
//!
//! ```
//! use rpar::pattern::{manager_worker, static_blocks};
//!
//! // Tasks of very uneven cost: summing 1..=n for n = 0, 1000, 2000, …
//! let cost = |n: u64| Ok((1..=n).sum::<u64>());
//! let results = rpar::run(4, |world| {
//!     let dynamic = manager_worker(&world, (0..20u64).map(|i| i * 1000), cost)?;
//!     let fixed = static_blocks(&world, (0..20u64).map(|i| i * 1000), cost)?;
//!     Ok((dynamic, fixed.results))
//! })?;
//! let expected: Vec<u64> = (0..20u64).map(|i| i * 1000 * (i * 1000 + 1) / 2).collect();
//! assert_eq!(results[0], (Some(expected.clone()), Some(expected)));
//! assert_eq!(results[1], (None, None)); // results arrive at rank 0 only
//! # Ok::<(), rpar::Error>(())
//! ```
//!
//! Depends on `comm` (point-to-point messages, dup, probe) and `datatype`.

mod manager_worker;
mod payload;
mod results;
mod static_blocks;
mod stats;

pub use manager_worker::{manager_worker, ManagerWorker};
pub use payload::Payload;
pub use static_blocks::static_blocks;
pub use stats::{FarmStats, ManagerStats, WorkerStats};

use crate::{Comm, Error, Result};
use std::time::Instant;

/// What a task farm returns on each rank: the results and stats at rank 0, nothing elsewhere.
///
/// ```
/// let farms = rpar::run(2, |world| {
///     rpar::pattern::ManagerWorker::new().run(&world, [3u8, 1, 2], |x| Ok(x * 2))
/// })?;
/// assert!(farms[0].is_manager() && !farms[1].is_manager());
/// assert_eq!(farms[0].results, Some(vec![6, 2, 4]));
/// assert_eq!(farms[1].results, None);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Farm<R> {
    /// At rank 0, the result of every task, in task order; `None` elsewhere.
    pub results: Option<Vec<R>>,
    /// At rank 0, what the farm measured; `None` elsewhere.
    pub stats: Option<FarmStats>,
}

impl<R> Farm<R> {
    /// Whether this is rank 0's farm, holding the results (also true for
    /// [`static_blocks`], where rank 0 computes as well as collects).
    ///
    /// ```
    /// let who = rpar::run(3, |world| {
    ///     let farm = rpar::pattern::static_blocks(&world, 0..6u32, |n| Ok(n))?;
    ///     Ok(farm.is_manager())
    /// })?;
    /// assert_eq!(who, vec![true, false, false]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn is_manager(&self) -> bool {
        self.results.is_some()
    }

    /// What a rank other than 0 returns.
    fn worker() -> Self {
        Farm {
            results: None,
            stats: None,
        }
    }
}

/// First word of a worker's message to rank 0: results follow.
const READY: u64 = 0;
/// First word of a worker's message to rank 0: a task failed, its error message follows.
const FAILED: u64 = 1;

/// Receives a batch of exactly `count` payloads: [`Payload::recv_batch`], checked, so that a
/// `Payload` implementation of the user's that miscounts is an error rather than lost results.
fn recv_exact<P: Payload>(farm: &Comm, count: usize, source: usize, tag: i32) -> Result<Vec<P>> {
    let batch = P::recv_batch(farm, count, source, tag)?;
    if batch.len() != count {
        return Err(Error::invalid(
            "Payload::recv_batch",
            format!(
                "the batch of {} from rank {source} should hold {count} items, it held {}",
                std::any::type_name::<P>(),
                batch.len()
            ),
        ));
    }
    Ok(batch)
}

/// A task whose work closure returned an error: which task, on which rank, and the error's
/// message (all a message can carry to other ranks). Becomes [`Error::TaskFailed`].
struct TaskFailure {
    task: usize,
    rank: usize,
    message: String,
}

impl From<TaskFailure> for Error {
    fn from(f: TaskFailure) -> Self {
        Error::TaskFailed {
            task: f.task,
            rank: f.rank,
            message: f.message,
        }
    }
}

/// Runs one task, adding its time to `stats.busy` and counting it if it succeeds; an error
/// becomes a [`TaskFailure`] of task number `index`.
fn run_task<T, R>(
    work: &mut impl FnMut(T) -> Result<R>,
    task: T,
    index: usize,
    stats: &mut WorkerStats,
) -> Result<R, TaskFailure> {
    let start = Instant::now();
    let outcome = work(task);
    stats.busy += start.elapsed();
    match outcome {
        Ok(r) => {
            stats.tasks += 1;
            Ok(r)
        }
        Err(e) => Err(TaskFailure {
            task: index,
            rank: stats.rank,
            message: e.to_string(),
        }),
    }
}
