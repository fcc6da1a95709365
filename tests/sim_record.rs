//! Recording schedules: the reference algorithms move the right data when run on ranks and
//! record the right messages; recording scales to 65536 ranks; bad schedules are refused.

use rpar::cost::{Network, Params, Switching};
use rpar::sim::{record, Op, Reference, Schedule, Simulator};
use std::time::Instant;

fn expected(alg: Reference, p: usize, bytes: usize) -> Vec<u8> {
    match alg {
        Reference::BinomialBcast => Reference::input(0, bytes),
        Reference::RingAllgather | Reference::RecursiveDoublingAllgather => {
            (0..p).flat_map(|r| Reference::input(r, bytes)).collect()
        }
        Reference::RecursiveDoublingAllreduce => (0..bytes)
            .map(|i| (0..p).fold(0u8, |s, r| s.wrapping_add(Reference::input(r, bytes)[i])))
            .collect(),
    }
}

fn needs_power_of_two(alg: Reference) -> bool {
    matches!(
        alg,
        Reference::RecursiveDoublingAllgather | Reference::RecursiveDoublingAllreduce
    )
}

#[test]
fn reference_algorithms_move_the_right_data() {
    for alg in Reference::ALL {
        for p in 1..=9usize {
            for bytes in [0, 1, 7, 100] {
                let got = rpar::run(p, |world| alg.run(&world, bytes));
                if needs_power_of_two(alg) && !p.is_power_of_two() {
                    assert!(got.is_err(), "{alg:?} on {p} ranks must refuse");
                    continue;
                }
                let want = expected(alg, p, bytes);
                for (rank, out) in got.unwrap().iter().enumerate() {
                    assert_eq!(out, &want, "{alg:?}, p = {p}, {bytes} bytes, rank {rank}");
                }
            }
        }
    }
}

#[test]
fn recorded_schedules_have_the_algorithms_messages() {
    let p = 16;
    let bcast = Reference::BinomialBcast.record(p, 10).unwrap();
    assert_eq!((bcast.messages(), bcast.bytes_sent()), (15, 150));
    // the root sends log2 p times; tag 201 is the library bcast's, whose code the reference runs
    assert_eq!(bcast.rank_ops(0).len(), 4);
    assert_eq!(
        bcast.rank_ops(0)[0],
        Op::Send {
            to: 8,
            tag: 201,
            bytes: 10
        }
    );
    assert_eq!(
        bcast.rank_ops(5),
        [Op::Recv {
            from: 4,
            tag: 201,
            bytes: 10
        }]
    );
    let ring = Reference::RingAllgather.record(p, 10).unwrap();
    assert_eq!(
        (ring.messages(), ring.bytes_sent()),
        (p * (p - 1), (p * (p - 1) * 10) as u64)
    );
    let rd = Reference::RecursiveDoublingAllgather.record(p, 10).unwrap();
    assert_eq!(
        (rd.messages(), rd.bytes_sent()),
        (p * 4, (p * 10 * 15) as u64)
    );
    let sum = Reference::RecursiveDoublingAllreduce.record(p, 10).unwrap();
    assert_eq!(sum.rank_ops(3)[2], Op::Reduce { bytes: 10 });
}

#[test]
fn recording_scales_to_65536_ranks() {
    let start = Instant::now();
    let s = Reference::RecursiveDoublingAllgather
        .record(4096, 8)
        .unwrap();
    let took = start.elapsed();
    assert_eq!(s.messages(), 4096 * 12);
    // Under a second in release (see examples/costmodel.rs); debug builds get slack.
    assert!(
        took.as_secs_f64() < 5.0,
        "recording 4096 ranks took {took:?}"
    );
    let big = Reference::BinomialBcast.record(65536, 8).unwrap();
    assert_eq!(big.messages(), 65535);
    let params = Params::new(1.0, 0.0, 0.0, 0.0);
    let sim = Simulator::new(Network::hypercube(16), Switching::CutThrough, params);
    assert_eq!(sim.run(&big).unwrap().time, 16.0);
}

#[test]
fn bad_schedules_are_refused() {
    // A receive without a send.
    let err = record(2, |r| {
        if r.rank() == 1 {
            r.recv_bytes(0, 3, 8)
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert!(err.to_string().contains("no matching send"), "{err}");
    // A send without a receive.
    let err = Schedule::new(vec![
        vec![Op::Send {
            to: 1,
            tag: 0,
            bytes: 1,
        }],
        vec![],
    ])
    .unwrap_err();
    assert!(err.to_string().contains("no matching receive"), "{err}");
    // A message larger than its buffer.
    let err = record(2, |r| {
        if r.rank() == 0 {
            r.send_bytes(1, 0, 16)
        } else {
            r.recv_bytes(0, 0, 8)
        }
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            rpar::Error::Truncated {
                needed: 16,
                capacity: 8,
                ..
            }
        ),
        "{err}"
    );
    // A rank out of range, reported with the recording rank.
    let err = record(2, |r| r.send_bytes(2, 0, 1)).unwrap_err();
    assert!(
        matches!(err, rpar::Error::RankFailed { rank: 0, .. }),
        "{err}"
    );
    // Both ranks receive first: a deadlock the simulator reports.
    let s = record(2, |r| {
        let other = 1 - r.rank();
        r.recv_bytes(other, 0, 1)?;
        r.send_bytes(other, 0, 1)
    })
    .unwrap();
    let err = Simulator::new(
        Network::ring(2),
        Switching::CutThrough,
        Params::hockney(1.0, 1.0),
    )
    .run(&s)
    .unwrap_err();
    assert!(err.to_string().contains("deadlock"), "{err}");
    // More ranks than nodes.
    let s = Reference::BinomialBcast.record(8, 1).unwrap();
    let err = Simulator::new(
        Network::ring(4),
        Switching::CutThrough,
        Params::hockney(1.0, 1.0),
    )
    .run(&s)
    .unwrap_err();
    assert!(err.to_string().contains("only 4 nodes"), "{err}");
}

/// rpar's own collective code, recorded: message counts follow the algorithms' structure.
#[test]
fn the_librarys_collectives_record_with_their_structure() -> rpar::Result<()> {
    use rpar::sim::{record_collective, Collective};
    use rpar::{Allgather, Allreduce, Alltoall, Bcast, Reduce};
    for p in [2usize, 4, 8, 16] {
        let log = p.trailing_zeros() as usize;
        let n = |c| record_collective(p, 256, c).map(|s| s.messages());
        assert_eq!(n(Collective::Bcast(Bcast::Binomial))?, p - 1, "p {p}");
        assert_eq!(n(Collective::Bcast(Bcast::Linear))?, p - 1);
        assert_eq!(n(Collective::Reduce(Reduce::Binomial))?, p - 1);
        assert_eq!(n(Collective::Allgather(Allgather::Ring))?, p * (p - 1));
        assert_eq!(
            n(Collective::Allgather(Allgather::RecursiveDoubling))?,
            p * log
        );
        assert_eq!(
            n(Collective::Allreduce(Allreduce::RecursiveDoubling))?,
            p * log
        );
        assert_eq!(n(Collective::Alltoall(Alltoall::Pairwise))?, p * (p - 1));
        // every message sent is received (the schedule matched)
        let s = record_collective(p, 256, Collective::Alltoall(Alltoall::Bruck))?;
        assert!(s.messages() > 0);
    }
    Ok(())
}
