//! The acceptance suite drawn from MPICH: for each type of `tests/oracle/datatypes.c`, rpar's
//! size, lb, extent, true lb and true extent must equal MPICH's, and packing `count` elements
//! must give exactly the bytes MPICH's `MPI_Pack` gave (`tests/oracle/datatypes.txt`).
//!
//! The source buffer is the oracle's: the byte at offset `o` from the origin is
//! `(o * 31 + 7) mod 256`. Every type is packed from a byte buffer by its byte-for-byte image
//! (each entry replaced by `byte` entries); types of one basic type are also packed from a
//! buffer of that Rust type, which exercises the layout check and the typed copy loops.

use rpar::Distribution::{self as Dist, Block, Cyclic};
use rpar::{BasicType, Datatype, Order, TypeMap};

const HALF: usize = 8192;
const ORACLE: &str = include_str!("oracle/datatypes.txt");

fn t<T: Datatype>() -> TypeMap {
    T::type_map()
}

fn cdi() -> TypeMap {
    TypeMap::structure(&[
        (1, 0, &t::<i8>()),
        (1, 8, &t::<f64>()),
        (1, 16, &t::<i32>()),
    ])
    .unwrap()
}

fn column() -> TypeMap {
    TypeMap::vector(3, 1, 4, &t::<i32>())
        .unwrap()
        .resized(0, 4)
        .unwrap()
}

/// MPI_Type_create_darray's arguments in MPI's order.
fn darray(
    size: usize,
    rank: usize,
    gsizes: &[usize],
    distribs: &[Dist],
    psizes: &[usize],
    order: Order,
    old: &TypeMap,
) -> rpar::Result<TypeMap> {
    TypeMap::darray(size, rank, gsizes, distribs, psizes, order, old)
}

