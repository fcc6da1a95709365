//! What can be sent and received: a single value, a slice, an array or a `Vec` of `Datatype`s.

use crate::datatype::Datatype;

/// Something whose elements can be sent: a single `T: Datatype`, a `[T]`, or a `Vec<T>`.
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

/// Something whose elements can be received into (a value, a slice, a `Vec` of fixed length).
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
