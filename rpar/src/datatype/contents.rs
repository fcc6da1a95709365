//! What built a type map (MPI_Type_get_envelope, MPI_Type_get_contents): the constructor and
//! the arguments it was called with, recorded in the map when it is built.
//!
//! MPI answers in three arrays (integers, addresses, datatypes) whose lengths the envelope
//! gives; rpar answers with one enum, [`Combiner`], whose variants carry the arguments by name,
//! and offers MPI's arrays as well ([`Combiner::integers`], [`Combiner::addresses`],
//! [`Combiner::datatypes`]) for code ported from MPI. Maps of Rust types (basic types, arrays,
//! tuples, derived structs) record nothing: their contents come from their constant
//! [`TypeLayout`] when asked for, as the MPI calls that would build them.

use super::{BasicType, Distribution, Order, TypeLayout, TypeMap};
use crate::{Error, Result};
use std::sync::Arc;

/// How a [`TypeMap`] came to be, kept inside it.
#[derive(Debug, Clone)]
pub(super) enum Origin {
    /// The layout of a Rust type (a basic type, an array, a tuple, a derived struct).
    Layout(TypeLayout),
    /// [`TypeMap::from_parts`]: the entries and bounds themselves.
    Parts,
    /// An MPI constructor and its arguments.
    Built(Arc<Combiner>),
}

/// Which constructor built a type map: the `combiner` of MPI_Type_get_envelope
/// (`MPI_COMBINER_NAMED`, `MPI_COMBINER_VECTOR`, …).
///
/// ```
/// use rpar::{CombinerKind, Datatype, TypeMap};
/// assert_eq!(f64::type_map().envelope().combiner, CombinerKind::Named);
/// let v = TypeMap::vector(2, 1, 3, &f64::type_map())?;
/// assert_eq!(v.envelope().combiner, CombinerKind::Vector);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CombinerKind {
    /// A predefined type (MPI_COMBINER_NAMED): [`TypeMap::basic`].
    Named,
    /// MPI_COMBINER_DUP: [`TypeMap::dup`].
    Dup,
    /// MPI_COMBINER_CONTIGUOUS: [`TypeMap::contiguous`].
    Contiguous,
    /// MPI_COMBINER_VECTOR: [`TypeMap::vector`].
    Vector,
    /// MPI_COMBINER_HVECTOR: [`TypeMap::hvector`].
    Hvector,
    /// MPI_COMBINER_INDEXED: [`TypeMap::indexed`].
    Indexed,
    /// MPI_COMBINER_HINDEXED: [`TypeMap::hindexed`].
    Hindexed,
    /// MPI_COMBINER_INDEXED_BLOCK: [`TypeMap::indexed_block`].
    IndexedBlock,
    /// MPI_COMBINER_HINDEXED_BLOCK: [`TypeMap::hindexed_block`].
    HindexedBlock,
    /// MPI_COMBINER_STRUCT: [`TypeMap::structure`].
    Struct,
    /// MPI_COMBINER_SUBARRAY: [`TypeMap::subarray`].
    Subarray,
    /// MPI_COMBINER_DARRAY: [`TypeMap::darray`].
    Darray,
    /// MPI_COMBINER_RESIZED: [`TypeMap::resized`].
    Resized,
}

/// The answer of MPI_Type_get_envelope: the constructor, and how many integers, addresses and
/// datatypes MPI_Type_get_contents returns for it (MPI-4.0 Table 5.1; large counts are never
/// needed: `num_large_counts` would be 0).
///
/// ```
/// use rpar::{CombinerKind, Datatype, Envelope, TypeMap};
/// let t = TypeMap::indexed(&[(2, 0), (1, 5), (3, 9)], &i32::type_map())?;
/// let env = t.envelope();
/// assert_eq!(
///     env,
///     Envelope { combiner: CombinerKind::Indexed, integers: 2 * 3 + 1, addresses: 0, datatypes: 1 }
/// );
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Envelope {
    /// The constructor (`combiner`).
    pub combiner: CombinerKind,
    /// Length of the integer array (`num_integers`).
    pub integers: usize,
    /// Length of the address array (`num_addresses`).
    pub addresses: usize,
    /// Length of the datatype array (`num_datatypes`).
    pub datatypes: usize,
}