/// The same type built with rpar, by the oracle's name.
fn build(name: &str) -> rpar::Result<TypeMap> {
    let (i8_, i16_, i32_, f32_, f64_) = (t::<i8>(), t::<i16>(), t::<i32>(), t::<f32>(), t::<f64>());
    Ok(match name {
        "contiguous_3_i32" => TypeMap::contiguous(3, &i32_)?,
        "contiguous_0_i32" => TypeMap::contiguous(0, &i32_)?,
        "vector_2_3_4_f64" => TypeMap::vector(2, 3, 4, &f64_)?,
        "vector_3_1_m2_i32" => TypeMap::vector(3, 1, -2, &i32_)?,
        "vector_overlap_i16" => TypeMap::vector(2, 2, 1, &i16_)?,
        "hvector_3_2_m20_i16" => TypeMap::hvector(3, 2, -20, &i16_)?,
        "hvector_3_1_5_i8" => TypeMap::hvector(3, 1, 5, &i8_)?,
        "hvector_2_1_6_i32" => TypeMap::hvector(2, 1, 6, &i32_)?,
        "indexed_unordered_i32" => TypeMap::indexed(&[(2, 5), (1, 0), (3, 10)], &i32_)?,
        "indexed_zero_block_i32" => TypeMap::indexed(&[(1, 4), (0, 100), (2, 0)], &i32_)?,
        "indexed_negative_i16" => TypeMap::indexed(&[(2, -3), (1, 2)], &i16_)?,
        "hindexed_f64" => TypeMap::hindexed(&[(1, 16), (2, -8)], &f64_)?,
        "hindexed_odd_f64" => TypeMap::hindexed(&[(1, 3), (1, 12)], &f64_)?,
        "indexed_block_2_f32" => TypeMap::indexed_block(2, &[3, 0, 7], &f32_)?,
        "hindexed_block_i32" => TypeMap::hindexed_block(1, &[12, 0, 4], &i32_)?,
        "struct_cdi" => cdi(),
        "struct_int_char" => TypeMap::structure(&[(1, 0, &i32_), (1, 4, &i8_)])?,
        "struct_f64_3i8" => TypeMap::structure(&[(1, 0, &f64_), (3, 8, &i8_)])?,
        "struct_char_short" => TypeMap::structure(&[(1, 0, &i8_), (1, 2, &i16_)])?,
        "struct_unordered" => TypeMap::structure(&[(1, 8, &i32_), (1, 0, &f64_)])?,
        "struct_repeated" => TypeMap::structure(&[(1, 0, &i32_), (1, 0, &i32_)])?,
        "struct_3f32_2i8" => TypeMap::structure(&[(3, 0, &f32_), (2, 12, &i8_)])?,
        "struct_nested" => TypeMap::structure(&[(2, 0, &cdi()), (1, 48, &i32_)])?,
        "struct_nested_pad" => TypeMap::structure(&[(1, 0, &cdi()), (1, 24, &i8_)])?,
        "struct_negative" => TypeMap::structure(&[(1, -8, &f64_), (1, 4, &i8_)])?,
        "vector_of_struct" => TypeMap::vector(2, 1, 2, &cdi())?,
        "hvector_m40_struct" => TypeMap::hvector(2, 1, -40, &cdi())?,
        "column_resized" => column(),
        "contiguous_of_column" => TypeMap::contiguous(2, &column())?,
        "resized_i32_m4_12" => i32_.resized(-4, 12)?,
        "resized_struct_shrunk" => cdi().resized(0, 16)?,
        "struct_of_resized" => TypeMap::structure(&[(2, 0, &i32_.resized(0, 8)?), (1, 20, &i8_)])?,
        "struct_resized_char" => TypeMap::structure(&[(1, 0, &f64_), (1, 8, &i8_.resized(0, 3)?)])?,
        "vector_of_vector" => TypeMap::vector(2, 1, 2, &TypeMap::vector(2, 1, 3, &i32_)?)?,
        "subarray_c_2d" => TypeMap::subarray(&[4, 5], &[2, 3], &[1, 1], Order::C, &f64_)?,
        "subarray_f_2d" => TypeMap::subarray(&[4, 5], &[2, 3], &[1, 1], Order::Fortran, &f64_)?,
        "subarray_c_3d" => TypeMap::subarray(&[3, 4, 5], &[2, 2, 3], &[1, 0, 2], Order::C, &i32_)?,
        "subarray_f_3d" => {
            TypeMap::subarray(&[3, 4, 5], &[2, 2, 3], &[1, 0, 2], Order::Fortran, &i32_)?
        }
        "subarray_empty" => TypeMap::subarray(&[6], &[0], &[2], Order::C, &i32_)?,
        "subarray_of_struct" => TypeMap::subarray(&[3, 3], &[2, 1], &[0, 2], Order::C, &cdi())?,
        "struct_u8_i16_u64" => {
            TypeMap::structure(&[(1, 0, &t::<u8>()), (1, 2, &t::<i16>()), (1, 8, &t::<u64>())])?
        }
        // negative extents
        "resized_i16_4_m6" => i16_.resized(4, -6)?,
        "contiguous_of_backwards_i8" => TypeMap::contiguous(3, &i8_.resized(0, -2)?)?,
        "vector_of_backwards_i8" => TypeMap::vector(2, 2, 3, &i8_.resized(0, -2)?)?,
        "resized_vector_m40" => TypeMap::vector(3, 2, 3, &i32_)?.resized(8, -40)?,
        "struct_negative_extent" => {
            TypeMap::structure(&[(1, 0, &i16_.resized(0, -5)?), (1, 0, &i8_.resized(0, -6)?)])?
        }
        "subarray_of_backwards_i32" => {
            TypeMap::subarray(&[2, 3], &[1, 2], &[1, 0], Order::C, &i32_.resized(0, -4)?)?
        }
        "hindexed_of_backwards_f64" => {
            TypeMap::hindexed(&[(2, 16), (1, -8)], &f64_.resized(0, -8)?)?
        }
        // MPI_Type_create_darray
        "darray_block_c_2d" => darray(
            6,
            4,
            &[5, 7],
            &[Block(None), Block(None)],
            &[3, 2],
            Order::C,
            &i32_,
        )?,
        "darray_block_f_2d" => darray(
            6,
            4,
            &[5, 7],
            &[Block(None), Block(None)],
            &[3, 2],
            Order::Fortran,
            &i32_,
        )?,
        "darray_block_c_2d_last" => darray(
            6,
            5,
            &[5, 7],
            &[Block(None), Block(None)],
            &[3, 2],
            Order::C,
            &i32_,
        )?,
        "darray_cyclic_c_2d" => darray(
            4,
            3,
            &[9, 10],
            &[Cyclic(Some(2)), Cyclic(None)],
            &[2, 2],
            Order::C,
            &f64_,
        )?,
        "darray_cyclic_f_2d" => darray(
            4,
            1,
            &[9, 10],
            &[Cyclic(Some(2)), Cyclic(None)],
            &[2, 2],
            Order::Fortran,
            &f64_,
        )?,
        "darray_mixed_f_3d" => darray(
            6,
            5,
            &[4, 5, 6],
            &[Cyclic(Some(1)), Dist::Undistributed, Block(Some(3))],
            &[3, 1, 2],
            Order::Fortran,
            &i16_,
        )?,
        "darray_mixed_c_3d" => darray(
            6,
            2,
            &[4, 5, 6],
            &[Cyclic(Some(1)), Dist::Undistributed, Block(Some(3))],
            &[3, 1, 2],
            Order::C,
            &i16_,
        )?,
        "darray_block_3_of_10" => darray(4, 1, &[10], &[Block(Some(3))], &[4], Order::C, &i32_)?,
        "darray_block_last_short" => darray(4, 3, &[10], &[Block(Some(3))], &[4], Order::C, &i32_)?,
        "darray_block_empty" => darray(4, 3, &[5], &[Block(None)], &[4], Order::C, &i32_)?,
        "darray_cyclic_partial_block" => {
            darray(3, 0, &[10], &[Cyclic(Some(3))], &[3], Order::C, &i8_)?
        }
        "darray_of_struct" => darray(
            2,
            1,
            &[3, 2],
            &[Cyclic(None), Dist::Undistributed],
            &[2, 1],
            Order::C,
            &cdi(),
        )?,
        other => panic!("the oracle has a case `{other}` that this test does not build"),
    })
}

