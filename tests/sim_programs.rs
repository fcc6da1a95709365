//! Whole programs on the virtual clock (`Universe::simulate`): the real program runs, its
//! results are the real ones, and its predicted time is the network model's.
//!
//! * On contention-free cases the lecture's algorithms, run as programs through `Comm`, take
//!   exactly their closed forms (with computation not counted, `cpu_scale(0.0)`, and the dyadic
//!   constants of `sim_closed_forms.rs`, so `==` holds).
//! * Every collective algorithm run by a program is timed as the schedule that
//!   `sim::record_collective` records for it: the algorithm that ran is the one simulated.
//! * Computation counts the rank's own CPU time, which ranks outnumbering cores do not inflate.

use rpar::cost::{lecture, Network, Params, Switching};
use rpar::sim::{record_collective, scaling, Collective, Prediction, Simulator};
use rpar::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Comm, Reduce, Result, Scan, Sum, Universe,
};

mod common;

use common::closed_forms::{M, PARAMS, SWITCHINGS};

/// A machine of 1 us per message and 1 ns per byte, cut-through; computation counts.
fn microsecond_machine(net: Network) -> Simulator {
    Simulator::new(net, Switching::CutThrough, Params::hockney(1e-6, 1e-9))
}

/// A machine on which computation costs nothing: communication only.
fn machine(net: Network, sw: Switching) -> Simulator {
    Simulator::new(net, sw, PARAMS).cpu_scale(0.0)
}

fn simulate<R, F>(machine: &Simulator, p: usize, program: F) -> Prediction<R>
where
    F: Fn(Comm) -> Result<R> + Sync,
    R: rpar::RunResult,
{
    Universe::new(p).simulate(machine).run(program).unwrap()
}

#[test]
fn binomial_broadcast_as_a_program_takes_its_closed_form() {
    let cases = [
        (Network::hypercube(0), SWITCHINGS.to_vec()),
        (Network::hypercube(1), SWITCHINGS.to_vec()),
        (Network::hypercube(4), SWITCHINGS.to_vec()),
        (Network::ring(16), vec![Switching::CutThrough]),
        (Network::torus(4, 4), vec![Switching::CutThrough]),
    ];
    for (net, sws) in cases {
        for sw in sws {
            let p = net.nodes();
            let run = simulate(&machine(net, sw), p, |world| {
                let mut data = [0u8; M];
                if world.rank() == 0 {
                    data = [7; M];
                }
                world.using(Bcast::Binomial).bcast(&mut data[..], 0)?;
                Ok(data[M - 1])
            });
            assert_eq!(run.results, vec![7; p]);
            let formula = lecture::one_to_all_broadcast(&PARAMS, &net, sw, M).unwrap();
            assert_eq!(run.time, formula, "{net:?} {sw:?}");
            assert_eq!(run.network.link_wait, 0.0);
            assert_eq!(run.network.messages, p - 1);
        }
    }
}

#[test]
fn allgather_as_a_program_takes_its_closed_form() {
    let gather = |algorithm: Allgather| {
        move |world: Comm| {
            let mine = [world.rank() as u8; M];
            let all = world.using(algorithm).allgather(&mine[..])?;
            Ok(all.chunks(M).all(|b| b == [b[0]; M]) && all.len() == M * world.size())
        }
    };
    for sw in SWITCHINGS {
        for p in [2, 5, 8] {
            let net = Network::ring(p);
            let run = simulate(&machine(net, sw), p, gather(Allgather::Ring));
            assert!(run.results.iter().all(|&ok| ok));
            let formula = lecture::all_to_all_broadcast(&PARAMS, &net, sw, M).unwrap();
            assert_eq!(run.time, formula, "ring {p} {sw:?}");
        }
        for d in 0..=4 {
            let net = Network::hypercube(d);
            let run = simulate(
                &machine(net, sw),
                net.nodes(),
                gather(Allgather::RecursiveDoubling),
            );
            let formula = lecture::all_to_all_broadcast(&PARAMS, &net, sw, M).unwrap();
            assert_eq!(run.time, formula, "hypercube {d} {sw:?}");
            assert_eq!(run.network.link_wait, 0.0);
        }
    }
}

#[test]
fn allreduce_as_a_program_takes_its_closed_form_with_gamma() {
    for d in 0..=4 {
        let net = Network::hypercube(d);
        let p = net.nodes();
        let run = simulate(&machine(net, Switching::StoreAndForward), p, |world| {
            let mine = [1u8; M];
            let sum = world
                .using(Allreduce::RecursiveDoubling)
                .allreduce(&mine[..], Sum)?;
            Ok(sum[0] as usize)
        });
        assert_eq!(run.results, vec![p; p]);
        assert_eq!(run.time, lecture::all_reduce(&PARAMS, &net, M).unwrap());
    }
}

