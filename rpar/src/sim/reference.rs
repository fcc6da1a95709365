//! The reference algorithms of the lecture's cost formulas — binomial broadcast, ring
//! allgather, recursive-doubling allgather and recursive-doubling allreduce — as named runs of
//! the library's own algorithm code (the very functions a `Comm` runs, written once against
//! [`Channel`](crate::collective::Channel)): on a [`Comm`] they move data, on a
//! [`Recorder`](super::Recorder) they record the schedule that the simulator runs beside the
//! closed form of [`Reference::model`].

use super::recorder::record;
use super::schedule::Schedule;
use crate::collective::{allgather_algorithm, allreduce_algorithm, bcast_algorithm, Named};
use crate::comm::Call;
use crate::cost::Algorithm;
use crate::{Allgather, Allreduce, Bcast, Comm, Error, Result, Sum};

/// The recursive-doubling formulas are for a power of two ranks: others are refused.
fn require_pow2(p: usize, what: &'static str) -> Result<()> {
    if p.is_power_of_two() {
        Ok(())
    } else {
        Err(Error::invalid(
            what,
            format!("expected a power-of-two number of ranks, got {p}"),
        ))
    }
}

/// Rank `r`'s input in its block of an allgather's output of `p` blocks of `bytes`.
fn place_input(out: &mut Vec<u8>, p: usize, r: usize, bytes: usize) -> Vec<usize> {
    out.resize(p * bytes, 0);
    out[r * bytes..(r + 1) * bytes].copy_from_slice(&Reference::input(r, bytes));
    (0..=p).map(|i| i * bytes).collect()
}

/// The reference algorithms, for recording, running and predicting.
///
/// ```
/// use rpar::sim::Reference;
/// let s = Reference::RecursiveDoublingAllgather.record(4096, 8)?;
/// assert_eq!(s.messages(), 4096 * 12);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reference {
    /// Binomial-tree broadcast from rank 0 (MPI_Bcast).
    BinomialBcast,
    /// Ring allgather (MPI_Allgather).
    RingAllgather,
    /// Recursive-doubling allgather, p a power of two (MPI_Allgather).
    RecursiveDoublingAllgather,
    /// Recursive-doubling allreduce of a wrapping byte-wise sum, p a power of two
    /// (MPI_Allreduce).
    RecursiveDoublingAllreduce,
}

impl Reference {
    /// All of them.
    ///
    /// ```
    /// use rpar::cost::{Network, Params, Switching};
    /// use rpar::sim::{Reference, Simulator};
    /// // on a fully connected network each reference schedule takes what its formula says
    /// let params = Params::new(1e-6, 0.0, 1e-9, 0.5e-9);
    /// let sim = Simulator::new(Network::fully_connected(16), Switching::CutThrough, params);
    /// for alg in Reference::ALL {
    ///     let simulated = sim.run(&alg.record(16, 1024)?)?.time;
    ///     let predicted = alg.model().time(&params, 16, 1024)?;
    ///     assert!((simulated - predicted).abs() < 1e-12, "{alg:?}");
    /// }
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub const ALL: [Reference; 4] = [
        Reference::BinomialBcast,
        Reference::RingAllgather,
        Reference::RecursiveDoublingAllgather,
        Reference::RecursiveDoublingAllreduce,
    ];

