//! Checks of the point-to-point calls beyond send and receive — `PROC_NULL`, the send modes,
//! persistent requests, cancel, matched probes — written once over a communicator, run
//! in-process by `tests/p2p_more.rs` and as MPI processes by `tests/mpi.rs`. Each takes any
//! number of ranks, 1 included, and panics with what differed.

use rpar::{
    Comm, Error, MatchedMessage, Persistent, Result, SendMode, Status, Typed, ANY_SOURCE, ANY_TAG,
    PROC_NULL,
};

/// `PROC_NULL` as the peer of every point-to-point call (MPI-4.0 §3.11, after MPICH's
/// test/mpi/pt2pt/proc_null.c and probenull.c): each completes at once, moves nothing, leaves
/// the receive buffer as it was, and says source `PROC_NULL`, tag `ANY_TAG`, count 0; bad tags
/// are still refused; a collective's root of `PROC_NULL` is no rank. Then a halo exchange along
/// a non-periodic line, the neighbours from `CartComm::shift`, against the sequential answer.
pub(crate) fn proc_null(world: &Comm) -> Result<()> {
    let null = Status::null();
    assert_eq!((null.source, null.tag, null.count), (PROC_NULL, ANY_TAG, 0));
    // blocking
    world.send(&[1u32, 2, 3][..], PROC_NULL, 5)?;
    world.send(vec![7u8; 1 << 16], PROC_NULL, 5)?; // an owned Vec
    world.send(&vec![1u64; 1 << 14][..], PROC_NULL, 5)?; // above the eager limit
    let mut buf = [9i32; 4];
    assert_eq!(world.recv_into(&mut buf[..], PROC_NULL, 5)?, null);
    assert_eq!(
        buf, [9; 4],
        "a receive from PROC_NULL left the buffer as it was"
    );
    assert_eq!(world.recv_into(&mut buf[..], PROC_NULL, ANY_TAG)?, null);
    let (v, st) = world.recv::<f64>(PROC_NULL, 0)?;
    assert!(v.is_empty());
    assert_eq!(st, null);
    // probes find an empty message at once
    let p = world.probe(PROC_NULL, 3)?;
    assert_eq!((p.status, p.bytes), (null, 0));
    let p = world
        .iprobe(PROC_NULL, ANY_TAG)?
        .expect("iprobe of PROC_NULL finds it at once");
    assert_eq!((p.status, p.bytes), (null, 0));
    // sendrecv with either side null, and both
    let (r, n) = (world.rank(), world.size());
    let right = (r + 1) % n;
    let left = (r + n - 1) % n;
    let mut x = u16::MAX;
    assert_eq!(
        world.sendrecv(&1u16, PROC_NULL, 0, &mut x, PROC_NULL, 0)?,
        null
    );
    assert_eq!(x, u16::MAX);
    world.send(&(r as u16), right, 11)?;
    let st = world.sendrecv(&1u16, PROC_NULL, 0, &mut x, left, 11)?;
    assert_eq!((st.source, st.count, x), (left, 1, left as u16));
    let st = world.sendrecv(&(r as u16), right, 12, &mut x, PROC_NULL, 12)?;
    assert_eq!((st, x), (null, left as u16));
    assert_eq!(world.recv::<u16>(left, 12)?.0, [left as u16]);
    let mut y = [r as u8; 40_000]; // sendrecv_replace's copying path too
    assert_eq!(
        world.sendrecv_replace(&mut y[..], PROC_NULL, 0, PROC_NULL, 0)?,
        null
    );
    assert!(y.iter().all(|&b| b == r as u8));
    // non-blocking: complete at once
    let mut z = [5u8; 3];
    let mut req = world.irecv_into(&mut z[..], PROC_NULL, 2)?;
    assert_eq!(req.test()?, Some(null));
    drop(req);
    let sent = world.isend(&[1.5f32; 4][..], PROC_NULL, 2)?;
    assert_eq!(sent.wait()?, null);
    let big = vec![3u8; 1 << 20];
    world.scope(|s| {
        let a = s.isend(&big[..], PROC_NULL, 4)?;
        let b = s.irecv_into(&mut z[..], PROC_NULL, 4)?;
        assert_eq!(rpar::wait_all(vec![a, b])?, [null, null]);
        Ok(())
    })?;
    assert_eq!(z, [5; 3]);
    // a derived datatype: the view is still checked, nothing moves
    let pair = rpar::TypeMap::contiguous(2, &<i32 as rpar::Datatype>::type_map())?.commit();
    let mut ints = [4i32; 6];
    world.send(Typed::new(&ints[..], &pair, 3), PROC_NULL, 1)?;
    assert_eq!(
        world.recv_into(Typed::new(&mut ints[..], &pair, 3), PROC_NULL, 1)?,
        null
    );
    assert_eq!(ints, [4; 6]);
    assert!(matches!(
        world.send(Typed::new(&ints[..], &pair, 4), PROC_NULL, 1),
        Err(Error::BufferOutOfBounds { .. })
    ));
    // tags are still checked, and PROC_NULL is not a rank for a collective
    assert!(matches!(
        world.send(&1u8, PROC_NULL, -3),
        Err(Error::InvalidTag { tag: -3, .. })
    ));
    assert!(matches!(
        world.recv_into(&mut x, PROC_NULL, -3),
        Err(Error::InvalidTag { .. })
    ));
    assert!(matches!(
        world.probe(PROC_NULL, -2),
        Err(Error::InvalidTag { .. })
    ));
    let mut v = [1u8];
    assert!(matches!(
        world.bcast(&mut v[..], PROC_NULL),
        Err(Error::RankOutOfRange { .. })
    ));
    nothing_left(world)?;
    halo_line(world)
}

