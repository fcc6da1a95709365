//! `dims_create` (MPI_Dims_create) beyond the MPICH oracle's range (`tests/topology_oracle.rs`
//! checks every nnodes up to 4096): fixed entries whose product overflows, huge primes and
//! products of two large primes, `usize::MAX`, and highly composite numbers in 1 to 5 dims.
//!
//! Each answer is checked against an independent reference of the rule in `dims_create`'s
//! module header (smallest spread, then largest smallest factor, then lexicographically
//! smallest): an exhaustive search over every non-increasing factorisation where that is
//! feasible, and otherwise a search over windows `[lo, lo + spread]` in order of spread, which
//! is cheap exactly when the answer is balanced (the highly composite numbers). Every test asserts
//! an answer, not a time; before `dims_create` factored with Pollard's rho, these took minutes.

use rpar::{dims_create, Error};
use std::cmp::Reverse;

/// The divisors of the number whose prime factorisation is `primes` (prime, exponent), ascending.
fn divisors(primes: &[(u64, u32)]) -> Vec<usize> {
    let mut divs = vec![1u64];
    for &(p, e) in primes {
        let mut next = Vec::with_capacity(divs.len() * (e as usize + 1));
        for &d in &divs {
            let mut x = d;
            for _ in 0..=e {
                next.push(x);
                x = x.saturating_mul(p);
            }
        }
        divs = next;
    }
    divs.sort_unstable();
    divs.into_iter().map(|d| d as usize).collect()
}

fn product(primes: &[(u64, u32)]) -> usize {
    primes
        .iter()
        .map(|&(p, e)| (p as usize).pow(e))
        .product::<usize>()
}

/// The divisors of a small `n`, by trial division.
fn small_divisors(n: usize) -> Vec<usize> {
    let mut divs: Vec<usize> = (1..=n.isqrt())
        .filter(|d| n.is_multiple_of(*d))
        .flat_map(|d| [d, n / d])
        .collect();
    divs.sort_unstable();
    divs.dedup();
    divs
}

/// `d^k` saturated at `u128::MAX`.
fn pow(d: usize, k: usize) -> u128 {
    (d as u128).checked_pow(k as u32).unwrap_or(u128::MAX)
}

type Key = (usize, Reverse<usize>, Vec<usize>);

/// Every non-increasing factorisation of `m` into `k` divisors, the best by the rule.
fn exhaustive(m: usize, k: usize, divs: &[usize]) -> Vec<usize> {
    fn go(
        m: usize,
        k: usize,
        max: usize,
        divs: &[usize],
        cur: &mut Vec<usize>,
        best: &mut Option<Key>,
    ) {
        if k == 0 {
            if m == 1 {
                let (hi, lo) = (cur[0], cur[cur.len() - 1]);
                let key = (hi - lo, Reverse(lo), cur.clone());
                if best.as_ref().is_none_or(|b| key < *b) {
                    *best = Some(key);
                }
            }
            return;
        }
        for &f in divs
            .iter()
            .filter(|&&f| f <= max && m.is_multiple_of(f) && pow(f, k) >= m as u128)
        {
            cur.push(f);
            go(m / f, k - 1, f, divs, cur, best);
            cur.pop();
        }
    }
    let mut best = None;
    go(m, k, m, divs, &mut Vec::new(), &mut best);
    best.expect("m = m * 1 * ... * 1").2
}

/// The best factorisation by the rule, searched window by window: for spread s = 0, 1, ... and
/// for lo descending, the lexicographically smallest non-increasing factorisation of `m` into
/// `k` divisors whose largest is lo + s and smallest is lo. Only for balanced answers.
fn by_windows(m: usize, k: usize, divs: &[usize]) -> Vec<usize> {
    /// The lexicographically smallest non-increasing `k` factors of `m` in `[lo, max]`.
    fn fill(
        m: usize,
        k: usize,
        lo: usize,
        max: usize,
        divs: &[usize],
        cur: &mut Vec<usize>,
    ) -> bool {
        if k == 0 {
            return m == 1;
        }
        let start = divs.partition_point(|&d| d < lo);
        for &f in divs[start..].iter().take_while(|&&f| f <= max) {
            if m.is_multiple_of(f) {
                cur.push(f);
                if fill(m / f, k - 1, lo, f, divs, cur) {
                    return true;
                }
                cur.pop();
            }
        }
        false
    }
    if k == 1 {
        return vec![m];
    }
    // the smallest factor is at most the k-th root of m, the largest at least that
    let root = divs.partition_point(|&d| pow(d, k) <= m as u128);
    for spread in 0.. {
        for &lo in divs[..root].iter().rev() {
            let hi = lo + spread;
            if pow(hi, k) < m as u128 {
                break;
            }
            let rest = m / lo;
            if divs.binary_search(&hi).is_err() || !rest.is_multiple_of(hi) {
                continue;
            }
            let mut cur = vec![hi];
            if fill(rest / hi, k - 2, lo, hi, divs, &mut cur) {
                cur.push(lo);
                return cur;
            }
        }
    }
    unreachable!("some spread fits")
}

