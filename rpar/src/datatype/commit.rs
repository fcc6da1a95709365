//! Commit (MPI_Type_commit): compiling a [`TypeMap`] into merged byte segments, and checking a
//! committed type against the Rust buffer it is used on.
//!
//! The compiled form is a list of [`Run`]s in map order: entries whose bytes follow each other
//! are merged into one block, and successive blocks of one length at a constant stride into one
//! run. `vector(2M, 1, 2, f64)` compiles to a single run; pack and the non-contiguous sends walk
//! the runs (see `engine.rs`). The signature is kept run-length encoded, with its primitive
//! period: every type-signature check of rpar — point-to-point, typed receives, the
//! shared-memory and the typed collectives — compares these, computed once here.

use super::{BasicType, Datatype, TypeMap};
use crate::{Error, Result};
use std::any::TypeId;
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

/// `count` blocks of `len` bytes, the first at byte `disp`, successive ones `stride` bytes
/// apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) disp: isize,
    pub(crate) len: usize,
    pub(crate) count: usize,
    pub(crate) stride: isize,
}

/// Whether a buffer is read (send, pack) or written (receive, unpack).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// A committed datatype (MPI_Type_commit): a [`TypeMap`] compiled for communication.
///
/// Only committed types can be used to pack or to communicate — the type system enforces
/// MPI's rule that a type must be committed first. Cloning is cheap (the compiled form is
/// shared); dropping the last clone frees it (MPI_Type_free).
///
/// ```
/// use rpar::{Datatype, TypeMap};
/// let column = TypeMap::vector(4, 1, 8, &f64::type_map())?.commit();
/// assert_eq!((column.size(), column.extent()), (32, 200));
/// assert_eq!(column.segments(), 4); // four separate doubles
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Clone)]
pub struct CommittedType {
    pub(crate) inner: Arc<Compiled>,
}

#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) map: TypeMap,
    pub(crate) runs: Vec<Run>,
    /// The type signature, run-length encoded: (basic type, how many in a row).
    pub(crate) signature: Vec<(BasicType, usize)>,
    /// The primitive period of the signature ([`Compiled::period`]), kept as the signature's
    /// first pieces and a last one of its own.
    period: (usize, Option<(BasicType, usize)>),
    /// The period in three words, for comparing signatures across ranks.
    pub(crate) digest: PeriodDigest,
    /// Whether the map is gap-free in memory order ([`TypeMap::is_dense`]): an element's bytes
    /// are its packed bytes.
    pub(crate) dense: bool,
    /// `Some(b)` if every entry is of basic type `b`.
    pub(crate) uniform: Option<BasicType>,
    pub(crate) size: usize,
    pub(crate) extent: isize,
    /// The true bounds of the data (MPI_Type_get_true_extent), computed once.
    pub(crate) true_lb: isize,
    pub(crate) true_ub: isize,
    /// Entries whose bytes must be validated before they are written (bool, char): their
    /// offsets in the packed form of one element.
    pub(crate) validated: Vec<(usize, BasicType)>,
    /// The largest power of two, at most 16, that divides every block length: every block of
    /// the packed stream starts at a multiple of it.
    pub(crate) block_align: usize,
}

impl fmt::Debug for CommittedType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommittedType")
            .field("size", &self.inner.size)
            .field("extent", &self.inner.extent)
            .field("runs", &self.inner.runs.len())
            .finish()
    }
}

impl fmt::Display for CommittedType {
    /// The type map, in the lecture's notation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.map.fmt(f)
    }
}

impl TypeMap {
    /// Commits the type (MPI_Type_commit): compiles it into merged contiguous byte segments so
    /// that it can be used to pack and to communicate. The type map itself stays usable.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // every other f64 of a row of 8: four separate 8-byte segments
    /// let map = TypeMap::vector(4, 1, 2, &f64::type_map())?;
    /// let strided = map.commit();
    /// assert_eq!((strided.size(), strided.segments()), (32, 4));
    /// assert_eq!(strided.type_map(), &map);
    /// let packed = strided.pack_to_vec(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], 1)?;
    /// assert_eq!(packed.len(), 32);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn commit(&self) -> CommittedType {
        CommittedType {
            inner: Arc::new(Compiled::new(self.clone())),
        }
    }
}

