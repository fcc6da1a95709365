//! The MPI type constructors (MPI_Type_contiguous, _vector, _create_hvector, _indexed,
//! _create_hindexed, _create_indexed_block, _create_hindexed_block, _create_struct,
//! _create_subarray, _create_resized) over [`TypeMap`], with MPI's bound rules exactly.
//!
//! Every constructor places copies of old types at displacements. MPI's rule (MPI-4.0 §5.1.6,
//! as MPICH implements it): the new lower bound is the least `disp + old.lb` over all copies and
//! the new upper bound the greatest `disp + old.ub`; a type with no copies has `lb = ub = 0`.
//! Only `structure` then pads the extent up to a multiple of its most-aligned member's
//! alignment. `resized` sets the bounds; `subarray` is resized to the full array.
//! `tests/datatype_oracle.rs` checks all of this against MPICH.

use super::{BasicType, Combiner, TypeMap};
use crate::{Error, Result};

/// Type maps larger than this many entries are refused rather than exhausting memory.
const MAX_ENTRIES: usize = 1 << 28;

/// Storage order of a multi-dimensional array, for [`TypeMap::subarray`] (the `order` argument of
/// MPI_Type_create_subarray: `MPI_ORDER_C` or `MPI_ORDER_FORTRAN`).
///
/// ```
/// use rpar::{Datatype, Order, TypeMap};
/// // the first column of a 2 x 3 array of u8
/// let c = TypeMap::subarray(&[2, 3], &[2, 1], &[0, 0], Order::C, &u8::type_map())?;
/// assert_eq!(c.to_string(), "{(u8, 0), (u8, 3)}"); // rows are 3 apart
/// let f = TypeMap::subarray(&[2, 3], &[2, 1], &[0, 0], Order::Fortran, &u8::type_map())?;
/// assert_eq!(f.to_string(), "{(u8, 0), (u8, 1)}"); // a column is contiguous
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row-major: the last index varies fastest (MPI_ORDER_C).
    C,
    /// Column-major: the first index varies fastest (MPI_ORDER_FORTRAN).
    Fortran,
}

/// `n` copies, `stride` bytes apart (the stride in `i128`, so that a stride in extents times
/// an extent never overflows before it is checked).
type Repeat = (usize, i128);

/// One copy.
const ONCE: Repeat = (1, 0);

/// Accumulates copies of old types at byte displacements, with MPI's bound rule.
///
/// Every bound is computed in `i128` and checked to fit in `isize` before anything is added, and
/// [`Builder::finish`] checks the result's extents (see [`TypeMap::checked`]): so no
/// constructor overflows, and no query on what it returns can.
struct Builder {
    call: &'static str,
    entries: Vec<(BasicType, isize)>,
    bounds: Option<(isize, isize)>,
    align: usize,
}

impl Builder {
    fn new(call: &'static str) -> Self {
        Builder {
            call,
            entries: Vec::new(),
            bounds: None,
            align: 1,
        }
    }

    fn overflow(&self) -> Error {
        Error::invalid(self.call, "a displacement or bound overflows isize")
    }

    /// `x` as an `isize`, or the overflow error.
    fn fit(&self, x: Option<i128>) -> Result<isize> {
        x.and_then(|x| isize::try_from(x).ok())
            .ok_or_else(|| self.overflow())
    }

