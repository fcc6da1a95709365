//! [`TypeMap`]: MPI's type map with its size / extent / lb / true-extent semantics, and its
//! printing in the lecture's notation. The constructors live in `construct.rs`.

use super::BasicType;
use std::borrow::Cow;
use std::fmt;

/// MPI's type map: the (basic type, byte displacement) pairs of one element, in map order, with
/// the lower and upper bounds that define its extent.
///
/// A type map is plain data: build it with the MPI constructors ([`TypeMap::vector`],
/// [`TypeMap::structure`], …), inspect it, print it, and [`commit`](TypeMap::commit) it to
/// communicate or pack with it. Dropping it is MPI_Type_free; types built from it own their
/// own copy and stay valid.
///
/// ```
/// use rpar::{BasicType, TypeMap};
/// let map = TypeMap::basic(BasicType::F64);
/// assert_eq!(map.to_string(), "{(f64, 0)}");
/// assert_eq!((map.size(), map.extent(), map.lb()), (8, 8, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeMap {
    /// Borrowed for the maps of basic types and derived structs (static, see `layout.rs`).
    pub(super) entries: Cow<'static, [(BasicType, isize)]>,
    pub(super) lb: isize,
    pub(super) ub: isize,
    /// The largest alignment of a basic type in the map (at least 1): what MPI rounds the
    /// extent of a struct to.
    pub(super) align: usize,
}

impl TypeMap {
    /// The type map of one basic type: `{(basic, 0)}`.
    pub fn basic(basic: BasicType) -> Self {
        use BasicType::*;
        let entries: &'static [(BasicType, isize)] = match basic {
            I8 => &[(I8, 0)],
            I16 => &[(I16, 0)],
            I32 => &[(I32, 0)],
            I64 => &[(I64, 0)],
            I128 => &[(I128, 0)],
            Isize => &[(Isize, 0)],
            U8 => &[(U8, 0)],
            U16 => &[(U16, 0)],
            U32 => &[(U32, 0)],
            U64 => &[(U64, 0)],
            U128 => &[(U128, 0)],
            Usize => &[(Usize, 0)],
            F32 => &[(F32, 0)],
            F64 => &[(F64, 0)],
            Bool => &[(Bool, 0)],
            Char => &[(Char, 0)],
            Byte => &[(Byte, 0)],
        };
        TypeMap {
            entries: Cow::Borrowed(entries),
            lb: 0,
            ub: basic.size() as isize,
            align: basic.align(),
        }
    }

    /// A type map from its entries and explicit bounds (`ub - lb` is the extent).
    ///
    /// This is the raw constructor; the MPI constructors (`contiguous`, `vector`, …) compute
    /// the bounds by MPI's rules.
    ///
    /// ```
    /// use rpar::{BasicType::I32, TypeMap};
    /// let map = TypeMap::from_parts(vec![(I32, 4)], 0, 12);
    /// assert_eq!((map.size(), map.extent(), map.true_lb()), (4, 12, 4));
    /// ```
    pub fn from_parts(entries: Vec<(BasicType, isize)>, lb: isize, ub: isize) -> Self {
        let align = entries.iter().map(|(b, _)| b.align()).max().unwrap_or(1);
        TypeMap {
            entries: Cow::Owned(entries),
            lb,
            ub,
            align,
        }
    }

    /// The (basic type, displacement) pairs in map order.
    pub fn entries(&self) -> &[(BasicType, isize)] {
        &self.entries
    }

    /// Total bytes of data in one element (MPI_Type_size): the sum of the entries' sizes.
    pub fn size(&self) -> usize {
        self.entries.iter().map(|(b, _)| b.size()).sum()
    }

    /// Lower bound (MPI_Type_get_extent's `lb`).
    pub fn lb(&self) -> isize {
        self.lb
    }

    /// Upper bound: `lb + extent`.
    pub fn ub(&self) -> isize {
        self.ub
    }

    /// Extent (MPI_Type_get_extent): the stride between successive elements.
    pub fn extent(&self) -> isize {
        self.ub - self.lb
    }

    /// The largest alignment of a basic type in the map: what MPI_Type_create_struct rounds a
    /// struct's extent up to.
    pub fn alignment(&self) -> usize {
        self.align
    }

    /// True lower bound (MPI_Type_get_true_extent's `true_lb`): the lowest byte of data.
    pub fn true_lb(&self) -> isize {
        self.entries.iter().map(|&(_, d)| d).min().unwrap_or(0)
    }

    /// True upper bound: one past the highest byte of data.
    pub fn true_ub(&self) -> isize {
        self.entries
            .iter()
            .map(|&(b, d)| d + b.size() as isize)
            .max()
            .unwrap_or(0)
    }

    /// True extent (MPI_Type_get_true_extent): the span of bytes that hold data.
    pub fn true_extent(&self) -> isize {
        self.true_ub() - self.true_lb()
    }

    /// The type signature: the basic types in map order, without displacements.
    ///
    /// ```
    /// use rpar::{BasicType::*, Datatype, TypeMap};
    /// let v = TypeMap::vector(2, 1, 3, &i16::type_map())?;
    /// assert_eq!(v.signature().collect::<Vec<_>>(), [I16, I16]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn signature(&self) -> impl Iterator<Item = BasicType> + '_ {
        self.entries.iter().map(|&(b, _)| b)
    }

    /// Whether the data is one gap-free run of bytes in map order starting at 0, with the extent
    /// equal to the size: then `count` elements are `count * size` contiguous bytes.
    pub fn is_dense(&self) -> bool {
        let mut next = 0isize;
        for &(b, d) in self.entries.iter() {
            if d != next {
                return false;
            }
            next += b.size() as isize;
        }
        self.lb == 0 && self.ub == next
    }
}

impl fmt::Display for TypeMap {
    /// The lecture's notation: `{(f64, 0), (f64, 8), (i32, 16)}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (b, d)) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "({b}, {d})")?;
        }
        f.write_str("}")
    }
}
