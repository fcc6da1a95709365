//! Property tests: random type trees (random constructors, counts, strides, displacements and
//! nesting) against a naive reference that flattens the tree straight from MPI's definitions
//! and packs byte by byte. rpar's type map and bounds must equal the reference's, its packed
//! bytes must equal the naive packing, unpacking must restore exactly the named bytes (and
//! touch no other), and a typed send between two random layouts must deliver the sender's
//! packed stream into the receiver's layout in map order.

use proptest::prelude::*;
use rpar::{BasicType, Order, TypeMap};

#[derive(Debug, Clone)]
enum Tree {
    Basic(BasicType),
    Contiguous(usize, Box<Tree>),
    Vector(usize, usize, isize, Box<Tree>),
    Hvector(usize, usize, isize, Box<Tree>),
    Indexed(Vec<(usize, isize)>, Box<Tree>),
    Hindexed(Vec<(usize, isize)>, Box<Tree>),
    IndexedBlock(usize, Vec<isize>, Box<Tree>),
    HindexedBlock(usize, Vec<isize>, Box<Tree>),
    Struct(Vec<(usize, isize, Tree)>),
    Resized(isize, isize, Box<Tree>),
    Subarray(Vec<(usize, usize, usize)>, bool, Box<Tree>),
}

fn basic() -> impl Strategy<Value = BasicType> {
    use BasicType::*;
    prop::sample::select(vec![I8, U8, I16, I32, F32, F64, U64])
}

fn tree() -> impl Strategy<Value = Tree> {
    basic()
        .prop_map(Tree::Basic)
        .prop_recursive(3, 24, 3, |inner| {
            let b = || inner.clone().prop_map(Box::new);
            let blocks = || prop::collection::vec((0usize..3, -4isize..5), 1..4);
            let hblocks = || prop::collection::vec((0usize..3, -24isize..25), 1..4);
            prop_oneof![
                (0usize..4, b()).prop_map(|(n, t)| Tree::Contiguous(n, t)),
                (0usize..4, 0usize..3, -4isize..5, b())
                    .prop_map(|(c, l, s, t)| Tree::Vector(c, l, s, t)),
                (0usize..4, 0usize..3, -30isize..31, b())
                    .prop_map(|(c, l, s, t)| Tree::Hvector(c, l, s, t)),
                (blocks(), b()).prop_map(|(bl, t)| Tree::Indexed(bl, t)),
                (hblocks(), b()).prop_map(|(bl, t)| Tree::Hindexed(bl, t)),
                (0usize..3, prop::collection::vec(-4isize..5, 1..4), b())
                    .prop_map(|(l, d, t)| Tree::IndexedBlock(l, d, t)),
                (0usize..3, prop::collection::vec(-24isize..25, 1..4), b())
                    .prop_map(|(l, d, t)| Tree::HindexedBlock(l, d, t)),
                prop::collection::vec((0usize..3, -24isize..25, inner.clone()), 1..4)
                    .prop_map(Tree::Struct),
                (-16isize..17, 0isize..40, b()).prop_map(|(lb, e, t)| Tree::Resized(lb, e, t)),
                (
                    prop::collection::vec((1usize..4, 0usize..4, 0usize..4), 1..3),
                    any::<bool>(),
                    b()
                )
                    .prop_map(|(dims, c, t)| {
                        // subsize and start within each size
                        let dims = dims
                            .into_iter()
                            .map(|(size, sub, start)| {
                                let sub = sub.min(size);
                                (size, sub, start.min(size - sub))
                            })
                            .collect();
                        Tree::Subarray(dims, c, t)
                    }),
            ]
        })
}

