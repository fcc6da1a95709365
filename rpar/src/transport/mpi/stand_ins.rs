//! [`StandIns`]: what stands in, on the receiving process, for the types of the messages that
//! arrive, made once per signature: a committed type ([`dense_map`]: a dense map with the
//! sender's signature), and where an element is one value of a basic type of which every bit
//! pattern is a value, the element type of the Rust type that is that basic type (the message
//! then travels on as a plain one, as it would in-process: [`StandIn::plain`]).
//!
//! They are found by the signature as a header encodes it, so a header is never decoded into a
//! signature of its own; and messages mostly arrive with the signature of the one before (a
//! ping-pong, a halo exchange, a stream), so the last one is compared first: a comparison of a
//! few bytes instead of a `Vec` and a hash of it (~530 instructions per 8-byte message).

use super::wire::parse_signature;
use crate::datatype::{BasicType, CommittedType, TypeMap};
use crate::transport::ElemType;
use crate::{Error, Result};
use std::collections::HashMap;

/// What stands in for a sender's type on the receiving process.
#[derive(Clone, Debug)]
pub(crate) struct StandIn {
    /// A dense committed type with the sender's signature.
    pub(crate) ty: CommittedType,
    /// If an element sent is one value of a basic type of which every bit pattern is a value:
    /// the Rust type that is that value. Not for a run of several (an array `[f64; 2]`): a
    /// plain message counts its values, and a probe must count the sender's elements.
    pub(crate) plain: Option<ElemType>,
}

impl StandIn {
    pub(super) fn of_signature(sig: &[(BasicType, usize)]) -> Result<StandIn> {
        let plain = match sig {
            &[(b, 1)] => plain_elem(b),
            _ => None,
        };
        Ok(StandIn {
            ty: dense_map(sig)?.commit(),
            plain,
        })
    }
}

/// Stand-ins by encoded signature, the last one used first.
#[derive(Default)]
pub(crate) struct StandIns {
    last: Option<(Vec<u8>, StandIn)>,
    by_signature: HashMap<Vec<u8>, StandIn>,
}

impl StandIns {
    /// The stand-in for messages of the signature `encoded` (as a header carries it), made and
    /// kept on its first use.
    ///
    /// A signature from another process may be malformed or describe too large a type: that
    /// is an error.
    pub(crate) fn of(&mut self, encoded: &[u8]) -> Result<StandIn> {
        if let Some((last, stand_in)) = &self.last {
            if last.as_slice() == encoded {
                return Ok(stand_in.clone());
            }
        }
        let stand_in = match self.by_signature.get(encoded) {
            Some(stand_in) => stand_in.clone(),
            None => {
                let stand_in = StandIn::of_signature(&parse_signature(encoded)?)?;
                self.by_signature.insert(encoded.to_vec(), stand_in.clone());
                stand_in
            }
        };
        self.last = Some((encoded.to_vec(), stand_in.clone()));
        Ok(stand_in)
    }
}

/// The element type of the Rust type that is one value of `b`, if every bit pattern is such a
/// value (`bool`, `char` and `MPI_BYTE` have no such type: values from another process are
/// checked, bytes match only bytes).
fn plain_elem(b: BasicType) -> Option<ElemType> {
    use num_complex::Complex;
    use BasicType::*;
    Some(match b {
        I8 => ElemType::of::<i8>(),
        I16 => ElemType::of::<i16>(),
        I32 => ElemType::of::<i32>(),
        I64 => ElemType::of::<i64>(),
        I128 => ElemType::of::<i128>(),
        Isize => ElemType::of::<isize>(),
        U8 => ElemType::of::<u8>(),
        U16 => ElemType::of::<u16>(),
        U32 => ElemType::of::<u32>(),
        U64 => ElemType::of::<u64>(),
        U128 => ElemType::of::<u128>(),
        Usize => ElemType::of::<usize>(),
        F32 => ElemType::of::<f32>(),
        F64 => ElemType::of::<f64>(),
        C32 => ElemType::of::<Complex<f32>>(),
        C64 => ElemType::of::<Complex<f64>>(),
        Bool | Char | Byte => return None,
    })
}