impl Compiled {
    fn new(map: TypeMap) -> Self {
        let mut runs: Vec<Run> = Vec::new();
        let mut block: Option<(isize, usize)> = None;
        let mut signature: Vec<(BasicType, usize)> = Vec::new();
        let mut validated = Vec::new();
        let mut packed = 0;
        for &(b, d) in map.entries() {
            block = match block {
                Some((start, len)) if start + len as isize == d => Some((start, len + b.size())),
                Some(done) => {
                    push_block(&mut runs, done);
                    Some((d, b.size()))
                }
                None => Some((d, b.size())),
            };
            match signature.last_mut() {
                Some((last, n)) if *last == b => *n += 1,
                _ => signature.push((b, 1)),
            }
            if !b.all_bit_patterns_valid() {
                validated.push((packed, b));
            }
            packed += b.size();
        }
        if let Some(done) = block {
            push_block(&mut runs, done);
        }
        let period = primitive_period_of(&signature);
        let digest = PeriodDigest::of(period_pieces(&signature, period));
        let uniform = match signature.as_slice() {
            [(b, _)] => Some(*b),
            _ => None,
        };
        let block_align = runs
            .iter()
            .fold(16, |a: usize, r| a.min(1 << r.len.trailing_zeros()));
        Compiled {
            block_align,
            digest,
            period,
            dense: map.is_dense(),
            size: packed,
            extent: map.extent(),
            true_lb: map.true_lb(),
            true_ub: map.true_ub(),
            map,
            runs,
            signature,
            uniform,
            validated,
        }
    }

    /// `count` elements as a single run, if their blocks form one: one element of a single
    /// run, copies of a single-block type (`count` blocks `extent` apart), or copies of a
    /// single run whose stride continues from one element to the next (the extent is the run's
    /// count times its stride, as for a subarray of whole rows' column range).
    pub(crate) fn as_one_run(&self, count: usize) -> Option<Run> {
        let [r] = self.runs.as_slice() else {
            return None;
        };
        if count == 1 {
            Some(*r)
        } else if r.count == 1 {
            Some(Run {
                count,
                stride: self.extent,
                ..*r
            })
        } else if r.stride.checked_mul(r.count as isize) == Some(self.extent) {
            Some(Run {
                count: r.count.checked_mul(count)?,
                ..*r
            })
        } else {
            None
        }
    }

    /// Checks that `count` elements of this type, with displacement 0 at byte `base` (any byte,
    /// at most `len`) of a buffer of `len` bytes of `T`s, stay inside it, and that every entry
    /// lands on a value of its own basic type in `T`'s layout (a `byte` entry on any data byte;
    /// when writing, not on a `bool` or `char`). A `base` past the end is an error even for no
    /// data, so that callers may offset the buffer's pointer by it.
    pub(crate) fn check_buffer<T: Datatype>(
        &self,
        call: &'static str,
        base: usize,
        len: usize,
        count: usize,
        access: Access,
    ) -> Result<()> {
        if base > len {
            return Err(Error::invalid(
                call,
                format!("a start {base} bytes into a buffer of {len} bytes"),
            ));
        }
        if count == 0 || self.size == 0 {
            return Ok(());
        }
        let last = (count as i128 - 1) * self.extent as i128;
        let low = base as i128 + self.true_lb as i128 + last.min(0);
        let high = base as i128 + self.true_ub as i128 + last.max(0);
        if low < 0 || high > len as i128 {
            return Err(Error::BufferOutOfBounds {
                call,
                low,
                high,
                len,
            });
        }
        // computed at compile time: no type map is built for buffers of one basic type
        if self.fits_uniform(const { T::LAYOUT.dense_uniform() }, base, count, access) {
            return Ok(());
        }
        self.check_entries::<T>(call, &T::type_map(), base, count, access)
    }

