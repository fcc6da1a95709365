//! How the copy engine writes a block: [`Plain`] copies, or — for packed outputs much larger
//! than the cache — [`Stream`]ing (non-temporal) stores that bypass it.
//!
//! A plain store to memory that is not in the cache first reads the line it lands in (a "read
//! for ownership"), so packing 16 MiB out of a 32 MiB array moves 64 MiB; non-temporal stores
//! write whole lines without reading them and leave the cache to the source (48 MiB). That is
//! what a memcpy does past its own threshold. Measured on the 2-core AMD EPYC (Zen 4) this was
//! developed on, packing `vector(2M, 1, 2, f64)` into 16 MiB: about 1.3x faster streamed than
//! with plain stores; for outputs of 4 MiB or less, which stay in the cache for whoever reads
//! them next, plain stores win, hence [`STREAM_MIN_BYTES`].
//!
//! Streaming stores are SSE2 instructions, part of every x86-64 CPU (no run-time detection);
//! elsewhere the engine always copies plainly.

/// Packed outputs at least this large are written with streaming stores (where available).
pub(super) const STREAM_MIN_BYTES: usize = 8 << 20;

/// A way of copying blocks of bytes.
pub(super) trait Store {
    /// Copies `len` bytes from `src` to `dst`.
    ///
    /// # Safety
    ///
    /// `src` readable and `dst` writable for `len` bytes, not overlapping; plus the
    /// implementation's own alignment rule.
    unsafe fn copy(src: *const u8, dst: *mut u8, len: usize);

    /// Copies `n` blocks of `L` bytes from `src + j * ss` to `dst + j * ds`.
    ///
    /// # Safety
    ///
    /// Every source block must be readable and every destination block writable, and no
    /// source block may overlap a destination block; plus the implementation's alignment rule
    /// for every block.
    #[inline(always)]
    unsafe fn blocks<const L: usize>(src: *const u8, ss: isize, dst: *mut u8, ds: isize, n: usize) {
        // SAFETY: the caller's guarantee.
        unsafe { each_block::<Self, L>(src, ss, dst, ds, n) }
    }

    /// Makes the stores done so far visible before any later store (a no-op for plain copies).
    fn finish() {}
}

/// [`Store::blocks`] one block at a time.
///
/// # Safety
///
/// As [`Store::blocks`].
#[inline(always)]
unsafe fn each_block<S: Store + ?Sized, const L: usize>(
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    ds: isize,
    n: usize,
) {
    for j in 0..n as isize {
        // SAFETY: the caller guarantees block j on both sides.
        unsafe { S::copy(src.offset(j * ss), dst.offset(j * ds), L) };
    }
}

/// Ordinary copies: `ptr::copy_nonoverlapping`, which the compiler turns into plain loads and
/// stores when `len` is a constant.
#[derive(Debug)]
pub(super) struct Plain;

impl Store for Plain {
    #[inline(always)]
    unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
        // SAFETY: the caller's guarantee.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
    }
}

/// Non-temporal copies in words of `W` bytes (4, 8 or 16): `len` must be a multiple of `W` and
/// `dst` `W`-aligned (unaligned loads are fine).
#[cfg(target_arch = "x86_64")]
#[derive(Debug)]
pub(super) struct Stream<const W: usize>;

/// Reads a `T` from a possibly unaligned address.
///
/// # Safety
///
/// `p` must be readable for `size_of::<T>()` bytes, which must be a valid `T`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn read<T: Copy>(p: *const u8) -> T {
    // SAFETY: the caller's guarantee.
    unsafe { p.cast::<T>().read_unaligned() }
}

#[cfg(target_arch = "x86_64")]
impl<const W: usize> Store for Stream<W> {
    #[inline(always)]
    unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
        use std::arch::x86_64::{
            __m128i, _mm_loadu_si128, _mm_stream_si128, _mm_stream_si32, _mm_stream_si64,
        };
        debug_assert!(len.is_multiple_of(W) && (dst as usize).is_multiple_of(W));
        for w in (0..len).step_by(W) {
            // SAFETY: word w lies in both blocks (`len` is a multiple of W, caller), the source
            // is read unaligned, and the destination is W-aligned as MOVNTDQ/MOVNTI need
            // (caller). SSE2, which these need, is part of x86-64.
            unsafe {
                let (s, d) = (src.add(w), dst.add(w));
                match W {
                    16 => _mm_stream_si128(d.cast(), _mm_loadu_si128(s.cast::<__m128i>())),
                    8 => _mm_stream_si64(d.cast(), read(s)),
                    4 => _mm_stream_si32(d.cast(), read(s)),
                    _ => unreachable!("streaming words are 4, 8 or 16 bytes"),
                }
            }
        }
    }

    /// Blocks of one word (4 or 8 bytes, a strided column of one basic type) going to a
    /// contiguous destination are streamed 16 bytes at a time, `16 / W` blocks per store:
    /// about 10% faster than one narrow streaming store per block.
    #[inline(always)]
    unsafe fn blocks<const L: usize>(src: *const u8, ss: isize, dst: *mut u8, ds: isize, n: usize) {
        use std::arch::x86_64::{_mm_set_epi32, _mm_set_epi64x, _mm_stream_si128};
        if L != W || W >= 16 || ds != W as isize {
            // SAFETY: the caller's guarantee.
            return unsafe { each_block::<Self, L>(src, ss, dst, ds, n) };
        }
        let per = 16 / W;
        // single words up to the first 16-byte boundary (dst is W-aligned: a whole number)
        let head = ((16 - dst as usize % 16) % 16 / W).min(n);
        let mut j = head;
        // SAFETY: blocks 0..head and the words of j..j + per are blocks the caller vouches for;
        // the destination words are contiguous from the 16-aligned `dst + head * W`, as
        // MOVNTDQ needs; the source words are read unaligned.
        unsafe {
            each_block::<Self, L>(src, ss, dst, ds, head);
            while j + per <= n {
                let s = |i: usize| src.offset((j + i) as isize * ss);
                let word = match W {
                    8 => _mm_set_epi64x(read::<i64>(s(1)), read::<i64>(s(0))),
                    4 => _mm_set_epi32(
                        read::<i32>(s(3)),
                        read::<i32>(s(2)),
                        read::<i32>(s(1)),
                        read::<i32>(s(0)),
                    ),
                    _ => unreachable!("narrow streaming words are 4 or 8 bytes"),
                };
                _mm_stream_si128(dst.add(j * W).cast(), word);
                j += per;
            }
            each_block::<Self, L>(src.offset(j as isize * ss), ss, dst.add(j * W), ds, n - j);
        }
    }

    fn finish() {
        // Streaming stores are weakly ordered: the fence orders them before every later store,
        // e.g. the release that hands the packed buffer to another thread.
        // SAFETY: SFENCE has no preconditions (SSE, part of x86-64).
        unsafe { std::arch::x86_64::_mm_sfence() }
    }
}
