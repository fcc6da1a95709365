//! MPI_Neighbor_alltoallw: the neighbourhood all-to-all whose block for each neighbour has a
//! datatype, a count and a byte displacement of its own, on both sides
//! ([`Typed::per_rank`](crate::Typed::per_rank) views with one entry per neighbour).
//!
//! Each block is packed by its type into one message that starts with the block's type
//! fingerprint (its signature's digest and size, 32 bytes); the receiver compares it with the
//! fingerprint of the block it gives for that neighbour before it unpacks, so a block of
//! another signature is a [`Error::TypeMismatch`] at the receiver, as a typed receive's is.
//! A rank that finds one still receives every other block, so nothing is left unreceived.

use super::neighbor::{slot_tags, Neighbours};
use crate::collective::{check_alltoallw_entries as check_entries, Channel, Fingerprint, PerRank};
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Error, Result};

const CALL: &str = "neighbor_alltoallw";

/// Bytes of the fingerprint at the head of each message.
const HEAD: usize = 32;

impl Neighbours {
    /// Checks both sides against the neighbours (before anything moves).
    pub(super) fn check<T, U>(
        &self,
        send: &PerRank<'_, '_, &[T]>,
        recv: &PerRank<'_, '_, &mut [U]>,
    ) -> Result<()> {
        check_entries(CALL, send, self.dests.len(), "send", "neighbour")?;
        check_entries(CALL, recv, self.sources.len(), "receive", "neighbour")
    }

    /// Sends every out-neighbour its packed block, then receives and unpacks every
    /// in-neighbour's; the first type mismatch found, once every block has been received.
    pub(super) fn exchange<T: Datatype, U: Datatype>(
        &self,
        comm: &Comm,
        send: &PerRank<'_, '_, &[T]>,
        recv: &mut PerRank<'_, '_, &mut [U]>,
    ) -> Result<()> {
        let (out_tag, in_tag) = slot_tags(self.kind);
        comm.collective(Call::new("neighborhood exchange"), &"Direct", || {
            for (k, dest) in self.dests.iter().enumerate() {
                let Some(dest) = *dest else { continue };
                let (ty, count) = (send.types[k], send.counts[k]);
                let fingerprint = Fingerprint::of(ty, count, CALL)?;
                let mut message = vec![0u8; HEAD + fingerprint.bytes as usize];
                for (w, word) in fingerprint.words().iter().enumerate() {
                    message[8 * w..8 * w + 8].copy_from_slice(&word.to_le_bytes());
                }
                let mut at = HEAD;
                ty.pack_from_byte(CALL, send.buf, send.displs[k], count, &mut message, &mut at)?;
                Channel::send_owned(comm, message, dest, out_tag(k))?;
            }
            let mut first_mismatch = None;
            for (j, source) in self.sources.iter().enumerate() {
                let Some(source) = *source else { continue };
                let message: Vec<u8> = Channel::recv_vec(comm, source, in_tag(j))?;
                let (ty, count) = (recv.types[j], recv.counts[j]);
                let expected = Fingerprint::of(ty, count, CALL)?;
                let offered = head_of(&message);
                if offered.as_ref() != Some(&expected) {
                    first_mismatch.get_or_insert_with(|| Error::TypeMismatch {
                        sent: offered.map_or("no fingerprint".into(), |f| f.describe()),
                        expected: format!("{} (in-neighbour {j})", expected.describe()),
                        source_rank: source,
                    });
                    continue;
                }
                let mut at = HEAD;
                ty.unpack_to_byte(CALL, &message, &mut at, recv.buf, recv.displs[j], count)?;
            }
            first_mismatch.map_or(Ok(()), Err)
        })
    }
}

/// The fingerprint at the head of a message, if it has one.
fn head_of(message: &[u8]) -> Option<Fingerprint> {
    let mut words = [0u64; HEAD / 8];
    for (word, bytes) in words.iter_mut().zip(message.get(..HEAD)?.chunks_exact(8)) {
        *word = u64::from_le_bytes(bytes.try_into().expect("chunks of 8 bytes"));
    }
    let fingerprint = Fingerprint::from_words(&words);
    (message.len() - HEAD == fingerprint.bytes as usize).then_some(fingerprint)
}
