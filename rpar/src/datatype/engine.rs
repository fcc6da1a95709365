//! The copy engine under pack, unpack and the non-contiguous sends: moving the bytes of
//! `count` elements of a committed type between memory laid out by the type and a contiguous
//! (packed) stream, or between two typed layouts, one copy per segment.
//!
//! Everything here works on raw pointers; the callers prove the bounds (with
//! `Compiled::check_buffer`) before calling. Blocks of common lengths get a copy loop of their
//! own so that the compiler emits plain loads and stores instead of `memcpy` calls; the
//! elements of a type whose blocks form one regular pattern (see `Compiled::as_one_run`) are
//! copied as one run; and large packed outputs are written with streaming stores
//! (`store.rs`). Pack, unpack and the typed sends all go through [`gather`] and [`scatter`].

use super::commit::{Compiled, Run};
use super::store::{Plain, Store};
#[cfg(target_arch = "x86_64")]
use super::store::{Stream, STREAM_MIN_BYTES};

/// Copies `n` blocks of `len` bytes from `src + j * ss` to `dst + j * ds`: one copy if both
/// sides are contiguous, else a loop with a constant block length for the common lengths, so
/// that each block is a few plain loads and stores rather than a `memcpy` call.
///
/// # Safety
///
/// As [`Store::blocks`].
#[inline]
unsafe fn blocks<S: Store>(
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    ds: isize,
    len: usize,
    n: usize,
) {
    let contiguous = |stride: isize| n == 1 || stride == len as isize;
    // SAFETY: (all arms) the caller's guarantee, passed on unchanged; contiguous blocks on
    // both sides are one span of `len * n` bytes.
    unsafe {
        if contiguous(ss) && contiguous(ds) {
            return S::copy(src, dst, len * n);
        }
        match len {
            1 => S::blocks::<1>(src, ss, dst, ds, n),
            2 => S::blocks::<2>(src, ss, dst, ds, n),
            4 => S::blocks::<4>(src, ss, dst, ds, n),
            8 => S::blocks::<8>(src, ss, dst, ds, n),
            12 => S::blocks::<12>(src, ss, dst, ds, n),
            16 => S::blocks::<16>(src, ss, dst, ds, n),
            24 => S::blocks::<24>(src, ss, dst, ds, n),
            32 => S::blocks::<32>(src, ss, dst, ds, n),
            48 => S::blocks::<48>(src, ss, dst, ds, n),
            64 => S::blocks::<64>(src, ss, dst, ds, n),
            _ => {
                for j in 0..n as isize {
                    S::copy(src.offset(j * ss), dst.offset(j * ds), len);
                }
            }
        }
    }
}

/// Calls `f(offset, run, at)` for every run of `count` elements of `ty` in map order: `offset`
/// is the run's displacement from the base, `at` where its bytes start in the packed stream.
/// When the elements' blocks form one regular run (one vector, `count` copies of a
/// single-block type, a subarray of a column range of every row), that run is handed out once.
#[inline(always)]
fn each_run(ty: &Compiled, count: usize, mut f: impl FnMut(isize, &Run, usize)) {
    if let Some(run) = ty.as_one_run(count) {
        return f(run.disp, &run, 0);
    }
    if ty.runs.is_empty() {
        return; // no data, however many elements: nothing to walk
    }
    let mut at = 0usize;
    for k in 0..count as isize {
        for r in &ty.runs {
            f(k * ty.extent + r.disp, r, at);
            at += r.len * r.count;
        }
    }
}

/// [`gather`] with one way of storing.
///
/// # Safety
///
/// As [`gather`], plus `S`'s alignment rule for every block of the packed stream at `out`.
#[inline(always)]
unsafe fn gather_with<S: Store>(ty: &Compiled, count: usize, base: *const u8, out: *mut u8) {
    each_run(ty, count, |offset, r, at| {
        // SAFETY: the run's blocks are bytes of the `count` elements (caller); the packed
        // stream has room for them at `at` (the runs hold exactly `size` bytes per element).
        unsafe {
            blocks::<S>(
                base.offset(offset),
                r.stride,
                out.add(at),
                r.len as isize,
                r.len,
                r.count,
            )
        };
    });
    S::finish();
}

