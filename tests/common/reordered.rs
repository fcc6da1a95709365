//! Structs whose fields Rust stores in another order than they are declared, shared by
//! `tests/datatype_typed.rs` and `tests/mpi.rs`: neither has padding, but the derived type map
//! is in declaration order, so it is not in memory order, and packed bytes (in map order) must
//! not be copied into them as they are.

use rpar::Datatype;

/// Rust puts `b` first: `{(bool, 6), (u32, 0), (u16, 4), (u8, 7)}`.
#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
pub(crate) struct Reordered {
    a: bool,
    b: u32,
    c: u16,
    d: u8,
}

/// The same with a `char`, which Rust puts first: `{(u16, 4), (char, 0), (u16, 6)}`.
#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
pub(crate) struct ReorderedChar {
    a: u16,
    ch: char,
    c: u16,
}

impl Reordered {
    /// The `k`-th of a sequence of distinct values.
    pub(crate) fn nth(k: usize) -> Self {
        Reordered {
            a: k % 2 == 1,
            b: 0x0a0b_0c0d ^ k as u32,
            c: 0x0203 ^ k as u16,
            d: k as u8,
        }
    }
}

impl ReorderedChar {
    /// The `k`-th of a sequence of values; misplaced, the `u16`s would make the char
    /// 0xfffe_xxxx, which is none.
    pub(crate) fn nth(k: usize) -> Self {
        ReorderedChar {
            a: 0xfffe,
            ch: char::from_u32(0x41 + (k as u32 % 0x1000)).unwrap_or('?'),
            c: 0xfffe ^ k as u16,
        }
    }
}

/// Asserts the premise of the tests: no padding, and yet a map not in memory order.
pub(crate) fn assert_reordered<T: Datatype>() {
    let map = T::type_map();
    assert_eq!(map.size(), std::mem::size_of::<T>(), "{map}");
    assert!(!map.is_dense(), "{map}");
}
