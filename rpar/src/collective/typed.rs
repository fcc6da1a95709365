//! Collectives on committed derived datatypes (MPI_Bcast, MPI_Gather, MPI_Scatter,
//! MPI_Allgather and MPI_Alltoall with a datatype and a count): the forms of [`Comm::bcast`],
//! [`Comm::gather`], [`Comm::scatter`], [`Comm::allgather`] and [`Comm::alltoall`] that take
//! [`Typed`] buffers (the impls of their argument traits are here), so that non-contiguous data
//! (a column of a row-major matrix, every other element, the fields of a struct) can be
//! collected or spread without copying it out by hand first. Each starts with
//! [`Comm::typed_call`].
//!
//! Each call runs in three steps:
//!
//! 1. every rank checks its buffers against its types and counts (bounds, and that every entry
//!    lands on a value of its basic type) before anything is copied or sent — only the sides
//!    it reads: MPI ignores a non-root's receive arguments of a gather and its send arguments
//!    of a scatter, so those are neither checked nor fingerprinted (a neutral value stands
//!    for them in step 2);
//! 2. the ranks compare their type signatures, MPI's rule for collectives: what a rank sends a
//!    rank must have the signature of what that rank receives. Each rank contributes a
//!    fingerprint of each side — its bytes, and the primitive period of the signature (the
//!    shortest sequence of basic types that the signature of one element repeats, computed at
//!    commit), verbatim if it has at most three runs of one basic type, else as its length and
//!    a 64-bit hash — to one small allgather, so that every rank sees every mismatch (and every
//!    other rank's bad buffer) and returns the same error. Only two different periods of more
//!    than three runs whose hashes collide could pass for each other;
//! 3. the data travels packed, as bytes, through the byte collective of the same family with
//!    the chosen algorithm, and each receiver unpacks it into place.
//!
//! So the cost is that of the byte collective plus one pack and one unpack per rank and the
//! allgather of 72 bytes per rank.
//!
//! The v-forms (`typed_v.rs`) run the same steps on sides whose blocks have a count per rank
//! ([`Blocks::Varying`]): their counts join the allgather of step 2, and every pair of ranks
//! is compared.

use super::forms::{AllgatherArgs, AlltoallArgs, BcastBuf, GatherArgs, ScatterArgs, Typed};
use super::layout::{
    blocks_total, check_disjoint, check_per_rank, check_root, offsets_of_counts, zeroed_vec,
};
use super::select::Label;
use super::using::CollectiveAlgorithm;
use super::{Allgather, Alltoall, Bcast, Gather, Scatter};
use crate::comm::Call;
use crate::datatype::{Access, CommittedType, Datatype, PeriodDigest};
use crate::{Comm, Error, Result};

/// What a rank's type signature looks like from outside, in four words: its bytes, and the
/// digest of its primitive period, computed once at commit (`PeriodDigest` in
/// `datatype/commit.rs`). Two signatures are the same sequence of basic types exactly when they
/// hold as many bytes and have the same period (`Compiled::same_signature`): equal
/// fingerprints, exactly so for periods of up to three runs, up to a 64-bit hash's collision
/// for longer ones (the digest says what that risks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    /// Bytes of data in all (packed size).
    pub(crate) bytes: u64,
    /// The digest of one element's primitive period; that of nothing if there are no bytes.
    period: PeriodDigest,
}

impl Fingerprint {
    /// The fingerprint of `count` elements of `ty`: O(1), whatever the type.
    pub(crate) fn of(ty: &CommittedType, count: usize, call: &'static str) -> Result<Fingerprint> {
        let c = &*ty.inner;
        let bytes = c.size.checked_mul(count).ok_or_else(|| {
            Error::invalid(
                call,
                format!("{count} elements of {} bytes overflow usize", c.size),
            )
        })?;
        Ok(Fingerprint {
            bytes: bytes as u64,
            period: if bytes == 0 {
                PeriodDigest::NOTHING // an empty signature: no period to speak of
            } else {
                c.digest
            },
        })
    }

    /// The fingerprint of `n` times this signature (`n` blocks of a v-collective's unit): no
    /// overflow, as every rank checked the bytes of each of its blocks (`Side::check`).
    fn times(self, n: u64) -> Fingerprint {
        let bytes = self.bytes.saturating_mul(n);
        Fingerprint {
            bytes,
            period: if bytes == 0 {
                PeriodDigest::NOTHING
            } else {
                self.period
            },
        }
    }

