//! [`Datatype`] for the primitive types, the complex numbers of `num-complex`, arrays and
//! tuples of any `Datatype`s.

use super::{BasicType, Datatype, TypeLayout, TypeMap};

macro_rules! basic_datatype {
    ($($ty:ty => $basic:ident),* $(,)?) => {$(
        // SAFETY: a primitive is one value of its basic type at displacement 0, no padding.
        unsafe impl Datatype for $ty {
            const LAYOUT: TypeLayout = TypeLayout::Basic(BasicType::$basic);
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
    num_complex::Complex<f32> => C32, num_complex::Complex<f64> => C64,
}

// SAFETY: an array is N elements at multiples of size_of::<T>(), the extent of T's map; its
// size is N * size_of::<T>() with no padding between elements.
unsafe impl<T: Datatype, const N: usize> Datatype for [T; N] {
    const LAYOUT: TypeLayout = TypeLayout::Array {
        elem: &T::LAYOUT,
        len: N,
    };
}

macro_rules! tuple_datatype {
    ($(($($t:ident . $i:tt),+))*) => {$(
        // SAFETY: each component's map sits at the component's offset (offset_of!), the
        // extent is the tuple's size; the bytes between components are the tuple's padding.
        unsafe impl<$($t: Datatype),+> Datatype for ($($t,)+) {
            const LAYOUT: TypeLayout = TypeLayout::Struct {
                size: std::mem::size_of::<Self>(),
                fields: &[$((std::mem::offset_of!(Self, $i), &$t::LAYOUT)),+],
            };
        }
    )*};
}

tuple_datatype! {
    (A.0)
    (A.0, B.1)
    (A.0, B.1, C.2)
    (A.0, B.1, C.2, D.3)
    (A.0, B.1, C.2, D.3, E.4)
    (A.0, B.1, C.2, D.3, E.4, F.5)
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6)
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7)
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8)
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9)
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10)
    (A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7, I.8, J.9, K.10, L.11)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuple_maps_follow_the_rust_layout() {
        let map = <(u8, f64, i16)>::type_map();
        let t = (0u8, 0f64, 0i16);
        let base = &t as *const _ as usize;
        let offsets = [
            &t.0 as *const _ as usize - base,
            &t.1 as *const _ as usize - base,
            &t.2 as *const _ as usize - base,
        ];
        let got: Vec<isize> = map.entries().iter().map(|&(_, d)| d).collect();
        assert_eq!(got, offsets.map(|o| o as isize));
        assert_eq!(map.extent() as usize, std::mem::size_of::<(u8, f64, i16)>());
        assert_eq!(map.size(), 11);
    }
}