    /// Copies of `old` at `disp + i * outer.1 + j * inner.1` for `i < outer.0`, `j < inner.0`,
    /// `i` the slower: the blocks of a vector (`outer`) of `blocklen` copies (`inner`), or one
    /// block (`outer` = [`ONCE`]) of an indexed type or a struct.
    ///
    /// The bounds are computed in closed form, so copies that add no entries cost nothing,
    /// however many they are; entries are added only after their count is checked and their
    /// memory reserved.
    fn copies(&mut self, disp: i128, outer: Repeat, inner: Repeat, old: &TypeMap) -> Result<()> {
        if outer.0 == 0 || inner.0 == 0 {
            return Ok(()); // no copies: nothing, not even to the bounds
        }
        // the displacement of the last copy relative to the first, per repeat (n >= 1)
        let span = |(n, stride): Repeat| (n as i128 - 1).checked_mul(stride);
        let (Some(o), Some(i)) = (span(outer), span(inner)) else {
            return Err(self.overflow());
        };
        let sum = |a: i128, b: i128, c: isize| a.checked_add(b)?.checked_add(c as i128);
        // the lowest and highest block starts (then within a block, `i` more or less)
        let (low, high) = (disp.checked_add(o.min(0)), disp.checked_add(o.max(0)));
        let (Some(low), Some(high)) = (low, high) else {
            return Err(self.overflow());
        };
        let lb = self.fit(sum(low, i.min(0), old.lb))?;
        let ub = self.fit(sum(high, i.max(0), old.ub))?;
        if !old.entries.is_empty() {
            // every entry of every copy lies in [true_lb, true_ub): then none overflows
            self.fit(sum(low, i.min(0), old.true_lb()))?;
            self.fit(sum(high, i.max(0), old.true_ub()))?;
            self.add_entries(disp, outer, inner, old)?;
        }
        self.bounds = Some(match self.bounds {
            None => (lb, ub),
            Some((l, u)) => (l.min(lb), u.max(ub)),
        });
        self.align = self.align.max(old.align);
        Ok(())
    }

    /// The entries of [`Builder::copies`], whose true bounds were checked to fit.
    fn add_entries(
        &mut self,
        disp: i128,
        outer: Repeat,
        inner: Repeat,
        old: &TypeMap,
    ) -> Result<()> {
        let added = outer
            .0
            .checked_mul(inner.0)
            .and_then(|n| n.checked_mul(old.entries.len()));
        let total = added.and_then(|n| n.checked_add(self.entries.len()));
        let (Some(added), Some(total)) = (added, total) else {
            return Err(self.too_many(None));
        };
        if total > MAX_ENTRIES {
            return Err(self.too_many(Some(total)));
        }
        self.entries.try_reserve_exact(added).map_err(|_| {
            Error::invalid(
                self.call,
                format!("no memory for a type map of {total} entries"),
            )
        })?;
        for i in 0..outer.0 {
            for j in 0..inner.0 {
                // |i * stride| and |j * stride| are at most the spans checked by `copies`
                let at = disp + i as i128 * outer.1 + j as i128 * inner.1;
                // `at` itself may not fit in isize, but `d + at` does (the true bounds were
                // checked): wrapping arithmetic modulo 2^64 gives it exactly
                let at = at as isize;
                self.entries
                    .extend(old.entries.iter().map(|&(b, d)| (b, d.wrapping_add(at))));
            }
        }
        Ok(())
    }

    fn too_many(&self, total: Option<usize>) -> Error {
        let total = total.map_or("more than usize::MAX".to_string(), |t| t.to_string());
        Error::invalid(
            self.call,
            format!("expected a type map of at most {MAX_ENTRIES} entries, got {total}"),
        )
    }

    /// Rounds the extent up to a multiple of the alignment, as MPI_Type_create_struct does:
    /// MPICH's rule, `ub += align - extent % align` when the remainder (C's, with the sign of
    /// the extent) is not 0, also for negative extents.
    fn pad_to_alignment(&mut self) -> Result<()> {
        let Some((lb, ub)) = self.bounds else {
            return Ok(());
        };
        let align = self.align as i128;
        let eps = (ub as i128 - lb as i128) % align;
        if eps != 0 {
            let ub = self.fit((ub as i128).checked_add(align - eps))?;
            self.bounds = Some((lb, ub));
        }
        Ok(())
    }

    fn finish(self) -> Result<TypeMap> {
        let (lb, ub) = self.bounds.unwrap_or((0, 0));
        TypeMap::checked(self.call, self.entries, lb, ub, self.align)
    }
}

/// `i * unit` as a byte offset (never overflows `i128`).
fn scaled(i: isize, unit: isize) -> i128 {
    i as i128 * unit as i128
}

/// The `# Errors` of the constructors that place copies.
macro_rules! doc_errors {
    () => {
        "# Errors\n\n[`Error::InvalidArgument`] if a displacement, a bound, the extent or the \
         true extent of the result does not fit in `isize`, or the map would have more than \
         2^28 entries (or no memory for them)."
    };
}

