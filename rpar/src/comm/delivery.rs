//! Delivering a matched message into a receive buffer: the type-signature check, the
//! truncation check, and the one copy (or the move of an owned `Vec`).

use crate::comm::Status;
use crate::datatype::Datatype;
use crate::transport::{Data, ElemType, Endpoint, Matched, Message};
use crate::Error;
use std::mem::MaybeUninit;

/// Why a matched message was not delivered. Delivery takes the message by reference and only
/// takes its data once it delivers, so the message is never moved on the way to the buffer.
#[derive(Debug)]
pub(crate) enum Undelivered {
    /// Refused (type mismatch, truncation): the message is untouched, to be put back. (Boxed:
    /// the way that succeeds then moves a small `Result`.)
    Refused(Box<Error>),
    /// Its sender withdrew the data (the run is aborting): there is nothing to put back.
    Withdrawn,
}

/// How many `recv` elements the message fills, if the types agree (MPI's type-signature rule).
///
/// The same Rust type always agrees. Different types agree when both are gap-free in memory
/// order (no padding, fields in map order) and their sequences of basic types are the same,
/// e.g. `[f64; 2]` × 3 and `f64` × 6. A typed message agrees with a receive of the same
/// sequence of basic types, padded or not. An empty message matches every type.
#[inline]
pub(crate) fn received_count(msg: &Message, recv: &ElemType) -> Option<usize> {
    // the common case, inlined: a plain message of the receive's own type
    if !matches!(msg.data, Data::Typed(_)) && msg.elem.id == recv.id {
        return Some(msg.count);
    }
    converted_count(msg, recv)
}

/// [`received_count`] of a typed message, or one of another element type.
#[inline(never)]
fn converted_count(msg: &Message, recv: &ElemType) -> Option<usize> {
    if let Data::Typed(t) = &msg.data {
        return super::typed::plain_received_count(t, recv);
    }
    if msg.elem.id == recv.id {
        return Some(msg.count);
    }
    let bytes = msg.bytes();
    if bytes == 0 {
        return Some(0);
    }
    if recv.size == 0 || !bytes.is_multiple_of(recv.size) {
        return None;
    }
    let count = bytes / recv.size;
    msg.elem.reads_as(msg.count, *recv, count).then_some(count)
}

fn mismatch(m: &Matched, recv: &ElemType) -> Error {
    Error::TypeMismatch {
        sent: format!("{} x {}", m.message.count, (m.message.elem.name)()),
        expected: (recv.name)().to_string(),
        source_rank: m.header.source as usize,
    }
}

/// Copies the message's data, `bytes` bytes, to `dst`, as `count` elements of `recv` (the count
/// [`received_count`] gave). False if the data was withdrawn by its sender (the run is aborting).
///
/// # Safety
///
/// `dst` must be valid for writes of `count` elements of `recv`, and the message's bytes must
/// form valid values of it (guaranteed by [`received_count`]).
unsafe fn copy_out(data: Data, bytes: usize, dst: *mut u8, recv: &ElemType, count: usize) -> bool {
    match data {
        // SAFETY: an inline payload holds `bytes` initialised bytes; dst is valid (caller).
        Data::Inline(buf) => unsafe {
            std::ptr::copy_nonoverlapping(buf.as_ptr(), dst, bytes);
            true
        },
        // SAFETY: an owned buffer holds `bytes` initialised bytes; dst is valid (caller).
        Data::Owned(v) => unsafe {
            std::ptr::copy_nonoverlapping(v.as_ptr(), dst, bytes);
            true
        },
        // SAFETY: dst is valid for `bytes` bytes, the size the sender published.
        Data::Borrowed(ticket) => unsafe { ticket.copy_to(dst) },
        Data::Empty => bytes == 0,
        // SAFETY: dst is valid for `count` elements of `recv`, which hold `bytes` data bytes,
        // the packed size of the typed message. A receiving type gap-free in memory order is
        // laid out as its packed form, so the packed bytes are copied in as they are; any other
        // (padding, or fields Rust placed in another order than the map's) is unpacked by its
        // map, which names where each packed byte goes.
        Data::Typed(t) => unsafe {
            if recv.dense {
                t.copy_packed_to(dst)
            } else {
                t.unpack_to((recv.compiled)(), count, dst)
            }
        },
    }
}

/// A type-erased receive buffer: `capacity` elements of `elem` at `ptr`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawRecvBuf {
    pub(crate) ptr: *mut u8,
    pub(crate) capacity: usize,
    pub(crate) elem: ElemType,
}