/// rpar's construction of the tree.
fn build(t: &Tree) -> TypeMap {
    let r = match t {
        Tree::Basic(b) => Ok(TypeMap::basic(*b)),
        Tree::Contiguous(n, t) => TypeMap::contiguous(*n, &build(t)),
        Tree::Vector(c, l, s, t) => TypeMap::vector(*c, *l, *s, &build(t)),
        Tree::Hvector(c, l, s, t) => TypeMap::hvector(*c, *l, *s, &build(t)),
        Tree::Indexed(bl, t) => TypeMap::indexed(bl, &build(t)),
        Tree::Hindexed(bl, t) => TypeMap::hindexed(bl, &build(t)),
        Tree::IndexedBlock(l, d, t) => TypeMap::indexed_block(*l, d, &build(t)),
        Tree::HindexedBlock(l, d, t) => TypeMap::hindexed_block(*l, d, &build(t)),
        Tree::Struct(fields) => {
            let maps: Vec<TypeMap> = fields.iter().map(|(_, _, t)| build(t)).collect();
            let f: Vec<(usize, isize, &TypeMap)> = fields
                .iter()
                .zip(&maps)
                .map(|(&(l, d, _), m)| (l, d, m))
                .collect();
            TypeMap::structure(&f)
        }
        Tree::Resized(lb, e, t) => build(t).resized(*lb, *e),
        Tree::Subarray(dims, c, t) => {
            let sizes: Vec<usize> = dims.iter().map(|d| d.0).collect();
            let subs: Vec<usize> = dims.iter().map(|d| d.1).collect();
            let starts: Vec<usize> = dims.iter().map(|d| d.2).collect();
            let order = if *c { Order::C } else { Order::Fortran };
            TypeMap::subarray(&sizes, &subs, &starts, order, &build(t))
        }
    };
    r.expect("valid arguments build")
}

/// The reference: (entries, lb, ub), straight from MPI's definitions.
#[derive(Debug, Clone, PartialEq)]
struct Flat {
    entries: Vec<(BasicType, isize)>,
    lb: isize,
    ub: isize,
}

impl Flat {
    fn extent(&self) -> isize {
        self.ub - self.lb
    }
}

/// Copies of `(disp, old)`, with MPI's bound rule.
fn copies<'a>(it: impl Iterator<Item = (isize, &'a Flat)>) -> Flat {
    let mut f = Flat {
        entries: vec![],
        lb: 0,
        ub: 0,
    };
    let mut first = true;
    for (d, old) in it {
        f.entries
            .extend(old.entries.iter().map(|&(b, e)| (b, e + d)));
        if first {
            (f.lb, f.ub) = (old.lb + d, old.ub + d);
            first = false;
        } else {
            f.lb = f.lb.min(old.lb + d);
            f.ub = f.ub.max(old.ub + d);
        }
    }
    f
}

fn blocks_of(blocks: &[(usize, isize)], unit: isize, old: &Flat) -> Flat {
    let mut list = vec![];
    for &(l, d) in blocks {
        for j in 0..l as isize {
            list.push((d * unit + j * old.extent(), old));
        }
    }
    copies(list.into_iter())
}