/// A dense type map with signature `sig` (the receiver's stand-in for the sender's type).
///
/// The signature comes from another process: a size past `isize` or a map of too many entries
/// is an error (the constructors' checks), never an overflow or an abort.
pub(crate) fn dense_map(sig: &[(BasicType, usize)]) -> Result<TypeMap> {
    let bad = || Error::invalid("the MPI transport", "a message of too large a type arrived");
    let basics: Vec<TypeMap> = sig.iter().map(|&(b, _)| TypeMap::basic(b)).collect();
    let mut fields = Vec::with_capacity(sig.len());
    let mut at = 0isize;
    for (&(b, n), basic) in sig.iter().zip(&basics) {
        fields.push((n, at, basic));
        at = n
            .checked_mul(b.size())
            .and_then(|bytes| isize::try_from(bytes).ok())
            .and_then(|bytes| at.checked_add(bytes))
            .ok_or_else(bad)?;
    }
    // a struct of runs one after the other, resized to exactly its data: no padding
    TypeMap::structure(&fields)?.resized(0, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::mpi::wire::{append_header, Contents};
    use crate::transport::Header;

    /// The signature `sig` as a header encodes it.
    fn encoded(sig: &[(BasicType, usize)]) -> Vec<u8> {
        let header = Header {
            context: 0,
            source: 0,
            tag: 0,
            flow: 0,
            call: None,
        };
        let mut buf = Vec::new();
        append_header(&mut buf, &header, Contents::of(1, sig));
        // after context, source, tag, flow, count, no call and the number of runs: the runs;
        // then payload tag, sync, class and the header's length
        buf[4 * 4 + 8 + 1 + 4..buf.len() - 16].to_vec()
    }

    #[test]
    fn one_stand_in_per_signature_whatever_the_order() {
        let mut s = StandIns::default();
        let a = encoded(&[(BasicType::F64, 2)]);
        let b = encoded(&[(BasicType::I32, 1), (BasicType::U8, 3)]);
        let first = s.of(&a).unwrap().ty;
        let other = s.of(&b).unwrap().ty;
        assert_eq!((first.size(), other.size()), (16, 7));
        assert!(std::sync::Arc::ptr_eq(
            &s.of(&a).unwrap().ty.inner,
            &first.inner
        ));
        assert!(std::sync::Arc::ptr_eq(
            &s.of(&b).unwrap().ty.inner,
            &other.inner
        ));
        assert_eq!(s.by_signature.len(), 2);
        assert!(s.of(&[200, 0, 0, 0, 0, 0, 0, 0, 1]).is_err()); // no such basic type
        assert!(s.of(&[1, 2]).is_err()); // a run cut short
    }

    #[test]
    fn one_value_of_a_basic_type_stands_in_as_its_rust_type() {
        let mut s = StandIns::default();
        let plain = |s: &mut StandIns, sig: &[(BasicType, usize)]| {
            s.of(&encoded(sig)).unwrap().plain.map(|elem| (elem.name)())
        };
        assert_eq!(plain(&mut s, &[(BasicType::U8, 1)]), Some("u8"));
        assert_eq!(
            plain(&mut s, &[(BasicType::C32, 1)]),
            Some("num_complex::Complex<f32>")
        );
        // values to check, bytes that match only bytes, two basic types, an array of one (a
        // probe counts the sender's elements, not their values): typed
        for sig in [
            &[(BasicType::F64, 2)][..],
            &[(BasicType::C32, 3)],
            &[(BasicType::Bool, 1)],
            &[(BasicType::Char, 4)],
            &[(BasicType::Byte, 8)],
            &[(BasicType::I32, 1), (BasicType::F32, 1)],
        ] {
            assert_eq!(plain(&mut s, sig), None, "{sig:?}");
        }
    }

    #[test]
    fn a_dense_stand_in_has_the_senders_signature() {
        let f = TypeMap::basic(BasicType::F64);
        let sent = TypeMap::vector(3, 1, -2, &f).unwrap();
        let sig = sent.commit().inner.signature.clone();
        assert_eq!(sig, vec![(BasicType::F64, 3)]);
        let stand_in = dense_map(&sig).unwrap();
        assert!(stand_in.is_dense());
        assert_eq!(stand_in.size(), sent.size());
    }
}
