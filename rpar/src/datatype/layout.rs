//! [`TypeLayout`]: the type map of a Rust type as a constant, computed at compile time from
//! `core::mem::offset_of!` and `size_of` (`Datatype::LAYOUT`), and the static flattened maps
//! that `#[derive(Datatype)]` builds from it, so that `type_map()` of a derived struct costs no
//! construction at run time.
//!
//! A layout is a small tree (a basic type, an array of a layout, fields at offsets), because a
//! flat array of (basic type, displacement) pairs cannot be a constant of a generic type such as
//! `[T; N]` on stable Rust (its length would be a generic expression). Everything a check needs
//! (size, entry count, alignment, "dense and of one basic type") is a `const fn` over the tree,
//! in time proportional to the tree rather than to the entries; the flattened pairs are a
//! constant wherever the type is concrete (every non-generic derived struct).

use super::contents::Origin;
use super::{BasicType, TypeMap};
use std::borrow::Cow;

/// The type map of a Rust type as a constant: what [`Datatype::LAYOUT`](super::Datatype::LAYOUT)
/// holds, and what [`Datatype::type_map`](super::Datatype::type_map) is built from.
///
/// `#[derive(Datatype)]` writes it with `core::mem::offset_of!` for every field, so the type map
/// of a struct is known at compile time:
///
/// ```
/// use rpar::{BasicType, Datatype, TypeLayout};
/// #[derive(Datatype, Clone, Copy)]
/// #[repr(C)]
/// struct P { x: f32, n: [u16; 2] }
/// const N: usize = P::LAYOUT.entry_count();
/// const ENTRIES: [(BasicType, isize); N] = P::LAYOUT.entries();
/// assert_eq!(ENTRIES, [(BasicType::F32, 0), (BasicType::U16, 4), (BasicType::U16, 6)]);
/// assert_eq!(P::LAYOUT.size(), 8);
/// assert_eq!(P::type_map().entries(), ENTRIES);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeLayout {
    /// One value of a basic type at displacement 0.
    Basic(BasicType),
    /// `len` values of the element's layout, each its size after the previous (`[T; N]`).
    Array {
        /// The layout of one element.
        elem: &'static TypeLayout,
        /// How many elements.
        len: usize,
    },
    /// Fields at byte offsets, in map order, inside a value of `size` bytes (a struct or a
    /// tuple); the bytes no field covers are padding.
    Struct {
        /// `size_of` the whole value: the extent.
        size: usize,
        /// (offset, layout) of each field.
        fields: &'static [(usize, &'static TypeLayout)],
    },
}

impl TypeLayout {
    /// Bytes of one value, padding included: the extent of the type map.
    ///
    /// ```
    /// use rpar::Datatype;
    /// assert_eq!(<[u16; 3]>::LAYOUT.size(), 6);
    /// assert_eq!(<(u8, u64)>::LAYOUT.size(), std::mem::size_of::<(u8, u64)>());
    /// ```
    pub const fn size(&self) -> usize {
        match *self {
            TypeLayout::Basic(b) => b.size(),
            TypeLayout::Array { elem, len } => elem.size() * len,
            TypeLayout::Struct { size, .. } => size,
        }
    }

    /// How many (basic type, displacement) pairs the type map has.
    ///
    /// ```
    /// use rpar::Datatype;
    /// assert_eq!(<[[f32; 3]; 4]>::LAYOUT.entry_count(), 12);
    /// assert_eq!(<[[f32; 3]; 4]>::type_map().entries().len(), 12);
    /// ```
    pub const fn entry_count(&self) -> usize {
        match *self {
            TypeLayout::Basic(_) => 1,
            TypeLayout::Array { elem, len } => elem.entry_count() * len,
            TypeLayout::Struct { fields, .. } => {
                let (mut n, mut i) = (0, 0);
                while i < fields.len() {
                    n += fields[i].1.entry_count();
                    i += 1;
                }
                n
            }
        }
    }

