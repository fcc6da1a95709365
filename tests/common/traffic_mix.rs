//! A random mix of point-to-point traffic between every pair of ranks, written once over a
//! communicator: run in-process by `tests/p2p_mix.rs` and as MPI processes by `tests/mpi.rs`.
//!
//! Every rank sends every other rank a script of messages drawn from a seed both ends know —
//! four tags on the communicator and on a duplicate of it, six element types (a padded struct
//! among them), sizes from empty to 160 KB, standard and synchronous non-blocking sends of
//! borrowed buffers and standard ones of owned vectors, all started before any receive — and
//! receives them in an order of its own: first the duplicate's, each from whichever rank a
//! probe on `ANY_SOURCE` and `ANY_TAG` finds; then the messages of tag 0 from each rank by
//! their tag, a few at a time as receives posted together, waited for last to first or as they
//! complete (`wait_any`); then those of tag 1 from whichever rank a probe on `ANY_SOURCE`
//! finds; last tags 2 and 3 from each rank under `ANY_TAG`. A message is received into a vector of its own or into the
//! caller's buffer, some after a probe, a poll of `iprobe` or a matched probe. MPI's rules:
//! messages from one sender that one receive could match arrive in the order sent, receives
//! posted together match in the order posted, and communicators never see each other's
//! messages. Each receive is checked against the script (source, tag, count, every value). A
//! non-blocking allreduce on the communicator and a bcast on its duplicate are in flight all
//! along, and checked at the end.

use rpar::{
    Comm, Datatype, MatchedMessage, Request, Result, Scope, Status, Sum, ANY_SOURCE, ANY_TAG,
};
use std::collections::VecDeque;
use std::fmt::Debug;

use super::split_mix::SplitMix;

/// Messages each rank sends each other rank.
const PER_PAIR: usize = 90;

/// The messages of tag 0 received together, at most, from one rank.
const POSTED_TOGETHER: usize = 4;

/// A struct with padding after each of its first two fields.
#[derive(Datatype, Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Padded {
    flag: u8,
    value: f64,
    small: i16,
}

/// The payload of one message of the script: a vector of one of six element types.
#[derive(Clone, Debug, PartialEq)]
enum Payload {
    Bytes(Vec<u8>),
    Ints(Vec<i32>),
    Floats(Vec<f64>),
    Pairs(Vec<[u32; 2]>),
    Wide(Vec<u64>),
    Structs(Vec<Padded>),
}

/// Runs `$e` on the vector inside a payload, named `$v`, with `$wrap` the variant's
/// constructor (to make a payload of the same kind).
macro_rules! on_payload {
    ($p:expr, |$v:ident, $wrap:ident| $e:expr) => {
        match $p {
            Payload::Bytes($v) => {
                let $wrap = Payload::Bytes;
                $e
            }
            Payload::Ints($v) => {
                let $wrap = Payload::Ints;
                $e
            }
            Payload::Floats($v) => {
                let $wrap = Payload::Floats;
                $e
            }
            Payload::Pairs($v) => {
                let $wrap = Payload::Pairs;
                $e
            }
            Payload::Wide($v) => {
                let $wrap = Payload::Wide;
                $e
            }
            Payload::Structs($v) => {
                let $wrap = Payload::Structs;
                $e
            }
        }
    };
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

/// How a message is received.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Receipt {
    /// `recv`, into a vector of its own.
    Vector,
    /// `recv_into` a buffer of its length.
    Buffer,
    /// `probe`, then `recv`.
    Probed,
    /// `iprobe` until it finds it, then `recv_into`.
    Polled,
    /// A matched probe, then its `recv_into`.
    Matched,
}

/// One message of a script: its tag, its communicator (the duplicate or not), how it is sent
/// and received, its payload.
#[derive(Clone, Debug)]
struct Scripted {
    tag: i32,
    on_dup: bool,
    how: How,
    receipt: Receipt,
    payload: Payload,
}

