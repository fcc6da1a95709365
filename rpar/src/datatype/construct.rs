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

use super::{BasicType, TypeMap};
use crate::{Error, Result};

/// Type maps larger than this many entries are refused rather than exhausting memory.
const MAX_ENTRIES: usize = 1 << 28;

/// Storage order of a multi-dimensional array, for [`TypeMap::subarray`].
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

/// Accumulates copies of old types at byte displacements, with MPI's bound rule.
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
        Error::invalid(self.call, "a displacement overflows isize")
    }

    /// `blocklen` consecutive copies of `old` starting at byte `disp` (one block).
    fn block(&mut self, disp: isize, blocklen: usize, old: &TypeMap) -> Result<()> {
        let added = blocklen.checked_mul(old.entries.len());
        match added.and_then(|n| n.checked_add(self.entries.len())) {
            Some(total) if total <= MAX_ENTRIES => self.entries.reserve(added.unwrap_or(0)),
            _ => {
                return Err(Error::invalid(
                    self.call,
                    format!("the type map would exceed {MAX_ENTRIES} entries"),
                ))
            }
        }
        let bounds = (old.true_lb(), old.true_ub());
        for j in 0..blocklen {
            let at = isize::try_from(j)
                .ok()
                .and_then(|j| j.checked_mul(old.extent()))
                .and_then(|o| o.checked_add(disp))
                .ok_or_else(|| self.overflow())?;
            self.place_with(at, old, bounds)?;
        }
        Ok(())
    }

    /// One copy of `old` at byte `disp`.
    fn place(&mut self, disp: isize, old: &TypeMap) -> Result<()> {
        self.place_with(disp, old, (old.true_lb(), old.true_ub()))
    }

    /// One copy of `old`, whose true bounds are `(true_lb, true_ub)`, at byte `disp`.
    fn place_with(&mut self, disp: isize, old: &TypeMap, (tlb, tub): (isize, isize)) -> Result<()> {
        let shifted = |x: isize| x.checked_add(disp);
        let (Some(lb), Some(ub), Some(_), Some(_)) =
            (shifted(old.lb), shifted(old.ub), shifted(tlb), shifted(tub))
        else {
            return Err(self.overflow());
        };
        // every entry lies within [true_lb, true_ub), so none of these additions overflow
        self.entries
            .extend(old.entries.iter().map(|&(b, d)| (b, d + disp)));
        self.bounds = Some(match self.bounds {
            None => (lb, ub),
            Some((l, u)) => (l.min(lb), u.max(ub)),
        });
        self.align = self.align.max(old.align);
        Ok(())
    }

    fn finish(self) -> TypeMap {
        let (lb, ub) = self.bounds.unwrap_or((0, 0));
        TypeMap {
            entries: self.entries.into(),
            lb,
            ub,
            align: self.align,
        }
    }
}

/// `i * unit` as a byte offset, or the overflow error of `call`.
fn scaled(call: &'static str, i: isize, unit: isize) -> Result<isize> {
    i.checked_mul(unit)
        .ok_or_else(|| Error::invalid(call, "a displacement overflows isize"))
}

fn index(call: &'static str, i: usize) -> Result<isize> {
    isize::try_from(i).map_err(|_| Error::invalid(call, format!("count {i} exceeds isize::MAX")))
}

impl TypeMap {
    /// `count` copies of `old`, one after the other at multiples of its extent
    /// (MPI_Type_contiguous).
    ///
    /// Errors: [`Error::InvalidArgument`] if a displacement overflows `isize` or the map would
    /// exceed 2^28 entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::contiguous(3, &i32::type_map())?;
    /// assert_eq!(t.to_string(), "{(i32, 0), (i32, 4), (i32, 8)}");
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn contiguous(count: usize, old: &TypeMap) -> Result<TypeMap> {
        let mut b = Builder::new("MPI_Type_contiguous");
        b.block(0, count, old)?;
        Ok(b.finish())
    }