    /// The cost model's name for it: its [`Algorithm`], whose formula predicts its time.
    ///
    /// ```
    /// use rpar::{cost::Algorithm, sim::Reference};
    /// assert_eq!(Reference::BinomialBcast.model(), Algorithm::BinomialBcast);
    /// let c = Reference::RingAllgather.model().cost(8, 64)?;
    /// assert_eq!(c.messages, 7.0);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn model(self) -> Algorithm {
        match self {
            Reference::BinomialBcast => Algorithm::BinomialBcast,
            Reference::RingAllgather => Algorithm::RingAllgather,
            Reference::RecursiveDoublingAllgather => Algorithm::RecursiveDoublingAllgather,
            Reference::RecursiveDoublingAllreduce => Algorithm::RecursiveDoublingAllreduce,
        }
    }

    /// Runs it on channel `ch` with `bytes` bytes per rank (the broadcast message, or each
    /// rank's block); rank r's input is [`Reference::input`]`(r, bytes)`. Leaves the output in
    /// `out` (the broadcast message, all p blocks, or the sum), which is the caller's buffer as
    /// in MPI — so a recording run reuses one buffer for all ranks instead of allocating (and
    /// zeroing) p of them.
    fn execute<C: Named>(self, ch: &C, bytes: usize, out: &mut Vec<u8>) -> Result<()> {
        let (p, r) = (ch.size(), ch.rank());
        match self {
            Reference::BinomialBcast => {
                out.resize(bytes, 0);
                if r == 0 {
                    out.copy_from_slice(&Reference::input(0, bytes));
                }
                bcast_algorithm(ch, out, 0, Bcast::Binomial)
            }
            Reference::RingAllgather => {
                let offsets = place_input(out, p, r, bytes);
                allgather_algorithm(ch, out, &offsets, Allgather::Ring)
            }
            Reference::RecursiveDoublingAllgather => {
                require_pow2(p, "recursive_doubling_allgather")?;
                let offsets = place_input(out, p, r, bytes);
                allgather_algorithm(ch, out, &offsets, Allgather::RecursiveDoubling)
            }
            Reference::RecursiveDoublingAllreduce => {
                require_pow2(p, "recursive_doubling_allreduce")?;
                out.clear();
                out.extend(Reference::input(r, bytes));
                allreduce_algorithm(ch, out, &Sum, Allreduce::RecursiveDoubling)
            }
        }
    }

    /// Rank `rank`'s input block: byte i is (31 rank + i) mod 256.
    ///
    /// ```
    /// use rpar::sim::Reference;
    /// assert_eq!(Reference::input(0, 3), [0, 1, 2]);
    /// assert_eq!(Reference::input(9, 2), [23, 24]); // 279 mod 256 = 23
    /// ```
    pub fn input(rank: usize, bytes: usize) -> Vec<u8> {
        (0..bytes).map(|i| (31 * rank + i) as u8).collect()
    }

    /// Runs it on `comm`, moving real data (collective: every rank calls it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for the recursive-doubling algorithms on a `comm`
    /// whose size is not a power of two; those of the point-to-point calls underneath
    /// ([`Error::Aborted`] if another rank fails meanwhile).
    ///
    /// ```
    /// use rpar::sim::Reference;
    /// let out = rpar::run(4, |world| Reference::RingAllgather.run(&world, 2))?;
    /// let expected: Vec<u8> = (0..4).flat_map(|r| Reference::input(r, 2)).collect();
    /// assert!(out.iter().all(|o| *o == expected));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn run(self, comm: &Comm, bytes: usize) -> Result<Vec<u8>> {
        // One collective call, so that a trace shows it as a span (algorithm `Reference…`)
        // holding its messages' arrows, and ranks that call something else are told so.
        let (call, algorithm) = match self {
            Reference::BinomialBcast => (Call::new("bcast").root(0), "ReferenceBinomialBcast"),
            Reference::RingAllgather => (Call::new("allgather"), "ReferenceRingAllgather"),
            Reference::RecursiveDoublingAllgather => (
                Call::new("allgather"),
                "ReferenceRecursiveDoublingAllgather",
            ),
            Reference::RecursiveDoublingAllreduce => (
                Call::new("allreduce"),
                "ReferenceRecursiveDoublingAllreduce",
            ),
        };
        let mut out = Vec::new();
        comm.collective(call, &algorithm, || self.execute(comm, bytes, &mut out))?;
        Ok(out)
    }

    /// Records its schedule on `p` ranks with `bytes` bytes per rank (see [`record`]).
    ///
    /// # Errors
    ///
    /// Those of [`record`]; the recursive-doubling algorithms on `p` not a power of
    /// two fail in rank 0's run ([`Error::RankFailed`] for rank 0).
    ///
    /// ```
    /// use rpar::sim::Reference;
    /// let s = Reference::RecursiveDoublingAllreduce.record(8, 32)?;
    /// assert_eq!((s.messages(), s.bytes_sent()), (8 * 3, 8 * 3 * 32));
    /// assert!(matches!(
    ///     Reference::RecursiveDoublingAllreduce.record(6, 32),
    ///     Err(rpar::Error::RankFailed { rank: 0, .. })
    /// ));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn record(self, p: usize, bytes: usize) -> Result<Schedule> {
        let mut out = Vec::new();
        record(p, |rec| self.execute(rec, bytes, &mut out))
    }
}
