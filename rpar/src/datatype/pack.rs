//! MPI_Pack / MPI_Unpack in MPI's native format: the bytes of the type map in map order,
//! successive elements at multiples of the extent — byte for byte what MPICH's `MPI_Pack`
//! writes on the same machine (checked by `tests/datatype_oracle.rs`).

use super::commit::{Access, CommittedType, Compiled};
use super::{engine, BasicType, Datatype};
use crate::{Error, Result};

impl CommittedType {
    /// Packs `count` elements laid out by this type, with displacement 0 at the start of `buf`,
    /// into `out` at `*position`, and advances `*position` (MPI_Pack).
    ///
    /// Every byte the type touches is checked to lie in `buf` and to be a value of the entry's
    /// basic type in `T`'s layout; `out` must have room.
    ///
    /// # Errors
    ///
    /// [`Error::BufferOutOfBounds`] if the type reaches outside `buf`;
    /// [`Error::InvalidArgument`] if an entry lands on padding or on a value of another basic
    /// type in `T`'s layout, if `out` has no room for the packed bytes, or if their count
    /// overflows `usize`.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let every_other = TypeMap::vector(3, 1, 2, &u16::type_map())?.commit();
    /// let data = [10u16, 0, 11, 0, 12];
    /// let mut out = [0u8; 6];
    /// let mut pos = 0;
    /// every_other.pack(&data, 1, &mut out, &mut pos)?;
    /// assert_eq!(pos, 6);
    /// let expected: Vec<u8> = [10u16, 11, 12].iter().flat_map(|x| x.to_ne_bytes()).collect();
    /// assert_eq!(out[..], expected[..]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn pack<T: Datatype>(
        &self,
        buf: &[T],
        count: usize,
        out: &mut [u8],
        position: &mut usize,
    ) -> Result<()> {
        self.pack_at(buf, 0, count, out, position)
    }

    /// Like [`CommittedType::pack`], with displacement 0 at element `origin` of `buf`, so that
    /// types with negative displacements (negative strides, a negative `lb`) can be used (MPI_Pack
    /// of `&buf[origin]`).
    ///
    /// # Errors
    ///
    /// [`Error::BufferOutOfBounds`] if the type reaches outside `buf`;
    /// [`Error::InvalidArgument`] if an entry lands on padding or on a value of another basic
    /// type in `T`'s layout, if `origin` is past the end of `buf`, if `out` has no room for
    /// the packed bytes, or if their count overflows `usize`.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let backwards = TypeMap::vector(3, 1, -1, &i32::type_map())?.commit();
    /// let data = [1, 2, 3];
    /// let packed = backwards.pack_to_vec_at(&data, 2, 1)?;
    /// assert_eq!(packed, [3, 2, 1].iter().flat_map(|x: &i32| x.to_ne_bytes()).collect::<Vec<_>>());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn pack_at<T: Datatype>(
        &self,
        buf: &[T],
        origin: usize,
        count: usize,
        out: &mut [u8],
        position: &mut usize,
    ) -> Result<()> {
        let base = self.inner.origin_byte("MPI_Pack", buf, origin)?;
        self.pack_from_byte("MPI_Pack", buf, base, count, out, position)
    }

    /// [`CommittedType::pack_at`] with displacement 0 at byte `base` of `buf`, which need not
    /// be the start of an element (the block of a v-collective, `displs[i] * extent` bytes in).
    pub(crate) fn pack_from_byte<T: Datatype>(
        &self,
        call: &'static str,
        buf: &[T],
        base: usize,
        count: usize,
        out: &mut [u8],
        position: &mut usize,
    ) -> Result<()> {
        let needed = self.check_pack(call, buf, base, count)?;
        let dst = room(call, out.len(), *position, needed)?;
        // SAFETY: check_pack proved every byte the type names for `count` elements at `base`
        // lies in `buf` (and is data, not padding); `out[dst..dst + needed]` exists (`room`)
        // and is a distinct, exclusively borrowed buffer.
        unsafe {
            engine::gather(
                &self.inner,
                count,
                buf.as_ptr().cast::<u8>().add(base),
                out.as_mut_ptr().add(dst),
            )
        };
        *position = dst + needed;
        Ok(())
    }

    /// The checks of a pack of `count` elements of `buf` with displacement 0 at byte `base`:
    /// every byte the type names lies in `buf` and is a value of the entry's basic type, and
    /// the packed size fits in `usize`. Returns that size. Nothing is allocated or touched, so
    /// a huge count on a small buffer fails at once.
    fn check_pack<T: Datatype>(
        &self,
        call: &'static str,
        buf: &[T],
        base: usize,
        count: usize,
    ) -> Result<usize> {
        let len = std::mem::size_of_val(buf);
        self.inner
            .check_buffer::<T>(call, base, len, count, Access::Read)?;
        self.packed_bytes(call, count)
    }

    /// Packs `count` elements into a new `Vec` of exactly [`pack_size`](Self::pack_size) bytes
    /// (MPI_Pack into a buffer of MPI_Pack_size bytes).
    ///
    /// # Errors
    ///
    /// Those of [`CommittedType::pack`] (`out` always has room), checked before anything is
    /// allocated: a count that reaches past `buf` is [`Error::BufferOutOfBounds`] at once,
    /// however large. Then [`Error::InvalidArgument`] if there is no memory for the packed
    /// bytes.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // the diagonal of a 3 x 3 matrix
    /// let diagonal = TypeMap::vector(3, 1, 4, &i32::type_map())?.commit();
    /// let m = [1, 0, 0, 0, 5, 0, 0, 0, 9];
    /// let packed = diagonal.pack_to_vec(&m, 1)?;
    /// assert_eq!(packed, [1, 5, 9].iter().flat_map(|x: &i32| x.to_ne_bytes()).collect::<Vec<u8>>());
    /// assert!(diagonal.pack_to_vec(&m[..8], 1).is_err()); // the last entry is outside
    /// let err = diagonal.pack_to_vec(&m, 1 << 40).unwrap_err(); // 12 TiB of packed bytes
    /// assert!(matches!(err, rpar::Error::BufferOutOfBounds { len: 36, .. }));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn pack_to_vec<T: Datatype>(&self, buf: &[T], count: usize) -> Result<Vec<u8>> {
        self.pack_to_vec_at(buf, 0, count)
    }

    /// Like [`CommittedType::pack_to_vec`], with displacement 0 at element `origin` of `buf`
    /// (MPI_Pack of `&buf[origin]`).
    ///
    /// # Errors
    ///
    /// Those of [`CommittedType::pack_at`] (`out` always has room), checked before anything is
    /// allocated, as in [`CommittedType::pack_to_vec`]; then [`Error::InvalidArgument`] if there
    /// is no memory for the packed bytes.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // around element 1: the one before it and the one after it
    /// let neighbours = TypeMap::indexed(&[(1, -1), (1, 1)], &u8::type_map())?.commit();
    /// assert_eq!(neighbours.pack_to_vec_at(&[10u8, 20, 30], 1, 1)?, [10, 30]);
    /// assert!(neighbours.pack_to_vec(&[10u8, 20, 30], 1).is_err()); // byte -1 is outside
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn pack_to_vec_at<T: Datatype>(
        &self,
        buf: &[T],
        origin: usize,
        count: usize,
    ) -> Result<Vec<u8>> {
        // every check first: the buffer's bounds and layout say whether there is anything to
        // allocate for (a huge count on a small buffer is an error, not gigabytes zero-filled)
        let base = self.inner.origin_byte("MPI_Pack", buf, origin)?;
        let needed = self.check_pack("MPI_Pack", buf, base, count)?;
        let mut out = Vec::new();
        out.try_reserve_exact(needed).map_err(|_| {
            Error::invalid("MPI_Pack", format!("no memory for {needed} packed bytes"))
        })?;
        out.resize(needed, 0);
        // SAFETY: check_pack proved every byte the type names for `count` elements at `base`
        // lies in `buf` (and is data, not padding); `out` holds exactly the `needed` packed
        // bytes and is a distinct buffer of our own.
        unsafe {
            engine::gather(
                &self.inner,
                count,
                buf.as_ptr().cast::<u8>().add(base),
                out.as_mut_ptr(),
            )
        };
        Ok(out)
    }

    /// Unpacks `count` elements from `packed` at `*position` into `buf`, laid out by this type
    /// with displacement 0 at the start of `buf`, and advances `*position` (MPI_Unpack).
    ///
    /// Bytes bound for a `bool` or `char` are validated first: invalid ones are an error and
    /// nothing is written.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidValue`] for bytes that are no valid `bool` or `char`;
    /// [`Error::BufferOutOfBounds`] if the type reaches outside `buf`; [`Error::InvalidArgument`]
    /// if an entry lands on padding or on a value of another basic type in `T`'s layout (or on a
    /// `bool` or `char` for a `byte` entry), if `packed` holds fewer than the needed bytes at
    /// `*position`, or if their count overflows `usize`.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::contiguous(2, &bool::type_map())?.commit();
    /// let mut flags = [false; 2];
    /// let mut pos = 0;
    /// t.unpack(&[1, 0], &mut pos, &mut flags, 1)?;
    /// assert_eq!(flags, [true, false]);
    /// let mut pos = 0;
    /// assert!(t.unpack(&[1, 7], &mut pos, &mut flags, 1).is_err()); // 7 is no bool
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn unpack<T: Datatype>(
        &self,
        packed: &[u8],
        position: &mut usize,
        buf: &mut [T],
        count: usize,
    ) -> Result<()> {
        self.unpack_at(packed, position, buf, 0, count)
    }

    /// Like [`CommittedType::unpack`], with displacement 0 at element `origin` of `buf` (MPI_Unpack
    /// into `&buf[origin]`).
    ///
    /// # Errors
    ///
    /// Those of [`CommittedType::unpack`], and [`Error::InvalidArgument`] if `origin` is past the
    /// end of `buf`.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // unpack 3 values backwards, ending at element 0
    /// let backwards = TypeMap::vector(3, 1, -1, &u16::type_map())?.commit();
    /// let packed: Vec<u8> = [7u16, 8, 9].iter().flat_map(|x| x.to_ne_bytes()).collect();
    /// let mut buf = [0u16; 3];
    /// let mut pos = 0;
    /// backwards.unpack_at(&packed, &mut pos, &mut buf, 2, 1)?;
    /// assert_eq!((buf, pos), ([9, 8, 7], 6));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn unpack_at<T: Datatype>(
        &self,
        packed: &[u8],
        position: &mut usize,
        buf: &mut [T],
        origin: usize,
        count: usize,
    ) -> Result<()> {
        let base = self.inner.origin_byte("MPI_Unpack", buf, origin)?;
        self.unpack_to_byte("MPI_Unpack", packed, position, buf, base, count)
    }

    /// [`CommittedType::unpack_at`] with displacement 0 at byte `base` of `buf`, which need not
    /// be the start of an element (the block of a v-collective, `displs[i] * extent` bytes in).
    pub(crate) fn unpack_to_byte<T: Datatype>(
        &self,
        call: &'static str,
        packed: &[u8],
        position: &mut usize,
        buf: &mut [T],
        base: usize,
        count: usize,
    ) -> Result<()> {
        let ty = &*self.inner;
        ty.check_buffer::<T>(call, base, std::mem::size_of_val(buf), count, Access::Write)?;
        let needed = self.packed_bytes(call, count)?;
        let src = room(call, packed.len(), *position, needed)?;
        ty.validate(call, &packed[src..src + needed], count)?;
        // SAFETY: check_buffer proved every byte the type names lies in `buf` and on a value
        // of the entry's basic type; `packed[src..src + needed]` exists and does not overlap
        // the exclusively borrowed `buf`; bytes bound for bool/char were validated just above,
        // all other basic types accept every bit pattern.
        unsafe {
            engine::scatter(
                ty,
                count,
                packed.as_ptr().add(src),
                buf.as_mut_ptr().cast::<u8>().add(base),
            )
        };
        *position = src + needed;
        Ok(())
    }

    fn packed_bytes(&self, call: &'static str, count: usize) -> Result<usize> {
        self.inner.packed_bytes(call, count)
    }
}

