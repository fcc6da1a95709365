//! Sending and receiving with committed derived datatypes: eager and rendezvous sizes,
//! interoperation with plain sends and receives, MPI's signature rule, bounds checks.

use rpar::{Datatype, Error, TypeMap};

#[path = "common/reordered.rs"]
mod reordered;
use reordered::{assert_reordered, Reordered, ReorderedChar};

fn f64s() -> TypeMap {
    f64::type_map()
}

/// Column `c` of an `n x n` row-major matrix of f64, as a committed vector type.
fn column(n: usize) -> rpar::CommittedType {
    TypeMap::vector(n, 1, n as isize, &f64s()).unwrap().commit()
}

fn matrix(n: usize) -> Vec<f64> {
    (0..n * n).map(|i| i as f64).collect()
}

#[test]
fn columns_travel_between_typed_layouts_at_eager_and_rendezvous_sizes() {
    for n in [4usize, 8, 100, 300] {
        // 300 x 300: a column is 2400 bytes, but 8 columns at once are a rendezvous
        let got = rpar::run(2, move |world| {
            let col = column(n);
            let cols = TypeMap::vector(n, 8.min(n), n as isize, &f64s())?.commit();
            if world.rank() == 0 {
                let m = matrix(n);
                world.send(rpar::Typed::new(&m[1..], &col, 1), 1, 0)?;
                world.send(rpar::Typed::new(&m, &cols, 1), 1, 1)?;
                Ok((vec![], vec![]))
            } else {
                let mut a = vec![-1.0; n * n];
                world.recv_into(rpar::Typed::new(&mut a[2..], &col, 1), 0, 0)?; // into column 2
                let mut b = vec![-1.0; n * n];
                let st = world.recv_into(rpar::Typed::new(&mut b, &cols, 1), 0, 1)?;
                assert_eq!(st.count, 1);
                Ok((a, b))
            }
        })
        .unwrap();
        let (a, b) = &got[1];
        let m = matrix(n);
        for r in 0..n {
            for c in 0..n {
                let want_a = if c == 2 { m[r * n + 1] } else { -1.0 };
                assert_eq!(a[r * n + c], want_a, "n {n}: column at ({r}, {c})");
                let want_b = if c < 8 { m[r * n + c] } else { -1.0 };
                assert_eq!(b[r * n + c], want_b, "n {n}: block at ({r}, {c})");
            }
        }
    }
}