/// Each rank holds a block of a line of cells; neighbours from `shift` (PROC_NULL at the two
/// ends) exchange one cell each way; the halos must be the neighbouring cells, the ends' outer
/// halos untouched.
fn halo_line(world: &Comm) -> Result<()> {
    let p = world.size();
    let line = rpar::CartComm::create(world, [p], [false], false)?.expect("p ranks, p places");
    let r = line.rank();
    let (left, right) = line.shift(0, 1)?;
    assert_eq!(left, if r == 0 { PROC_NULL } else { r - 1 });
    assert_eq!(right, if r + 1 == p { PROC_NULL } else { r + 1 });
    let block: Vec<i64> = (0..5).map(|i| (5 * r + i) as i64).collect();
    let mut halo = [-1i64; 2];
    line.sendrecv(&block[4], right, 0, &mut halo[0], left, 0)?;
    line.sendrecv(&block[0], left, 1, &mut halo[1], right, 1)?;
    let cell = |i: i64| if i < 0 || i >= 5 * p as i64 { -1 } else { i };
    let first = 5 * r as i64;
    assert_eq!(halo, [cell(first - 1), cell(first + 5)], "rank {r} of {p}");
    Ok(())
}

/// The send modes (MPI-4.0 §3.4, after MPICH's test/mpi/pt2pt sendrecv, bsend1, bsend2,
/// rsend and issend checks): data arrives intact in every mode; a synchronous send completes
/// only once matched; a ready send to a posted receive works; a buffered send needs an attached
/// buffer large enough for it, and attach/detach hand the buffer over and back. On both
/// transports (across MPI processes a synchronous send waits for the receiving process's
/// acknowledgement of the match: see `comm/modes.rs`).
pub(crate) fn send_modes(world: &Comm) -> Result<()> {
    let (r, n) = (world.rank(), world.size());
    let (right, left) = ((r + 1) % n, (r + n - 1) % n);
    // a ring in each mode, small and large
    for len in [1usize, 5000, 40_000] {
        let out: Vec<u32> = (0..len as u32).map(|i| i ^ r as u32).collect();
        let want: Vec<u32> = (0..len as u32).map(|i| i ^ left as u32).collect();
        let sent = world
            .using(SendMode::Synchronous)
            .isend(&out[..], right, 1)?;
        assert_eq!(world.recv::<u32>(left, 1)?.0, want, "issend of {len}");
        assert_eq!(sent.wait()?.count, len);
        world.scope(|s| {
            let sent = s.issend(&out[..], right, 2)?;
            assert_eq!(
                world.recv::<u32>(left, 2)?.0,
                want,
                "scoped issend of {len}"
            );
            sent.wait().map(drop)
        })?;
        // ssend ordered so that the ranks do not all wait at once: even ranks send first, odd
        // ones receive first (an odd ring's last rank, even, then waits for rank 0, which
        // completes once rank 1 has received)
        let mut got = vec![0u32; len];
        if r % 2 == 0 && right != r {
            world
                .using(SendMode::Synchronous)
                .send(&out[..], right, 3)?;
            world.recv_into(&mut got[..], left, 3)?;
        } else if right != r {
            world.recv_into(&mut got[..], left, 3)?;
            world
                .using(SendMode::Synchronous)
                .send(&out[..], right, 3)?;
        } else {
            let sent = world.using(SendMode::Synchronous).isend(&out[..], r, 3)?; // alone: to itself
            world.recv_into(&mut got[..], r, 3)?;
            sent.wait()?;
        }
        assert_eq!(got, want, "ssend of {len}");
        rpar::buffer_attach(vec![0; 4 * len + rpar::BSEND_OVERHEAD])?;
        world.using(SendMode::Buffered).send(&out[..], right, 4)?;
        assert_eq!(world.recv::<u32>(left, 4)?.0, want, "bsend of {len}");
        world
            .using(SendMode::Buffered)
            .isend(&out[..], right, 5)?
            .wait()?;
        assert_eq!(world.recv::<u32>(left, 5)?.0, want, "ibsend of {len}");
        assert_eq!(rpar::buffer_detach()?.len(), 4 * len + rpar::BSEND_OVERHEAD);
        // ready mode: the receive is posted, then a barrier tells the sender
        let mut got = vec![0u32; len];
        let req = world.irecv_into(&mut got[..], left, 6)?;
        world.barrier()?;
        world.using(SendMode::Ready).send(&out[..], right, 6)?;
        req.wait()?;
        assert_eq!(got, want, "rsend of {len}");
        let req = world.irecv_into(&mut got[..], left, 7)?;
        world.barrier()?;
        world
            .using(SendMode::Ready)
            .isend(&out[..], right, 7)?
            .wait()?;
        req.wait()?;
        assert_eq!(got, want, "irsend of {len}");
    }
    // a synchronous send is not complete before its receive is posted
    if n >= 2 {
        if r == 0 {
            let mut sent = world
                .using(SendMode::Synchronous)
                .isend(&[1u8, 2, 3][..], 1, 8)?;
            assert_eq!(sent.test()?, None, "issend complete before rank 1 received");
            world.send(&0u8, 1, 9)?; // now rank 1 receives
            assert_eq!(sent.wait()?.count, 3);
            world.scope(|s| {
                let mut sent = s.issend(&[4u8, 5][..], 1, 10)?;
                let early = sent.test()?;
                assert_eq!(early, None, "scoped issend complete before rank 1 received");
                world.send(&0u8, 1, 11)?; // now rank 1 receives
                assert_eq!(sent.wait()?.count, 2);
                Ok(())
            })?;
        } else if r == 1 {
            world.recv_into(&mut 0u8, 0, 9)?;
            assert_eq!(world.recv::<u8>(0, 8)?.0, [1, 2, 3]);
            world.recv_into(&mut 0u8, 0, 11)?;
            assert_eq!(world.recv::<u8>(0, 10)?.0, [4, 5]);
        }
    }
    // the buffered mode's errors (MPI_ERR_BUFFER), attach and detach
    let big = [0u64; 64];
    assert!(matches!(
        world.using(SendMode::Buffered).send(&big[..], right, 0),
        Err(Error::InvalidArgument { .. })
    ));
    rpar::buffer_attach(vec![0; 512 + rpar::BSEND_OVERHEAD - 1])?;
    assert!(matches!(
        world.using(SendMode::Buffered).send(&big[..], right, 0),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        rpar::buffer_attach(vec![0; 8]),
        Err(Error::InvalidArgument { .. })
    ));
    assert_eq!(rpar::buffer_detach()?.len(), 512 + rpar::BSEND_OVERHEAD - 1);
    assert!(matches!(
        rpar::buffer_detach(),
        Err(Error::InvalidArgument { .. })
    ));
    world
        .using(SendMode::Buffered)
        .send(&big[..], PROC_NULL, 0)?; // nothing is buffered for PROC_NULL
                                        // a dropped issend request still delivers (MPI_Request_free of an active send)
    drop(
        world
            .using(SendMode::Synchronous)
            .isend(&[r as u64; 10][..], right, 10)?,
    );
    assert_eq!(world.recv::<u64>(left, 10)?.0, [left as u64; 10]);
    nothing_left(world)?;
    Ok(())
}