impl TypeMap {
    /// `count` copies of `old`, one after the other at multiples of its extent
    /// (MPI_Type_contiguous).
    ///
    #[doc = doc_errors!()]
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::contiguous(3, &i32::type_map())?;
    /// assert_eq!(t.to_string(), "{(i32, 0), (i32, 4), (i32, 8)}");
    /// // copies that add no data cost nothing, however many; a map too large is an error
    /// let empty = TypeMap::contiguous(0, &i32::type_map())?;
    /// assert_eq!(TypeMap::contiguous(usize::MAX, &empty)?.extent(), 0);
    /// assert!(TypeMap::contiguous(1 << 40, &i32::type_map()).is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn contiguous(count: usize, old: &TypeMap) -> Result<TypeMap> {
        let mut b = Builder::new("MPI_Type_contiguous");
        b.copies(0, ONCE, (count, old.extent() as i128), old)?;
        Ok(b.finish()?.built_by(Combiner::Contiguous {
            count,
            inner: old.clone(),
        }))
    }

    /// `count` blocks of `blocklen` copies of `old`, block starts `stride` extents of `old`
    /// apart; the stride may be negative (MPI_Type_vector). Blocks of length 0 add nothing,
    /// not even to the bounds (as Open MPI; MPICH gives such a type an extent).
    ///
    #[doc = doc_errors!()]
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::vector(2, 3, 4, &f64::type_map())?; // the lecture's example
    /// assert_eq!(
    ///     t.to_string(),
    ///     "{(f64, 0), (f64, 8), (f64, 16), (f64, 32), (f64, 40), (f64, 48)}"
    /// );
    /// assert_eq!((t.size(), t.extent()), (48, 56));
    /// assert_eq!(TypeMap::vector(usize::MAX, 0, 1, &f64::type_map())?.extent(), 0);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn vector(count: usize, blocklen: usize, stride: isize, old: &TypeMap) -> Result<TypeMap> {
        let bytes = scaled(stride, old.extent());
        let t = Self::strided("MPI_Type_vector", count, blocklen, bytes, old)?;
        Ok(t.built_by(Combiner::Vector {
            count,
            blocklength: blocklen,
            stride,
            inner: old.clone(),
        }))
    }

    /// Like [`TypeMap::vector`], with the stride in bytes (MPI_Type_create_hvector).
    ///
    #[doc = doc_errors!()]
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::hvector(2, 1, -6, &i16::type_map())?;
    /// assert_eq!((t.to_string().as_str(), t.lb(), t.extent()), ("{(i16, 0), (i16, -6)}", -6, 8));
    /// assert!(TypeMap::hvector(3, 1, isize::MAX, &i16::type_map()).is_err()); // bytes past isize
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn hvector(count: usize, blocklen: usize, stride: isize, old: &TypeMap) -> Result<TypeMap> {
        let call = "MPI_Type_create_hvector";
        let t = Self::strided(call, count, blocklen, stride as i128, old)?;
        Ok(t.built_by(Combiner::Hvector {
            count,
            blocklength: blocklen,
            stride,
            inner: old.clone(),
        }))
    }

    fn strided(
        call: &'static str,
        count: usize,
        blocklen: usize,
        stride_bytes: i128,
        old: &TypeMap,
    ) -> Result<TypeMap> {
        let mut b = Builder::new(call);
        let block = (blocklen, old.extent() as i128);
        b.copies(0, (count, stride_bytes), block, old)?;
        b.finish()
    }

    /// Blocks of copies of `old`, each given as `(blocklen, displacement)` with the displacement
    /// in extents of `old` (MPI_Type_indexed). Displacements may be unordered, repeated or
    /// negative; zero-length blocks add nothing, not even to the bounds.
    ///
    #[doc = doc_errors!()]
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::indexed(&[(2, 3), (1, 0)], &i32::type_map())?;
    /// assert_eq!(t.to_string(), "{(i32, 12), (i32, 16), (i32, 0)}");
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn indexed(blocks: &[(usize, isize)], old: &TypeMap) -> Result<TypeMap> {
        let call = "MPI_Type_indexed";
        let t = Self::blocks(call, blocks.iter().copied(), old.extent(), old)?;
        Ok(t.built_by(Combiner::Indexed {
            blocks: blocks.to_vec(),
            inner: old.clone(),
        }))
    }

    /// Like [`TypeMap::indexed`], with displacements in bytes (MPI_Type_create_hindexed).
    ///
    #[doc = doc_errors!()]
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::hindexed(&[(1, 16), (2, -8)], &f64::type_map())?;
    /// assert_eq!((t.lb(), t.extent(), t.size()), (-8, 32, 24));
    /// // bounds 2^64 - 8 bytes apart: no extent in isize
    /// assert!(TypeMap::hindexed(&[(1, isize::MIN), (1, isize::MAX - 8)], &f64::type_map()).is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn hindexed(blocks: &[(usize, isize)], old: &TypeMap) -> Result<TypeMap> {
        let t = Self::blocks("MPI_Type_create_hindexed", blocks.iter().copied(), 1, old)?;
        Ok(t.built_by(Combiner::Hindexed {
            blocks: blocks.to_vec(),
            inner: old.clone(),
        }))
    }

    /// Blocks of the same length `blocklen` at the displacements `disps`, in extents of `old`
    /// (MPI_Type_create_indexed_block).
    ///
    #[doc = doc_errors!()]
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::indexed_block(1, &[2, 0], &u8::type_map())?;
    /// assert_eq!(t.to_string(), "{(u8, 2), (u8, 0)}");
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn indexed_block(blocklen: usize, disps: &[isize], old: &TypeMap) -> Result<TypeMap> {
        let blocks = disps.iter().map(|&d| (blocklen, d));
        let t = Self::blocks("MPI_Type_create_indexed_block", blocks, old.extent(), old)?;
        Ok(t.built_by(Combiner::IndexedBlock {
            blocklength: blocklen,
            displacements: disps.to_vec(),
            inner: old.clone(),
        }))
    }

    /// Like [`TypeMap::indexed_block`], with displacements in bytes
    /// (MPI_Type_create_hindexed_block).
    ///
    #[doc = doc_errors!()]
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::hindexed_block(1, &[12, 0], &i32::type_map())?;
    /// assert_eq!((t.size(), t.extent()), (8, 16));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn hindexed_block(blocklen: usize, disps: &[isize], old: &TypeMap) -> Result<TypeMap> {
        let blocks = disps.iter().map(|&d| (blocklen, d));
        let t = Self::blocks("MPI_Type_create_hindexed_block", blocks, 1, old)?;
        Ok(t.built_by(Combiner::HindexedBlock {
            blocklength: blocklen,
            displacements: disps.to_vec(),
            inner: old.clone(),
        }))
    }

    fn blocks(
        call: &'static str,
        blocks: impl Iterator<Item = (usize, isize)>,
        unit: isize,
        old: &TypeMap,
    ) -> Result<TypeMap> {
        let mut b = Builder::new(call);
        for (blocklen, disp) in blocks {
            b.copies(
                scaled(disp, unit),
                ONCE,
                (blocklen, old.extent() as i128),
                old,
            )?;
        }
        b.finish()
    }

    /// A struct: fields given as `(blocklen, byte displacement, type)`
    /// (MPI_Type_create_struct). The extent is rounded up to a multiple of the alignment of the
    /// most-aligned basic type in it, as MPI does for C structs (by MPICH's rule, also for a
    /// negative extent); use [`TypeMap::resized`] to set another.
    ///
    #[doc = doc_errors!()]
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let (c, d, i) = (i8::type_map(), f64::type_map(), i32::type_map());
    /// let t = TypeMap::structure(&[(1, 0, &c), (1, 8, &d), (1, 16, &i)])?;
    /// assert_eq!(t.to_string(), "{(i8, 0), (f64, 8), (i32, 16)}");
    /// assert_eq!((t.size(), t.extent(), t.true_extent()), (13, 24, 20));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn structure(fields: &[(usize, isize, &TypeMap)]) -> Result<TypeMap> {
        let mut b = Builder::new("MPI_Type_create_struct");
        for &(blocklen, disp, old) in fields {
            b.copies(disp as i128, ONCE, (blocklen, old.extent() as i128), old)?;
        }
        b.pad_to_alignment()?;
        let fields = fields.iter().map(|&(n, d, t)| (n, d, t.clone())).collect();
        Ok(b.finish()?.built_by(Combiner::Struct { fields }))
    }

    /// The same data with new bounds: lower bound `lb` and extent `extent`
    /// (MPI_Type_create_resized). The extent may be negative, as MPI allows (MPICH and Open MPI
    /// accept it): successive elements then lie at multiples of it, going down in memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `lb + extent` overflows `isize`.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // a column of a 3 x 4 matrix of i32, resized so that columns follow each other
    /// let col = TypeMap::vector(3, 1, 4, &i32::type_map())?.resized(0, 4)?;
    /// assert_eq!((col.extent(), col.true_extent()), (4, 36));
    /// // a negative extent: three bytes going backwards (MPICH's answer: lb -4, extent 2)
    /// let back = TypeMap::contiguous(3, &u8::type_map().resized(0, -2)?)?;
    /// assert_eq!(back.to_string(), "{(u8, 0), (u8, -2), (u8, -4)}");
    /// assert_eq!((back.lb(), back.extent()), (-4, 2));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn resized(&self, lb: isize, extent: isize) -> Result<TypeMap> {
        let call = "MPI_Type_create_resized";
        let ub = lb.checked_add(extent).ok_or_else(|| {
            Error::invalid(
                call,
                format!("expected lb + extent to fit in isize, got lb {lb} and extent {extent}"),
            )
        })?;
        // the true bounds are this map's, the extent is `extent`: both fit
        let t = TypeMap {
            lb,
            ub,
            ..self.clone()
        };
        Ok(t.built_by(Combiner::Resized {
            lb,
            extent,
            inner: self.clone(),
        }))
    }

    /// The sub-block `subsizes` starting at `starts` of an array `sizes` of `old`, stored in
    /// `order` (MPI_Type_create_subarray). The result spans the whole array: lower bound 0,
    /// extent `sizes[0] * … * sizes[n-1]` extents of `old`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `sizes`, `subsizes` and `starts` are empty or of
    /// different lengths, a size is 0, a block reaches past its dimension
    /// (`start + subsize > size`), or a displacement or bound does not fit in `isize`.
    ///
    /// ```
    /// use rpar::{Datatype, Order, TypeMap};
    /// // the 2 x 2 block at (1, 1) of a 3 x 3 row-major matrix of u8
    /// let t = TypeMap::subarray(&[3, 3], &[2, 2], &[1, 1], Order::C, &u8::type_map())?;
    /// assert_eq!(t.to_string(), "{(u8, 4), (u8, 5), (u8, 7), (u8, 8)}");
    /// assert_eq!((t.lb(), t.extent()), (0, 9));
    /// assert!(TypeMap::subarray(&[3, 3], &[2, 2], &[2, 0], Order::C, &u8::type_map()).is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn subarray(
        sizes: &[usize],
        subsizes: &[usize],
        starts: &[usize],
        order: Order,
        old: &TypeMap,
    ) -> Result<TypeMap> {
        let call = "MPI_Type_create_subarray";
        let n = sizes.len();
        if n == 0 || subsizes.len() != n || starts.len() != n {
            return Err(Error::invalid(
                call,
                format!(
                    "expected sizes, subsizes and starts of one length >= 1, got {}, {} and {}",
                    n,
                    subsizes.len(),
                    starts.len()
                ),
            ));
        }
        for d in 0..n {
            if sizes[d] == 0
                || starts[d]
                    .checked_add(subsizes[d])
                    .is_none_or(|e| e > sizes[d])
            {
                return Err(Error::invalid(
                    call,
                    format!(
                        "dimension {d}: expected size >= 1 and start + subsize <= size, got \
                         size {}, subsize {}, start {}",
                        sizes[d], subsizes[d], starts[d]
                    ),
                ));
            }
        }
        let overflow = || Error::invalid(call, "a displacement or bound overflows isize");
        // (bytes, elements) products stay below 2^127: any that leaves isize is refused
        let mul = |a: i128, b: usize| {
            a.checked_mul(b as i128)
                .filter(|x| isize::try_from(*x).is_ok())
                .ok_or_else(overflow)
        };
        // dimensions from the fastest-varying to the slowest
        let dims: Vec<usize> = match order {
            Order::C => (0..n).rev().collect(),
            Order::Fortran => (0..n).collect(),
        };
        let mut t = TypeMap::contiguous(subsizes[dims[0]], old)?;
        let mut stride = old.extent() as i128; // bytes between successive indices of dimension d
        let mut start = mul(stride, starts[dims[0]])?;
        for w in dims.windows(2) {
            let (inner, d) = (w[0], w[1]);
            stride = mul(stride, sizes[inner])?;
            t = Self::strided(call, subsizes[d], 1, stride, &t)?;
            start = start
                .checked_add(mul(stride, starts[d])?)
                .ok_or_else(overflow)?;
        }
        let full = mul(stride, sizes[*dims.last().unwrap_or(&0)])?;
        let mut b = Builder::new(call);
        b.copies(start, ONCE, ONCE, &t)?;
        let t = b
            .finish()?
            .resized(0, isize::try_from(full).map_err(|_| overflow())?)?;
        Ok(t.built_by(Combiner::Subarray {
            sizes: sizes.to_vec(),
            subsizes: subsizes.to_vec(),
            starts: starts.to_vec(),
            order,
            inner: old.clone(),
        }))
    }
}