/// What `from` sends `to` in the mix of `seed`, in order.
fn script(from: usize, to: usize, seed: u64) -> Vec<Scripted> {
    let mut rng = SplitMix(((from as u64) << 32) ^ to as u64 ^ seed.wrapping_mul(0x5eed));
    (0..PER_PAIR)
        .map(|i| {
            // mostly small, with the sizes either side of the transports' limits
            let len = match rng.below(10) {
                0 => 0,
                1..=4 => 1 + rng.below(8),
                5 | 6 => 9 + rng.below(600),
                7 | 8 => 1000 + rng.below(3000),
                _ => 8000 + rng.below(12_000),
            };
            let seed = rng.next();
            let value = |k: usize| seed.wrapping_add(k as u64 * 0x1000_0001);
            let payload = match rng.below(6) {
                0 => Payload::Bytes((0..len).map(|k| value(k) as u8).collect()),
                1 => Payload::Ints((0..len).map(|k| value(k) as i32).collect()),
                2 => Payload::Floats((0..len).map(|k| (value(k) >> 11) as f64).collect()),
                3 => Payload::Pairs(
                    (0..len)
                        .map(|k| [value(k) as u32, (value(k) >> 32) as u32])
                        .collect(),
                ),
                4 => Payload::Structs(
                    (0..len)
                        .map(|k| Padded {
                            flag: value(k) as u8,
                            value: (value(k) >> 12) as f64,
                            small: (value(k) >> 40) as i16,
                        })
                        .collect(),
                ),
                _ => Payload::Wide((0..len).map(value).collect()),
            };
            let how = match i % 7 {
                3 => How::Synchronous,
                1 | 5 => How::Owned,
                _ => How::Borrowed,
            };
            let receipt = match i % 6 {
                0 | 3 => Receipt::Vector,
                1 => Receipt::Buffer,
                2 => Receipt::Probed,
                4 => Receipt::Polled,
                _ => Receipt::Matched,
            };
            Scripted {
                tag: rng.below(4) as i32,
                on_dup: rng.below(4) == 0,
                how,
                receipt,
                payload,
            }
        })
        .collect()
}

/// Sends every other rank its script in the mix of `seed` (all started at once: borrowed
/// buffers in a scope, owned vectors as requests of their own), then receives every other
/// rank's, each checked.
pub(crate) fn random_mix(world: &Comm, seed: u64) -> Result<()> {
    let me = world.rank();
    let dup = world.dup()?;
    let others: Vec<usize> = (0..world.size()).filter(|&r| r != me).collect();
    let outgoing: Vec<(usize, Vec<Scripted>)> =
        others.iter().map(|&d| (d, script(me, d, seed))).collect();
    let mine: Vec<u64> = (0..257).map(|k| k * (me as u64 + 1)).collect();
    let mut summed = vec![0u64; mine.len()];
    let mut root_says = [0u64; 3];
    if me == 0 {
        root_says = [seed, 7, 11];
    }
    world.scope(|on_world| {
        dup.scope(|on_dup| {
            // collectives in flight on both communicators all along
            let reduced = on_world.iallreduce((&mine[..], &mut summed[..]), Sum)?;
            let broadcast = on_dup.ibcast(&mut root_says[..], 0)?;
            let mut owned = Vec::new();
            for (dest, messages) in &outgoing {
                for m in messages {
                    let to = (*dest, m.tag);
                    match (m.how, m.on_dup) {
                        (How::Owned, true) => owned.push(isend_owned(&dup, &m.payload, to)?),
                        (How::Owned, false) => owned.push(isend_owned(world, &m.payload, to)?),
                        // the scopes wait for these
                        (how, true) => drop(isend_borrowed(on_dup, &m.payload, to, how)?),
                        (how, false) => drop(isend_borrowed(on_world, &m.payload, to, how)?),
                    }
                }
            }
            let incoming: Vec<(usize, Vec<Scripted>)> =
                others.iter().map(|&r| (r, script(r, me, seed))).collect();
            receive_scripts((world, &dup), &incoming)?;
            rpar::wait_all(owned)?;
            reduced.wait()?;
            broadcast.wait()?;
            Ok(())
        })
    })?;
    let ranks = world.size() as u64;
    let want: Vec<u64> = (0..257).map(|k| k * ranks * (ranks + 1) / 2).collect();
    assert_eq!(summed, want, "an allreduce in flight during the mix");
    assert_eq!(root_says, [seed, 7, 11], "a bcast in flight during the mix");
    Ok(())
}

/// Starts the send of `payload` to `(dest, tag)` from its buffer, in the scope `s`.
fn isend_borrowed<'s>(
    s: &'s Scope<'s, '_>,
    payload: &'s Payload,
    (dest, tag): (usize, i32),
    how: How,
) -> Result<Request<'s>> {
    on_payload!(payload, |v, _kind| match how {
        How::Synchronous => s.issend(&v[..], dest, tag),
        _ => s.isend(&v[..], dest, tag),
    })
}

/// Starts the send of a copy of `payload` to `(dest, tag)` as an owned vector.
fn isend_owned(
    comm: &Comm,
    payload: &Payload,
    (dest, tag): (usize, i32),
) -> Result<Request<'static>> {
    on_payload!(payload.clone(), |v, _kind| comm.isend(v, dest, tag))
}

