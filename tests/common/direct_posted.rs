//! Non-blocking receives of a scope that MPI matches itself, straight into their buffers
//! (`transport/endpoint/direct.rs`), checked where they can go wrong: a window of them filled
//! in order, the class changing under a posted window (its marker reaches one of them, and the
//! ones behind it take the channel's later messages the ordinary way), a wait for any of
//! several, a message that reached a request dropped, cancelled or leaked before its wait (it
//! stays receivable, in order), and large messages (above the 16 KiB that go directly) into a
//! window the ordinary way. Between ranks 0 and 1 of the MPI transport (in-process, a
//! leaked request keeps its message).

use rpar::{Comm, Result};

/// Rank 0 sends, rank 1 receives (the others only join the barriers).
pub(crate) fn posted_direct(world: &Comm) -> Result<()> {
    if world.size() < 2 {
        return Ok(());
    }
    let world = &world.dup()?; // channels no earlier check used
    let barriers = match world.rank() {
        0 => send_side(world)?,
        1 => receive_side(world)?,
        _ => BARRIERS,
    };
    for _ in 0..barriers {
        world.barrier()?;
    }
    Ok(())
}

/// How many barriers each side takes part in.
const BARRIERS: usize = 15;

/// How many rounds of windows (the first one's receives cannot be direct: no message of the
/// channel has defined its class yet).
const ROUNDS: u64 = 4;

/// The receives of a window.
const WINDOW: usize = 8;

/// 160 KB of `u64`: a large message, sent straight from its buffer.
const BIG: usize = 20_000;

fn send_side(world: &Comm) -> Result<usize> {
    // windows of messages, each window posted before it is sent
    for round in 0..ROUNDS {
        world.barrier()?;
        for i in 0..WINDOW as u64 {
            world.send(&[round, i, round + i][..], 1, 80)?;
        }
    }
    // a class to post a window on, then the class changing under it: a larger count, then
    // another type
    world.send(&[1u64, 2][..], 1, 81)?;
    world.barrier()?;
    world.send(&[3u64, 4][..], 1, 81)?;
    world.send(&[5u64; 5][..], 1, 81)?;
    world.send(&[6u64; 5][..], 1, 81)?;
    world.send(&[8u64; 5][..], 1, 81)?;
    world.send(&[7.5f64][..], 1, 81)?;
    world.send(&[0u8][..], 1, 88)?;
    world.barrier()?;
    // two channels, their messages in the order rank 1 asks for them
    for tag in [82, 83] {
        world.send(&[0u32][..], 1, tag)?;
    }
    world.barrier()?;
    world.send(&[83u32][..], 1, 83)?;
    world.recv_into(&mut [0u8][..], 1, 82)?;
    world.send(&[82u32][..], 1, 82)?;
    // messages that reach requests dropped, leaked or cancelled before their wait
    world.send(&[0i64][..], 1, 84)?;
    world.barrier()?;
    world.send(&[5i64][..], 1, 84)?;
    world.send(&[6i64][..], 1, 84)?;
    world.send(&[0u8][..], 1, 89)?;
    world.barrier()?;
    world.send(&[0i64][..], 1, 85)?;
    world.barrier()?;
    world.send(&[9i64][..], 1, 85)?;
    world.barrier()?;
    world.barrier()?;
    world.send(&[11i64][..], 1, 85)?;
    world.send(&[0i64][..], 1, 90)?;
    world.barrier()?;
    world.send(&[1i64][..], 1, 90)?;
    world.send(&[2i64][..], 1, 90)?;
    world.barrier()?;
    // large messages into a window, and one that waits for its receive while rank 1 waits
    // in a direct one
    world.send(&vec![0u64; BIG][..], 1, 86)?;
    world.barrier()?;
    for i in 1..=3u64 {
        world.send(&vec![i; BIG][..], 1, 86)?;
    }
    world.send(&vec![4u64; BIG][..], 1, 87)?;
    world.send(&[5u64][..], 1, 86)?;
    Ok(0)
}

