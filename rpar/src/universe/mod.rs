//! Launching ranks: [`Universe`] starts one thread per rank, hands each its world communicator,
//! and collects the results in rank order — or the error of the first rank that failed, after
//! every other rank's blocked calls have returned [`Error::Aborted`].
//!
//! Depends on `comm` and `transport`.

mod affinity;
mod limits;
#[cfg(feature = "mpi")]
mod mpi;
mod results;
mod simulate;

pub(crate) use results::value_results;
pub use results::{RankResult, ResultLink, RunResult};
pub use simulate::Simulation;

use crate::comm::Comm;
use crate::error::Warning;
use crate::trace::{
    claim_file, write_chrome_trace, CommMatrix, Event, MatrixRow, RankTrace, Recorded,
};
use crate::transport::{watchdog, Endpoint, Fabric, Failure, Placement};
use crate::{Error, Result};
use affinity::Cores;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A set of ranks to run an SPMD program on (the in-process counterpart of `mpiexec -n`).
///
/// ```
/// let squares = rpar::Universe::new(4).run(|world| Ok(world.rank() * world.rank()))?;
/// assert_eq!(squares, vec![0, 1, 4, 9]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Universe {
    ranks: usize,
    stack_size: Option<usize>,
    deadlock_detection: bool,
    strict: bool,
    trace: Option<PathBuf>,
    record_matrix: bool,
    poll_budget: Option<Duration>,
    bind: Option<bool>,
    transport: Transport,
    /// The failure to inject (reliability tests only: see `fault.rs`).
    #[cfg(rpar_faults)]
    fault: Option<crate::fault::Fault>,
}

/// Where a run's ranks run (see [`Universe::transport`]).
///
/// ```
/// use rpar::{Transport, Universe};
/// assert_eq!(Transport::default(), Transport::Auto);
/// let ranks = Universe::new(3).transport(Transport::InProcess).run(|world| Ok(world.rank()))?;
/// assert_eq!(ranks, vec![0, 1, 2]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Transport {
    /// The default: MPI if the program was built with the `mpi` cargo feature and an MPI
    /// launcher (`mpiexec`, `mpirun`, `srun`) started it; else in-process.
    #[default]
    Auto,
    /// Threads of this process, on the lock-free in-process runtime.
    InProcess,
    /// MPI processes: this process is one rank of the job (its rank in `MPI_COMM_WORLD`), and
    /// the launcher decides how many there are. Needs the `mpi` cargo feature.
    Mpi,
}

/// How long a blocked call polls (yielding the core between looks) before it parks. The same
/// whether or not ranks outnumber cores: parking costs a wake-up system call later, and with
/// ranks outnumbering two cores 50 us beat 5 us everywhere measured (medians of 3, nothing else
/// running): 8 ranks, shared-memory bcast of 64 KiB 16 us against 299, allreduce of 8 B 10
/// against 19; recursive-doubling allreduce of 8 B 46-51 against 81-85; 256 ranks, allreduce of
/// 8 B 1.19 ms against 1.33.
const DEFAULT_POLL: Duration = Duration::from_micros(50);

impl Universe {
    /// A universe of `ranks` ranks (threads; `mpiexec -n ranks`), with the defaults of every
    /// setting below. Nothing starts until [`run`](Universe::run); a universe can run any number of
    /// programs.
    ///
    /// ```
    /// let u = rpar::Universe::new(4);
    /// assert_eq!(u.ranks(), 4);
    /// assert_eq!(u.run(|world| Ok(world.size()))?, vec![4; 4]);
    /// assert_eq!(u.run(|world| Ok(world.rank() % 2))?, vec![0, 1, 0, 1]);
    /// assert!(rpar::Universe::new(0).run(|_| Ok(())).is_err()); // needs at least one rank
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn new(ranks: usize) -> Self {
        Universe {
            ranks,
            stack_size: None,
            deadlock_detection: true,
            strict: false,
            trace: None,
            record_matrix: false,
            poll_budget: None,
            bind: None,
            transport: Transport::Auto,
            #[cfg(rpar_faults)]
            fault: None,
        }
    }

