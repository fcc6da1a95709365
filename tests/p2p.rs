//! Point-to-point messaging through the public API: matching, ordering, wildcards, probe,
//! truncation, type checks, non-blocking requests and scopes, for several rank counts.

use rpar::{Error, Result, ANY_SOURCE, ANY_TAG};
use std::time::Duration;

const RANK_COUNTS: [usize; 5] = [1, 2, 3, 8, 64];

#[test]
fn ring_exchange_for_every_rank_count() -> Result<()> {
    for &p in &RANK_COUNTS {
        let got = rpar::run(p, |w| {
            let (r, p) = (w.rank(), w.size());
            let mut from_left = [0u64; 3];
            w.sendrecv(
                &[r as u64, 2 * r as u64, 3 * r as u64][..],
                (r + 1) % p,
                5,
                &mut from_left[..],
                (r + p - 1) % p,
                5,
            )?;
            Ok(from_left)
        })?;
        for (r, v) in got.iter().enumerate() {
            let left = ((r + p - 1) % p) as u64;
            assert_eq!(*v, [left, 2 * left, 3 * left], "p = {p}, rank {r}");
        }
    }
    Ok(())
}

#[test]
fn all_to_root_with_any_source_sees_every_rank_once() -> Result<()> {
    for &p in &RANK_COUNTS {
        let got = rpar::run(p, |w| {
            if w.rank() != 0 {
                w.send(&(w.rank() as u32 * 10), 0, w.rank() as i32)?;
                return Ok(Vec::new());
            }
            let mut seen = Vec::new();
            for _ in 1..w.size() {
                let (v, st) = w.recv::<u32>(ANY_SOURCE, ANY_TAG)?;
                assert_eq!(v, [st.source as u32 * 10]);
                assert_eq!(st.tag, st.source as i32);
                seen.push(st.source);
            }
            seen.sort_unstable();
            Ok(seen)
        })?;
        assert_eq!(got[0], (1..p).collect::<Vec<_>>(), "p = {p}");
    }
    Ok(())
}