/// Persistent requests (MPI-4.0 §3.9, after MPICH's test/mpi/pt2pt sendself, inactivereq and
/// startall checks): a ring of persistent sends and receives started several times, the data
/// changed between starts, in every send mode; to itself; with PROC_NULL; and the arguments
/// checked when the request is made.
pub(crate) fn persistent(world: &Comm) -> Result<()> {
    use rpar::SendMode::{Buffered, Ready, Standard, Synchronous};
    let (r, n) = (world.rank(), world.size());
    let (right, left) = ((r + 1) % n, (r + n - 1) % n);
    rpar::buffer_attach(vec![0; 8 * 1000 + rpar::BSEND_OVERHEAD])?;
    for kind in [Standard, Synchronous, Buffered, Ready] {
        for len in [1usize, 1000] {
            let mut out = vec![0i64; len];
            let mut inc = vec![0i64; len];
            let mut send = world.using(kind).send_init(&mut out[..], right, 3)?;
            let mut recv = Persistent::recv(world, &mut inc[..], left, 3)?;
            assert_eq!((send.mode(), recv.mode()), (Some(kind), None));
            for round in 0..4i64 {
                send.buffer_mut().iter_mut().enumerate().for_each(|(i, x)| {
                    *x = round * 1000 + 10 * r as i64 + i as i64;
                });
                let received = recv.start()?; // posted before any rank sends: rsend may go
                world.barrier()?;
                let sent = send.start()?;
                let st = received.wait()?;
                sent.wait()?;
                assert_eq!((st.source, st.tag, st.count), (left, 3, len));
                let want: Vec<i64> = (0..len as i64)
                    .map(|i| round * 1000 + 10 * left as i64 + i)
                    .collect();
                assert_eq!(recv.buffer(), &want[..], "{kind:?} of {len}, round {round}");
            }
        }
    }
    rpar::buffer_detach()?;
    // start_all, and a request to itself
    let mut mine = [r as u16; 2];
    let mut back = [0u16; 2];
    let mut to_self = Persistent::send(world, &mut mine[..], r, 4)?;
    let mut from_self = Persistent::recv(world, &mut back[..], r, 4)?;
    for _ in 0..3 {
        let requests = rpar::start_all([&mut from_self, &mut to_self])?;
        rpar::wait_all(requests)?;
        assert_eq!(from_self.buffer(), [r as u16; 2]);
        from_self.buffer_mut().fill(0);
    }
    // PROC_NULL: started, complete at once, the buffer untouched
    let mut keep = [7u8; 3];
    let mut null_recv = Persistent::recv(world, &mut keep[..], PROC_NULL, 0)?;
    assert_eq!(null_recv.start()?.wait()?, Status::null());
    assert_eq!(null_recv.buffer(), [7; 3]);
    let mut null_send = Persistent::send(world, &mut keep[..], PROC_NULL, 0)?;
    null_send.start()?.wait()?;
    // arguments are checked at init
    let mut x = [0u8];
    assert!(matches!(
        Persistent::send(world, &mut x[..], n, 0),
        Err(Error::RankOutOfRange { .. })
    ));
    assert!(matches!(
        Persistent::recv(world, &mut x[..], 0, -7),
        Err(Error::InvalidTag { .. })
    ));
    assert!(matches!(
        world
            .using(SendMode::Ready)
            .send_init(&mut x[..], PROC_NULL, -1),
        Err(Error::InvalidTag { .. })
    ));
    nothing_left(world)?;
    Ok(())
}