#[test]
fn typed_and_plain_messages_interoperate() {
    rpar::run(2, |world| {
        let every_other = TypeMap::vector(5000, 1, 2, &i32::type_map())?.commit();
        if world.rank() == 0 {
            let data: Vec<i32> = (0..10_000).collect();
            world.send(rpar::Typed::new(&data, &every_other, 1), 1, 0)?; // 20000 bytes: eager, packed
            let big: Vec<i32> = (0..40_000).collect();
            let ev = TypeMap::vector(20_000, 1, 2, &i32::type_map())?.commit();
            world.send(rpar::Typed::new(&big, &ev, 1), 1, 1)?; // 80000 bytes: rendezvous
            world.send(&data[..], 1, 2)?; // plain, received typed
        } else {
            let (evens, st) = world.recv::<i32>(0, 0)?;
            assert_eq!(st.count, 5000);
            assert!(evens.iter().enumerate().all(|(i, &x)| x == 2 * i as i32));
            let mut into = vec![0i32; 20_000];
            world.recv_into(&mut into, 0, 1)?;
            assert!(into.iter().enumerate().all(|(i, &x)| x == 2 * i as i32));
            let mut spread = vec![-1i32; 20_000];
            let ev = TypeMap::vector(10_000, 1, 2, &i32::type_map())?.commit();
            let st = world.recv_into(rpar::Typed::new(&mut spread, &ev, 1), 0, 2)?;
            assert_eq!(st.count, 1);
            assert!(spread
                .iter()
                .enumerate()
                .all(|(i, &x)| x == if i % 2 == 0 { i as i32 / 2 } else { -1 }));
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn signature_mismatch_and_truncation_are_errors_and_the_message_stays() {
    rpar::run(2, |world| {
        let three = TypeMap::contiguous(3, &i32::type_map())?.commit();
        if world.rank() == 0 {
            world.send(rpar::Typed::new(&[1, 2, 3], &three, 1), 1, 0)?;
        } else {
            let mut f = [0f32; 3];
            let as_f32 = TypeMap::contiguous(3, &f32::type_map())?.commit();
            let err = world
                .recv_into(rpar::Typed::new(&mut f, &as_f32, 1), 0, 0)
                .unwrap_err();
            assert!(
                matches!(err, Error::TypeMismatch { source_rank: 0, .. }),
                "{err}"
            );
            let two = TypeMap::contiguous(2, &i32::type_map())?.commit();
            let mut small = [0i32; 2];
            let err = world
                .recv_into(rpar::Typed::new(&mut small, &two, 1), 0, 0)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Truncated {
                        needed: 12,
                        capacity: 8,
                        ..
                    }
                ),
                "{err}"
            );
            // a longer receive accepts the shorter message (prefix rule): 3 of 4 ints
            let mut four = [0i32; 4];
            let one = i32::type_map().commit();
            let st = world.recv_into(rpar::Typed::new(&mut four, &one, 4), 0, 0)?;
            assert_eq!((st.count, four), (3, [1, 2, 3, 0]));
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn every_byte_is_bounds_checked_before_anything_moves() {
    rpar::run(2, |world| {
        let t = TypeMap::vector(3, 1, 4, &u16::type_map())?.commit(); // touches bytes 0..18
        if world.rank() == 0 {
            let err = world
                .send(rpar::Typed::new(&[0u16; 8], &t, 1), 1, 0)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::BufferOutOfBounds {
                        low: 0,
                        high: 18,
                        len: 16,
                        ..
                    }
                ),
                "{err}"
            );
            let back = TypeMap::vector(2, 1, -1, &u16::type_map())?.commit();
            assert!(world
                .send(rpar::Typed::new(&[0u16; 8], &back, 1), 1, 0)
                .is_err()); // byte -2
            world.send(&[5u16; 9][..], 1, 1)?;
        } else {
            let mut short = [0u16; 8];
            let err = world
                .recv_into(rpar::Typed::new(&mut short, &t, 1), 0, 1)
                .unwrap_err();
            assert!(matches!(err, Error::BufferOutOfBounds { .. }), "{err}");
            assert_eq!(short, [0; 8]);
            let one = u16::type_map().commit();
            world
                .recv_into(rpar::Typed::new(&mut short, &one, 8), 0, 1)
                .unwrap_err(); // 9 sent, 8 fit
            let mut nine = [0u16; 9];
            world.recv_into(rpar::Typed::new(&mut nine, &one, 9), 0, 1)?;
            assert_eq!(nine, [5; 9]);
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_type_must_match_the_buffer_layout() {
    let f = TypeMap::contiguous(2, &f32::type_map()).unwrap().commit();
    let err = f.pack_to_vec(&[0u32; 2], 1).unwrap_err();
    assert!(err.to_string().contains("must land on a f32"), "{err}");
    // bytes may be read from anything, but not written into bool
    let bytes = TypeMap::contiguous(4, &TypeMap::basic(rpar::BasicType::Byte))
        .unwrap()
        .commit();
    assert_eq!(bytes.pack_to_vec(&[1u32], 1).unwrap(), 1u32.to_ne_bytes());
    let mut flags = [false; 4];
    let err = bytes.unpack(&[0; 4], &mut 0, &mut flags, 1).unwrap_err();
    assert!(err.to_string().contains("byte"), "{err}");
}

/// `pack_to_vec` checks the buffer as `pack` does before it allocates: a huge count on a tiny
/// buffer is the out-of-bounds error at once, not gigabytes zero-filled first or "no memory".
#[test]
fn pack_to_vec_checks_the_buffer_before_allocating() {
    let pair = TypeMap::contiguous(2, &f64s()).unwrap().commit(); // 16 bytes
    let buf = [1.0f64, 2.0];
    for count in [1 << 28, 1 << 40, usize::MAX / 16, usize::MAX] {
        for err in [
            pair.pack_to_vec(&buf, count).unwrap_err(),
            pair.pack_to_vec_at(&buf, 1, count).unwrap_err(),
        ] {
            match err {
                Error::BufferOutOfBounds { call, len: 16, .. } => assert_eq!(call, "MPI_Pack"),
                other => panic!("count {count}: expected the buffer's bounds, got {other}"),
            }
        }
    }
    // the same checks as pack, in the same order: an origin past the end, then the bounds
    let err = pair.pack_to_vec_at(&buf, 3, 1 << 40).unwrap_err();
    assert!(
        err.to_string().contains("origin 3 is past the end"),
        "{err}"
    );
    assert_eq!(pair.pack_to_vec(&buf, 1).unwrap().len(), 16);
}

#[test]
fn unpacking_into_bool_and_char_validates_first() {
    let t = TypeMap::structure(&[(1, 0, &char::type_map()), (1, 4, &bool::type_map())])
        .unwrap()
        .commit();
    let good = ['x'.to_string().chars().next().unwrap() as u32]
        .iter()
        .flat_map(|c| c.to_ne_bytes())
        .chain([1u8])
        .collect::<Vec<u8>>();
    let mut out = [('a', false)];
    t.unpack(&good, &mut 0, &mut out, 1).unwrap();
    assert_eq!(out, [('x', true)]);
    let mut bad_bool = good.clone();
    bad_bool[4] = 2;
    let err = t.unpack(&bad_bool, &mut 0, &mut out, 1).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidValue {
                basic: rpar::BasicType::Bool,
                position: 4,
                ..
            }
        ),
        "{err}"
    );
    let surrogate = 0xD800u32
        .to_ne_bytes()
        .into_iter()
        .chain([0u8])
        .collect::<Vec<u8>>();
    let err = t.unpack(&surrogate, &mut 0, &mut out, 1).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidValue {
                basic: rpar::BasicType::Char,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(out, [('x', true)], "nothing written on error");
    // and a bool message cannot be received as u8 or vice versa: the signatures differ
    rpar::run(2, |world| {
        if world.rank() == 0 {
            world.send(&[3u8, 4][..], 1, 0)?;
        } else {
            let mut b = [false; 2];
            let one = bool::type_map().commit();
            assert!(matches!(
                world.recv_into(rpar::Typed::new(&mut b, &one, 2), 0, 0),
                Err(Error::TypeMismatch { .. })
            ));
            world.recv::<u8>(0, 0)?;
        }
        Ok(())
    })
    .unwrap();
}

#[test]
fn large_typed_sends_both_ways_do_not_deadlock() {
    let out = rpar::run(2, |world| {
        let n = 200_000; // 800 KB each way: rendezvous
        let ev = TypeMap::vector(n, 1, 2, &u32::type_map())?.commit();
        let data: Vec<u32> = (0..2 * n as u32).map(|x| x + world.rank() as u32).collect();
        let other = 1 - world.rank();
        let mut got = vec![0u32; n];
        let one = u32::type_map().commit();
        // both ranks send first: each sender, while blocked, packs the other's offer
        world.send(rpar::Typed::new(&data, &ev, 1), other, 0)?;
        world.recv_into(rpar::Typed::new(&mut got, &one, n), other, 0)?;
        Ok(got[..3].to_vec())
    })
    .unwrap();
    assert_eq!(out, vec![vec![1, 3, 5], vec![0, 2, 4]]);
}

#[test]
fn types_stay_valid_after_the_types_they_were_built_from_are_dropped() {
    let outer = {
        let inner = TypeMap::vector(2, 1, 3, &i16::type_map()).unwrap(); // extent: 4 i16
        let committed = inner.commit();
        let outer = TypeMap::contiguous(2, &inner).unwrap();
        drop(inner);
        drop(committed);
        outer.commit()
    };
    let data: Vec<i16> = (0..12).collect();
    let packed = outer.pack_to_vec(&data, 1).unwrap();
    let want: Vec<u8> = [0i16, 3, 4, 7]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect();
    assert_eq!(packed, want);
    let probe = rpar::run(2, move |world| {
        if world.rank() == 0 {
            world.send(rpar::Typed::new(&data, &outer, 1), 1, 4)?;
            Ok(None)
        } else {
            let p = world.probe(0, 4)?;
            world.recv::<i16>(0, 4)?;
            Ok(Some((p.status.count, p.bytes)))
        }
    })
    .unwrap();
    assert_eq!(probe[1], Some((1, 8)));
}

#[test]
fn a_rendezvous_into_a_gap_free_receive_gathers_straight_in() {
    let got = rpar::run(2, |world| {
        let n = 10_000; // 80 KB of every other f64: a rendezvous
        if world.rank() == 0 {
            let ev = TypeMap::vector(n, 1, 2, &f64s())?.commit();
            let data: Vec<f64> = (0..2 * n).map(|i| i as f64).collect();
            world.send(rpar::Typed::new(&data, &ev, 1), 1, 0)?;
            Ok(vec![])
        } else {
            let mut into = vec![0.0; n + 1];
            let dense = TypeMap::contiguous(n + 1, &f64s())?.commit();
            let st = world.recv_into(rpar::Typed::new(&mut into, &dense, 1), 0, 0)?;
            // fewer than one whole receive element: MPI_Get_count says MPI_UNDEFINED
            assert_eq!((st.count, st.get_count()), (rpar::UNDEFINED, None));
            Ok(into)
        }
    })
    .unwrap();
    let want: Vec<f64> = (0..10_000).map(|i| 2.0 * i as f64).chain([0.0]).collect();
    assert_eq!(got[1], want);
}

#[test]
fn negative_strides_travel_with_an_origin() {
    let got = rpar::run(2, |world| {
        let back = TypeMap::vector(3, 1, -2, &i32::type_map())?.commit(); // bytes -16..4
        if world.rank() == 0 {
            let data = [10, 11, 12, 13, 14];
            assert!(world.send(rpar::Typed::new(&data, &back, 1), 1, 0).is_err()); // origin 0: byte -16
            world.send(rpar::Typed::new(&data, &back, 1).at(4), 1, 0)?;
            Ok(vec![])
        } else {
            let mut into = [0i32; 5];
            world.recv_into(rpar::Typed::new(&mut into, &back, 1).at(4), 0, 0)?;
            Ok(into.to_vec())
        }
    })
    .unwrap();
    assert_eq!(got[1], [10, 0, 12, 0, 14]);
}

#[test]
fn negative_extents_travel_backwards_at_eager_and_rendezvous_sizes() {
    // successive elements of a negative extent go down in memory (MPI_Type_create_resized
    // allows it): element k of `back` is the i32 4k bytes below the origin; element k of
    // `pairs` is the two i32s 16k bytes below it, 8 bytes apart
    for n in [5usize, 20_000] {
        let got = rpar::run(2, move |world| {
            let back = i32::type_map().resized(0, -4)?.commit();
            let pairs = TypeMap::vector(2, 1, 2, &i32::type_map())?
                .resized(0, -16)?
                .commit();
            let data: Vec<i32> = (0..4 * n as i32).collect();
            let last = 4 * n - 1; // the origin of `back` over all of `data`
            if world.rank() == 0 {
                // from element 0, element 1 lies 4 bytes below the buffer: refused, nothing sent
                let err = world
                    .send(rpar::Typed::new(&data, &back, 2), 1, 0)
                    .unwrap_err();
                assert!(matches!(
                    err,
                    Error::BufferOutOfBounds {
                        low: -4,
                        high: 4,
                        ..
                    }
                ));
                world.send(rpar::Typed::new(&data, &back, 4 * n).at(last), 1, 0)?;
                world.send(rpar::Typed::new(&data, &pairs, n).at(4 * n - 4), 1, 1)?;
                world.send(&data[..], 1, 2)?;
                return Ok(vec![]);
            }
            let (reversed, _) = world.recv::<i32>(0, 0)?; // plainly: in the sender's map order
            let (evens, st) = world.recv::<i32>(0, 1)?;
            assert_eq!(st.count, 2 * n);
            let mut twice = vec![-1i32; 4 * n];
            // received backwards into a buffer, from its last element down
            let err = world
                .recv_into(rpar::Typed::new(&mut twice, &back, 4 * n).at(2), 0, 2)
                .unwrap_err();
            assert!(matches!(err, Error::BufferOutOfBounds { .. }), "{err}");
            let st = world.recv_into(rpar::Typed::new(&mut twice, &back, 4 * n).at(last), 0, 2)?;
            assert_eq!(st.count, 4 * n);
            Ok([reversed, evens, twice].concat())
        })
        .unwrap();
        let data: Vec<i32> = (0..4 * n as i32).collect();
        let reversed: Vec<i32> = data.iter().rev().copied().collect();
        // element k of `pairs` from origin 4n - 4: i32s 4n - 4 - 4k and 4n - 2 - 4k
        let evens: Vec<i32> = (0..n as i32)
            .flat_map(|k| [4 * n as i32 - 4 - 4 * k, 4 * n as i32 - 2 - 4 * k])
            .collect();
        assert_eq!(
            got[1],
            [reversed.clone(), evens, reversed].concat(),
            "n = {n}"
        );
    }
}

#[test]
fn a_queued_small_typed_message_survives_its_receiver_blocking_in_a_large_send() {
    // rank 1's small typed message waits in rank 0's queue while rank 0 is blocked in a
    // rendezvous send (which copies out queued rendezvous messages): the packed one must stay
    let got = rpar::run(2, |world| {
        let col = column(4);
        if world.rank() == 1 {
            world.send(rpar::Typed::new(&matrix(4), &col, 1).at(1), 0, 1)?;
            world.barrier()?;
            let big = world.recv::<f64>(0, 2)?.0;
            Ok(big.len())
        } else {
            world.barrier()?; // the typed message has been sent
            world.send(&vec![0.5f64; 100_000][..], 1, 2)?;
            Ok(world.recv::<f64>(1, 1)?.0.len())
        }
    })
    .unwrap();
    assert_eq!(got, vec![4, 100_000]);
}

#[test]
fn packs_larger_than_the_cache_are_byte_exact_at_every_alignment() {
    // 9 MiB packed: written with streaming stores, in words of 8 or 16 bytes as the block
    // length and the position allow (see rpar/src/datatype/store.rs; its unit tests try every
    // word on every block length at every alignment)
    let n = 9 << 17;
    let data: Vec<u64> = (0..2 * n as u64)
        .map(|x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    for (len, stride) in [(1, 2), (2, 4)] {
        let ty = TypeMap::vector(n / len, len, stride as isize, &u64::type_map())
            .unwrap()
            .commit();
        let mut want = Vec::with_capacity(8 * n);
        for block in data.chunks(stride) {
            for x in &block[..len] {
                want.extend_from_slice(&x.to_ne_bytes());
            }
        }
        for position in [0, 4, 8] {
            let mut out = vec![0u8; position + want.len() + 3];
            let mut pos = position;
            ty.pack(&data, 1, &mut out, &mut pos).unwrap();
            assert_eq!(pos, position + want.len());
            assert!(out[..position] == [0; 8][..position] && out[pos..] == [0; 3]);
            assert!(
                out[position..pos] == want[..],
                "{len} of {stride} at {position}"
            );
        }
        let mut back = vec![0u64; data.len()];
        ty.unpack(&want, &mut 0, &mut back, 1).unwrap();
        for (b, d) in back.chunks(stride).zip(data.chunks(stride)) {
            assert!(b[..len] == d[..len] && b[len..].iter().all(|&x| x == 0));
        }
    }
}

/// Sends `n` values of `T` from rank 0 to rank 1 in every way — plainly and with `T`'s
/// committed type — and receives each in every way: `recv`, `recv_into`, `irecv_into` and
/// `recv_typed`; every value must arrive as it was sent.
fn every_way_there_and_back<T>(n: usize, value: fn(usize) -> T)
where
    T: Datatype + PartialEq + std::fmt::Debug,
{
    let got = rpar::run(2, move |world| {
        let ty = T::type_map().commit();
        let sent: Vec<T> = (0..n).map(value).collect();
        const WAYS: i32 = 4;
        if world.rank() == 0 {
            // in the order of the receives: large sends wait for theirs
            for tag in 0..WAYS {
                world.send(&sent[..], 1, tag)?;
            }
            for tag in WAYS..2 * WAYS {
                world.send(rpar::Typed::new(&sent, &ty, n), 1, tag)?;
            }
            return Ok(vec![]);
        }
        let mut all = Vec::new();
        for typed in [0, WAYS] {
            all.push(world.recv::<T>(0, typed)?.0);
            let mut into = sent.clone();
            into.reverse(); // overwritten by the message, whatever it held
            world.recv_into(&mut into, 0, typed + 1)?;
            all.push(into.clone());
            into.reverse();
            world.irecv_into(&mut into[..], 0, typed + 2)?.wait()?;
            all.push(into.clone());
            into.reverse();
            let st = world.recv_into(rpar::Typed::new(&mut into, &ty, n), 0, typed + 3)?;
            assert_eq!(st.count, n);
            all.push(into);
        }
        Ok(all)
    })
    .unwrap();
    let sent: Vec<T> = (0..n).map(value).collect();
    for (way, received) in got[1].iter().enumerate() {
        let how = ["recv", "recv_into", "irecv_into", "recv_typed"][way % 4];
        let from = if way < 4 { "send" } else { "send_typed" };
        assert_eq!(received.len(), n, "{from} -> {how}");
        if let Some(i) = (0..n).find(|&i| received[i] != sent[i]) {
            panic!(
                "{n} x {}: {from} -> {how}: element {i} arrived as {:?}, sent as {:?}",
                std::any::type_name::<T>(),
                received[i],
                sent[i]
            );
        }
    }
}

#[test]
fn structs_whose_fields_rust_reorders_arrive_as_sent() {
    assert_reordered::<Reordered>();
    assert_reordered::<ReorderedChar>();
    // 1 and 3 elements travel inline, 100 eager, 10 000 (80 KB) by rendezvous
    for n in [1, 3, 100, 10_000] {
        every_way_there_and_back(n, Reordered::nth);
        every_way_there_and_back(n, ReorderedChar::nth);
    }
}
