//! Prime factorisation of any `u64` in milliseconds, for [`dims_create`](super::dims_create):
//! trial division by the primes below 64, then deterministic Miller-Rabin and Pollard's rho in
//! Brent's variant (R. P. Brent, "An improved Monte Carlo factorization algorithm", BIT 20,
//! 1980) for what is left. Products modulo n go through `u128`, so nothing overflows.
//!
//! Miller-Rabin with the first twelve primes as witnesses (2, 3, …, 37) is exact for every
//! n < 3.3 · 10^24 (Sorenson and Webster, "Strong pseudoprimes to twelve prime bases", Math.
//! Comp. 86, 2017), which covers all of `u64`. Rho needs about n^(1/4) steps for a composite
//! n, at most 2^16 here; each step is one multiplication modulo n.

/// The primes that trial division removes first (and the Miller-Rabin witnesses among them).
const SMALL_PRIMES: [u64; 18] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61,
];

/// The witnesses that make Miller-Rabin exact below 3.3 · 10^24 > 2^64.
const WITNESSES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];

/// `a * b mod m`.
fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    (u128::from(a) * u128::from(b) % u128::from(m)) as u64 // < m, so it fits
}

/// `base^exp mod m`.
fn pow_mod(mut base: u64, mut exp: u64, m: u64) -> u64 {
    let mut acc = 1 % m;
    base %= m;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = mul_mod(acc, base, m);
        }
        base = mul_mod(base, base, m);
        exp >>= 1;
    }
    acc
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Whether `n` is prime (deterministic Miller-Rabin).
pub(crate) fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    if let Some(&p) = SMALL_PRIMES.iter().find(|&&p| n.is_multiple_of(p)) {
        return n == p;
    }
    // n - 1 = d * 2^s with d odd
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'witness: for a in WITNESSES {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// A factor of the composite, odd `n` other than 1 and `n` (Pollard's rho, Brent's cycle
/// finding, with the products of 128 differences batched into one gcd).
fn rho(n: u64) -> u64 {
    const BATCH: u64 = 128;
    for c in 1u64.. {
        // x -> x^2 + c mod n; a c whose cycle closes mod n before mod a factor is replaced
        let step =
            |x: u64| ((u128::from(x) * u128::from(x) + u128::from(c)) % u128::from(n)) as u64;
        let (mut x, mut y, mut saved) = (2, 2, 2);
        let (mut q, mut g, mut r) = (1, 1, 1u64);
        while g == 1 {
            x = y;
            for _ in 0..r {
                y = step(y);
            }
            let mut k = 0;
            while k < r && g == 1 {
                saved = y;
                for _ in 0..BATCH.min(r - k) {
                    y = step(y);
                    q = mul_mod(q, x.abs_diff(y), n);
                }
                g = gcd(q, n);
                k += BATCH;
            }
            r *= 2;
        }
        if g == n {
            // the batch overshot (or q hit 0): redo its steps one gcd at a time
            loop {
                saved = step(saved);
                g = gcd(x.abs_diff(saved), n);
                if g > 1 {
                    break;
                }
            }
        }
        if g != n {
            return g;
        }
    }
    unreachable!("some increment c splits every composite")
}