    /// Makes one rank fail at one of its fault points (reliability tests, `--cfg rpar_faults`
    /// builds only: see `rpar::fault`).
    #[cfg(rpar_faults)]
    #[doc(hidden)]
    pub fn inject(mut self, fault: crate::fault::Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// A universe on the MPI transport (the same as `Universe::new(0).transport(Transport::Mpi)`):
    /// the MPI launcher decides the number of ranks, and this process is one of them. For code
    /// that chooses its transport itself; `Universe::new(n)` picks MPI on its own when an MPI
    /// launcher started the program (see [`Transport::Auto`]).
    ///
    /// ```
    /// let u = rpar::Universe::mpi();
    /// # #[cfg(not(feature = "mpi"))]
    /// assert!(u.run(|world| Ok(world.rank())).is_err()); // built without the `mpi` feature
    /// ```
    pub fn mpi() -> Self {
        Universe::new(0).transport(Transport::Mpi)
    }

    /// Where the ranks run: threads of this process, or MPI processes (default:
    /// [`Transport::Auto`]). On MPI the launcher's process count replaces `ranks`, the
    /// deadlock watchdog and the communication matrix are not available, and a trace is written
    /// per process (`trace.json` becomes `trace.rank0.json`, …).
    ///
    /// [`Transport::Mpi`] in an rpar built without the `mpi` cargo feature makes
    /// [`run`](Universe::run) fail with [`Error::InvalidArgument`].
    ///
    /// ```
    /// use rpar::{Transport, Universe};
    /// let threads = Universe::new(2).transport(Transport::InProcess);
    /// assert_eq!(threads.run(|world| Ok(world.size()))?, vec![2, 2]);
    /// # #[cfg(not(feature = "mpi"))]
    /// assert!(matches!(
    ///     Universe::new(2).transport(Transport::Mpi).run(|_| Ok(())),
    ///     Err(rpar::Error::InvalidArgument { .. })
    /// ));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// Whether this run goes on MPI: an error if MPI was asked for but is not built in.
    fn on_mpi(&self) -> Result<bool> {
        match self.transport {
            Transport::InProcess => Ok(false),
            Transport::Auto => Ok(cfg!(feature = "mpi") && launched_by_mpi()),
            Transport::Mpi if cfg!(feature = "mpi") => Ok(true),
            Transport::Mpi => Err(Error::invalid(
                "Universe::run",
                "an rpar built with the `mpi` cargo feature for Transport::Mpi, got one without",
            )),
        }
    }

    /// The stack size of each rank's thread, in bytes (default: the platform's thread default,
    /// 2 MiB on Linux unless `RUST_MIN_STACK` says otherwise). Raise it for ranks with large
    /// arrays on the stack or deep recursion.
    ///
    /// ```
    /// let sums = rpar::Universe::new(2).stack_size(64 << 20).run(|world| {
    ///     let grid = std::hint::black_box([world.rank() as u8; 4 << 20]); // 4 MiB on the stack
    ///     Ok(grid.iter().map(|&x| x as usize).sum::<usize>())
    /// })?;
    /// assert_eq!(sums, vec![0, 4 << 20]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Whether a watchdog ends the run with [`Error::Deadlock`] when every running rank is
    /// blocked and no message can unblock any of them (default: on; it costs nothing on the
    /// message paths and one wake-up of a helper thread every 40 ms). With it off, a deadlocked
    /// run hangs, as an MPI program does.
    ///
    /// ```
    /// let err = rpar::Universe::new(2)
    ///     .deadlock_detection(true)
    ///     .run(|world| {
    ///         world.recv::<u8>(1 - world.rank(), 0)?; // both wait, nobody sends
    ///         Ok(())
    ///     })
    ///     .unwrap_err();
    /// let rpar::Error::Deadlock { blocked, .. } = err else { panic!("{err}") };
    /// assert_eq!(blocked.len(), 2);
    /// assert_eq!((blocked[0].call.as_str(), blocked[0].peer), ("recv", Some(1)));
    /// ```
    pub fn deadlock_detection(mut self, on: bool) -> Self {
        self.deadlock_detection = on;
        self
    }

    /// Strict mode: a run that leaves messages unreceived or receives incomplete fails with
    /// [`Error::Leaks`] (default: off; they are reported by [`Universe::run_report`]).
    ///
    /// ```
    /// let leaky = |world: rpar::Comm| -> rpar::Result<()> {
    ///     if world.rank() == 0 {
    ///         world.send(&7u32, 1, 3)?; // rank 1 never receives it
    ///     }
    ///     Ok(())
    /// };
    /// assert!(rpar::Universe::new(2).run(leaky).is_ok());
    /// let err = rpar::Universe::new(2).strict(true).run(leaky).unwrap_err();
    /// let rpar::Error::Leaks { warnings } = err else { panic!("{err}") };
    /// assert!(matches!(warnings[..], [rpar::Warning::Unreceived { to: 1, from: 0, tag: 3, .. }]));
    /// ```
    pub fn strict(mut self, on: bool) -> Self {
        self.strict = on;
        self
    }

    /// Writes a Chrome trace-event file of the run to `path` (Perfetto and chrome://tracing open
    /// it): one track per rank, a span for every call — point-to-point, non-blocking (the
    /// posting call, and the `wait` or `test` that completes it), probe, collective — with its
    /// peer, tag, bytes and, for a collective, algorithm, and an arrow from each send to its
    /// receive. Without this, the environment variable `RPAR_TRACE=file.json` does the same.
    /// With the `trace` cargo feature off (it is on by default) nothing is recorded and the
    /// file holds no events. A `test` or `iprobe` that finds nothing leaves no span.
    ///
    /// Each run writes a file of its own: the first run of the process that traces to a path
    /// writes `path`, later ones `trace.2.json`, `trace.3.json`, … for `trace.json` (the
    /// number before the extension), so a program that runs several universes keeps every
    /// run's trace. On the MPI transport each process writes its rank's file
    /// (`trace.rank3.json`, `trace.2.rank3.json`, …).
    ///
    /// A file that cannot be written makes the run fail with [`Error::InvalidArgument`], after
    /// the ranks have finished.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("rpar-doc-trace-{}.json", std::process::id()));
    /// let u = rpar::Universe::new(2).trace(&path);
    /// u.run(|world| world.allreduce(&1u32, rpar::Sum))?;
    /// u.run(|world| world.barrier())?; // a second run: its own file
    /// let second = path.with_file_name(format!("rpar-doc-trace-{}.2.json", std::process::id()));
    /// let (json, json2) = (std::fs::read_to_string(&path).unwrap(), std::fs::read_to_string(&second).unwrap());
    /// assert!(json.contains("traceEvents") && json2.contains("traceEvents"));
    /// # #[cfg(feature = "trace")]
    /// assert!(json.contains("rank 1") && json.contains("allreduce") && json2.contains("barrier"));
    /// # std::fs::remove_file(&path).unwrap();
    /// # std::fs::remove_file(&second).unwrap();
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Self {
        self.trace = Some(path.into());
        self
    }

    /// Records the communication matrix (messages and bytes per pair of ranks), returned in
    /// [`RunReport::matrix`] (default: off, and the matrix is `None`). See [`CommMatrix`] for an
    /// example.
    ///
    /// ```
    /// let ring = |world: rpar::Comm| -> rpar::Result<()> {
    ///     let (r, p) = (world.rank(), world.size());
    ///     world.send(&[0u8; 4][..], (r + 1) % p, 0)?;
    ///     world.recv::<u8>((r + p - 1) % p, 0)?;
    ///     Ok(())
    /// };
    /// let report = rpar::Universe::new(3).record_matrix(true).run_report(ring)?;
    /// let m = report.matrix.expect("recorded");
    /// assert_eq!((m.total_messages(), m.total_bytes()), (3, 12));
    /// assert!(rpar::Universe::new(3).run_report(ring)?.matrix.is_none());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn record_matrix(mut self, on: bool) -> Self {
        self.record_matrix = on;
        self
    }

