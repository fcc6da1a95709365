//! A random mix of point-to-point traffic between every pair of ranks, written once over a
//! communicator: run in-process by `tests/p2p_mix.rs` and as MPI processes by `tests/mpi.rs`.
//! Every rank sends every other rank a script of messages drawn from a seed both ends know —
//! four tags, five element types, sizes from empty to 160 KB, standard and synchronous
//! non-blocking sends, all started before any receive — and receives them in an order of its
//! own: first the messages of tags 0 and 1 by their tag, then the rest under `ANY_TAG`, some
//! probed first, some into a buffer of their own, some into one of the caller's. MPI's rule is
//! that messages from one sender that one receive could match arrive in the order sent; each
//! receive is checked against the script (tag, count, every value).

use rpar::{Comm, Datatype, Result, Status, ANY_TAG};
use std::fmt::Debug;

/// Messages each rank sends each other rank.
const PER_PAIR: usize = 90;

/// The payload of one message of the script: a vector of one of five element types.
#[derive(Clone, Debug, PartialEq)]
enum Payload {
    Bytes(Vec<u8>),
    Ints(Vec<i32>),
    Floats(Vec<f64>),
    Pairs(Vec<[u32; 2]>),
    Wide(Vec<u64>),
}

/// One message of a script: its tag, whether it is sent synchronously, its payload.
#[derive(Clone, Debug)]
struct Scripted {
    tag: i32,
    synchronous: bool,
    payload: Payload,
}

/// SplitMix64: the scripts' random numbers, the same in every process.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What `from` sends `to`, in order.
fn script(from: usize, to: usize) -> Vec<Scripted> {
    let mut rng = SplitMix(((from as u64) << 32) ^ to as u64 ^ 0x5eed);
    (0..PER_PAIR)
        .map(|i| {
            // mostly small, with the sizes either side of the transports' limits
            let len = match rng.below(10) {
                0 => 0,
                1..=4 => 1 + rng.below(8),
                5 | 6 => 9 + rng.below(600),
                7 | 8 => 1000 + rng.below(3000),
                _ => 8000 + rng.below(12_000),
            } as usize;
            let seed = rng.next();
            let value = |k: usize| seed.wrapping_add(k as u64 * 0x1000_0001);
            let payload = match rng.below(5) {
                0 => Payload::Bytes((0..len).map(|k| value(k) as u8).collect()),
                1 => Payload::Ints((0..len).map(|k| value(k) as i32).collect()),
                2 => Payload::Floats((0..len).map(|k| (value(k) >> 11) as f64).collect()),
                3 => Payload::Pairs(
                    (0..len)
                        .map(|k| [value(k) as u32, (value(k) >> 32) as u32])
                        .collect(),
                ),
                _ => Payload::Wide((0..len).map(value).collect()),
            };
            Scripted {
                tag: rng.below(4) as i32,
                synchronous: i % 7 == 3,
                payload,
            }
        })
        .collect()
}

/// Sends every other rank its script (all started at once, in a scope), then receives every
/// other rank's, each checked.
pub(crate) fn random_mix(world: &Comm) -> Result<()> {
    let me = world.rank();
    let others: Vec<usize> = (0..world.size()).filter(|&r| r != me).collect();
    let outgoing: Vec<(usize, Vec<Scripted>)> =
        others.iter().map(|&d| (d, script(me, d))).collect();
    world.scope(|s| {
        for (dest, messages) in &outgoing {
            for m in messages {
                let (dest, tag) = (*dest, m.tag);
                let sent = match (&m.payload, m.synchronous) {
                    (Payload::Bytes(v), false) => s.isend(&v[..], dest, tag),
                    (Payload::Bytes(v), true) => s.issend(&v[..], dest, tag),
                    (Payload::Ints(v), false) => s.isend(&v[..], dest, tag),
                    (Payload::Ints(v), true) => s.issend(&v[..], dest, tag),
                    (Payload::Floats(v), false) => s.isend(&v[..], dest, tag),
                    (Payload::Floats(v), true) => s.issend(&v[..], dest, tag),
                    (Payload::Pairs(v), false) => s.isend(&v[..], dest, tag),
                    (Payload::Pairs(v), true) => s.issend(&v[..], dest, tag),
                    (Payload::Wide(v), false) => s.isend(&v[..], dest, tag),
                    (Payload::Wide(v), true) => s.issend(&v[..], dest, tag),
                }?;
                drop(sent); // the scope waits for it
            }
        }
        for &source in &others {
            receive_script(world, source, &script(source, me))?;
        }
        Ok(())
    })
}