fn pattern(o: isize) -> u8 {
    (o * 31 + 7).rem_euclid(256) as u8
}

/// The oracle's source buffer, as `T`s, with the origin at element `HALF / size_of::<T>()`.
fn source<T: Datatype>(from: impl Fn(&[u8]) -> T) -> Vec<T> {
    let s = std::mem::size_of::<T>();
    (0..2 * HALF / s)
        .map(|i| {
            let bytes: Vec<u8> = (0..s)
                .map(|j| pattern((i * s + j) as isize - HALF as isize))
                .collect();
            from(&bytes)
        })
        .collect()
}

/// `map` with each entry replaced by its bytes as `byte` entries: the same packed bytes, from
/// a plain byte buffer.
fn byte_image(map: &TypeMap) -> TypeMap {
    let entries = map
        .entries()
        .iter()
        .flat_map(|&(b, d)| (0..b.size() as isize).map(move |i| (BasicType::Byte, d + i)))
        .collect();
    TypeMap::from_parts(entries, map.lb(), map.ub()).expect("the bytes of a valid map")
}

/// Packs `count` elements of `map` from the oracle's source buffer as `T`s, checks that
/// unpacking them into a zeroed buffer writes back exactly the bytes the map names (and that
/// those pack to the same bytes again), and returns the packed bytes.
fn pack_as<T: Datatype>(map: &TypeMap, count: usize, from: impl Fn(&[u8]) -> T) -> Vec<u8> {
    let size = std::mem::size_of::<T>();
    let buf = source(&from);
    let origin = HALF / size;
    let ty = map.commit();
    let packed = ty.pack_to_vec_at(&buf, origin, count).expect("packs");
    let zero = from(&vec![0u8; size]);
    let mut back = vec![zero; buf.len()];
    let mut pos = 0;
    ty.unpack_at(&packed, &mut pos, &mut back, origin, count)
        .expect("unpacks");
    assert_eq!(pos, packed.len(), "{map}: unpack's position");
    assert_eq!(ty.pack_to_vec_at(&back, origin, count).unwrap(), packed);
    // element by element: a T that holds a byte the map names is the source's, others stay 0
    let named = named_elements(map, count, size);
    let (got, src) = (bytes_of(&back), bytes_of(&buf));
    let zeros = vec![0u8; size];
    for (i, (got, src)) in got.chunks(size).zip(src.chunks(size)).enumerate() {
        let want = if named.contains(&i) { src } else { &zeros[..] };
        assert_eq!(
            got, want,
            "{map}: element {i} after unpacking into a zeroed buffer"
        );
    }
    packed
}