    /// Whether data of this signature can be received by `other`: the same sequence of basic
    /// types (the same primitive period, in as many bytes).
    pub(crate) fn agrees(&self, other: &Fingerprint) -> bool {
        self == other
    }

    pub(crate) fn words(&self) -> [u64; 4] {
        let [a, b, c] = self.period.0;
        [self.bytes, a, b, c]
    }

    pub(crate) fn from_words(w: &[u64]) -> Fingerprint {
        Fingerprint {
            bytes: w[0],
            period: PeriodDigest([w[1], w[2], w[3]]),
        }
    }

    pub(crate) fn describe(&self) -> String {
        self.period.describe(self.bytes)
    }
}

/// Which ranks send to which in a collective, for the signature check.
#[derive(Debug, Clone, Copy)]
pub(super) enum Flow {
    /// The root sends to every rank (bcast, scatter).
    From(usize),
    /// Every rank sends to the root (gather).
    To(usize),
    /// Every rank sends to every rank (allgather, alltoall).
    All,
}

/// How the elements of one side of a typed call are laid out in its buffer.
#[derive(Debug, Clone, Copy)]
pub(super) enum Blocks<'a> {
    /// `blocks` blocks of `count` elements each, back to back from the buffer's start (the
    /// typed collectives of `typed.rs`).
    Uniform { count: usize, blocks: usize },
    /// One block per rank, rank `i`'s `counts[i]` elements from `displs[i]` extents into the
    /// buffer (the v-collectives of `typed_v.rs`); `what` names the side in errors.
    Varying {
        counts: &'a [usize],
        displs: &'a [usize],
        what: &'static str,
    },
}

/// One side of a typed call as this rank's arguments give it: the buffer, its type, and the
/// layout of its blocks (`None`: the side is not read at this rank, as MPI ignores a
/// non-root's receive arguments of a gather).
pub(super) struct Side<'a, T> {
    pub(super) buf: &'a [T],
    pub(super) ty: &'a CommittedType,
    pub(super) blocks: Option<Blocks<'a>>,
}

impl<'a, T: Datatype> Side<'a, T> {
    /// A side of `blocks` blocks of `count` elements each (if read here).
    fn new((buf, ty, count): (&'a [T], &'a CommittedType, usize), blocks: Option<usize>) -> Self {
        Side {
            buf,
            ty,
            blocks: blocks.map(|blocks| Blocks::Uniform { count, blocks }),
        }
    }

    /// The elements of `ty` this rank's buffer holds (none if the side is not read here; for
    /// a varying side at most `usize::MAX`).
    fn elements(&self, call: &'static str) -> Result<usize> {
        match self.blocks {
            None => Ok(0),
            Some(Blocks::Uniform { count, blocks }) => blocks_total(count, blocks, call),
            // saturating: no error after the signature check, where only this rank would see
            // it (a type of no bytes lets the counts add up past usize::MAX)
            Some(Blocks::Varying { counts, .. }) => {
                Ok(counts.iter().fold(0, |n: usize, &c| n.saturating_add(c)))
            }
        }
    }

    /// The fingerprint of this side's unit, if it is read here: of one block of a uniform
    /// side, of one element of a varying one (whose blocks are multiples of it). A side that
    /// is not read is not looked at at all (MPI ignores it, so its count may be anything).
    fn fingerprint(&self, call: &'static str) -> Result<Option<Fingerprint>> {
        self.blocks
            .map(|blocks| match blocks {
                Blocks::Uniform { count, .. } => Fingerprint::of(self.ty, count, call),
                Blocks::Varying { .. } => Fingerprint::of(self.ty, 1, call),
            })
            .transpose()
    }

