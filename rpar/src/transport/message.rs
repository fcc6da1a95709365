//! The payload of a message: its element type and where its bytes are (inline, in an owned
//! buffer that moves to the receiver, or still in the sender's memory for a rendezvous).

use super::rendezvous::Ticket;
use crate::datatype::{Datatype, TypeMap};
use std::any::TypeId;
use std::mem::{ManuallyDrop, MaybeUninit};

/// Payloads up to this many bytes travel inside the envelope itself (no allocation).
pub(crate) const INLINE_BYTES: usize = 64;

/// What rpar knows of an element type: one static record per type, so that an envelope
/// carries a single pointer to it.
#[derive(Debug)]
pub(crate) struct ElemInfo {
    pub(crate) id: TypeId,
    pub(crate) size: usize,
    pub(crate) align: usize,
    /// The Rust name, for error messages.
    pub(crate) name: fn() -> &'static str,
    pub(crate) map: fn() -> TypeMap,
}

trait HasElemInfo {
    const INFO: &'static ElemInfo;
}

impl<T: Datatype> HasElemInfo for T {
    const INFO: &'static ElemInfo = &ElemInfo {
        id: TypeId::of::<T>(),
        size: std::mem::size_of::<T>(),
        align: std::mem::align_of::<T>(),
        name: std::any::type_name::<T>,
        map: T::type_map,
    };
}

/// The element type of a message: enough to check a receive against it and to describe it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ElemType(&'static ElemInfo);

impl ElemType {
    #[inline]
    pub(crate) fn of<T: Datatype>() -> Self {
        ElemType(<T as HasElemInfo>::INFO)
    }
}

impl std::ops::Deref for ElemType {
    type Target = ElemInfo;
    #[inline]
    fn deref(&self) -> &ElemInfo {
        self.0
    }
}

/// A message's data, typed by `elem`, `count` elements long.
#[derive(Debug)]
pub(crate) struct Message {
    pub(crate) elem: ElemType,
    pub(crate) count: usize,
    pub(crate) data: Data,
}

impl Message {
    /// Bytes of data in the message.
    pub(crate) fn bytes(&self) -> usize {
        self.elem.size * self.count
    }
}

/// Where the bytes of a message are.
#[derive(Debug)]
pub(crate) enum Data {
    /// Small payloads, copied into the envelope.
    Inline([MaybeUninit<u8>; INLINE_BYTES]),
    /// A `Vec` whose ownership moves to the receiver.
    Owned(ErasedVec),
    /// Still in the sender's buffer: the receiver copies it out once (large borrowed sends).
    Borrowed(Ticket),
    /// No bytes: a rendezvous whose sender withdrew because the run is aborting.
    Empty,
}

impl Data {
    /// Copies `src` into an inline payload. `src` must fit in [`INLINE_BYTES`].
    pub(crate) fn inline<T: Datatype>(src: &[T]) -> Data {
        let bytes = std::mem::size_of_val(src);
        assert!(bytes <= INLINE_BYTES, "inline payload of {bytes} bytes");
        let mut buf = [MaybeUninit::<u8>::uninit(); INLINE_BYTES];
        // SAFETY: `src` is `bytes` readable bytes; `buf` has room for them (asserted above);
        // copying into `MaybeUninit<u8>` is valid even for padding bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.as_ptr().cast::<MaybeUninit<u8>>(),
                buf.as_mut_ptr(),
                bytes,
            );
        }
        Data::Inline(buf)
    }
}

/// A `Vec<T>` with its element type erased, so that it can travel in an envelope and be turned
/// back into a `Vec<T>` (no copy) by a receiver of the same `T`.
#[derive(Debug)]
pub(crate) struct ErasedVec {
    ptr: *mut u8,
    len: usize,
    cap: usize,
    elem_id: TypeId,
    elem_size: usize,
    elem_align: usize,
}

// SAFETY: an ErasedVec owns the allocation of a `Vec<T>` with `T: Datatype`, and `Datatype`
// requires `Send`, so moving it to another thread is moving a `Vec<T>`.
unsafe impl Send for ErasedVec {}

impl ErasedVec {
    pub(crate) fn new<T: Datatype>(v: Vec<T>) -> Self {
        let mut v = ManuallyDrop::new(v);
        ErasedVec {
            ptr: v.as_mut_ptr().cast(),
            len: v.len(),
            cap: v.capacity(),
            elem_id: TypeId::of::<T>(),
            elem_size: std::mem::size_of::<T>(),
            elem_align: std::mem::align_of::<T>(),
        }
    }

    /// A fresh buffer of `count` elements of `elem`, filled by `fill` with exactly
    /// `count * elem.size` bytes.
    pub(crate) fn filled_with(elem: ElemType, count: usize, fill: impl FnOnce(*mut u8)) -> Self {
        let bytes = count * elem.size;
        let ptr = if bytes == 0 {
            elem.align as *mut u8 // dangling but aligned, as Vec uses
        } else {
            let layout = std::alloc::Layout::from_size_align(bytes, elem.align)
                .expect("a layout that a Vec of this type already had");
            // SAFETY: layout has non-zero size.
            let p = unsafe { std::alloc::alloc(layout) };
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            fill(p);
            p
        };
        ErasedVec {
            ptr,
            len: count,
            cap: count,
            elem_id: elem.id,
            elem_size: elem.size,
            elem_align: elem.align,
        }
    }

    /// The `Vec<T>` back, if `T` is the type it was made from.
    pub(crate) fn into_vec<T: Datatype>(self) -> Result<Vec<T>, ErasedVec> {
        if self.elem_id != TypeId::of::<T>() {
            return Err(self);
        }
        let this = ManuallyDrop::new(self);
        // SAFETY: ptr/len/cap came from a `Vec<T>` of this very `T` (TypeId checked above) and
        // ownership is transferred back exactly once (`this` is not dropped).
        Ok(unsafe { Vec::from_raw_parts(this.ptr.cast::<T>(), this.len, this.cap) })
    }

    /// The initialised bytes of the vector.
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr
    }
}

impl Drop for ErasedVec {
    fn drop(&mut self) {
        let bytes = self.cap * self.elem_size;
        if bytes == 0 {
            return;
        }
        // SAFETY: the allocation was made by `Vec<T>` with exactly this size and alignment, and
        // `T: Copy` has no destructor, so freeing the memory is all that dropping the Vec does.
        unsafe {
            let layout = std::alloc::Layout::from_size_align_unchecked(bytes, self.elem_align);
            std::alloc::dealloc(self.ptr, layout);
        }
    }
}
