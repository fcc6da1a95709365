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

    /// Makes the stores done so far visible before any later store (a no-op for plain copies).
    fn finish() {}
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
                    8 => _mm_stream_si64(d.cast(), s.cast::<i64>().read_unaligned()),
                    4 => _mm_stream_si32(d.cast(), s.cast::<i32>().read_unaligned()),
                    _ => unreachable!("streaming words are 4, 8 or 16 bytes"),
                }
            }
        }
    }

    fn finish() {
        // Streaming stores are weakly ordered: the fence orders them before every later store,
        // e.g. the release that hands the packed buffer to another thread.
        // SAFETY: SFENCE has no preconditions (SSE, part of x86-64).
        unsafe { std::arch::x86_64::_mm_sfence() }
    }
}