/// Where `needed` bytes start in a buffer of `len` bytes at `position`, if they fit.
fn room(call: &'static str, len: usize, position: usize, needed: usize) -> Result<usize> {
    match position.checked_add(needed) {
        Some(end) if end <= len => Ok(position),
        _ => Err(Error::invalid(
            call,
            format!(
                "expected room for {needed} packed bytes at position {position}, but the \
                 buffer holds {len} bytes"
            ),
        )),
    }
}

impl Compiled {
    /// Bytes of `count` packed elements, if they fit in `usize`.
    pub(crate) fn packed_bytes(&self, call: &'static str, count: usize) -> Result<usize> {
        count.checked_mul(self.size).ok_or_else(|| {
            Error::invalid(
                call,
                format!(
                    "expected at most usize::MAX packed bytes, got {count} elements of {} bytes",
                    self.size
                ),
            )
        })
    }

    /// [`Compiled::check_buffer`] for a slice with displacement 0 at element `origin`; returns
    /// the origin's byte offset.
    pub(crate) fn check_slice<T: Datatype>(
        &self,
        call: &'static str,
        buf: &[T],
        origin: usize,
        count: usize,
        access: Access,
    ) -> Result<usize> {
        let base = self.origin_byte(call, buf, origin)?;
        let len = std::mem::size_of_val(buf);
        self.check_buffer::<T>(call, base, len, count, access)?;
        Ok(base)
    }

