//! Scratch buffers for collective algorithms, reused across calls on the same rank (thread).
//!
//! Fresh large allocations are expensive here: every page of a new buffer is a page fault, and
//! on the 2-core development machine three fresh 1 MiB buffers cost 2.5–7 ms, ten times the
//! message exchange itself. So algorithms take their temporary buffers from a small per-thread
//! pool, by element type, and give them back when done. Everything is safe code: a pooled
//! `Vec<T>` only ever holds valid `T`s.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};

/// Buffers larger than this are freed rather than kept (so a rank keeps at most
/// `KEEP_COUNT * KEEP_BYTES` per element type between calls).
const KEEP_BYTES: usize = 4 << 20;
/// At most this many buffers of one element type are kept: the most any algorithm holds at once.
const KEEP_COUNT: usize = 3;

thread_local! {
    static POOL: RefCell<HashMap<TypeId, Vec<Box<dyn Any>>>> = RefCell::new(HashMap::new());
}

/// A temporary buffer of `len` elements with arbitrary (valid) contents; returns to the pool on
/// drop.
#[derive(Debug)]
pub(super) struct Scratch<T: Copy + 'static> {
    buf: Vec<T>,
    len: usize,
}

impl<T: Copy + 'static> Scratch<T> {
    /// A buffer of `len` elements; `like` provides a value to fill new space with (it may be
    /// empty only if `len` is 0).
    pub(super) fn new(like: &[T], len: usize) -> Self {
        let mut buf: Vec<T> = POOL
            .with(|pool| {
                pool.borrow_mut()
                    .get_mut(&TypeId::of::<T>())
                    .and_then(Vec::pop)
            })
            .and_then(|b| b.downcast::<Vec<T>>().ok())
            .map(|b| *b)
            .unwrap_or_default();
        if buf.len() < len {
            buf.resize(len, like[0]);
        }
        Scratch { buf, len }
    }
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
        let buf = std::mem::take(&mut self.buf);
        if buf.capacity() == 0 || std::mem::size_of_val(buf.as_slice()) > KEEP_BYTES {
            return;
        }
        // `try_with`: during thread teardown the pool may already be gone; then just free.
        let _ = POOL.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            let kept = pool.entry(TypeId::of::<T>()).or_default();
            if kept.len() < KEEP_COUNT {
                kept.push(Box::new(buf));
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
