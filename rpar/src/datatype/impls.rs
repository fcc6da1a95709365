//! [`Datatype`] for the primitive types and for arrays of any `Datatype`.

use super::{BasicType, Datatype, TypeMap};

macro_rules! basic_datatype {
    ($($ty:ty => $basic:ident),* $(,)?) => {$(
        // SAFETY: a primitive is one value of its basic type at displacement 0, no padding.
        unsafe impl Datatype for $ty {
            fn type_map() -> TypeMap {
                TypeMap::basic(BasicType::$basic)
            }
        }
    )*};
}

basic_datatype! {
    i8 => I8, i16 => I16, i32 => I32, i64 => I64, i128 => I128, isize => Isize,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64, u128 => U128, usize => Usize,
    f32 => F32, f64 => F64, bool => Bool, char => Char,
}

// SAFETY: an array is N elements at multiples of size_of::<T>(), the extent of T's map; its
// size is N * size_of::<T>() with no padding between elements.
unsafe impl<T: Datatype, const N: usize> Datatype for [T; N] {
    fn type_map() -> TypeMap {
        let inner = T::type_map();
        let stride = std::mem::size_of::<T>() as isize;
        let entries = (0..N as isize)
            .flat_map(|i| {
                inner
                    .entries()
                    .iter()
                    .map(move |&(b, d)| (b, d + i * stride))
            })
            .collect();
        TypeMap::from_parts(entries, 0, std::mem::size_of::<Self>() as isize)
    }
}