fn receive_side(world: &Comm) -> Result<usize> {
    let mut window = [[0u64; 4]; WINDOW];
    for round in 0..ROUNDS {
        let statuses = world.scope(|s| {
            let posted = window
                .iter_mut()
                .map(|buf| s.irecv_into(&mut buf[..], 0, 80))
                .collect::<Result<Vec<_>>>()?;
            world.barrier()?;
            rpar::wait_all(posted)
        })?;
        for (i, (buf, st)) in window.iter().zip(&statuses).enumerate() {
            let i = i as u64;
            let want = [round, i, round + i, 0];
            super::check(
                "a window of receives",
                (*buf, st.count, st.tag),
                (want, 3, 80),
            );
        }
    }

    let mut first = [0u64; 2];
    world.recv_into(&mut first[..], 0, 81)?;
    let mut bufs = [[0u64; 8]; 4];
    let mut mismatch = [0u64; 8];
    let (counts, other) = world.scope(|s| {
        let posted = bufs
            .iter_mut()
            .map(|buf| s.irecv_into(&mut buf[..], 0, 81))
            .collect::<Result<Vec<_>>>()?;
        let wrong = s.irecv_into(&mut mismatch[..], 0, 81)?;
        world.barrier()?;
        world.barrier()?; // rank 0 sent meanwhile
                          // sent after the others, the first of its channel (not received directly): rpar files
                          // them all before it while the receives still wait in MPI, the marker in one of them
        world.recv::<u8>(0, 88)?;
        let counts = rpar::wait_all(posted)?;
        Ok((counts, wrong.wait()))
    })?;
    let got: Vec<(u64, usize)> = bufs
        .iter()
        .zip(&counts)
        .map(|(b, s)| (b[0], s.count))
        .collect();
    super::check(
        "a window across a growth",
        got,
        vec![(3, 2), (5, 5), (6, 5), (8, 5)],
    );
    let err = other.expect_err("an f64 into a u64 buffer");
    assert!(matches!(err, rpar::Error::TypeMismatch { .. }), "{err}");
    super::check(
        "the other type, kept",
        world.recv::<f64>(0, 81)?.0,
        vec![7.5],
    );

    let (mut a, mut b) = ([0u32; 1], [0u32; 1]);
    world.recv_into(&mut a[..], 0, 82)?;
    world.recv_into(&mut b[..], 0, 83)?;
    world.scope(|s| {
        let mut posted = [
            s.irecv_into(&mut a[..], 0, 82)?,
            s.irecv_into(&mut b[..], 0, 83)?,
        ];
        world.barrier()?;
        let (i, st) = rpar::wait_any(&mut posted)?.expect("two requests");
        super::check("the first to come", (i, st.tag), (1, 83));
        world.send(&[0u8][..], 0, 82)?;
        let (i, st) = rpar::wait_any(&mut posted)?.expect("one request");
        super::check("then the other", (i, st.tag), (0, 82));
        Ok(())
    })?;
    super::check("both", (a, b), ([82], [83]));

    let mut one = [0i64; 2];
    world.recv_into(&mut one[..1], 0, 84)?;
    world.scope(|s| {
        let dropped = s.irecv_into(&mut one[..], 0, 84)?;
        world.barrier()?;
        world.barrier()?; // rank 0 sent meanwhile
                          // as above: the second message is filed, and the first's place is before it
        world.recv::<u8>(0, 89)?;
        drop(dropped);
        Ok(())
    })?;
    super::check(
        "a dropped request's message",
        world.recv::<i64>(0, 84)?.0,
        vec![5],
    );
    super::check("the one after it", world.recv::<i64>(0, 84)?.0, vec![6]);
    world.recv_into(&mut one[..1], 0, 85)?;
    world.scope(|s| {
        std::mem::forget(s.irecv_into(&mut one[..], 0, 85)?);
        world.barrier()?;
        world.barrier()?; // rank 0 sent meanwhile
        Ok(())
    })?;
    super::check(
        "a leaked request's message",
        world.recv::<i64>(0, 85)?.0,
        vec![9],
    );
    world.scope(|s| {
        let mut cancelled = s.irecv_into(&mut one[..], 0, 85)?;
        cancelled.cancel()?;
        assert!(cancelled.wait()?.is_cancelled(), "nothing had come");
        world.barrier()?;
        Ok(())
    })?;
    let st = world.recv_into(&mut one[..], 0, 85)?;
    super::check("after a cancelled receive", (one[0], st.count), (11, 1));
    // two receives that both took their messages, the second cancelled (too late) and both
    // dropped: the messages go back in the order they came
    let (mut first, mut second) = ([0i64], [0i64]);
    world.recv_into(&mut first[..], 0, 90)?;
    world.scope(|s| {
        let taken_first = s.irecv_into(&mut first[..], 0, 90)?;
        let mut taken_second = s.irecv_into(&mut second[..], 0, 90)?;
        world.barrier()?;
        // rank 0 sends both meanwhile; no rpar call here tests the receives, so the cancel is
        // the first to find the second's message (a barrier's polling would find the first's
        // first)
        std::thread::sleep(std::time::Duration::from_millis(50));
        for _ in 0..100 {
            // passes of MPI's progress engine (some MPIs match one arrival a pass), which
            // match both messages to the receives without rpar testing them
            assert!(world.iprobe(0, 91)?.is_none());
        }
        taken_second.cancel()?;
        drop(taken_second);
        drop(taken_first);
        world.barrier()
    })?;
    let got = [world.recv::<i64>(0, 90)?.0, world.recv::<i64>(0, 90)?.0];
    super::check("two put back", got, [vec![1], vec![2]]);

    let mut large = vec![vec![0u64; BIG]; 4];
    world.recv_into(&mut large[0][..], 0, 86)?;
    let mut small = [0u64; 1];
    world.scope(|s| {
        let mut posted = Vec::new();
        for buf in &mut large[1..] {
            posted.push(s.irecv_into(&mut buf[..], 0, 86)?);
        }
        posted.push(s.irecv_into(&mut small[..], 0, 86)?);
        world.barrier()?;
        // the message on tag 87 waits for this rank while it waits for the last of these
        let last = posted.pop().expect("posted");
        super::check("after a large one", last.wait()?.count, 1);
        rpar::wait_all(posted).map(drop)
    })?;
    for (i, buf) in large.iter().enumerate().skip(1) {
        assert!(buf.iter().all(|&x| x == i as u64), "large message {i}");
    }
    super::check("the last", small, [5]);
    super::check("the one apart", world.recv::<u64>(0, 87)?.0, vec![4; BIG]);
    Ok(0)
}