    /// The per-rank counts of a varying side read here (its unit's multiple for each rank).
    pub(super) fn counts(&self) -> Option<&'a [usize]> {
        match self.blocks {
            Some(Blocks::Varying { counts, .. }) => Some(counts),
            _ => None,
        }
    }

    /// Checks that this side's elements lie in its buffer, if it is read here; for a varying
    /// side also that it has a count and a displacement per rank, that no block's bytes
    /// overflow, and (a receive side) that no two blocks write the same byte.
    fn check(&self, call: &'static str, access: Access, p: usize) -> Result<()> {
        let c = &*self.ty.inner;
        match self.blocks {
            None => Ok(()),
            Some(Blocks::Uniform { .. }) => {
                let count = self.elements(call)?;
                c.check_slice(call, self.buf, 0, count, access).map(drop)
            }
            Some(Blocks::Varying {
                counts,
                displs,
                what,
            }) => {
                check_per_rank(counts.len(), p, &format!("the {what} counts"), call)?;
                check_per_rank(displs.len(), p, &format!("the {what} displacements"), call)?;
                let len = std::mem::size_of_val(self.buf);
                let bytes: Vec<usize> = (0..p)
                    .map(|i| Ok(Fingerprint::of(self.ty, counts[i], call)?.bytes as usize))
                    .collect::<Result<_>>()?;
                offsets_of_counts(&bytes, call)?; // their total fits in usize
                for i in self.nonempty() {
                    let base = self.block_base(i, call)?;
                    c.check_buffer::<T>(call, base, len, counts[i], access)?;
                }
                if access == Access::Write {
                    self.check_no_overlap(call)?;
                }
                Ok(())
            }
        }
    }

    /// The ranks whose blocks of a varying side hold data.
    pub(super) fn nonempty(&self) -> impl Iterator<Item = usize> + 'a {
        let (counts, size) = (self.counts().unwrap_or(&[]), self.ty.size());
        (0..counts.len()).filter(move |&i| counts[i] > 0 && size > 0)
    }

    /// Where rank `i`'s block of a varying side starts: `displs[i] * extent` bytes into the
    /// buffer, which must be in it (a block may not start before the buffer or past its end).
    pub(super) fn block_base(&self, i: usize, call: &'static str) -> Result<usize> {
        let Some(Blocks::Varying { displs, what, .. }) = self.blocks else {
            return Ok(0);
        };
        let (d, extent) = (displs[i], self.ty.extent());
        let len = std::mem::size_of_val(self.buf);
        let at = d as i128 * extent as i128;
        if (0..=len as i128).contains(&at) {
            return Ok(at as usize);
        }
        Err(Error::invalid(
            call,
            format!(
                "the {what} block of rank {i} starts at displacement {d} x extent {extent} = \
                 byte {at}, outside the {what} buffer of {len} bytes"
            ),
        ))
    }

    /// Checks that no byte of a varying receive side is written twice (MPI calls such a call
    /// erroneous): no two blocks may share an element position (`displs[i]..displs[i] +
    /// counts[i]`), and, unless every element lies within its own extent (a positive extent
    /// at least the true extent), no two elements' bytes may overlap (checked exactly, on the
    /// sorted byte spans of all the blocks: O(b log b) for `b` contiguous pieces in all).
    fn check_no_overlap(&self, call: &'static str) -> Result<()> {
        let Some(Blocks::Varying { counts, displs, .. }) = self.blocks else {
            return Ok(());
        };
        let c = &*self.ty.inner;
        if c.size == 0 {
            return Ok(());
        }
        if let Some(i) = (0..counts.len()).find(|&i| displs[i].checked_add(counts[i]).is_none()) {
            return Err(Error::invalid(
                call,
                format!(
                    "the receive block of rank {i} ({} elements at displacement {}) ends past \
                     usize::MAX",
                    counts[i], displs[i]
                ),
            ));
        }
        check_disjoint(counts, displs, call)?;
        if c.extent > 0 && c.true_ub - c.true_lb <= c.extent {
            return Ok(());
        }
        let mut spans = Vec::new();
        for i in self.nonempty() {
            c.spans(self.block_base(i, call)?, counts[i], &mut spans);
        }
        spans.sort_unstable();
        match spans.windows(2).find(|w| w[0].1 > w[1].0) {
            None => Ok(()),
            Some(w) => Err(Error::invalid(
                call,
                format!(
                    "the receive blocks write byte {} of the receive buffer twice (bytes \
                     {}..{} and {}..{} of two elements): every byte may be received once only",
                    w[1].0, w[0].0, w[0].1, w[1].0, w[1].1
                ),
            )),
        }
    }
}