fn flatten(t: &Tree) -> Flat {
    match t {
        Tree::Basic(b) => Flat {
            entries: vec![(*b, 0)],
            lb: 0,
            ub: b.size() as isize,
        },
        Tree::Contiguous(n, t) => {
            let o = flatten(t);
            blocks_of(&[(*n, 0)], 1, &o)
        }
        Tree::Vector(c, l, s, t) => {
            let o = flatten(t);
            let bl: Vec<_> = (0..*c as isize).map(|i| (*l, i * s * o.extent())).collect();
            blocks_of(&bl, 1, &o)
        }
        Tree::Hvector(c, l, s, t) => {
            let o = flatten(t);
            let bl: Vec<_> = (0..*c as isize).map(|i| (*l, i * s)).collect();
            blocks_of(&bl, 1, &o)
        }
        Tree::Indexed(bl, t) => {
            let o = flatten(t);
            blocks_of(bl, o.extent(), &o)
        }
        Tree::Hindexed(bl, t) => blocks_of(bl, 1, &flatten(t)),
        Tree::IndexedBlock(l, d, t) => {
            let o = flatten(t);
            let bl: Vec<_> = d.iter().map(|&d| (*l, d)).collect();
            blocks_of(&bl, o.extent(), &o)
        }
        Tree::HindexedBlock(l, d, t) => {
            let bl: Vec<_> = d.iter().map(|&d| (*l, d)).collect();
            blocks_of(&bl, 1, &flatten(t))
        }
        Tree::Struct(fields) => {
            let olds: Vec<Flat> = fields.iter().map(|(_, _, t)| flatten(t)).collect();
            let mut list = vec![];
            for ((l, d, _), o) in fields.iter().zip(&olds) {
                for j in 0..*l as isize {
                    list.push((d + j * o.extent(), o));
                }
            }
            let mut f = copies(list.into_iter());
            let align = f
                .entries
                .iter()
                .map(|(b, _)| b.align() as isize)
                .max()
                .unwrap_or(1);
            let e = f.extent();
            if e % align != 0 {
                f.ub += align - e.rem_euclid(align);
            }
            f
        }
        Tree::Resized(lb, e, t) => Flat {
            lb: *lb,
            ub: lb + e,
            ..flatten(t)
        },
        Tree::Subarray(dims, c, t) => {
            let o = flatten(t);
            let n = dims.len();
            // index tuples in storage order, slowest dimension first
            let order: Vec<usize> = if *c {
                (0..n).collect()
            } else {
                (0..n).rev().collect()
            };
            let mut idx = vec![vec![]];
            for &d in &order {
                idx = idx
                    .into_iter()
                    .flat_map(|p: Vec<(usize, usize)>| {
                        (0..dims[d].1).map(move |i| {
                            let mut p = p.clone();
                            p.push((d, dims[d].2 + i));
                            p
                        })
                    })
                    .collect();
            }
            let linear = |p: &Vec<(usize, usize)>| {
                // row-major (C) or column-major (Fortran) linear index
                let mut lin = 0usize;
                for &d in &order {
                    let at = p.iter().find(|x| x.0 == d).unwrap().1;
                    lin = lin * dims[d].0 + at;
                }
                lin as isize
            };
            let mut entries = vec![];
            for p in &idx {
                let base = linear(p) * o.extent();
                entries.extend(o.entries.iter().map(|&(b, e)| (b, e + base)));
            }
            let total: usize = dims.iter().map(|d| d.0).product();
            Flat {
                entries,
                lb: 0,
                ub: total as isize * o.extent(),
            }
        }
    }
}

/// The map with each entry replaced by its bytes, so any buffer of u8 can hold it.
fn byte_image(m: &TypeMap) -> TypeMap {
    let entries = m
        .entries()
        .iter()
        .flat_map(|&(b, d)| (0..b.size() as isize).map(move |i| (BasicType::Byte, d + i)))
        .collect();
    TypeMap::from_parts(entries, m.lb(), m.ub()).expect("the bytes of a valid map")
}

/// The byte range `count` elements touch, relative to their origin.
fn span(m: &TypeMap, count: usize) -> (isize, isize) {
    let last = (count as isize - 1) * m.extent();
    (m.true_lb() + last.min(0), m.true_ub() + last.max(0))
}

