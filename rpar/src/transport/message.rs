//! The payload of a message: its element type and where its bytes are (inline, in an owned
//! buffer that moves to the receiver, still in the sender's memory for a rendezvous, or — for a
//! message sent with a committed datatype — packed, or in the sender's memory laid out by the
//! sender's type).

use super::endpoint::Header;
use super::rendezvous::{PendingSend, Ticket};
use super::RemotePayload;
use crate::datatype::{engine, CommittedType, Compiled, Datatype};
use std::any::TypeId;
use std::mem::{ManuallyDrop, MaybeUninit};

/// Payloads up to this many bytes travel inside the envelope itself (no allocation). 32: the
/// size of the largest other payload (an owned buffer), so inline data adds nothing to an
/// envelope, which every message moves several times (see `an_envelope_stays_small`).
pub(crate) const INLINE_BYTES: usize = 32;

/// What rpar knows of an element type: one static record per type, so that an envelope
/// carries a single pointer to it.
#[derive(Debug)]
pub(crate) struct ElemInfo {
    pub(crate) id: TypeId,
    pub(crate) size: usize,
    pub(crate) align: usize,
    /// The Rust name, for error messages.
    pub(crate) name: fn() -> &'static str,
    /// Whether the type map is gap-free in memory order (computed at compile time, see
    /// [`TypeLayout::is_dense`](crate::TypeLayout::is_dense)): a value's bytes are its packed
    /// bytes.
    pub(crate) dense: bool,
    /// The compiled type map (compiled once per process, see [`Compiled::of_type`]).
    pub(crate) compiled: fn() -> &'static Compiled,
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
        dense: const { T::LAYOUT.is_dense() },
        compiled: Compiled::of_type::<T>,
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

    /// Whether `count` values of this type, as they lie in memory, are `other_count` values of
    /// `other` as they lie in memory (a plain message received as another type, a rank's post
    /// read as another rank's type): both gap-free in memory order, with the same signature.
    pub(crate) fn reads_as(self, count: usize, other: ElemType, other_count: usize) -> bool {
        self.dense
            && other.dense
            && (self.compiled)().same_signature(count, (other.compiled)(), other_count)
    }
}

impl std::ops::Deref for ElemType {
    type Target = ElemInfo;
    #[inline]
    fn deref(&self) -> &ElemInfo {
        self.0
    }
}

/// Marks the [`ElemType`] of messages sent with a committed datatype; no Rust value has it.
struct TypedMarker;

/// The element record of typed messages: their signature and size travel in [`TypedData`]
/// (`Message::bytes` asks it), so this record only names them.
static TYPED_INFO: ElemInfo = ElemInfo {
    id: TypeId::of::<TypedMarker>(),
    size: 1,
    align: 1,
    name: || "a committed datatype",
    dense: false,
    compiled: Compiled::of_type::<[u8; 0]>, // no data: theirs is in `TypedData`
};

impl ElemType {
    /// The element type of a message sent with a committed datatype.
    pub(crate) fn typed() -> Self {
        ElemType(&TYPED_INFO)
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
        match &self.data {
            Data::Typed(t) => t.ty.pack_size(t.count),
            _ => self.elem.size * self.count,
        }
    }
}

/// Where the bytes of a message are.
#[derive(Debug)]
pub(crate) enum Data {
    /// Small payloads, copied into the envelope.
    Inline(InlineBytes),
    /// A `Vec` whose ownership moves to the receiver.
    Owned(ErasedVec),
    /// Still in the sender's buffer: the receiver copies it out once (large borrowed sends).
    Borrowed(Ticket),
    /// No bytes: a rendezvous whose sender withdrew because the run is aborting.
    Empty,
    /// Sent with a committed datatype (`Comm::send_typed`); boxed, so that the common variants
    /// set the size of every envelope.
    Typed(Box<TypedData>),
}

/// The data of a message sent with a committed datatype: the sender's type and count, and
/// where the bytes are.
#[derive(Debug)]
pub(crate) struct TypedData {
    pub(crate) ty: CommittedType,
    pub(crate) count: usize,
    pub(crate) source: TypedSource,
    /// A synchronous send's from another process (MPI transport): the sender's process and
    /// the send's number, to acknowledge when a receive matches the message (see
    /// `Endpoint::acknowledge`).
    pub(crate) ack: std::cell::Cell<Option<(usize, u32)>>,
}

