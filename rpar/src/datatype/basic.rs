//! The basic (predefined) types that type maps are made of: MPI's `MPI_INT32_T`, `MPI_DOUBLE`, ….

use std::fmt;

/// A predefined element type: the building block of every [`TypeMap`](super::TypeMap) (MPI's
/// predefined datatypes, `MPI_INT32_T`, `MPI_DOUBLE`, `MPI_BYTE`, …: each variant names its own).
///
/// Prints as its Rust name (`f64`, `i32`, …), the lecture's notation for type maps.
///
/// ```
/// use rpar::{BasicType, Datatype};
/// assert_eq!(f64::type_map().entries(), [(BasicType::F64, 0)]);
/// assert_eq!(BasicType::I32.to_string(), "i32");
/// let pair = <(u8, f32)>::type_map();
/// assert_eq!(pair.signature().collect::<Vec<_>>(), [BasicType::U8, BasicType::F32]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum BasicType {
    /// `i8` (`MPI_INT8_T`)
    I8,
    /// `i16` (`MPI_INT16_T`)
    I16,
    /// `i32` (`MPI_INT32_T`)
    I32,
    /// `i64` (`MPI_INT64_T`)
    I64,
    /// `i128`
    I128,
    /// `isize` (`MPI_AINT`)
    Isize,
    /// `u8` (`MPI_UINT8_T`)
    U8,
    /// `u16` (`MPI_UINT16_T`)
    U16,
    /// `u32` (`MPI_UINT32_T`)
    U32,
    /// `u64` (`MPI_UINT64_T`)
    U64,
    /// `u128`
    U128,
    /// `usize`
    Usize,
    /// `f32` (`MPI_FLOAT`)
    F32,
    /// `f64` (`MPI_DOUBLE`)
    F64,
    /// `bool` (`MPI_C_BOOL`): only the bytes 0 and 1 are valid.
    Bool,
    /// `char`: a Unicode scalar value in 4 bytes.
    Char,
    /// An uninterpreted byte (`MPI_BYTE`): matches only `Byte`.
    Byte,
    /// [`Complex<f32>`](num_complex::Complex) (`MPI_C_FLOAT_COMPLEX`): real and imaginary
    /// part, one basic value of 8 bytes.
    C32,
    /// [`Complex<f64>`](num_complex::Complex) (`MPI_C_DOUBLE_COMPLEX`): real and imaginary
    /// part, one basic value of 16 bytes.
    C64,
}

impl BasicType {
    /// Every basic type, in the order of its [`code`](Self::code).
    pub(crate) const ALL: [BasicType; 19] = {
        use BasicType::*;
        [
            I8, I16, I32, I64, I128, Isize, U8, U16, U32, U64, U128, Usize, F32, F64, Bool, Char,
            Byte, C32, C64,
        ]
    };

    /// The type as a small number, its place in [`BasicType::ALL`]: what the MPI transport's
    /// headers and the typed collectives' fingerprints carry.
    pub(crate) const fn code(self) -> u8 {
        self as u8
    }

    /// The basic type of a [`code`](Self::code), if it is one.
    pub(crate) fn from_code(code: u8) -> Option<BasicType> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// Size in bytes (MPI_Type_size of the predefined type).
    ///
    /// ```
    /// assert_eq!(rpar::BasicType::F64.size(), 8);
    /// ```
    pub const fn size(self) -> usize {
        use BasicType::*;
        match self {
            I8 | U8 | Bool | Byte => 1,
            I16 | U16 => 2,
            I32 | U32 | F32 | Char => 4,
            I64 | U64 | F64 | C32 => 8,
            I128 | U128 | C64 => 16,
            Isize | Usize => std::mem::size_of::<usize>(),
        }
    }

    /// Alignment in bytes, as Rust (and the C ABI) lays the type out.
    ///
    /// ```
    /// use rpar::BasicType;
    /// assert_eq!(BasicType::I16.align(), std::mem::align_of::<i16>());
    /// assert_eq!(BasicType::F64.align(), std::mem::align_of::<f64>());
    /// assert_eq!(BasicType::Byte.align(), 1);
    /// ```
    pub const fn align(self) -> usize {
        use BasicType::*;
        match self {
            I8 | U8 | Bool | Byte => 1,
            I16 | U16 => 2,
            I32 | U32 | F32 | Char | C32 => 4,
            I64 | U64 | F64 | C64 => std::mem::align_of::<f64>(),
            I128 | U128 => std::mem::align_of::<u128>(),
            Isize | Usize => std::mem::align_of::<usize>(),
        }
    }

    /// The Rust name of the type, as printed in type maps (`byte` for [`BasicType::Byte`]);
    /// MPI_Type_get_name gives MPI's (`MPI_DOUBLE` for `f64`).
    ///
    /// ```
    /// use rpar::BasicType;
    /// assert_eq!(BasicType::U64.name(), "u64");
    /// assert_eq!(BasicType::Byte.name(), "byte");
    /// ```
    pub const fn name(self) -> &'static str {
        use BasicType::*;
        match self {
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            I128 => "i128",
            Isize => "isize",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            U128 => "u128",
            Usize => "usize",
            F32 => "f32",
            F64 => "f64",
            Bool => "bool",
            Char => "char",
            Byte => "byte",
            C32 => "Complex<f32>",
            C64 => "Complex<f64>",
        }
    }

    /// Whether every bit pattern of the type's bytes is a valid value (false for `bool`, `char`).
    /// Bytes received or unpacked into a type where this is false are validated first.
    ///
    /// ```
    /// use rpar::BasicType;
    /// assert!(BasicType::F32.all_bit_patterns_valid());
    /// assert!(!BasicType::Bool.all_bit_patterns_valid()); // only 0 and 1
    /// assert!(!BasicType::Char.all_bit_patterns_valid()); // no surrogates, nothing past U+10FFFF
    /// ```
    pub const fn all_bit_patterns_valid(self) -> bool {
        !matches!(self, BasicType::Bool | BasicType::Char)
    }
}

impl fmt::Display for BasicType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::BasicType;

    #[test]
    fn every_basic_type_has_its_own_code() {
        for (i, b) in BasicType::ALL.into_iter().enumerate() {
            assert_eq!(
                (usize::from(b.code()), BasicType::from_code(b.code())),
                (i, Some(b))
            );
        }
        assert_eq!(BasicType::from_code(BasicType::ALL.len() as u8), None);
    }
}
