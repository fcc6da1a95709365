//! Point-to-point messages with committed derived datatypes (MPI_Send / MPI_Recv with a
//! datatype and a count): what [`Comm::send`] and [`Comm::recv_into`] run for a
//! [`Typed`](crate::Typed) view.
//!
//! Every byte a type would touch is bounds- and layout-checked against the Rust buffer before
//! anything is copied. Small messages are packed by the sender (like MPI's eager protocol);
//! large ones use the rendezvous of `transport/rendezvous.rs`: the receiver copies from the
//! sender's memory straight into its own, segment by segment, with no pack buffer between.
//! Typed and plain messages interoperate: a plain `send` can be received with `recv_typed`,
//! and a `send_typed` with a plain `recv` or `recv_into` of any `Datatype` — padded or not, its
//! fields in any order — when the signatures agree: its packed bytes are copied in as they are
//! where the receiving type is laid out as its packed form (gap-free, in map order), unpacked
//! by its map elsewhere.

use super::delivery::{undelivered, valid_values, Undelivered};
use super::p2p::check_send_tag;
use super::{Comm, Status, PROC_NULL, UNDEFINED};
use crate::datatype::{engine, Access, CommittedType, Compiled, Datatype, SignatureMatch};
use crate::transport::{
    Data, ElemType, Matched, Message, TypedData, TypedSource, RENDEZVOUS_BYTES,
};
use crate::{Error, Result};
use std::sync::Arc;

impl Comm {
    /// Sends `count` elements laid out by the committed type `ty`, with displacement 0 at
    /// element `origin` of `buf` (MPI_Send with a derived datatype; what
    /// [`Comm::send`](super::Comm::send) of a [`Typed`](crate::Typed) view runs). With `eager`
    /// (a non-blocking send, which must not keep `buf`), the data is packed now whatever its
    /// size; else above 32 KiB (`RENDEZVOUS_BYTES`) the receiver copies it from `buf`, segment
    /// by segment, straight into its own buffer: no pack buffer (`tests/datatype_single_copy.rs`
    /// counts the allocations). Up to 32 KiB the sender packs it, as MPI's eager protocol does.
    #[allow(clippy::too_many_arguments)] // MPI_Send's own list, with the origin and the mode
    pub(crate) fn send_typed_in<T: Datatype>(
        &self,
        buf: &[T],
        origin: usize,
        ty: &CommittedType,
        count: usize,
        (dest, tag): (usize, i32),
        eager: bool,
    ) -> Result<()> {
        let _span = self.span("send_typed", Some(dest), Some(tag), ty.pack_size(count));
        check_send_tag(tag)?;
        let c = &*ty.inner;
        let base = c.check_slice("send_typed", buf, origin, count, Access::Read)?;
        if dest == PROC_NULL {
            return Ok(());
        }
        self.endpoint().check_live()?;
        self.check_rank(dest)?;
        // SAFETY: check_slice returned the byte offset of element `origin`, within `buf`.
        let start = unsafe { buf.as_ptr().cast::<u8>().add(base) };
        let bytes = c.packed_bytes("send_typed", count)?;
        let context = self.p2p_context();
        let elem = ElemType::typed();
        let to = self.group[dest];
        if let Some(wire) = self.endpoint().wire_to(to) {
            let header = self.header(context, tag);
            // SAFETY: check_slice proved that every byte the type names for `count` elements
            // from `start` lies in `buf`.
            return unsafe { wire.send_typed(to, &header, ty, count, start) };
        }
        if eager || bytes <= RENDEZVOUS_BYTES {
            let mut packed = vec![0u8; bytes];
            // SAFETY: check_slice proved that every byte the type names for `count` elements
            // from `start` lies in `buf` and is data of the entry's basic type; `packed` has `bytes` bytes.
            unsafe { engine::gather(c, count, start, packed.as_mut_ptr()) };
            let source = TypedSource::Packed(packed);
            let data = Data::Typed(Box::new(TypedData {
                ty: ty.clone(),
                count,
                source,
                ack: Default::default(),
            }));
            return self.post_message(context, Message { elem, count, data }, dest, tag);
        }
        // SAFETY: `buf` stays borrowed, unmodified, until the offer is finished below (or
        // dropped on an unwind); the receiver reads only the bytes the type names, which
        // check_slice proved lie in `buf`.
        let (offer, ticket) = unsafe { self.offer(start, bytes, (context, dest, tag), false) };
        let source = TypedSource::Borrowed(ticket);
        let data = Data::Typed(Box::new(TypedData {
            ty: ty.clone(),
            count,
            source,
            ack: Default::default(),
        }));
        self.post_message(context, Message { elem, count, data }, dest, tag)?;
        crate::fault::point("rendezvous: typed offer")?;
        offer.finish()
    }