/// The messages of `script` (with their places in it) on the duplicate or not (`on_dup`)
/// whose tag is one of `tags`.
fn picked(script: &[Scripted], on_dup: bool, tags: &[i32]) -> VecDeque<(usize, Scripted)> {
    let all = script.iter().cloned().enumerate();
    all.filter(|(_, m)| m.on_dup == on_dup && tags.contains(&m.tag))
        .collect()
}

/// Receives the scripts `incoming` (each with its sender), in the order the module's header
/// gives.
fn receive_scripts(
    (world, dup): (&Comm, &Comm),
    incoming: &[(usize, Vec<Scripted>)],
) -> Result<()> {
    let from_any = |of: fn(&[Scripted]) -> VecDeque<(usize, Scripted)>| {
        incoming
            .iter()
            .map(|(source, script)| (*source, of(script)))
            .collect::<Vec<_>>()
    };
    receive_from_any_source(dup, ANY_TAG, from_any(|s| picked(s, true, &[0, 1, 2, 3])))?;
    for (source, script) in incoming {
        let zeros: Vec<(usize, Scripted)> = picked(script, false, &[0]).into();
        for (k, together) in zeros.chunks(POSTED_TOGETHER).enumerate() {
            receive_posted_together(world, *source, together, k % 2 == 0)?;
        }
    }
    receive_from_any_source(world, 1, from_any(|s| picked(s, false, &[1])))?;
    for (source, script) in incoming {
        for (i, m) in picked(script, false, &[2, 3]) {
            receive_one(world, (*source, ANY_TAG), &m, i)?;
        }
    }
    Ok(())
}

/// Receives the messages `expected` from each sender, the next one from whichever sender a
/// probe of `comm` on `ANY_SOURCE` and `tag` finds.
fn receive_from_any_source(
    comm: &Comm,
    tag: i32,
    mut expected: Vec<(usize, VecDeque<(usize, Scripted)>)>,
) -> Result<()> {
    for _ in 0..expected.iter().map(|(_, q)| q.len()).sum::<usize>() {
        let found = comm.probe(ANY_SOURCE, tag)?.status.source;
        let (_, queue) = expected
            .iter_mut()
            .find(|(source, _)| *source == found)
            .expect("a probe on ANY_SOURCE finds a rank that sent");
        let (i, m) = queue
            .pop_front()
            .unwrap_or_else(|| panic!("rank {found} sent more messages than scripted"));
        receive_one(comm, (found, tag), &m, i)?;
    }
    Ok(())
}

/// Receives `messages` (the next ones of one tag from `source`, with their places in its
/// script) with receives posted together, each into a buffer of its length, waited for last
/// to first (`backwards`) or as they complete.
fn receive_posted_together(
    world: &Comm,
    source: usize,
    messages: &[(usize, Scripted)],
    backwards: bool,
) -> Result<()> {
    let mut buffers: Vec<Payload> = messages.iter().map(|(_, m)| emptied(&m.payload)).collect();
    let mut requests = Vec::new();
    for (buf, (_, m)) in buffers.iter_mut().zip(messages) {
        let posted = on_payload!(buf, |v, _kind| world.irecv_into(&mut v[..], source, m.tag));
        requests.push(posted?);
    }
    let mut statuses: Vec<Option<Status>> = vec![None; requests.len()];
    if backwards {
        for (k, r) in requests.into_iter().enumerate().rev() {
            statuses[k] = Some(r.wait()?);
        }
    } else {
        while let Some((k, status)) = rpar::wait_any(&mut requests)? {
            statuses[k] = Some(status);
        }
        drop(requests);
    }
    for ((got, status), (i, want)) in buffers.iter().zip(statuses).zip(messages) {
        let what = format!(
            "posted receive of message {i} from rank {source} (tag {})",
            want.tag
        );
        let status = status.unwrap_or_else(|| panic!("the {what} never completed"));
        assert_eq!(
            (status.source, status.tag, status.count),
            (source, want.tag, payload_len(&want.payload)),
            "the status of the {what}"
        );
        assert_eq!(*got, want.payload, "the contents of the {what}");
    }
    Ok(())
}

/// A payload of the kind and length of `p`, of default values: a receive buffer for it.
fn emptied(p: &Payload) -> Payload {
    on_payload!(p, |v, kind| kind(vec![Default::default(); v.len()]))
}

/// The number of elements of a payload.
fn payload_len(p: &Payload) -> usize {
    on_payload!(p, |v, _kind| v.len())
}

