//! Complex numbers as basic types (MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX): their type maps,
//! point-to-point messages of them, MPI's type matching (a complex is not two floats), and Sum
//! and Prod through every algorithm of every reduction collective for p = 1..=6 against a
//! sequential fold (Gaussian integers, so that every result is exact whatever the order of the
//! additions and products). Min and Max do not compile on them (`ui-tests/datatype/
//! complex_has_no_order.rs`).

mod collective;
mod common;

use collective::reduction::{sweep, Element, Forms};
use collective::COUNTS;
use common::mix;
use rpar::{BasicType, Complex, Datatype, Error, Prod, Sum, TypeMap};

/// Equal values (the sign of a zero part depends on the order of the products, which the
/// algorithms choose: 0 and -0 are the same number).
impl Element for Complex<f64> {
    fn identical(&self, want: &Self) -> bool {
        self == want
    }
}

/// As for `Complex<f64>`.
impl Element for Complex<f32> {
    fn identical(&self, want: &Self) -> bool {
        self == want
    }
}

/// A small Gaussian integer (parts in -1..=2): products of up to six of them, and sums of
/// those, are exact in `f32` and `f64`.
fn gaussian(r: usize, i: usize) -> (f64, f64) {
    let z = mix(r, i, 17);
    ((z % 4) as f64 - 1.0, ((z / 4) % 4) as f64 - 1.0)
}

#[test]
fn complex_numbers_are_basic_types() {
    let c = Complex::<f64>::type_map();
    assert_eq!(c, TypeMap::basic(BasicType::C64));
    assert_eq!((c.size(), c.extent(), c.alignment()), (16, 16, 8));
    assert_eq!(c.to_string(), "{(Complex<f64>, 0)}");
    let f = Complex::<f32>::type_map();
    assert_eq!((f.size(), f.extent(), f.alignment()), (8, 8, 4));
    assert_eq!(f.envelope().combiner, rpar::CombinerKind::Named);
    // one basic value, not two floats: the signatures differ
    assert_ne!(
        c.signature().collect::<Vec<_>>(),
        <[f64; 2]>::type_map().signature().collect::<Vec<_>>()
    );
    let v = TypeMap::vector(2, 1, 3, &f).unwrap();
    assert_eq!(v.to_string(), "{(Complex<f32>, 0), (Complex<f32>, 24)}");
}

#[test]
fn complex_messages_arrive_whole_and_do_not_match_floats() {
    let got = rpar::run(2, |world| {
        let z = [Complex::new(1.5f64, -2.0), Complex::new(0.0, 3.25)];
        if world.rank() == 0 {
            world.send(&z[..], 1, 0)?;
            world.send(&z[..], 1, 1)?;
            Ok(None)
        } else {
            let mut back = [Complex::new(0.0f64, 0.0); 2];
            world.recv_into(&mut back[..], 0, 0)?;
            assert_eq!(back, z);
            // MPI's type matching: MPI_C_DOUBLE_COMPLEX does not match MPI_DOUBLE
            let mut floats = [0.0f64; 4];
            let err = world.recv_into(&mut floats[..], 0, 1).unwrap_err();
            Ok(Some(err.to_string()))
        }
    })
    .unwrap();
    let err = got[1].clone().unwrap();
    assert!(err.contains("type mismatch"), "{err}");
}

#[test]
fn a_type_mismatch_is_an_error_value() {
    let r = rpar::run(2, |world| {
        if world.rank() == 0 {
            world.send(&[Complex::new(1.0f32, 1.0)][..], 1, 0)
        } else {
            let mut f = [0.0f32; 2];
            world.recv_into(&mut f[..], 0, 0).map(drop)
        }
    });
    assert!(
        matches!(
            r,
            Err(Error::TypeMismatch { .. }) | Err(Error::RankFailed { .. })
        ),
        "{r:?}"
    );
}

#[test]
fn sum_and_prod_of_complex_f64_every_algorithm() {
    for p in 1..=6 {
        let input = |r, i| {
            let (re, im) = gaussian(r, i);
            Complex::new(re, im)
        };
        sweep(p, &COUNTS, Forms::All, &Sum, |a, b| a + b, input);
        sweep(p, &COUNTS, Forms::All, &Prod, |a, b| a * b, input);
    }
}

#[test]
fn sum_and_prod_of_complex_f32_every_algorithm() {
    for p in 1..=6 {
        let input = |r, i| {
            let (re, im) = gaussian(r, i);
            Complex::new(re as f32, im as f32)
        };
        sweep(p, &COUNTS, Forms::All, &Sum, |a, b| a + b, input);
        sweep(p, &COUNTS, Forms::All, &Prod, |a, b| a * b, input);
    }
}

#[test]
fn arrays_of_complex_reduce_elementwise() {
    let got = rpar::run(4, |world| {
        let k = world.rank() as f64;
        world.allreduce(&[Complex::new(k, 1.0), Complex::new(0.0, k)], Sum)
    })
    .unwrap();
    assert_eq!(got[3], [Complex::new(6.0, 4.0), Complex::new(0.0, 6.0)]);
    // (1 + i)^4 = -4
    let p = rpar::run(4, |world| world.allreduce(&Complex::new(1.0f32, 1.0), Prod)).unwrap();
    assert_eq!(p, vec![Complex::new(-4.0, 0.0); 4]);
}