/// The words each rank contributes to the signature check: a status word, then the
/// fingerprints of its send and its receive side.
mod slots {
    use std::ops::Range;
    /// The send side's fingerprint.
    pub(super) const SEND: Range<usize> = 1..5;
    /// The receive side's fingerprint.
    pub(super) const RECV: Range<usize> = 5..9;
}

/// Bits of the status word (the first) of each rank's [`slots`].
mod status {
    /// This rank's own checks failed (it returns its own error, the others name it).
    pub(super) const FAILED: u64 = 1;
    /// Its send side is not read (zeros stand for its fingerprint).
    pub(super) const SEND_UNREAD: u64 = 2;
    /// Its receive side is not read (zeros stand for its fingerprint).
    pub(super) const RECV_UNREAD: u64 = 4;
}

/// The words of the signature check before the per-rank counts of a varying side.
const HEADER: usize = 9;

impl Comm {
    /// Steps 1 and 2 of every typed collective: checks this rank's buffers (before anything
    /// moves), then compares every rank's send and receive signatures along `flow`, so that
    /// every rank learns of every other's failed check and of every mismatch. Only the sides
    /// that are read at their rank are checked and compared (a non-root's receive side of a
    /// gather, its send side of a scatter are not). Returns the elements of the send and the
    /// receive side at this rank (0 for a side not read).
    fn typed_prologue<T: Datatype, U: Datatype>(
        &self,
        call: &'static str,
        send: &Side<'_, T>,
        recv: &Side<'_, U>,
        flow: Flow,
    ) -> Result<(usize, usize)> {
        self.typed_prologue_v(call, send, recv, flow, |_| [false; 2])
    }

