//! MPI's progress rule (MPI-4.0 §3.7.4): a send whose receive is posted completes, whatever else
//! the receiver does meanwhile (a blocking receive of something else, a barrier, a loop of
//! tests). Large sends are rendezvous in rpar (the sender waits until the receiver copies), so
//! these programs — correct MPI, completing under MPICH and Open MPI — were reported as
//! deadlocked or spun for ever before the receiver released such sends while busy elsewhere.
//! Also MPI's completion calls on several requests: stable indices, MPI_UNDEFINED for no
//! active request.

use rpar::{Comm, Result, TestAny, ANY_SOURCE};
use std::time::{Duration, Instant};

/// A rendezvous-sized message (1 MiB: the shared copy too).
const BIG: usize = 1 << 17;

/// Runs `program` on 3 ranks and expects it to complete, promptly.
fn completes(program: impl Fn(Comm) -> Result<()> + Sync) {
    let started = Instant::now();
    let outcome = rpar::run(3, program);
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// Rank 0 sends the big message to rank 1, then a small one to rank 2, which forwards it to
/// rank 1: rank 1 can get the small one only once the big send is complete.
fn sender_and_forwarder(w: &Comm) -> Result<()> {
    match w.rank() {
        0 => {
            w.send(&vec![5u64; BIG][..], 1, 1)?;
            w.send(&1u8, 2, 3)
        }
        _ => {
            let mut x = 0u8;
            w.recv_into(&mut x, 0, 3)?;
            w.send(&x, 1, 2)
        }
    }
}

#[test]
fn a_posted_receive_completes_while_its_rank_blocks_in_another_receive() {
    completes(|w| {
        if w.rank() != 1 {
            return sender_and_forwarder(&w);
        }
        let mut big = vec![0u64; BIG];
        let req = w.irecv_into(&mut big[..], 0, 1)?;
        let mut x = 0u8;
        w.recv_into(&mut x, 2, 2)?;
        req.wait()?;
        assert!(big.iter().all(|&v| v == 5));
        Ok(())
    });
}

#[test]
fn a_posted_receive_completes_while_its_rank_polls_another_request() {
    completes(|w| {
        if w.rank() != 1 {
            return sender_and_forwarder(&w);
        }
        let mut big = vec![0u64; BIG];
        let mut x = 0u8;
        let req = w.irecv_into(&mut big[..], 0, 1)?;
        let mut small = w.irecv_into(&mut x, 2, 2)?;
        while small.test()?.is_none() {}
        drop(small);
        req.wait()?;
        assert_eq!(x, 1);
        assert!(big.iter().all(|&v| v == 5));
        Ok(())
    });
}

#[test]
fn a_posted_receive_completes_while_its_rank_is_in_a_barrier() {
    completes(|w| {
        match w.rank() {
            0 => w.send(&vec![5u64; BIG][..], 1, 1)?,
            1 => {
                let mut big = vec![0u64; BIG];
                let req = w.irecv_into(&mut big[..], 0, 1)?;
                w.barrier()?;
                req.wait()?;
                assert!(big.iter().all(|&v| v == 5));
                return Ok(());
            }
            _ => {}
        }
        w.barrier()
    });
}

#[test]
fn a_receive_posted_after_the_offer_came_completes_too() {
    // the offer is already queued when the receive is posted (the probe makes sure)
    completes(|w| {
        if w.rank() != 1 {
            return sender_and_forwarder(&w);
        }
        w.probe(0, 1)?;
        let mut big = vec![0u64; BIG];
        let req = w.irecv_into(&mut big[..], 0, 1)?;
        let mut x = 0u8;
        w.recv_into(&mut x, 2, 2)?;
        req.wait()?;
        assert!(big.iter().all(|&v| v == 5));
        Ok(())
    });
}

#[test]
fn a_receive_left_behind_by_wait_any_completes_while_its_rank_blocks() {
    completes(|w| match w.rank() {
        0 => {
            w.send(&7u8, 1, 0)?;
            w.send(&vec![5u64; BIG][..], 1, 1)?;
            w.send(&1u8, 2, 3)
        }
        1 => {
            let mut big = vec![0u64; BIG];
            let mut x = 0u8;
            let mut reqs = [
                w.irecv_into(&mut big[..], 0, 1)?,
                w.irecv_into(&mut x, 0, 0)?,
            ];
            let (i, _) = rpar::wait_any(&mut reqs)?.expect("two requests are active");
            let mut forwarded = 0u8;
            w.recv_into(&mut forwarded, 2, 2)?;
            rpar::wait_any(&mut reqs)?.expect("one request is still active");
            assert_eq!(rpar::wait_any(&mut reqs)?, None);
            drop(reqs);
            assert!(i == 0 || i == 1);
            assert_eq!((x, forwarded), (7, 1));
            assert!(big.iter().all(|&v| v == 5));
            Ok(())
        }
        _ => {
            let mut x = 0u8;
            w.recv_into(&mut x, 0, 3)?;
            w.send(&x, 1, 2)
        }
    });
}

#[test]
fn a_scoped_send_and_a_typed_send_complete_against_busy_receivers() {
    use rpar::Datatype;
    let column = rpar::TypeMap::vector(BIG, 1, 2, &u64::type_map())
        .expect("a valid vector")
        .commit();
    completes(|w| match w.rank() {
        0 => {
            let data = vec![5u64; 2 * BIG];
            w.scope(|s| {
                s.isend(&data[..BIG], 1, 1)?;
                Ok(())
            })?;
            w.send(rpar::Typed::new(&data, &column, 1), 1, 4)?;
            w.send(&1u8, 2, 3)
        }
        1 => {
            let (mut a, mut b) = (vec![0u64; BIG], vec![0u64; BIG]);
            let ra = w.irecv_into(&mut a[..], 0, 1)?;
            let rb = w.irecv_into(&mut b[..], 0, 4)?;
            let mut x = 0u8;
            w.recv_into(&mut x, 2, 2)?;
            rpar::wait_all(vec![ra, rb])?;
            assert!(a.iter().chain(&b).all(|&v| v == 5));
            Ok(())
        }
        _ => {
            let mut x = 0u8;
            w.recv_into(&mut x, 0, 3)?;
            w.send(&x, 1, 2)
        }
    });
}

#[test]
fn a_leaked_request_never_writes_its_freed_buffer() {
    // the request is forgotten and its buffer freed before the large message comes: the
    // message must be copied out, never into the freed buffer (valgrind in CI checks it)
    let report = rpar::Universe::new(2).run_report(|w| {
        if w.rank() == 0 {
            w.barrier()?;
            w.send(&vec![9u64; BIG][..], 1, 1)?;
            return w.barrier();
        }
        let mut buf = vec![0u64; BIG];
        std::mem::forget(w.irecv_into(&mut buf[..], 0, 1)?);
        drop(buf);
        w.barrier()?;
        // the message comes while this rank waits in the barrier (or the iprobe polls)
        w.iprobe(ANY_SOURCE, 99)?;
        w.barrier()
    });
    // rank 0's send completed (the message was taken); rank 1 never received it
    let report = report.expect("the run completes");
    assert!(!report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn completion_calls_on_several_requests_keep_mpi_indices() -> Result<()> {
    rpar::run(4, |w| {
        if w.rank() > 0 {
            w.recv::<u8>(0, 9)?; // rank 0's go: the requests are posted by then
            return w.send(&(w.rank() as u32), 0, 0);
        }
        // no active request: at once, MPI_UNDEFINED
        assert_eq!(rpar::wait_any(&mut [])?, None);
        assert_eq!(rpar::wait_some(&mut [])?, None);
        assert_eq!(rpar::test_any(&mut [])?, TestAny::NoneActive);
        assert_eq!(rpar::test_some(&mut [])?, None);
        assert_eq!(rpar::wait_all(Vec::new())?, vec![]);
        assert_eq!(rpar::test_all(&mut [])?, Some(vec![]));
        let mut got = [0u32; 3];
        let (a, rest) = got.split_at_mut(1);
        let (b, c) = rest.split_at_mut(1);
        let mut reqs = vec![
            w.irecv_into(&mut a[0], 1, 0)?,
            w.irecv_into(&mut b[0], 2, 0)?,
            w.irecv_into(&mut c[0], 3, 0)?,
        ];
        assert_eq!(rpar::test_any(&mut reqs)?, TestAny::NoneComplete);
        assert_eq!(rpar::test_some(&mut reqs)?, Some(vec![]));
        for r in 1..4 {
            w.send(&0u8, r, 9)?;
        }
        // each completion names the request's place in the list as given, and leaves it
        // inactive there: the sources say which was which
        let mut seen = Vec::new();
        let (i, st) = rpar::wait_any(&mut reqs)?.expect("three active");
        seen.push((i, st.source));
        while let Some(done) = rpar::wait_some(&mut reqs)? {
            assert!(!done.is_empty());
            seen.extend(done.iter().map(|(i, st)| (*i, st.source)));
        }
        seen.sort_unstable();
        assert_eq!(seen, [(0, 1), (1, 2), (2, 3)]);
        assert!(reqs.iter().all(rpar::Request::is_null));
        assert_eq!(rpar::wait_any(&mut reqs)?, None);
        // inactive requests complete at once with an empty status
        let is_empty =
            |s: &rpar::Status| (s.source, s.tag, s.count) == (ANY_SOURCE, rpar::ANY_TAG, 0);
        let statuses = rpar::test_all(&mut reqs)?.expect("inactive requests are complete");
        assert!(statuses.len() == 3 && statuses.iter().all(is_empty));
        assert!(is_empty(&reqs.pop().expect("three").wait()?));
        drop(reqs);
        assert_eq!(got, [1, 2, 3]);
        Ok(())
    })?;
    Ok(())
}
