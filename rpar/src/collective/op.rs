//! Typed reduction operators (MPI_Op): what `reduce`, `allreduce`, `scan`, `exscan` and
//! `reduce_scatter` combine with.
//!
//! An operator is a value of a type that implements [`ReduceOp<T>`] for the element types it
//! applies to, so `allreduce(&x, BAnd)` on an `f64` does not compile (MPI reports that at run
//! time). The predefined operators follow MPI's table of which operation applies to which type:
//!
//! | operator | MPI | element types |
//! |---|---|---|
//! | [`Sum`], [`Prod`] | MPI_SUM, MPI_PROD | integers (wrapping, as C's unsigned arithmetic), `f32`, `f64`, [`Complex<f32>`](crate::Complex), [`Complex<f64>`](crate::Complex) |
//! | [`Min`], [`Max`] | MPI_MIN, MPI_MAX | integers, `f32`, `f64` (not complex numbers, which have no order: it does not compile) |
//! | [`LAnd`], [`LOr`], [`LXor`] | MPI_LAND, MPI_LOR, MPI_LXOR | `bool`, integers (nonzero is true; the result is 0 or 1) |
//! | [`BAnd`], [`BOr`], [`BXor`] | MPI_BAND, MPI_BOR, MPI_BXOR | integers |
//! | [`MinLoc`], [`MaxLoc`] | MPI_MINLOC, MPI_MAXLOC | [`Loc<V, I>`] (value, index) pairs |
//! | [`UserOp`] | MPI_Op_create | any `Datatype`, with a commutativity flag |
//! | [`BufferOp`](crate::BufferOp) | MPI_Op_create with an `MPI_User_function` over whole buffers | blocks of a run-time length of any `Datatype` |
//!
//! Every predefined operator also applies elementwise to arrays `[T; N]` of the types it
//! applies to. All predefined operators are commutative (and, except for floating-point `Sum` and
//! `Prod`, associative); a [`UserOp`] must be associative and says whether it commutes. The
//! algorithms combine a lower rank's contribution on the left, `lower ∘ higher`, so a
//! non-commutative operator gets the rank-ordered result `x0 ∘ x1 ∘ … ∘ x(p-1)`.

use crate::datatype::{Datatype, TypeLayout};
use crate::{Error, Result};
use num_complex::Complex;

/// A reduction operator on elements of type `T` (MPI_Op), applied elementwise to slices.
///
/// `combine(a, b)` is `a ∘ b` where `a` comes from the lower ranks. The operator must be
/// associative; [`is_commutative`](ReduceOp::is_commutative) tells the algorithms whether they
/// may also reorder operands.
///
/// ```
/// use rpar::{ReduceOp, Max, Sum};
/// assert_eq!(Sum.combine(2u8, 255), 1); // integers wrap, as in MPI
/// let mut acc = [1.0f64, 5.0];
/// Max.reduce_right(&mut acc[..], &[3.0, 2.0]);
/// assert_eq!(acc, [3.0, 5.0]);
/// assert!(ReduceOp::<f64>::is_commutative(&Max));
/// ```
pub trait ReduceOp<T: Copy> {
    /// `a ∘ b`, with `a` from the lower ranks.
    fn combine(&self, a: T, b: T) -> T;

    /// Whether `a ∘ b == b ∘ a` for all operands (the `commute` flag of MPI_Op_create).
    fn is_commutative(&self) -> bool;

    /// The MPI predefined operator this is (`MPI_SUM`, …), if any: on the MPI transport a
    /// reduction with one runs as MPI's own. `None` (the default) for user operators.
    ///
    /// ```
    /// use rpar::{Predefined, ReduceOp, Sum, UserOp};
    /// assert_eq!(ReduceOp::<f64>::predefined(&Sum), Some(Predefined::Sum));
    /// assert_eq!(ReduceOp::<i32>::predefined(&UserOp::commutative(|a: i32, b| a + b)), None);
    /// ```
    fn predefined(&self) -> Option<Predefined> {
        None
    }

    /// How many consecutive elements make one operand (1, the default, for the element-wise
    /// operators; a [`BufferOp`](crate::BufferOp)'s block otherwise: MPI's datatype of the
    /// reduction). The algorithms split buffers only at multiples of it, and a reduction of a
    /// buffer that is not a whole number of operands is an error.
    ///
    /// ```
    /// use rpar::{BufferOp, ReduceOp, Sum};
    /// assert_eq!(ReduceOp::<f64>::block_len(&Sum), 1);
    /// let op = BufferOp::commutative(9, |_: &[f64], _: &mut [f64]| {});
    /// assert_eq!(ReduceOp::<f64>::block_len(&op), 9);
    /// ```
    fn block_len(&self) -> usize {
        1
    }