    /// The fast check for buffers whose element is gap-free and of one basic type `b` (`f64`,
    /// `[i32; 4]`, …, see [`TypeLayout::dense_uniform`](super::TypeLayout::dense_uniform)):
    /// O(runs).
    fn fits_uniform(
        &self,
        elem: Option<BasicType>,
        base: usize,
        count: usize,
        access: Access,
    ) -> bool {
        let Some(b) = elem else {
            return false;
        };
        match self.uniform {
            Some(BasicType::Byte) => access == Access::Read || b.all_bit_patterns_valid(),
            Some(u) if u == b => {
                let s = b.size() as isize;
                let aligned = |x: isize| x % s == 0;
                base.is_multiple_of(b.size())
                    && (count == 1 || aligned(self.extent))
                    && self
                        .runs
                        .iter()
                        .all(|r| aligned(r.disp) && (r.count == 1 || aligned(r.stride)))
            }
            _ => false,
        }
    }

    /// The general check: every entry of every element, `base` bytes into the buffer, against
    /// `T`'s sorted entries.
    fn check_entries<T: Datatype>(
        &self,
        call: &'static str,
        elem: &TypeMap,
        base: usize,
        count: usize,
        access: Access,
    ) -> Result<()> {
        let t_size = std::mem::size_of::<T>() as isize; // > 0: the bounds check passed
        let mut sorted = elem.entries.to_vec();
        sorted.sort_by_key(|&(_, d)| d);
        // with an extent that is a multiple of T's size every element looks alike
        let distinct = if self.extent % t_size == 0 { 1 } else { count };
        for k in 0..distinct as isize {
            for &(b, d) in self.map.entries() {
                let pos = d + k * self.extent;
                // in the buffer (the bounds check passed), so `base + pos` fits in isize
                let off = (base as isize + pos).rem_euclid(t_size);
                let i = sorted.partition_point(|&(_, e)| e <= off);
                let under = i
                    .checked_sub(1)
                    .map(|i| sorted[i])
                    .filter(|&(e, at)| off < at + e.size() as isize);
                let ok = match under {
                    Some((e, at)) if e == b && at == off => true,
                    Some((e, _)) => {
                        b == BasicType::Byte
                            && (access == Access::Read || e.all_bit_patterns_valid())
                    }
                    None => false,
                };
                if !ok {
                    let found = match under {
                        Some((e, at)) => format!("byte {} of a {e}", off - at),
                        None => "padding".to_string(),
                    };
                    return Err(Error::invalid(
                        call,
                        format!(
                            "the datatype's entry ({b}, {pos}) must land on a {b} of the \
                             buffer's element type {}, but byte {off} of it is {found}",
                            std::any::type_name::<T>()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Appends a block to the runs, extending the last run if it continues its stride.
///
/// No difference here overflows: block starts are entry displacements, and every constructor
/// guarantees that the true extent (the span of all entries) fits in `isize`
/// (`TypeMap::checked`).
fn push_block(runs: &mut Vec<Run>, (disp, len): (isize, usize)) {
    if let Some(r) = runs.last_mut() {
        if r.len == len {
            if r.count == 1 {
                r.stride = disp - r.disp;
                r.count = 2;
                return;
            }
            if disp - (r.disp + (r.count as isize - 1) * r.stride) == r.stride {
                r.count += 1;
                return;
            }
        }
    }
    runs.push(Run {
        disp,
        len,
        count: 1,
        stride: 0,
    });
}

impl CommittedType {
    /// The type map this type was committed from (what MPI_Type_get_envelope and
    /// MPI_Type_get_contents decode from an MPI datatype).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::contiguous(2, &u32::type_map())?.commit();
    /// assert_eq!(t.type_map().to_string(), "{(u32, 0), (u32, 4)}");
    /// assert_eq!(t.to_string(), t.type_map().to_string()); // it prints the same
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn type_map(&self) -> &TypeMap {
        &self.inner.map
    }

    /// Bytes of data in one element (MPI_Type_size).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::vector(4, 1, 8, &f64::type_map())?.commit();
    /// assert_eq!(t.size(), 4 * 8);
    /// assert_eq!(t.size(), t.type_map().size());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.inner.size
    }

    /// The extent (MPI_Type_get_extent): the stride between successive elements.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::vector(4, 1, 8, &f64::type_map())?.commit();
    /// assert_eq!(t.extent(), 3 * 64 + 8);
    /// assert_eq!(t.extent(), t.type_map().extent());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn extent(&self) -> isize {
        self.inner.extent
    }

    /// How many contiguous byte segments one element is made of, after merging adjacent
    /// entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let rows = TypeMap::vector(3, 4, 4, &f32::type_map())?.commit(); // gap-free
    /// assert_eq!(rows.segments(), 1);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn segments(&self) -> usize {
        self.inner.runs.iter().map(|r| r.count).sum()
    }

    /// Bytes that `count` elements take when packed (MPI_Pack_size): `count * size()`
    /// (saturating at `usize::MAX`).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::vector(3, 1, -2, &i32::type_map())?.commit();
    /// assert_eq!(t.pack_size(2), 24);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn pack_size(&self, count: usize) -> usize {
        count.saturating_mul(self.inner.size)
    }
}

/// How a message's type signature compares with a receive's (MPI's matching rule: the sent
/// sequence of basic types must be a prefix of the receive's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignatureMatch {
    /// The sent signature is a prefix of the receive's.
    Accepted,
    /// The sent signature matches as far as the receive goes, but is longer.
    Truncated,
    /// The basic types differ.
    Mismatch,
}

/// The signature of `count` elements as pieces of (basic type, how many in a row).
fn signature_pieces(ty: &Compiled, count: usize) -> impl Iterator<Item = (BasicType, usize)> + '_ {
    let (reps, uniform) = match ty.signature.as_slice() {
        // n * count <= size * count, which the callers checked fits
        [(b, n)] => (1, Some((*b, n * count))),
        [] => (0, None), // no data, however many elements: nothing to walk
        _ => (count, None),
    };
    let pieces: Box<dyn Iterator<Item = (BasicType, usize)> + '_> = match uniform {
        Some(piece) => Box::new(std::iter::once(piece)),
        None => Box::new((0..reps).flat_map(move |_| ty.signature.iter().copied())),
    };
    pieces
}

impl Compiled {
    /// Whether a receive of `recv_count` elements of `self` accepts `sent_count` elements of
    /// `sent`.
    pub(crate) fn accepts(
        &self,
        recv_count: usize,
        sent: &Compiled,
        sent_count: usize,
    ) -> SignatureMatch {
        let mut theirs = signature_pieces(sent, sent_count);
        let mut ours = signature_pieces(self, recv_count);
        let (mut a, mut b) = (None::<(BasicType, usize)>, None::<(BasicType, usize)>);
        loop {
            let (sb, sn) = match a.take().or_else(|| theirs.next()) {
                Some(p) => p,
                None => return SignatureMatch::Accepted,
            };
            let Some((rb, rn)) = b.take().or_else(|| ours.next()) else {
                return SignatureMatch::Truncated;
            };
            if sb != rb {
                return SignatureMatch::Mismatch;
            }
            let n = sn.min(rn);
            if sn > n {
                a = Some((sb, sn - n));
            }
            if rn > n {
                b = Some((rb, rn - n));
            }
        }
    }

