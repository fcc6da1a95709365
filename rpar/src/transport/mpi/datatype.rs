//! rpar type maps as MPI derived datatypes: each map becomes an `MPI_Type_create_struct` of
//! its entries (adjacent entries of one basic type merged into one block), resized to the map's
//! lb and extent, so MPI's size, extent, true extent and packed bytes are rpar's.

use crate::datatype::{Access, BasicType, CommittedType, Datatype, TypeMap};
use crate::{Error, Result};
use ::mpi::ffi;
use ::mpi::ffi::MPI_Datatype;

/// The MPI predefined datatype of a basic type, if MPI has one.
pub(crate) fn predefined(b: BasicType) -> Option<MPI_Datatype> {
    use BasicType::*;
    // SAFETY: (all arms) rsmpi's constants are initialised, immutable handles.
    Some(unsafe {
        match b {
            I8 => ffi::RSMPI_INT8_T,
            I16 => ffi::RSMPI_INT16_T,
            I32 => ffi::RSMPI_INT32_T,
            I64 => ffi::RSMPI_INT64_T,
            Isize if cfg!(target_pointer_width = "64") => ffi::RSMPI_INT64_T,
            Isize => ffi::RSMPI_INT32_T,
            U8 | Byte => ffi::RSMPI_UINT8_T,
            U16 => ffi::RSMPI_UINT16_T,
            U32 | Char => ffi::RSMPI_UINT32_T,
            U64 => ffi::RSMPI_UINT64_T,
            Usize if cfg!(target_pointer_width = "64") => ffi::RSMPI_UINT64_T,
            Usize => ffi::RSMPI_UINT32_T,
            F32 => ffi::RSMPI_FLOAT,
            F64 => ffi::RSMPI_DOUBLE,
            Bool => ffi::RSMPI_C_BOOL,
            C32 => ffi::RSMPI_FLOAT_COMPLEX,
            C64 => ffi::RSMPI_DOUBLE_COMPLEX,
            I128 | U128 => return None,
        }
    })
}

/// The datatype of one entry: the predefined one, or 16 contiguous bytes for 128-bit integers.
fn entry_type(b: BasicType) -> MPI_Datatype {
    predefined(b).unwrap_or_else(|| {
        let mut t = std::mem::MaybeUninit::uninit();
        // SAFETY: MPI_Type_contiguous writes a new datatype handle; the byte type is predefined.
        unsafe {
            ffi::MPI_Type_contiguous(16, ffi::RSMPI_UINT8_T, t.as_mut_ptr());
            let mut t = t.assume_init();
            ffi::MPI_Type_commit(&mut t);
            t
        }
    })
}

/// A committed MPI datatype with the type map's layout (the caller owns it: free it with
/// `MPI_Type_free`).
pub(crate) fn build(map: &TypeMap) -> Result<MPI_Datatype> {
    // blocks of adjacent entries of one basic type
    let mut blocks: Vec<(BasicType, isize, i32)> = Vec::new();
    for &(b, d) in map.entries() {
        match blocks.last_mut() {
            Some((lb, ld, n)) if *lb == b && *ld + *n as isize * b.size() as isize == d => *n += 1,
            _ => blocks.push((b, d, 1)),
        }
    }
    let too_big = |what: &str| {
        Error::invalid(
            "TypeMap::to_mpi",
            format!("a type map MPI can describe, got one with too many {what}"),
        )
    };
    let n = i32::try_from(blocks.len()).map_err(|_| too_big("blocks"))?;
    let lens: Vec<i32> = blocks.iter().map(|b| b.2).collect();
    let disps: Vec<ffi::MPI_Aint> = blocks.iter().map(|b| b.1 as ffi::MPI_Aint).collect();
    let mut types: Vec<MPI_Datatype> = blocks.iter().map(|b| entry_type(b.0)).collect();
    let mut structure = std::mem::MaybeUninit::uninit();
    let mut resized = std::mem::MaybeUninit::uninit();
    // SAFETY: the three arrays hold `n` entries each and outlive the calls; MPI writes the new
    // handles, which are committed before use.
    unsafe {
        ffi::MPI_Type_create_struct(
            n,
            lens.as_ptr(),
            disps.as_ptr(),
            types.as_ptr(),
            structure.as_mut_ptr(),
        );
        let mut structure = structure.assume_init();
        ffi::MPI_Type_create_resized(
            structure,
            map.lb() as ffi::MPI_Aint,
            map.extent() as ffi::MPI_Aint,
            resized.as_mut_ptr(),
        );
        ffi::MPI_Type_free(&mut structure);
        // the 16-byte stand-ins for 128-bit integers were made for this type only
        for (t, b) in types.iter_mut().zip(&blocks) {
            if predefined(b.0).is_none() {
                ffi::MPI_Type_free(t);
            }
        }
        let mut resized = resized.assume_init();
        ffi::MPI_Type_commit(&mut resized);
        Ok(resized)
    }
}