/// Receives the `i`th message of `source`'s script (`want`) on `comm` with `tag`, as its
/// script says, checking its status and contents.
fn receive_one(comm: &Comm, (source, tag): (usize, i32), want: &Scripted, i: usize) -> Result<()> {
    let what = format!("message {i} from rank {source} (tag {})", want.tag);
    let len = payload_len(&want.payload);
    let expect = (source, want.tag, len);
    let probed = match want.receipt {
        Receipt::Probed => Some(comm.probe(source, tag)?.status),
        Receipt::Polled => loop {
            if let Some(p) = comm.iprobe(source, tag)? {
                break Some(p.status);
            }
        },
        _ => None,
    };
    if let Some(st) = probed {
        assert_eq!((st.source, st.tag, st.count), expect, "the probe of {what}");
    }
    let (got, status) = on_payload!(&want.payload, |v, kind| {
        let (got, status) = receive_like(comm, (source, tag), v, want.receipt)?;
        (kind(got), status)
    });
    assert_eq!(
        (status.source, status.tag, status.count),
        expect,
        "the status of {what}"
    );
    assert_eq!(got, want.payload, "the contents of {what}");
    Ok(())
}

/// Receives a message from `(source, tag)` of `want`'s element type and length, as `receipt`
/// says.
fn receive_like<T: Datatype + Default + Clone + Debug>(
    comm: &Comm,
    (source, tag): (usize, i32),
    want: &[T],
    receipt: Receipt,
) -> Result<(Vec<T>, Status)> {
    let mut buf = vec![T::default(); want.len()];
    match receipt {
        Receipt::Vector | Receipt::Probed => comm.recv::<T>(source, tag),
        Receipt::Buffer | Receipt::Polled => {
            let status = comm.recv_into(&mut buf[..], source, tag)?;
            Ok((buf, status))
        }
        Receipt::Matched => {
            let m = MatchedMessage::probe(comm, source, tag)?;
            let status = m.recv_into(&mut buf[..])?;
            Ok((buf, status))
        }
    }
}

/// Patterns of MPICH's `pingping`, `sendflood` and `sendself`: ranks paired off send each other
/// messages up to 2 MiB with blocking sends before either receives; every rank floods rank 0
/// with blocking sends, which it takes under `ANY_SOURCE` and `ANY_TAG`, each sender's in the
/// order sent; every rank sends itself, then receives.
pub(crate) fn floods(world: &Comm) -> Result<()> {
    let (me, p) = (world.rank(), world.size());
    let stamp = |from: usize, i: usize, len: usize| -> Vec<u32> {
        (0..len)
            .map(|k| (from * 1_000_000 + i * 1000 + k) as u32)
            .collect()
    };
    // pingping: both send first (the larger sizes cannot be buffered by MPI's eager protocol)
    let partner = me ^ 1;
    if partner < p {
        for (i, len) in [0usize, 1, 300, 30_000, 1 << 19].into_iter().enumerate() {
            world.send(&stamp(me, i, len)[..], partner, 5)?;
            let (got, st) = world.recv::<u32>(partner, 5)?;
            assert_eq!((st.source, st.count), (partner, len), "pingping {i}");
            assert_eq!(got, stamp(partner, i, len), "pingping {i}");
        }
    }
    // sendflood
    const FLOOD: usize = 150;
    let len_of = |i: usize| [0usize, 3, 40, 2000, 9000][i % 5];
    if me == 0 {
        let mut next = vec![0usize; p];
        for _ in 0..FLOOD * (p - 1) {
            let (got, st) = world.recv::<u32>(rpar::ANY_SOURCE, rpar::ANY_TAG)?;
            let i = next[st.source];
            assert_eq!(st.tag, (i % 3) as i32, "flood from {}", st.source);
            assert_eq!(
                got,
                stamp(st.source, i, len_of(i)),
                "flood {i} from {}",
                st.source
            );
            next[st.source] += 1;
        }
    } else {
        for i in 0..FLOOD {
            world.send(&stamp(me, i, len_of(i))[..], 0, (i % 3) as i32)?;
        }
    }
    // sendself, through requests and a scope
    let mine: Vec<Vec<u32>> = (0..6).map(|i| stamp(me, i, len_of(i) * 3)).collect();
    world.scope(|s| {
        let sent: Vec<_> = mine
            .iter()
            .map(|m| s.isend(&m[..], me, 9))
            .collect::<Result<_>>()?;
        for (i, m) in mine.iter().enumerate() {
            let (got, _) = world.recv::<u32>(me, 9)?;
            assert_eq!(&got, m, "sendself {i}");
        }
        rpar::wait_all(sent).map(drop)
    })
}