/// The elements (of `size` bytes, origin at byte `HALF`) that hold a byte of `count` elements
/// of `map`.
fn named_elements(map: &TypeMap, count: usize, size: usize) -> std::collections::BTreeSet<usize> {
    let mut named = std::collections::BTreeSet::new();
    for k in 0..count as isize {
        for &(b, d) in map.entries() {
            for byte in 0..b.size() as isize {
                let at = HALF as isize + k * map.extent() + d + byte;
                named.insert(at as usize / size);
            }
        }
    }
    named
}

/// The bytes of `xs`, through the one safe view rpar has of them: packing them as bytes.
fn bytes_of<T: Datatype>(xs: &[T]) -> Vec<u8> {
    let size = std::mem::size_of::<T>() as isize;
    let bytes = (0..size).map(|i| (BasicType::Byte, i)).collect();
    let whole = TypeMap::from_parts(bytes, 0, size).expect("a map of bytes");
    whole.commit().pack_to_vec(xs, xs.len()).expect("bytes")
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".into();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn rpar_agrees_with_mpich_on_every_oracle_type() {
    let mut checked = 0;
    for line in ORACLE.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [name, count, size, lb, extent, tlb, textent, packed] = f[..] else {
            panic!("malformed oracle line: {line}");
        };
        let num = |s: &str| s.parse::<isize>().unwrap();
        let map = build(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = (
            map.size() as isize,
            map.lb(),
            map.extent(),
            map.true_lb(),
            map.true_extent(),
        );
        let want = (num(size), num(lb), num(extent), num(tlb), num(textent));
        assert_eq!(
            got, want,
            "{name}: (size, lb, extent, true_lb, true_extent)"
        );
        let count = num(count) as usize;
        assert_eq!(map.commit().pack_size(count), count * map.size(), "{name}");
        let bytes = pack_as(&byte_image(&map), count, |b| b[0]);
        assert_eq!(
            hex(&bytes),
            packed,
            "{name}: packed bytes (from a byte buffer)"
        );
        let mut sig = map.signature();
        let first = sig.next();
        let aligned = |b: BasicType| {
            let s = b.size() as isize;
            map.entries().iter().all(|&(_, d)| d % s == 0) && (count == 1 || map.extent() % s == 0)
        };
        if first.is_some_and(aligned) && sig.all(|b| Some(b) == first) {
            let typed = match first.unwrap() {
                BasicType::I8 => pack_as(&map, count, |b| b[0] as i8),
                BasicType::I16 => pack_as(&map, count, |b| i16::from_ne_bytes([b[0], b[1]])),
                BasicType::I32 => {
                    pack_as(&map, count, |b| i32::from_ne_bytes(b.try_into().unwrap()))
                }
                BasicType::F32 => {
                    pack_as(&map, count, |b| f32::from_ne_bytes(b.try_into().unwrap()))
                }
                BasicType::F64 => {
                    pack_as(&map, count, |b| f64::from_ne_bytes(b.try_into().unwrap()))
                }
                other => panic!("{name}: no typed buffer for {other}"),
            };
            assert_eq!(
                hex(&typed),
                packed,
                "{name}: packed bytes (from a typed buffer)"
            );
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} oracle cases");
}

#[test]
fn the_two_cases_of_the_issue() {
    let v = build("vector_3_1_m2_i32").unwrap();
    assert_eq!((v.size(), v.lb(), v.extent()), (12, -16, 20));
    assert_eq!(v.to_string(), "{(i32, 0), (i32, -8), (i32, -16)}");
    let s = cdi();
    assert_eq!((s.size(), s.extent(), s.true_extent()), (13, 24, 20));
}