    /// A short description of `count` elements, for error messages.
    pub(crate) fn describe(&self, count: usize) -> String {
        let shown: Vec<String> = self
            .map
            .entries
            .iter()
            .take(6)
            .map(|(b, d)| format!("({b}, {d})"))
            .collect();
        let more = if self.map.entries.len() > 6 {
            ", …"
        } else {
            ""
        };
        format!(
            "{count} x a committed type of {} bytes {{{}{more}}}",
            self.size,
            shown.join(", ")
        )
    }

    /// The compiled form of a type map, for the engine's tests (a Rust type's is
    /// [`Compiled::of_type`], a committed type's is in the [`CommittedType`]).
    #[cfg(test)]
    pub(crate) fn of_map(map: TypeMap) -> Self {
        Compiled::new(map)
    }

    /// The compiled type map of the Rust type `T`, for plain messages met by typed receives,
    /// typed messages met by plain ones and plain ones of another type: compiled the first time
    /// it is asked for, then shared by every rank of the process for the rest of it (one per
    /// Rust type a program sends, never freed: a reference costs no count on the hot path).
    pub(crate) fn of_type<T: Datatype>() -> &'static Compiled {
        static COMPILED: LazyLock<RwLock<HashMap<TypeId, &'static Compiled>>> =
            LazyLock::new(RwLock::default);
        // the type this thread asked for last: a send or receive asks again and again for the
        // same one (twice per message between processes), and the shared map costs a lock and
        // a hash each time
        thread_local! {
            static LAST: Cell<Option<(TypeId, &'static Compiled)>> = const { Cell::new(None) };
        }
        let id = TypeId::of::<T>();
        let last = LAST.try_with(Cell::get);
        if let Ok(Some((t, c))) = last {
            if t == id {
                return c;
            }
        }
        let c = Self::of_type_shared::<T>(&COMPILED, id);
        // (a thread's storage is gone only while the thread ends: then the map answers)
        let _ = LAST.try_with(|last| last.set(Some((id, c))));
        c
    }

