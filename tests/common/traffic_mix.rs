//! A random mix of point-to-point traffic between every pair of ranks, written once over a
//! communicator: run in-process by `tests/p2p_mix.rs` and as MPI processes by `tests/mpi.rs`.
//! Every rank sends every other rank a script of messages drawn from a seed both ends know —
//! four tags, five element types, sizes from empty to 160 KB, standard and synchronous
//! non-blocking sends of borrowed buffers and standard ones of owned vectors, all started
//! before any receive — and receives them in an order of its own: the messages of tag 0 from
//! each rank by their tag, a few at a time as receives posted together and waited for last to
//! first; those of tag 1 from whichever rank a probe on `ANY_SOURCE` finds; the rest from each
//! rank under `ANY_TAG`; some probed first, some into a vector of their own, some into one of
//! the caller's. MPI's rule is that messages from one sender that one receive could match
//! arrive in the order sent, and that receives posted together match in the order posted; each
//! receive is checked against the script (source, tag, count, every value).

use rpar::{Comm, Datatype, Request, Result, Status, ANY_SOURCE, ANY_TAG};
use std::collections::VecDeque;
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

/// How a message of a script is sent.
#[derive(Clone, Copy, Debug, PartialEq)]
enum How {
    /// `isend` of a borrowed buffer, in a scope.
    Borrowed,
    /// `issend` of a borrowed buffer, in a scope.
    Synchronous,
    /// `isend` of an owned vector (moved into the send).
    Owned,
}

/// One message of a script: its tag, how it is sent, its payload.
#[derive(Clone, Debug)]
struct Scripted {
    tag: i32,
    how: How,
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
            let how = match i % 7 {
                3 => How::Synchronous,
                1 | 5 => How::Owned,
                _ => How::Borrowed,
            };
            Scripted {
                tag: rng.below(4) as i32,
                how,
                payload,
            }
        })
        .collect()
}

/// Sends every other rank its script (all started at once: borrowed buffers in a scope, owned
/// vectors as requests of their own), then receives every other rank's, each checked.
pub(crate) fn random_mix(world: &Comm) -> Result<()> {
    let me = world.rank();
    let others: Vec<usize> = (0..world.size()).filter(|&r| r != me).collect();
    let outgoing: Vec<(usize, Vec<Scripted>)> =
        others.iter().map(|&d| (d, script(me, d))).collect();
    world.scope(|s| {
        let mut owned = Vec::new();
        for (dest, messages) in &outgoing {
            for m in messages {
                let to = (*dest, m.tag);
                match m.how {
                    How::Owned => owned.push(isend_owned(world, &m.payload, to)?),
                    how => drop(isend_borrowed(s, &m.payload, to, how)?), // the scope waits
                }
            }
        }
        let incoming: Vec<(usize, Vec<Scripted>)> =
            others.iter().map(|&r| (r, script(r, me))).collect();
        receive_scripts(world, &incoming)?;
        rpar::wait_all(owned)?;
        Ok(())
    })
}

/// Starts the send of `payload` to `(dest, tag)` from its buffer, in the scope `s`.
fn isend_borrowed<'s>(
    s: &'s rpar::Scope<'s, '_>,
    payload: &'s Payload,
    (dest, tag): (usize, i32),
    how: How,
) -> Result<Request<'s>> {
    let synchronous = how == How::Synchronous;
    macro_rules! send {
        ($v:expr) => {
            if synchronous {
                s.issend(&$v[..], dest, tag)
            } else {
                s.isend(&$v[..], dest, tag)
            }
        };
    }
    match payload {
        Payload::Bytes(v) => send!(v),
        Payload::Ints(v) => send!(v),
        Payload::Floats(v) => send!(v),
        Payload::Pairs(v) => send!(v),
        Payload::Wide(v) => send!(v),
    }
}

/// Starts the send of a copy of `payload` to `(dest, tag)` as an owned vector.
fn isend_owned(
    world: &Comm,
    payload: &Payload,
    (dest, tag): (usize, i32),
) -> Result<Request<'static>> {
    match payload.clone() {
        Payload::Bytes(v) => world.isend(v, dest, tag),
        Payload::Ints(v) => world.isend(v, dest, tag),
        Payload::Floats(v) => world.isend(v, dest, tag),
        Payload::Pairs(v) => world.isend(v, dest, tag),
        Payload::Wide(v) => world.isend(v, dest, tag),
    }
}

/// The messages of tag 0 received together, at most, from one rank.
const POSTED_TOGETHER: usize = 4;