    /// [`Comm::typed_prologue`] for sides that may be varying (one block per rank, the
    /// v-collectives): `varying(i)` says whether rank `i`'s send and receive sides are varying
    /// and read (the same answer on every rank, from the call's shape alone, and true at this
    /// rank for exactly its varying sides). Each rank contributes its status, the fingerprints
    /// of its sides' units and, for each varying side, its `p` counts to one allgather (of
    /// `72 + 8 p` bytes per varying side), and every rank compares every pair: what rank `i`
    /// sends rank `j`, `counts[j]` units of its send side, against what `j` receives from
    /// `i`. With no varying side the 72 bytes of each rank go through an allgather, and along
    /// [`Flow::All`] every pair agrees if all agree with rank 0's.
    pub(super) fn typed_prologue_v<T: Datatype, U: Datatype>(
        &self,
        call: &'static str,
        send: &Side<'_, T>,
        recv: &Side<'_, U>,
        flow: Flow,
        varying: impl Fn(usize) -> [bool; 2],
    ) -> Result<(usize, usize)> {
        let p = self.size();
        let lens: Vec<usize> = (0..p)
            .map(|i| HEADER + varying(i).iter().filter(|&&v| v).count() * p)
            .collect();
        debug_assert_eq!(
            varying(self.rank()),
            [send.counts().is_some(), recv.counts().is_some()]
        );
        let mine = send
            .check(call, Access::Read, p)
            .and_then(|()| recv.check(call, Access::Write, p))
            .and_then(|()| Ok((send.fingerprint(call)?, recv.fingerprint(call)?)));
        let mut words = vec![0u64; lens[self.rank()]];
        match &mine {
            Ok((s, r)) => {
                let sides = [
                    (s, slots::SEND, status::SEND_UNREAD),
                    (r, slots::RECV, status::RECV_UNREAD),
                ];
                for (side, at, unread) in sides {
                    match side {
                        Some(fp) => words[at].copy_from_slice(&fp.words()),
                        None => words[0] |= unread,
                    }
                }
                let counts = send.counts().into_iter().chain(recv.counts()).flatten();
                for (w, &n) in words[HEADER..].iter_mut().zip(counts) {
                    *w = n as u64;
                }
            }
            // this rank fails: it says so, then returns its own error
            Err(_) => words[0] = status::FAILED,
        }
        let all = if lens.iter().all(|&n| n == HEADER) {
            self.allgather(&words[..])?
        } else {
            self.allgather((&words[..], super::Counts(&lens)))?
        };
        mine?;
        let off = offsets_of_counts(&lens, call)?;
        let at = |i: usize| &all[off[i]..off[i + 1]];
        if let Some(bad) = (0..p).find(|&i| at(i)[0] & status::FAILED != 0) {
            let what = if (0..p).any(|i| varying(i) != [false; 2]) {
                "datatype, counts and displacements touch (or its counts and displacements \
                 are not one per rank)"
            } else {
                "datatype and count touch"
            };
            return Err(Error::invalid(
                call,
                format!(
                    "rank {bad}'s buffer does not hold what its {what} (it reports the details)"
                ),
            ));
        }
        // the counts of rank i's varying side `s` (0 send, 1 receive), if it has one
        let counts = |i: usize, s: usize| {
            let v = varying(i);
            v[s].then(|| {
                let from = HEADER + if s == 1 && v[0] { p } else { 0 };
                &at(i)[from..from + p]
            })
        };
        let side = |i: usize, peer: usize, s: usize, unread: u64| {
            let range = if s == 0 { slots::SEND } else { slots::RECV };
            (at(i)[0] & unread == 0).then(|| {
                let unit = Fingerprint::from_words(&at(i)[range]);
                unit.times(counts(i, s).map_or(1, |c| c[peer]))
            })
        };
        // what rank i sends rank j, and what rank j receives from rank i
        let sent = |i: usize, j: usize| side(i, j, 0, status::SEND_UNREAD);
        let received = |j: usize, i: usize| side(j, i, 1, status::RECV_UNREAD);
        let uniform = (0..p).all(|i| varying(i) == [false; 2]);
        let pairs: Box<dyn Iterator<Item = (usize, usize)>> = match flow {
            Flow::From(root) => Box::new((0..p).map(move |j| (root, j))),
            Flow::To(root) => Box::new((0..p).map(move |i| (i, root))),
            // signatures that agree are equal: every pair agrees if all agree with rank 0's
            Flow::All if uniform => Box::new((0..p).map(|j| (0, j)).chain((0..p).map(|i| (i, 0)))),
            Flow::All => Box::new((0..p).flat_map(move |i| (0..p).map(move |j| (i, j)))),
        };
        for (i, j) in pairs {
            // a side not read at its rank has no signature to agree with (the root of a
            // broadcast does not receive)
            let (Some(s), Some(r)) = (sent(i, j), received(j, i)) else {
                continue;
            };
            if !s.agrees(&r) {
                // every rank finds the same from the same words: everyone's error, which ends
                // the run (a rank that returned it first would otherwise abort the others
                // while they are still in the call, as `Aborted`)
                return Err(self.endpoint().collective_failure(Error::TypeMismatch {
                    sent: s.describe(),
                    expected: format!("{} at rank {j}", r.describe()),
                    source_rank: i,
                }));
            }
        }
        Ok((send.elements(call)?, recv.elements(call)?))
    }
}

/// A typed collective call in progress at this rank: its name (for errors), the algorithm
/// chosen for its family, and whether this rank is its root.
#[derive(Debug, Clone, Copy)]
pub(super) struct TypedCall<A> {
    pub(super) name: &'static str,
    pub(super) algorithm: A,
    pub(super) is_root: bool,
}

impl<A> TypedCall<A> {
    /// `Some(n)` at the root, `None` elsewhere: the blocks of a side only the root reads.
    pub(super) fn at_root(&self, n: usize) -> Option<usize> {
        self.is_root.then_some(n)
    }
}

impl Comm {
    /// Runs `body` as the typed collective call `name` (traced, checked against the other
    /// ranks' calls) with the algorithm chosen for its family, rooted at `root` if the call
    /// has one, which is checked first. Where every typed collective starts.
    pub(super) fn typed_call<A: CollectiveAlgorithm + Label>(
        &self,
        name: &'static str,
        root: Option<usize>,
        body: impl FnOnce(TypedCall<A>) -> Result<()>,
    ) -> Result<()> {
        let algorithm = self.chosen::<A>();
        let traced = match root {
            Some(root) => Call::new(name).root(root),
            None => Call::new(name),
        };
        self.collective(traced, &algorithm, || {
            if let Some(root) = root {
                check_root(self, root)?;
            }
            let is_root = root == Some(self.rank());
            body(TypedCall {
                name,
                algorithm,
                is_root,
            })
        })
    }
}