/// The constructor that built a type map and the arguments it was called with: the answer of
/// MPI_Type_get_contents, each argument by name. The inner types are [`TypeMap`]s that can be
/// asked in turn; a predefined type has no contents (asking is an error, as in MPI).
///
/// Types of Rust values answer as the MPI calls that build them: `[T; N]` is a contiguous of
/// `N` copies of `T`; a tuple or a derived struct is the struct of its fields at their offsets,
/// resized to its `size_of`; a map from [`TypeMap::from_parts`] is the struct of its entries,
/// resized to its bounds.
///
/// ```
/// use rpar::{Combiner, Datatype, TypeMap};
/// let row = TypeMap::contiguous(4, &f64::type_map())?;
/// let col = TypeMap::vector(3, 1, 4, &f64::type_map())?;
/// match col.contents()? {
///     Combiner::Vector { count, blocklength, stride, inner } => {
///         assert_eq!((count, blocklength, stride), (3, 1, 4));
///         assert_eq!(inner, f64::type_map());
///     }
///     other => panic!("expected a vector, got {other:?}"),
/// }
/// // MPI's three arrays
/// assert_eq!(row.contents()?.integers(), [4]);
/// assert!(f64::type_map().contents().is_err()); // a predefined type has none
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Combiner {
    /// A duplicate (MPI_COMBINER_DUP), from [`TypeMap::dup`].
    Dup {
        /// The type duplicated.
        inner: TypeMap,
    },
    /// MPI_COMBINER_CONTIGUOUS, from [`TypeMap::contiguous`].
    Contiguous {
        /// `count`.
        count: usize,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_VECTOR, from [`TypeMap::vector`].
    Vector {
        /// `count`: the number of blocks.
        count: usize,
        /// `blocklength`: copies of `inner` per block.
        blocklength: usize,
        /// `stride`, in extents of `inner`.
        stride: isize,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_HVECTOR, from [`TypeMap::hvector`].
    Hvector {
        /// `count`: the number of blocks.
        count: usize,
        /// `blocklength`: copies of `inner` per block.
        blocklength: usize,
        /// `stride`, in bytes.
        stride: isize,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_INDEXED, from [`TypeMap::indexed`].
    Indexed {
        /// `(blocklength, displacement)` of each block, displacements in extents of `inner`.
        blocks: Vec<(usize, isize)>,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_HINDEXED, from [`TypeMap::hindexed`].
    Hindexed {
        /// `(blocklength, displacement)` of each block, displacements in bytes.
        blocks: Vec<(usize, isize)>,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_INDEXED_BLOCK, from [`TypeMap::indexed_block`].
    IndexedBlock {
        /// `blocklength` of every block.
        blocklength: usize,
        /// `array_of_displacements`, in extents of `inner`.
        displacements: Vec<isize>,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_HINDEXED_BLOCK, from [`TypeMap::hindexed_block`].
    HindexedBlock {
        /// `blocklength` of every block.
        blocklength: usize,
        /// `array_of_displacements`, in bytes.
        displacements: Vec<isize>,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_STRUCT, from [`TypeMap::structure`].
    Struct {
        /// `(blocklength, byte displacement, type)` of each field.
        fields: Vec<(usize, isize, TypeMap)>,
    },
    /// MPI_COMBINER_SUBARRAY, from [`TypeMap::subarray`].
    Subarray {
        /// `array_of_sizes`.
        sizes: Vec<usize>,
        /// `array_of_subsizes`.
        subsizes: Vec<usize>,
        /// `array_of_starts`.
        starts: Vec<usize>,
        /// `order`.
        order: Order,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_DARRAY, from [`TypeMap::darray`].
    Darray {
        /// `size`: processes in the grid.
        size: usize,
        /// `rank` of the process whose part this is.
        rank: usize,
        /// `array_of_gsizes`.
        gsizes: Vec<usize>,
        /// `array_of_distribs` with `array_of_dargs`.
        distribs: Vec<Distribution>,
        /// `array_of_psizes`.
        psizes: Vec<usize>,
        /// `order`.
        order: Order,
        /// `oldtype`.
        inner: TypeMap,
    },
    /// MPI_COMBINER_RESIZED, from [`TypeMap::resized`].
    Resized {
        /// The new lower bound.
        lb: isize,
        /// The new extent.
        extent: isize,
        /// `oldtype`.
        inner: TypeMap,
    },
}

/// MPICH's values of `MPI_ORDER_C` and `MPI_ORDER_FORTRAN`, for [`Combiner::integers`].
fn order_code(order: Order) -> isize {
    match order {
        Order::C => 56,
        Order::Fortran => 57,
    }
}

impl Combiner {
    /// Which constructor this is.
    ///
    /// ```
    /// use rpar::{CombinerKind, Datatype, TypeMap};
    /// let t = TypeMap::hvector(2, 1, 16, &i32::type_map())?;
    /// assert_eq!(t.contents()?.kind(), CombinerKind::Hvector);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn kind(&self) -> CombinerKind {
        match self {
            Combiner::Dup { .. } => CombinerKind::Dup,
            Combiner::Contiguous { .. } => CombinerKind::Contiguous,
            Combiner::Vector { .. } => CombinerKind::Vector,
            Combiner::Hvector { .. } => CombinerKind::Hvector,
            Combiner::Indexed { .. } => CombinerKind::Indexed,
            Combiner::Hindexed { .. } => CombinerKind::Hindexed,
            Combiner::IndexedBlock { .. } => CombinerKind::IndexedBlock,
            Combiner::HindexedBlock { .. } => CombinerKind::HindexedBlock,
            Combiner::Struct { .. } => CombinerKind::Struct,
            Combiner::Subarray { .. } => CombinerKind::Subarray,
            Combiner::Darray { .. } => CombinerKind::Darray,
            Combiner::Resized { .. } => CombinerKind::Resized,
        }
    }

    /// The `array_of_integers` of MPI_Type_get_contents, in MPI's order (for an indexed type:
    /// the count, the block lengths, then the displacements). `order` is given as MPICH
    /// numbers it (`MPI_ORDER_C` = 56, `MPI_ORDER_FORTRAN` = 57), and so are a darray's
    /// distributions (`MPI_DISTRIBUTE_BLOCK` = 121, `_CYCLIC` = 122, `_NONE` = 123,
    /// `MPI_DISTRIBUTE_DFLT_DARG` = -49767).
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::indexed(&[(2, 0), (1, 5)], &i32::type_map())?;
    /// assert_eq!(t.contents()?.integers(), [2, 2, 1, 0, 5]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn integers(&self) -> Vec<isize> {
        let n = |x: usize| x as isize;
        match self {
            Combiner::Dup { .. } | Combiner::Resized { .. } => vec![],
            Combiner::Contiguous { count, .. } => vec![n(*count)],
            Combiner::Vector {
                count,
                blocklength,
                stride,
                ..
            } => vec![n(*count), n(*blocklength), *stride],
            Combiner::Hvector {
                count, blocklength, ..
            } => vec![n(*count), n(*blocklength)],
            Combiner::Indexed { blocks, .. } => std::iter::once(n(blocks.len()))
                .chain(blocks.iter().map(|b| n(b.0)))
                .chain(blocks.iter().map(|b| b.1))
                .collect(),
            Combiner::Hindexed { blocks, .. } => std::iter::once(n(blocks.len()))
                .chain(blocks.iter().map(|b| n(b.0)))
                .collect(),
            Combiner::IndexedBlock {
                blocklength,
                displacements,
                ..
            } => [n(displacements.len()), n(*blocklength)]
                .into_iter()
                .chain(displacements.iter().copied())
                .collect(),
            Combiner::HindexedBlock {
                blocklength,
                displacements,
                ..
            } => vec![n(displacements.len()), n(*blocklength)],
            Combiner::Struct { fields } => std::iter::once(n(fields.len()))
                .chain(fields.iter().map(|f| n(f.0)))
                .collect(),
            Combiner::Subarray {
                sizes,
                subsizes,
                starts,
                order,
                ..
            } => std::iter::once(n(sizes.len()))
                .chain(sizes.iter().chain(subsizes).chain(starts).map(|&x| n(x)))
                .chain([order_code(*order)])
                .collect(),
            Combiner::Darray {
                size,
                rank,
                gsizes,
                distribs,
                psizes,
                order,
                ..
            } => [n(*size), n(*rank), n(gsizes.len())]
                .into_iter()
                .chain(gsizes.iter().map(|&g| n(g)))
                .chain(distribs.iter().map(|d| d.codes().0))
                .chain(distribs.iter().map(|d| d.codes().1))
                .chain(psizes.iter().map(|&p| n(p)))
                .chain([order_code(*order)])
                .collect(),
        }
    }

    /// The `array_of_addresses` of MPI_Type_get_contents: byte strides and displacements, and
    /// the lower bound and extent of a resized type.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let t = TypeMap::hindexed(&[(1, 16), (2, -8)], &f64::type_map())?;
    /// assert_eq!(t.contents()?.addresses(), [16, -8]);
    /// assert_eq!(t.resized(-8, 64)?.contents()?.addresses(), [-8, 64]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn addresses(&self) -> Vec<isize> {
        match self {
            Combiner::Hvector { stride, .. } => vec![*stride],
            Combiner::Hindexed { blocks, .. } => blocks.iter().map(|b| b.1).collect(),
            Combiner::HindexedBlock { displacements, .. } => displacements.clone(),
            Combiner::Struct { fields } => fields.iter().map(|f| f.1).collect(),
            Combiner::Resized { lb, extent, .. } => vec![*lb, *extent],
            _ => vec![],
        }
    }

    /// The `array_of_datatypes` of MPI_Type_get_contents: the inner type, or a struct's field
    /// types in order.
    ///
    /// ```
    /// use rpar::{Datatype, TypeMap};
    /// let (c, d) = (u8::type_map(), f64::type_map());
    /// let t = TypeMap::structure(&[(1, 0, &c), (2, 8, &d)])?;
    /// assert_eq!(t.contents()?.datatypes(), [&c, &d]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn datatypes(&self) -> Vec<&TypeMap> {
        match self {
            Combiner::Struct { fields } => fields.iter().map(|f| &f.2).collect(),
            Combiner::Dup { inner }
            | Combiner::Contiguous { inner, .. }
            | Combiner::Vector { inner, .. }
            | Combiner::Hvector { inner, .. }
            | Combiner::Indexed { inner, .. }
            | Combiner::Hindexed { inner, .. }
            | Combiner::IndexedBlock { inner, .. }
            | Combiner::HindexedBlock { inner, .. }
            | Combiner::Subarray { inner, .. }
            | Combiner::Darray { inner, .. }
            | Combiner::Resized { inner, .. } => vec![inner],
        }
    }
}

impl TypeMap {
    /// Records that `combiner` built this map.
    pub(super) fn built_by(mut self, combiner: Combiner) -> TypeMap {
        self.origin = Origin::Built(Arc::new(combiner));
        self
    }

    /// Which constructor built this type, and the lengths of MPI's arrays of its arguments
    /// (MPI_Type_get_envelope). Basic types answer [`CombinerKind::Named`] with no arguments.
    ///
    /// ```
    /// use rpar::{CombinerKind, Datatype, TypeMap};
    /// let env = TypeMap::hindexed_block(2, &[0, 24, 48], &f64::type_map())?.envelope();
    /// assert_eq!(env.combiner, CombinerKind::HindexedBlock);
    /// assert_eq!((env.integers, env.addresses, env.datatypes), (2, 3, 1));
    /// let named = u8::type_map().envelope();
    /// assert_eq!((named.combiner, named.integers + named.addresses + named.datatypes),
    ///            (CombinerKind::Named, 0));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn envelope(&self) -> Envelope {
        match self.contents() {
            Ok(c) => Envelope {
                combiner: c.kind(),
                integers: c.integers().len(),
                addresses: c.addresses().len(),
                datatypes: c.datatypes().len(),
            },
            Err(_) => Envelope {
                combiner: CombinerKind::Named,
                integers: 0,
                addresses: 0,
                datatypes: 0,
            },
        }
    }

    /// The constructor that built this type and its arguments (MPI_Type_get_contents); see
    /// [`Combiner`] for what the maps of Rust types answer.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a predefined type ([`CombinerKind::Named`]), which has no
    /// contents (MPI makes the call erroneous).
    ///
    /// ```
    /// use rpar::{Combiner, Datatype, TypeMap};
    /// // a derived struct answers as the struct of its fields, resized to its size
    /// #[derive(Datatype, Clone, Copy)]
    /// #[repr(C)]
    /// struct P { x: f32, n: u8 }
    /// let Combiner::Resized { lb, extent, inner } = P::type_map().contents()? else { panic!() };
    /// assert_eq!((lb, extent), (0, 8));
    /// let Combiner::Struct { fields } = inner.contents()? else { panic!() };
    /// assert_eq!(fields, [(1, 0, f32::type_map()), (1, 4, u8::type_map())]);
    /// let err = i32::type_map().contents().unwrap_err().to_string();
    /// assert!(err.contains("predefined"), "{err}");
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn contents(&self) -> Result<Combiner> {
        match &self.origin {
            Origin::Built(c) => Ok(Combiner::clone(c)),
            Origin::Layout(layout) => layout_contents(layout),
            Origin::Parts => {
                let fields = self
                    .entries
                    .iter()
                    .map(|&(b, d)| (1, d, TypeMap::basic(b)))
                    .collect();
                let inner = struct_of(fields)?;
                Ok(Combiner::Resized {
                    lb: self.lb,
                    extent: self.extent(),
                    inner,
                })
            }
        }
    }

    /// A copy of this type (MPI_Type_dup): the same map, whose contents name this one as
    /// what it duplicates.
    ///
    /// ```
    /// use rpar::{Combiner, CombinerKind, Datatype, TypeMap};
    /// let v = TypeMap::vector(2, 1, 2, &i16::type_map())?;
    /// let d = v.dup();
    /// assert_eq!(d, v); // the same type map
    /// assert_eq!(d.envelope().combiner, CombinerKind::Dup);
    /// assert_eq!(d.contents()?, Combiner::Dup { inner: v });
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn dup(&self) -> TypeMap {
        self.clone().built_by(Combiner::Dup {
            inner: self.clone(),
        })
    }
}

/// The struct of `fields`, recording its construction.
fn struct_of(fields: Vec<(usize, isize, TypeMap)>) -> Result<TypeMap> {
    let refs: Vec<(usize, isize, &TypeMap)> = fields.iter().map(|(n, d, t)| (*n, *d, t)).collect();
    TypeMap::structure(&refs)
}

/// The contents of the map of a Rust type, as the MPI calls that build it.
fn layout_contents(layout: &TypeLayout) -> Result<Combiner> {
    match *layout {
        TypeLayout::Basic(b) => Err(named(b)),
        TypeLayout::Array { elem, len } => Ok(Combiner::Contiguous {
            count: len,
            inner: TypeMap::from_layout(elem),
        }),
        TypeLayout::Struct { size, fields } => {
            let fields = fields
                .iter()
                .map(|&(offset, f)| (1, offset as isize, TypeMap::from_layout(f)))
                .collect();
            Ok(Combiner::Resized {
                lb: 0,
                extent: size as isize,
                inner: struct_of(fields)?,
            })
        }
    }
}

fn named(b: BasicType) -> Error {
    Error::invalid(
        "MPI_Type_get_contents",
        format!(
            "expected a derived type, got the predefined type {b}, which has no contents \
             (its envelope is NAMED)"
        ),
    )
}