/// MPI_Cancel (MPI-4.0 §3.8.4, after MPICH's test/mpi/pt2pt rcancel and scancel checks): a
/// receive no message has matched is cancelled and receives nothing; a synchronous send no
/// receive has taken is cancelled and never arrives; a send that was copied at once, or one
/// already received, is not cancelled and arrives; a collective cannot be cancelled. Without
/// `in_process` the cancelled synchronous sends are left out: across MPI processes a send is
/// with MPI once started, and cannot be withdrawn.
pub(crate) fn cancel(world: &Comm, in_process: bool) -> Result<()> {
    let (r, n) = (world.rank(), world.size());
    let (right, left) = ((r + 1) % n, (r + n - 1) % n);
    // a receive nobody sends to
    let mut x = [7u32; 2];
    let mut req = world.irecv_into(&mut x[..], left, 20)?;
    req.cancel()?;
    let st = req.wait()?;
    assert!(st.is_cancelled());
    assert_eq!(x, [7, 7]);
    // a receive whose message had arrived: not cancelled
    world.send(&[r as u32; 2][..], right, 21)?;
    world.barrier()?;
    let mut req = world.irecv_into(&mut x[..], left, 21)?;
    req.cancel()?;
    let st = req.wait()?;
    assert!(!st.is_cancelled());
    assert_eq!((st.source, x), (left, [left as u32; 2]));
    // synchronous sends nobody receives, small and large: cancelled, never arrive
    for len in [3usize, 50_000].into_iter().filter(|_| in_process) {
        let mut sent = world
            .using(SendMode::Synchronous)
            .isend(&vec![1u8; len][..], right, 22)?;
        sent.cancel()?;
        assert!(sent.wait()?.is_cancelled(), "issend of {len}");
        let big = vec![2u8; len];
        world.scope(|s| {
            let mut sent = s.issend(&big[..], right, 23)?;
            sent.cancel()?;
            assert!(sent.wait()?.is_cancelled(), "scoped issend of {len}");
            Ok(())
        })?;
    }
    // a copied send completed when it started: cancelling it does nothing
    let mut sent = world.isend(&[5u8; 4][..], right, 24)?;
    sent.cancel()?;
    assert!(!sent.wait()?.is_cancelled());
    assert_eq!(world.recv::<u8>(left, 24)?.0, [5; 4]);
    // a synchronous send already received: not cancelled (on every transport)
    let mut sent = world
        .using(SendMode::Synchronous)
        .isend(&[6u8; 4][..], right, 25)?;
    assert_eq!(world.recv::<u8>(left, 25)?.0, [6; 4]);
    world.barrier()?;
    sent.cancel()?;
    assert!(!sent.wait()?.is_cancelled());
    // nothing cancelled arrives
    nothing_left(world)?;
    // a non-blocking collective cannot be cancelled
    world.scope(|s| {
        let mut b = s.ibarrier()?;
        assert!(matches!(b.cancel(), Err(Error::InvalidArgument { .. })));
        b.wait().map(drop)
    })?;
    Ok(())
}