    /// [`Compiled::of_type`] from the map every thread shares, compiled on first use.
    fn of_type_shared<T: Datatype>(
        compiled: &RwLock<HashMap<TypeId, &'static Compiled>>,
        id: TypeId,
    ) -> &'static Compiled {
        // nothing panics while a lock is held, so a poisoned map is still whole
        let known = compiled
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .copied();
        if let Some(c) = known {
            return c;
        }
        // compiled before the lock is taken (the type's own code runs outside it); leaked
        // only by the thread whose copy goes in
        let new = Compiled::new(T::type_map());
        compiled
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id)
            .or_insert_with(|| Box::leak(Box::new(new)))
    }

    /// The primitive period of the signature, run-length encoded: the shortest sequence of
    /// basic types that one element's signature repeats (nothing for a type of no data). Two
    /// signatures are the same sequence exactly when they have the same period and as many
    /// bytes ([`Compiled::same_signature`]).
    pub(crate) fn period(&self) -> impl Iterator<Item = (BasicType, usize)> + '_ {
        period_pieces(&self.signature, self.period)
    }

    /// Whether `count` elements of this type are the same sequence of basic types as
    /// `other_count` elements of `other` (MPI's type-signature rule where neither may be longer
    /// than the other): as many bytes and, if there are any, the same primitive period — a
    /// sequence that is a repetition of two words is a repetition of their common primitive
    /// word (Lyndon and Schützenberger). O(length of the period).
    pub(crate) fn same_signature(
        &self,
        count: usize,
        other: &Compiled,
        other_count: usize,
    ) -> bool {
        match (
            self.size.checked_mul(count),
            other.size.checked_mul(other_count),
        ) {
            (Some(a), Some(b)) if a == b => a == 0 || self.period().eq(other.period()),
            _ => false,
        }
    }
}

