//! Checks of the point-to-point calls beyond send and receive — `PROC_NULL`, the send modes,
//! persistent requests, cancel, matched probes — written once over a communicator, run
//! in-process by `tests/p2p_more.rs` and as MPI processes by `tests/mpi.rs`. Each takes any
//! number of ranks, 1 included, and panics with what differed.

use rpar::{Comm, Error, Result, Status, Typed, ANY_SOURCE, ANY_TAG, PROC_NULL};

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
    // nothing of the above is left to receive
    world.barrier()?;
    assert_eq!(world.iprobe(ANY_SOURCE, ANY_TAG)?, None);
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