    /// `acc[i] = lower[i] ∘ acc[i]` for every `i` (MPI's `inoutvec = invec op inoutvec`).
    /// Both slices have the same length.
    fn reduce_left(&self, lower: &[T], acc: &mut [T]) {
        debug_assert_eq!(lower.len(), acc.len());
        for (a, &x) in acc.iter_mut().zip(lower) {
            *a = self.combine(x, *a);
        }
    }

    /// `acc[i] = acc[i] ∘ higher[i]` for every `i`. Both slices have the same length.
    fn reduce_right(&self, acc: &mut [T], higher: &[T]) {
        debug_assert_eq!(higher.len(), acc.len());
        for (a, &y) in acc.iter_mut().zip(higher) {
            *a = self.combine(*a, y);
        }
    }
}

/// An operator used by reference: lets one operator value serve several calls.
impl<T: Copy, O: ReduceOp<T> + ?Sized> ReduceOp<T> for &O {
    #[inline]
    fn combine(&self, a: T, b: T) -> T {
        (**self).combine(a, b)
    }
    fn is_commutative(&self) -> bool {
        (**self).is_commutative()
    }
    fn predefined(&self) -> Option<Predefined> {
        (**self).predefined()
    }
    fn block_len(&self) -> usize {
        (**self).block_len()
    }
    fn reduce_left(&self, lower: &[T], acc: &mut [T]) {
        (**self).reduce_left(lower, acc);
    }
    fn reduce_right(&self, acc: &mut [T], higher: &[T]) {
        (**self).reduce_right(acc, higher);
    }
}

/// Checks that `len` elements are a whole number of `op`'s operands ([`ReduceOp::block_len`]),
/// for the reduction `call`.
pub(crate) fn check_blocks<T: Copy, O: ReduceOp<T> + ?Sized>(
    op: &O,
    len: usize,
    call: &'static str,
) -> Result<()> {
    let block = op.block_len().max(1);
    if len.is_multiple_of(block) {
        return Ok(());
    }
    Err(Error::invalid(
        call,
        format!(
            "expected a whole number of the operator's blocks of {block} elements, got {len} \
             elements ({} blocks and {} over)",
            len / block,
            len % block
        ),
    ))
}

/// Combines `input` into `inout` with `op` on this rank alone, `inout[i] = input[i] ∘
/// inout[i]` (MPI_Reduce_local: `input` is the left operand, as a lower rank's contribution
/// in the collectives).
///
/// # Errors
///
/// [`Error::InvalidArgument`] if the buffers' lengths differ, or are not a whole number of
/// `op`'s operands ([`ReduceOp::block_len`]); `inout` is then left as it was.
///
/// ```
/// use rpar::{reduce_local, Max, UserOp};
/// let mut acc = [1, 7, 3];
/// reduce_local(&[4, 5, 6], &mut acc, Max)?;
/// assert_eq!(acc, [4, 7, 6]);
/// // a non-commutative operator: the input is on the left
/// let mut s = [10];
/// reduce_local(&[100], &mut s, UserOp::non_commutative(|a: i32, b| a - b))?;
/// assert_eq!(s, [90]);
/// assert!(reduce_local(&[1, 2], &mut acc, Max).is_err());
/// # Ok::<(), rpar::Error>(())
/// ```
pub fn reduce_local<T: Copy, O: ReduceOp<T>>(input: &[T], inout: &mut [T], op: O) -> Result<()> {
    const CALL: &str = "reduce_local";
    if input.len() != inout.len() {
        return Err(Error::invalid(
            CALL,
            format!(
                "the input and the input-output buffer must have the same length, got {} and {} \
                 elements",
                input.len(),
                inout.len()
            ),
        ));
    }
    check_blocks(&op, inout.len(), CALL)?;
    op.reduce_left(input, inout);
    Ok(())
}

