//! Datatypes: what an element of a message is made of.
//!
//! A [`TypeMap`] is MPI's type map — the sequence of (basic type, byte displacement) pairs of one
//! element — with MPI's size / extent / lb semantics (`typemap.rs`), built with MPI's
//! constructors (`construct.rs`, and `darray.rs` for MPI_Type_create_darray), which record what
//! built them (`contents.rs`). Committing it (`commit.rs`) compiles it into merged byte
//! segments, a [`CommittedType`]; pack/unpack (`pack.rs`) and the non-contiguous sends run on
//! that form through the copy engine (`engine.rs`, which writes through `store.rs`). The
//! [`Datatype`] trait ties a Rust type to its type map, a constant [`TypeLayout`]
//! (`layout.rs`); it is implemented here for the primitive types, arrays and tuples
//! (`impls.rs`), and written by `#[derive(Datatype)]` for structs.
//!
//! Depends on nothing else in rpar but `error`.

mod basic;
mod commit;
mod construct;
mod contents;
mod darray;
pub(crate) mod engine;
mod impls;
mod layout;
mod pack;
mod store;
mod typemap;

pub use basic::BasicType;
pub use commit::CommittedType;
pub(crate) use commit::{Access, Compiled, PeriodDigest, SignatureMatch};
pub use construct::Order;
pub use contents::{Combiner, CombinerKind, Envelope};
pub use darray::Distribution;
pub use layout::TypeLayout;
#[doc(hidden)]
pub use layout::{static_len, StaticMap};
pub use typemap::TypeMap;

/// A Rust type that can be an element of a message: its memory is described by a [`TypeMap`].
///
/// Implemented for all integer and float types, `bool`, `char`, arrays and tuples of
/// `Datatype`s, and, via `#[derive(Datatype)]`, for structs whose fields are all `Datatype`s.
///
/// ```
/// use rpar::{BasicType, Datatype};
/// let map = <[f32; 2]>::type_map();
/// assert_eq!(map.size(), 8);
/// assert_eq!(map.entries(), &[(BasicType::F32, 0), (BasicType::F32, 4)]);
/// ```
///
/// # Safety
///
/// `LAYOUT` must describe `Self` exactly: every entry of its type map lies within
/// `size_of::<Self>()` bytes, its basic type is the type actually stored at that displacement,
/// and the bytes not covered by an entry are the only padding of `Self`; its size must be
/// `size_of::<Self>()`. An overridden `type_map()` must return the map `LAYOUT` describes.
/// rpar copies the bytes a type map names between values of types with equal signatures, so a
/// wrong map is undefined behaviour.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Datatype: its bytes cannot be an element of a message",
    label = "not a Datatype",
    note = "Datatype is implemented for the integer and float types, bool, char, arrays and \
            tuples of Datatypes, and structs with #[derive(Datatype)] whose fields are all \
            Datatypes",
    note = "a Box, Vec, String, Rc or Arc points to memory of this process, meaningless to \
            another rank: use an array [T; N] (a fixed-size [u8; N] for text), or send a Vec \
            itself with send_owned; an Option's or enum's tag has invalid bit patterns: send \
            a flag and a value; a Cell's interior mutability cannot be sent as bytes"
)]
pub unsafe trait Datatype: Copy + Send + Sync + 'static {
    /// The type map of one value of `Self` as a constant, computed at compile time.
    ///
    /// ```
    /// use rpar::{BasicType, Datatype, TypeLayout};
    /// assert_eq!(f64::LAYOUT, TypeLayout::Basic(BasicType::F64));
    /// const PAIRS: [(BasicType, isize); 2] = <[u16; 2]>::LAYOUT.entries();
    /// assert_eq!(PAIRS, [(BasicType::U16, 0), (BasicType::U16, 2)]);
    /// ```
    const LAYOUT: TypeLayout;

    /// The type map of one value of `Self`: the map of [`LAYOUT`](Self::LAYOUT), with lower
    /// bound 0 and extent `size_of::<Self>()`. Basic types and non-generic derived structs
    /// return a static map (nothing is built); other types build it from the constant.
    ///
    /// ```
    /// use rpar::Datatype;
    /// #[derive(Datatype, Clone, Copy)]
    /// struct Cell { value: f64, flags: u8 }
    /// let map = Cell::type_map();
    /// assert_eq!((map.lb(), map.extent() as usize), (0, std::mem::size_of::<Cell>()));
    /// assert_eq!(map.size(), 8 + 1); // data only, not the padding
    /// ```
    fn type_map() -> TypeMap {
        TypeMap::from_layout(&Self::LAYOUT)
    }
}