    /// The largest alignment of a basic type in the map (1 if there is none): the
    /// [`TypeMap::alignment`] of the map it describes.
    ///
    /// ```
    /// use rpar::Datatype;
    /// assert_eq!(<(u8, u16)>::LAYOUT.alignment(), 2);
    /// assert_eq!(<[f64; 0]>::LAYOUT.alignment(), 1);
    /// ```
    pub const fn alignment(&self) -> usize {
        match *self {
            TypeLayout::Basic(b) => b.align(),
            TypeLayout::Array { elem, len } => {
                if len == 0 {
                    1
                } else {
                    elem.alignment()
                }
            }
            TypeLayout::Struct { fields, .. } => {
                let (mut a, mut i) = (1, 0);
                while i < fields.len() {
                    let f = fields[i].1.alignment();
                    if f > a {
                        a = f;
                    }
                    i += 1;
                }
                a
            }
        }
    }

    /// Whether the type map is gap-free in memory order (see [`TypeMap::is_dense`]): its
    /// entries, in map order, cover the value's bytes one after the other from byte 0 to the
    /// end. Then a value's bytes are its packed bytes, and a buffer of the type can be copied
    /// to or from a packed stream as it is. A struct whose fields Rust reorders is not, even
    /// without padding: its map is in declaration order.
    ///
    /// ```
    /// use rpar::Datatype;
    /// assert!(<[(u16, u16); 3]>::LAYOUT.is_dense());
    /// assert!(!<(u8, u32)>::LAYOUT.is_dense()); // padding after the u8
    /// #[derive(Datatype, Clone, Copy)]
    /// struct Reordered { a: u16, b: u32, c: u16 } // Rust puts b first
    /// assert_eq!(std::mem::size_of::<Reordered>(), 8); // no padding
    /// assert!(!Reordered::LAYOUT.is_dense()); // but the map is not in memory order
    /// assert_eq!(Reordered::LAYOUT.is_dense(), Reordered::type_map().is_dense());
    /// ```
    pub const fn is_dense(&self) -> bool {
        match *self {
            TypeLayout::Basic(_) => true,
            TypeLayout::Array { elem, len } => len == 0 || elem.is_dense(),
            TypeLayout::Struct { size, fields } => {
                let (mut next, mut i) = (0, 0);
                while i < fields.len() {
                    let (offset, f) = fields[i];
                    i += 1;
                    if f.entry_count() == 0 {
                        continue; // no entries: nothing to be dense about
                    }
                    if offset != next || !f.is_dense() {
                        return false;
                    }
                    next += f.size();
                }
                next == size
            }
        }
    }

    /// `Some(b)` if every entry of the type map is of basic type `b` (`None` for a map of no
    /// entries).
    const fn uniform(&self) -> Option<BasicType> {
        match *self {
            TypeLayout::Basic(b) => Some(b),
            TypeLayout::Array { elem, len } => {
                if len == 0 {
                    None
                } else {
                    elem.uniform()
                }
            }
            TypeLayout::Struct { fields, .. } => {
                let (mut basic, mut i) = (None::<BasicType>, 0);
                while i < fields.len() {
                    let f = fields[i].1;
                    i += 1;
                    match (basic, f.uniform()) {
                        (_, None) if f.entry_count() == 0 => {}
                        (_, None) => return None,
                        (Some(a), Some(b)) if a as u8 != b as u8 => return None,
                        (_, b) => basic = b,
                    }
                }
                basic
            }
        }
    }

    /// `Some(b)` if the type map is gap-free in memory order (see [`is_dense`](Self::is_dense))
    /// and every entry is of basic type `b`: then a buffer of the type is a plain array of `b`.
    ///
    /// ```
    /// use rpar::{BasicType, Datatype};
    /// assert_eq!(<[f64; 3]>::LAYOUT.dense_uniform(), Some(BasicType::F64));
    /// assert_eq!(<(u8, u32)>::LAYOUT.dense_uniform(), None); // mixed, with padding
    /// ```
    pub const fn dense_uniform(&self) -> Option<BasicType> {
        if self.is_dense() {
            self.uniform()
        } else {
            None
        }
    }