impl RawRecvBuf {
    pub(crate) fn of<T: Datatype>(buf: &mut [T]) -> Self {
        RawRecvBuf {
            ptr: buf.as_mut_ptr().cast(),
            capacity: buf.len(),
            elem: ElemType::of::<T>(),
        }
    }
}

/// Delivers `m` into `buf`, taking its data. On a type mismatch or truncation the message is
/// left as it was and refused with the error, so that the caller can put it back in the queue.
///
/// # Safety
///
/// `buf` must describe a live, exclusively borrowed buffer.
pub(crate) unsafe fn deliver_into(
    m: &mut Matched,
    buf: RawRecvBuf,
) -> std::result::Result<Status, Undelivered> {
    let Some(count) = received_count(&m.message, &buf.elem) else {
        return Err(Undelivered::Refused(Box::new(mismatch(m, &buf.elem))));
    };
    let bytes = m.message.bytes();
    if count > buf.capacity {
        return Err(Undelivered::Refused(Box::new(Error::Truncated {
            needed: bytes,
            capacity: buf.capacity * buf.elem.size,
            source_rank: m.header.source as usize,
            tag: m.header.tag,
        })));
    }
    valid_values(m)?;
    let data = std::mem::replace(&mut m.message.data, Data::Empty);
    // SAFETY: count <= capacity, so the message's bytes fit in `buf` (caller: live and
    // exclusive); received_count checked that the bytes are values of the receiving type
    // (valid_values, that bool and char bytes from a packed buffer are valid ones).
    if unsafe { copy_out(data, bytes, buf.ptr, &buf.elem, count) } {
        Ok(status(m, count))
    } else {
        Err(Undelivered::Withdrawn)
    }
}

/// Delivers `m` as a new `Vec<T>`, taking its data: moves an owned `Vec<T>` without copying,
/// else copies once. A type mismatch leaves the message as it was (see [`deliver_into`]).
pub(crate) fn deliver_vec<T: Datatype>(
    m: &mut Matched,
) -> std::result::Result<(Vec<T>, Status), Undelivered> {
    let elem = ElemType::of::<T>();
    let Some(count) = received_count(&m.message, &elem) else {
        return Err(Undelivered::Refused(Box::new(mismatch(m, &elem))));
    };
    let bytes = m.message.bytes();
    let status = status(m, count);
    valid_values(m)?;
    let data = match std::mem::replace(&mut m.message.data, Data::Empty) {
        Data::Owned(v) => match v.into_vec::<T>() {
            Ok(v) => return Ok((v, status)),
            Err(v) => Data::Owned(v),
        },
        data => data,
    };
    let mut v: Vec<MaybeUninit<T>> = Vec::with_capacity(count);
    // SAFETY: the Vec has room for `count` elements, which is `bytes` bytes; the bytes are
    // valid `T`s (received_count). After a successful copy all `count` are initialised.
    unsafe {
        if !copy_out(data, bytes, v.as_mut_ptr().cast(), &elem, count) {
            return Err(Undelivered::Withdrawn);
        }
        v.set_len(count);
        let mut v = std::mem::ManuallyDrop::new(v);
        Ok((
            Vec::from_raw_parts(v.as_mut_ptr().cast::<T>(), v.len(), v.capacity()),
            status,
        ))
    }
}

/// Refuses a message whose packed bytes bound for a `bool` or `char` are no valid value of it
/// ([`Error::InvalidValue`]; the message stays queued, like a type mismatch). Bytes a local
/// sender's own values gave are valid anyway; those that came over the MPI transport, from
/// another process, are checked here before anything is written, as `unpack` checks its input.
pub(crate) fn valid_values(m: &mut Matched) -> std::result::Result<(), Undelivered> {
    match &mut m.message.data {
        Data::Typed(t) => t
            .check_values("recv")
            .map_err(|e| Undelivered::Refused(Box::new(e))),
        _ => Ok(()),
    }
}

/// The status of receiving `count` elements from `m`.
fn status(m: &Matched, count: usize) -> Status {
    Status::of(m.header.source as usize, m.header.tag, count)
}