    /// How long a blocked call keeps polling (yielding the core between looks) before it parks
    /// its thread. Longer polls answer faster and spare wake-up system calls; shorter ones leave
    /// the cores to ranks with work when ranks far outnumber cores. Default: 50 us; the
    /// environment variable `RPAR_POLL_US` overrides the default. It changes how fast, never
    /// what, a program computes.
    ///
    /// ```
    /// use std::time::Duration;
    /// // many more ranks than cores: park at once rather than poll
    /// let u = rpar::Universe::new(32).poll_budget(Duration::ZERO);
    /// let sums = u.run(|world| world.allreduce(&(world.rank() as u64), rpar::Sum))?;
    /// assert!(sums.iter().all(|&s| s == 31 * 32 / 2));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn poll_budget(mut self, budget: Duration) -> Self {
        self.poll_budget = Some(budget);
        self
    }

    /// Whether each rank's thread is bound to a core, the ranks of a run to consecutive ones of
    /// the `c` cores the process may use (wrapping around; each run starts where the one before
    /// left off), as `mpiexec --bind-to core` binds processes. Default: bound
    /// (Linux; elsewhere binding does nothing); the environment variable `RPAR_BIND=0` turns it
    /// off. Unbound, the system may start two polling ranks on one core and keep them there.
    ///
    /// ```
    /// let r = rpar::Universe::new(2).bind_ranks(false).run(|world| Ok(world.rank()))?;
    /// assert_eq!(r, [0, 1]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn bind_ranks(mut self, bind: bool) -> Self {
        self.bind = Some(bind);
        self
    }

    /// Number of ranks, as given to [`Universe::new`] (on the MPI transport the launcher's
    /// process count takes its place when the program runs).
    ///
    /// ```
    /// assert_eq!(rpar::Universe::new(6).strict(true).ranks(), 6);
    /// ```
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// Runs `program` on every rank and returns the ranks' results in rank order (the program
    /// between MPI_Init and MPI_Finalize, `world` its MPI_COMM_WORLD).
    ///
    /// If a rank panics or returns an error, the run is aborted: every other rank's blocked
    /// call returns [`Error::Aborted`] at once, and `run` returns [`Error::RankPanicked`] or
    /// [`Error::RankFailed`] naming the first rank that failed.
    ///
    /// # Errors
    ///
    /// [`Error::RankPanicked`] or [`Error::RankFailed`] as above; [`Error::CollectiveMismatch`] if
    /// the ranks of a communicator called different collectives; [`Error::Deadlock`] if the
    /// [watchdog](Universe::deadlock_detection) found every rank blocked; [`Error::Leaks`] in
    /// [strict](Universe::strict) mode; [`Error::InvalidArgument`] for 0 ranks, more ranks than
    /// this machine has threads for (checked before any starts, on Linux: the message names
    /// the limit — memory maps, threads, pids, the user's processes or the cgroup's — and the
    /// largest rank count that fits), a thread that could not be started all the same (the
    /// ranks already started are stopped first), a [trace](Universe::trace) file that could not
    /// be written, or [`Transport::Mpi`] without the `mpi` cargo feature.
    ///
    /// ```
    /// let err = rpar::Universe::new(3)
    ///     .run(|world| {
    ///         if world.rank() == 2 {
    ///             panic!("bad input on rank 2");
    ///         }
    ///         world.recv::<u8>(2, 0)?; // would wait forever; returns Aborted instead
    ///         Ok(())
    ///     })
    ///     .unwrap_err();
    /// assert!(matches!(err, rpar::Error::RankPanicked { rank: 2, .. }));
    ///
    /// // far more threads than any machine has: refused before a single one starts
    /// let err = rpar::Universe::new(1 << 40).run(|_| Ok(())).unwrap_err();
    /// # #[cfg(target_os = "linux")]
    /// assert!(err.to_string().contains("this machine allows at most"), "{err}");
    /// ```
    pub fn run<F, R>(&self, program: F) -> Result<Vec<R>>
    where
        F: Fn(Comm) -> Result<R> + Sync,
        R: RunResult,
    {
        Ok(self.run_report(program)?.results)
    }

    /// Like [`Universe::run`], and also reports what the run left behind: messages sent but
    /// never received, receives never completed. In [strict](Universe::strict) mode those are
    /// an [`Error::Leaks`] instead.
    ///
    /// # Errors
    ///
    /// Those of [`Universe::run`].
    ///
    /// ```
    /// let report = rpar::Universe::new(2).run_report(|world| {
    ///     if world.rank() == 0 {
    ///         world.send(&1u8, 1, 4)?; // rank 1 never receives it
    ///     }
    ///     Ok(())
    /// })?;
    /// assert_eq!(report.warnings.len(), 1);
    /// assert!(report.warnings[0].to_string().contains("never received"));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn run_report<F, R>(&self, program: F) -> Result<RunReport<R>>
    where
        F: Fn(Comm) -> Result<R> + Sync,
        R: RunResult,
    {
        if self.on_mpi()? {
            #[cfg(feature = "mpi")]
            return mpi::run(self, program);
        }
        Ok(self.run_threads(&program, Recording::Run)?.0)
    }

    /// Runs `program` on a thread per rank, each recording what `recording` says (under a
    /// simulation the run's own trace is not written, and the ranks' records are returned).
    fn run_threads<F, R>(
        &self,
        program: &F,
        recording: Recording,
    ) -> Result<(RunReport<R>, Vec<Recorded>)>
    where
        F: Fn(Comm) -> Result<R> + Sync,
        R: RunResult,
    {
        let n = self.ranks;
        if n == 0 {
            return Err(Error::invalid(
                "Universe::run",
                "expected at least 1 rank, got 0",
            ));
        }
        // before anything is allocated for n ranks, and before any thread starts
        let record_maps = usize::from(recording != Recording::Run);
        limits::check(n, usize::from(self.deadlock_detection), record_maps)?;
        let (fabric, mailboxes) = Fabric::new(n, Placement::Threads(n), self.polling());
        let fabric = Arc::new(fabric);
        let stop_watch = AtomicBool::new(false);
        let simulated = match recording {
            Recording::Run => None,
            Recording::Simulation { detailed } => Some(detailed),
        };
        let trace_path = match simulated {
            None => self.trace_file(),
            Some(_) => None,
        };
        let cores = self.binds().then(|| Cores::for_run(n)).flatten();
        let world: Arc<[usize]> = (0..n).collect();
        let cores = &cores;
        let epoch = Instant::now();
        // the ranks' outcomes, and the error of a thread that could not be started
        let (outcomes, not_started) = std::thread::scope(|s| {
            let watchdog = if self.deadlock_detection {
                let (fabric, stop) = (&*fabric, &stop_watch);
                let spawned = std::thread::Builder::new()
                    .name("rpar-watchdog".into())
                    .spawn_scoped(s, move || watchdog(fabric, stop));
                match spawned {
                    Ok(h) => Some(h),
                    Err(e) => {
                        let err = Error::invalid(
                            "Universe::run",
                            format!("could not start the deadlock watchdog's thread: {e}"),
                        );
                        return (Vec::new(), Some(err));
                    }
                }
            } else {
                None
            };
            let mut handles = Vec::with_capacity(n);
            let mut not_started = None;
            for (rank, rx) in mailboxes.into_iter().enumerate() {
                let rank_fabric = fabric.clone();
                let world = world.clone();
                let mut builder = std::thread::Builder::new().name(format!("rpar-rank-{rank}"));
                if let Some(bytes) = self.stack_size {
                    builder = builder.stack_size(bytes);
                }
                let tracing = trace_path.is_some() || simulated.is_some();
                let matrix = self.record_matrix;
                #[cfg(rpar_faults)]
                let fault = self.fault;
                let spawned = builder.spawn_scoped(s, move || {
                    #[cfg(rpar_faults)]
                    crate::fault::arm(rank, fault);
                    if let Some(cores) = cores {
                        cores.bind(rank);
                    }
                    let trace = tracing.then(|| {
                        let trace = RankTrace::new(rank, n, epoch);
                        match simulated {
                            Some(detailed) => trace.simulated(detailed),
                            None => trace,
                        }
                    });
                    let row = matrix.then(|| MatrixRow::new(n));
                    let ep = Rc::new(Endpoint::new(rank, rx, rank_fabric.clone(), trace, row));
                    run_rank(rank, Comm::world(ep, world, None), &rank_fabric, program)
                });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        // the ranks already started wait for this one: abort the run so that
                        // their blocked calls return, then join them below
                        let stopped = match rank {
                            0 => String::new(),
                            1 => "; rank 0, already started, was stopped".to_string(),
                            r => format!("; ranks 0..{r}, already started, were stopped"),
                        };
                        let err = Error::invalid(
                            "Universe::run",
                            format!(
                                "could not start the thread of rank {rank} of {n}: {e}{stopped}"
                            ),
                        );
                        fabric.abort(rank, Failure::Error(err.clone()));
                        not_started = Some(err);
                        break;
                    }
                }
            }
            let outcomes: Vec<RankOutcome<R>> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect();
            if let Some(w) = watchdog {
                stop_watch.store(true, Ordering::Release);
                w.thread().unpark();
            }
            (outcomes, not_started)
        });
        if let Some(err) = not_started {
            return Err(err);
        }
        let mut results = Vec::with_capacity(n);
        let mut traces = Vec::new();
        let mut rows = Vec::new();
        let mut programs = Vec::new();
        for o in outcomes {
            results.push(o.result);
            traces.extend(o.trace);
            rows.extend(o.row);
            programs.extend(o.program);
        }
        let trace_written = trace_path.as_deref().map(|path| {
            write_chrome_trace(path, traces).map_err(|e| {
                Error::invalid(
                    "Universe::run",
                    format!("could not write the trace to {}: {e}", path.display()),
                )
            })
        });
        if let Some((rank, failure)) = fabric.failure() {
            return Err(failure.into_error(rank));
        }
        trace_written.transpose()?;
        fabric.sweep_unreceived();
        if let Some(mismatch) = fabric.take_unmatched() {
            return Err(mismatch);
        }
        let warnings = fabric.take_warnings();
        if self.strict && !warnings.is_empty() {
            return Err(Error::Leaks { warnings });
        }
        let results = results
            .into_iter()
            .map(|r| r.expect("every rank returned a result when none failed"))
            .collect();
        let matrix = (self.record_matrix && rows.len() == n).then(|| CommMatrix::from_rows(rows));
        let report = RunReport {
            results,
            warnings,
            matrix,
        };
        Ok((report, programs))
    }

    /// The poll budget: the builder's, else `RPAR_POLL_US`, else the default.
    fn polling(&self) -> Duration {
        if let Some(b) = self.poll_budget {
            return b;
        }
        if let Some(us) = std::env::var("RPAR_POLL_US")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            return Duration::from_micros(us);
        }
        DEFAULT_POLL
    }

    /// Whether to bind ranks to cores: the builder's choice, else not if `RPAR_BIND=0`.
    fn binds(&self) -> bool {
        self.bind
            .unwrap_or_else(|| std::env::var("RPAR_BIND").map_or(true, |v| v != "0"))
    }

    /// Where the trace of the run about to start goes: the builder's path, else `RPAR_TRACE`,
    /// else nowhere; numbered if an earlier run of this process traced to the same path (see
    /// [`Universe::trace`]).
    fn trace_file(&self) -> Option<PathBuf> {
        if !cfg!(feature = "trace") {
            return None; // nothing is recorded without the feature
        }
        let path = self.trace.clone().or_else(|| {
            std::env::var_os("RPAR_TRACE")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
        })?;
        Some(claim_file(&path))
    }
}