/// Receives the scripts `incoming` (each with its sender): tag 0 from each sender by its tag, a
/// few posted together; tag 1 from whichever sender a probe on `ANY_SOURCE` finds; tags 2
/// and 3 from each sender under `ANY_TAG`.
fn receive_scripts(world: &Comm, incoming: &[(usize, Vec<Scripted>)]) -> Result<()> {
    let of_tags = |script: &[Scripted], tags: &[i32]| -> VecDeque<(usize, Scripted)> {
        let picked = script.iter().cloned().enumerate();
        picked.filter(|(_, m)| tags.contains(&m.tag)).collect()
    };
    for (source, script) in incoming {
        let zeros: Vec<(usize, Scripted)> = of_tags(script, &[0]).into();
        for together in zeros.chunks(POSTED_TOGETHER) {
            receive_posted_together(world, *source, together)?;
        }
    }
    let mut ones: Vec<(usize, VecDeque<(usize, Scripted)>)> = incoming
        .iter()
        .map(|(source, script)| (*source, of_tags(script, &[1])))
        .collect();
    for _ in 0..ones.iter().map(|(_, q)| q.len()).sum::<usize>() {
        let found = world.probe(ANY_SOURCE, 1)?.status.source;
        let (_, queue) = ones
            .iter_mut()
            .find(|(source, _)| *source == found)
            .expect("a probe on ANY_SOURCE finds a rank that sent");
        let (i, m) = queue
            .pop_front()
            .unwrap_or_else(|| panic!("rank {found} sent more messages of tag 1 than scripted"));
        receive_one(world, found, 1, &m, i)?;
    }
    for (source, script) in incoming {
        for (i, m) in of_tags(script, &[2, 3]) {
            receive_one(world, *source, ANY_TAG, &m, i)?;
        }
    }
    Ok(())
}

/// Receives `messages` (the next ones of one tag from `source`, with their places in its
/// script) with receives posted together, each into a buffer of its length, waited for last
/// to first.
fn receive_posted_together(
    world: &Comm,
    source: usize,
    messages: &[(usize, Scripted)],
) -> Result<()> {
    let mut buffers: Vec<Payload> = messages.iter().map(|(_, m)| emptied(&m.payload)).collect();
    let mut requests = Vec::new();
    for (buf, (_, m)) in buffers.iter_mut().zip(messages) {
        requests.push(irecv_payload(world, buf, (source, m.tag))?);
    }
    let mut statuses: Vec<Status> = requests
        .into_iter()
        .rev()
        .map(Request::wait)
        .collect::<Result<_>>()?;
    statuses.reverse();
    for ((got, status), (i, want)) in buffers.iter().zip(statuses).zip(messages) {
        let what = format!(
            "posted receive of message {i} from rank {source} (tag {})",
            want.tag
        );
        assert_eq!(
            (status.source, status.tag, status.count),
            (source, want.tag, payload_len(&want.payload)),
            "the status of the {what}"
        );
        assert_eq!(*got, want.payload, "the contents of the {what}");
    }
    Ok(())
}

/// A payload of the kind and length of `p`, zeroed: a receive buffer for it.
fn emptied(p: &Payload) -> Payload {
    match p {
        Payload::Bytes(v) => Payload::Bytes(vec![0; v.len()]),
        Payload::Ints(v) => Payload::Ints(vec![0; v.len()]),
        Payload::Floats(v) => Payload::Floats(vec![0.0; v.len()]),
        Payload::Pairs(v) => Payload::Pairs(vec![[0; 2]; v.len()]),
        Payload::Wide(v) => Payload::Wide(vec![0; v.len()]),
    }
}

/// Posts a receive into `buf` from `(source, tag)`.
fn irecv_payload<'a>(
    world: &Comm,
    buf: &'a mut Payload,
    (source, tag): (usize, i32),
) -> Result<Request<'a>> {
    match buf {
        Payload::Bytes(v) => world.irecv_into(&mut v[..], source, tag),
        Payload::Ints(v) => world.irecv_into(&mut v[..], source, tag),
        Payload::Floats(v) => world.irecv_into(&mut v[..], source, tag),
        Payload::Pairs(v) => world.irecv_into(&mut v[..], source, tag),
        Payload::Wide(v) => world.irecv_into(&mut v[..], source, tag),
    }
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
    let from = (source, tag);
    let got = match &want.payload {
        Payload::Bytes(v) => Payload::Bytes(receive_like(world, from, want.tag, v, i, &what)?),
        Payload::Ints(v) => Payload::Ints(receive_like(world, from, want.tag, v, i, &what)?),
        Payload::Floats(v) => Payload::Floats(receive_like(world, from, want.tag, v, i, &what)?),
        Payload::Pairs(v) => Payload::Pairs(receive_like(world, from, want.tag, v, i, &what)?),
        Payload::Wide(v) => Payload::Wide(receive_like(world, from, want.tag, v, i, &what)?),
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
