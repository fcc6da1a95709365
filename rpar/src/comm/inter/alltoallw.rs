//! MPI_Alltoallw on an intercommunicator: [`InterComm::alltoall`] of two
//! [`Typed::per_rank`](crate::Typed::per_rank) sides, a derived datatype, a count and a byte
//! displacement per rank of the remote group on each.
//!
//! As on a [`Comm`](crate::Comm) (`collective/alltoallw.rs`), the signatures go first: every
//! rank sends each remote rank the fingerprint of the block it will send it, checks what it
//! will receive against what it expects, and both groups learn every rank's verdict (an
//! allgather in each group and the leaders' exchange), so that a mismatch is every rank's
//! error before any data moves. Then each block is packed by its type, sent to its rank, and
//! unpacked there by the receiver's type for it.

use super::collective::Receive;
use super::{tags, InterComm};
use crate::collective::{alltoallw_mismatch, alltoallw_verdict, check_alltoallw_side};
use crate::collective::{Fingerprint, PerRank, ALLTOALLW_VERDICT as VERDICT};
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::Result;

const CALL: &str = "InterComm::alltoall";

impl InterComm {
    /// The body of [`InterComm::alltoall`] for per-rank typed sides.
    pub(super) fn alltoallw_in<T: Datatype, U: Datatype>(
        &self,
        send: PerRank<'_, '_, &[T]>,
        recv: PerRank<'_, '_, &mut [U]>,
    ) -> Result<()> {
        let q = self.remote_size();
        check_alltoallw_side(&send, q, "send")?;
        check_alltoallw_side(&recv, q, "receive")?;
        let sent: Vec<Fingerprint> = (0..q)
            .map(|j| Fingerprint::of(send.types[j], send.counts[j], CALL))
            .collect::<Result<_>>()?;
        let expected: Vec<Fingerprint> = (0..q)
            .map(|i| Fingerprint::of(recv.types[i], recv.counts[i], CALL))
            .collect::<Result<_>>()?;
        self.across(Call::new("alltoallw"), || {
            let words: Vec<u64> = sent.iter().flat_map(|f| f.words()).collect();
            self.send_blocks(words.chunks(4).enumerate(), tags::ALLTOALLW)?;
            let mut came = vec![0u64; 4 * q];
            self.receive_blocks(Receive::IntoEqual(&mut came), tags::ALLTOALLW, CALL)?;
            let offered: Vec<Fingerprint> = came.chunks(4).map(Fingerprint::from_words).collect();
            let verdict = alltoallw_verdict(&offered, &expected);
            self.every_verdict(&verdict)?;
            let ctx = self.remote.collective_context();
            for (j, f) in sent.iter().enumerate() {
                let mut packed = vec![0u8; f.bytes as usize];
                let (buf, at) = (send.buf, send.displs[j]);
                send.types[j].pack_from_byte(CALL, buf, at, send.counts[j], &mut packed, &mut 0)?;
                self.remote.send_owned_in(ctx, packed, j, tags::ALLTOALLW)?;
            }
            for i in 0..q {
                let (packed, _) = self.remote.recv_in::<u8>(ctx, i, tags::ALLTOALLW)?;
                let (at, count) = (recv.displs[i], recv.counts[i]);
                recv.types[i].unpack_to_byte(CALL, &packed, &mut 0, recv.buf, at, count)?;
            }
            Ok(())
        })
    }

    /// Tells every rank of both groups every rank's verdict, and fails them all alike with the
    /// first mismatch found (this group's ranks first).
    fn every_verdict(&self, verdict: &[u64; VERDICT]) -> Result<()> {
        let ours = self.in_local(|l| l.allgather(&verdict[..]))?;
        let mut theirs = vec![0u64; VERDICT * self.remote_size()];
        self.leaders_exchange(&ours[..], &mut theirs[..])?;
        self.in_local(|l| l.bcast(&mut theirs[..], 0))?;
        let found = [("this", &ours), ("the other", &theirs)]
            .into_iter()
            .flat_map(|(side, all)| all.chunks(VERDICT).enumerate().map(move |v| (side, v)))
            .find(|(_, (_, v))| v[0] != 0);
        let Some((side, (rank, v))) = found else {
            return Ok(());
        };
        let err = alltoallw_mismatch(v, format!("rank {rank} of {side} group"));
        Err(self.local.endpoint().collective_failure(err))
    }
}
