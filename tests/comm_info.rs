//! Info objects on communicators, after MPICH's test/mpi/comm tests dup_with_info, comm_info,
//! comm_info_hint and idup_with_info (written anew from their checks).

use rpar::{Info, ANY_SOURCE, ANY_TAG};

fn info(pairs: &[(&str, &str)]) -> Info {
    let mut info = Info::new();
    for (k, v) in pairs {
        info.set(k, v).unwrap();
    }
    info
}

#[test]
fn copies_with_info_work_and_keep_only_known_hints() {
    let keys = info(&[
        ("host", "myhost.myorg.org"),
        ("file", "runfile.txt"),
        ("soft", "2:1000:4,3:1000:7"),
    ]);
    let hints = info(&[
        ("mpi_assert_no_any_tag", "true"),
        ("invalid_test_key", "true"),
    ]);
    rpar::run(4, |world| {
        for given in [Info::new(), keys.clone(), hints.clone()] {
            let copy = world.dup_with_info(&given)?;
            assert_eq!((copy.rank(), copy.size()), (world.rank(), world.size()));
            let (r, p) = (copy.rank(), copy.size());
            if r == 0 || r == p - 1 {
                let other = p - 1 - r;
                let mut got = usize::MAX;
                let st = copy.sendrecv(&r, other, 0, &mut got, other, 0)?;
                assert_eq!((got, st.source), (other, other));
            }
            copy.barrier()?;
            let out = copy.info();
            assert_eq!(out.get("invalid_test_key")?, None);
            assert_eq!(out.get("host")?, None);
            let want = if given == hints { "true" } else { "false" };
            assert_eq!(out.get("mpi_assert_no_any_tag")?, Some(want));
        }
        // set_info updates what it names; dup keeps the hints, split does not
        world.set_info(&info(&[("mpi_assert_allow_overtaking", "true")]));
        world.set_info(&info(&[("mpi_assert_exact_length", "true")]));
        let out = world.dup()?.info();
        assert_eq!(out.get("mpi_assert_allow_overtaking")?, Some("true"));
        assert_eq!(out.get("mpi_assert_exact_length")?, Some("true"));
        let part = world.split(Some(0), 0)?.unwrap().info();
        assert_eq!(part.get("mpi_assert_exact_length")?, Some("false"));
        // idup_with_info
        let mut copy = None;
        world.scope(|s| s.idup_with_info(&mut copy, &hints)?.wait().map(drop))?;
        let copy = copy.unwrap();
        assert_eq!(copy.info().get("mpi_assert_no_any_tag")?, Some("true"));
        assert_eq!(copy.allreduce(&1, rpar::Sum)?, 4);
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_broken_wildcard_promise_is_an_error_and_named_receives_still_work() {
    let no_wild = info(&[
        ("mpi_assert_no_any_source", "true"),
        ("mpi_assert_no_any_tag", "true"),
    ]);
    rpar::run(2, |world| {
        let c = world.dup_with_info(&no_wild)?;
        let other = 1 - c.rank();
        c.send(&7u8, other, 3)?;
        let err = c.recv::<u8>(ANY_SOURCE, 3).unwrap_err();
        assert!(
            err.to_string().contains("mpi_assert_no_any_source"),
            "{err}"
        );
        let err = c.recv::<u8>(other, ANY_TAG).unwrap_err();
        assert!(err.to_string().contains("mpi_assert_no_any_tag"), "{err}");
        assert!(c.iprobe(ANY_SOURCE, 3).is_err());
        assert_eq!(c.recv::<u8>(other, 3)?.0, [7]);
        // collectives are not receives of the program's: they still run
        assert_eq!(c.allreduce(&1u32, rpar::Sum)?, 2);
        Ok(())
    })
    .unwrap();
}