/// Runs `collective` as `Comm` runs it for a program, on `p` ranks with `M` bytes per rank.
fn run_collective(world: &Comm, collective: Collective) -> Result<()> {
    let p = world.size();
    let mine = vec![world.rank() as u8 + 1; M];
    match collective {
        Collective::Bcast(a) => {
            let mut data = mine;
            world.using(a).bcast(&mut data[..], 0)
        }
        Collective::Reduce(a) => world.using(a).reduce(&mine[..], Sum, 0).map(drop),
        Collective::Allreduce(a) => world.using(a).allreduce(&mine[..], Sum).map(drop),
        Collective::Allgather(a) => world.using(a).allgather(&mine[..]).map(drop),
        Collective::Alltoall(a) => world.using(a).alltoall(&vec![1u8; M * p][..]).map(drop),
        Collective::Scan(a) => world.using(a).scan(&mine[..], Sum).map(drop),
        Collective::Barrier(a) => world.using(a).barrier(),
        other => unreachable!("not exercised here: {other:?}"),
    }
}

#[test]
fn every_algorithm_run_by_a_program_is_timed_as_its_recorded_schedule() {
    let collectives = [
        Collective::Bcast(Bcast::Linear),
        Collective::Bcast(Bcast::Binomial),
        Collective::Bcast(Bcast::ScatterAllgather),
        Collective::Reduce(Reduce::Binomial),
        Collective::Reduce(Reduce::Linear),
        Collective::Allreduce(Allreduce::RecursiveDoubling),
        Collective::Allreduce(Allreduce::Ring),
        Collective::Allreduce(Allreduce::Rabenseifner),
        Collective::Allreduce(Allreduce::ReduceBcast),
        Collective::Allgather(Allgather::Ring),
        Collective::Allgather(Allgather::RecursiveDoubling),
        Collective::Allgather(Allgather::Bruck),
        Collective::Alltoall(Alltoall::Linear),
        Collective::Alltoall(Alltoall::Pairwise),
        Collective::Alltoall(Alltoall::Bruck),
        Collective::Scan(Scan::RecursiveDoubling),
        Collective::Barrier(Barrier::Dissemination),
    ];
    for p in [3, 4, 6] {
        let net = Network::fully_connected(p);
        let sim = Simulator::new(net, Switching::CutThrough, PARAMS);
        for c in collectives {
            let recorded = sim.run(&record_collective(p, M, c).unwrap()).unwrap();
            let run = simulate(&sim.clone().cpu_scale(0.0), p, |world| {
                run_collective(&world, c)
            });
            assert_eq!(run.time, recorded.time, "{c:?} on {p} ranks");
            assert_eq!(run.network.messages, recorded.messages, "{c:?} on {p}");
        }
    }
}