fn naive_pack(m: &TypeMap, count: usize, buf: &[u8], origin: isize) -> Vec<u8> {
    let mut out = vec![];
    for k in 0..count as isize {
        for &(b, d) in m.entries() {
            for i in 0..b.size() as isize {
                out.push(buf[(origin + k * m.extent() + d + i) as usize]);
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn maps_bounds_and_packed_bytes_agree_with_the_reference(t in tree(), count in 0usize..4) {
        let map = build(&t);
        let flat = flatten(&t);
        prop_assert_eq!(map.entries(), &flat.entries[..]);
        prop_assert_eq!((map.lb(), map.ub()), (flat.lb, flat.ub));
        let ty = byte_image(&map).commit();
        prop_assert!(ty.segments() <= map.entries().len().max(1));
        if map.entries().is_empty() || count == 0 {
            return Ok(());
        }
        let (low, high) = span(&map, count);
        let origin = (-low).max(0);
        let buf: Vec<u8> = (0..(origin + high).max(origin)).map(|i| (i * 37 + 11) as u8).collect();
        let packed = ty.pack_to_vec_at(&buf, origin as usize, count).unwrap();
        prop_assert_eq!(&packed, &naive_pack(&map, count, &buf, origin));
        // unpack into zeros: the named bytes come back, no other byte is touched
        let mut back = vec![0u8; buf.len()];
        let mut pos = 0;
        ty.unpack_at(&packed, &mut pos, &mut back, origin as usize, count).unwrap();
        prop_assert_eq!(pos, packed.len());
        let mut named = vec![false; buf.len()];
        for k in 0..count as isize {
            for &(b, d) in map.entries() {
                for i in 0..b.size() as isize {
                    named[(origin + k * map.extent() + d + i) as usize] = true;
                }
            }
        }
        for (i, &n) in named.iter().enumerate() {
            // with repeated displacements the last write wins, and all carry the same byte
            prop_assert_eq!(back[i], if n { buf[i] } else { 0 }, "byte {}", i);
        }
        // one byte short at either end is refused
        if low < 0 {
            prop_assert!(ty.pack_to_vec_at(&buf, origin as usize - 1, count).is_err());
        }
        prop_assert!(ty.pack_to_vec_at(&buf[..buf.len() - 1], origin as usize, count).is_err());
    }
}

/// A tree shifted so that `count` elements start at byte 0 (send_typed has no origin).
fn at_zero(m: &TypeMap, count: usize) -> TypeMap {
    let (low, _) = span(m, count);
    TypeMap::hindexed(&[(1, -low)], m)
        .unwrap()
        .resized(m.lb() - low, m.extent())
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn typed_sends_deliver_the_packed_stream_into_the_receivers_layout(
        a in tree(), b in tree(), big in any::<bool>()
    ) {
        let (ma, mb) = (byte_image(&build(&a)), byte_image(&build(&b)));
        prop_assume!(ma.size() > 0 && mb.size() > 0);
        // enough elements to pass the 32 KiB rendezvous threshold when `big`
        let count_a = if big { 40_000 / ma.size() + 1 } else { 3 };
        let count_b = (ma.size() * count_a).div_ceil(mb.size());
        let (sa, sb) = (at_zero(&ma, count_a), at_zero(&mb, count_b));
        let len_a = span(&sa, count_a).1 as usize;
        let len_b = span(&sb, count_b).1 as usize;
        let src: Vec<u8> = (0..len_a).map(|i| (i * 13 + 5) as u8).collect();
        let (ta, tb) = (sa.commit(), sb.commit());
        let expected_stream = naive_pack(&sa, count_a, &src, 0);
        // MPI_Get_count: the receiver's elements, MPI_UNDEFINED if the last one is partly filled
        let sent = ma.size() * count_a;
        let whole = if sent % mb.size() == 0 { sent / mb.size() } else { rpar::UNDEFINED };
        let got = rpar::run(2, move |world| {
            if world.rank() == 0 {
                world.send(rpar::Typed::new(&src, &ta, count_a), 1, 0)?;
                Ok(vec![])
            } else {
                let mut dst = vec![0u8; len_b];
                let st = world.recv_into(rpar::Typed::new(&mut dst, &tb, count_b), 0, 0)?;
                assert_eq!(st.count, whole);
                Ok(dst)
            }
        }).unwrap();
        let dst = &got[1];
        // the receiver's layout, read in map order, starts with the sent stream
        let mut expected = vec![0u8; len_b];
        let mut it = expected_stream.iter();
        'fill: for k in 0..count_b as isize {
            for &(_, d) in sb.entries() {
                match it.next() {
                    Some(&byte) => expected[(k * sb.extent() + d) as usize] = byte,
                    None => break 'fill,
                }
            }
        }
        // repeated displacements in the receiver: the later write of the stream wins in both
        prop_assert_eq!(dst, &expected);
    }
}
