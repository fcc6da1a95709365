//! The bytes of one rpar message on MPI: its payload in MPI's packed format, then its matching
//! header (communicator context, source, tag, trace flow id, the collective call it belongs
//! to), the type signature of one sent element (run-length coded), the sent count, the tag of
//! the MPI message that carries the payload if it is not this one (0: it is), the number of a
//! synchronous send to acknowledge (0: none), the class the message defines (0: none; later
//! messages of a class travel without a header, `classes.rs`), and last the header's length.
//! The header goes last so that the receiver can cut it off and keep the payload in the buffer
//! MPI received it into: no copy beyond MPI's own.
//!
//! The payload is packed by the sender's type map (padding is never read) and arrives as a
//! message with the sender's signature (a plain message of a Rust type when an element is one
//! value of a basic type, else of a committed stand-in type: `StandIns`), so the receiver
//! checks and unpacks it by MPI's type-signature rules whatever its own layout — as MPI does
//! between machines.

use super::stand_ins::{StandIn, StandIns};
use crate::datatype::BasicType;
use crate::transport::{CallKey, CollectiveCall, Header};
use crate::{Error, Result};
use std::collections::HashSet;
use std::sync::Mutex;

/// The run-length coded type signature of one element: `(basic type, repeats)` pairs.
pub(crate) type Signature = Vec<(BasicType, usize)>;

/// What a message's header says, decoded.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub(crate) header: Header,
    /// Elements sent, of the sender's type.
    pub(crate) count: usize,
    /// What stands in for the sender's type.
    pub(crate) stand_in: StandIn,
    /// The packed payload's length: it is the received buffer's start, before the header
    /// (none if it travels apart).
    pub(crate) payload_len: usize,
    /// The tag of the MPI message that carries the payload, if not this one (0).
    pub(crate) payload_tag: u32,
    /// A synchronous send's number, to acknowledge when a receive matches it; 0 for others.
    pub(crate) sync: u32,
    /// The class this message defines (`classes.rs`); 0: none.
    pub(crate) class: u32,
}

/// What a header says of its message beside the matching header: the count of elements sent,
/// their type signature, the tag its payload travels on if apart (0: in this message), and
/// the number of a synchronous send (0: none).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contents<'a> {
    pub(crate) count: usize,
    pub(crate) signature: &'a [(BasicType, usize)],
    pub(crate) payload_tag: u32,
    pub(crate) sync: u32,
    pub(crate) class: u32,
}

impl<'a> Contents<'a> {
    /// A message of `count` elements of `signature` that carries its payload, not from a
    /// synchronous send.
    pub(crate) fn of(count: usize, signature: &'a [(BasicType, usize)]) -> Self {
        Contents {
            count,
            signature,
            payload_tag: 0,
            sync: 0,
            class: 0,
        }
    }
}

/// Appends the header of a message (after its payload, already in `out`).
pub(crate) fn append_header(out: &mut Vec<u8>, header: &Header, contents: Contents<'_>) {
    let Contents {
        count,
        signature: sig,
        payload_tag,
        sync,
        class,
    } = contents;
    let start = out.len();
    put_u32(out, header.context);
    put_u32(out, header.source);
    out.extend_from_slice(&header.tag.to_le_bytes());
    put_u32(out, header.flow);
    put_u64(out, count as u64);
    match header.call.map(|k| k.call(header.source as usize)) {
        None => out.push(0),
        Some(c) => {
            out.push(1);
            put_u32(out, c.seq);
            put_opt(out, c.root);
            put_opt(out, c.bytes);
            put_str(out, c.operation);
            match c.reduction {
                None => out.push(0),
                Some(r) => {
                    out.push(1);
                    put_str(out, r);
                }
            }
        }
    }
    put_u32(out, sig.len() as u32);
    for &(b, n) in sig {
        // RUN_BYTES bytes a run: the code, then the repeats
        out.push(b.code());
        put_u64(out, n as u64);
    }
    put_u32(out, payload_tag);
    put_u32(out, sync);
    put_u32(out, class);
    let len = (out.len() - start) as u32;
    put_u32(out, len);
}

/// The size of one run of an encoded signature: the basic type's code and its repeats.
const RUN_BYTES: usize = 9;

/// Decodes the header of a received buffer, with the stand-in for the sender's type from
/// `types`; the payload is the buffer's start.
pub(crate) fn decode(buf: &[u8], types: &mut StandIns) -> Result<Decoded> {
    if buf.len() < 4 {
        return Err(malformed());
    }
    let len_at = buf.len() - 4;
    let header_len =
        u32::from_le_bytes(buf[len_at..].try_into().map_err(|_| malformed())?) as usize;
    let start = len_at.checked_sub(header_len).ok_or_else(malformed)?;
    let mut r = Reader(&buf[start..len_at]);
    let context = r.u32()?;
    let source = r.u32()?;
    let tag = r.u32()? as i32;
    let flow = r.u32()?;
    let count = r.u64()? as usize;
    let call = match r.u8()? {
        0 => None,
        _ => {
            let seq = r.u32()?;
            let root = r.opt()?;
            let bytes = r.opt()?;
            let operation = intern(r.str()?);
            let reduction = match r.u8()? {
                0 => None,
                _ => Some(intern(r.str()?)),
            };
            Some(CallKey::from(&CollectiveCall {
                rank: source as usize,
                seq,
                operation,
                root,
                reduction,
                bytes,
            }))
        }
    };
    let runs = r.u32()? as usize;
    let stand_in = types.of(r.take(runs.checked_mul(RUN_BYTES).ok_or_else(malformed)?)?)?;
    let payload_tag = r.u32()?;
    let sync = r.u32()?;
    let class = r.u32()?;
    Ok(Decoded {
        header: Header {
            context,
            source,
            tag,
            flow,
            call,
        },
        count,
        stand_in,
        payload_len: start,
        payload_tag,
        sync,
        class,
    })
}