    /// The type map's (basic type, displacement) pairs in map order, as an array of exactly
    /// [`entry_count`](Self::entry_count) pairs (a compile-time error in a constant otherwise).
    ///
    /// # Panics
    ///
    /// If `N` is not [`entry_count`](Self::entry_count) (at compile time when evaluated in a
    /// constant).
    ///
    /// ```
    /// use rpar::{BasicType::*, Datatype};
    /// const MAP: [(rpar::BasicType, isize); 3] = <[i16; 3]>::LAYOUT.entries();
    /// assert_eq!(MAP, [(I16, 0), (I16, 2), (I16, 4)]);
    /// ```
    pub const fn entries<const N: usize>(&self) -> [(BasicType, isize); N] {
        let mut out = [(BasicType::Byte, 0); N];
        let filled = self.fill(0, &mut out, 0);
        assert!(filled == N, "N must be the layout's entry_count()");
        out
    }

    /// Writes the pairs of the map, displaced by `base`, into `out` from `at`; returns where
    /// they end.
    const fn fill(&self, base: isize, out: &mut [(BasicType, isize)], mut at: usize) -> usize {
        match *self {
            TypeLayout::Basic(b) => {
                out[at] = (b, base);
                at + 1
            }
            TypeLayout::Array { elem, len } => {
                let (stride, mut i) = (elem.size() as isize, 0);
                while i < len {
                    at = elem.fill(base + i as isize * stride, out, at);
                    i += 1;
                }
                at
            }
            TypeLayout::Struct { fields, .. } => {
                let mut i = 0;
                while i < fields.len() {
                    let (offset, f) = fields[i];
                    at = f.fill(base + offset as isize, out, at);
                    i += 1;
                }
                at
            }
        }
    }
}

impl TypeMap {
    /// The type map a layout describes: its entries in map order, lower bound 0, extent its
    /// size.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// assert_eq!(TypeMap::from_layout(&<[i32; 2]>::LAYOUT), <[i32; 2]>::type_map());
    /// ```
    pub fn from_layout(layout: &TypeLayout) -> TypeMap {
        let mut entries = vec![(BasicType::Byte, 0); layout.entry_count()];
        layout.fill(0, &mut entries, 0);
        TypeMap {
            entries: Cow::Owned(entries),
            lb: 0,
            ub: layout.size() as isize,
            align: layout.alignment(),
            origin: Origin::Layout(*layout),
        }
    }
}

/// Layouts of more entries than this are not flattened into a static map (their type map is
/// built when asked for, like a generic type's), to keep the binary small.
const STATIC_ENTRIES_MAX: usize = 4096;

/// How many pairs the static map of `layout` holds: all of them, or none past
/// `STATIC_ENTRIES_MAX`.
#[doc(hidden)]
pub const fn static_len(layout: &TypeLayout) -> usize {
    let n = layout.entry_count();
    if n <= STATIC_ENTRIES_MAX {
        n
    } else {
        0
    }
}

/// The flattened type map of a concrete type, as a `static`: what a derived `type_map()`
/// returns without building anything (used by `#[derive(Datatype)]`; `N` is
/// [`static_len`] of the layout).
#[doc(hidden)]
#[derive(Debug)]
pub struct StaticMap<const N: usize> {
    entries: [(BasicType, isize); N],
    /// Whether `entries` is the whole map.
    complete: bool,
    layout: TypeLayout,
    align: usize,
}

impl<const N: usize> StaticMap<N> {
    /// Flattens `layout` at compile time.
    pub const fn new(layout: TypeLayout) -> Self {
        let mut entries = [(BasicType::Byte, 0); N];
        let complete = N == layout.entry_count();
        if complete {
            layout.fill(0, &mut entries, 0);
        }
        StaticMap {
            entries,
            complete,
            layout,
            align: layout.alignment(),
        }
    }