/// Where the bytes of a typed message are.
#[derive(Debug)]
pub(crate) enum TypedSource {
    /// Small messages: packed by the sender (MPI's native format).
    Packed(Vec<u8>),
    /// Large messages: still in the sender's buffer, which the ticket holds; the receiver
    /// copies segment by segment from it into its own buffer (one copy per segment).
    Borrowed(Ticket),
    /// A rendezvous whose sender withdrew because the run is aborting: no bytes.
    Withdrawn,
    /// Large messages from another process (MPI transport): the bytes are still in MPI, to be
    /// received straight into the receive buffer.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))] // no MPI link, no remote payload
    Remote(RemotePayload),
}

impl TypedData {
    /// Packs a rendezvous payload into an owned buffer, releasing its sender; if the sender
    /// withdrew it (the run is aborting), it becomes [`TypedSource::Withdrawn`].
    ///
    /// A payload from another process still in MPI is received into an owned buffer.
    pub(crate) fn release(&mut self) {
        let ticket = match std::mem::replace(&mut self.source, TypedSource::Withdrawn) {
            TypedSource::Borrowed(ticket) => ticket,
            TypedSource::Remote(payload) => {
                self.source = TypedSource::Packed(payload.receive());
                return;
            }
            // already packed or withdrawn: nothing to do (and nothing to lose)
            source => {
                self.source = source;
                return;
            }
        };
        let mut out = vec![0u8; self.ty.pack_size(self.count)];
        let (ty, count, dst) = (&*self.ty.inner, self.count, out.as_mut_ptr());
        // SAFETY: the sender checked, before publishing, that every byte of `count` elements
        // of its type at the published pointer lies in its buffer, which it keeps alive while
        // the ticket is being read; `out` has room for the packed bytes. Gathering does not
        // panic.
        if unsafe { ticket.read_with(|src| engine::gather(ty, count, src, dst)) } {
            self.source = TypedSource::Packed(out);
        }
    }

    /// Checks that the packed bytes bound for a `bool` or `char` are valid values of it
    /// ([`Error::InvalidValue`](crate::Error::InvalidValue) otherwise). Only bytes from another
    /// process are checked (a payload still in MPI is received first, if its type has such
    /// values): a rendezvous reads the sender's own values, which are valid.
    pub(crate) fn check_values(&mut self, call: &'static str) -> crate::Result<()> {
        if matches!(self.source, TypedSource::Remote(_)) && !self.ty.inner.validated.is_empty() {
            self.release();
        }
        match &self.source {
            TypedSource::Packed(v) => self.ty.inner.validate(call, v, self.count),
            _ => Ok(()),
        }
    }

    /// Copies the whole message, packed, to `dst`. False if the sender withdrew it.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `ty.pack_size(count)` bytes.
    pub(crate) unsafe fn copy_packed_to(self, dst: *mut u8) -> bool {
        let (ty, count) = (&*self.ty.inner, self.count);
        match self.source {
            // SAFETY: the packed buffer holds exactly the message's bytes; dst is valid.
            TypedSource::Packed(v) => unsafe {
                std::ptr::copy_nonoverlapping(v.as_ptr(), dst, v.len());
                true
            },
            // SAFETY: as in `release`, writing to the caller's `dst`.
            TypedSource::Borrowed(ticket) => unsafe {
                ticket.read_with(|src| engine::gather(ty, count, src, dst))
            },
            TypedSource::Withdrawn => false,
            // SAFETY: the payload is the message's packed bytes; dst is valid for them.
            TypedSource::Remote(payload) => unsafe {
                payload.receive_into(dst);
                true
            },
        }
    }
}