/// The prime factorisation of `n >= 1`: (prime, exponent) pairs, primes ascending.
///
/// ```ignore
/// assert_eq!(prime_factors(360), [(2, 3), (3, 2), (5, 1)]);
/// ```
pub(crate) fn prime_factors(mut n: u64) -> Vec<(u64, u32)> {
    let mut primes = Vec::new();
    for p in SMALL_PRIMES {
        while n.is_multiple_of(p) {
            primes.push(p);
            n /= p;
        }
    }
    // what is left has no factor below 64: split it until every part is prime
    let mut parts = vec![n];
    while let Some(m) = parts.pop() {
        if m == 1 {
            continue;
        }
        if is_prime(m) {
            primes.push(m);
        } else {
            let f = rho(m);
            parts.extend([f, m / f]);
        }
    }
    primes.sort_unstable();
    let mut out: Vec<(u64, u32)> = Vec::new();
    for p in primes {
        match out.last_mut() {
            Some((q, e)) if *q == p => *e += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

/// A divisor, with the facts about it that [`dims_create`](super::dims_create)'s search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Divisor {
    /// The divisor.
    pub(crate) value: u64,
    /// Its largest prime factor (1 for 1).
    pub(crate) largest_prime: u64,
    /// Its number of prime factors counted with multiplicity (Ω; 0 for 1).
    pub(crate) primes: u32,
}

/// Every divisor of the number whose factorisation is `primes`, ascending.
pub(crate) fn divisors(primes: &[(u64, u32)]) -> Vec<Divisor> {
    let mut divs = vec![Divisor {
        value: 1,
        largest_prime: 1,
        primes: 0,
    }];
    // primes ascending, so the last prime multiplied in is the largest
    for &(p, e) in primes {
        let mut next = Vec::with_capacity(divs.len() * (e as usize + 1));
        for &d in &divs {
            next.push(d);
            let mut x = d;
            for _ in 0..e {
                x = Divisor {
                    value: x.value * p, // a divisor of the number, so it fits
                    largest_prime: p,
                    primes: x.primes + 1,
                };
                next.push(x);
            }
        }
        divs = next;
    }
    divs.sort_unstable();
    divs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(f: &[(u64, u32)]) -> u64 {
        f.iter().map(|&(p, e)| p.pow(e)).product()
    }

    #[test]
    fn primality_agrees_with_a_sieve() {
        let n = 100_000;
        let mut sieve = vec![true; n];
        sieve[0] = false;
        sieve[1] = false;
        for i in 2..n {
            if sieve[i] {
                for j in (i * i..n).step_by(i) {
                    sieve[j] = false;
                }
            }
            assert_eq!(is_prime(i as u64), sieve[i], "{i}");
        }
    }

    #[test]
    fn strong_pseudoprimes_and_large_primes() {
        // strong pseudoprimes to many bases, and Carmichael numbers
        for n in [
            3_215_031_751,
            2_152_302_898_747,
            3_474_749_660_383,
            341_550_071_728_321,
            3_825_123_056_546_413_051,
            561,
            41_041,
            (1u64 << 32) + 1,
        ] {
            assert!(!is_prime(n), "{n}");
        }
        for p in [(1u64 << 61) - 1, 18_446_744_073_709_551_557, 4_294_967_291] {
            assert!(is_prime(p), "{p}");
        }
    }

    #[test]
    fn factorisations_multiply_back_and_are_prime() {
        for n in [
            1,
            2,
            360,
            u64::MAX,
            (1u64 << 61) - 1,
            4_294_967_291 * 4_294_967_279,
            4_294_967_291 * 4_294_967_291,
            18_401_055_938_125_660_800,
            1u64 << 63,
            3_825_123_056_546_413_051,
            1_000_000_007 * 998_244_353 * 17,
            67u64.pow(10),
        ] {
            let f = prime_factors(n);
            assert_eq!(product(&f), n, "{n}: {f:?}");
            assert!(f.iter().all(|&(p, _)| is_prime(p)), "{n}: {f:?}");
            assert!(f.windows(2).all(|w| w[0].0 < w[1].0), "{n}: {f:?}");
            let divs = divisors(&f);
            assert_eq!(
                divs.len() as u32,
                f.iter().map(|&(_, e)| e + 1).product::<u32>()
            );
            assert!(divs.iter().all(|d| n % d.value == 0), "{n}");
        }
        assert_eq!(
            prime_factors(u64::MAX),
            [
                (3, 1),
                (5, 1),
                (17, 1),
                (257, 1),
                (641, 1),
                (65537, 1),
                (6_700_417, 1)
            ]
        );
    }

    #[test]
    fn divisors_of_a_factorisation() {
        let divs = divisors(&prime_factors(360));
        let values: Vec<u64> = divs.iter().map(|d| d.value).collect();
        assert_eq!(
            values,
            [
                1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 18, 20, 24, 30, 36, 40, 45, 60, 72, 90, 120,
                180, 360
            ]
        );
        let facts = |v| {
            divs.iter()
                .find(|d| d.value == v)
                .map(|d| (d.largest_prime, d.primes))
        };
        assert_eq!(facts(1), Some((1, 0)));
        assert_eq!(facts(45), Some((5, 3)));
        assert_eq!(facts(360), Some((5, 6)));
        assert_eq!(
            divisors(&prime_factors(18_401_055_938_125_660_800)).len(),
            184_320
        );
    }
}