    /// `count` blocks of `blocklen` copies of `old`, block starts `stride` extents of `old`
    /// apart; the stride may be negative (MPI_Type_vector).
    ///
    /// Errors: [`Error::InvalidArgument`] if a displacement overflows `isize` or the map would
    /// exceed 2^28 entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::vector(2, 3, 4, &f64::type_map())?; // the lecture's example
    /// assert_eq!(
    ///     t.to_string(),
    ///     "{(f64, 0), (f64, 8), (f64, 16), (f64, 32), (f64, 40), (f64, 48)}"
    /// );
    /// assert_eq!((t.size(), t.extent()), (48, 56));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn vector(count: usize, blocklen: usize, stride: isize, old: &TypeMap) -> Result<TypeMap> {
        let call = "MPI_Type_vector";
        Self::strided(
            call,
            count,
            blocklen,
            scaled(call, stride, old.extent())?,
            old,
        )
    }

    /// Like [`TypeMap::vector`], with the stride in bytes (MPI_Type_create_hvector).
    ///
    /// Errors: [`Error::InvalidArgument`] if a displacement overflows `isize` or the map would
    /// exceed 2^28 entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::hvector(2, 1, -6, &i16::type_map())?;
    /// assert_eq!((t.to_string().as_str(), t.lb(), t.extent()), ("{(i16, 0), (i16, -6)}", -6, 8));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn hvector(count: usize, blocklen: usize, stride: isize, old: &TypeMap) -> Result<TypeMap> {
        Self::strided("MPI_Type_create_hvector", count, blocklen, stride, old)
    }

    fn strided(
        call: &'static str,
        count: usize,
        blocklen: usize,
        stride_bytes: isize,
        old: &TypeMap,
    ) -> Result<TypeMap> {
        let mut b = Builder::new(call);
        for i in 0..count {
            b.block(scaled(call, index(call, i)?, stride_bytes)?, blocklen, old)?;
        }
        Ok(b.finish())
    }

    /// Blocks of copies of `old`, each given as `(blocklen, displacement)` with the displacement
    /// in extents of `old` (MPI_Type_indexed). Displacements may be unordered, repeated or
    /// negative; zero-length blocks add nothing, not even to the bounds.
    ///
    /// Errors: [`Error::InvalidArgument`] if a displacement overflows `isize` or the map would
    /// exceed 2^28 entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::indexed(&[(2, 3), (1, 0)], &i32::type_map())?;
    /// assert_eq!(t.to_string(), "{(i32, 12), (i32, 16), (i32, 0)}");
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn indexed(blocks: &[(usize, isize)], old: &TypeMap) -> Result<TypeMap> {
        let call = "MPI_Type_indexed";
        Self::blocks(call, blocks.iter().copied(), old.extent(), old)
    }

    /// Like [`TypeMap::indexed`], with displacements in bytes (MPI_Type_create_hindexed).
    ///
    /// Errors: [`Error::InvalidArgument`] if a displacement overflows `isize` or the map would
    /// exceed 2^28 entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::hindexed(&[(1, 16), (2, -8)], &f64::type_map())?;
    /// assert_eq!((t.lb(), t.extent(), t.size()), (-8, 32, 24));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn hindexed(blocks: &[(usize, isize)], old: &TypeMap) -> Result<TypeMap> {
        Self::blocks("MPI_Type_create_hindexed", blocks.iter().copied(), 1, old)
    }

    /// Blocks of the same length `blocklen` at the displacements `disps`, in extents of `old`
    /// (MPI_Type_create_indexed_block).
    ///
    /// Errors: [`Error::InvalidArgument`] if a displacement overflows `isize` or the map would
    /// exceed 2^28 entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::indexed_block(1, &[2, 0], &u8::type_map())?;
    /// assert_eq!(t.to_string(), "{(u8, 2), (u8, 0)}");
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn indexed_block(blocklen: usize, disps: &[isize], old: &TypeMap) -> Result<TypeMap> {
        let blocks = disps.iter().map(|&d| (blocklen, d));
        Self::blocks("MPI_Type_create_indexed_block", blocks, old.extent(), old)
    }

    /// Like [`TypeMap::indexed_block`], with displacements in bytes
    /// (MPI_Type_create_hindexed_block).
    ///
    /// Errors: [`Error::InvalidArgument`] if a displacement overflows `isize` or the map would
    /// exceed 2^28 entries.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::hindexed_block(1, &[12, 0], &i32::type_map())?;
    /// assert_eq!((t.size(), t.extent()), (8, 16));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn hindexed_block(blocklen: usize, disps: &[isize], old: &TypeMap) -> Result<TypeMap> {
        let blocks = disps.iter().map(|&d| (blocklen, d));
        Self::blocks("MPI_Type_create_hindexed_block", blocks, 1, old)
    }

    fn blocks(
        call: &'static str,
        blocks: impl Iterator<Item = (usize, isize)>,
        unit: isize,
        old: &TypeMap,
    ) -> Result<TypeMap> {
        let mut b = Builder::new(call);
        for (blocklen, disp) in blocks {
            if blocklen > 0 {
                b.block(scaled(call, disp, unit)?, blocklen, old)?;
            }
        }
        Ok(b.finish())
    }

    /// A struct: fields given as `(blocklen, byte displacement, type)`
    /// (MPI_Type_create_struct). The extent is rounded up to a multiple of the alignment of the
    /// most-aligned basic type in it, as MPI does for C structs; use [`TypeMap::resized`] to
    /// set another.
    ///
    /// Errors: [`Error::InvalidArgument`] if a displacement overflows `isize` or the map would
    /// exceed 2^28 entries.
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
            if blocklen > 0 {
                b.block(disp, blocklen, old)?;
            }
        }
        let mut t = b.finish();
        let align = t.align as isize;
        let pad = (align - t.extent().rem_euclid(align)) % align;
        t.ub = t.ub.checked_add(pad).ok_or_else(|| {
            Error::invalid("MPI_Type_create_struct", "a displacement overflows isize")
        })?;
        Ok(t)
    }

    /// The same data with new bounds: lower bound `lb` and extent `extent`
    /// (MPI_Type_create_resized). The extent must not be negative.
    ///
    /// Errors: [`Error::InvalidArgument`] for a negative extent, or `lb + extent` overflowing
    /// `isize`.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // a column of a 3 x 4 matrix of i32, resized so that columns follow each other
    /// let col = TypeMap::vector(3, 1, 4, &i32::type_map())?.resized(0, 4)?;
    /// assert_eq!((col.extent(), col.true_extent()), (4, 36));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn resized(&self, lb: isize, extent: isize) -> Result<TypeMap> {
        let call = "MPI_Type_create_resized";
        if extent < 0 {
            return Err(Error::invalid(
                call,
                format!("expected an extent >= 0, got {extent}"),
            ));
        }
        let ub = lb
            .checked_add(extent)
            .ok_or_else(|| Error::invalid(call, "lb + extent overflows isize"))?;
        Ok(TypeMap {
            lb,
            ub,
            ..self.clone()
        })
    }

    /// The sub-block `subsizes` starting at `starts` of an array `sizes` of `old`, stored in
    /// `order` (MPI_Type_create_subarray). The result spans the whole array: lower bound 0,
    /// extent `sizes[0] * … * sizes[n-1]` extents of `old`.
    ///
    /// Errors: [`Error::InvalidArgument`] if `sizes`, `subsizes` and `starts` are empty or of
    /// different lengths, a size is 0, a block reaches past its dimension
    /// (`start + subsize > size`), or a displacement overflows `isize`.
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
        // dimensions from the fastest-varying to the slowest
        let dims: Vec<usize> = match order {
            Order::C => (0..n).rev().collect(),
            Order::Fortran => (0..n).collect(),
        };
        let mut t = TypeMap::contiguous(subsizes[dims[0]], old)?;
        let mut stride = old.extent(); // bytes between successive indices of dimension `d`
        let mut start = scaled(call, index(call, starts[dims[0]])?, stride)?;
        for w in dims.windows(2) {
            let (inner, d) = (w[0], w[1]);
            stride = scaled(call, stride, index(call, sizes[inner])?)?;
            t = Self::strided(call, subsizes[d], 1, stride, &t)?;
            let offset = scaled(call, index(call, starts[d])?, stride)?;
            start = start
                .checked_add(offset)
                .ok_or_else(|| Error::invalid(call, "a displacement overflows isize"))?;
        }
        let full = scaled(
            call,
            stride,
            index(call, sizes[*dims.last().unwrap_or(&0)])?,
        )?;
        let mut b = Builder::new(call);
        b.place(start, &t)?;
        b.finish().resized(0, full)
    }
}