/// MPI's predefined reduction operators (MPI_SUM, MPI_PROD, …) that rpar's operator types
/// stand for, as [`ReduceOp::predefined`] reports them: on the MPI transport, a reduction with
/// one of them runs as MPI's own. [`MinLoc`] and [`MaxLoc`] (MPI_MINLOC, MPI_MAXLOC) and
/// [`UserOp`]s have none and run rpar's algorithms on every transport.
///
/// ```
/// use rpar::{BXor, Loc, MinLoc, Predefined, ReduceOp, Sum, UserOp};
/// assert_eq!(ReduceOp::<u8>::predefined(&BXor), Some(Predefined::BXor));
/// assert_eq!(ReduceOp::<[f64; 3]>::predefined(&Sum), Some(Predefined::Sum)); // elementwise
/// assert_eq!(ReduceOp::<Loc<f64>>::predefined(&MinLoc), None);
/// assert_eq!(ReduceOp::<i32>::predefined(&UserOp::commutative(|a: i32, b| a + b)), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Predefined {
    /// MPI_SUM
    Sum,
    /// MPI_PROD
    Prod,
    /// MPI_MIN
    Min,
    /// MPI_MAX
    Max,
    /// MPI_LAND
    LAnd,
    /// MPI_LOR
    LOr,
    /// MPI_LXOR
    LXor,
    /// MPI_BAND
    BAnd,
    /// MPI_BOR
    BOr,
    /// MPI_BXOR
    BXor,
}

macro_rules! predefined_op {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        /// Elementwise on arrays.
        impl<T: Copy, const N: usize> ReduceOp<[T; N]> for $name
        where
            $name: ReduceOp<T>,
        {
            #[inline]
            fn combine(&self, a: [T; N], b: [T; N]) -> [T; N] {
                let mut out = a;
                for (o, y) in out.iter_mut().zip(b) {
                    *o = self.combine(*o, y);
                }
                out
            }
            fn is_commutative(&self) -> bool {
                true
            }
            fn predefined(&self) -> Option<Predefined> {
                <Self as ReduceOp<T>>::predefined(self)
            }
        }
    };
}

/// Implements `ReduceOp<$ty> for $op` by `|$a, $b| $body`, for each listed type.
macro_rules! impl_op {
    ($op:ident for $($ty:ty),* => |$a:ident, $b:ident| $body:expr) => {$(
        impl ReduceOp<$ty> for $op {
            #[inline]
            fn combine(&self, $a: $ty, $b: $ty) -> $ty {
                $body
            }
            fn is_commutative(&self) -> bool {
                true
            }
            fn predefined(&self) -> Option<Predefined> {
                Some(Predefined::$op)
            }
        }
    )*};
}

/// Applies `$m!(op for types => body)` over the integer types.
macro_rules! for_integers {
    ($m:ident!($op:ident => |$a:ident, $b:ident| $body:expr)) => {
        $m!($op for i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
            => |$a, $b| $body);
    };
}

