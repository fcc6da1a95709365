//! Property test: reduce_scatter with arbitrary counts (empty blocks, one big block, …) and
//! reduce with any root, for every algorithm, against a sequential fold, with a
//! non-commutative operator (affine-map composition modulo 2^64). (`Ring`, non-commutative
//! operator) is left out, as in every sweep (`ring_with_non_commutative_op`).

mod collective;
mod common;

use collective::reduction::ring_with_non_commutative_op;
use proptest::prelude::*;
use rpar::{Reduce, ReduceScatter, UserOp};

fn compose(f: [u64; 2], g: [u64; 2]) -> [u64; 2] {
    [
        f[0].wrapping_mul(g[0]),
        f[1].wrapping_mul(g[0]).wrapping_add(g[1]),
    ]
}

fn input(rank: usize, i: usize, seed: u64) -> [u64; 2] {
    let x = seed ^ ((rank as u64) << 20) ^ i as u64;
    [x.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1, x.rotate_left(17)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn any_counts_and_root(
        counts in prop::collection::vec(0usize..6, 1..12),
        root_pick in any::<usize>(),
        seed in any::<u64>(),
    ) {
        let p = counts.len();
        let n: usize = counts.iter().sum();
        let root = root_pick % p;
        let op = UserOp::non_commutative(compose);
        let total: Vec<[u64; 2]> = (0..n)
            .map(|i| (0..p).map(|r| input(r, i, seed)).reduce(compose).unwrap())
            .collect();
        let got = rpar::run(p, |world| {
            let mine: Vec<[u64; 2]> = (0..n).map(|i| input(world.rank(), i, seed)).collect();
            let mut blocks = Vec::new();
            for algorithm in [ReduceScatter::RecursiveHalving, ReduceScatter::Pairwise, ReduceScatter::Ring] {
                if ring_with_non_commutative_op(algorithm == ReduceScatter::Ring, &op) {
                    continue;
                }
                blocks.push(world.using(algorithm).reduce_scatter((&mine[..], rpar::Counts(&counts)), op)?);
            }
            let mut roots = Vec::new();
            for algorithm in [Reduce::Linear, Reduce::Binomial, Reduce::Rabenseifner] {
                roots.push(world.using(algorithm).reduce(&mine[..], op, root)?);
            }
            Ok((blocks, roots))
        })
        .unwrap();
        let mut start = 0;
        for (r, (blocks, roots)) in got.into_iter().enumerate() {
            let own = &total[start..start + counts[r]];
            start += counts[r];
            for b in blocks {
                prop_assert_eq!(&b[..], own);
            }
            for v in roots {
                prop_assert_eq!(v, (r == root).then(|| total.clone()));
            }
        }
    }
}