/// The primitive period of the run-length encoded signature `sig` (successive pieces of
/// different basic types), run-length encoded: the shortest sequence of basic types that `sig`
/// is a repetition of, as `sig`'s first `n` pieces and, if there is one, a last piece of its own
/// (see [`period_pieces`]): so the period of a signature that does not repeat costs no memory.
///
/// Computed on the pieces, in time linear in their number. A repetition of a sequence `p` is,
/// run-length encoded, a repetition of `p`'s pieces when `p` starts and ends with different
/// basic types. When both its ends are of one type `b`, every joint merges `p`'s last piece of
/// `b` with its first: then the signature read as a cycle (its last piece merged into its
/// first) is a repetition of `p` read as a cycle, and `p` is one period of that cycle with its
/// first piece split as the signature's ends split it.
fn primitive_period_of(sig: &[(BasicType, usize)]) -> (usize, Option<(BasicType, usize)>) {
    match sig {
        [] => (0, None),
        [(b, _)] => (0, Some((*b, 1))),
        [(first, n), inner @ .., (last, m)] if first == last => {
            let cycle: Vec<_> = std::iter::once((*first, n + m))
                .chain(inner.iter().copied())
                .collect();
            match primitive_period(&cycle) {
                p if p == cycle.len() => (sig.len(), None),
                // the cycle's period from its second piece on is the signature's
                p => (p, Some((*last, *m))),
            }
        }
        _ => (primitive_period(sig), None),
    }
}

/// The pieces of a period that [`primitive_period_of`] gave.
fn period_pieces(
    sig: &[(BasicType, usize)],
    (n, last): (usize, Option<(BasicType, usize)>),
) -> impl Iterator<Item = (BasicType, usize)> + Clone + '_ {
    sig[..n].iter().copied().chain(last)
}

/// The primitive period of a signature in three words, to compare signatures across ranks
/// without sending them (the typed collectives' agreement check, `collective/typed.rs`),
/// computed once, at commit.
///
/// A period of at most three runs — `f64`, `(f64 x 3, i32)`, the fields of a struct of up to
/// three basic types in a row — is held verbatim, a run a word (its basic type's code plus one
/// in the top five bits, its length below), so that equal digests are equal periods. A longer
/// one is held as its length in basic types, a 64-bit FNV-1a hash of its runs and its bytes.
/// The residual risk is there alone: two different periods of more than three runs, of one
/// length and one size, whose hashes collide (about one chance in 2^64 for a given pair) have
/// equal digests, and a collective would unpack the one's data by the other's type — wrong
/// values of the right sizes, never an invalid `bool` or `char`, which unpacking validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PeriodDigest(pub(crate) [u64; 3]);

impl PeriodDigest {
    /// Bits of a word below the tag: the length of a run, or of a hashed period.
    const LEN_BITS: u32 = 59;
    const LEN_MAX: u64 = (1 << Self::LEN_BITS) - 1;
    /// The tag of a hashed period's first word (a verbatim run's is a code plus one, at most
    /// 19).
    const HASHED: u64 = 31;

    /// The digest of no data (and of an empty period).
    pub(crate) const NOTHING: PeriodDigest = PeriodDigest([0; 3]);

    fn of(period: impl Iterator<Item = (BasicType, usize)> + Clone) -> PeriodDigest {
        let mut words = [0u64; 3];
        let verbatim = period.clone().nth(words.len()).is_none()
            && period.clone().zip(&mut words).all(|((b, n), w)| {
                *w = ((u64::from(b.code()) + 1) << Self::LEN_BITS) | n as u64;
                (n as u64) <= Self::LEN_MAX
            });
        if verbatim {
            return PeriodDigest(words);
        }
        let total = |f: fn(BasicType, u64) -> u64| {
            period
                .clone()
                .fold(0u64, |a, (b, n)| a.saturating_add(f(b, n as u64)))
        };
        let hash = period.clone().fold(0xcbf2_9ce4_8422_2325u64, |h, (b, n)| {
            let bytes = std::iter::once(b.code()).chain((n as u64).to_le_bytes());
            bytes.fold(h, |h, byte| {
                (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
            })
        });
        let len = total(|_, n| n).min(Self::LEN_MAX);
        let bytes = total(|b, n| n.saturating_mul(b.size() as u64));
        PeriodDigest([(Self::HASHED << Self::LEN_BITS) | len, hash, bytes])
    }

    /// The verbatim runs, if the period is held so: (basic type, if the code is one; length).
    fn runs(&self) -> Option<impl Iterator<Item = (Option<BasicType>, u64)> + '_> {
        (self.0[0] >> Self::LEN_BITS != Self::HASHED).then(|| {
            self.0.iter().take_while(|&&w| w != 0).map(|&w| {
                let code = ((w >> Self::LEN_BITS) as u8).checked_sub(1);
                (code.and_then(BasicType::from_code), w & Self::LEN_MAX)
            })
        })
    }