/// The error of a delivery of `m` that failed: a refused message first goes back to its place
/// in the queue; a withdrawn one means the run is aborting. (Callers match on the delivery and
/// hand `m` over only here, so that the message is not moved on the way that succeeds.)
#[cold]
pub(crate) fn undelivered(failure: Undelivered, m: Matched, ep: &Endpoint) -> Error {
    match failure {
        Undelivered::Refused(err) => {
            ep.put_back(m);
            *err
        }
        Undelivered::Withdrawn => ep.fabric().abort_error(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::datatype::TypeMap;
    use crate::transport::{Header, TypedData, TypedSource};

    /// A typed message of `count` elements of `ty`, packed as `bytes`, as the MPI transport
    /// makes of what arrives from another process.
    pub(crate) fn arrived(ty: &TypeMap, count: usize, bytes: Vec<u8>) -> Matched {
        let header = Header {
            context: 0,
            source: 1,
            tag: 0,
            flow: 0,
            call: None,
        };
        let data = Data::Typed(Box::new(TypedData {
            ty: ty.commit(),
            count,
            source: TypedSource::Packed(bytes),
            ack: Default::default(),
        }));
        let message = Message {
            elem: ElemType::typed(),
            count,
            data,
        };
        Matched::for_test(header, message)
    }

    /// No padding, but Rust puts `b` first: the map is not in memory order.
    #[derive(crate::Datatype, Clone, Copy, Debug, PartialEq)]
    struct Reordered {
        a: bool,
        b: u32,
        c: u16,
        d: u8,
    }

    #[test]
    fn packed_bytes_from_another_process_go_where_the_receiving_map_says() {
        // what the MPI transport makes of a Reordered sent from another process: packed in
        // map order, as a dense stand-in of the sender's signature
        let sent = [
            Reordered {
                a: true,
                b: 0x0a0b_0c0d,
                c: 0x0203,
                d: 4,
            },
            Reordered {
                a: false,
                b: 7,
                c: 8,
                d: 9,
            },
        ];
        let packed = Reordered::type_map()
            .commit()
            .pack_to_vec(&sent, 2)
            .unwrap();
        let stand_in = TypeMap::structure(&[
            (1, 0, &bool::type_map()),
            (1, 1, &u32::type_map()),
            (1, 5, &u16::type_map()),
            (1, 7, &u8::type_map()),
        ])
        .and_then(|t| t.resized(0, 8))
        .unwrap();
        let mut buf = [Reordered {
            a: false,
            b: 0,
            c: 0,
            d: 0,
        }; 2];
        let mut m = arrived(&stand_in, 2, packed.clone());
        // SAFETY: `buf` is a live, exclusively borrowed buffer of two Reordered.
        let st = unsafe { deliver_into(&mut m, RawRecvBuf::of(&mut buf)) }.expect("delivered");
        assert_eq!((st.count, buf), (2, sent));
        let mut m = arrived(&stand_in, 2, packed);
        let (got, _) = deliver_vec::<Reordered>(&mut m).expect("delivered");
        assert_eq!(got, sent);
    }

    fn refused_value(r: std::result::Result<impl std::fmt::Debug, Undelivered>) -> Error {
        match r {
            Err(Undelivered::Refused(e)) => *e,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn packed_bool_and_char_bytes_from_another_process_are_validated() {
        let flags = TypeMap::contiguous(3, &bool::type_map()).unwrap();
        let mut buf = [false; 3];
        let mut m = arrived(&flags, 1, vec![1, 0, 7]);
        // SAFETY: `buf` is a live, exclusively borrowed buffer of three bools.
        let err = refused_value(unsafe { deliver_into(&mut m, RawRecvBuf::of(&mut buf)) });
        assert!(
            matches!(err, Error::InvalidValue { position: 2, ref bytes, .. } if bytes == &[7]),
            "{err}"
        );
        assert_eq!(buf, [false; 3], "nothing written");
        assert!(
            matches!(m.message.data, Data::Typed(_)),
            "the message stays"
        );
        let err = refused_value(deliver_vec::<bool>(&mut m));
        assert!(matches!(err, Error::InvalidValue { .. }), "{err}");
        let mut m = arrived(&flags, 1, vec![1, 0, 1]);
        // SAFETY: as above.
        unsafe { deliver_into(&mut m, RawRecvBuf::of(&mut buf)) }.expect("valid bools");
        assert_eq!(buf, [true, false, true]);

        let surrogate = 0xD800u32.to_ne_bytes().to_vec();
        let mut m = arrived(&char::type_map(), 1, surrogate);
        let err = refused_value(deliver_vec::<char>(&mut m));
        assert!(
            matches!(err, Error::InvalidValue { position: 0, .. }),
            "{err}"
        );
        let mut m = arrived(&char::type_map(), 1, ('é' as u32).to_ne_bytes().to_vec());
        let (got, _) = deliver_vec::<char>(&mut m).expect("a valid char");
        assert_eq!(got, ['é']);
    }
}