/// Matched probes (MPI-4.0 §3.8.2, after MPICH's test/mpi/pt2pt mprobe checks): the message
/// a matched probe takes can be received only through it, in arrival order with the others;
/// `MatchedMessage::iprobe` finds nothing when nothing is there; a message dropped unreceived,
/// or refused as too large, goes back; PROC_NULL gives the empty message.
pub(crate) fn matched_probe(world: &Comm) -> Result<()> {
    let (r, n) = (world.rank(), world.size());
    let (right, left) = ((r + 1) % n, (r + n - 1) % n);
    assert!(MatchedMessage::iprobe(world, left, 30)?.is_none());
    world.barrier()?; // no rank sends before every rank has looked
    world.send(&[r as i32; 3][..], right, 30)?;
    world.send(&[r as i32 + 100; 5][..], right, 30)?;
    world.send(&vec![r as i32; 20_000][..], right, 31)?;
    let first = MatchedMessage::probe(world, left, 30)?;
    assert_eq!(
        (first.status().source, first.status().count, first.bytes()),
        (left, 3, 12)
    );
    // the second message is still receivable by an ordinary receive; the first is not
    assert_eq!(world.recv::<i32>(left, 30)?.0, [left as i32 + 100; 5]);
    let mut small = [0i32; 2];
    let err = first.recv_into(&mut small[..]).unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }));
    // refused: back in the queue, as is a matched message dropped unreceived
    let again = MatchedMessage::iprobe(world, left, 30)?.expect("the refused message went back");
    drop(again);
    let mut three = [0i32; 3];
    let st = MatchedMessage::probe(world, ANY_SOURCE, 30)?.recv_into(&mut three[..])?;
    assert_eq!((st.source, st.count, three), (left, 3, [left as i32; 3]));
    let (big, st) = MatchedMessage::probe(world, left, ANY_TAG)?.recv::<i32>()?;
    assert_eq!((big.len(), st.tag), (20_000, 31));
    // PROC_NULL
    let none = MatchedMessage::probe(world, PROC_NULL, 0)?;
    assert_eq!((none.status(), none.bytes()), (Status::null(), 0));
    assert_eq!(none.recv_into(&mut three[..])?, Status::null());
    assert_eq!(three, [left as i32; 3]);
    let (v, st) = MatchedMessage::iprobe(world, PROC_NULL, ANY_TAG)?
        .expect("at once")
        .recv::<u8>()?;
    assert!(v.is_empty() && st == Status::null());
    nothing_left(world)?;
    Ok(())
}

/// Every message of a check was received: once all ranks are done with it (a barrier), none
/// is left; and none of the next check's arrives before every rank has looked (a barrier).
fn nothing_left(world: &Comm) -> Result<()> {
    world.barrier()?;
    assert_eq!(
        world.iprobe(ANY_SOURCE, ANY_TAG)?,
        None,
        "a message left unreceived"
    );
    world.barrier()
}