    /// Receives into `count` elements laid out by the committed type `ty`, with displacement 0
    /// at element `origin` of `buf` (MPI_Recv with a derived datatype; what
    /// [`Comm::recv_into`](super::Comm::recv_into) of a [`Typed`](crate::Typed) view runs).
    /// The message's type signature must be a prefix of the receive's (MPI's rule);
    /// `Status::count` is the number of elements of `ty` received,
    /// [`UNDEFINED`](crate::UNDEFINED) if that is not a whole number (MPI_Get_count).
    pub(crate) fn recv_typed_in<T: Datatype>(
        &self,
        buf: &mut [T],
        origin: usize,
        ty: &CommittedType,
        count: usize,
        source: usize,
        tag: i32,
    ) -> Result<Status> {
        let _span = self.receive_span("recv_typed", source, tag);
        let pattern = self.pattern(self.p2p_context(), source, tag)?;
        let c = &*ty.inner;
        let base = c.check_slice("recv_typed", buf, origin, count, Access::Write)?;
        c.packed_bytes("recv_typed", count)?; // so that no count of bytes below overflows
        let Some(pattern) = pattern else {
            return Ok(Status::null());
        };
        let ep = self.endpoint();
        let mut m = ep.recv(&pattern)?;
        self.accept_arrival(&m)?;
        // SAFETY: `base` is the offset of element `origin` within `buf`, and check_slice proved
        // that every byte of `count` elements of the type from there lies in the exclusively
        // borrowed `buf`, on a value of the entry's basic type.
        let delivered =
            unsafe { deliver_typed(&mut m, (c, count, buf.as_mut_ptr().cast::<u8>().add(base))) };
        match delivered {
            Ok(status) => Ok(status),
            Err(failure) => Err(undelivered(failure, m, ep)),
        }
    }
}

/// The sender's compiled type and count of a message, and whether it is a plain message of a
/// type gap-free in memory order (then its bytes are its packed bytes).
fn sent_type(message: &Message) -> (SentType, usize, bool) {
    match &message.data {
        Data::Typed(t) => (SentType::Committed(t.ty.inner.clone()), t.count, false),
        _ => (
            SentType::Plain((message.elem.compiled)()),
            message.count,
            message.elem.dense,
        ),
    }
}

/// A sent message's compiled type: its committed type's, shared with it, or its Rust type's.
enum SentType {
    Committed(Arc<Compiled>),
    Plain(&'static Compiled),
}

impl std::ops::Deref for SentType {
    type Target = Compiled;