impl TypedData {
    /// Unpacks the message into `count` elements laid out by `recv` at `dst` (a plain receive of
    /// a type not laid out as its packed form, padded or with fields Rust reordered: the bytes
    /// go where its type map says), one copy per segment: a rendezvous straight from the
    /// sender's buffer, with no pack buffer between. False if the sender withdrew the data.
    ///
    /// # Safety
    ///
    /// Every byte `recv` names for `count` elements from `dst` must be writable, and
    /// `count * recv.size` must be the message's packed size.
    pub(crate) unsafe fn unpack_to(self, recv: &Compiled, count: usize, dst: *mut u8) -> bool {
        let (sent, sent_count) = (&*self.ty.inner, self.count);
        let bytes = recv.size * count; // the message's packed size (caller)
        match self.source {
            // SAFETY: the packed buffer holds count * recv.size bytes (caller); the caller
            // guarantees the destination bytes.
            TypedSource::Packed(v) => unsafe {
                engine::scatter(recv, count, v.as_ptr(), dst);
                true
            },
            // SAFETY: the sender checked, before publishing, that every byte of its elements
            // lies in its buffer, which it keeps alive while the ticket is read; both sides
            // hold `bytes` data bytes (caller), and do not overlap (different buffers).
            TypedSource::Borrowed(ticket) => unsafe {
                ticket.read_with(|src| {
                    engine::transfer((sent, sent_count, src), (recv, count, dst), bytes)
                })
            },
            TypedSource::Withdrawn => false,
            // SAFETY: the payload is the message's `bytes` packed bytes; as for a packed buffer.
            TypedSource::Remote(payload) => unsafe {
                engine::scatter(recv, count, payload.receive().as_ptr(), dst);
                true
            },
        }
    }
}

/// The bytes of an inline payload, 8-byte aligned so that an envelope moves in whole words.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(8))]
pub(crate) struct InlineBytes([MaybeUninit<u8>; INLINE_BYTES]);

impl InlineBytes {
    /// The first byte.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.0.as_ptr().cast()
    }
}

impl Data {
    /// Whether the payload is still in the sender's buffer (a plain or typed rendezvous, or a
    /// large message from another process still in MPI): its sender waits until it is copied.
    #[inline]
    pub(crate) fn is_borrowed(&self) -> bool {
        match self {
            Data::Borrowed(_) => true,
            Data::Typed(t) => matches!(t.source, TypedSource::Borrowed(_) | TypedSource::Remote(_)),
            _ => false,
        }
    }

    /// Whether the payload is a large message from another process still in MPI.
    #[inline]
    pub(crate) fn is_remote(&self) -> bool {
        matches!(self, Data::Typed(t) if matches!(t.source, TypedSource::Remote(_)))
    }

    /// Whether the payload was a rendezvous its sender withdrew (a cancelled send): no receive
    /// may take the message.
    #[inline]
    pub(crate) fn is_withdrawn(&self) -> bool {
        match self {
            Data::Borrowed(ticket) => ticket.withdrawn(),
            Data::Typed(t) => {
                matches!(&t.source, TypedSource::Borrowed(ticket) if ticket.withdrawn())
            }
            _ => false,
        }
    }

