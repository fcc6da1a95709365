//! MPI_Type_get_envelope / MPI_Type_get_contents: `TypeMap::envelope` and `TypeMap::contents`.
//!
//! The first tests port the checks of MPICH's test/mpi/datatype/contents.c (builtin float,
//! vector of vectors, optimizable vector, indexed of basics, indexed of vectors, struct of
//! basics) and hindexed_block_contents.c; the last rebuilds every kind of type from its contents
//! and checks that the same map comes back, and that the envelope's counts are the lengths of
//! MPI's arrays (MPI-4.0 Table 5.1).

use rpar::{BasicType, Combiner, CombinerKind, Datatype, Envelope, Order, TypeMap};

#[test]
fn a_darray_records_its_distribution_as_mpich_numbers_it() {
    use rpar::Distribution::{Block, Cyclic, Undistributed};
    let t = TypeMap::darray(
        6,
        5,
        &[4, 5, 6],
        &[Cyclic(Some(1)), Undistributed, Block(None)],
        &[3, 1, 2],
        Order::Fortran,
        &i16::type_map(),
    )
    .unwrap();
    assert_eq!(t.envelope().combiner, CombinerKind::Darray);
    // size, rank, ndims, gsizes, distribs, dargs, psizes, order
    assert_eq!(
        t.contents().unwrap().integers(),
        [6, 5, 3, 4, 5, 6, 122, 123, 121, 1, -49767, -49767, 3, 1, 2, 57]
    );
}

fn envelope(t: &TypeMap) -> (CombinerKind, usize, usize, usize) {
    let e = t.envelope();
    (e.combiner, e.integers, e.addresses, e.datatypes)
}

#[test]
fn a_basic_type_is_named_and_has_no_contents() {
    let f = f32::type_map();
    assert_eq!(envelope(&f), (CombinerKind::Named, 0, 0, 0));
    let err = f.contents().unwrap_err();
    assert!(matches!(err, rpar::Error::InvalidArgument { .. }));
    assert!(err.to_string().contains("predefined type f32"), "{err}");
    assert_eq!(
        envelope(&TypeMap::basic(BasicType::Byte)).0,
        CombinerKind::Named
    );
}

#[test]
fn a_vector_of_vectors_decodes_level_by_level() {
    // the corners of a 3 x 3 array of i32
    let inner = TypeMap::vector(2, 1, 2, &i32::type_map()).unwrap();
    let outer = TypeMap::vector(2, 1, 2, &inner).unwrap();
    assert_eq!(envelope(&outer), (CombinerKind::Vector, 3, 0, 1));
    let c = outer.contents().unwrap();
    assert_eq!(c.integers(), [2, 1, 2]);
    let inner_copy = c.datatypes()[0].clone();
    assert_eq!(inner_copy, inner);
    assert_eq!(envelope(&inner_copy), (CombinerKind::Vector, 3, 0, 1));
    assert_eq!(inner_copy.contents().unwrap().integers(), [2, 1, 2]);
    assert_eq!(
        inner_copy.contents().unwrap().datatypes(),
        [&i32::type_map()]
    );
}

#[test]
fn an_optimizable_vector_keeps_the_arguments_it_was_given() {
    // 10 blocks of 2 with stride 2 is 20 contiguous i32: MPI still returns the vector's own
    let t = TypeMap::vector(10, 2, 2, &i32::type_map()).unwrap();
    assert!(t.is_dense());
    assert_eq!(envelope(&t), (CombinerKind::Vector, 3, 0, 1));
    assert_eq!(
        t.contents().unwrap(),
        Combiner::Vector {
            count: 10,
            blocklength: 2,
            stride: 2,
            inner: i32::type_map()
        }
    );
}

#[test]
fn indexed_types_list_lengths_then_displacements() {
    let blocks = [(3, 10), (2, 20), (1, 30)];
    let basics = TypeMap::indexed(&blocks, &i32::type_map()).unwrap();
    assert_eq!(envelope(&basics), (CombinerKind::Indexed, 7, 0, 1));
    assert_eq!(
        basics.contents().unwrap().integers(),
        [3, 3, 2, 1, 10, 20, 30]
    );
    let inner = TypeMap::vector(2, 1, 2, &i32::type_map()).unwrap();
    let of_vectors = TypeMap::indexed(&blocks, &inner).unwrap();
    let c = of_vectors.contents().unwrap();
    assert_eq!(c.integers(), [3, 3, 2, 1, 10, 20, 30]);
    assert_eq!(envelope(c.datatypes()[0]), (CombinerKind::Vector, 3, 0, 1));
}

