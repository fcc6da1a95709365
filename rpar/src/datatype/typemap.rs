//! [`TypeMap`]: MPI's type map with its size / extent / lb / true-extent semantics, and its
//! printing in the lecture's notation. The constructors live in `construct.rs`.

use super::contents::Origin;
use super::{BasicType, TypeLayout};
use crate::{Error, Result};
use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// MPI's type map: the (basic type, byte displacement) pairs of one element, in map order, with
/// the lower and upper bounds that define its extent.
///
/// A type map is plain data: build it with the MPI constructors ([`TypeMap::vector`],
/// [`TypeMap::structure`], …), inspect it, print it, and [`commit`](TypeMap::commit) it to
/// communicate or pack with it. Dropping it is MPI_Type_free; types built from it own their
/// own copy and stay valid.
///
/// A map also remembers which constructor built it and with what arguments
/// ([`envelope`](TypeMap::envelope), [`contents`](TypeMap::contents)); equality does not look at
/// that: two maps are equal when their entries, bounds and alignment are.
///
/// ```
/// use rpar::{BasicType, Datatype, TypeMap};
/// let map = TypeMap::basic(BasicType::F64);
/// assert_eq!(map.to_string(), "{(f64, 0)}");
/// assert_eq!((map.size(), map.extent(), map.lb()), (8, 8, 0));
/// assert_eq!(TypeMap::contiguous(2, &map)?, <[f64; 2]>::type_map()); // built two ways
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Clone)]
pub struct TypeMap {
    /// Borrowed for the maps of basic types and derived structs (static, see `layout.rs`).
    pub(super) entries: Cow<'static, [(BasicType, isize)]>,
    pub(super) lb: isize,
    pub(super) ub: isize,
    /// The largest alignment of a basic type in the map (at least 1): what MPI rounds the
    /// extent of a struct to.
    pub(super) align: usize,
    /// What built the map (MPI_Type_get_contents), see `contents.rs`.
    pub(super) origin: Origin,
}

/// The data, not how it was built.
impl PartialEq for TypeMap {
    fn eq(&self, other: &Self) -> bool {
        (self.lb, self.ub, self.align) == (other.lb, other.ub, other.align)
            && self.entries == other.entries
    }
}

impl Eq for TypeMap {}

impl Hash for TypeMap {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (&self.entries, self.lb, self.ub, self.align).hash(state);
    }
}

impl fmt::Debug for TypeMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypeMap")
            .field("entries", &self.entries)
            .field("lb", &self.lb)
            .field("ub", &self.ub)
            .field("align", &self.align)
            .field("combiner", &self.envelope().combiner)
            .finish()
    }
}