/// What the ranks of a run record besides their results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recording {
    /// A run: a trace if one is asked for, the communication matrix if asked for.
    Run,
    /// A simulation's run: each rank's program (`trace::ProgramRecord`); `detailed`: with what
    /// each call was about, for a trace of the simulated run.
    Simulation { detailed: bool },
}

/// What one rank's thread hands back.
struct RankOutcome<R> {
    result: Option<R>,
    trace: Option<(usize, Vec<Event>)>,
    row: Option<Vec<(u64, u64)>>,
    /// Under a simulation: what the rank did.
    program: Option<Recorded>,
}

impl<R> Default for RankOutcome<R> {
    fn default() -> Self {
        RankOutcome {
            result: None,
            trace: None,
            row: None,
            program: None,
        }
    }
}

/// The outcome of [`Universe::run_report`]: the ranks' results and what the run left behind.
///
/// ```
/// let report = rpar::Universe::new(2).record_matrix(true).run_report(|world| {
///     let other = 1 - world.rank();
///     world.send(&(world.rank() as u8), other, 0)?;
///     Ok(world.recv::<u8>(other, 0)?.0[0])
/// })?;
/// assert_eq!(report.results, vec![1, 0]);
/// assert!(report.warnings.is_empty()); // every message was received
/// assert_eq!(report.matrix.map(|m| m.total_messages()), Some(2));
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RunReport<R> {
    /// Each rank's result, in rank order.
    pub results: Vec<R>,
    /// Messages never received and receives never completed, sorted.
    pub warnings: Vec<Warning>,
    /// The communication matrix, if [`Universe::record_matrix`] was on.
    pub matrix: Option<CommMatrix>,
}

