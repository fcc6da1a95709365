//! MPI_Alltoallw: an all-to-all whose block for each rank has a datatype, a count and a byte
//! displacement of its own, on both sides ([`Typed::per_rank`](super::Typed::per_rank)).
//!
//! Every rank packs its blocks by their types, the packed bytes go through the byte
//! all-to-all-v of the chosen algorithm, and every rank unpacks each block by the type it
//! gave for it. Before anything moves, each pair's type signatures are compared (MPI's rule:
//! what `i` sends `j` must be what `j` receives from `i`): every rank sends each rank the
//! fingerprint of the block it sends it (an all-to-all of 32 bytes per pair), each checks what
//! it will receive, and an allgather of the verdicts gives every rank the same error, if any.

use super::forms::PerRank;
use super::typed::Fingerprint;
use super::Alltoall;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Error, Result};

const CALL: &str = "alltoallw";

/// Words of a rank's verdict on the blocks it will receive: `[1 + the rank whose block
/// disagrees, that block's fingerprint, the one expected]`, or zeros.
pub(crate) const VERDICT: usize = 9;

/// The verdict on the blocks `offered` (by sender) against those `expected` of each.
pub(crate) fn verdict(offered: &[Fingerprint], expected: &[Fingerprint]) -> [u64; VERDICT] {
    let mut verdict = [0u64; VERDICT];
    if let Some(i) = (0..offered.len()).find(|&i| !offered[i].agrees(&expected[i])) {
        verdict[0] = 1 + i as u64;
        verdict[1..5].copy_from_slice(&offered[i].words());
        verdict[5..9].copy_from_slice(&expected[i].words());
    }
    verdict
}

/// The error a verdict of a mismatch (`v`, not zeros) gives, its receiver named `receiver`.
pub(crate) fn mismatch(v: &[u64], receiver: String) -> Error {
    Error::TypeMismatch {
        sent: Fingerprint::from_words(&v[1..5]).describe(),
        expected: format!(
            "{} at {receiver}",
            Fingerprint::from_words(&v[5..9]).describe()
        ),
        source_rank: (v[0] - 1) as usize,
    }
}

/// Checks that the three arrays of a side hold one entry per rank.
pub(crate) fn check_side<S>(side: &PerRank<'_, '_, S>, p: usize, what: &str) -> Result<()> {
    check_entries(CALL, side, p, what, "rank")
}

/// Checks that the three arrays of a side of `call` hold one entry per `unit` (`n` of them).
pub(crate) fn check_entries<S>(
    call: &'static str,
    side: &PerRank<'_, '_, S>,
    n: usize,
    what: &str,
    unit: &str,
) -> Result<()> {
    let lens = [side.types.len(), side.counts.len(), side.displs.len()];
    if lens.iter().all(|&len| len == n) {
        return Ok(());
    }
    Err(Error::invalid(
        call,
        format!(
            "the {what} side must give a type, a count and a displacement per {unit} ({n}), \
             but gives {}, {} and {}",
            lens[0], lens[1], lens[2]
        ),
    ))
}

impl Comm {
    /// The body of [`Comm::alltoall`] for per-rank typed sides (MPI_Alltoallw), with the
    /// algorithm given for the byte all-to-all-v.
    pub(crate) fn alltoallw_with<T: Datatype, U: Datatype>(
        &self,
        send: PerRank<'_, '_, &[T]>,
        recv: PerRank<'_, '_, &mut [U]>,
        algorithm: Alltoall,
    ) -> Result<()> {
        self.collective(Call::new(CALL), &algorithm, || {
            let p = self.size();
            check_side(&send, p, "send")?;
            check_side(&recv, p, "receive")?;
            // what this rank sends each rank, and expects from each
            let mut sent = Vec::with_capacity(4 * p);
            for j in 0..p {
                sent.extend(Fingerprint::of(send.types[j], send.counts[j], CALL)?.words());
            }
            let expected: Vec<Fingerprint> = (0..p)
                .map(|i| Fingerprint::of(recv.types[i], recv.counts[i], CALL))
                .collect::<Result<_>>()?;
            let came = self.alltoall(&sent[..])?;
            let offered: Vec<Fingerprint> = (0..p)
                .map(|i| Fingerprint::from_words(&came[4 * i..4 * i + 4]))
                .collect();
            let verdicts = self.allgather(&verdict(&offered, &expected)[..])?;
            if let Some(j) = (0..p).find(|&j| verdicts[VERDICT * j] != 0) {
                let err = mismatch(
                    &verdicts[VERDICT * j..VERDICT * (j + 1)],
                    format!("rank {j}"),
                );
                return Err(self.endpoint().collective_failure(err));
            }
            // pack every block by its type, move the bytes, unpack every block by its type
            let send_bytes: Vec<usize> = (0..p)
                .map(|j| {
                    Fingerprint::of(send.types[j], send.counts[j], CALL).map(|f| f.bytes as usize)
                })
                .collect::<Result<_>>()?;
            let recv_bytes: Vec<usize> = expected.iter().map(|f| f.bytes as usize).collect();
            let mut packed = vec![0u8; send_bytes.iter().sum()];
            let mut at = 0;
            for j in 0..p {
                send.types[j].pack_from_byte(
                    CALL,
                    send.buf,
                    send.displs[j],
                    send.counts[j],
                    &mut packed,
                    &mut at,
                )?;
            }
            let mut inbox = vec![0u8; recv_bytes.iter().sum()];
            let (sd, rd) = (running_sums(&send_bytes), running_sums(&recv_bytes));
            self.alltoallv_into_with(
                Some((&packed[..], (&send_bytes, &sd))),
                &mut inbox[..],
                (&recv_bytes, &rd),
                algorithm,
            )?;
            let mut at = 0;
            for i in 0..p {
                recv.types[i].unpack_to_byte(
                    CALL,
                    &inbox,
                    &mut at,
                    recv.buf,
                    recv.displs[i],
                    recv.counts[i],
                )?;
            }
            Ok(())
        })
    }
}

/// The displacements of blocks of these sizes laid one after another.
fn running_sums(sizes: &[usize]) -> Vec<usize> {
    sizes
        .iter()
        .scan(0, |at, &n| {
            let here = *at;
            *at += n;
            Some(here)
        })
        .collect()
}