impl TypeMap {
    /// The type map of one basic type: `{(basic, 0)}` (MPI's predefined datatypes, e.g.
    /// MPI_DOUBLE).
    ///
    /// ```
    /// use rpar::{BasicType, Datatype, TypeMap};
    /// let map = TypeMap::basic(BasicType::I32);
    /// assert_eq!(map, i32::type_map());
    /// assert_eq!((map.to_string().as_str(), map.extent()), ("{(i32, 0)}", 4));
    /// ```
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
            C32 => &[(C32, 0)],
            C64 => &[(C64, 0)],
        };
        TypeMap {
            entries: Cow::Borrowed(entries),
            lb: 0,
            ub: basic.size() as isize,
            align: basic.align(),
            origin: Origin::Layout(TypeLayout::Basic(basic)),
        }
    }

    /// A type map from its entries and explicit bounds (`ub - lb` is the extent; it may be
    /// negative, as after MPI_Type_create_resized).
    ///
    /// This is the raw constructor; the MPI constructors (`contiguous`, `vector`, …) compute
    /// the bounds by MPI's rules.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if an entry's end, the extent or the true extent does not fit
    /// in `isize`.
    ///
    /// ```
    /// use rpar::{BasicType::I32, TypeMap};
    /// let map = TypeMap::from_parts(vec![(I32, 4)], 0, 12)?;
    /// assert_eq!((map.size(), map.extent(), map.true_lb()), (4, 12, 4));
    /// assert!(TypeMap::from_parts(vec![(I32, isize::MAX - 2)], 0, 0).is_err()); // ends past isize
    /// assert!(TypeMap::from_parts(vec![], isize::MIN, 1).is_err()); // extent past isize
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn from_parts(entries: Vec<(BasicType, isize)>, lb: isize, ub: isize) -> Result<Self> {
        let align = entries.iter().map(|(b, _)| b.align()).max().unwrap_or(1);
        Self::checked("TypeMap::from_parts", entries, lb, ub, align)
    }

    /// The map of `entries` with bounds `lb`, `ub`, if every query on it is overflow-free:
    /// every entry's end, the extent `ub - lb`, the true bounds and the true extent fit in
    /// `isize`. Every constructor ends here, so the queries below compute without checks.
    pub(super) fn checked(
        call: &'static str,
        entries: Vec<(BasicType, isize)>,
        lb: isize,
        ub: isize,
        align: usize,
    ) -> Result<Self> {
        let ends = entries
            .iter()
            .map(|&(b, d)| d.checked_add(b.size() as isize).map(|end| (d, end)))
            .try_fold(None, |acc: Option<(isize, isize)>, e| {
                let (d, end) = e?;
                Some(Some(acc.map_or((d, end), |(l, u)| (l.min(d), u.max(end)))))
            });
        let fits = |a: isize, b: isize| b.checked_sub(a).is_some();
        match ends {
            None => Err(Error::invalid(
                call,
                "expected entries that end within isize, got one past isize::MAX",
            )),
            Some(Some((tlb, tub))) if !fits(tlb, tub) => Err(Error::invalid(
                call,
                format!("expected a true extent that fits in isize, got {tlb}..{tub}"),
            )),
            Some(_) if !fits(lb, ub) => Err(Error::invalid(
                call,
                format!("expected an extent that fits in isize, got lb {lb} and ub {ub}"),
            )),
            Some(_) => Ok(TypeMap {
                entries: Cow::Owned(entries),
                lb,
                ub,
                align,
                origin: Origin::Parts,
            }),
        }
    }

    /// The (basic type, displacement) pairs in map order (MPI_Type_get_contents, flattened).
    ///
    /// ```
    /// use rpar::{BasicType::*, Datatype, TypeMap};
    /// let t = TypeMap::vector(2, 1, 3, &u16::type_map())?;
    /// assert_eq!(t.entries(), [(U16, 0), (U16, 6)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn entries(&self) -> &[(BasicType, isize)] {
        &self.entries
    }

    /// Total bytes of data in one element (MPI_Type_size): the sum of the entries' sizes.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::vector(3, 2, 5, &f32::type_map())?;
    /// assert_eq!(t.size(), 3 * 2 * 4); // the gaps are not data
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.entries.iter().map(|(b, _)| b.size()).sum()
    }

    /// Lower bound (MPI_Type_get_extent's `lb`).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::hindexed(&[(1, -8), (1, 8)], &f64::type_map())?;
    /// assert_eq!((t.lb(), t.ub()), (-8, 16));
    /// assert_eq!(t.resized(-16, 48)?.lb(), -16);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn lb(&self) -> isize {
        self.lb
    }

    /// Upper bound: `lb + extent` (MPI-1's MPI_Type_ub; MPI_Type_get_extent gives `lb` and
    /// `extent`).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::contiguous(3, &i16::type_map())?;
    /// assert_eq!((t.lb(), t.ub()), (0, 6));
    /// assert_eq!(t.ub(), t.lb() + t.extent());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn ub(&self) -> isize {
        self.ub
    }

    /// Extent (MPI_Type_get_extent): the stride between successive elements; negative after
    /// a [`resized`](TypeMap::resized) to a negative extent.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::vector(2, 1, 3, &i32::type_map())?; // {(i32, 0), (i32, 12)}
    /// assert_eq!(t.extent(), 16); // from lb 0 to the end of the last i32, no stride after it
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn extent(&self) -> isize {
        self.ub - self.lb
    }

    /// The largest alignment of a basic type in the map: what MPI_Type_create_struct rounds a
    /// struct's extent up to.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let (c, d) = (u8::type_map(), f64::type_map());
    /// let t = TypeMap::structure(&[(1, 0, &d), (1, 8, &c)])?;
    /// assert_eq!(t.alignment(), std::mem::align_of::<f64>());
    /// assert_eq!(t.extent() as usize, 16); // 9 bytes of data, rounded up to the alignment
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn alignment(&self) -> usize {
        self.align
    }

    /// True lower bound (MPI_Type_get_true_extent's `true_lb`): the lowest byte of data (0 for
    /// a map without entries).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::indexed(&[(1, 2), (1, 5)], &i32::type_map())?.resized(0, 32)?;
    /// assert_eq!((t.lb(), t.true_lb()), (0, 8)); // resizing moves lb, not the data
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn true_lb(&self) -> isize {
        self.entries.iter().map(|&(_, d)| d).min().unwrap_or(0)
    }

    /// True upper bound: one past the highest byte of data (0 for a map without entries): `true_lb
    /// + true_extent` of MPI_Type_get_true_extent.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::indexed(&[(1, 2), (1, 5)], &i32::type_map())?.resized(0, 32)?;
    /// assert_eq!((t.ub(), t.true_ub()), (32, 24));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn true_ub(&self) -> isize {
        self.entries
            .iter()
            .map(|&(b, d)| d + b.size() as isize)
            .max()
            .unwrap_or(0)
    }

    /// True extent (MPI_Type_get_true_extent): the span of bytes that hold data.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// // a column of a 4 x 4 matrix of f64, resized so that columns follow each other
    /// let col = TypeMap::vector(4, 1, 4, &f64::type_map())?.resized(0, 8)?;
    /// assert_eq!((col.extent(), col.true_extent()), (8, 3 * 32 + 8));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn true_extent(&self) -> isize {
        self.true_ub() - self.true_lb()
    }

    /// The type signature: the basic types in map order, without displacements (MPI's type
    /// signature, which a send and its receive must agree on; MPI has no call that lists it).
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
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// assert!(TypeMap::vector(3, 2, 2, &i32::type_map())?.is_dense()); // stride = block length
    /// assert!(!TypeMap::vector(3, 1, 2, &i32::type_map())?.is_dense()); // gaps
    /// assert!(!<(u8, u32)>::type_map().is_dense()); // padding after the u8
    /// # Ok::<(), rpar::Error>(())
    /// ```
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
