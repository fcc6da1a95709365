//! The task farms of `rpar::pattern` through the public API: results equal to a sequential
//! computation for 1, 2, 3 and 8 ranks, chunk sizes, single-value and `Vec` payloads; zero tasks,
//! more workers than tasks, one rank; a failing work closure (propagated, and caught on every
//! rank: the farm still ends cleanly); bad chunk sizes and miscounting payloads; the stats' exact
//! counts; the farm's messages staying apart from the program's; and the manager_worker
//! example's own problem, Mandelbrot rows, at a small size.

use rpar::pattern::{
    manager_worker, static_blocks, Farm, FarmStats, ManagerStats, ManagerWorker, Payload,
    WorkerStats,
};
use rpar::{Comm, Error, Result, Universe};
use std::time::Duration;

#[path = "../examples/manager_worker/mandelbrot.rs"]
mod mandelbrot;

const RANK_COUNTS: [usize; 5] = [1, 2, 3, 4, 8];

/// A task of uneven cost and a result that depends on all of it.
fn collatz_steps(n: u64) -> Result<[u64; 2]> {
    let (mut x, mut steps) = (n.max(1), 0u64);
    while x != 1 {
        x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
        steps += 1;
    }
    Ok([n, steps])
}

/// A `Vec` result of a length that varies by task (0 for some).
fn divisors(n: u32) -> Result<Vec<u32>> {
    Ok((1..=n).filter(|&d| n.is_multiple_of(d)).collect())
}

/// Runs both farms (manager-worker with `chunk`, static blocks) on `p` ranks and returns
/// rank 0's two farms; checks that the other ranks got nothing.
fn both_farms<T, R>(
    p: usize,
    chunk: usize,
    tasks: impl Fn() -> Vec<T> + Sync,
    work: impl Fn(T) -> Result<R> + Sync,
) -> Result<(Farm<R>, Farm<R>)>
where
    T: Payload,
    R: Payload,
{
    let mut farms = rpar::run(p, |world| {
        let dynamic = ManagerWorker::new()
            .chunk(chunk)
            .run(&world, tasks(), &work)?;
        let fixed = static_blocks(&world, tasks(), &work)?;
        if world.rank() != 0 {
            assert!(!dynamic.is_manager() && dynamic.stats.is_none());
            assert!(!fixed.is_manager() && fixed.stats.is_none());
        }
        Ok(Some((dynamic, fixed)))
    })?;
    Ok(farms.swap_remove(0).expect("rank 0 returns its farms"))
}

#[test]
fn results_equal_sequential_for_every_rank_count_and_chunk() -> Result<()> {
    let tasks: Vec<u64> = (0..57).map(|i| i * 37 % 101).collect();
    let expected: Vec<[u64; 2]> = tasks
        .iter()
        .map(|&n| collatz_steps(n))
        .collect::<Result<_>>()?;
    for p in RANK_COUNTS {
        for chunk in [1, 3, 100] {
            let (dynamic, fixed) = both_farms(p, chunk, || tasks.clone(), collatz_steps)?;
            assert_eq!(
                dynamic.results.as_ref(),
                Some(&expected),
                "p = {p}, chunk {chunk}"
            );
            assert_eq!(fixed.results.as_ref(), Some(&expected), "p = {p}, static");
        }
    }
    Ok(())
}

#[test]
fn vec_results_of_uneven_length_arrive_in_task_order() -> Result<()> {
    let tasks: Vec<u32> = (0..40).rev().collect(); // task 39 (divisors of 0) is empty
    let expected: Vec<Vec<u32>> = tasks.iter().map(|&n| divisors(n)).collect::<Result<_>>()?;
    for p in RANK_COUNTS {
        for chunk in [1, 4] {
            let (dynamic, fixed) = both_farms(p, chunk, || tasks.clone(), divisors)?;
            assert_eq!(
                dynamic.results.as_ref(),
                Some(&expected),
                "p = {p}, chunk {chunk}"
            );
            assert_eq!(fixed.results.as_ref(), Some(&expected), "p = {p}, static");
        }
    }
    Ok(())
}

#[test]
fn vec_tasks_travel_too() -> Result<()> {
    let tasks = || {
        (0..23u64)
            .map(|n| (0..n).collect::<Vec<u64>>())
            .collect::<Vec<_>>()
    };
    let sum = |v: Vec<u64>| Ok(v.iter().sum::<u64>());
    let expected: Vec<u64> = (0..23u64).map(|n| n * n.saturating_sub(1) / 2).collect();
    for p in RANK_COUNTS {
        let (dynamic, fixed) = both_farms(p, 2, tasks, sum)?;
        assert_eq!(dynamic.results, Some(expected.clone()), "p = {p}");
        assert_eq!(fixed.results, Some(expected.clone()), "p = {p}");
    }
    Ok(())
}