predefined_op!(
    /// Sum (MPI_SUM). Integers wrap on overflow.
    ///
    /// ```
    /// let sums = rpar::run(4, |world| world.allreduce(&(world.rank() as u64), rpar::Sum))?;
    /// assert_eq!(sums, vec![6; 4]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    Sum
);
predefined_op!(
    /// Product (MPI_PROD). Integers wrap on overflow.
    ///
    /// ```
    /// let p = rpar::run(4, |world| world.allreduce(&(world.rank() as i32 + 1), rpar::Prod))?;
    /// assert_eq!(p, vec![24; 4]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    Prod
);
predefined_op!(
    /// Minimum (MPI_MIN). For floats, a NaN operand loses against a number (`f64::min`).
    ///
    /// ```
    /// let m = rpar::run(3, |world| world.allreduce(&[world.rank() as f64 - 1.0][..], rpar::Min))?;
    /// assert_eq!(m[2], vec![-1.0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    Min
);
predefined_op!(
    /// Maximum (MPI_MAX). For floats, a NaN operand loses against a number (`f64::max`).
    ///
    /// ```
    /// let m = rpar::run(3, |world| world.allreduce(&(world.rank() as i8), rpar::Max))?;
    /// assert_eq!(m, vec![2; 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    Max
);
predefined_op!(
    /// Logical and (MPI_LAND): on `bool`, or on integers where nonzero is true (result 0 or 1).
    ///
    /// ```
    /// let all = rpar::run(3, |world| world.allreduce(&(world.rank() < 5), rpar::LAnd))?;
    /// assert_eq!(all, vec![true; 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    LAnd
);
predefined_op!(
    /// Logical or (MPI_LOR): on `bool`, or on integers where nonzero is true (result 0 or 1).
    ///
    /// ```
    /// let any = rpar::run(3, |world| world.allreduce(&(world.rank() == 1), rpar::LOr))?;
    /// assert_eq!(any, vec![true; 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    LOr
);
predefined_op!(
    /// Logical exclusive or (MPI_LXOR): on `bool`, or on integers where nonzero is true.
    ///
    /// ```
    /// let odd = rpar::run(3, |world| world.allreduce(&true, rpar::LXor))?;
    /// assert_eq!(odd, vec![true; 3]); // three trues
    /// # Ok::<(), rpar::Error>(())
    /// ```
    LXor
);
predefined_op!(
    /// Bitwise and (MPI_BAND), on integers.
    ///
    /// ```
    /// let b = rpar::run(2, |world| world.allreduce(&(0b110u8 >> world.rank()), rpar::BAnd))?;
    /// assert_eq!(b, vec![0b010; 2]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    BAnd
);
predefined_op!(
    /// Bitwise or (MPI_BOR), on integers.
    ///
    /// ```
    /// let b = rpar::run(4, |world| world.allreduce(&(1u32 << world.rank()), rpar::BOr))?;
    /// assert_eq!(b, vec![0b1111; 4]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    BOr
);
predefined_op!(
    /// Bitwise exclusive or (MPI_BXOR), on integers.
    ///
    /// ```
    /// let b = rpar::run(3, |world| world.allreduce(&(world.rank() as u16 + 1), rpar::BXor))?;
    /// assert_eq!(b, vec![1 ^ 2 ^ 3; 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    BXor
);
predefined_op!(
    /// The smallest value and its index (MPI_MINLOC), on [`Loc`] pairs; among equal values the
    /// lowest index wins.
    ///
    /// ```
    /// use rpar::{Loc, MinLoc};
    /// let v = [3.0, 1.0, 1.0, 2.0];
    /// let m = rpar::run(4, |world| {
    ///     let r = world.rank();
    ///     world.allreduce(&Loc { value: v[r], index: r }, MinLoc)
    /// })?;
    /// assert_eq!(m[0], Loc { value: 1.0, index: 1 });
    /// # Ok::<(), rpar::Error>(())
    /// ```
    MinLoc
);
predefined_op!(
    /// The largest value and its index (MPI_MAXLOC), on [`Loc`] pairs; among equal values the
    /// lowest index wins.
    ///
    /// ```
    /// use rpar::{Loc, MaxLoc};
    /// let m = rpar::run(3, |world| world.allreduce(&Loc { value: 7u8, index: world.rank() }, MaxLoc))?;
    /// assert_eq!(m[2], Loc { value: 7, index: 0 });
    /// # Ok::<(), rpar::Error>(())
    /// ```
    MaxLoc
);

for_integers!(impl_op!(Sum => |a, b| a.wrapping_add(b)));
impl_op!(Sum for f32, f64, Complex<f32>, Complex<f64> => |a, b| a + b);
for_integers!(impl_op!(Prod => |a, b| a.wrapping_mul(b)));
// complex: C's `a * b` without Annex G's recovery of infinities, as MPICH computes MPI_PROD
impl_op!(Prod for f32, f64, Complex<f32>, Complex<f64> => |a, b| a * b);
for_integers!(impl_op!(Min => |a, b| a.min(b)));
impl_op!(Min for f32, f64 => |a, b| a.min(b));
for_integers!(impl_op!(Max => |a, b| a.max(b)));
impl_op!(Max for f32, f64 => |a, b| a.max(b));
for_integers!(impl_op!(LAnd => |a, b| ((a != 0) && (b != 0)) as _));
impl_op!(LAnd for bool => |a, b| a && b);
for_integers!(impl_op!(LOr => |a, b| ((a != 0) || (b != 0)) as _));
impl_op!(LOr for bool => |a, b| a || b);
for_integers!(impl_op!(LXor => |a, b| ((a != 0) != (b != 0)) as _));
impl_op!(LXor for bool => |a, b| a != b);
for_integers!(impl_op!(BAnd => |a, b| a & b));
for_integers!(impl_op!(BOr => |a, b| a | b));
for_integers!(impl_op!(BXor => |a, b| a ^ b));

