//! Commit (MPI_Type_commit): compiling a [`TypeMap`] into merged byte segments, and checking a
//! committed type against the Rust buffer it is used on.
//!
//! The compiled form is a list of [`Run`]s in map order: entries whose bytes follow each other
//! are merged into one block, and successive blocks of one length at a constant stride into one
//! run. `vector(2M, 1, 2, f64)` compiles to a single run; pack and the non-contiguous sends walk
//! the runs (see `engine.rs`). The signature is kept run-length encoded for matching.

use super::{BasicType, Datatype, TypeMap};
use crate::{Error, Result};
use std::fmt;
use std::sync::Arc;

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
        let uniform = match signature.as_slice() {
            [(b, _)] => Some(*b),
            _ => None,
        };
        let block_align = runs
            .iter()
            .fold(16, |a: usize, r| a.min(1 << r.len.trailing_zeros()));
        Compiled {
            block_align,
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

    /// Checks that `count` elements of this type, with displacement 0 at byte `base` (a multiple
    /// of `T`'s size) of a buffer of `len` bytes of `T`s, stay inside it, and that every entry lands on a value of its own basic type in `T`'s
    /// layout (a `byte` entry on any data byte; when writing, not on a `bool` or `char`).
    pub(crate) fn check_buffer<T: Datatype>(
        &self,
        call: &'static str,
        base: usize,
        len: usize,
        count: usize,
        access: Access,
    ) -> Result<()> {
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
        if self.fits_uniform(const { T::LAYOUT.dense_uniform() }, count, access) {
            return Ok(());
        }
        self.check_entries::<T>(call, &T::type_map(), count, access)
    }

    /// The fast check for buffers whose element is gap-free and of one basic type `b` (`f64`,
    /// `[i32; 4]`, …, see [`TypeLayout::dense_uniform`](super::TypeLayout::dense_uniform)):
    /// O(runs).
    fn fits_uniform(&self, elem: Option<BasicType>, count: usize, access: Access) -> bool {
        let Some(b) = elem else {
            return false;
        };
        match self.uniform {
            Some(BasicType::Byte) => access == Access::Read || b.all_bit_patterns_valid(),
            Some(u) if u == b => {
                let s = b.size() as isize;
                let aligned = |x: isize| x % s == 0;
                (count == 1 || aligned(self.extent))
                    && self
                        .runs
                        .iter()
                        .all(|r| aligned(r.disp) && (r.count == 1 || aligned(r.stride)))
            }
            _ => false,
        }
    }

    /// The general check: every entry of every element against `T`'s sorted entries.
    fn check_entries<T: Datatype>(
        &self,
        call: &'static str,
        elem: &TypeMap,
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
                let off = pos.rem_euclid(t_size);
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
    /// The type map this type was committed from.
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

    /// The compiled form of a Rust type's map (for plain messages met by typed receives).
    pub(crate) fn of_map(map: TypeMap) -> Self {
        Compiled::new(map)
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
}
