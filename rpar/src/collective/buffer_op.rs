//! [`BufferOp`]: a user operator over whole buffers (MPI_Op_create with an MPI_User_function,
//! rsmpi's `UserOperation`), beside the element-wise [`UserOp`](super::UserOp).
//!
//! MPI calls a user function with `invec`, `inoutvec` and their length in elements of the
//! datatype, and computes `inoutvec[i] = invec[i] ∘ inoutvec[i]`. A `BufferOp` gets the same
//! two buffers as slices; its operand is a block of `block` consecutive elements fixed when the
//! operator is made (MPI's datatype: an `n x n` matrix of `f64` is `block = n * n`), so an
//! operator on values whose size is known only at run time needs no const-generic type. The
//! algorithms split buffers only at multiples of the block ([`ReduceOp::block_len`]), and a
//! buffer that is not a whole number of blocks is an error.

use super::op::ReduceOp;

/// A user operator over whole buffers (MPI_Op_create with an `MPI_User_function`): the closure
/// `f(lower, inout)` gets two slices of the same length, a whole number of blocks of `block`
/// elements, and must set `inout[b] = lower[b] ∘ inout[b]` for every block `b` (`lower` from
/// the lower ranks, as MPI's `invec`). The operation on blocks must be associative; the
/// commutativity flag tells the algorithms whether they may reorder operands.
///
/// ```
/// use rpar::BufferOp;
/// // n x n matrices of f64, n known only at run time: the product, in rank order
/// let n = 2;
/// let matmul = BufferOp::non_commutative(n * n, move |a: &[f64], c: &mut [f64]| {
///     for (a, c) in a.chunks(n * n).zip(c.chunks_mut(n * n)) {
///         let b = c.to_vec(); // c = a * b
///         for i in 0..n {
///             for j in 0..n {
///                 c[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
///             }
///         }
///     }
/// });
/// let got = rpar::run(3, |world| {
///     let r = world.rank() as f64;
///     world.allreduce(&[1.0, r, 0.0, 1.0][..], &matmul) // [[1, r], [0, 1]]
/// })?;
/// assert_eq!(got[2], [1.0, 3.0, 0.0, 1.0]); // [[1, 0 + 1 + 2], [0, 1]]
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct BufferOp<F> {
    f: F,
    block: usize,
    commutative: bool,
}

impl<F> BufferOp<F> {
    /// An operator on blocks of `block` elements that is associative and commutative
    /// (MPI_Op_create with `commute = 1`): the algorithms may combine blocks out of rank order.
    ///
    /// ```
    /// use rpar::{BufferOp, ReduceOp};
    /// // the element-wise sum, one call per buffer
    /// let add = BufferOp::commutative(1, |a: &[i64], c: &mut [i64]| {
    ///     c.iter_mut().zip(a).for_each(|(c, a)| *c += a)
    /// });
    /// assert!(ReduceOp::<i64>::is_commutative(&add));
    /// let got = rpar::run(4, |world| world.allreduce(&[world.rank() as i64, 1][..], &add))?;
    /// assert_eq!(got[0], [6, 4]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn commutative(block: usize, f: F) -> Self {
        Self::new(block, f, true)
    }

    /// An operator on blocks of `block` elements that is associative but not commutative
    /// (MPI_Op_create with `commute = 0`): blocks are combined in rank order.
    ///
    /// ```
    /// use rpar::{BufferOp, ReduceOp};
    /// // strings of 3 bytes joined pairwise: keep the lower rank's first byte
    /// let first = BufferOp::non_commutative(3, |a: &[u8], c: &mut [u8]| {
    ///     for (a, c) in a.chunks(3).zip(c.chunks_mut(3)) {
    ///         c[0] = a[0];
    ///     }
    /// });
    /// assert!(!ReduceOp::<u8>::is_commutative(&first));
    /// let got = rpar::run(3, |world| world.scan(&[b'a' + world.rank() as u8; 3][..], &first))?;
    /// assert_eq!(got[2], *b"acc");
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn non_commutative(block: usize, f: F) -> Self {
        Self::new(block, f, false)
    }

    /// An operator on blocks of `block` elements with an explicit commutativity flag
    /// (MPI_Op_create's `commute`). A `block` of 0 is taken as 1.
    ///
    /// ```
    /// use rpar::{BufferOp, ReduceOp};
    /// let max = BufferOp::new(1, |a: &[u32], c: &mut [u32]| {
    ///     c.iter_mut().zip(a).for_each(|(c, &a)| *c = (*c).max(a))
    /// }, true);
    /// assert_eq!(ReduceOp::<u32>::block_len(&max), 1);
    /// # let _ = rpar::run(2, |world| world.allreduce(&[1u32][..], &max))?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn new(block: usize, f: F, commutative: bool) -> Self {
        BufferOp {
            f,
            block: block.max(1),
            commutative,
        }
    }
}

impl<F> std::fmt::Debug for BufferOp<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferOp")
            .field("block", &self.block)
            .field("commutative", &self.commutative)
            .finish_non_exhaustive()
    }
}

impl<T: Copy, F: Fn(&[T], &mut [T])> ReduceOp<T> for BufferOp<F> {
    /// The operator on one-element buffers: `f(&[a], &mut [b])`. Only meaningful for a block
    /// of 1; the collectives call [`reduce_left`](ReduceOp::reduce_left) and
    /// [`reduce_right`](ReduceOp::reduce_right) with whole blocks.
    fn combine(&self, a: T, b: T) -> T {
        let mut out = [b];
        (self.f)(&[a], &mut out);
        out[0]
    }

    fn is_commutative(&self) -> bool {
        self.commutative
    }

    fn block_len(&self) -> usize {
        self.block
    }

    /// `f(lower, acc)`: MPI's `inoutvec = invec ∘ inoutvec`.
    fn reduce_left(&self, lower: &[T], acc: &mut [T]) {
        debug_assert_eq!(lower.len(), acc.len());
        (self.f)(lower, acc);
    }

    /// `acc ∘ higher`, computed as MPI does with a user function: into a copy of `higher`,
    /// then back into `acc`.
    fn reduce_right(&self, acc: &mut [T], higher: &[T]) {
        debug_assert_eq!(higher.len(), acc.len());
        let mut out = higher.to_vec();
        (self.f)(acc, &mut out);
        acc.copy_from_slice(&out);
    }
}
