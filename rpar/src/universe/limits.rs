//! How many threads this machine lets a run start, checked before the first rank starts.
//!
//! Why: a thread that cannot be created is an error std hands back (EAGAIN), but a thread that
//! is created and then cannot map its signal stack makes std abort the whole process ("failed
//! to set up alternative stack guard page"), and that is what running out of memory maps does.
//! So the limits are read first, and a run that does not fit is an [`Error::InvalidArgument`]
//! that names the limit, its value and the largest rank count that fits.
//!
//! Linux only (the figures come from `/proc`); elsewhere nothing is checked, and a thread that
//! cannot be created still ends the run with an error. The limits:
//!
//! - `vm.max_map_count`, memory maps per process, minus those in use (`/proc/self/maps`) and
//!   a margin for the allocator. Each rank thread adds 4 maps: its stack and the stack's guard
//!   page (glibc), its signal stack and that stack's guard page (std). Measured on Linux 6.18,
//!   glibc, x86_64: 100 ranks added 432 maps, 2000 ranks 8034, i.e. 4 per rank plus the
//!   allocator's arenas (2 maps each, at most 8 per core), whatever the stack size. With the
//!   default 65 530 a process holds about 16 300 threads: 16 300 ranks ran, 16 500 aborted.
//! - `kernel.threads-max` and `kernel.pid_max` (every thread takes a pid), machine-wide, minus
//!   the threads running on the machine (`/proc/loadavg`).
//! - `RLIMIT_NPROC`, the threads of one user (not for root, whom the kernel exempts), minus
//!   this process's threads (`/proc/self/status`); the user's other processes count too, so
//!   this is an upper bound.
//! - The `pids.max` of this process's cgroup and of each cgroup above it (v2 and v1), minus
//!   their `pids.current`: containers often set one.
//!
//! A program whose ranks map memory of their own (glibc gives allocations of 128 KiB or more a
//! map each) needs more maps than the margin keeps; when those run out, the allocation fails,
//! which no check made before the run can foresee.

use crate::{Error, Result};

/// Memory maps that each thread adds (see the module header).
pub(super) const MAPS_PER_THREAD: usize = 4;

/// One limit on the number of threads a run may add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Limit {
    /// How many more threads fit.
    pub(super) threads: usize,
    /// The limit, its value and what is in use, as the error says it.
    pub(super) what: String,
    /// What to do about it.
    pub(super) remedy: &'static str,
}

/// Checks that `ranks` rank threads and `helpers` other threads (the deadlock watchdog) can
/// start on this machine, before any of them does; each rank takes `extra_maps` memory maps
/// besides its thread's (a simulated rank's record, mapped on its own once it grows past
/// glibc's 128 KiB).
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming the tightest limit, its value and the largest number of
/// ranks that fits.
pub(super) fn check(ranks: usize, helpers: usize, extra_maps: usize) -> Result<()> {
    let Some(tightest) = limits(extra_maps).into_iter().min_by_key(|l| l.threads) else {
        return Ok(());
    };
    if ranks.saturating_add(helpers) <= tightest.threads {
        return Ok(());
    }
    let fit = tightest.threads.saturating_sub(helpers);
    let helpers = match helpers {
        0 => String::new(),
        1 => "; one more thread watches for deadlocks".to_string(),
        n => format!("; {n} more threads help the run"),
    };
    Err(Error::invalid(
        "Universe::run",
        format!(
            "{ranks} ranks: this machine allows at most {fit} rank threads ({}{helpers}): run at \
             most {fit} ranks, or {}",
            tightest.what, tightest.remedy
        ),
    ))
}

