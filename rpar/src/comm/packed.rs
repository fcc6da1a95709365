//! Receiving a message as packed bytes (MPI_PACKED on the receiving side): whatever its type,
//! a message can be received as the bytes `MPI_Pack` would make of it, to be unpacked later
//! with [`CommittedType::unpack`](crate::CommittedType::unpack) (MPI-4.0 §4.2: "a message sent
//! with any type … can be received using the type MPI_PACKED").

use super::buffer::RecvBuf;
use super::delivery::{undelivered, Undelivered};
use super::{Comm, Status};
use crate::datatype::engine;
use crate::transport::{Data, Matched};
use crate::{Error, Result};

/// A receive buffer of packed bytes (MPI_PACKED): `comm.recv_into(Packed(&mut bytes), src,
/// tag)` takes any message and stores its data packed, as
/// [`CommittedType::pack`](crate::CommittedType::pack) of the sender's type would; the
/// status's `count` is the number of bytes.
///
/// ```
/// use rpar::{Datatype, Packed, TypeMap};
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         return world.send(&[(1u8, 2.5f64), (3, 4.5)][..], 1, 0); // padded tuples
///     }
///     let mut bytes = [0u8; 64];
///     let st = world.recv_into(Packed(&mut bytes[..]), 0, 0)?;
///     assert_eq!(st.count, 18); // 2 x (1 + 8): no padding in the packed form
///     let pair = <(u8, f64)>::type_map().commit();
///     let mut back = [(0u8, 0.0f64); 2];
///     let mut position = 0;
///     pair.unpack(&bytes[..st.count], &mut position, &mut back[..], 2)?;
///     assert_eq!(back, [(1, 2.5), (3, 4.5)]);
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct Packed<'a>(pub &'a mut [u8]);

impl super::buffer::sealed::Sealed for Packed<'_> {}

impl RecvBuf for Packed<'_> {
    fn recv(self, comm: &Comm, source: usize, tag: i32) -> Result<Status> {
        let _span = comm.receive_span("recv_packed", source, tag);
        let Some(pattern) = comm.pattern(comm.p2p_context(), source, tag)? else {
            return Ok(Status::null());
        };
        let ep = comm.endpoint();
        let mut m = ep.recv(&pattern)?;
        comm.accept_arrival(&m)?;
        match deliver_packed(&mut m, self.0) {
            Ok(status) => Ok(status),
            Err(failure) => Err(undelivered(failure, m, ep)),
        }
    }
}

/// Stores `m`'s data packed in `dst`, taking it; a message too large for `dst` is refused
/// (truncation) and left as it was.
fn deliver_packed(m: &mut Matched, dst: &mut [u8]) -> std::result::Result<Status, Undelivered> {
    let msg = &m.message;
    let (elem, count) = (msg.elem, msg.count);
    let compiled = (!matches!(msg.data, Data::Typed(_)) && !elem.dense).then(|| (elem.compiled)());
    let bytes = match &compiled {
        Some(c) => c.size * count,
        None => msg.bytes(),
    };
    if bytes > dst.len() {
        return Err(Undelivered::Refused(Box::new(Error::Truncated {
            needed: bytes,
            capacity: dst.len(),
            source_rank: m.header.source as usize,
            tag: m.header.tag,
        })));
    }
    let out = dst.as_mut_ptr();
    // a plain message of a type with gaps is packed by its map; the others are their bytes
    let pack = |src: *const u8| match &compiled {
        // SAFETY: `src` holds `count` elements of the message's type, laid out in memory;
        // `out` has room for their `bytes` packed bytes (checked above).
        Some(c) => unsafe { engine::gather(c, count, src, out) },
        // SAFETY: `src` holds the message's `bytes` bytes, which are its packed bytes.
        None => unsafe { std::ptr::copy_nonoverlapping(src, out, bytes) },
    };
    let copied = match std::mem::replace(&mut m.message.data, Data::Empty) {
        Data::Inline(buf) => {
            pack(buf.as_ptr());
            true
        }
        Data::Owned(v) => {
            pack(v.as_ptr());
            true
        }
        // SAFETY: the ticket hands `pack` the sender's buffer while it is kept alive.
        Data::Borrowed(ticket) => unsafe { ticket.read_with(pack) },
        Data::Empty => bytes == 0,
        // SAFETY: `out` has room for the typed message's packed size (checked above).
        Data::Typed(t) => unsafe { t.copy_packed_to(out) },
    };
    if copied {
        Ok(Status::of(m.header.source as usize, m.header.tag, bytes))
    } else {
        Err(Undelivered::Withdrawn)
    }
}
