//! The leak report: messages sent but never received and receives never completed are listed on
//! the run's report, or make the run fail in strict mode.

use rpar::{Error, Result, Universe, Warning};

#[test]
fn a_clean_run_reports_nothing() -> Result<()> {
    let report = Universe::new(4).run_report(|w| {
        let p = w.size();
        let mut got = 0u8;
        w.sendrecv(
            &1u8,
            (w.rank() + 1) % p,
            0,
            &mut got,
            (w.rank() + p - 1) % p,
            0,
        )?;
        w.barrier()?;
        Ok(got)
    })?;
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.results, [1, 1, 1, 1]);
    Ok(())
}

#[test]
fn unreceived_messages_are_listed_with_their_facts() -> Result<()> {
    let report = Universe::new(3).run_report(|w| {
        match w.rank() {
            0 => {
                w.send(&[1u32, 2, 3][..], 2, 8)?;
                w.barrier()?;
            }
            1 => {
                w.barrier()?;
                // rank 2 may already have returned: the message is reported either way
                w.send(&vec![0u8; 100_000][..], 2, 9).ok();
            }
            _ => w.barrier()?,
        }
        Ok(())
    })?;
    assert!(report.warnings.contains(&Warning::Unreceived {
        to: 2,
        from: 0,
        tag: 8,
        communicator: 0,
        bytes: 12
    }));
    Ok(())
}

#[test]
fn a_leaked_receive_request_is_reported() -> Result<()> {
    let report = Universe::new(1).run_report(|w| {
        let mut buf = [0u8; 1];
        std::mem::forget(w.irecv_into(&mut buf[..], 0, 3)?);
        Ok(())
    })?;
    assert_eq!(
        report.warnings,
        [Warning::IncompleteReceive {
            rank: 0,
            source: Some(0),
            tag: Some(3),
            communicator: 0
        }]
    );
    Ok(())
}

#[test]
fn strict_mode_turns_leaks_into_an_error() {
    let err = Universe::new(2)
        .strict(true)
        .run(|w| {
            if w.rank() == 1 {
                w.send(&5i64, 0, 1)?;
            }
            w.barrier()
        })
        .unwrap_err();
    match &err {
        Error::Leaks { warnings } => assert_eq!(warnings.len(), 1),
        other => panic!("expected Leaks, got {other:?}"),
    }
    assert!(err.to_string().contains("never received"), "{err}");
}