    /// `bytes` bytes of data of this period, in words: `3 basic values in 24 bytes:
    /// repetitions of (f64)`, or the period's length, size and hash.
    pub(crate) fn describe(&self, bytes: u64) -> String {
        let (len, period_bytes, period) = match self.runs() {
            Some(runs) => {
                let (mut len, mut size, mut shown) = (0u64, 0u64, Vec::new());
                for (b, n) in runs {
                    len = len.saturating_add(n);
                    size = size.saturating_add(n.saturating_mul(b.map_or(0, |b| b.size()) as u64));
                    let name = b.map_or("?", BasicType::name);
                    shown.push(if n == 1 {
                        name.to_string()
                    } else {
                        format!("{name} x {n}")
                    });
                }
                (len, size, format!("({})", shown.join(", ")))
            }
            None => {
                let [first, hash, size] = self.0;
                let len = first & Self::LEN_MAX;
                let period = format!(
                    "a period of {len} basic types in {size} bytes (FNV-1a hash {hash:016x})"
                );
                (len, size, period)
            }
        };
        if bytes == 0 || period_bytes == 0 {
            return format!("{bytes} bytes: no data");
        }
        let values = (bytes / period_bytes).saturating_mul(len);
        format!("{values} basic values in {bytes} bytes: repetitions of {period}")
    }
}