/// MPI_Get_elements (MPI-4.0 §4.1.11, after MPICH's test/mpi/datatype get-elements checks):
/// the basic elements of a receive of a derived type, whole elements and a part of one, next to
/// MPI_Get_count's answer.
pub(crate) fn get_elements(world: &Comm) -> Result<()> {
    use rpar::{Datatype, TypeMap};
    let (r, n) = (world.rank(), world.size());
    let (right, left) = ((r + 1) % n, (r + n - 1) % n);
    let triple = TypeMap::contiguous(3, &i64::type_map())?.commit();
    for (sent, want_count, want_elements) in [
        (6usize, Some(2), 6),
        (7, None, 7),
        (1, None, 1),
        (0, Some(0), 0),
    ] {
        world.send(&vec![r as i64; sent][..], right, 40)?;
        let mut buf = [0i64; 9];
        let st = world.recv_into(Typed::new(&mut buf[..], &triple, 3), left, 40)?;
        assert_eq!(st.get_count(), want_count, "{sent} i64 as triples");
        assert_eq!(
            st.get_elements(&triple),
            want_elements,
            "{sent} i64 as triples"
        );
    }
    // a strided type: the basic elements are those of the type map, not of the buffer
    let every_other = TypeMap::vector(2, 1, 2, &i64::type_map())?.commit();
    world.send(&[r as i64; 3][..], right, 41)?;
    let mut buf = [0i64; 8];
    let st = world.recv_into(Typed::new(&mut buf[..], &every_other, 2), left, 41)?;
    assert_eq!((st.get_count(), st.get_elements(&every_other)), (None, 3));
    // extent 3 (MPI's vector): the third value starts the second element, at 3
    let l = left as i64;
    assert_eq!(buf[..6], [l, 0, l, l, 0, 0]);
    nothing_left(world)
}

/// Receiving as MPI_PACKED (MPI-4.0 §4.2, after MPICH's test/mpi/datatype pack checks): a
/// message of any type, plain or padded or derived, small or large, received as packed bytes is
/// what packing the sender's data gives; too small a buffer refuses it and it stays queued.
pub(crate) fn packed(world: &Comm) -> Result<()> {
    use rpar::{Datatype, Packed, TypeMap};
    let (r, n) = (world.rank(), world.size());
    let (right, left) = ((r + 1) % n, (r + n - 1) % n);
    let tuples: Vec<(u8, f64)> = (0..5).map(|i| (r as u8 + i, f64::from(i) / 2.0)).collect();
    let theirs: Vec<(u8, f64)> = (0..5)
        .map(|i| (left as u8 + i, f64::from(i) / 2.0))
        .collect();
    let big: Vec<u32> = (0..20_000).map(|i| i ^ r as u32).collect();
    let their_big: Vec<u32> = (0..20_000).map(|i| i ^ left as u32).collect();
    let column = TypeMap::vector(4, 1, 3, &f64::type_map())?.commit();
    let grid: Vec<f64> = (0..12).map(|i| f64::from(i) + r as f64).collect();
    let their_grid: Vec<f64> = (0..12).map(|i| f64::from(i) + left as f64).collect();
    world.send(&tuples[..], right, 50)?;
    world.send(&big[..], right, 51)?;
    world.send(Typed::new(&grid[..], &column, 1), right, 52)?;
    let pair = <(u8, f64)>::type_map().commit();
    let u32s = <u32>::type_map().commit();
    let mut bytes = vec![0u8; 100_000];
    // too small: refused, still there
    let err = world
        .recv_into(Packed(&mut bytes[..10]), left, 50)
        .unwrap_err();
    assert!(matches!(err, Error::Truncated { needed: 45, .. }), "{err}");
    let st = world.recv_into(Packed(&mut bytes[..]), left, 50)?;
    assert_eq!(&bytes[..st.count], &pair.pack_to_vec(&theirs[..], 5)?[..]);
    let st = world.recv_into(Packed(&mut bytes[..]), left, 51)?;
    assert_eq!(
        &bytes[..st.count],
        &u32s.pack_to_vec(&their_big[..], 20_000)?[..]
    );
    let st = world.recv_into(Packed(&mut bytes[..]), left, 52)?;
    assert_eq!(
        &bytes[..st.count],
        &column.pack_to_vec(&their_grid[..], 1)?[..]
    );
    assert_eq!(
        world.recv_into(Packed(&mut bytes[..]), PROC_NULL, 0)?,
        Status::null()
    );
    nothing_left(world)
}