/// A type map as a committed MPI datatype (`MPI_Type_create_struct`, then
/// `MPI_Type_create_resized` and `MPI_Type_commit`), freed on drop (`MPI_Type_free`). For
/// handing rpar's types to MPI code of your own (through [`MpiDatatype::as_raw`] and rsmpi), and
/// for checking that MPI sees rpar's type maps as rpar does.
///
/// Only with the `mpi` cargo feature, like the examples here, which run as doc tests with it:
/// making one initialises MPI if it is not yet (a singleton process when no launcher started
/// the program), and MPI is finalised when the process exits.
///
/// ```
/// use rpar::{BasicType, TypeMap};
/// let column = TypeMap::vector(3, 1, 4, &TypeMap::basic(BasicType::F64))?;
/// let t = rpar::mpi::MpiDatatype::new(&column)?;
/// assert_eq!((t.size(), t.extent()), (24, (0, 72)));
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug)]
pub struct MpiDatatype {
    raw: MPI_Datatype,
    /// Whether the handle is ours to free (not one of MPI's predefined types).
    owned: bool,
    /// The type map, compiled, of a datatype made from one ([`MpiDatatype::new`]): what
    /// [`MpiDatatype::pack`] checks a buffer against before MPI reads it.
    committed: Option<CommittedType>,
}