/// A value with an index, the operand of [`MinLoc`] and [`MaxLoc`] (MPI's pair types such as
/// MPI_DOUBLE_INT and MPI_2INT). The index is typically a rank or a position.
///
/// ```
/// use rpar::{Datatype, Loc};
/// assert_eq!(<Loc<f64, u32>>::type_map().size(), 12); // 8 + 4 bytes, 4 of padding
/// ```
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Loc<V, I = usize> {
    /// The value compared.
    pub value: V,
    /// Where it came from; the lowest index wins among equal values.
    pub index: I,
}

// SAFETY: `Loc` is `repr(C)`: `value` and `index` lie at the offsets `offset_of!` reports, each
// described by its own (exact) type map shifted there; the remaining bytes are `repr(C)` padding.
// The extent is `size_of::<Self>()` and the lower bound 0.
unsafe impl<V: Datatype, I: Datatype> Datatype for Loc<V, I> {
    const LAYOUT: TypeLayout = TypeLayout::Struct {
        size: std::mem::size_of::<Self>(),
        fields: &[
            (std::mem::offset_of!(Self, value), &V::LAYOUT),
            (std::mem::offset_of!(Self, index), &I::LAYOUT),
        ],
    };
}

/// The winner of two `Loc`s: `a` if `pick_a(a, b)` holds, `b` if `pick_a(b, a)`, else (equal or
/// unordered values) the value of `a` with the lower index.
#[inline]
fn loc_pick<V: PartialOrd + Copy, I: Ord + Copy>(
    a: Loc<V, I>,
    b: Loc<V, I>,
    better: impl Fn(&V, &V) -> bool,
) -> Loc<V, I> {
    if better(&a.value, &b.value) {
        a
    } else if better(&b.value, &a.value) {
        b
    } else {
        Loc {
            value: a.value,
            index: a.index.min(b.index),
        }
    }
}

crate::universe::value_results!(@one [T] Complex<T> [Complex<T>: Datatype]);
crate::universe::value_results!(@one [V: Datatype, I: Datatype] Loc<V, I> []);

impl<V: PartialOrd + Copy, I: Ord + Copy> ReduceOp<Loc<V, I>> for MinLoc {
    #[inline]
    fn combine(&self, a: Loc<V, I>, b: Loc<V, I>) -> Loc<V, I> {
        loc_pick(a, b, |x, y| x < y)
    }
    fn is_commutative(&self) -> bool {
        true
    }
}

impl<V: PartialOrd + Copy, I: Ord + Copy> ReduceOp<Loc<V, I>> for MaxLoc {
    #[inline]
    fn combine(&self, a: Loc<V, I>, b: Loc<V, I>) -> Loc<V, I> {
        loc_pick(a, b, |x, y| x > y)
    }
    fn is_commutative(&self) -> bool {
        true
    }
}

/// A user-defined operator from an associative closure `f(lower, higher)` (MPI_Op_create), with
/// the commutativity flag that tells the algorithms whether they may reorder operands.
///
/// ```
/// use rpar::UserOp;
/// // 2x2 integer matrix product: associative, not commutative.
/// let matmul = UserOp::non_commutative(|a: [i64; 4], b: [i64; 4]| {
///     [a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
///      a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]]
/// });
/// let prods = rpar::run(3, |world| {
///     let r = world.rank() as i64;
///     world.allreduce(&[1, r, 0, 1], &matmul) // [[1, r], [0, 1]] multiply to [[1, 0+1+2], [0, 1]]
/// })?;
/// assert_eq!(prods[0], [1, 3, 0, 1]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct UserOp<F> {
    f: F,
    commutative: bool,
}