#[test]
fn a_struct_of_basics_gives_lengths_displacements_and_types() {
    let (i, f, d) = (i32::type_map(), f32::type_map(), f64::type_map());
    let t = TypeMap::structure(&[(3, 0, &i), (2, 16, &f), (1, 32, &d)]).unwrap();
    assert_eq!(envelope(&t), (CombinerKind::Struct, 4, 3, 3));
    let c = t.contents().unwrap();
    assert_eq!(c.integers(), [3, 3, 2, 1]);
    assert_eq!(c.addresses(), [0, 16, 32]);
    assert_eq!(c.datatypes(), [&i, &f, &d]);
}

#[test]
fn an_hindexed_block_gives_its_byte_displacements() {
    // hindexed_block_contents.c
    let t = TypeMap::hindexed_block(2, &[0, 8, 16, 24], &i32::type_map()).unwrap();
    assert_eq!(envelope(&t), (CombinerKind::HindexedBlock, 2, 4, 1));
    let c = t.contents().unwrap();
    assert_eq!(c.integers(), [4, 2]);
    assert_eq!(c.addresses(), [0, 8, 16, 24]);
    assert_eq!(c.datatypes(), [&i32::type_map()]);
}

#[test]
fn rust_types_answer_as_the_mpi_calls_that_build_them() {
    let a = <[u16; 3]>::type_map();
    assert_eq!(
        a.contents().unwrap(),
        Combiner::Contiguous {
            count: 3,
            inner: u16::type_map()
        }
    );
    let pair = <(u8, f64)>::type_map();
    let Combiner::Resized { lb, extent, inner } = pair.contents().unwrap() else {
        panic!("expected resized")
    };
    assert_eq!((lb, extent), (0, std::mem::size_of::<(u8, f64)>() as isize));
    assert_eq!(envelope(&inner).0, CombinerKind::Struct);
    // what the contents describe is the map itself
    assert_eq!(inner.resized(lb, extent).unwrap(), pair);
    // a map from its parts: the struct of its entries, resized to its bounds
    let parts = TypeMap::from_parts(vec![(BasicType::I32, 4), (BasicType::U8, 0)], -2, 10).unwrap();
    let c = parts.contents().unwrap();
    assert_eq!(c.addresses(), [-2, 12]);
    assert_eq!(rebuild(&c), parts);
}

/// The type `c` describes, built by the constructor it names.
fn rebuild(c: &Combiner) -> TypeMap {
    match c {
        Combiner::Dup { inner } => inner.dup(),
        Combiner::Contiguous { count, inner } => TypeMap::contiguous(*count, inner).unwrap(),
        Combiner::Vector {
            count,
            blocklength,
            stride,
            inner,
        } => TypeMap::vector(*count, *blocklength, *stride, inner).unwrap(),
        Combiner::Hvector {
            count,
            blocklength,
            stride,
            inner,
        } => TypeMap::hvector(*count, *blocklength, *stride, inner).unwrap(),
        Combiner::Indexed { blocks, inner } => TypeMap::indexed(blocks, inner).unwrap(),
        Combiner::Hindexed { blocks, inner } => TypeMap::hindexed(blocks, inner).unwrap(),
        Combiner::IndexedBlock {
            blocklength,
            displacements,
            inner,
        } => TypeMap::indexed_block(*blocklength, displacements, inner).unwrap(),
        Combiner::HindexedBlock {
            blocklength,
            displacements,
            inner,
        } => TypeMap::hindexed_block(*blocklength, displacements, inner).unwrap(),
        Combiner::Struct { fields } => {
            let f: Vec<_> = fields.iter().map(|(n, d, t)| (*n, *d, t)).collect();
            TypeMap::structure(&f).unwrap()
        }
        Combiner::Subarray {
            sizes,
            subsizes,
            starts,
            order,
            inner,
        } => TypeMap::subarray(sizes, subsizes, starts, *order, inner).unwrap(),
        Combiner::Resized { lb, extent, inner } => inner.resized(*lb, *extent).unwrap(),
        Combiner::Darray {
            size,
            rank,
            gsizes,
            distribs,
            psizes,
            order,
            inner,
        } => TypeMap::darray(*size, *rank, gsizes, distribs, psizes, *order, inner).unwrap(),
        other => panic!("no rebuild for {other:?}"),
    }
}

