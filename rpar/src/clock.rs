//! MPI's clock and host name: [`wtime`] (MPI_Wtime), [`wtick`] (MPI_Wtick),
//! [`wtime_is_global`] (the MPI_WTIME_IS_GLOBAL attribute) and [`processor_name`]
//! (MPI_Get_processor_name).
//!
//! The clock is the process's monotonic clock, from an origin fixed at its first reading. The
//! ranks of an in-process run are threads of one process and so read one clock: times taken on
//! different ranks compare directly. On the MPI transport every process has its own origin, as
//! MPI_Wtime has in MPICH and Open MPI unless MPI_WTIME_IS_GLOBAL says otherwise: compare
//! differences of times taken on one rank, not times of two ranks.

use std::sync::OnceLock;
use std::time::Instant;

static ORIGIN: OnceLock<Instant> = OnceLock::new();

/// Seconds since a fixed moment in the past (MPI_Wtime), as `f64`, from the process's
/// monotonic clock; see the module's note on which ranks share a clock.
///
/// ```
/// let t0 = rpar::wtime();
/// std::thread::sleep(std::time::Duration::from_millis(2));
/// assert!(rpar::wtime() - t0 >= 0.002);
/// ```
pub fn wtime() -> f64 {
    ORIGIN.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// The resolution of [`wtime`] in seconds (MPI_Wtick): the monotonic clock's, as the system
/// reports it (1 ns on Linux).
///
/// ```
/// assert!(rpar::wtick() > 0.0 && rpar::wtick() <= 1e-3);
/// ```
pub fn wtick() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut res = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `res` is a valid timespec for clock_getres to write.
        if unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut res) } == 0 {
            return res.tv_sec as f64 + res.tv_nsec as f64 * 1e-9;
        }
    }
    1e-9 // std's Instant counts nanoseconds
}

/// Whether every rank of a run reads the same clock (MPI_WTIME_IS_GLOBAL): true in-process,
/// where ranks are threads of one process; false for a job of several MPI processes.
///
/// ```
/// assert!(rpar::wtime_is_global()); // not started by mpiexec
/// ```
pub fn wtime_is_global() -> bool {
    crate::mpi_processes().is_none_or(|n| n <= 1)
}

/// The name of the machine this rank runs on (MPI_Get_processor_name): its host name.
///
/// ```
/// let names = rpar::run(2, |_| Ok(rpar::processor_name()))?;
/// assert!(!names[0].is_empty() && names[0] == names[1]); // one machine in-process
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn processor_name() -> String {
    #[cfg(target_os = "linux")]
    {
        let mut buf = [0u8; 256];
        // SAFETY: `buf` has `buf.len()` writable bytes; gethostname writes at most that many.
        if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
            let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            if len > 0 {
                return String::from_utf8_lossy(&buf[..len]).into_owned();
            }
        }
    }
    std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into())
}