/// The limits that apply here (none off Linux, or where `/proc` cannot be read), for threads
/// that each take `extra_maps` memory maps besides their own.
fn limits(extra_maps: usize) -> Vec<Limit> {
    #[cfg(target_os = "linux")]
    {
        linux::limits(extra_maps)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = extra_maps;
        Vec::new()
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{Limit, MAPS_PER_THREAD};
    use std::fs;

    /// Maps kept free for the allocator: its arenas (2 maps each, at most 8 per core) and
    /// whatever else the process maps while the ranks start.
    fn map_margin() -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        1024 + 16 * cores
    }

    fn read_number(path: &str) -> Option<usize> {
        fs::read_to_string(path).ok()?.trim().parse().ok()
    }

    pub(super) fn limits(extra_maps: usize) -> Vec<Limit> {
        let mut out = Vec::new();
        out.extend(memory_maps(MAPS_PER_THREAD + extra_maps));
        let machine = machine_threads();
        for (path, name, remedy) in [
            (
                "/proc/sys/kernel/threads-max",
                "kernel.threads-max",
                "raise kernel.threads-max",
            ),
            (
                "/proc/sys/kernel/pid_max",
                "kernel.pid_max",
                "raise kernel.pid_max",
            ),
        ] {
            if let (Some(max), Some(used)) = (read_number(path), machine) {
                out.push(Limit {
                    threads: max.saturating_sub(used),
                    what: format!("{name} = {max} threads on the machine; {used} in use"),
                    remedy,
                });
            }
        }
        out.extend(user_processes());
        out.extend(cgroup_pids());
        out
    }

    /// vm.max_map_count, less the maps in use and the margin, in threads of `per_thread` maps.
    fn memory_maps(per_thread: usize) -> Option<Limit> {
        let max = read_number("/proc/sys/vm/max_map_count")?;
        let used = fs::read_to_string("/proc/self/maps").ok()?.lines().count();
        let margin = map_margin();
        Some(Limit {
            threads: max.saturating_sub(used + margin) / per_thread,
            what: format!(
                "vm.max_map_count = {max} memory maps, each rank thread takes \
                 {per_thread}; {used} in use, {margin} kept for the allocator"
            ),
            remedy: "raise vm.max_map_count",
        })
    }

    /// The threads on the machine: the total of /proc/loadavg's "running/total" field.
    fn machine_threads() -> Option<usize> {
        let loadavg = fs::read_to_string("/proc/loadavg").ok()?;
        loadavg
            .split_whitespace()
            .nth(3)?
            .split('/')
            .nth(1)?
            .parse()
            .ok()
    }

    /// This process's threads (/proc/self/status).
    fn own_threads() -> Option<usize> {
        let status = fs::read_to_string("/proc/self/status").ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))?
            .trim()
            .parse()
            .ok()
    }

    /// RLIMIT_NPROC, for users other than root.
    fn user_processes() -> Option<Limit> {
        // SAFETY: getuid has no preconditions and cannot fail.
        if unsafe { libc::getuid() } == 0 {
            return None; // the kernel does not hold root to RLIMIT_NPROC
        }
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is a valid rlimit for getrlimit to write.
        if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } != 0
            || lim.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        let max = usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX);
        let used = own_threads()?;
        Some(Limit {
            threads: max.saturating_sub(used),
            what: format!(
                "RLIMIT_NPROC (ulimit -u) = {max} threads for this user; {used} in this process"
            ),
            remedy: "raise the user's process limit (ulimit -u)",
        })
    }

    /// The tightest pids.max - pids.current of this process's cgroup and its ancestors.
    fn cgroup_pids() -> Option<Limit> {
        let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
        // v2: "0::/path"; v1: "N:pids:/path" (or with other controllers, comma-separated)
        let (root, path) = cgroups.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            if controllers.is_empty() {
                Some(("/sys/fs/cgroup".to_string(), path.to_string()))
            } else if controllers.split(',').any(|c| c == "pids") {
                Some((format!("/sys/fs/cgroup/{controllers}"), path.to_string()))
            } else {
                None
            }
        })?;
        let mut best: Option<Limit> = None;
        let mut dir = path.trim_end_matches('/').to_string();
        loop {
            let at = format!("{root}{dir}");
            let max = read_number(&format!("{at}/pids.max"));
            let used = read_number(&format!("{at}/pids.current"));
            if let (Some(max), Some(used)) = (max, used) {
                let threads = max.saturating_sub(used);
                if best.as_ref().is_none_or(|b| threads < b.threads) {
                    best = Some(Limit {
                        threads,
                        what: format!("the cgroup {at} allows pids.max = {max}; {used} in use"),
                        remedy: "raise the cgroup's pids.max",
                    });
                }
            }
            match dir.rfind('/') {
                Some(i) => dir.truncate(i),
                None => break,
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_fits_passes_and_one_that_does_not_names_its_limit() {
        check(2, 1, 0).unwrap();
        if cfg!(target_os = "linux") {
            let err = check(usize::MAX, 1, 0).unwrap_err().to_string();
            assert!(err.contains(&format!("{} ranks", usize::MAX)), "{err}");
            assert!(err.contains("this machine allows at most"), "{err}");
            assert!(
                err.contains("one more thread watches for deadlocks"),
                "{err}"
            );
        } else {
            check(usize::MAX, 1, 0).unwrap();
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_limits_are_read_here() {
        let limits = limits(0);
        assert!(
            limits
                .iter()
                .any(|l| l.what.starts_with("vm.max_map_count")),
            "{limits:?}"
        );
        assert!(limits.iter().all(|l| l.threads > 2), "{limits:?}");
    }
}