/// Packs `count` elements laid out by `ty` from `base` into the contiguous `out`
/// (`count * ty.size` bytes). Outputs of `STREAM_MIN_BYTES` or more are written with
/// streaming stores, in the widest word that every block of the packed stream is aligned to.
///
/// # Safety
///
/// Every byte the type map names for the `count` elements, relative to `base`, must be
/// readable; `out` must be writable for `count * ty.size` bytes and not overlap them.
pub(crate) unsafe fn gather(ty: &Compiled, count: usize, base: *const u8, out: *mut u8) {
    #[cfg(target_arch = "x86_64")]
    if count.saturating_mul(ty.size) >= STREAM_MIN_BYTES {
        // every block starts at a multiple of the common block length after `out`
        let word = ty.block_align.min(1 << (out as usize).trailing_zeros());
        // SAFETY: the caller's guarantee; each block's length is a multiple of `word`
        // (`block_align`) and so is each block's start in the packed stream, and `out` is
        // `word`-aligned: every block meets `Stream<word>`'s alignment rule.
        unsafe {
            match word {
                16.. => return gather_with::<Stream<16>>(ty, count, base, out),
                8 => return gather_with::<Stream<8>>(ty, count, base, out),
                4 => return gather_with::<Stream<4>>(ty, count, base, out),
                _ => {}
            }
        }
    }
    // SAFETY: the caller's guarantee; plain copies have no alignment rule.
    unsafe { gather_with::<Plain>(ty, count, base, out) }
}

/// Unpacks the contiguous `packed` (`count * ty.size` bytes) into `count` elements laid out by
/// `ty` at `base`.
///
/// # Safety
///
/// Every byte the type map names for the `count` elements, relative to `base`, must be
/// writable; `packed` must be readable for `count * ty.size` bytes and not overlap them.
pub(crate) unsafe fn scatter(ty: &Compiled, count: usize, packed: *const u8, base: *mut u8) {
    each_run(ty, count, |offset, r, at| {
        // SAFETY: as in `gather_with`, with the roles of the two sides exchanged.
        unsafe {
            blocks::<Plain>(
                packed.add(at),
                r.len as isize,
                base.offset(offset),
                r.stride,
                r.len,
                r.count,
            )
        };
    });
}

/// Walks the segments of `count` elements of a type, in map order, handing out pieces.
struct Cursor<'a> {
    runs: &'a [Run],
    extent: isize,
    count: usize,
    k: usize,
    r: usize,
    j: usize,
    used: usize,
}

impl<'a> Cursor<'a> {
    fn new(ty: &'a Compiled, count: usize) -> Self {
        Cursor {
            runs: &ty.runs,
            extent: ty.extent,
            count,
            k: 0,
            r: 0,
            j: 0,
            used: 0,
        }
    }

    /// The next piece of at most `max` bytes: its offset from the base and its length.
    fn take(&mut self, max: usize) -> Option<(isize, usize)> {
        if self.runs.is_empty() || self.k >= self.count {
            return None;
        }
        let run = self.runs[self.r];
        let start = self.k as isize * self.extent
            + run.disp
            + self.j as isize * run.stride
            + self.used as isize;
        let len = (run.len - self.used).min(max);
        self.used += len;
        if self.used == run.len {
            self.used = 0;
            self.j += 1;
            if self.j == run.count {
                self.j = 0;
                self.r += 1;
                if self.r == self.runs.len() {
                    self.r = 0;
                    self.k += 1;
                }
            }
        }
        Some((start, len))
    }
}

