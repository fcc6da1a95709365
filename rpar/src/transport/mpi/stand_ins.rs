//! [`StandIns`]: the committed types that stand in, on the receiving process, for the types of
//! the messages that arrive ([`dense_map`]: a dense map with the sender's signature), made once
//! per signature.
//!
//! They are found by the signature as a header encodes it, so a header is never decoded into a
//! signature of its own; and messages mostly arrive with the signature of the one before (a
//! ping-pong, a halo exchange, a stream), so the last one is compared first: a comparison of a
//! few bytes instead of a `Vec` and a hash of it (~530 instructions per 8-byte message).

use super::wire::parse_signature;
use crate::datatype::{BasicType, CommittedType, TypeMap};
use crate::{Error, Result};
use std::collections::HashMap;

/// Stand-in types by encoded signature, the last one used first.
#[derive(Default)]
pub(crate) struct StandIns {
    last: Option<(Vec<u8>, CommittedType)>,
    by_signature: HashMap<Vec<u8>, CommittedType>,
}

impl StandIns {
    /// The stand-in for messages of the signature `encoded` (as a header carries it), made and
    /// kept on its first use.
    ///
    /// A signature from another process may be malformed or describe too large a type: that
    /// is an error.
    pub(crate) fn of(&mut self, encoded: &[u8]) -> Result<CommittedType> {
        if let Some((last, ty)) = &self.last {
            if last.as_slice() == encoded {
                return Ok(ty.clone());
            }
        }
        let ty = match self.by_signature.get(encoded) {
            Some(ty) => ty.clone(),
            None => {
                let ty = dense_map(&parse_signature(encoded)?)?.commit();
                self.by_signature.insert(encoded.to_vec(), ty.clone());
                ty
            }
        };
        self.last = Some((encoded.to_vec(), ty.clone()));
        Ok(ty)
    }
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
        // then payload tag, sync and the header's length
        buf[4 * 4 + 8 + 1 + 4..buf.len() - 12].to_vec()
    }

    #[test]
    fn one_stand_in_per_signature_whatever_the_order() {
        let mut s = StandIns::default();
        let a = encoded(&[(BasicType::F64, 2)]);
        let b = encoded(&[(BasicType::I32, 1), (BasicType::U8, 3)]);
        let first = s.of(&a).unwrap();
        let other = s.of(&b).unwrap();
        assert_eq!((first.size(), other.size()), (16, 7));
        assert!(std::sync::Arc::ptr_eq(
            &s.of(&a).unwrap().inner,
            &first.inner
        ));
        assert!(std::sync::Arc::ptr_eq(
            &s.of(&b).unwrap().inner,
            &other.inner
        ));
        assert_eq!(s.by_signature.len(), 2);
        assert!(s.of(&[200, 0, 0, 0, 0, 0, 0, 0, 1]).is_err()); // no such basic type
        assert!(s.of(&[1, 2]).is_err()); // a run cut short
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
