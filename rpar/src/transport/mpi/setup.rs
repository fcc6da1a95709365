//! Process-wide MPI set-up: MPI is initialised once, on the first run that needs it (through
//! rsmpi), and finalised when the process exits; how a process tells that an MPI launcher
//! started it; whether this node's processes outnumber its cores; and the job-wide abort.

use crate::{Error, Result};
use ::mpi::collective::{CommunicatorCollectives, SystemOperation};
use ::mpi::environment::Universe as MpiUniverse;
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::Threading;
use std::sync::{Mutex, OnceLock};

/// The rsmpi universe, when rpar initialised MPI: dropping it calls MPI_Finalize (at exit).
static UNIVERSE: Mutex<Option<MpiUniverse>> = Mutex::new(None);
/// The outcome of initialising MPI: the thread level provided, or why it failed.
static INIT: OnceLock<std::result::Result<Threading, String>> = OnceLock::new();
/// The thread that initialised MPI, when rpar did: below `MPI_THREAD_SERIALIZED`, the only one
/// that calls it.
static INIT_THREAD: OnceLock<std::thread::ThreadId> = OnceLock::new();

extern "C" {
    /// C's `atexit`: runs `f` when the process exits normally (from `main` or `exit`).
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
}

extern "C" fn finalize_at_exit() {
    // dropping rsmpi's universe calls MPI_Finalize
    let taken = UNIVERSE.lock().map(|mut u| u.take()).unwrap_or(None);
    drop(taken);
}

/// Environment variables that MPI launchers set in the processes they start: MPICH's Hydra
/// and Slurm's PMI (`PMI_RANK`, `PMI_SIZE`), Open MPI (`OMPI_COMM_WORLD_SIZE`), PMIx
/// launchers (`PMIX_RANK`).
const LAUNCHER_VARIABLES: [&str; 4] = ["PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"];

/// How many processes the launcher that started this process says the job has, and which
/// launcher said it (`PMI_SIZE`: MPICH's Hydra or another PMI launcher; `OMPI_COMM_WORLD_SIZE`:
/// Open MPI's).
fn launcher_size() -> Option<(usize, &'static str)> {
    [
        ("PMI_SIZE", "a PMI launcher (MPICH's mpiexec, Slurm)"),
        ("OMPI_COMM_WORLD_SIZE", "Open MPI's mpiexec"),
    ]
    .into_iter()
    .find_map(|(var, launcher)| {
        let size = std::env::var(var).ok()?.trim().parse().ok()?;
        Some((size, launcher))
    })
}

/// Checks that the MPI library this binary is linked to sees the job the launcher started:
/// a binary built against one MPI and started by another MPI's launcher initialises as a
/// job of one process in each process (MPI's singleton start), and would run as that.
///
/// # Errors
///
/// [`Error::InvalidArgument`] saying which launcher started how many processes, which
/// library the binary is linked to, and how to build for the launcher's MPI.
pub(crate) fn check_launcher(processes: usize) -> Result<()> {
    match launcher_size() {
        Some((started, launcher)) if started != processes => Err(Error::invalid(
            "Universe::run on MPI",
            format!(
                "{launcher} started {started} processes, but the MPI library this binary is \
                 linked to sees a job of {processes} ({}): the binary was built against another \
                 MPI than the launcher's. Build it for the launcher's MPI, in a target folder of \
                 its own (the mpi crate's build does not follow a change of MPICC): e.g. \
                 MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/openmpi cargo build --features mpi, \
                 and start it with mpiexec.openmpi (likewise mpicc.mpich, target/mpich, \
                 mpiexec.mpich)",
                library()
            ),
        )),
        _ => Ok(()),
    }
}

/// The first line of the MPI library's version (MPI_Get_library_version).
fn library() -> String {
    ::mpi::environment::library_version()
        .ok()
        .and_then(|v| v.lines().next().map(|l| l.trim().to_string()))
        .unwrap_or_else(|| "an unknown MPI library".into())
}

