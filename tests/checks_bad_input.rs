//! Bad input, table-driven: every public entry point of point-to-point messaging fed its invalid
//! arguments returns the exact error variant, and the universe stays usable afterwards.

use rpar::{Comm, Error, Result, Universe, ANY_SOURCE, ANY_TAG};

type Case = (&'static str, fn(&Comm) -> Result<()>, fn(&Error) -> bool);

fn rank_out_of_range(e: &Error) -> bool {
    matches!(e, Error::RankOutOfRange { rank: 9, size: 2 })
}
fn bad_tag(e: &Error) -> bool {
    matches!(e, Error::InvalidTag { tag: -5, .. })
}

const CASES: &[Case] = &[
    ("send to rank 9", |w| w.send(&1u8, 9, 0), rank_out_of_range),
    ("send with tag -5", |w| w.send(&1u8, 0, -5), bad_tag),
    (
        "send with ANY_TAG",
        |w| w.send(&1u8, 0, ANY_TAG),
        |e| matches!(e, Error::InvalidTag { tag: -1, .. }),
    ),
    (
        "send to ANY_SOURCE",
        |w| w.send(&1u8, ANY_SOURCE, 0),
        |e| matches!(e, Error::RankOutOfRange { .. }),
    ),
    (
        "send_owned to rank 9",
        |w| w.send(vec![1u8], 9, 0),
        rank_out_of_range,
    ),
    (
        "send_owned with tag -5",
        |w| w.send(vec![1u8], 0, -5),
        bad_tag,
    ),
    (
        "recv from rank 9",
        |w| w.recv::<u8>(9, 0).map(|_| ()),
        rank_out_of_range,
    ),
    (
        "recv with tag -5",
        |w| w.recv::<u8>(0, -5).map(|_| ()),
        bad_tag,
    ),
    (
        "recv_into from rank 9",
        |w| w.recv_into(&mut [0u8; 1][..], 9, 0).map(|_| ()),
        rank_out_of_range,
    ),
    (
        "probe rank 9",
        |w| w.probe(9, 0).map(|_| ()),
        rank_out_of_range,
    ),
    ("iprobe tag -5", |w| w.iprobe(0, -5).map(|_| ()), bad_tag),
    (
        "isend to rank 9",
        |w| w.isend(&1u8, 9, 0).map(|_| ()),
        rank_out_of_range,
    ),
    (
        "isend_owned tag -5",
        |w| w.isend(vec![1u8], 0, -5).map(|_| ()),
        bad_tag,
    ),
    (
        "irecv_into from rank 9",
        |w| w.irecv_into(&mut [0u8; 1][..], 9, 0).map(|_| ()),
        rank_out_of_range,
    ),
    (
        "sendrecv to rank 9",
        |w| w.sendrecv(&1u8, 9, 0, &mut 0u8, 0, 0).map(|_| ()),
        rank_out_of_range,
    ),
    (
        "sendrecv from rank 9",
        |w| w.sendrecv(&1u8, 0, 0, &mut 0u8, 9, 0).map(|_| ()),
        rank_out_of_range,
    ),
    (
        "sendrecv_replace tag -5",
        |w| w.sendrecv_replace(&mut 0u8, 0, -5, 0, 0).map(|_| ()),
        bad_tag,
    ),
    (
        "group world_rank_of 9",
        |w| w.group().world_rank_of(9).map(|_| ()),
        rank_out_of_range,
    ),
];

#[test]
fn every_invalid_argument_is_its_error_and_the_universe_stays_usable() -> Result<()> {
    rpar::run(2, |w| {
        for (name, call, expected) in CASES {
            let err = call(&w).expect_err(name);
            assert!(expected(&err), "{name}: got {err:?}");
            assert!(!err.to_string().is_empty());
            // still usable: a real exchange works after every refusal
            let mut got = 0u32;
            let other = 1 - w.rank();
            w.sendrecv(&(w.rank() as u32), other, 1, &mut got, other, 1)?;
            assert_eq!(got, other as u32, "after {name}");
        }
        // nothing was sent by any refused call
        w.barrier()?;
        assert!(w.iprobe(ANY_SOURCE, ANY_TAG)?.is_none());
        Ok(())
    })?;
    Ok(())
}

#[test]
fn a_mismatched_receive_leaves_the_message_for_a_correct_one() -> Result<()> {
    rpar::run(2, |w| {
        if w.rank() == 0 {
            w.send(&[3i64, 4][..], 1, 0)?;
        } else {
            assert!(matches!(
                w.recv::<f64>(0, 0),
                Err(Error::TypeMismatch { .. })
            ));
            assert!(matches!(
                w.recv_into(&mut [0i64; 1][..], 0, 0),
                Err(Error::Truncated {
                    needed: 16,
                    capacity: 8,
                    ..
                })
            ));
            assert_eq!(w.recv::<i64>(0, 0)?.0, [3, 4]);
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn universe_arguments_are_checked() {
    assert!(matches!(
        Universe::new(0).run(|_| Ok(())),
        Err(Error::InvalidArgument { .. })
    ));
}

/// Collectives, topologies and datatypes, each refused on every rank alike, before any message.
const MORE_CASES: &[Case] = &[
    (
        "bcast from root 9",
        |w| w.bcast(&mut [0u8; 4][..], 9),
        rank_out_of_range,
    ),
    (
        "reduce to root 9",
        |w| w.reduce(&1u32, rpar::Sum, 9).map(|_| ()),
        rank_out_of_range,
    ),
    (
        "gather to root 9",
        |w| w.gather(&1u32, 9).map(|_| ()),
        rank_out_of_range,
    ),
    (
        "allgather_into a buffer of the wrong length",
        |w| w.allgather((&[1u8, 2][..], &mut [0u8; 3][..])),
        invalid,
    ),
    (
        "alltoall of 3 elements on 2 ranks",
        |w| w.alltoall(&[1u8, 2, 3][..]).map(|_| ()),
        invalid,
    ),
    (
        "reduce_scatter_block of 3 elements on 2 ranks",
        |w| w.reduce_scatter(&[1u8, 2, 3][..], rpar::Sum).map(|_| ()),
        invalid,
    ),
    (
        "dims_create(7) with a fixed 2",
        |_| rpar::dims_create(7, &mut [2, 0]),
        invalid,
    ),
    (
        "a 3 x 3 grid on 2 ranks",
        |w| rpar::CartComm::create(w, [3, 3], [false, false], false).map(|_| ()),
        invalid,
    ),
    (
        "a graph whose index decreases",
        |w| rpar::GraphComm::create(w, &[2, 1], &[1, 0], false).map(|_| ()),
        invalid,
    ),
    (
        "a typed send that reads past the buffer",
        |w| {
            let every_other =
                rpar::TypeMap::vector(4, 1, 2, &<u32 as rpar::Datatype>::type_map())?.commit();
            w.send(
                rpar::Typed::new(&[0u32; 3], &every_other, 1),
                1 - w.rank(),
                2,
            )
        },
        |e| matches!(e, Error::BufferOutOfBounds { .. }),
    ),
];

fn invalid(e: &Error) -> bool {
    matches!(e, Error::InvalidArgument { .. })
}

#[test]
fn collectives_topologies_and_datatypes_refuse_bad_input_and_stay_usable() -> Result<()> {
    rpar::run(2, |w| {
        for (name, call, expected) in MORE_CASES {
            let err = call(&w).expect_err(name);
            assert!(expected(&err), "{name}: got {err:?}");
            // collectives still line up after a refused one
            let sum = w.allreduce(&(w.rank() as u32 + 1), rpar::Sum)?;
            assert_eq!(sum, 3, "after {name}");
        }
        w.barrier()?;
        assert!(w.iprobe(ANY_SOURCE, ANY_TAG)?.is_none());
        Ok(())
    })?;
    Ok(())
}