impl TypeMap {
    /// The type map of a Rust struct, as `#[derive(Datatype)]` writes it: each field's type map
    /// at its byte offset (from `core::mem::offset_of!`), lower bound 0 and extent `size`
    /// (the struct's `size_of`), so that arrays of the struct step by its Rust size.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// #[derive(Clone, Copy)]
    /// #[repr(C)]
    /// struct P { x: f32, n: u8 }
    /// let map = TypeMap::from_fields(
    ///     std::mem::size_of::<P>(),
    ///     &[(std::mem::offset_of!(P, x), f32::type_map()), (std::mem::offset_of!(P, n), u8::type_map())],
    /// );
    /// assert_eq!((map.to_string().as_str(), map.extent()), ("{(f32, 0), (u8, 4)}", 8));
    /// ```
    pub fn from_fields(size: usize, fields: &[(usize, TypeMap)]) -> TypeMap {
        let mut entries = Vec::with_capacity(fields.iter().map(|(_, m)| m.entries.len()).sum());
        let mut align = 1;
        for (offset, map) in fields {
            let offset = *offset as isize; // an offset inside a Rust value fits in isize
            entries.extend(map.entries.iter().map(|&(b, d)| (b, d + offset)));
            align = align.max(map.align);
        }
        TypeMap {
            entries: entries.into(),
            lb: 0,
            ub: size as isize,
            align,
        }
    }
}