/// Whether an MPI launcher (`mpiexec`, `mpirun`, `srun`) started this process.
pub(crate) fn launched_by_mpi() -> bool {
    LAUNCHER_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Initialises MPI if it is not yet, and makes sure that it is finalised when the process exits.
///
/// On the process's main thread (which also finalises it, at exit) it asks for
/// `MPI_THREAD_SINGLE`, what `MPI_Init` gives a C program, and the ranks' programs then run on
/// this thread (`universe/mpi.rs`): every MPI call rpar makes is then this thread's, and rpar
/// starts no thread of its own in the process (a `Comm` cannot leave its thread). A higher level
/// costs Open MPI a lock around every call (`FUNNELED` and `SERIALIZED` alike: an 8-byte
/// `MPI_Bcast` between 2 processes, rpar's, 0.22-0.26 us under `FUNNELED` against 0.13-0.14
/// under `SINGLE`, C's 0.08-0.10), and MPICH under `MULTIPLE` (7% of an 8-byte ping-pong's
/// instructions). On any other thread (a test harness's, say) it asks for
/// `MPI_THREAD_SERIALIZED`: a rank's program runs on a thread of its own while the thread that
/// started it waits, so calls never overlap. A program that runs threads of its own which call
/// MPI initialises MPI itself at the level it needs; rpar then uses it as it is (below
/// `SERIALIZED`, running the rank's program on MPI's main thread) and leaves finalising to the
/// program.
pub(crate) fn ensure_initialized() -> Result<Threading> {
    let outcome = INIT.get_or_init(|| {
        if ::mpi::environment::is_initialized() {
            // the program's own, at the level it asked for
            return Ok(::mpi::environment::threading_support());
        }
        // (Rust names the thread that runs `main` "main")
        let wanted = match std::thread::current().name() {
            Some("main") => Threading::Single,
            _ => Threading::Serialized,
        };
        let (universe, level) = ::mpi::initialize_with_threading(wanted)
            .ok_or_else(|| "MPI_Init_thread failed".to_string())?;
        let _ = INIT_THREAD.set(std::thread::current().id());
        if let Ok(mut slot) = UNIVERSE.lock() {
            *slot = Some(universe);
        }
        // SAFETY: `finalize_at_exit` is a plain `extern "C" fn()` that stays valid for the whole
        // process; registering it has no other precondition.
        if unsafe { atexit(finalize_at_exit) } != 0 {
            return Err("could not register MPI_Finalize to run at exit".into());
        }
        Ok(level)
    });
    outcome
        .clone()
        .map_err(|e| Error::invalid("Universe::run on MPI", e))
}

/// Whether this thread initialised MPI (below `MPI_THREAD_SERIALIZED`, the only one that may
/// call it).
pub(crate) fn on_init_thread() -> bool {
    if let Some(thread) = INIT_THREAD.get() {
        return *thread == std::thread::current().id();
    }
    // the program initialised MPI: MPI knows which thread did (any thread may ask)
    let mut main = 0;
    // SAFETY: MPI is initialised (`ensure_initialized` ran); MPI_Is_thread_main writes one int.
    unsafe { ::mpi::ffi::MPI_Is_thread_main(&mut main) };
    main != 0
}

/// `MPI_COMM_WORLD`.
pub(crate) fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

/// This process's rank in `MPI_COMM_WORLD` and the number of processes.
pub(crate) fn world_rank_and_size() -> (usize, usize) {
    let w = world();
    (w.rank() as usize, w.size() as usize)
}

/// Whether the processes of `comm` on this node outnumber the cores they may run on, given the
/// cores this process may run on (`None`: not known, then those the standard library counts):
/// the union of their affinity masks, so that a launcher binding each process to a core of its
/// own (Open MPI's default) and one binding none (MPICH's) count the same cores. Collective on
/// `comm`.
pub(crate) fn node_oversubscribed(comm: &SimpleCommunicator, mine: Option<Vec<usize>>) -> bool {
    const WORDS: usize = 16; // 1024 cores, as a `cpu_set_t`
    let mine = mine.unwrap_or_else(|| {
        (0..std::thread::available_parallelism().map_or(1, |c| c.get())).collect()
    });
    let mut mask = [0u64; WORDS];
    for core in mine.into_iter().filter(|&c| c < 64 * WORDS) {
        mask[core / 64] |= 1 << (core % 64);
    }
    let node = comm.split_shared(0);
    let mut union = [0u64; WORDS];
    node.all_reduce_into(&mask[..], &mut union[..], SystemOperation::bitwise_or());
    let cores: u32 = union.iter().map(|w| w.count_ones()).sum();
    node.size() as u32 > cores.max(1)
}

/// Ends the whole job (MPI_Abort on `MPI_COMM_WORLD`) after printing why: one rank's failure
/// aborts every process, as one rank's failure aborts every thread in-process.
///
/// The line is written in one piece and given a moment to travel: the launcher forwards each
/// process's output asynchronously, and `MPI_Abort` kills the job, its forwarding included (a
/// line written piece by piece, as `eprintln!` writes an unbuffered stderr, lost its tail in
/// one CI run out of several).
pub(crate) fn abort_job(rank: usize, error: &Error) -> ! {
    use std::io::Write;
    let line = format!("rpar: rank {rank} failed, aborting the MPI job: {error}\n");
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(line.as_bytes());
    let _ = stderr.flush();
    drop(stderr);
    std::thread::sleep(std::time::Duration::from_millis(200));
    world().abort(1)
}
