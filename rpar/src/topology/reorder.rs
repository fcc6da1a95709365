//! What `reorder = true` does: embeddings of grids in a hypercube by the binary reflected Gray
//! code (the lecture's ring-in-hypercube embedding, and its product for meshes and tori).
//!
//! Ring position i goes to hypercube node G(i) = i XOR (i >> 1). Consecutive positions, and the
//! last and the first, differ in exactly one bit, so ring neighbours are cube neighbours. A grid
//! of 2^a x 2^b x … gray-codes each coordinate in its own bits and concatenates them.

use crate::collective::gray_code_inverse;

/// For a grid whose dims are all powers of two: the grid coordinates placed on hypercube node
/// `node` (the fields of `node`'s bits, first dim highest, each decoded from Gray code).
/// `None` if some dim is not a power of two.
pub(super) fn gray_grid_position(dims: &[usize], node: usize) -> Option<Vec<usize>> {
    if !dims.iter().all(|d| d.is_power_of_two()) {
        return None;
    }
    let mut coords = vec![0; dims.len()];
    let mut rest = node;
    for (i, d) in dims.iter().enumerate().rev() {
        coords[i] = gray_code_inverse(rest % d);
        rest /= d;
    }
    Some(coords)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::gray_code;

    #[test]
    fn ring_neighbours_are_cube_neighbours() {
        for k in 0..8 {
            let n = 1usize << k;
            for i in 0..n {
                let (a, b) = (gray_code(i), gray_code((i + 1) % n));
                assert!(n == 1 || (a ^ b).count_ones() == 1, "n {n} i {i}");
            }
        }
    }

    #[test]
    fn torus_neighbours_are_cube_neighbours() {
        let dims = [4, 8];
        let mut node_of = vec![0; 32];
        for node in 0..32 {
            let c = gray_grid_position(&dims, node).unwrap();
            node_of[c[0] * 8 + c[1]] = node;
        }
        for r in 0..4 {
            for c in 0..8 {
                let here = node_of[r * 8 + c];
                for other in [node_of[((r + 1) % 4) * 8 + c], node_of[r * 8 + (c + 1) % 8]] {
                    assert_eq!((here ^ other).count_ones(), 1);
                }
            }
        }
        assert_eq!(gray_grid_position(&[3, 4], 0), None);
    }
}
