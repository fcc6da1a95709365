//! [`TypeMap`]: MPI's type map with its size / extent / lb / true-extent semantics.

use super::BasicType;
use std::fmt;

/// MPI's type map: the (basic type, byte displacement) pairs of one element, in map order, with
/// the lower and upper bounds that define its extent.
///
/// ```
/// use rpar::{BasicType, TypeMap};
/// let map = TypeMap::basic(BasicType::F64);
/// assert_eq!(map.to_string(), "{(f64, 0)}");
/// assert_eq!((map.size(), map.extent(), map.lb()), (8, 8, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeMap {
    entries: Vec<(BasicType, isize)>,
    lb: isize,
    ub: isize,
}

impl TypeMap {
    /// The type map of one basic type: `{(basic, 0)}`.
    pub fn basic(basic: BasicType) -> Self {
        TypeMap {
            entries: vec![(basic, 0)],
            lb: 0,
            ub: basic.size() as isize,
        }
    }

    /// A type map from its entries and explicit bounds (`ub - lb` is the extent).
    ///
    /// This is the raw constructor; the MPI constructors (`contiguous`, `vector`, …) are built on
    /// it and compute the bounds by MPI's rules.
    pub fn from_parts(entries: Vec<(BasicType, isize)>, lb: isize, ub: isize) -> Self {
        TypeMap { entries, lb, ub }
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
    pub fn signature(&self) -> impl Iterator<Item = BasicType> + '_ {
        self.entries.iter().map(|&(b, _)| b)
    }

    /// Whether the data is one gap-free run of bytes in map order starting at 0, with the extent
    /// equal to the size: then `count` elements are `count * size` contiguous bytes.
    pub fn is_dense(&self) -> bool {
        let mut next = 0isize;
        for &(b, d) in &self.entries {
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