/// Runs one rank's program, turning its failure into an abort of the universe.
fn run_rank<F, R>(rank: usize, world: Comm, fabric: &Fabric, program: &F) -> RankOutcome<R>
where
    F: Fn(Comm) -> Result<R>,
{
    let ep = world.endpoint().clone();
    let outcome = catch_unwind(AssertUnwindSafe(|| program(world)));
    // before the rank's finishing work, which is not its program's computation
    let simulated = ep.trace().and_then(|t| t.take_program());
    let result = match outcome {
        Ok(Ok(r)) => {
            fabric.note_warnings(ep.finish());
            Some(r)
        }
        Ok(Err(e)) => {
            fabric.abort(rank, Failure::Error(e));
            None
        }
        Err(panic) => {
            fabric.abort(rank, Failure::Panic(panic_message(&*panic)));
            None
        }
    };
    // only now: until `finish` has dropped the rendezvous tickets sent to this rank, their
    // senders are parked on it, and the deadlock watch must not count this rank out
    fabric.watch().finished(rank);
    RankOutcome {
        result,
        trace: ep.trace().map(|t| t.take()),
        row: ep.matrix().map(|m| m.take()),
        program: simulated,
    }
}

/// Whether an MPI launcher started this process (always false without the `mpi` feature).
/// [`Transport::Auto`] runs on MPI exactly when this is true.
///
/// ```
/// // a doc test is not started by mpiexec
/// assert!(!rpar::launched_by_mpi());
/// assert_eq!(rpar::mpi_processes(), None);
/// ```
pub fn launched_by_mpi() -> bool {
    #[cfg(feature = "mpi")]
    return crate::transport::mpi::setup::launched_by_mpi();
    #[cfg(not(feature = "mpi"))]
    return false;
}