    /// The byte offset of element `origin` of `buf`, if it is at most one past the end.
    pub(crate) fn origin_byte<T: Datatype>(
        &self,
        call: &'static str,
        buf: &[T],
        origin: usize,
    ) -> Result<usize> {
        if origin > buf.len() {
            return Err(Error::invalid(
                call,
                format!(
                    "origin {origin} is past the end of a buffer of {} elements",
                    buf.len()
                ),
            ));
        }
        Ok(origin * std::mem::size_of::<T>())
    }

    /// Appends the byte spans `(start, end)` that `count` elements at byte `base` touch, one
    /// per contiguous block of the type (O(blocks)); the caller has checked that they lie in
    /// the buffer. For the overlap check of a v-collective's receive blocks.
    pub(crate) fn spans(&self, base: usize, count: usize, out: &mut Vec<(usize, usize)>) {
        for k in 0..count as isize {
            for r in &self.runs {
                for m in 0..r.count as isize {
                    // in the buffer: the caller checked the elements' bounds
                    let at = (base as isize + k * self.extent + r.disp + m * r.stride) as usize;
                    out.push((at, at + r.len));
                }
            }
        }
    }

    /// Checks that the packed bytes of `count` elements are valid values wherever a `bool` or a
    /// `char` is bound.
    pub(crate) fn validate(&self, call: &'static str, packed: &[u8], count: usize) -> Result<()> {
        if self.validated.is_empty() {
            return Ok(());
        }
        for k in 0..count {
            for &(at, b) in &self.validated {
                let at = k * self.size + at;
                let bytes = &packed[at..at + b.size()];
                let valid = match b {
                    BasicType::Bool => bytes[0] <= 1,
                    BasicType::Char => {
                        let v = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                        char::from_u32(v).is_some()
                    }
                    _ => true,
                };
                if !valid {
                    return Err(Error::InvalidValue {
                        call,
                        basic: b,
                        position: at,
                        bytes: bytes.to_vec(),
                    });
                }
            }
        }
        Ok(())
    }
}