impl<F> UserOp<F> {
    /// An operator that is associative and commutative: MPI_Op_create with `commute = 1`. The
    /// algorithms may then combine contributions out of rank order (the rings of
    /// [`ReduceScatter::Ring`](crate::ReduceScatter::Ring) and
    /// [`Allreduce::Ring`](crate::Allreduce::Ring) do).
    ///
    /// ```
    /// use rpar::{ReduceOp, UserOp};
    /// // greatest common divisor: associative and commutative
    /// let gcd = UserOp::commutative(|mut a: u64, mut b: u64| {
    ///     while b != 0 {
    ///         (a, b) = (b, a % b);
    ///     }
    ///     a
    /// });
    /// assert!(ReduceOp::<u64>::is_commutative(&gcd));
    /// let got = rpar::run(3, |world| world.allreduce(&[12u64, 18, 30][world.rank()], &gcd))?;
    /// assert_eq!(got, vec![6; 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn commutative(f: F) -> Self {
        UserOp {
            f,
            commutative: true,
        }
    }

    /// An operator that is associative but not commutative: results are combined in rank order
    /// (MPI_Op_create with `commute = 0`).
    ///
    /// ```
    /// use rpar::{ReduceOp, UserOp};
    /// // appending decimal digits, as (value, 10^digits)
    /// let append = UserOp::non_commutative(|a: [u64; 2], b: [u64; 2]| {
    ///     [a[0] * b[1] + b[0], a[1] * b[1]]
    /// });
    /// assert!(!ReduceOp::<[u64; 2]>::is_commutative(&append));
    /// let got = rpar::run(4, |world| world.scan(&[world.rank() as u64 + 1, 10], &append))?;
    /// assert_eq!(got[1], [12, 100]);
    /// assert_eq!(got[3], [1234, 10_000]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn non_commutative(f: F) -> Self {
        UserOp {
            f,
            commutative: false,
        }
    }

    /// An operator with an explicit commutativity flag (MPI_Op_create's `commute`).
    ///
    /// ```
    /// use rpar::{ReduceOp, UserOp};
    /// let max_abs = UserOp::new(|a: i32, b: i32| a.abs().max(b.abs()), true);
    /// assert!(ReduceOp::<i32>::is_commutative(&max_abs));
    /// let got = rpar::run(3, |world| world.allreduce(&[-7, 2, 5][world.rank()], &max_abs))?;
    /// assert_eq!(got, vec![7; 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn new(f: F, commutative: bool) -> Self {
        UserOp { f, commutative }
    }
}

impl<F> std::fmt::Debug for UserOp<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserOp")
            .field("commutative", &self.commutative)
            .finish_non_exhaustive()
    }
}

impl<T: Copy, F: Fn(T, T) -> T> ReduceOp<T> for UserOp<F> {
    #[inline]
    fn combine(&self, a: T, b: T) -> T {
        (self.f)(a, b)
    }
    fn is_commutative(&self) -> bool {
        self.commutative
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ops_wrap_and_follow_mpi() {
        assert_eq!(Sum.combine(250u8, 10), 4);
        assert_eq!(Prod.combine(i32::MAX, 2), -2);
        assert_eq!(LAnd.combine(3i32, 4), 1);
        assert_eq!(LOr.combine(0u64, 0), 0);
        assert_eq!(LXor.combine(5i8, 0), 1);
        assert_eq!(LXor.combine(5i8, -1), 0);
        assert_eq!(BXor.combine(0b1100u8, 0b1010), 0b0110);
        assert_eq!(Min.combine(-1i64, 3), -1);
        assert_eq!(Max.combine(2.5f32, -1.0), 2.5);
    }

    #[test]
    fn loc_ties_go_to_the_lowest_index() {
        let a = Loc {
            value: 1,
            index: 5u32,
        };
        let b = Loc {
            value: 1,
            index: 2u32,
        };
        assert_eq!(MinLoc.combine(a, b).index, 2);
        assert_eq!(MaxLoc.combine(b, a).index, 2);
        let c = Loc {
            value: 0,
            index: 9u32,
        };
        assert_eq!(MinLoc.combine(a, c), c);
        assert_eq!(MaxLoc.combine(a, c), a);
    }

    #[test]
    fn arrays_reduce_elementwise() {
        assert_eq!(Sum.combine([1u8, 2], [3, 4]), [4, 6]);
        assert_eq!(Max.combine([[1i8, 9]], [[5, 2]]), [[5, 9]]);
    }

    #[test]
    fn slice_forms_keep_the_operand_order() {
        let cat = UserOp::non_commutative(|a: u64, b: u64| a * 10 + b);
        let mut acc = [2u64, 3];
        cat.reduce_left(&[1, 1], &mut acc);
        assert_eq!(acc, [12, 13]);
        cat.reduce_right(&mut acc, &[4, 5]);
        assert_eq!(acc, [124, 135]);
        assert!(!cat.is_commutative());
    }

    #[test]
    fn loc_type_map_covers_both_fields() {
        let map = <Loc<f64, u32>>::type_map();
        assert_eq!(map.size(), 12);
        assert_eq!(map.extent(), 16);
        assert_eq!(
            map.entries(),
            &[(crate::BasicType::F64, 0), (crate::BasicType::U32, 8)]
        );
    }
}