/// Copies `bytes` bytes from `src_count` elements of `src_ty` at `src` into `dst_count`
/// elements of `dst_ty` at `dst`, both in map order: each source segment is copied once,
/// straight into the destination segments it falls on.
///
/// # Safety
///
/// The first `bytes` data bytes of both sides must be readable (source) and writable
/// (destination), and not overlap; neither side may hold fewer than `bytes` data bytes.
pub(crate) unsafe fn transfer(
    (src_ty, src_count, src): (&Compiled, usize, *const u8),
    (dst_ty, dst_count, dst): (&Compiled, usize, *mut u8),
    bytes: usize,
) {
    let (mut from, mut to) = (
        Cursor::new(src_ty, src_count),
        Cursor::new(dst_ty, dst_count),
    );
    let mut left = bytes;
    while left > 0 {
        let Some((s, len)) = from.take(left) else {
            return;
        };
        left -= len;
        let mut done = 0;
        while done < len {
            let Some((d, piece)) = to.take(len - done) else {
                return;
            };
            // SAFETY: both pieces are data bytes of their sides within the first `bytes`
            // (caller), of equal length.
            unsafe {
                std::ptr::copy_nonoverlapping(src.offset(s + done as isize), dst.offset(d), piece)
            };
            done += piece;
        }
    }
}