fn dims(nnodes: usize, k: usize) -> Vec<usize> {
    let mut dims = vec![0; k];
    dims_create(nnodes, &mut dims).unwrap_or_else(|e| panic!("dims_create({nnodes}, {k}): {e}"));
    dims
}

#[test]
fn fixed_entries_whose_product_overflows_are_an_error() {
    for (nnodes, given) in [
        (4, vec![3, 6_148_914_691_236_517_206, 0]),
        (4, vec![usize::MAX, 2]),
        (1 << 40, vec![1 << 32, 0, 1 << 32]),
        (usize::MAX, vec![usize::MAX, usize::MAX, 0, 0]),
    ] {
        let mut d = given.clone();
        match dims_create(nnodes, &mut d) {
            Err(Error::InvalidArgument { call, message }) => {
                assert_eq!(call, "dims_create");
                assert!(message.contains(&format!("{given:?}")), "{message}");
                assert!(message.contains("overflows usize"), "{message}");
            }
            other => {
                panic!("dims_create({nnodes}, {given:?}): expected an error, got {other:?} {d:?}")
            }
        }
        assert_eq!(d, given, "dims are left alone on error");
    }
    // a product that fits is still checked for divisibility
    let mut d = [1 << 31, 0, 1 << 31];
    dims_create(1 << 63, &mut d).unwrap();
    assert_eq!(d, [1 << 31, 2, 1 << 31]);
}

#[test]
fn usize_max_in_one_to_five_dims() {
    let primes = [
        (3, 1),
        (5, 1),
        (17, 1),
        (257, 1),
        (641, 1),
        (65537, 1),
        (6_700_417, 1),
    ];
    assert_eq!(product(&primes), usize::MAX);
    let divs = divisors(&primes);
    for k in 1..=5 {
        assert_eq!(
            dims(usize::MAX, k),
            exhaustive(usize::MAX, k, &divs),
            "{k} dims"
        );
    }
    assert_eq!(dims(usize::MAX, 2), [4_294_967_297, 4_294_967_295]);
    assert_eq!(dims(usize::MAX, 3), [6_700_417, 2_471_055, 1_114_129]);
    assert_eq!(dims(usize::MAX, 5), [6_700_417, 65_537, 641, 257, 255]);
}

#[test]
fn large_primes_have_only_the_trivial_shape() {
    for p in [
        (1 << 61) - 1,              // a Mersenne prime
        18_446_744_073_709_551_557, // the largest prime below 2^64
        4_294_967_291,              // the largest prime below 2^32
    ] {
        for k in 1..=5 {
            let mut want = vec![1; k];
            want[0] = p;
            assert_eq!(dims(p, k), want, "{p} in {k} dims");
        }
    }
}

#[test]
fn products_of_two_large_primes() {
    for (p, q) in [
        (4_294_967_291, 4_294_967_279), // the two largest primes below 2^32
        (4_294_967_291, 4_294_967_291), // a square
        (1_000_000_007, 998_244_353),
        ((1 << 61) - 1, 7),
        (3, (1 << 61) - 1),
    ] {
        let m = p * q;
        let primes: Vec<(u64, u32)> = if p == q {
            vec![(p as u64, 2)]
        } else {
            vec![(p as u64, 1), (q as u64, 1)]
        };
        let divs = divisors(&primes);
        for k in 1..=5 {
            assert_eq!(dims(m, k), exhaustive(m, k, &divs), "{p} * {q} in {k} dims");
        }
        assert_eq!(dims(m, 3), [p.max(q), p.min(q), 1], "{p} * {q}");
    }
}