#[test]
fn the_shorthand_returns_results_at_rank_0_only() -> Result<()> {
    for p in RANK_COUNTS {
        let got = rpar::run(p, |world| manager_worker(&world, 0..10i64, |n| Ok(-n)))?;
        assert_eq!(
            got[0],
            Some((0..10).map(|n| -n).collect::<Vec<_>>()),
            "p = {p}"
        );
        assert!(got[1..].iter().all(Option::is_none), "p = {p}");
    }
    Ok(())
}

#[test]
fn zero_tasks_give_empty_results_and_stop_every_worker() -> Result<()> {
    for p in RANK_COUNTS {
        for chunk in [1, 5] {
            let (dynamic, fixed) = both_farms(p, chunk, Vec::<u8>::new, Ok)?;
            assert_eq!(dynamic.results, Some(vec![]), "p = {p}");
            assert_eq!(fixed.results, Some(vec![]), "p = {p}");
            for farm in [&dynamic, &fixed] {
                let stats = farm.stats.as_ref().expect("rank 0 has stats");
                assert!(stats.workers.iter().all(|w| w.tasks == 0 && w.chunks == 0));
                assert_eq!(stats.load_imbalance(), 0.0);
            }
            if p > 1 {
                let manager = dynamic.stats.unwrap().manager.expect("a manager");
                assert_eq!(
                    manager.requests,
                    p - 1,
                    "each worker asks once, and is stopped"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn more_workers_than_tasks() -> Result<()> {
    let (dynamic, fixed) = both_farms(8, 1, || vec![10u64, 20, 30], collatz_steps)?;
    let expected: Vec<[u64; 2]> = [10, 20, 30].map(|n| collatz_steps(n).unwrap()).to_vec();
    assert_eq!(dynamic.results.as_ref(), Some(&expected));
    assert_eq!(fixed.results.as_ref(), Some(&expected));
    let dynamic = dynamic.stats.unwrap();
    assert_eq!(dynamic.workers.len(), 7);
    assert_eq!(dynamic.workers.iter().map(|w| w.tasks).sum::<usize>(), 3);
    assert!(dynamic.workers.iter().filter(|w| w.tasks == 0).count() >= 4);
    // 3 tasks over 8 ranks in blocks: ranks 2, 5 and 7 get one each
    let blocks: Vec<usize> = fixed
        .stats
        .unwrap()
        .workers
        .iter()
        .map(|w| w.tasks)
        .collect();
    assert_eq!(blocks, [0, 0, 1, 0, 0, 1, 0, 1]);
    Ok(())
}

#[test]
fn one_rank_computes_everything_itself() -> Result<()> {
    let (dynamic, fixed) = both_farms(1, 4, || (0..9u64).collect(), collatz_steps)?;
    for farm in [dynamic, fixed] {
        let stats = farm.stats.expect("rank 0 has stats");
        assert!(stats.manager.is_none(), "nobody manages on one rank");
        assert_eq!(stats.workers.len(), 1);
        assert_eq!((stats.workers[0].rank, stats.workers[0].tasks), (0, 9));
        assert_eq!(stats.workers[0].waiting, Duration::ZERO);
        assert!(!stats.manager_is_bottleneck());
        assert_eq!(farm.results.map(|r| r.len()), Some(9));
    }
    Ok(())
}

#[test]
fn stats_count_tasks_chunks_and_requests_exactly() -> Result<()> {
    for p in [2, 3, 8] {
        for chunk in [1, 4, 7] {
            let n = 50usize;
            let (dynamic, fixed) = both_farms(p, chunk, || (0..n as u64).collect(), collatz_steps)?;
            let stats = dynamic.stats.unwrap();
            let ranks: Vec<usize> = stats.workers.iter().map(|w| w.rank).collect();
            assert_eq!(ranks, (1..p).collect::<Vec<_>>());
            assert_eq!(stats.workers.iter().map(|w| w.tasks).sum::<usize>(), n);
            let chunks: usize = stats.workers.iter().map(|w| w.chunks).sum();
            assert_eq!(chunks, n.div_ceil(chunk), "p = {p}, chunk {chunk}");
            let manager = stats.manager.unwrap();
            assert_eq!(
                manager.requests,
                chunks + (p - 1),
                "one more request to learn it is done"
            );
            assert_eq!(
                manager.returns, chunks,
                "every chunk's results were handed in"
            );
            assert!(manager.queued <= manager.returns);
            assert!(stats.elapsed >= stats.workers.iter().map(|w| w.busy).max().unwrap());
            let fixed = fixed.stats.unwrap();
            let blocks: Vec<usize> = fixed.workers.iter().map(|w| w.tasks).collect();
            let expected: Vec<usize> = (0..p).map(|r| (r + 1) * n / p - r * n / p).collect();
            assert_eq!(blocks, expected, "p = {p}");
        }
    }
    Ok(())
}

#[test]
fn each_worker_computes_exactly_the_tasks_its_stats_claim() -> Result<()> {
    for p in RANK_COUNTS {
        let counts = rpar::run(p, |world| {
            let mut mine = 0usize;
            let farm = ManagerWorker::new().chunk(2).run(&world, 0..31u32, |n| {
                mine += 1;
                Ok(n + 1)
            })?;
            Ok((mine, farm.stats))
        })?;
        let stats = counts[0].1.as_ref().unwrap();
        for w in &stats.workers {
            assert_eq!(w.tasks, counts[w.rank].0, "p = {p}, rank {}", w.rank);
        }
        assert_eq!(counts.iter().map(|c| c.0).sum::<usize>(), 31);
    }
    Ok(())
}

#[test]
fn only_rank_0_reads_the_tasks_and_lazily() -> Result<()> {
    for p in RANK_COUNTS {
        rpar::run(p, |world| {
            let rank = world.rank();
            let tasks = (0..20u32).inspect(move |_| {
                assert_eq!(rank, 0, "only rank 0 may read the tasks");
            });
            manager_worker(&world, tasks.clone(), Ok)?;
            static_blocks(&world, tasks, Ok)?;
            Ok(())
        })?;
    }
    // Lazily: with one worker and chunks of 1, the manager has read tasks 0..=i, no more,
    // when the worker computes task i (it reads task i + 1 only once result i is in).
    let read = std::sync::atomic::AtomicUsize::new(0);
    rpar::run(2, |world| {
        let tasks = (0..25usize).inspect(|_| {
            read.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        manager_worker(&world, tasks, |i| {
            assert_eq!(read.load(std::sync::atomic::Ordering::SeqCst), i + 1);
            Ok(i as u64)
        })?;
        Ok(())
    })?;
    assert_eq!(read.into_inner(), 25);
    Ok(())
}

/// A work closure that fails on task `bad` (numbered in task order).
fn fails_on(bad: u64) -> impl Fn(u64) -> Result<u64> + Sync {
    move |n| {
        if n == bad {
            Err(Error::user(format!("cannot do {n}")))
        } else {
            Ok(2 * n)
        }
    }
}

fn assert_task_failed(err: &Error, task: usize, context: &str) {
    let Error::TaskFailed {
        task: t, message, ..
    } = err
    else {
        panic!("{context}: expected TaskFailed, got {err}");
    };
    assert_eq!(*t, task, "{context}");
    assert_eq!(message, &format!("cannot do {task}"), "{context}");
}

#[test]
fn a_failing_task_aborts_the_run_with_its_error() {
    for p in RANK_COUNTS {
        for (name, dynamic) in [("manager-worker", true), ("static", false)] {
            let err = rpar::run(p, |world| {
                let work = fails_on(13);
                if dynamic {
                    ManagerWorker::new().chunk(3).run(&world, 0..40u64, work)?;
                } else {
                    static_blocks(&world, 0..40u64, work)?;
                }
                Ok(())
            })
            .unwrap_err();
            let context = format!("{name}, p = {p}");
            let Error::RankFailed { source, .. } = &err else {
                panic!("{context}: expected RankFailed, got {err}");
            };
            assert_task_failed(source, 13, &context);
        }
    }
}

#[test]
fn a_failing_task_ends_the_farm_cleanly_when_every_rank_catches_the_error() -> Result<()> {
    for p in RANK_COUNTS {
        // Strict: the farm must leave no message unreceived even on this path.
        let outcomes = Universe::new(p).strict(true).run(|world| {
            let farm = ManagerWorker::new().run(&world, 0..40u64, fails_on(21));
            world.barrier()?; // every rank got out of the farm, and the world still works
            Ok(farm.err())
        })?;
        let rank_of_failure = match &outcomes[0] {
            Some(Error::TaskFailed { rank, .. }) => *rank,
            other => panic!("p = {p}: rank 0 should see TaskFailed, got {other:?}"),
        };
        for (rank, err) in outcomes.iter().enumerate() {
            let err = err.as_ref().expect("every rank sees the failure");
            if rank == 0 || rank == rank_of_failure {
                assert_task_failed(err, 21, &format!("p = {p}, rank {rank}"));
            } else {
                assert!(
                    matches!(err, Error::Aborted { rank: r, message } if *r == rank_of_failure && message.contains("task 21 failed: cannot do 21")),
                    "p = {p}, rank {rank}: {err}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn static_blocks_report_a_failure_at_rank_0_and_the_failing_rank() -> Result<()> {
    for p in RANK_COUNTS {
        let outcomes = Universe::new(p)
            .strict(true)
            .run(|world| Ok(static_blocks(&world, 0..40u64, fails_on(30)).err()))?;
        let failing = (0..p).find(|r| (r + 1) * 40 / p > 30).unwrap(); // whose block holds 30
        for (rank, err) in outcomes.iter().enumerate() {
            if rank == 0 || rank == failing {
                let err = err
                    .as_ref()
                    .expect("rank 0 and the failing rank see the failure");
                assert_task_failed(err, 30, &format!("p = {p}, rank {rank}"));
            } else {
                assert!(err.is_none(), "p = {p}, rank {rank}: {err:?}");
            }
        }
    }
    Ok(())
}

#[test]
fn a_chunk_of_zero_is_refused_on_every_rank() {
    for p in RANK_COUNTS {
        let outcomes = rpar::run(p, |world| {
            Ok(ManagerWorker::new()
                .chunk(0)
                .run(&world, 0..3u8, Ok)
                .unwrap_err())
        })
        .unwrap();
        for err in outcomes {
            assert!(
                matches!(&err, Error::InvalidArgument { call: "ManagerWorker::run", message } if message.contains("got 0")),
                "{err}"
            );
        }
    }
}

/// A payload whose `recv_batch` drops the last item: a user's bug the farm must report.
#[derive(Debug)]
struct Lossy(u32);

impl Payload for Lossy {
    fn send_batch(comm: &Comm, items: Vec<Self>, dest: usize, tag: i32) -> Result<()> {
        u32::send_batch(comm, items.into_iter().map(|l| l.0).collect(), dest, tag)
    }
    fn recv_batch(comm: &Comm, count: usize, source: usize, tag: i32) -> Result<Vec<Self>> {
        let mut all = u32::recv_batch(comm, count, source, tag)?;
        all.pop();
        Ok(all.into_iter().map(Lossy).collect())
    }
}

#[test]
fn a_payload_that_miscounts_is_an_error_not_lost_results() {
    let err = rpar::run(2, |world| {
        manager_worker(&world, 0..4u32, |n| Ok(Lossy(n)))?;
        Ok(())
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("should hold 1 items, it held 0"),
        "{err}"
    );
}

#[test]
fn builtin_payloads_refuse_a_wrong_count() {
    let outcome = rpar::run(2, |world| {
        if world.rank() == 0 {
            Vec::<u8>::send_batch(&world, vec![vec![1], vec![2]], 1, 0)?;
            u8::send_batch(&world, vec![1, 2, 3], 1, 1)?;
        } else {
            let vecs = Vec::<u8>::recv_batch(&world, 3, 0, 0).unwrap_err();
            assert!(
                vecs.to_string().contains("expected a batch of 3 vectors"),
                "{vecs}"
            );
            world.recv::<u8>(0, 0)?; // the elements of the refused batch
            let values = u8::recv_batch(&world, 2, 0, 1).unwrap_err();
            assert!(
                values.to_string().contains("expected a batch of 2 values"),
                "{values}"
            );
        }
        Ok(())
    });
    outcome.unwrap();
}

#[test]
fn the_farms_messages_never_meet_the_programs() -> Result<()> {
    for p in [2, 3, 8] {
        rpar::run(p, |world| {
            let (next, prev) = ((world.rank() + 1) % p, (world.rank() + p - 1) % p);
            // Messages of the program's own, with the tags the farm uses inside, in flight
            // during both farms.
            for tag in 1..=6 {
                world.send(&(world.rank() as u32 * 10 + tag as u32), next, tag)?;
            }
            manager_worker(&world, 0..15u32, Ok)?;
            static_blocks(&world, 0..15u32, Ok)?;
            for tag in 1..=6 {
                let (got, _) = world.recv::<u32>(prev, tag)?;
                assert_eq!(got, [prev as u32 * 10 + tag as u32]);
            }
            Ok(())
        })?;
    }
    Ok(())
}

fn worker(rank: usize, busy_ms: u64, waiting_ms: u64) -> WorkerStats {
    WorkerStats {
        rank,
        tasks: 1,
        chunks: 1,
        busy: Duration::from_millis(busy_ms),
        waiting: Duration::from_millis(waiting_ms),
    }
}

#[test]
fn stats_verdicts_from_known_numbers() {
    let manager = |busy_ms, idle_ms, queued| ManagerStats {
        requests: 102,
        returns: 100,
        queued,
        busy: Duration::from_millis(busy_ms),
        idle: Duration::from_millis(idle_ms),
    };
    // Starving workers in front of a saturated manager: the bottleneck.
    let saturated = FarmStats {
        elapsed: Duration::from_millis(100),
        workers: vec![worker(1, 30, 70), worker(2, 30, 70)],
        manager: Some(manager(95, 5, 90)),
    };
    assert!(saturated.manager_is_bottleneck());
    assert!((saturated.worker_waiting_fraction() - 0.7).abs() < 1e-9);
    assert!((saturated.manager.unwrap().utilisation() - 0.95).abs() < 1e-9);
    assert!((saturated.load_imbalance() - 1.0).abs() < 1e-9);
    // Busy workers, an idle manager: fine.
    let healthy = FarmStats {
        workers: vec![worker(1, 99, 1), worker(2, 98, 2)],
        manager: Some(manager(2, 98, 1)),
        ..saturated.clone()
    };
    assert!(!healthy.manager_is_bottleneck());
    // Workers wait but the manager is idle and nobody queues (e.g. a slow network): not it.
    let slow_links = FarmStats {
        manager: Some(manager(20, 80, 3)),
        ..saturated.clone()
    };
    assert!(!slow_links.manager_is_bottleneck());
    // Requests queue but the workers hardly wait (long tasks that end together): not it.
    let long_tasks = FarmStats {
        workers: vec![worker(1, 95, 5), worker(2, 90, 10)],
        manager: Some(manager(5, 95, 90)),
        ..saturated.clone()
    };
    assert!(!long_tasks.manager_is_bottleneck());
    // A queue and starving workers while the manager's thread waits for a core: it.
    let oversubscribed = FarmStats {
        manager: Some(manager(10, 90, 80)),
        ..saturated.clone()
    };
    assert!(oversubscribed.manager_is_bottleneck());
    // Static blocks: no manager, only imbalance: one rank with 3 times the mean.
    let blocks = FarmStats {
        workers: vec![worker(0, 90, 0), worker(1, 0, 0), worker(2, 0, 0)],
        manager: None,
        ..saturated
    };
    assert!(!blocks.manager_is_bottleneck());
    assert!((blocks.load_imbalance() - 3.0).abs() < 1e-9);
    assert_eq!(blocks.total_busy(), Duration::from_millis(90));
}

#[test]
fn mandelbrot_rows_as_in_the_example() -> Result<()> {
    let view = mandelbrot::View {
        width: 48,
        height: 30,
        max_iter: 200,
    };
    let expected = view.sequential();
    assert_eq!(expected[7][5], view.pixel(5, 7));
    for p in RANK_COUNTS {
        let loads = rpar::run(p, |world| {
            let mut mine = [0u64; 2]; // iterations: static, manager-worker
            let fixed = static_blocks(&world, 0..view.height, |row| {
                let r = view.row(row);
                mine[0] += mandelbrot::iterations(&r);
                Ok(r)
            })?;
            let dynamic = ManagerWorker::new()
                .chunk(2)
                .run(&world, 0..view.height, |row| {
                    let r = view.row(row);
                    mine[1] += mandelbrot::iterations(&r);
                    Ok(r)
                })?;
            if world.rank() == 0 {
                assert_eq!(fixed.results.as_ref(), Some(&expected), "static, p = {p}");
                assert_eq!(
                    dynamic.results.as_ref(),
                    Some(&expected),
                    "dynamic, p = {p}"
                );
            }
            Ok(mine)
        })?;
        let total: u64 = expected.iter().map(|r| mandelbrot::iterations(r)).sum();
        assert_eq!(loads.iter().map(|l| l[0]).sum::<u64>(), total, "p = {p}");
        assert_eq!(loads.iter().map(|l| l[1]).sum::<u64>(), total, "p = {p}");
        if p == 4 {
            // The example's premise: the view makes static blocks very uneven.
            let max = loads.iter().map(|l| l[0]).max().unwrap();
            assert!(max as f64 > 1.5 * total as f64 / 4.0, "{loads:?}");
        }
    }
    Ok(())
}