impl MpiDatatype {
    /// The MPI datatype of `map` (MPI_Type_create_struct, MPI_Type_create_resized,
    /// MPI_Type_commit), initialising MPI first if it is not yet.
    ///
    /// Cost: O(entries) to merge adjacent entries of one basic type into blocks, then MPI's
    /// commit.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if MPI could not be initialised, or if the map has more
    /// blocks of adjacent entries than an MPI `int` counts.
    ///
    /// ```
    /// use rpar::{BasicType::*, TypeMap};
    /// // a u8 and an f64 with 7 bytes of padding between: 9 bytes of data in 16
    /// let map = TypeMap::from_parts(vec![(U8, 0), (F64, 8)], 0, 16)?;
    /// let t = rpar::mpi::MpiDatatype::new(&map)?;
    /// assert_eq!((t.size(), t.extent()), (map.size(), (map.lb(), map.extent())));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn new(map: &TypeMap) -> Result<MpiDatatype> {
        super::setup::ensure_initialized()?;
        Ok(MpiDatatype {
            raw: build(map)?,
            owned: true,
            committed: Some(map.commit()),
        })
    }

    /// The MPI datatype of the Rust element type `T`, for MPI's collectives: a predefined type
    /// for a basic type, `MPI_Type_contiguous` of one for a gap-free array of it (MPI moves both
    /// with plain copies), the general struct type otherwise.
    pub(crate) fn of<T: Datatype>() -> Result<MpiDatatype> {
        let basic = const { T::LAYOUT.dense_uniform() }.and_then(|b| predefined(b).map(|t| (b, t)));
        let Some((b, t)) = basic else {
            return Ok(MpiDatatype {
                raw: build(&T::type_map())?,
                owned: true,
                committed: None,
            });
        };
        let n = std::mem::size_of::<T>() / b.size();
        if n == 1 {
            return Ok(MpiDatatype {
                raw: t,
                owned: false,
                committed: None,
            });
        }
        let n = i32::try_from(n).map_err(|_| {
            Error::invalid(
                "an MPI datatype",
                format!("at most {} values, got {n}", i32::MAX),
            )
        })?;
        let mut raw = std::mem::MaybeUninit::uninit();
        // SAFETY: MPI_Type_contiguous writes a new handle, committed before use.
        let raw = unsafe {
            ffi::MPI_Type_contiguous(n, t, raw.as_mut_ptr());
            let mut raw = raw.assume_init();
            ffi::MPI_Type_commit(&mut raw);
            raw
        };
        Ok(MpiDatatype {
            raw,
            owned: true,
            committed: None,
        })
    }

    /// The raw handle (an `MPI_Datatype`), for MPI calls of your own through rsmpi. It stays
    /// owned by `self`: valid while `self` lives, and not to be freed.
    ///
    /// ```
    /// use rpar::mpi::{rsmpi::ffi, MpiDatatype};
    /// use rpar::{Datatype, TypeMap};
    /// let t = MpiDatatype::new(&TypeMap::vector(2, 2, 3, &i32::type_map())?)?;
    /// let mut size = 0;
    /// // SAFETY: `t` is a live committed datatype; MPI writes its size into `size`.
    /// unsafe { ffi::MPI_Type_size(t.as_raw(), &mut size) };
    /// assert_eq!((size, t.size()), (16, 16));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn as_raw(&self) -> MPI_Datatype {
        self.raw
    }

    /// The bytes of data in one element, padding and gaps not counted (MPI_Type_size): what
    /// [`TypeMap::size`] says.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let every_other = TypeMap::vector(4, 1, 2, &f32::type_map())?;
    /// let t = rpar::mpi::MpiDatatype::new(&every_other)?;
    /// assert_eq!((t.size(), every_other.size()), (16, 16));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        let mut size = 0;
        // SAFETY: `raw` is a live committed datatype; MPI writes the size.
        unsafe { ffi::MPI_Type_size(self.raw, &mut size) };
        size as usize
    }

    /// MPI_Type_get_extent: `(lb, extent)`, what [`TypeMap::lb`] and [`TypeMap::extent`] say.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let shifted = f64::type_map().resized(-8, 24)?;
    /// let t = rpar::mpi::MpiDatatype::new(&shifted)?;
    /// assert_eq!(t.extent(), (-8, 24));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn extent(&self) -> (isize, isize) {
        let (mut lb, mut extent) = (0, 0);
        // SAFETY: as in `size`.
        unsafe { ffi::MPI_Type_get_extent(self.raw, &mut lb, &mut extent) };
        // MPI_Aint is i64 in MPICH's bindings and isize in Open MPI's
        #[allow(clippy::unnecessary_cast)]
        (lb as isize, extent as isize)
    }

    /// MPI_Type_get_true_extent: `(true lb, true extent)`, the bytes the data spans whatever
    /// the type was resized to; what [`TypeMap::true_lb`] and [`TypeMap::true_extent`] say.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let shifted = f64::type_map().resized(-8, 24)?;
    /// let t = rpar::mpi::MpiDatatype::new(&shifted)?;
    /// assert_eq!(t.true_extent(), (0, 8));
    /// assert_eq!(t.true_extent(), (shifted.true_lb(), shifted.true_extent()));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn true_extent(&self) -> (isize, isize) {
        let (mut lb, mut extent) = (0, 0);
        // SAFETY: as in `size`.
        unsafe { ffi::MPI_Type_get_true_extent(self.raw, &mut lb, &mut extent) };
        // MPI_Aint is i64 in MPICH's bindings and isize in Open MPI's
        #[allow(clippy::unnecessary_cast)]
        (lb as isize, extent as isize)
    }

    /// MPI_Pack of `count` elements laid out from element `origin` of `buf` (displacement 0
    /// there): MPI's packed bytes, for comparing with
    /// [`CommittedType::pack_to_vec_at`](crate::CommittedType::pack_to_vec_at).
    ///
    /// Cost: one copy of `count` elements' data, by MPI.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if the elements do not lie within `buf`, if an entry
    /// of the type would land on padding or on a value of another basic type in `T`'s layout
    /// (checked as rpar's own pack checks, so that MPI never reads padding), or if `count` or
    /// the packed size exceeds what an MPI `int` counts.
    ///
    /// ```
    /// use rpar::{Datatype, Error, TypeMap};
    /// let column = TypeMap::vector(3, 1, 4, &f64::type_map())?; // of a 3 x 4 matrix
    /// let t = rpar::mpi::MpiDatatype::new(&column)?;
    /// let m: Vec<f64> = (0..12).map(f64::from).collect();
    /// let packed = t.pack(&m, 1, 1)?; // column 1
    /// let expected: Vec<u8> = [1.0f64, 5.0, 9.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
    /// assert_eq!(packed, expected);
    /// assert_eq!(packed, column.commit().pack_to_vec_at(&m, 1, 1)?);
    /// // a second column starts one extent (9 f64) on: its last value would be past the end
    /// assert!(matches!(t.pack(&m, 1, 2), Err(Error::InvalidArgument { .. })));
    /// // a u32 at byte 12 of a Loc<f64, u32> is padding: refused before MPI reads it
    /// let pad = rpar::mpi::MpiDatatype::new(&TypeMap::hindexed(&[(1, 12)], &u32::type_map())?)?;
    /// let locs = [rpar::Loc { value: 1.0f64, index: 7u32 }];
    /// assert!(matches!(pad.pack(&locs, 0, 1), Err(Error::InvalidArgument { .. })));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn pack<T: Datatype>(&self, buf: &[T], origin: usize, count: usize) -> Result<Vec<u8>> {
        let origin = origin * std::mem::size_of::<T>();
        let bytes = std::mem::size_of_val(buf);
        let (_, extent) = self.extent();
        let (tlb, textent) = self.true_extent();
        let bad = || {
            Error::invalid(
                "MpiDatatype::pack",
                format!("{count} elements from byte {origin} within {bytes} bytes"),
            )
        };
        if count > 0 {
            let first = origin as isize + tlb.min(tlb + (count as isize - 1) * extent);
            let last = origin as isize
                + (tlb + textent).max(tlb + textent + (count as isize - 1) * extent);
            if first < 0 || last > bytes as isize {
                return Err(bad());
            }
        }
        if let Some(committed) = &self.committed {
            let call = "MpiDatatype::pack";
            committed
                .inner
                .check_buffer::<T>(call, origin, bytes, count, Access::Read)?;
        }
        let n = i32::try_from(count).map_err(|_| bad())?;
        let out_len = self.size() * count;
        let out_len_mpi = i32::try_from(out_len).map_err(|_| bad())?;
        let mut out = vec![0u8; out_len];
        let mut position = 0;
        let world = super::setup::world();
        // SAFETY: every byte the datatype names for `count` elements from `origin` lies in `buf`
        // and, for a datatype made from a type map, is a data byte of `T`, never padding
        // (checked above; the internal datatypes of `of` describe `T` itself, so they name
        // exactly its data bytes); `out` has room for the packed bytes.
        unsafe {
            ffi::MPI_Pack(
                buf.as_ptr().cast::<u8>().add(origin).cast(),
                n,
                self.raw,
                out.as_mut_ptr().cast(),
                out_len_mpi,
                &mut position,
                ::mpi::traits::AsRaw::as_raw(&world),
            )
        };
        out.truncate(position as usize);
        Ok(out)
    }
}

impl Drop for MpiDatatype {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: `raw` was made for this value (not predefined) and is freed only here.
            unsafe { ffi::MPI_Type_free(&mut self.raw) };
        }
    }
}
