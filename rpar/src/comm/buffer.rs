//! What can be sent and received: a single value, a slice, an array or a `Vec` of `Datatype`s
//! ([`Buffer`], [`BufferMut`]), and the forms point-to-point calls take ([`SendBuf`],
//! [`RecvBuf`]: those, an owned `Vec`, a [`Typed`] view).

use super::{Comm, Request, Status};
use crate::datatype::Datatype;
use crate::{Result, Typed};

/// Something whose elements can be sent: a single `T: Datatype`, a `[T]`, or a `Vec<T>` (MPI's
/// `buf, count, datatype` triple in one argument: the count is the length, the datatype `T`'s).
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         world.send(&7u32, 1, 0)?;              // one value
///         world.send(&[1.0f64, 2.0][..], 1, 1)?; // a slice
///     } else {
///         let (v, _) = world.recv::<u32>(0, 0)?;
///         let (s, _) = world.recv::<f64>(0, 1)?;
///         assert_eq!((v, s), (vec![7], vec![1.0, 2.0]));
///     }
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub trait Buffer {
    /// The element type.
    type Elem: Datatype;
    /// A result of the same shape, owned: `T` for a single value, `Vec<T>` for a slice or `Vec`
    /// (what `allreduce(&x, Sum)` returns for an `x` of this type).
    type Owned;
    /// The elements, as a slice.
    fn as_elems(&self) -> &[Self::Elem];
    /// Builds the owned form from exactly `self.as_elems().len()` elements.
    fn to_owned_shape(elems: Vec<Self::Elem>) -> Self::Owned;
}

/// Something whose elements can be received into (a value, a slice, a `Vec` of fixed length):
/// MPI's receive `buf, count, datatype`, with the count the length. A `Vec` does not grow: to
/// receive however many elements come, use [`Comm::recv`](crate::Comm::recv). An array `[T; N]`
/// is one element of type `[T; N]`; pass `&mut a[..]` for `N` elements of `T`.
///
/// ```
/// rpar::run(2, |world| {
///     if world.rank() == 0 {
///         world.send(&[1u16, 2, 3][..], 1, 0)?;
///         world.send(&9u16, 1, 1)?;
///         return Ok(());
///     }
///     let mut v = vec![0u16; 4]; // room for 4: the message may be shorter
///     let st = world.recv_into(&mut v, 0, 0)?;
///     assert_eq!((st.count, &v[..]), (3, &[1, 2, 3, 0][..]));
///     let mut x = 0u16; // a single value
///     world.recv_into(&mut x, 0, 1)?;
///     assert_eq!(x, 9);
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub trait BufferMut: Buffer {
    /// The elements, as a mutable slice.
    fn as_elems_mut(&mut self) -> &mut [Self::Elem];
}

impl<T: Datatype> Buffer for T {
    type Elem = T;
    type Owned = T;
    fn as_elems(&self) -> &[T] {
        std::slice::from_ref(self)
    }
    fn to_owned_shape(elems: Vec<T>) -> T {
        elems[0]
    }
}

impl<T: Datatype> BufferMut for T {
    fn as_elems_mut(&mut self) -> &mut [T] {
        std::slice::from_mut(self)
    }
}

impl<T: Datatype> Buffer for [T] {
    type Elem = T;
    type Owned = Vec<T>;
    fn as_elems(&self) -> &[T] {
        self
    }
    fn to_owned_shape(elems: Vec<T>) -> Vec<T> {
        elems
    }
}

impl<T: Datatype> BufferMut for [T] {
    fn as_elems_mut(&mut self) -> &mut [T] {
        self
    }
}

impl<T: Datatype> Buffer for Vec<T> {
    type Elem = T;
    type Owned = Vec<T>;
    fn as_elems(&self) -> &[T] {
        self
    }
    fn to_owned_shape(elems: Vec<T>) -> Vec<T> {
        elems
    }
}

impl<T: Datatype> BufferMut for Vec<T> {
    fn as_elems_mut(&mut self) -> &mut [T] {
        self
    }
}

pub(crate) mod sealed {
    /// Only rpar's buffer forms.
    pub trait Sealed {}
    impl<B: ?Sized> Sealed for &B {}
    impl<B: ?Sized> Sealed for &mut B {}
    impl<T> Sealed for Vec<T> {}
    impl<B> Sealed for crate::Typed<'_, B> {}
}

/// What [`Comm::send`] and [`Comm::isend`] take: `&x` (a value, a slice, a `Vec`: copied, or
/// for a large blocking send handed over from `x` itself), an owned `Vec<T>` (moved, no copy),
/// or a [`Typed`] view of a derived datatype. Sealed.
pub trait SendBuf: sealed::Sealed {
    #[doc(hidden)]
    fn send(self, comm: &Comm, dest: usize, tag: i32) -> Result<()>;
    #[doc(hidden)]
    fn isend(self, comm: &Comm, dest: usize, tag: i32) -> Result<Request<'static>>;
}

impl<B: Buffer + ?Sized> SendBuf for &B {
    #[inline]
    fn send(self, comm: &Comm, dest: usize, tag: i32) -> Result<()> {
        comm.send_borrowed(self.as_elems(), dest, tag)
    }
    fn isend(self, comm: &Comm, dest: usize, tag: i32) -> Result<Request<'static>> {
        comm.isend_copied(self.as_elems(), dest, tag)
    }
}

impl<T: Datatype> SendBuf for Vec<T> {
    fn send(self, comm: &Comm, dest: usize, tag: i32) -> Result<()> {
        comm.send_moved(self, dest, tag)
    }
    fn isend(self, comm: &Comm, dest: usize, tag: i32) -> Result<Request<'static>> {
        comm.isend_moved(self, dest, tag)
    }
}

impl<T: Datatype> SendBuf for Typed<'_, &[T]> {
    fn send(self, comm: &Comm, dest: usize, tag: i32) -> Result<()> {
        comm.send_typed_in(
            self.buf,
            self.origin,
            self.ty,
            self.count,
            (dest, tag),
            false,
        )
    }
    fn isend(self, comm: &Comm, dest: usize, tag: i32) -> Result<Request<'static>> {
        let status = Status::of_send(comm.rank(), dest, tag, self.count);
        comm.send_typed_in(
            self.buf,
            self.origin,
            self.ty,
            self.count,
            (dest, tag),
            true,
        )?;
        Ok(Request::done(comm.endpoint().clone(), status, None))
    }
}

/// What [`Comm::recv_into`] takes: `&mut x` (a value, a slice, a `Vec` of fixed length) or a
/// [`Typed`] view of a derived datatype. Sealed.
pub trait RecvBuf: sealed::Sealed {
    #[doc(hidden)]
    fn recv(self, comm: &Comm, source: usize, tag: i32) -> Result<Status>;
}

impl<B: BufferMut + ?Sized> RecvBuf for &mut B {
    #[inline]
    fn recv(self, comm: &Comm, source: usize, tag: i32) -> Result<Status> {
        comm.recv_borrowed(self.as_elems_mut(), source, tag)
    }
}

impl<T: Datatype> RecvBuf for Typed<'_, &mut [T]> {
    fn recv(self, comm: &Comm, source: usize, tag: i32) -> Result<Status> {
        comm.recv_typed_in(self.buf, self.origin, self.ty, self.count, source, tag)
    }
}
