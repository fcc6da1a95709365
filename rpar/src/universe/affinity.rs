//! Binding rank threads to cores, as MPI launchers bind processes (`mpiexec --bind-to core`):
//! the ranks of a run take the `c` cores this process may use in turn, rank `r` the
//! `(start + r) % c`-th, where each run starts where the one before left off (so that runs side
//! by side — tests, say — spread over the cores instead of all starting on the first).
//!
//! Why: a waiting rank polls before it yields (see `transport/README.md`). The operating
//! system may start two ranks on one core and leave them there while both poll, so that every
//! wait lasts a whole polling phase; measured on the 2-core development machine, a 2-rank 8-byte
//! allreduce took 0.3 us or 10 us from one run to the next depending on where the threads
//! landed. Bound, ranks are spread evenly over the cores, also when they outnumber them.
//!
//! The same mask tells the MPI transport how many cores a node's processes may use
//! ([`allowed_cores`]), to decide whether a waiting process may keep its core.
//!
//! Linux only (`sched_setaffinity`); elsewhere binding does nothing. A failure to bind (a
//! restricted container, say) is not an error: the rank runs where the system puts it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Where the next run's ranks start taking cores.
static NEXT_START: AtomicUsize = AtomicUsize::new(0);

/// The cores this process may run on, in order, and the place of this run's rank 0.
#[derive(Debug, Clone)]
pub(crate) struct Cores {
    cores: Vec<usize>,
    start: usize,
}

impl Cores {
    /// The cores of this process's affinity mask for a run of `ranks` ranks (`None` if they
    /// cannot be read).
    pub(crate) fn for_run(ranks: usize) -> Option<Cores> {
        let cores = allowed_cores()?;
        let start = NEXT_START.fetch_add(ranks, Ordering::Relaxed);
        Some(Cores { cores, start })
    }

    /// Binds the calling thread, rank `rank`'s, to its core.
    pub(crate) fn bind(&self, rank: usize) {
        let core = self.cores[(self.start + rank) % self.cores.len()];
        #[cfg(target_os = "linux")]
        {
            // SAFETY: as in `for_run`; `core` came from the process's own mask, so it is
            // below CPU_SETSIZE.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(core, &mut set);
                // failure leaves the thread where it is, which is only slower
                let _ = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = core;
    }
}

/// The cores the calling thread may run on (its affinity mask), in order; `None` if they cannot
/// be read (or on systems other than Linux).
pub(crate) fn allowed_cores() -> Option<Vec<usize>> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `cpu_set_t` is plain data, all zeros is the empty set; the size passed
        // is its own size, and `sched_getaffinity` writes at most that many bytes.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above; pid 0 is the calling thread.
        let got =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if got != 0 {
            return None;
        }
        let cores: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `i` is below CPU_SETSIZE, the capacity of the set.
            .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
            .collect();
        (!cores.is_empty()).then_some(cores)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}