/// Copies `bytes` contiguous bytes from `src` into `dst_count` elements of `dst_ty` at `dst`,
/// in map order (a receive that may fill only part of its elements).
///
/// # Safety
///
/// `src` must be readable for `bytes` bytes; the first `bytes` data bytes of the destination
/// must be writable, not overlap the source, and number at least `bytes`.
pub(crate) unsafe fn scatter_bytes(
    src: *const u8,
    bytes: usize,
    (dst_ty, dst_count, dst): (&Compiled, usize, *mut u8),
) {
    if bytes == dst_count * dst_ty.size {
        // SAFETY: whole elements: exactly `scatter`'s contract.
        return unsafe { scatter(dst_ty, dst_count, src, dst) };
    }
    let mut to = Cursor::new(dst_ty, dst_count);
    let mut done = 0;
    while done < bytes {
        let Some((d, piece)) = to.take(bytes - done) else {
            return;
        };
        // SAFETY: the piece is among the first `bytes` destination data bytes, and the source
        // has `bytes` bytes (caller).
        unsafe { std::ptr::copy_nonoverlapping(src.add(done), dst.offset(d), piece) };
        done += piece;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{BasicType, TypeMap};

    /// The packed stream of `count` elements, byte by byte from the type map.
    fn naive(map: &TypeMap, count: usize, src: &[u8], origin: isize) -> Vec<u8> {
        let mut out = Vec::new();
        for k in 0..count as isize {
            for &(b, d) in map.entries() {
                let at = (origin + k * map.extent() + d) as usize;
                out.extend_from_slice(&src[at..at + b.size()]);
            }
        }
        out
    }

    /// Some types whose blocks are 4, 8, 12, 16, 24, 32 or 40 bytes long, single or repeated
    /// runs, contiguous or not, with odd numbers of blocks, and negative extents.
    fn types() -> Vec<(TypeMap, usize)> {
        let (f, i) = (
            TypeMap::basic(BasicType::F64),
            TypeMap::basic(BasicType::I32),
        );
        let pair = TypeMap::structure(&[(1, 0, &i), (1, 8, &f)]).unwrap();
        vec![
            (TypeMap::vector(37, 1, 2, &f).unwrap(), 1),
            (TypeMap::vector(9, 4, 8, &f).unwrap(), 3),
            (TypeMap::vector(5, 3, 4, &i).unwrap(), 4),
            (TypeMap::vector(4, 5, 7, &f).unwrap(), 2),
            (
                TypeMap::vector(3, 1, 8, &f).unwrap().resized(0, 8).unwrap(),
                11,
            ),
            (TypeMap::contiguous(7, &i).unwrap(), 5),
            (pair, 6),
            (TypeMap::vector(6, 2, -3, &i).unwrap(), 2),
            (TypeMap::vector(23, 1, 3, &i).unwrap(), 2),
            // negative extents: successive elements go down in memory
            (
                TypeMap::vector(3, 2, 3, &i)
                    .unwrap()
                    .resized(8, -40)
                    .unwrap(),
                3,
            ),
            (
                TypeMap::contiguous(2, &f).unwrap().resized(0, -24).unwrap(),
                4,
            ),
            (TypeMap::basic(BasicType::I32).resized(0, -4).unwrap(), 9),
        ]
    }

    #[repr(C, align(64))]
    struct Aligned([u8; 1024]);

    #[test]
    fn every_way_of_storing_packs_the_same_bytes_and_unpack_inverts_it() {
        let src: Vec<u8> = (0..4096).map(|x| (x * 7 % 251) as u8).collect();
        let origin = 512;
        for (map, count) in types() {
            let ty = Compiled::of_map(map.clone());
            let want = naive(&map, count, &src, origin);
            // 64 bytes of room on either side of the packed stream, which must stay untouched
            for shift in [0, 4, 8, 16] {
                let mut out = Aligned([0; 1024]);
                let dst = out.0[64 + shift..].as_mut_ptr();
                let base = src[origin as usize..].as_ptr();
                // SAFETY: the type's bytes lie in `src` around `origin` (checked by `naive`
                // above), the packed stream fits in `out` after `64 + shift`; each store is
                // used only where its alignment rule holds.
                unsafe {
                    gather_with::<Plain>(&ty, count, base, dst);
                    assert_eq!(&out.0[64 + shift..][..want.len()], &want[..], "{map}");
                    #[cfg(target_arch = "x86_64")]
                    let word = ty.block_align.min(1 << (dst as usize).trailing_zeros());
                    #[cfg(target_arch = "x86_64")]
                    for w in [4, 8, 16].into_iter().filter(|&w| w <= word) {
                        out.0.fill(0);
                        match w {
                            4 => gather_with::<Stream<4>>(&ty, count, base, dst),
                            8 => gather_with::<Stream<8>>(&ty, count, base, dst),
                            _ => gather_with::<Stream<16>>(&ty, count, base, dst),
                        }
                        assert_eq!(&out.0[64 + shift..][..want.len()], &want[..], "{map} {w}");
                        let outside = out.0[..64 + shift]
                            .iter()
                            .chain(&out.0[64 + shift + want.len()..]);
                        assert!(outside.into_iter().all(|&b| b == 0), "{map} {w}");
                    }
                }
                let mut back = vec![0u8; src.len()];
                // SAFETY: as above, with `back` the size of `src`.
                unsafe {
                    scatter(
                        &ty,
                        count,
                        want.as_ptr(),
                        back[origin as usize..].as_mut_ptr(),
                    )
                };
                assert_eq!(naive(&map, count, &back, origin), want, "{map}");
            }
        }
    }

    #[test]
    fn regular_elements_are_one_run() {
        let f = TypeMap::basic(BasicType::F64);
        let one = |map: TypeMap, count| Compiled::of_map(map).as_one_run(count);
        let column = TypeMap::vector(4, 1, 8, &f).unwrap().resized(0, 8).unwrap();
        // a resized column's elements interleave: no single run
        assert_eq!(one(column, 3), None);
        let v = TypeMap::vector(4, 1, 2, &f)
            .unwrap()
            .resized(0, 64)
            .unwrap();
        let run = one(v, 3).unwrap();
        assert_eq!((run.len, run.count, run.stride), (8, 12, 16));
        let run = one(
            TypeMap::vector(1, 3, 3, &f)
                .unwrap()
                .resized(0, 40)
                .unwrap(),
            5,
        );
        assert_eq!(run.map(|r| (r.len, r.count, r.stride)), Some((24, 5, 40)));
        assert_eq!(one(TypeMap::vector(4, 1, 2, &f).unwrap(), 2), None); // extent 56, not 64
    }
}