/// Receives `source`'s script: tags 0 and 1 by their tag, in the order sent; then the rest
/// under `ANY_TAG`, which must come in the order sent.
fn receive_script(world: &Comm, source: usize, expected: &[Scripted]) -> Result<()> {
    let by_tag = expected.iter().enumerate().filter(|(_, m)| m.tag <= 1);
    let rest = expected.iter().enumerate().filter(|(_, m)| m.tag > 1);
    for (i, m) in by_tag {
        receive_one(world, source, m.tag, m, i)?;
    }
    for (i, m) in rest {
        receive_one(world, source, ANY_TAG, m, i)?;
    }
    Ok(())
}

/// Receives the `i`th message of `source`'s script (`want`) with `tag`, one of three ways by
/// `i`: into a new vector, into the caller's buffer of the exact size, or probed first.
fn receive_one(world: &Comm, source: usize, tag: i32, want: &Scripted, i: usize) -> Result<()> {
    let what = format!("message {i} from rank {source} (tag {})", want.tag);
    if i % 5 == 2 {
        let p = world.probe(source, tag)?;
        let len = payload_len(&want.payload);
        assert_eq!(
            (p.status.source, p.status.tag, p.status.count),
            (source, want.tag, len),
            "the probe of {what}"
        );
    }
    let got = match &want.payload {
        Payload::Bytes(v) => {
            Payload::Bytes(receive_like(world, (source, tag), want.tag, v, i, &what)?)
        }
        Payload::Ints(v) => {
            Payload::Ints(receive_like(world, (source, tag), want.tag, v, i, &what)?)
        }
        Payload::Floats(v) => {
            Payload::Floats(receive_like(world, (source, tag), want.tag, v, i, &what)?)
        }
        Payload::Pairs(v) => {
            Payload::Pairs(receive_like(world, (source, tag), want.tag, v, i, &what)?)
        }
        Payload::Wide(v) => {
            Payload::Wide(receive_like(world, (source, tag), want.tag, v, i, &what)?)
        }
    };
    assert_eq!(got, want.payload, "the contents of {what}");
    Ok(())
}

/// Receives a message from `source` with `tag` of `want`'s element type and length (into a
/// new vector, or, for odd `i`, into a buffer of that length), checking its status: that
/// source, `want_tag`, `want`'s length.
fn receive_like<T: Datatype + Default + Clone + Debug>(
    world: &Comm,
    (source, tag): (usize, i32),
    want_tag: i32,
    want: &[T],
    i: usize,
    what: &str,
) -> Result<Vec<T>> {
    let (got, status): (Vec<T>, Status) = if i % 2 == 1 {
        let mut buf = vec![T::default(); want.len()];
        let status = world.recv_into(&mut buf[..], source, tag)?;
        (buf, status)
    } else {
        world.recv::<T>(source, tag)?
    };
    assert_eq!(
        (status.source, status.tag, status.count),
        (source, want_tag, want.len()),
        "the status of {what}"
    );
    Ok(got)
}

/// The number of elements of a payload.
fn payload_len(p: &Payload) -> usize {
    match p {
        Payload::Bytes(v) => v.len(),
        Payload::Ints(v) => v.len(),
        Payload::Floats(v) => v.len(),
        Payload::Pairs(v) => v.len(),
        Payload::Wide(v) => v.len(),
    }
}