    /// The type map, borrowing the static pairs (built from the layout if they were too
    /// many to keep).
    pub fn type_map(&'static self) -> TypeMap {
        if !self.complete {
            return TypeMap::from_layout(&self.layout);
        }
        TypeMap {
            entries: Cow::Borrowed(&self.entries),
            lb: 0,
            ub: self.layout.size() as isize,
            align: self.align,
            origin: Origin::Layout(self.layout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Datatype;
    use crate::Loc;

    #[derive(crate::Datatype, Clone, Copy)]
    #[repr(C)]
    struct Dense {
        xs: [f64; 2],
        y: f64,
    }

    #[derive(crate::Datatype, Clone, Copy)]
    struct Nested {
        a: u8,
        d: Dense,
        t: (i16, [u32; 3]),
        e: [f32; 0],
    }

    /// No padding, but Rust puts `b` first: the map, in declaration order, is not in memory
    /// order.
    #[derive(crate::Datatype, Clone, Copy)]
    struct Reordered {
        a: bool,
        b: u32,
        c: u16,
        d: u8,
    }

    /// The same fields in memory order.
    #[derive(crate::Datatype, Clone, Copy)]
    #[repr(C)]
    struct InOrder {
        b: u32,
        c: u16,
        a: bool,
        d: u8,
    }

    #[derive(crate::Datatype, Clone, Copy)]
    struct Big {
        xs: [u16; 5000],
        flag: bool,
    }

    /// What `Compiled::fits_uniform` used to ask of the element's type map.
    fn uniform_by_map(map: &TypeMap) -> Option<BasicType> {
        let &(b, _) = map.entries().first()?;
        (map.is_dense() && map.entries().iter().all(|&(e, _)| e == b)).then_some(b)
    }

    fn agree<T: Datatype>() {
        let map = T::type_map();
        let name = std::any::type_name::<T>();
        assert_eq!(map, TypeMap::from_layout(&T::LAYOUT), "{name}");
        assert_eq!(T::LAYOUT.entry_count(), map.entries().len(), "{name}");
        assert_eq!(T::LAYOUT.size(), std::mem::size_of::<T>(), "{name}");
        assert_eq!(map.extent() as usize, std::mem::size_of::<T>(), "{name}");
        assert_eq!(T::LAYOUT.alignment(), map.alignment(), "{name}");
        assert_eq!(T::LAYOUT.dense_uniform(), uniform_by_map(&map), "{name}");
        assert_eq!(T::LAYOUT.is_dense(), map.is_dense(), "{name}");
    }

    #[test]
    fn the_constant_layout_agrees_with_the_type_map() {
        agree::<f64>();
        agree::<bool>();
        agree::<[i32; 4]>();
        agree::<[[u8; 3]; 2]>();
        agree::<[f64; 0]>();
        agree::<(u8, u32)>();
        agree::<(f32, f32)>();
        agree::<([f32; 2], f32)>();
        agree::<Loc<f64, u32>>();
        agree::<Loc<i64, i64>>();
        agree::<Dense>();
        agree::<Nested>();
        agree::<Big>();
        agree::<Reordered>();
        agree::<InOrder>();
        agree::<[Reordered; 2]>();
        agree::<(InOrder, [u64; 2])>();
        assert!(!Reordered::LAYOUT.is_dense() && InOrder::LAYOUT.is_dense());
        assert_eq!(std::mem::size_of::<Reordered>(), 8);
        assert_eq!(Dense::LAYOUT.dense_uniform(), Some(BasicType::F64));
        assert_eq!(<(f32, f32)>::LAYOUT.dense_uniform(), Some(BasicType::F32));
        assert_eq!(Nested::LAYOUT.entry_count(), 1 + 3 + 1 + 3);
    }

    #[test]
    fn derived_maps_are_static_up_to_a_size() {
        let same = |a: &TypeMap, b: &TypeMap| std::ptr::eq(a.entries(), b.entries());
        assert!(same(&Nested::type_map(), &Nested::type_map()));
        assert!(same(&f64::type_map(), &f64::type_map()));
        // past STATIC_ENTRIES_MAX the map is built when asked for
        assert_eq!(static_len(&Big::LAYOUT), 0);
        assert!(!same(&Big::type_map(), &Big::type_map()));
        assert_eq!(
            Big::type_map().entries().last(),
            Some(&(BasicType::Bool, 10_000))
        );
    }
}