impl<'t, T: Datatype> Typed<'t, &[T]> {
    /// This buffer as a side of `blocks` blocks of its count (if read here).
    pub(super) fn side(&self, blocks: Option<usize>) -> Side<'_, T> {
        Side::new((self.buf, self.ty, self.count), blocks)
    }
}

impl<'t, T: Datatype> Typed<'t, &mut [T]> {
    /// This buffer as a side of `blocks` blocks of its count (if read here).
    pub(super) fn side(&self, blocks: Option<usize>) -> Side<'_, T> {
        Side::new((&*self.buf, self.ty, self.count), blocks)
    }
}

impl<T: Datatype> BcastBuf for Typed<'_, &mut [T]> {
    fn bcast(self, comm: &Comm, root: usize) -> Result<()> {
        comm.typed_call("bcast_typed", Some(root), |call: TypedCall<Bcast>| {
            let (send, recv) = (
                self.side(call.at_root(1)),
                self.side((!call.is_root).then_some(1)),
            );
            comm.typed_prologue(call.name, &send, &recv, Flow::From(root))?;
            let (buf, ty, count) = (self.buf, self.ty, self.count);
            if call.is_root {
                let mut packed = ty.pack_to_vec(buf, count)?;
                return comm.bcast_with(&mut packed[..], root, call.algorithm);
            }
            let mut packed = zeroed_vec::<u8>(ty.pack_size(count), call.name)?;
            comm.bcast_with(&mut packed[..], root, call.algorithm)?;
            ty.unpack(&packed, &mut 0, buf, count)
        })
    }
}

impl<T: Datatype, U: Datatype> GatherArgs for (Typed<'_, &[T]>, Typed<'_, &mut [U]>) {
    type Output = ();
    fn gather(self, comm: &Comm, root: usize) -> Result<()> {
        let (send, recv) = self;
        comm.typed_call("gather_typed", Some(root), |call: TypedCall<Gather>| {
            let sides = (send.side(Some(1)), recv.side(call.at_root(comm.size())));
            let (_, all) = comm.typed_prologue(call.name, &sides.0, &sides.1, Flow::To(root))?;
            let packed = send.ty.pack_to_vec(send.buf, send.count)?;
            if !call.is_root {
                return comm.gather_into_with(Some(&packed[..]), &mut [], root, call.algorithm);
            }
            let mut gathered = zeroed_vec::<u8>(recv.ty.pack_size(all), call.name)?;
            comm.gather_into_with(Some(&packed[..]), &mut gathered, root, call.algorithm)?;
            recv.ty.unpack(&gathered, &mut 0, recv.buf, all)
        })
    }
}

impl<T: Datatype, U: Datatype> ScatterArgs for (Typed<'_, &[T]>, Typed<'_, &mut [U]>) {
    type Output = ();
    fn scatter(self, comm: &Comm, root: usize) -> Result<()> {
        let (send, recv) = self;
        comm.typed_call("scatter_typed", Some(root), |call: TypedCall<Scatter>| {
            let sides = (send.side(call.at_root(comm.size())), recv.side(Some(1)));
            let (all, _) = comm.typed_prologue(call.name, &sides.0, &sides.1, Flow::From(root))?;
            let packed = if call.is_root {
                send.ty.pack_to_vec(send.buf, all)?
            } else {
                Vec::new()
            };
            let mine = comm.scatter_with(&packed, root, call.algorithm)?;
            recv.ty.unpack(&mine, &mut 0, recv.buf, recv.count)
        })
    }
}

impl<T: Datatype, U: Datatype> AllgatherArgs for (Typed<'_, &[T]>, Typed<'_, &mut [U]>) {
    type Output = ();
    fn allgather(self, comm: &Comm) -> Result<()> {
        let (send, recv) = self;
        comm.typed_call("allgather_typed", None, |call: TypedCall<Allgather>| {
            let sides = (send.side(Some(1)), recv.side(Some(comm.size())));
            let (_, all) = comm.typed_prologue(call.name, &sides.0, &sides.1, Flow::All)?;
            let packed = send.ty.pack_to_vec(send.buf, send.count)?;
            let gathered = comm.allgather_with(&packed[..], call.algorithm)?;
            recv.ty.unpack(&gathered, &mut 0, recv.buf, all)
        })
    }
}