#[test]
fn highly_composite_numbers_in_one_to_five_dims() {
    // 384 and 1344 divisors: small enough for the exhaustive search (in up to 5 and 3 dims)
    for (m, dims_up_to) in [(4_324_320, 5), (735_134_400, 3)] {
        let divs = small_divisors(m);
        for k in 1..=dims_up_to {
            assert_eq!(dims(m, k), exhaustive(m, k, &divs), "{m} in {k} dims");
        }
    }
    for primes in [
        // 1344 divisors (735 134 400)
        vec![(2, 6), (3, 3), (5, 2), (7, 1), (11, 1), (13, 1), (17, 1)],
        // 6720 divisors
        vec![
            (2, 6),
            (3, 3),
            (5, 2),
            (7, 2),
            (11, 1),
            (13, 1),
            (17, 1),
            (19, 1),
            (23, 1),
        ],
        // 184320 divisors, the most of any number below 2^64
        vec![
            (2, 7),
            (3, 4),
            (5, 2),
            (7, 2),
            (11, 1),
            (13, 1),
            (17, 1),
            (19, 1),
            (23, 1),
            (29, 1),
            (31, 1),
            (37, 1),
            (41, 1),
        ],
    ] {
        let m = product(&primes);
        let divs = divisors(&primes);
        for k in 1..=5 {
            let got = dims(m, k);
            assert_eq!(got.iter().product::<usize>(), m);
            assert_eq!(got, by_windows(m, k, &divs), "{m} in {k} dims");
        }
    }
    assert_eq!(
        dims(18_401_055_938_125_660_800, 2),
        [4_290_063_960, 4_289_226_480]
    );
}

#[test]
fn fixed_entries_beside_huge_free_parts() {
    let mut d = [0, 3, 0, 0];
    dims_create(usize::MAX, &mut d).unwrap();
    let primes = [
        (5, 1),
        (17, 1),
        (257, 1),
        (641, 1),
        (65537, 1),
        (6_700_417, 1),
    ];
    let want = exhaustive(usize::MAX / 3, 3, &divisors(&primes));
    assert_eq!(d, [want[0], 3, want[1], want[2]]);
}

/// Numbers past the oracle's 4096, with the exhaustive search as the reference.
#[test]
fn agrees_with_the_exhaustive_search_past_the_oracle() {
    let mut n = 4097usize;
    while n < 3_000_000 {
        let divs = small_divisors(n);
        for k in 2..=5 {
            assert_eq!(dims(n, k), exhaustive(n, k, &divs), "{n} in {k} dims");
        }
        n = n * 21 / 20 + 7;
    }
    for n in [5040, 55440, 720_720, 1_441_440, 2_162_160] {
        let divs = small_divisors(n);
        for k in 2..=5 {
            assert_eq!(dims(n, k), exhaustive(n, k, &divs), "{n} in {k} dims");
        }
    }
}

/// Many dims: against the exhaustive search for small numbers, and with more dims than prime
/// factors, where the answer is the primes, largest first, then 1s.
#[test]
fn many_dims() {
    for n in (1..=5040).filter(|&n| n % 97 == 0 || 5040 % n == 0) {
        let divs = small_divisors(n);
        for k in 6..=12 {
            assert_eq!(dims(n, k), exhaustive(n, k, &divs), "{n} in {k} dims");
        }
    }
    let powers: Vec<usize> = (0..31).map(|e| 1 << e).collect();
    for k in [12, 20, 29, 30, 31] {
        assert_eq!(
            dims(1 << 30, k),
            exhaustive(1 << 30, k, &powers),
            "2^30 in {k} dims"
        );
    }
    assert_eq!(dims(1 << 63, 62), [&[4][..], &[2; 61]].concat());
    let mut want = vec![41, 37, 31, 29, 23, 19, 17, 13, 11, 7, 7, 5, 5, 3, 3, 3, 3];
    want.extend([2; 7]);
    want.resize(64, 1);
    assert_eq!(dims(18_401_055_938_125_660_800, 64), want);
    // a dims array far longer than any factorisation: no deep recursion
    let mut long = vec![0; 100_000];
    dims_create(usize::MAX, &mut long).unwrap();
    assert_eq!(long[..8], [6_700_417, 65537, 641, 257, 17, 5, 3, 1]);
    assert!(long[8..].iter().all(|&d| d == 1));
}