    /// The sender's side of a rendezvous payload (a plain or typed one still in the sender's
    /// buffer), so that the sender can withdraw it once it has handed the message over.
    #[inline]
    pub(crate) fn rendezvous(&self) -> Option<PendingSend> {
        match self {
            Data::Borrowed(ticket) => Some(ticket.sender()),
            Data::Typed(t) => match &t.source {
                TypedSource::Borrowed(ticket) => Some(ticket.sender()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Copies `src` into an inline payload. `src` must fit in [`INLINE_BYTES`].
    #[inline]
    pub(crate) fn inline<T: Datatype>(src: &[T]) -> Data {
        let bytes = std::mem::size_of_val(src);
        assert!(bytes <= INLINE_BYTES, "inline payload of {bytes} bytes");
        let mut buf = InlineBytes([MaybeUninit::<u8>::uninit(); INLINE_BYTES]);
        // SAFETY: `src` is `bytes` readable bytes; `buf` has room for them (asserted above);
        // copying into `MaybeUninit<u8>` is valid even for padding bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.as_ptr().cast::<MaybeUninit<u8>>(),
                buf.0.as_mut_ptr(),
                bytes,
            );
        }
        Data::Inline(buf)
    }
}

/// Bytes of inline data that a message may have and still travel in the compact form.
const SMALL_INLINE: usize = 24;

/// A point-to-point message (no collective call) whose data is inline (up to [`SMALL_INLINE`]
/// bytes) or an owned buffer, in the compact form that travels in the first cache line of a
/// lane slot (see `lane.rs`): 56 bytes, where an envelope takes 120.
#[derive(Debug)]
pub(crate) struct SmallMessage {
    context: u32,
    source: u32,
    tag: i32,
    flow: u32,
    data: SmallData,
}

#[derive(Debug)]
enum SmallData {
    Inline {
        elem: ElemType,
        count: u32,
        bytes: [MaybeUninit<u8>; SMALL_INLINE],
    },
    /// The buffer knows its element type and length, which are the message's.
    Owned(ErasedVec),
}

impl SmallMessage {
    /// The compact form of a message, if it has one; else the message back.
    #[inline]
    pub(crate) fn pack(header: Header, m: Message) -> Result<SmallMessage, (Header, Message)> {
        if header.call.is_some() {
            return Err((header, m));
        }
        let data = match m.data {
            Data::Inline(ref inline) if m.elem.size * m.count <= SMALL_INLINE => {
                let Ok(count) = u32::try_from(m.count) else {
                    return Err((header, m));
                };
                let mut bytes = [MaybeUninit::uninit(); SMALL_INLINE];
                bytes.copy_from_slice(&inline.0[..SMALL_INLINE]);
                SmallData::Inline {
                    elem: m.elem,
                    count,
                    bytes,
                }
            }
            Data::Owned(ref v) if v.len == m.count && std::ptr::eq(v.elem.0, m.elem.0) => {
                let Data::Owned(v) = m.data else {
                    unreachable!("matched just above")
                };
                SmallData::Owned(v)
            }
            _ => return Err((header, m)),
        };
        Ok(SmallMessage {
            context: header.context,
            source: header.source,
            tag: header.tag,
            flow: header.flow,
            data,
        })
    }

    /// The message again.
    #[inline]
    pub(crate) fn unpack(self) -> (Header, Message) {
        let header = Header {
            context: self.context,
            source: self.source,
            tag: self.tag,
            flow: self.flow,
            call: None,
        };
        let message = match self.data {
            SmallData::Inline { elem, count, bytes } => {
                let mut inline = [MaybeUninit::uninit(); INLINE_BYTES];
                inline[..SMALL_INLINE].copy_from_slice(&bytes);
                Message {
                    elem,
                    count: count as usize,
                    data: Data::Inline(InlineBytes(inline)),
                }
            }
            SmallData::Owned(v) => Message {
                elem: v.elem,
                count: v.len,
                data: Data::Owned(v),
            },
        };
        (header, message)
    }
}

/// A `Vec<T>` with its element type erased, so that it can travel in an envelope and be turned
/// back into a `Vec<T>` (no copy) by a receiver of the same `T`.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct ErasedVec {
    ptr: *mut u8,
    len: usize,
    cap: usize,
    elem: ElemType,
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
            elem: ElemType::of::<T>(),
        }
    }

    /// A fresh buffer of `count` elements of `elem`, filled by `fill` with exactly
    /// `count * elem.size` bytes. `fill` runs even for none (with a dangling, aligned pointer,
    /// valid for writes of zero bytes): it may do more than copy, such as release the sender
    /// of a rendezvous.
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
            p
        };
        fill(ptr);
        ErasedVec {
            ptr,
            len: count,
            cap: count,
            elem,
        }
    }

    /// The `Vec<T>` back, if `T` is the type it was made from.
    pub(crate) fn into_vec<T: Datatype>(self) -> Result<Vec<T>, ErasedVec> {
        if self.elem.id != TypeId::of::<T>() {
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
        let bytes = self.cap * self.elem.size;
        if bytes == 0 {
            return;
        }
        // SAFETY: the allocation was made by `Vec<T>` with exactly this size and alignment, and
        // `T: Copy` has no destructor, so freeing the memory is all that dropping the Vec does.
        unsafe {
            let layout = std::alloc::Layout::from_size_align_unchecked(bytes, self.elem.align);
            std::alloc::dealloc(self.ptr, layout);
        }
    }
}