impl TypeMap {
    /// The type map of a Rust struct: each field's type map at its byte offset (from
    /// `core::mem::offset_of!`), lower bound 0 and extent `size` (the struct's `size_of`), so
    /// that arrays of the struct step by its Rust size (what MPI_Type_create_struct of the
    /// fields' types, resized to `size`, gives). `#[derive(Datatype)]` builds the same map at
    /// compile time, from [`TypeLayout`](crate::TypeLayout).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if an offset, a bound or the size does not fit in `isize`,
    /// or the map would have more than 2^28 entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// #[derive(Clone, Copy)]
    /// #[repr(C)]
    /// struct P { x: f32, n: u8 }
    /// let map = TypeMap::from_fields(
    ///     std::mem::size_of::<P>(),
    ///     &[(std::mem::offset_of!(P, x), f32::type_map()), (std::mem::offset_of!(P, n), u8::type_map())],
    /// )?;
    /// assert_eq!((map.to_string().as_str(), map.extent()), ("{(f32, 0), (u8, 4)}", 8));
    /// assert!(TypeMap::from_fields(8, &[(usize::MAX, u8::type_map())]).is_err());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn from_fields(size: usize, fields: &[(usize, TypeMap)]) -> Result<TypeMap> {
        let call = "TypeMap::from_fields";
        let mut b = Builder::new(call);
        for (offset, map) in fields {
            b.copies(*offset as i128, ONCE, ONCE, map)?;
        }
        let size = isize::try_from(size).map_err(|_| {
            Error::invalid(
                call,
                format!("expected a size that fits in isize, got {size}"),
            )
        })?;
        b.finish()?;
        // the same entries as MPI builds them (so that its contents say how): the struct of
        // the fields, resized to the size
        let fields: Vec<_> = fields.iter().map(|(o, t)| (1, *o as isize, t)).collect();
        TypeMap::structure(&fields)?.resized(0, size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::BasicType::{F64, I16, I32, I8};
    use std::time::Duration;

    /// `f`'s result, failing the test if it takes more than a few seconds (a loop per copy of
    /// an empty type would take centuries).
    fn promptly<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()));
        rx.recv_timeout(Duration::from_secs(20))
            .expect("the constructor returned promptly")
    }

    fn bounds(t: &TypeMap) -> (isize, isize, isize, isize) {
        (t.lb(), t.extent(), t.true_lb(), t.true_extent())
    }

    #[test]
    fn copies_that_add_no_entries_cost_nothing_however_many() {
        let got = promptly(|| {
            let empty = TypeMap::contiguous(0, &TypeMap::basic(I32))?;
            let f = TypeMap::basic(F64);
            Ok::<_, Error>(vec![
                TypeMap::contiguous(usize::MAX, &empty)?,
                TypeMap::vector(usize::MAX, 0, 1, &f)?,
                TypeMap::vector(usize::MAX, 7, 3, &empty)?,
                TypeMap::hvector(usize::MAX, usize::MAX, 0, &empty)?,
                TypeMap::indexed(&[(usize::MAX, 3), (0, 9)], &empty)?,
                TypeMap::hindexed_block(usize::MAX, &[4, -4], &empty)?,
                TypeMap::structure(&[(usize::MAX, 8, &empty), (0, 0, &f)])?,
                TypeMap::subarray(&[1 << 40], &[1 << 40], &[0], Order::C, &empty)?,
            ])
        })
        .unwrap();
        for (k, t) in got.iter().enumerate() {
            // the copies' bounds still count: the empty type's [0, 0) at each displacement
            let lb_extent = match k {
                5 => (-4, 8),
                6 => (8, 0),
                _ => (0, 0),
            };
            assert_eq!(
                (t.size(), t.lb(), t.extent()),
                (0, lb_extent.0, lb_extent.1),
                "{k}"
            );
            assert_eq!((t.true_lb(), t.true_extent()), (0, 0), "{k}");
        }
    }

    #[test]
    fn the_bounds_of_empty_copies_come_in_closed_form() {
        // no entries, but an extent: the bounds grow with the copies, as MPI's rule says
        let gap = TypeMap::contiguous(0, &TypeMap::basic(I8))
            .unwrap()
            .resized(-1, 4)
            .unwrap();
        let t = promptly(move || TypeMap::contiguous(1 << 40, &gap)).unwrap();
        assert_eq!((t.lb(), t.ub()), (-1, (1 << 42) - 1));
        let gap = TypeMap::basic(I8).resized(0, 0).unwrap();
        let back = TypeMap::contiguous(0, &gap)
            .unwrap()
            .resized(0, -3)
            .unwrap();
        let t = promptly(move || TypeMap::vector(1 << 50, 1 << 50, 2, &back)).unwrap();
        // blocks at 0, -6, -12, …; copies within a block at 0, -3, …
        let last = -(((1isize << 50) - 1) * 6 + ((1 << 50) - 1) * 3);
        assert_eq!((t.lb(), t.ub(), t.entries().len()), (last, -3, 0));
        // past isize: refused, promptly
        let huge = TypeMap::contiguous(0, &TypeMap::basic(I8))
            .unwrap()
            .resized(0, 1 << 40)
            .unwrap();
        assert!(promptly(move || TypeMap::contiguous(usize::MAX, &huge)).is_err());
    }

    #[test]
    fn a_map_too_large_to_flatten_is_an_error() {
        let i = TypeMap::basic(I32);
        for t in [
            TypeMap::contiguous(1 << 40, &i),
            TypeMap::vector(1 << 20, 1 << 20, 1 << 20, &i),
            TypeMap::contiguous(usize::MAX, &i.resized(0, 0).unwrap()),
            // more entries than usize counts
            TypeMap::vector(usize::MAX, usize::MAX, 0, &i.resized(0, 0).unwrap()),
            TypeMap::hindexed(&[(MAX_ENTRIES + 1, 0)], &i),
        ] {
            let err = t.unwrap_err().to_string();
            assert!(err.contains("at most 268435456 entries, got"), "{err}");
        }
    }

    #[test]
    fn bounds_that_do_not_fit_in_isize_are_errors() {
        let (f, b) = (TypeMap::basic(F64), TypeMap::basic(I8));
        let refused = [
            // lb and ub fit, the extent ub - lb does not
            TypeMap::hindexed(&[(1, isize::MIN), (1, isize::MAX - 8)], &f),
            TypeMap::hindexed(
                &[(1, isize::MIN + 1), (1, 0)],
                &b.resized(0, isize::MAX).unwrap(),
            ),
            // no entries at all: only the extent is past isize
            TypeMap::hindexed(
                &[(1, isize::MIN + 1), (1, 0)],
                &TypeMap::contiguous(0, &b)
                    .unwrap()
                    .resized(0, isize::MAX)
                    .unwrap(),
            ),
            // an entry ends past isize::MAX
            TypeMap::hvector(2, 1, isize::MAX, &b),
            TypeMap::hindexed(&[(1, isize::MAX - 7)], &f),
            TypeMap::contiguous(2, &b.resized(0, isize::MAX).unwrap()),
            // a stride in extents that is past isize in bytes
            TypeMap::vector(2, 1, isize::MAX / 4, &f),
            TypeMap::indexed(&[(1, isize::MIN / 2)], &f),
            TypeMap::indexed_block(1, &[isize::MAX], &TypeMap::basic(I16)),
            // the alignment padding of a struct past isize::MAX
            TypeMap::structure(&[(1, isize::MAX - 1, &b), (1, 0, &f)]),
            TypeMap::subarray(&[1 << 62, 4], &[1, 1], &[0, 0], Order::C, &f),
            b.resized(isize::MAX, 1),
            b.resized(isize::MIN, -1),
            TypeMap::from_parts(vec![(F64, isize::MAX - 4)], 0, 8),
            TypeMap::from_parts(vec![(I8, isize::MIN), (I8, isize::MAX - 1)], 0, 0),
            TypeMap::from_fields(8, &[(usize::MAX, b.clone())]),
            TypeMap::from_fields(usize::MAX, &[(0, b.clone())]),
        ];
        for (k, t) in refused.into_iter().enumerate() {
            let err = t.expect_err(&format!("case {k} must be refused"));
            assert!(matches!(err, Error::InvalidArgument { .. }), "{k}: {err}");
        }
    }

    #[test]
    fn maps_at_the_limits_answer_every_query_without_overflow() {
        let (f, b) = (TypeMap::basic(F64), TypeMap::basic(I8));
        let half = isize::MAX / 2;
        let maps = [
            TypeMap::hindexed(&[(1, -half), (1, half - 8)], &f).unwrap(),
            TypeMap::hindexed(&[(1, isize::MIN)], &b).unwrap(),
            TypeMap::hindexed(&[(1, isize::MAX - 1)], &b).unwrap(),
            b.resized(isize::MIN, isize::MAX).unwrap(),
            b.resized(isize::MAX, isize::MIN).unwrap(),
            // the stride of a single block is never used: MPI accepts any
            TypeMap::vector(1, 2, isize::MAX, &f).unwrap(),
            TypeMap::hvector(3, 1, -(half / 2), &f).unwrap(),
        ];
        for t in &maps {
            let c = t.commit();
            let _ = (
                t.size(),
                t.extent(),
                t.true_lb(),
                t.true_ub(),
                t.true_extent(),
            );
            let _ = (c.size(), c.extent(), c.segments(), c.pack_size(usize::MAX));
            let _ = (t.is_dense(), t.to_string(), c.to_string());
        }
        assert_eq!(maps[0].extent(), 2 * half);
        assert_eq!(maps[4].extent(), isize::MIN);
        assert_eq!(maps[5].to_string(), "{(f64, 0), (f64, 8)}");
    }

    #[test]
    fn negative_extents_follow_mpis_bound_rule() {
        let (s, c) = (TypeMap::basic(I16), TypeMap::basic(I8));
        // (lb, extent, true lb, true extent), MPICH 4.0's and Open MPI 4.1's answers
        let back = c.resized(0, -2).unwrap();
        assert_eq!(bounds(&back), (0, -2, 0, 1));
        assert_eq!(
            bounds(&TypeMap::contiguous(3, &back).unwrap()),
            (-4, 2, -4, 5)
        );
        assert_eq!(
            bounds(&TypeMap::vector(2, 2, 3, &back).unwrap()),
            (-8, 6, -8, 9)
        );
        let s46 = s.resized(4, -6).unwrap();
        assert_eq!(
            bounds(&TypeMap::contiguous(3, &s46).unwrap()),
            (-8, 6, -12, 14)
        );
        let s5 = s.resized(0, -5).unwrap();
        let struct_of = |fields: &[(usize, isize, &TypeMap)]| {
            let t = TypeMap::structure(fields).unwrap();
            (t.lb(), t.extent())
        };
        // MPICH pads a struct's extent by C's remainder, with the sign of the extent
        assert_eq!(
            struct_of(&[(1, 0, &s5), (1, 0, &c.resized(0, -6).unwrap())]),
            (0, -2)
        );
        assert_eq!(struct_of(&[(1, 0, &s5), (1, 1, &c)]), (0, 2));
        assert_eq!(struct_of(&[(1, 0, &s5), (1, -9, &c)]), (-9, 4));
        let i5 = TypeMap::basic(I32).resized(0, -7).unwrap();
        assert_eq!(
            struct_of(&[(1, 0, &i5), (1, 0, &c.resized(0, -9).unwrap())]),
            (0, 0)
        );
        let sub = TypeMap::subarray(
            &[2, 3],
            &[1, 2],
            &[1, 0],
            Order::C,
            &TypeMap::basic(I32).resized(0, -4).unwrap(),
        )
        .unwrap();
        assert_eq!(bounds(&sub), (0, -24, -16, 8));
    }
}
