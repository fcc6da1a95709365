//! A stress of wake-ups (ignored by default: minutes long): blocking shared-memory collectives
//! while non-blocking ones are in flight — shared-memory ones, and message-passing ones whose
//! coroutines receive (and so take in whatever envelope is in the mailbox, a `Wake` too) —
//! with some ranks late. Before the fix of 2026-12-08 (`Endpoint::wake_taken`), 8 runs of
//! 4 830 ended with a false `Error::CollectiveMismatch` ("past call #k without its part"): a
//! rank waiting in a blocking bcast whose wake-up a coroutine's receive had taken, parked
//! registered nowhere. After it, none of 3 765. A run: `SECS=240 cargo test --release --test
//! checks_wakeups_stress -- --ignored --nocapture`.

use rpar::{Allreduce, Bcast, InPlace, Sum};
use std::time::Duration;

#[test]
#[ignore = "minutes long: run with --ignored (SECS sets how long, default 240)"]
fn blocking_and_nonblocking_collectives_with_late_ranks_never_lose_a_wake_up() {
    let secs: u64 = std::env::var("SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(240);
    let mut fails = 0;
    let t0 = std::time::Instant::now();
    let mut runs = 0;
    while t0.elapsed() < Duration::from_secs(secs) {
        for p in [2usize, 3, 4] {
            runs += 1;
            let seed = runs as u64;
            let r = rpar::run(p, |w| {
                let me = w.rank() as u64;
                for it in 0..20u64 {
                    let (mut a, mut b, mut c) = ([me; 4], [me; 2], [me; 3]);
                    w.scope(|s| {
                        let r1 = s.iallreduce(InPlace(&mut a[..]), Sum)?;
                        let r2 = s.ibcast(&mut c[..], ((it + seed) % p as u64) as usize)?;
                        let root = ((it * 7 + seed) % p as u64) as usize;
                        if (me + it + seed).is_multiple_of(3) {
                            std::thread::sleep(Duration::from_micros(200 + (it * 37 % 300)));
                        }
                        w.using(Bcast::Auto).bcast(&mut b[..], root)?;
                        let x = w.allreduce(&me, Sum)?;
                        assert_eq!(x, (0..p as u64).sum::<u64>());
                        if (me + it) % 2 == 1 {
                            std::thread::sleep(Duration::from_micros(100));
                        }
                        r2.wait()?;
                        r1.wait()?;
                        Ok(())
                    })?;
                    let mut d = [me; 2];
                    w.using(Allreduce::RecursiveDoubling).scope(|s| {
                        let r = s.iallreduce(InPlace(&mut d[..]), Sum)?;
                        let root = ((it + seed) % p as u64) as usize;
                        let mut e = [me; 2];
                        w.bcast(&mut e[..], root)?;
                        if me == (it % p as u64) {
                            std::thread::sleep(Duration::from_micros(150));
                        }
                        r.wait()?;
                        Ok(())
                    })?;
                }
                Ok(())
            });
            if let Err(e) = r {
                fails += 1;
                println!("run {runs} p={p}: {e}");
            }
        }
    }
    println!("runs {runs} fails {fails}");
    assert_eq!(fails, 0);
}
