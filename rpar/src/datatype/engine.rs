//! The copy engine under pack, unpack and the non-contiguous sends: moving the bytes of
//! `count` elements of a committed type between memory laid out by the type and a contiguous
//! (packed) stream, or between two typed layouts, one copy per segment.
//!
//! Everything here works on raw pointers; the callers prove the bounds (with
//! `Compiled::check_buffer`) before calling. Blocks of common lengths get a copy loop of their
//! own so that the compiler emits plain loads and stores instead of `memcpy` calls.

use super::commit::{Compiled, Run};

/// Copies `n` blocks of `L` bytes from `src + j * ss` to `dst + j * ds`.
///
/// # Safety
///
/// Every source block must be readable and every destination block writable, and no source
/// block may overlap a destination block.
#[inline(always)]
unsafe fn blocks_of<const L: usize>(src: *const u8, ss: isize, dst: *mut u8, ds: isize, n: usize) {
    for j in 0..n as isize {
        // SAFETY: the caller guarantees block j on both sides.
        unsafe { std::ptr::copy_nonoverlapping(src.offset(j * ss), dst.offset(j * ds), L) };
    }
}

/// Copies `n` blocks of `len` bytes from `src + j * ss` to `dst + j * ds`.
///
/// # Safety
///
/// As [`blocks_of`].
#[inline]
unsafe fn blocks(src: *const u8, ss: isize, dst: *mut u8, ds: isize, len: usize, n: usize) {
    // SAFETY: (all arms) the caller's guarantee, passed on unchanged.
    unsafe {
        match len {
            1 => blocks_of::<1>(src, ss, dst, ds, n),
            2 => blocks_of::<2>(src, ss, dst, ds, n),
            4 => blocks_of::<4>(src, ss, dst, ds, n),
            8 => blocks_of::<8>(src, ss, dst, ds, n),
            16 => blocks_of::<16>(src, ss, dst, ds, n),
            24 => blocks_of::<24>(src, ss, dst, ds, n),
            32 => blocks_of::<32>(src, ss, dst, ds, n),
            64 => blocks_of::<64>(src, ss, dst, ds, n),
            _ => {
                for j in 0..n as isize {
                    std::ptr::copy_nonoverlapping(src.offset(j * ss), dst.offset(j * ds), len);
                }
            }
        }
    }
}

/// Packs `count` elements laid out by `ty` from `base` into the contiguous `out`
/// (`count * ty.size` bytes).
///
/// # Safety
///
/// Every byte the type map names for the `count` elements, relative to `base`, must be
/// readable; `out` must be writable for `count * ty.size` bytes and not overlap them.
pub(crate) unsafe fn gather(ty: &Compiled, count: usize, base: *const u8, out: *mut u8) {
    let mut at = 0usize;
    for k in 0..count as isize {
        for r in &ty.runs {
            // SAFETY: the run's blocks are bytes of element k (caller); the packed stream has
            // room for them at `at` (the runs hold exactly `size` bytes per element).
            unsafe {
                let src = base.offset(k * ty.extent + r.disp);
                blocks(src, r.stride, out.add(at), r.len as isize, r.len, r.count);
            }
            at += r.len * r.count;
        }
    }
}

/// Unpacks the contiguous `packed` (`count * ty.size` bytes) into `count` elements laid out by
/// `ty` at `base`.
///
/// # Safety
///
/// Every byte the type map names for the `count` elements, relative to `base`, must be
/// writable; `packed` must be readable for `count * ty.size` bytes and not overlap them.
pub(crate) unsafe fn scatter(ty: &Compiled, count: usize, packed: *const u8, base: *mut u8) {
    let mut at = 0usize;
    for k in 0..count as isize {
        for r in &ty.runs {
            // SAFETY: as in `gather`, with the roles of the two sides exchanged.
            unsafe {
                let dst = base.offset(k * ty.extent + r.disp);
                blocks(
                    packed.add(at),
                    r.len as isize,
                    dst,
                    r.stride,
                    r.len,
                    r.count,
                );
            }
            at += r.len * r.count;
        }
    }
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
