//! Scratch buffers for collective algorithms, reused across calls on the same rank (thread).
//!
//! Fresh large allocations are expensive here: every page of a new buffer is a page fault, and
//! on the 2-core development machine three fresh 1 MiB buffers cost 2.5–7 ms, ten times the
//! message exchange itself. So algorithms take their temporary buffers from a small per-thread
//! pool, by element type, and give them back when done. Everything is safe code but the drop's
//! one move out of the buffer's field: a pooled `Vec<T>` only ever holds valid `T`s.
//!
//! Small calls take a buffer too (an 8-byte allreduce's partner value), so taking and giving
//! back costs no allocation and no hashing: a buffer stays in the box it was first put in (the
//! pool's `Box<dyn Any>` and the `Scratch`'s `Box<Vec<T>>` are that one box), and the pool is a
//! short list of the element types a rank used, searched in turn (a handful at most).

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

/// Buffers larger than this are freed rather than kept (so a rank keeps at most
/// `KEEP_COUNT * KEEP_BYTES` per element type between calls).
const KEEP_BYTES: usize = 4 << 20;
/// At most this many buffers of one element type are kept: the most any algorithm holds at once.
const KEEP_COUNT: usize = 3;

/// A kept buffer, boxed: the very box that goes into the pool as a `Box<dyn Any>` and comes back
/// out of it, so that neither way allocates (the extra allocation clippy warns of is made once,
/// when the buffer is first made).
#[allow(clippy::box_collection)]
type Boxed<T> = Box<Vec<T>>;

/// Each element type's kept buffers (each a [`Boxed`] of that type).
type Pool = Vec<(TypeId, Vec<Box<dyn Any>>)>;

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Vec::new()) };
}

/// A temporary buffer of `len` elements with arbitrary (valid) contents; returns to the pool on
/// drop.
#[derive(Debug)]
pub(super) struct Scratch<T: Copy + 'static> {
    /// Taken out only by `drop`.
    buf: ManuallyDrop<Boxed<T>>,
    len: usize,
}

impl<T: Copy + 'static> Scratch<T> {
    /// A buffer of `len` elements; `like` provides a value to fill new space with (it may be
    /// empty only if `len` is 0).
    pub(super) fn new(like: &[T], len: usize) -> Self {
        let mut buf = kept::<T>().unwrap_or_default();
        if buf.len() < len {
            buf.resize(len, like[0]);
        }
        Scratch {
            buf: ManuallyDrop::new(buf),
            len,
        }
    }
}

/// A buffer of `T` from this thread's pool, if it keeps one.
fn kept<T: 'static>() -> Option<Boxed<T>> {
    let kept = POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        let (_, kept) = pool.iter_mut().find(|(id, _)| *id == TypeId::of::<T>())?;
        kept.pop()
    })?;
    kept.downcast::<Vec<T>>().ok()
}

impl<T: Copy + 'static> Deref for Scratch<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.buf[..self.len]
    }
}

impl<T: Copy + 'static> DerefMut for Scratch<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.buf[..self.len]
    }
}

impl<T: Copy + 'static> Drop for Scratch<T> {
    fn drop(&mut self) {
        // SAFETY: `buf` is taken once, here, and `self` is not used after `drop`.
        let buf = unsafe { ManuallyDrop::take(&mut self.buf) };
        if buf.capacity() == 0 || std::mem::size_of_val(buf.as_slice()) > KEEP_BYTES {
            return;
        }
        // `try_with`: during thread teardown the pool may already be gone; then just free.
        let _ = POOL.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            let at = match pool.iter().position(|(id, _)| *id == TypeId::of::<T>()) {
                Some(at) => at,
                None => {
                    pool.push((TypeId::of::<T>(), Vec::with_capacity(KEEP_COUNT)));
                    pool.len() - 1
                }
            };
            let kept = &mut pool[at].1;
            if kept.len() < KEEP_COUNT {
                kept.push(buf);
            }
        });
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_reused_and_sized() {
        let first = Scratch::new(&[7u32], 1000);
        assert_eq!(first.len(), 1000);
        let ptr = first.as_ptr();
        drop(first);
        let again = Scratch::new(&[0u32], 10);
        assert_eq!((again.len(), again.as_ptr()), (10, ptr));
        let other = Scratch::new(&[0u32], 5); // the pool is empty again: a new buffer
        assert_ne!(other.as_ptr(), ptr);
        let empty: Scratch<u8> = Scratch::new(&[], 0);
        assert!(empty.is_empty());
    }
}
