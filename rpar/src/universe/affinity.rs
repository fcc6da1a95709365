//! Binding rank threads to cores, as MPI launchers bind processes (`mpiexec --bind-to core`):
//! rank `r` runs on the `r % c`-th of the `c` cores this process may use.
//!
//! Why: a waiting rank polls before it yields (see `transport/README.md`). The operating
//! system may start two ranks on one core and leave them there while both poll, so that every
//! wait lasts a whole polling phase; measured on the 2-core development machine, a 2-rank 8-byte
//! allreduce took 0.3 us or 10 us from one run to the next depending on where the threads
//! landed. Bound, ranks are spread evenly over the cores, also when they outnumber them.
//!
//! Linux only (`sched_setaffinity`); elsewhere binding does nothing. A failure to bind (a
//! restricted container, say) is not an error: the rank runs where the system puts it.

/// The cores this process may run on, in order.
#[derive(Debug, Clone)]
pub(crate) struct Cores(Vec<usize>);

impl Cores {
    /// The cores of this process's affinity mask (`None` if they cannot be read).
    pub(crate) fn of_process() -> Option<Cores> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: `cpu_set_t` is plain data, all zeros is the empty set; the size passed
            // is its own size, and `sched_getaffinity` writes at most that many bytes.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: as above; pid 0 is the calling thread.
            let got = unsafe {
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set)
            };
            if got != 0 {
                return None;
            }
            let cores: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                // SAFETY: `i` is below CPU_SETSIZE, the capacity of the set.
                .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
                .collect();
            (!cores.is_empty()).then_some(Cores(cores))
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Binds the calling thread, rank `rank`'s, to its core.
    pub(crate) fn bind(&self, rank: usize) {
        let core = self.0[rank % self.0.len()];
        #[cfg(target_os = "linux")]
        {
            // SAFETY: as in `of_process`; `core` came from the process's own mask, so it is
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