/// MPI-4.0 Table 5.1: the array lengths of each combiner, from the arguments.
fn table_counts(c: &Combiner) -> (usize, usize, usize) {
    match c {
        Combiner::Dup { .. } => (0, 0, 1),
        Combiner::Contiguous { .. } => (1, 0, 1),
        Combiner::Vector { .. } => (3, 0, 1),
        Combiner::Hvector { .. } => (2, 1, 1),
        Combiner::Indexed { blocks, .. } => (2 * blocks.len() + 1, 0, 1),
        Combiner::Hindexed { blocks, .. } => (blocks.len() + 1, blocks.len(), 1),
        Combiner::IndexedBlock { displacements, .. } => (displacements.len() + 2, 0, 1),
        Combiner::HindexedBlock { displacements, .. } => (2, displacements.len(), 1),
        Combiner::Struct { fields } => (fields.len() + 1, fields.len(), fields.len()),
        Combiner::Subarray { sizes, .. } => (3 * sizes.len() + 2, 0, 1),
        Combiner::Darray { gsizes, .. } => (4 * gsizes.len() + 4, 0, 1),
        Combiner::Resized { .. } => (0, 2, 1),
        other => panic!("no table row for {other:?}"),
    }
}

#[test]
fn every_constructor_is_rebuilt_from_its_contents() {
    let (i, d) = (i32::type_map(), f64::type_map());
    let v = TypeMap::vector(3, 2, -4, &i).unwrap();
    let types = [
        (
            CombinerKind::Contiguous,
            TypeMap::contiguous(5, &v).unwrap(),
        ),
        (CombinerKind::Vector, v.clone()),
        (
            CombinerKind::Hvector,
            TypeMap::hvector(2, 3, 100, &v).unwrap(),
        ),
        (
            CombinerKind::Indexed,
            TypeMap::indexed(&[(1, 4), (0, 9), (2, -3)], &d).unwrap(),
        ),
        (
            CombinerKind::Hindexed,
            TypeMap::hindexed(&[(2, 64), (1, 0)], &v).unwrap(),
        ),
        (
            CombinerKind::IndexedBlock,
            TypeMap::indexed_block(2, &[5, 1], &i).unwrap(),
        ),
        (
            CombinerKind::HindexedBlock,
            TypeMap::hindexed_block(1, &[40, 0, 8], &d).unwrap(),
        ),
        (
            CombinerKind::Struct,
            TypeMap::structure(&[(1, 0, &i), (2, 8, &d), (1, 40, &v)]).unwrap(),
        ),
        (
            CombinerKind::Subarray,
            TypeMap::subarray(&[4, 5, 6], &[2, 3, 1], &[1, 0, 5], Order::Fortran, &d).unwrap(),
        ),
        (CombinerKind::Resized, v.resized(-8, 100).unwrap()),
        (CombinerKind::Dup, v.dup()),
        (
            CombinerKind::Darray,
            TypeMap::darray(
                6,
                4,
                &[9, 10],
                &[
                    rpar::Distribution::Block(None),
                    rpar::Distribution::Cyclic(Some(2)),
                ],
                &[3, 2],
                Order::C,
                &d,
            )
            .unwrap(),
        ),
    ];
    for (kind, t) in &types {
        let c = t.contents().unwrap();
        assert_eq!(c.kind(), *kind);
        let (ni, na, nd) = table_counts(&c);
        assert_eq!(
            t.envelope(),
            Envelope {
                combiner: *kind,
                integers: ni,
                addresses: na,
                datatypes: nd
            },
            "{kind:?}"
        );
        assert_eq!(
            (c.integers().len(), c.addresses().len(), c.datatypes().len()),
            (ni, na, nd),
            "{kind:?}"
        );
        let again = rebuild(&c);
        assert_eq!(&again, t, "{kind:?}");
        assert_eq!(again.contents().unwrap(), c, "{kind:?}");
        // committing keeps the map, and so its contents
        assert_eq!(t.commit().type_map().contents().unwrap(), c, "{kind:?}");
    }
}

#[test]
fn a_subarray_records_its_order_as_mpich_numbers_it() {
    let t = TypeMap::subarray(&[3, 4], &[2, 2], &[1, 2], Order::C, &u8::type_map()).unwrap();
    assert_eq!(t.contents().unwrap().integers(), [2, 3, 4, 2, 2, 1, 2, 56]);
    let f = TypeMap::subarray(&[3], &[1], &[0], Order::Fortran, &u8::type_map()).unwrap();
    assert_eq!(f.contents().unwrap().integers().last(), Some(&57));
}