/// Burns about `units` units of CPU work (the same work on every rank and every run).
fn work(units: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..units * 1_000_000 {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

#[test]
fn computation_counts_cpu_time_which_sharing_the_cores_does_not_inflate() {
    let sim = microsecond_machine(Network::fully_connected(16));
    let program = |world: Comm| {
        let x = work(20);
        world.barrier()?;
        Ok(x)
    };
    let alone = simulate(&sim, 1, program);
    // 16 ranks on this machine's cores: each waits for a core most of the time
    let shared = simulate(&sim, 16, program);
    let one = alone.ranks[0].compute;
    assert!(one > 0.0);
    for (r, t) in shared.ranks.iter().enumerate() {
        // the same work: the same CPU time, within what noise and caches do (not 8x)
        assert!(
            t.compute > one / 2.0 && t.compute < one * 2.0,
            "rank {r}: {} s against {one} s alone",
            t.compute
        );
    }
    // a slower machine: the computation scales, the messages do not
    let slow = simulate(&sim.clone().cpu_scale(3.0), 1, program);
    assert!(slow.ranks[0].compute > 1.5 * one, "{slow:?}");
}

#[test]
fn a_receive_completes_at_the_later_of_its_clock_and_the_arrival() {
    // rank 0 computes, then sends; rank 1 waits for it: rank 1 finishes after rank 0's work
    let sim = Simulator::new(
        Network::fully_connected(2),
        Switching::CutThrough,
        Params::hockney(1e-3, 0.0),
    );
    let run = simulate(&sim, 2, |world| {
        if world.rank() == 0 {
            let x = work(30);
            world.send(&x, 1, 0)?;
        } else {
            world.recv::<u64>(rpar::ANY_SOURCE, rpar::ANY_TAG)?;
        }
        Ok(())
    });
    let (sender, receiver) = (run.ranks[0], run.ranks[1]);
    // the receive ends when the message arrives: the sender's work, then one message of 1 ms
    assert!((receiver.finish - (sender.compute + 1e-3)).abs() < sender.compute * 0.05 + 1e-4);
    assert!(receiver.compute < sender.compute / 4.0);
    assert!(receiver.communication() > sender.compute);
}

#[test]
fn the_virtual_trace_has_every_message_going_forward() {
    let sim = machine(Network::torus(4, 4), Switching::CutThrough);
    let path = std::env::temp_dir().join(format!("rpar-sim-trace-{}.json", std::process::id()));
    let run = Universe::new(16)
        .trace(&path)
        .simulate(&sim)
        .run(|world| {
            let x = world
                .using(Allreduce::RecursiveDoubling)
                .allreduce(&(world.rank() as u64), Sum)?;
            world.using(Allgather::Ring).allgather(&x).map(|v| v.len())
        })
        .unwrap();
    let calls: Vec<&str> = run.calls(3).iter().map(|c| c.name).collect();
    assert_eq!(calls, ["allreduce", "allgather"]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    let events = doc["traceEvents"].as_array().unwrap();
    let at = |ph: &str| -> std::collections::HashMap<u64, f64> {
        events
            .iter()
            .filter(|e| e["ph"] == ph)
            .map(|e| (e["id"].as_u64().unwrap(), e["ts"].as_f64().unwrap()))
            .collect()
    };
    let (out, into) = (at("s"), at("f"));
    assert_eq!(out.len(), run.network.messages);
    assert_eq!(into.len(), run.network.messages);
    for (id, sent) in &out {
        assert!(
            into[id] > *sent,
            "message {id}: sent {sent} us, received {} us",
            into[id]
        );
    }
    let calls: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == 0)
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        calls.contains(&"allreduce") && calls.contains(&"allgather"),
        "{calls:?}"
    );
}

#[test]
fn bad_machines_are_refused_with_what_was_expected() {
    let small = machine(Network::ring(4), Switching::CutThrough);
    let err = Universe::new(5)
        .simulate(&small)
        .run(|_| Ok(()))
        .unwrap_err();
    assert!(
        err.to_string().contains("at least 5 nodes") && err.to_string().contains("of 4"),
        "{err}"
    );
    let err = Universe::new(2)
        .transport(rpar::Transport::Mpi)
        .simulate(&small)
        .run(|_| Ok(()))
        .unwrap_err();
    assert!(
        err.to_string().contains("in-process") || err.to_string().contains("mpi"),
        "{err}"
    );
    // a failing rank fails the simulation as it fails a run
    let err = Universe::new(2)
        .simulate(&small)
        .run(|world| {
            if world.rank() == 1 {
                return Err(rpar::Error::user("rank 1 gives up"));
            }
            world.barrier()
        })
        .unwrap_err();
    assert!(err.to_string().contains("rank 1 gives up"), "{err}");
    // a rank that panics while it computes ends the run with its message, while the others
    // wait for it in their barrier
    let err = Universe::new(8)
        .simulate(&machine(Network::ring(8), Switching::CutThrough))
        .run(|world| {
            work(1);
            if world.rank() == 5 {
                panic!("rank 5 panics mid-computation");
            }
            work(1);
            world.barrier()
        })
        .unwrap_err();
    assert!(
        matches!(err, rpar::Error::RankPanicked { rank: 5, .. }),
        "{err}"
    );
}

#[test]
fn scaling_tabulates_speedup_against_the_one_rank_run() {
    let sim = microsecond_machine(Network::hypercube(3));
    let table = scaling(&sim, &[2, 4, 8], |world| {
        let x = work(64 / world.size() as u64);
        world.allreduce(&x, Sum)
    })
    .unwrap();
    assert_eq!(
        table.rows.iter().map(|r| r.ranks).collect::<Vec<_>>(),
        [2, 4, 8]
    );
    for row in &table.rows {
        assert!(row.speedup > 1.0, "{table}");
        assert!((row.efficiency - row.speedup / row.ranks as f64).abs() < 1e-12);
    }
    assert!(table.to_string().contains("speedup"));
}