/// The signature a header's runs encode (`RUN_BYTES` bytes each, as [`append_header`] writes
/// them).
pub(crate) fn parse_signature(encoded: &[u8]) -> Result<Signature> {
    let mut r = Reader(encoded);
    let mut signature = Vec::with_capacity(encoded.len() / RUN_BYTES);
    while !r.0.is_empty() {
        let b = BasicType::from_code(r.u8()?).ok_or_else(malformed)?;
        signature.push((b, r.u64()? as usize));
    }
    Ok(signature)
}

/// Names of collective operations and operators that arrived from other processes, kept for
/// the life of the process (a handful of short strings).
fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let Ok(mut names) = NAMES.lock() else {
        return Box::leak(s.to_string().into_boxed_str());
    };
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(&known) = names.get(s) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

#[inline]
fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[inline]
fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_opt(out: &mut Vec<u8>, v: Option<usize>) {
    put_u64(out, v.map_or(u64::MAX, |v| v as u64));
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32);
    out.extend_from_slice(s.as_bytes());
}

/// How many elements of `size` bytes `bytes` bytes of a bare message are, if a whole number
/// (else the sender wrote no rpar message). Element sizes are powers of two almost always: a
/// shift then, not a division (20-40 cycles on the path of every small message received).
#[inline]
pub(crate) fn whole_elements(bytes: usize, size: usize) -> Option<usize> {
    if size.is_power_of_two() {
        let shift = size.trailing_zeros();
        return (bytes & (size - 1) == 0).then_some(bytes >> shift);
    }
    (size != 0 && bytes.is_multiple_of(size)).then(|| bytes / size)
}

/// The error of a message from another process that no rpar sender wrote.
#[cold]
pub(crate) fn malformed() -> Error {
    Error::invalid("the MPI transport", "a malformed rpar message arrived")
}

#[cold]
fn truncated() -> Error {
    Error::invalid(
        "the MPI transport",
        "a truncated rpar message header arrived",
    )
}

/// Reads the fields of a header in order.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let Some((head, rest)) = self.0.split_at_checked(n) else {
            return Err(truncated());
        };
        self.0 = rest;
        Ok(head)
    }

    /// The next `N` bytes.
    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let Some((head, rest)) = self.0.split_first_chunk::<N>() else {
            return Err(truncated());
        };
        self.0 = rest;
        Ok(*head)
    }

    #[inline]
    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    #[inline]
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    #[inline]
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn opt(&mut self) -> Result<Option<usize>> {
        let v = self.u64()?;
        Ok((v != u64::MAX).then_some(v as usize))
    }

    fn str(&mut self) -> Result<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| {
            Error::invalid(
                "the MPI transport",
                "a message header with a bad name arrived",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_elements_by_shift_and_by_division() {
        for size in [1, 2, 4, 8, 16, 3, 12, 24] {
            for bytes in 0..100 {
                let want = (bytes % size == 0).then_some(bytes / size);
                assert_eq!(whole_elements(bytes, size), want, "{bytes} bytes of {size}");
            }
        }
        assert_eq!(whole_elements(0, 0), None); // no element type has no bytes here
        assert_eq!(whole_elements(8, 0), None);
    }

    #[test]
    fn a_header_survives_the_wire() {
        let call = CollectiveCall {
            rank: 3,
            seq: 7,
            operation: "allreduce",
            root: None,
            reduction: Some("Sum"),
            bytes: Some(64),
        };
        let header = Header {
            context: 5,
            source: 3,
            tag: -2,
            flow: 17, // the trace's arrow joins the sender's file to the receiver's
            call: Some(CallKey::from(&call)),
        };
        let sig = vec![(BasicType::F64, 3), (BasicType::I32, 1)];
        let mut buf = vec![1u8, 2, 3];
        let contents = Contents {
            count: 9,
            signature: &sig,
            payload_tag: 1234,
            sync: 41,
            class: 3,
        };
        append_header(&mut buf, &header, contents);
        let mut types = StandIns::default();
        let d = decode(&buf, &mut types).unwrap();
        assert_eq!(d.header, header);
        assert_eq!(
            (
                d.count,
                &d.stand_in.ty.inner.signature,
                &buf[..d.payload_len],
                d.payload_tag,
                d.sync,
                d.class
            ),
            (9, &sig, &[1u8, 2, 3][..], 1234, 41, 3)
        );
        assert!(decode(&[0, 0, 0, 9], &mut types).is_err());
    }
}