    fn deref(&self) -> &Compiled {
        match self {
            SentType::Committed(c) => c,
            SentType::Plain(c) => c,
        }
    }
}

/// Delivers a matched message into a typed receive, taking its data. On a type mismatch or
/// truncation the message is left as it was and refused (see `deliver_into`).
///
/// # Safety
///
/// Every byte of `count` elements of `ty` at `dst` must be writable, exclusively ours, and a
/// value of the entry's basic type in the buffer's layout.
unsafe fn deliver_typed(
    m: &mut Matched,
    (ty, count, dst): (&Compiled, usize, *mut u8),
) -> std::result::Result<Status, Undelivered> {
    let (sent, sent_count, dense) = sent_type(&m.message);
    let source_rank = m.header.source as usize;
    let bytes = sent.size * sent_count;
    match ty.accepts(count, &sent, sent_count) {
        SignatureMatch::Accepted => {}
        SignatureMatch::Truncated => {
            let err = Error::Truncated {
                needed: bytes,
                capacity: ty.size * count,
                source_rank,
                tag: m.header.tag,
            };
            return Err(Undelivered::Refused(Box::new(err)));
        }
        SignatureMatch::Mismatch => {
            let err = Error::TypeMismatch {
                sent: sent.describe(sent_count),
                expected: ty.describe(count),
                source_rank,
            };
            return Err(Undelivered::Refused(Box::new(err)));
        }
    }
    valid_values(m)?;
    let mut status = Status::of(source_rank, m.header.tag, whole_elements(bytes, ty.size));
    status.bytes = bytes;
    let to = (ty, count, dst);
    // SAFETY: (every arm) the signatures agree, so the destination has at least `bytes` data
    // bytes (caller: writable, ours) and every one of them receives a byte of the same basic
    // type from the sender — bool and char bytes come from valid values of the sender, or were
    // checked by valid_values (packed bytes from another process). Sources:
    // an inline or owned payload holds the plain message's `bytes` bytes, laid out by the
    // sender's element type; a packed payload holds `bytes` packed bytes; a rendezvous hands
    // the sender's buffer, in which the sender checked its type's bytes lie.
    let copied = unsafe {
        let from = |p: *const u8| {
            if dense {
                engine::scatter_bytes(p, bytes, to);
            } else {
                engine::transfer((&sent, sent_count, p), to, bytes);
            }
        };
        match std::mem::replace(&mut m.message.data, Data::Empty) {
            Data::Inline(buf) => {
                from(buf.as_ptr());
                true
            }
            Data::Owned(v) => {
                from(v.as_ptr());
                true
            }
            Data::Borrowed(ticket) => ticket.read_with(from),
            Data::Empty => bytes == 0,
            Data::Typed(t) => match t.source {
                TypedSource::Packed(v) => {
                    engine::scatter_bytes(v.as_ptr(), bytes, to);
                    true
                }
                // into a receive gap-free in memory order the sender's segments are gathered
                // straight in
                TypedSource::Borrowed(ticket) if ty.dense => {
                    ticket.read_with(|p| engine::gather(&sent, sent_count, p, dst))
                }
                TypedSource::Borrowed(ticket) => {
                    ticket.read_with(|p| engine::transfer((&sent, sent_count, p), to, bytes))
                }
                TypedSource::Withdrawn => false,
                // a payload still in MPI (another process's): into a receive gap-free in
                // memory order straight, else its packed bytes scattered
                TypedSource::Remote(payload) if ty.dense => {
                    payload.receive_into(dst);
                    true
                }
                TypedSource::Remote(payload) => {
                    engine::scatter_bytes(payload.receive().as_ptr(), bytes, to);
                    true
                }
            },
        }
    };
    if copied {
        Ok(status)
    } else {
        Err(Undelivered::Withdrawn)
    }
}

/// MPI_Get_count: how many elements of `size` bytes `bytes` bytes are, [`UNDEFINED`] if not a
/// whole number of them (0 for elements of no data, as MPI says).
fn whole_elements(bytes: usize, size: usize) -> usize {
    match (bytes.checked_div(size), bytes.checked_rem(size)) {
        (Some(n), Some(0)) => n,
        (Some(_), _) => UNDEFINED,
        (None, _) => 0,
    }
}

/// How many elements of `recv` a plain receive gets from a typed message, if it accepts it:
/// the message must be a whole number of them, with the same sequence of basic types. The
/// receiving type may have padding, or fields in another order than its map's: the packed
/// bytes are then unpacked by its map.
pub(crate) fn plain_received_count(t: &TypedData, recv: &ElemType) -> Option<usize> {
    let bytes = t.ty.pack_size(t.count);
    if bytes == 0 {
        return Some(0);
    }
    let ours = (recv.compiled)();
    // packed, an element of the receiving type is its data bytes (padding is not sent)
    if ours.size == 0 || !bytes.is_multiple_of(ours.size) {
        return None;
    }
    let count = bytes / ours.size;
    ours.same_signature(count, &t.ty.inner, t.count)
        .then_some(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::delivery::tests::arrived;
    use crate::datatype::TypeMap;

    #[test]
    fn a_typed_receive_validates_packed_bool_bytes_from_another_process() {
        let pairs = TypeMap::vector(2, 1, 2, &bool::type_map()).unwrap();
        let ty = pairs.commit();
        let mut buf = [false; 3];
        let mut m = arrived(
            &TypeMap::contiguous(2, &bool::type_map()).unwrap(),
            1,
            vec![1, 2],
        );
        // SAFETY: the type's bytes 0 and 2 lie in `buf`, which is ours, and hold bools.
        let got = unsafe { deliver_typed(&mut m, (&ty.inner, 1, buf.as_mut_ptr().cast())) };
        match got {
            Err(Undelivered::Refused(e)) => {
                assert!(matches!(*e, Error::InvalidValue { position: 1, .. }), "{e}")
            }
            other => panic!("expected InvalidValue, got {other:?}"),
        }
        assert_eq!(buf, [false; 3], "nothing written");
        let mut m = arrived(
            &TypeMap::contiguous(2, &bool::type_map()).unwrap(),
            1,
            vec![1, 1],
        );
        // SAFETY: as above.
        unsafe { deliver_typed(&mut m, (&ty.inner, 1, buf.as_mut_ptr().cast())) }.unwrap();
        assert_eq!(buf, [true, false, true]);
    }
}