/// Whether this process should print what a program reports: always in-process; on the MPI
/// transport only on MPI rank 0, so that output that every process computes alike appears once.
///
/// ```
/// if rpar::is_main_process() {
///     println!("the table of results");
/// }
/// ```
pub fn is_main_process() -> bool {
    mpi_processes().is_none() || {
        #[cfg(feature = "mpi")]
        {
            crate::transport::mpi::setup::world_rank_and_size().0 == 0
        }
        #[cfg(not(feature = "mpi"))]
        true
    }
}

/// The number of processes of the MPI job, when this program runs on the MPI transport
/// (`None` in-process). Initialises MPI if it is not yet.
///
/// ```
/// # #[cfg(not(feature = "mpi"))]
/// assert_eq!(rpar::mpi_processes(), None);
/// ```
pub fn mpi_processes() -> Option<usize> {
    #[cfg(feature = "mpi")]
    if launched_by_mpi() && crate::transport::mpi::setup::ensure_initialized().is_ok() {
        return Some(crate::transport::mpi::setup::world_rank_and_size().1);
    }
    None
}

/// The message of a panic payload.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_string())
}

/// Runs `program` on `ranks` ranks: shorthand for `Universe::new(ranks).run(program)`
/// (`mpiexec -n ranks`, with MPI_Init and MPI_Finalize around the program).
///
/// # Errors
///
/// Those of [`Universe::run`].
///
/// ```
/// let sum: usize = rpar::run(8, |world| Ok(world.rank()))?.iter().sum();
/// assert_eq!(sum, 28);
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn run<F, R>(ranks: usize, program: F) -> Result<Vec<R>>
where
    F: Fn(Comm) -> Result<R> + Sync,
    R: RunResult,
{
    Universe::new(ranks).run(program)
}
