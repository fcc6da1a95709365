//! `#[derive(Datatype)]` on the shapes the issue lists: named and tuple structs, nested derived
//! structs, arrays, generics, `#[rpar(skip)]`, `#[rpar(crate = "…")]`, packed layouts; each map
//! is checked against the compiler's own offsets, and derived values travel between ranks.

use rpar::prelude::*;
use rpar::BasicType::{self, *};
use std::marker::PhantomData;
use std::mem::{offset_of, size_of};

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Lecture {
    a: f32,
    b: f32,
    n: i32,
}

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Padded {
    c: u8,
    d: f64,
    i: i32,
}

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Pair(u16, Padded);

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Body {
    pos: [f64; 3],
    tags: [Pair; 2],
    alive: bool,
}

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Tagged<T, const N: usize> {
    values: [T; N],
    #[rpar(skip)]
    unit: PhantomData<T>,
    tag: char,
}

#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
#[repr(C, packed)]
struct Wire {
    kind: u8,
    value: u64,
}

mod renamed {
    extern crate rpar as other_name;
    #[derive(other_name::Datatype, Clone, Copy)]
    #[rpar(crate = "other_name")]
    pub(crate) struct R {
        pub(crate) x: i64,
    }
}

#[derive(Datatype, Clone, Copy)]
struct Unit;

fn entries<T: Datatype>() -> Vec<(BasicType, isize)> {
    T::type_map().entries().to_vec()
}

#[test]
fn maps_follow_the_compilers_offsets() {
    let o = |x: usize| x as isize;
    assert_eq!(
        entries::<Lecture>(),
        [
            (F32, o(offset_of!(Lecture, a))),
            (F32, o(offset_of!(Lecture, b))),
            (I32, o(offset_of!(Lecture, n)))
        ]
    );
    assert_eq!(
        Lecture::type_map().to_string(),
        "{(f32, 0), (f32, 4), (i32, 8)}"
    );
    let p = Padded::type_map();
    assert_eq!(
        (p.size(), p.extent() as usize, p.lb()),
        (13, size_of::<Padded>(), 0)
    );
    assert_eq!(
        entries::<Padded>(),
        [
            (U8, o(offset_of!(Padded, c))),
            (F64, o(offset_of!(Padded, d))),
            (I32, o(offset_of!(Padded, i)))
        ]
    );
    let pair = entries::<Pair>();
    assert_eq!(pair[0], (U16, o(offset_of!(Pair, 0))));
    assert_eq!(pair[1].1, o(offset_of!(Pair, 1)) + o(offset_of!(Padded, c)));
    let body = Body::type_map();
    assert_eq!(body.size(), 3 * 8 + 2 * (2 + 13) + 1);
    assert_eq!(body.extent() as usize, size_of::<Body>());
    let tags = o(offset_of!(Body, tags));
    assert!(body
        .entries()
        .contains(&(U16, tags + o(size_of::<Pair>()) + o(offset_of!(Pair, 0)))));
    assert_eq!(
        body.entries().last(),
        Some(&(Bool, o(offset_of!(Body, alive))))
    );
}

#[test]
fn derived_maps_are_constants() {
    // the type map of a derived struct, nested structs and arrays flattened, at compile time
    const N: usize = Body::LAYOUT.entry_count();
    const BODY: [(BasicType, isize); N] = Body::LAYOUT.entries();
    assert_eq!(Body::type_map().entries(), BODY);
    assert_eq!(Body::LAYOUT.size(), size_of::<Body>());
    assert_eq!(Body::LAYOUT.alignment(), Body::type_map().alignment());
    // nothing is built per call: both calls hand out the same static entries
    assert!(std::ptr::eq(
        Body::type_map().entries(),
        Body::type_map().entries()
    ));
    const TAGGED: [(BasicType, isize); 3] = Tagged::<u8, 2>::LAYOUT.entries();
    assert_eq!(Tagged::<u8, 2>::type_map().entries(), TAGGED);
    assert_eq!(TypeMap::from_layout(&Wire::LAYOUT), Wire::type_map());
}

#[test]
fn generics_skip_packed_renamed_and_unit_structs() {
    let t = Tagged::<i16, 3>::type_map();
    assert_eq!(t.signature().collect::<Vec<_>>(), [I16, I16, I16, Char]);
    assert_eq!(t.extent() as usize, size_of::<Tagged<i16, 3>>());
    assert_eq!(Tagged::<f64, 0>::type_map().size(), 4);
    assert_eq!(entries::<Wire>(), [(U8, 0), (U64, 1)]);
    assert_eq!(entries::<renamed::R>(), [(I64, 0)]);
    assert_eq!((Unit::type_map().size(), Unit::type_map().extent()), (0, 0));
}

#[test]
fn derived_values_travel_plain_and_typed() {
    let out = rpar::run(2, |world| {
        let bodies: Vec<Body> = (0..50)
            .map(|i| Body {
                pos: [i as f64, 1.0, 2.0],
                tags: [Pair(
                    i as u16,
                    Padded {
                        c: 1,
                        d: 0.5,
                        i: -i,
                    },
                ); 2],
                alive: i % 2 == 0,
            })
            .collect();
        if world.rank() == 0 {
            world.send(&bodies[..], 1, 0)?;
            // every other body, as a derived type over the derived struct
            let ev = TypeMap::vector(25, 1, 2, &Body::type_map())?.commit();
            world.send(rpar::Typed::new(&bodies, &ev, 1), 1, 1)?;
            world.send(
                &Wire {
                    kind: 3,
                    value: u64::MAX - 1,
                },
                1,
                2,
            )?;
            Ok(true)
        } else {
            let (got, _) = world.recv::<Body>(0, 0)?;
            let mut odd = vec![bodies[1]; 25];
            world.recv_into(
                rpar::Typed::new(&mut odd, &Body::type_map().commit(), 25),
                0,
                1,
            )?;
            let mut w = Wire { kind: 0, value: 0 };
            world.recv_into(&mut w, 0, 2)?;
            Ok(got == bodies
                && odd
                    .iter()
                    .zip(bodies.iter().step_by(2))
                    .all(|(a, b)| a == b)
                && w == Wire {
                    kind: 3,
                    value: u64::MAX - 1,
                })
        }
    })
    .unwrap();
    assert_eq!(out, [true, true]);
}

#[test]
fn unpacking_a_derived_struct_validates_its_bool_and_char() {
    let t = Tagged::<u8, 1>::type_map().commit();
    let v = Tagged::<u8, 1> {
        values: [7],
        unit: PhantomData,
        tag: 'é',
    };
    let packed = t.pack_to_vec(&[v], 1).unwrap();
    assert_eq!(packed.len(), 5);
    let mut back = [Tagged::<u8, 1> {
        values: [0],
        unit: PhantomData,
        tag: 'a',
    }];
    t.unpack(&packed, &mut 0, &mut back, 1).unwrap();
    assert_eq!(back[0], v);
    let mut bad = packed.clone();
    bad[1..5].copy_from_slice(&0x11_0000u32.to_ne_bytes());
    assert!(t.unpack(&bad, &mut 0, &mut back, 1).is_err());
    assert_eq!(back[0], v);
}