#[test]
fn messages_between_a_pair_do_not_overtake() -> Result<()> {
    rpar::run(2, |w| {
        const N: u32 = 2000;
        if w.rank() == 0 {
            for i in 0..N {
                // mixed sizes: inline, eager heap, and rendezvous payloads
                let len = [1usize, 100, 20_000][i as usize % 3];
                w.send(&vec![i; len][..], 1, 0)?;
            }
        } else {
            for i in 0..N {
                let (v, _) = w.recv::<u32>(0, 0)?;
                assert!(v.iter().all(|&x| x == i), "message {i} out of order");
            }
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn tags_select_messages_and_unmatched_ones_wait_in_order() -> Result<()> {
    rpar::run(2, |w| {
        if w.rank() == 0 {
            w.send(&1u8, 1, 10)?;
            w.send(&2u8, 1, 20)?;
            w.send(&3u8, 1, 10)?;
        } else {
            assert_eq!(w.recv::<u8>(0, 20)?.0, [2]);
            assert_eq!(w.recv::<u8>(0, 10)?.0, [1]);
            assert_eq!(w.recv::<u8>(ANY_SOURCE, ANY_TAG)?.0, [3]);
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn probe_then_receive_with_the_probed_size() -> Result<()> {
    rpar::run(3, |w| {
        if w.rank() > 0 {
            w.send(&vec![w.rank() as i64; w.rank() * 7][..], 0, 4)?;
            return Ok(());
        }
        assert!(w.iprobe(2, 99)?.is_none());
        for _ in 0..2 {
            let p = w.probe(ANY_SOURCE, 4)?;
            assert_eq!(p.status.count, p.status.source * 7);
            assert_eq!(p.bytes, p.status.count * 8);
            let mut buf = vec![0i64; p.status.count];
            let st = w.recv_into(&mut buf, p.status.source, 4)?;
            assert_eq!(st, p.status);
            assert!(buf.iter().all(|&x| x == p.status.source as i64));
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn send_to_self_works_small_and_large() -> Result<()> {
    rpar::run(1, |w| {
        w.send(&42u16, 0, 0)?;
        assert_eq!(w.recv::<u16>(0, 0)?.0, [42]);
        // a large blocking send to self completes (the rank copies its own rendezvous out)
        let big = vec![7u8; 1 << 20];
        w.send(&big[..], 0, 1)?;
        let (got, st) = w.recv::<u8>(0, 1)?;
        assert_eq!((got.len(), st.count), (1 << 20, 1 << 20));
        Ok(())
    })?;
    Ok(())
}

#[test]
fn truncation_is_an_error_and_the_message_survives() -> Result<()> {
    rpar::run(2, |w| {
        for len in [3usize, 1000, 100_000] {
            if w.rank() == 0 {
                w.send(&vec![1.25f32; len][..], 1, 0)?;
            } else {
                let mut small = vec![0f32; len - 1];
                match w.recv_into(&mut small, 0, 0) {
                    Err(Error::Truncated {
                        needed, capacity, ..
                    }) => assert_eq!((needed, capacity), (4 * len, 4 * (len - 1))),
                    other => panic!("expected truncation, got {other:?}"),
                }
                let mut big = vec![0f32; len + 5];
                let st = w.recv_into(&mut big, 0, 0)?;
                assert_eq!(st.count, len);
                assert!(
                    big[..len].iter().all(|&x| x == 1.25) && big[len..].iter().all(|&x| x == 0.0)
                );
            }
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn element_type_mismatch_is_an_error_naming_both_types() -> Result<()> {
    rpar::run(2, |w| {
        if w.rank() == 0 {
            w.send(&[1i32, 2][..], 1, 0)?;
        } else {
            let err = w.recv::<f32>(0, 0).unwrap_err();
            let text = err.to_string();
            assert!(
                matches!(err, Error::TypeMismatch { source_rank: 0, .. }),
                "{err:?}"
            );
            assert!(text.contains("i32") && text.contains("f32"), "{text}");
            // not lost either
            assert_eq!(w.recv::<i32>(0, 0)?.0, [1, 2]);
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn equal_type_signatures_match_across_rust_types() -> Result<()> {
    rpar::run(2, |w| {
        if w.rank() == 0 {
            w.send(&[[1.0f64, 2.0], [3.0, 4.0], [5.0, 6.0]][..], 1, 0)?;
        } else {
            let (flat, st) = w.recv::<f64>(0, 0)?;
            assert_eq!((flat, st.count), (vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 6));
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn an_owned_vec_moves_without_a_copy() -> Result<()> {
    let addresses = rpar::run(2, |w| {
        if w.rank() == 0 {
            let v = vec![9u64; 1 << 18];
            let addr = v.as_ptr() as usize;
            w.send(v, 1, 0)?;
            Ok(addr)
        } else {
            let (v, _) = w.recv::<u64>(0, 0)?;
            assert!(v.iter().all(|&x| x == 9));
            Ok(v.as_ptr() as usize)
        }
    })?;
    assert_eq!(
        addresses[0], addresses[1],
        "the receiver got the sender's allocation"
    );
    Ok(())
}

#[test]
fn rank_and_tag_arguments_are_checked() -> Result<()> {
    rpar::run(2, |w| {
        assert!(matches!(
            w.send(&1u8, 2, 0),
            Err(Error::RankOutOfRange { rank: 2, size: 2 })
        ));
        assert!(matches!(
            w.send(&1u8, 0, -3),
            Err(Error::InvalidTag { tag: -3, .. })
        ));
        assert!(matches!(
            w.recv::<u8>(7, 0),
            Err(Error::RankOutOfRange { rank: 7, .. })
        ));
        assert!(matches!(w.recv::<u8>(0, -2), Err(Error::InvalidTag { .. })));
        assert!(matches!(
            w.probe(5, ANY_TAG),
            Err(Error::RankOutOfRange { .. })
        ));
        Ok(())
    })?;
    Ok(())
}

#[test]
fn large_head_to_head_blocking_sends_complete() -> Result<()> {
    // Two ranks that both send 4 MiB before receiving deadlock in MPI; rpar copies the peer's
    // rendezvous out while blocked, so the exchange completes.
    rpar::run(2, |w| {
        let other = 1 - w.rank();
        let out = vec![w.rank() as u32; 1 << 20];
        w.send(&out[..], other, 0)?;
        let (got, _) = w.recv::<u32>(other, 0)?;
        assert!(got.iter().all(|&x| x == other as u32));
        Ok(())
    })?;
    Ok(())
}

/// Bytes that say where they are and whose they are: a piece copied to the wrong place, twice,
/// or not at all shows.
fn pattern(len: usize, seed: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i * 31 + i / 65536 * 7 + seed) as u8)
        .collect()
}

#[test]
fn large_copies_shared_with_the_waiting_sender_arrive_whole() -> Result<()> {
    // From 256 KiB on, the receiver and a sender waiting for its rendezvous copy 64 KiB pieces
    // each; sizes around the threshold and not a whole number of pieces, in every way a large
    // borrowed send is received: into a buffer, as a new Vec, head to head, several sends in
    // flight from one scope, and with a sender that is busy (not helping) while it is copied.
    let sizes = [
        (256 << 10) - 1,
        256 << 10,
        (256 << 10) + 1,
        (1 << 20) + 13,
        (4 << 20) - 7,
    ];
    rpar::run(2, |w| {
        let (me, other) = (w.rank(), 1 - w.rank());
        for (k, &len) in sizes.iter().enumerate() {
            let mine = pattern(len, 2 * k + me);
            let theirs = pattern(len, 2 * k + other);
            // into a buffer, the sender blocked in `send`
            let mut got = vec![0u8; len];
            if me == 0 {
                w.send(&mine[..], 1, 1)?;
            } else {
                w.recv_into(&mut got[..], 0, 1)?;
                assert!(got == theirs, "recv_into of {len} bytes");
            }
            // as a new Vec, head to head (each copies the other's offer out while it waits)
            w.send(&mine[..], other, 2)?;
            let (v, st) = w.recv::<u8>(other, 2)?;
            assert_eq!(st.count, len);
            assert!(v == theirs, "recv of {len} bytes head to head");
            // three sends in flight from one scope, received in order into one buffer
            if me == 0 {
                w.scope(|s| {
                    for _ in 0..3 {
                        s.isend(&mine[..], 1, 3)?;
                    }
                    Ok(())
                })?;
            } else {
                for _ in 0..3 {
                    got.fill(0);
                    w.recv_into(&mut got[..], 0, 3)?;
                    assert!(got == theirs, "scoped send of {len} bytes");
                }
            }
            // a sender busy elsewhere while it is received: the receiver copies every piece
            if me == 0 {
                w.scope(|s| {
                    s.isend(&mine[..], 1, 4)?;
                    std::thread::sleep(Duration::from_millis(20));
                    Ok(())
                })?;
            } else {
                got.fill(0);
                w.recv_into(&mut got[..], 0, 4)?;
                assert!(got == theirs, "busy sender, {len} bytes");
            }
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn nonblocking_requests_wait_test_and_any() -> Result<()> {
    rpar::run(4, |w| {
        if w.rank() == 0 {
            let mut bufs = vec![[0u32; 2]; 3];
            let mut reqs = Vec::new();
            for (i, b) in bufs.iter_mut().enumerate() {
                reqs.push(w.irecv_into(&mut b[..], i + 1, 0)?);
            }
            let mut seen = Vec::new();
            while let Some((i, st)) = rpar::wait_any(&mut reqs)? {
                assert_eq!(
                    i + 1,
                    st.source,
                    "the index is the request's place in the list"
                );
                seen.push(st.source);
            }
            drop(reqs);
            seen.sort_unstable();
            assert_eq!(seen, [1, 2, 3]);
            assert_eq!(bufs, [[1, 1], [2, 2], [3, 3]]);
            // test_all on requests that complete later
            let mut a = [0u8; 1];
            let mut b = [0u8; 1];
            let mut reqs = vec![
                w.irecv_into(&mut a[..], 1, 1)?,
                w.irecv_into(&mut b[..], 2, 1)?,
            ];
            w.barrier()?;
            let statuses = loop {
                if let Some(s) = rpar::test_all(&mut reqs)? {
                    break s;
                }
                std::thread::yield_now();
            };
            drop(reqs);
            assert_eq!((statuses.len(), a, b), (2, [1], [2]));
        } else {
            let r = w.isend(&[w.rank() as u32; 2][..], 0, 0)?;
            r.wait()?;
            if w.rank() < 3 {
                w.isend(vec![w.rank() as u8], 0, 1)?.wait()?;
            }
            w.barrier()?;
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn irecv_posted_first_gets_the_first_message() -> Result<()> {
    rpar::run(2, |w| {
        if w.rank() == 0 {
            w.barrier()?;
            w.send(&1u8, 1, 0)?;
            w.send(&2u8, 1, 0)?;
        } else {
            let mut first = [0u8];
            let req = w.irecv_into(&mut first[..], 0, 0)?;
            w.barrier()?;
            // a blocking receive posted later must not steal the irecv's message
            let (second, _) = w.recv::<u8>(0, 0)?;
            req.wait()?;
            assert_eq!((first[0], second[0]), (1, 2));
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn a_dropped_receive_request_gives_its_message_back() -> Result<()> {
    rpar::run(2, |w| {
        if w.rank() == 0 {
            w.send(&5u8, 1, 0)?;
            w.send(&6u8, 1, 0)?;
            w.barrier()?;
        } else {
            w.barrier()?;
            let (mut a, mut b) = ([0u8], [0u8]);
            let ra = w.irecv_into(&mut a[..], 0, 0)?; // claims 5
            let rb = w.irecv_into(&mut b[..], 0, 0)?; // claims 6
            drop(ra); // cancelled: 5 goes back, still first in arrival order
            drop(rb); // 6 goes back behind it
            let (v, _) = w.recv::<u8>(0, 0)?;
            assert_eq!(v, [5]);
            let mut c = [0u8];
            let leaked = w.irecv_into(&mut c[..], 0, 0)?; // claims 6
            std::mem::forget(leaked); // leaking a request is safe: it never writes later
            c[0] = 1; // the buffer is ours again
            assert!(w.iprobe(0, 0)?.is_none()); // 6 stays claimed by the leaked request
            assert_eq!(c, [1]);
        }
        Ok(())
    })?;
    Ok(())
}

#[test]
fn scoped_isend_exchanges_large_buffers_without_copies() -> Result<()> {
    for p in [2usize, 3, 8] {
        rpar::run(p, |w| {
            let (r, p) = (w.rank(), w.size());
            let out: Vec<Vec<u64>> = (0..p).map(|d| vec![(r * 100 + d) as u64; 50_000]).collect();
            let mut inc = vec![vec![0u64; 50_000]; p];
            w.scope(|s| {
                let mut reqs = Vec::new();
                for (src, buf) in inc.iter_mut().enumerate() {
                    reqs.push(s.irecv_into(&mut buf[..], src, 3)?);
                }
                for (d, buf) in out.iter().enumerate() {
                    s.isend(&buf[..], d, 3)?;
                }
                rpar::wait_all(reqs)?;
                Ok(())
            })?;
            for (src, buf) in inc.iter().enumerate() {
                assert!(buf.iter().all(|&x| x == (src * 100 + r) as u64));
            }
            Ok(())
        })?;
    }
    Ok(())
}

#[test]
fn sendrecv_replace_swaps_with_the_neighbour() -> Result<()> {
    for len in [1usize, 100, 100_000] {
        let got = rpar::run(3, |w| {
            let (r, p) = (w.rank(), w.size());
            let mut buf = vec![r as i16; len];
            w.sendrecv_replace(&mut buf, (r + 1) % p, 0, (r + p - 1) % p, 0)?;
            Ok(buf)
        })?;
        for (r, buf) in got.iter().enumerate() {
            assert!(buf.iter().all(|&x| x == ((r + 2) % 3) as i16), "len {len}");
        }
    }
    Ok(())
}

#[test]
fn a_rendezvous_to_a_rank_that_finished_is_an_error_not_a_hang() {
    let started = std::time::Instant::now();
    let err = rpar::run(2, |w| {
        if w.rank() == 0 {
            std::thread::sleep(Duration::from_millis(50));
            w.send(&vec![0u8; 1 << 20][..], 1, 0)?;
        }
        Ok(())
    })
    .unwrap_err();
    assert!(matches!(err, Error::RankFailed { rank: 0, .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}