impl<T: Datatype, U: Datatype> AlltoallArgs for (Typed<'_, &[T]>, Typed<'_, &mut [U]>) {
    type Output = ();
    fn alltoall(self, comm: &Comm) -> Result<()> {
        let (send, recv) = self;
        comm.typed_call("alltoall_typed", None, |call: TypedCall<Alltoall>| {
            let p = Some(comm.size());
            let (sent, all) =
                comm.typed_prologue(call.name, &send.side(p), &recv.side(p), Flow::All)?;
            let packed = send.ty.pack_to_vec(send.buf, sent)?;
            let exchanged = comm.alltoall_with(&packed[..], call.algorithm)?;
            recv.ty.unpack(&exchanged, &mut 0, recv.buf, all)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::TypeMap;

    #[test]
    fn signatures_agree_as_sequences_of_basic_types() -> Result<()> {
        let f64s = |n| TypeMap::contiguous(n, &f64::type_map()).map(|t| t.commit());
        let column = TypeMap::vector(4, 1, 8, &f64::type_map())?.commit();
        let fp = |t: &CommittedType, n| Fingerprint::of(t, n, "t");
        // 1 column of 4 doubles = 4 contiguous doubles = 2 x 2 doubles
        assert!(fp(&column, 1)?.agrees(&fp(&f64s(4)?, 1)?));
        assert!(fp(&column, 1)?.agrees(&fp(&f64s(2)?, 2)?));
        assert!(!fp(&column, 1)?.agrees(&fp(&f64s(3)?, 1)?));
        let i32s = TypeMap::contiguous(4, &i32::type_map())?.commit();
        assert!(!fp(&i32s, 2)?.agrees(&fp(&f64s(4)?, 1)?)); // the same bytes, other types
                                                            // (f64, i32) twice is not (f64, f64, i32, i32)
        let (f, i) = (f64::type_map(), i32::type_map());
        let pair = TypeMap::structure(&[(1, 0, &f), (1, 8, &i)])?;
        let two = TypeMap::contiguous(2, &pair)?.commit();
        let sorted = TypeMap::structure(&[(2, 0, &f), (2, 16, &i)])?.commit();
        assert!(fp(&two, 1)?.agrees(&fp(&pair.commit(), 2)?));
        assert!(!fp(&two, 1)?.agrees(&fp(&sorted, 1)?));
        // nothing agrees with nothing, whatever the types
        assert!(fp(&i32s, 0)?.agrees(&fp(&column, 0)?));
        // periods of up to three runs travel verbatim: as many bytes, runs of other lengths
        let runs = |nf, ni| TypeMap::structure(&[(nf, 0, &f), (ni, 8 * nf as isize, &i)]);
        let (a, b) = (runs(2, 4)?.commit(), runs(3, 2)?.commit());
        assert_eq!((a.size(), b.size()), (32, 32));
        assert!(!fp(&a, 3)?.agrees(&fp(&b, 3)?));
        assert_eq!(
            fp(&a, 3)?.describe(),
            "18 basic values in 96 bytes: repetitions of (f64 x 2, i32 x 4)"
        );
        // longer ones as a hash: the same four fields in another order do not agree
        let fields = [
            i8::type_map(),
            i16::type_map(),
            i32::type_map(),
            f64::type_map(),
        ];
        let quad = |order: [usize; 4]| {
            let at = [0, 2, 4, 8];
            let blocks: Vec<_> = (0..4).map(|k| (1, at[k], &fields[order[k]])).collect();
            TypeMap::structure(&blocks)
        };
        let (one, two) = (
            quad([0, 1, 2, 3])?,
            TypeMap::contiguous(2, &quad([0, 1, 2, 3])?)?,
        );
        assert!(fp(&one.commit(), 2)?.agrees(&fp(&two.commit(), 1)?));
        let other = quad([0, 1, 3, 2])?.commit();
        assert!(!fp(&one.commit(), 1)?.agrees(&fp(&other, 1)?));
        let hashed = fp(&other, 1)?;
        let described = hashed.describe();
        assert!(
            described.starts_with(
                "4 basic values in 15 bytes: repetitions of a period of 4 basic types in 15 bytes"
            ),
            "{described}"
        );
        assert_eq!(Fingerprint::from_words(&hashed.words()), hashed);
        Ok(())
    }
}