/// The length of the shortest prefix of `s` that `s` is a repetition of (`s.len()` if none).
fn primitive_period<T: PartialEq>(s: &[T]) -> usize {
    // the prefix function of Knuth, Morris and Pratt: `border[i]` is the longest proper border
    // of `s[..=i]`; `s` is a power of a shorter word iff its length is a multiple of
    // `len - border`
    let mut border = vec![0usize; s.len()];
    for i in 1..s.len() {
        let mut k = border[i - 1];
        while k > 0 && s[i] != s[k] {
            k = border[k - 1];
        }
        if s[i] == s[k] {
            k += 1;
        }
        border[i] = k;
    }
    let n = s.len();
    match border.last() {
        Some(&b) if b > 0 && n.is_multiple_of(n - b) => n - b,
        _ => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BasicType::*;

    fn compiled(map: TypeMap) -> Compiled {
        Compiled::new(map)
    }

    #[test]
    fn strided_blocks_merge_into_one_run() {
        let f = TypeMap::basic(F64);
        let c = compiled(TypeMap::vector(1000, 1, 2, &f).unwrap());
        assert_eq!(
            c.runs,
            [Run {
                disp: 0,
                len: 8,
                count: 1000,
                stride: 16
            }]
        );
        let c = compiled(TypeMap::vector(10, 4, 8, &f).unwrap());
        assert_eq!(
            c.runs,
            [Run {
                disp: 0,
                len: 32,
                count: 10,
                stride: 64
            }]
        );
        // adjacent entries of different types merge into one block
        let s = TypeMap::structure(&[(1, 0, &TypeMap::basic(I32)), (1, 4, &TypeMap::basic(F32))]);
        let c = compiled(s.unwrap());
        assert_eq!(c.runs.len(), 1);
        assert_eq!((c.runs[0].len, c.signature.len()), (8, 2));
    }

    #[test]
    fn signatures_match_by_mpis_prefix_rule() {
        let i = TypeMap::basic(I32);
        let three = compiled(TypeMap::contiguous(3, &i).unwrap());
        let one = compiled(i.clone());
        let mixed =
            compiled(TypeMap::structure(&[(1, 0, &i), (1, 8, &TypeMap::basic(F64))]).unwrap());
        assert_eq!(one.accepts(3, &three, 1), SignatureMatch::Accepted);
        assert_eq!(one.accepts(5, &three, 1), SignatureMatch::Accepted); // a prefix
        assert_eq!(one.accepts(2, &three, 1), SignatureMatch::Truncated);
        assert_eq!(mixed.accepts(2, &three, 1), SignatureMatch::Mismatch);
        assert_eq!(mixed.accepts(2, &mixed, 2), SignatureMatch::Accepted);
        assert_eq!(one.accepts(0, &three, 0), SignatureMatch::Accepted);
    }

    /// A type map with the signature `s` (one entry after the other).
    fn of_signature(s: &[BasicType]) -> Compiled {
        let entries = s.iter().enumerate().map(|(i, &b)| (b, 16 * i as isize));
        compiled(TypeMap::from_parts(entries.collect(), 0, 16 * s.len() as isize).unwrap())
    }

    fn spelled(sig: &[(BasicType, usize)]) -> Vec<BasicType> {
        sig.iter()
            .flat_map(|&(b, n)| std::iter::repeat_n(b, n))
            .collect()
    }

    /// The primitive period the slow way: the shortest prefix whose repetition is `s`.
    fn naive_period(s: &[BasicType]) -> &[BasicType] {
        let n = s.len();
        let p = (1..=n).find(|&p| n.is_multiple_of(p) && (0..n).all(|i| s[i] == s[i % p]));
        &s[..p.unwrap_or(0)]
    }

    #[test]
    fn the_period_is_the_shortest_word_the_signature_repeats() {
        let alphabet = [I8, U8, F64];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % below) as usize
        };
        for case in 0..20_000 {
            // a word repeated, sometimes with a letter more: ends of one type are frequent
            let word: Vec<BasicType> = (0..1 + next(6)).map(|_| alphabet[next(3)]).collect();
            let mut s = word.repeat(1 + next(5));
            if case % 4 == 0 {
                s.push(alphabet[next(3)]);
            }
            let c = of_signature(&s);
            assert_eq!(spelled(&c.signature), s);
            let period: Vec<_> = c.period().collect();
            assert_eq!(spelled(&period), naive_period(&s), "{s:?}");
            // run-length coded as the signature is, so that equal periods compare equal
            assert!(period.iter().all(|&(_, n)| n > 0), "{s:?}");
            assert!(period.windows(2).all(|w| w[0].0 != w[1].0), "{s:?}");
        }
        assert_eq!(of_signature(&[]).period().count(), 0);
        let big = compiled(TypeMap::contiguous(1 << 20, &TypeMap::basic(F32)).unwrap());
        assert!(big.period().eq([(F32, 1)]));
    }

    #[test]
    fn same_signatures_are_the_same_sequence_of_basic_types() {
        let (f, i) = (TypeMap::basic(F64), TypeMap::basic(I32));
        let pair = compiled(TypeMap::structure(&[(1, 0, &f), (1, 8, &i)]).unwrap());
        let two = compiled(TypeMap::contiguous(2, &pair.map).unwrap());
        let sorted = compiled(TypeMap::structure(&[(2, 0, &f), (2, 16, &i)]).unwrap());
        assert!(pair.same_signature(6, &two, 3));
        assert!(!pair.same_signature(4, &two, 3)); // fewer bytes
        assert!(!two.same_signature(1, &sorted, 1)); // as many bytes, in another order
        let doubles = compiled(TypeMap::contiguous(3, &f).unwrap());
        let one = compiled(f.clone());
        assert!(doubles.same_signature(2, &one, 6));
        let ints = compiled(TypeMap::contiguous(6, &i).unwrap());
        assert!(!ints.same_signature(2, &one, 3)); // the same bytes, other types
        assert!(ints.same_signature(0, &one, 0)); // nothing is nothing
        assert!(!one.same_signature(usize::MAX, &one, usize::MAX)); // past usize: refused
    }
}
