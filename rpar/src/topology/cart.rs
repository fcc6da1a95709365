//! [`CartComm<N>`]: a communicator with an N-dimensional Cartesian grid on its ranks
//! (MPI_Cart_create and the calls on it). Ranks are numbered in row-major order: the last
//! coordinate varies fastest, as in MPI.

use super::agreement;
use super::reorder;
use super::TopoKind;
use crate::{Comm, Error, Result};
use std::fmt;
use std::ops::Deref;

/// A coordinate given to [`CartComm::rank_of`]: any integer type; negative values are allowed on
/// periodic dims, where they wrap around. Implemented for every primitive integer type up to 64
/// bits and `isize`/`usize`.
///
/// ```
/// use rpar::Coordinate;
/// assert_eq!((-3i8).to_i128(), -3);
/// assert_eq!(u64::MAX.to_i128(), (1i128 << 64) - 1);
/// rpar::run(4, |world| {
///     let ring = rpar::CartComm::create(&world, [4], [true], false)?.unwrap();
///     // the same rank, named with three integer types
///     assert_eq!(ring.rank_of([3usize])?, 3);
///     assert_eq!(ring.rank_of([-1i32])?, 3);
///     assert_eq!(ring.rank_of([7u8])?, 3);
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub trait Coordinate: Copy {
    /// The value as an `i128` (wide enough for every integer type rank_of takes); see the
    /// [trait's example](Coordinate).
    fn to_i128(self) -> i128;
}

macro_rules! coordinate {
    ($($t:ty),*) => { $(impl Coordinate for $t {
        #[inline]
        fn to_i128(self) -> i128 { self as i128 }
    })* };
}
coordinate!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// A communicator whose ranks form an `N`-dimensional grid (an MPI Cartesian communicator).
///
/// It dereferences to its [`Comm`], so every point-to-point and collective call works on it;
/// coordinates are `[usize; N]`, so the grid's dimension is checked by the compiler.
///
/// ```
/// let coords = rpar::run(6, |world| {
///     let grid = rpar::CartComm::create(&world, [2, 3], [false, true], false)?.unwrap();
///     let (left, right) = grid.shift(1, 1)?; // along the periodic dim
///     assert_eq!(grid.rank_of(grid.coords())?, grid.rank());
///     Ok((grid.coords(), left, right))
/// })?;
/// assert_eq!(coords[4], ([1, 1], 3, 5));
/// assert_eq!(coords[5], ([1, 2], 4, 3)); // wraps around
/// # Ok::<(), rpar::Error>(())
/// ```
pub struct CartComm<const N: usize> {
    comm: Comm,
    dims: [usize; N],
    periods: [bool; N],
    coords: [usize; N],
}

impl<const N: usize> fmt::Debug for CartComm<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CartComm")
            .field("rank", &self.comm.rank())
            .field("dims", &self.dims)
            .field("periods", &self.periods)
            .field("coords", &self.coords)
            .finish()
    }
}

impl<const N: usize> Deref for CartComm<N> {
    type Target = Comm;
    fn deref(&self) -> &Comm {
        &self.comm
    }
}

/// Checks a grid shape against a communicator of `size` ranks; returns the grid's rank count.
fn check_grid(call: &'static str, dims: &[usize], size: usize) -> Result<usize> {
    if let Some(d) = dims.iter().position(|&d| d == 0) {
        return Err(Error::invalid(
            call,
            format!("every dim must be at least 1, but dim {d} of {dims:?} is 0"),
        ));
    }
    let nnodes = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= size)
        .ok_or_else(|| {
            Error::invalid(
                call,
                format!("the grid {dims:?} needs more ranks than the communicator's {size}"),
            )
        })?;
    Ok(nnodes)
}

/// The grid rank of communicator rank `rank` (`None` beyond the grid's `nnodes`): with
/// `reorder`, the Gray-code placement where it applies; otherwise the same number.
fn place(dims: &[usize], nnodes: usize, rank: usize, reorder: bool) -> Option<usize> {
    if rank >= nnodes {
        return None;
    }
    let gray = reorder
        .then(|| reorder::gray_grid_position(dims, rank))
        .flatten();
    Some(gray.map_or(rank, |coords| rank_in(dims, coords)))
}

/// Row-major coordinates of `rank` in a grid of `dims`.
pub(super) fn coords_in<const N: usize>(dims: &[usize; N], mut rank: usize) -> [usize; N] {
    let mut c = [0; N];
    for i in (0..N).rev() {
        c[i] = rank % dims[i];
        rank /= dims[i];
    }
    c
}

/// Row-major rank of in-range coordinates `c` in a grid of `dims`.
pub(super) fn rank_in(dims: &[usize], c: impl IntoIterator<Item = usize>) -> usize {
    dims.iter().zip(c).fold(0, |acc, (&d, c)| acc * d + c)
}

impl<const N: usize> CartComm<N> {
    /// Makes a Cartesian communicator of the first `dims.iter().product()` ranks of `comm`
    /// (MPI_Cart_create); ranks beyond the grid get `None` (MPI_COMM_NULL). Collective.
    ///
    /// `reorder = true` lets rpar renumber ranks; what it does is [`CartComm::cart_map`]'s
    /// placement (a Gray-code embedding when every dim is a power of two, otherwise the
    /// identity).
    ///
    /// # Errors
    ///
    /// [`Error::CollectiveMismatch`], on every rank, if the ranks pass different `dims`,
    /// `periods` or `reorder` (or grids of different dimensions), naming each version of the
    /// arguments and its ranks (MPI makes this erroneous; rpar checks it with one allgather of
    /// a digest); [`Error::InvalidArgument`] for a zero dim or a grid larger than `comm`; and,
    /// as for every collective, [`Error::Aborted`] if another rank fails during the call and
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives.
    ///
    /// ```
    /// let err = rpar::run(4, |world| {
    ///     let dims = if world.rank() < 2 { [2, 2] } else { [4, 1] };
    ///     rpar::CartComm::create(&world, dims, [false, false], false)?;
    ///     Ok(())
    /// })
    /// .unwrap_err();
    /// assert!(err.to_string().contains("rank 2 called CartComm::create(dims [4, 1]"), "{err}");
    ///
    /// let got = rpar::run(5, |world| {
    ///     let grid = rpar::CartComm::create(&world, [2, 2], [true, true], false)?;
    ///     Ok(grid.map(|g| g.coords()))
    /// })?;
    /// assert_eq!(got, vec![Some([0, 0]), Some([0, 1]), Some([1, 0]), Some([1, 1]), None]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn create(
        comm: &Comm,
        dims: [usize; N],
        periods: [bool; N],
        reorder: bool,
    ) -> Result<Option<CartComm<N>>> {
        agreement::same_arguments(comm, N, &(dims, periods, reorder), || {
            format!("CartComm::create(dims {dims:?}, periods {periods:?}, reorder {reorder})")
        })?;
        let nnodes = check_grid("CartComm::create", &dims, comm.size())?;
        let new_rank = place(&dims, nnodes, comm.rank(), reorder);
        let key = new_rank.map_or(0, |r| r as i32);
        let Some(comm) = comm.split(new_rank.map(|_| 0), key)? else {
            return Ok(None);
        };
        let coords = coords_in(&dims, comm.rank());
        comm.set_topology(TopoKind::Cart);
        Ok(Some(CartComm {
            comm,
            dims,
            periods,
            coords,
        }))
    }

    /// The rank this process would have in the grid created with `reorder = true`, or `None` if
    /// it would not be in the grid (MPI_Cart_map). Local.
    ///
    /// rpar takes the ranks of `comm` to be the nodes of a hypercube, as on the lecture's
    /// machines (rank bits = cube coordinates). When every dim is a power of two, grid
    /// coordinate `c` along a dim of 2^k goes to the Gray code of `c` in k bits, the dims'
    /// codes concatenated (the first dim in the high bits): grid neighbours, wrap-around
    /// included, are then hypercube neighbours. Otherwise no better placement is known and the
    /// grid takes ranks 0..n in order, as MPICH's does.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a zero dim or a grid larger than `comm`.
    ///
    /// ```
    /// let ring = rpar::run(8, |world| {
    ///     Ok(rpar::CartComm::cart_map(&world, [8], [true])?.unwrap())
    /// })?;
    /// // rank r sits at ring position p with gray(p) = r: ring 0 1 3 2 6 7 5 4
    /// assert_eq!(ring, vec![0, 1, 3, 2, 7, 6, 4, 5]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn cart_map(comm: &Comm, dims: [usize; N], periods: [bool; N]) -> Result<Option<usize>> {
        let _ = periods; // the placement is the same with or without wrap-around
        let nnodes = check_grid("CartComm::cart_map", &dims, comm.size())?;
        Ok(place(&dims, nnodes, comm.rank(), true))
    }

    /// This rank's coordinates (MPI_Cart_coords for the calling rank).
    ///
    /// ```
    /// let coords = rpar::run(6, |world| {
    ///     let grid = rpar::CartComm::create(&world, [2, 3], [false; 2], false)?.unwrap();
    ///     Ok(grid.coords())
    /// })?;
    /// // row-major: the last coordinate varies fastest
    /// assert_eq!(coords, vec![[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn coords(&self) -> [usize; N] {
        self.coords
    }

    /// The grid's extent along each dim (the `dims` of MPI_Cart_get).
    ///
    /// ```
    /// rpar::run(12, |world| {
    ///     let mut dims = [0; 2];
    ///     rpar::dims_create(world.size(), &mut dims)?;
    ///     let grid = rpar::CartComm::create(&world, dims, [true; 2], false)?.unwrap();
    ///     assert_eq!(grid.dims(), [4, 3]);
    ///     assert_eq!(grid.dims().iter().product::<usize>(), grid.size());
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn dims(&self) -> [usize; N] {
        self.dims
    }

    /// Whether each dim wraps around (the `periods` of MPI_Cart_get).
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     let cylinder = rpar::CartComm::create(&world, [2, 2], [true, false], false)?.unwrap();
    ///     assert_eq!(cylinder.periods(), [true, false]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn periods(&self) -> [bool; N] {
        self.periods
    }

    /// Dims, periods and this rank's coordinates (MPI_Cart_get); `N` is MPI_Cartdim_get.
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     let grid = rpar::CartComm::create(&world, [4], [true], false)?.unwrap();
    ///     assert_eq!(grid.cart_get(), ([4], [true], [world.rank()]));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn cart_get(&self) -> ([usize; N], [bool; N], [usize; N]) {
        (self.dims, self.periods, self.coords)
    }

    /// The coordinates of `rank` (MPI_Cart_coords).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] if `rank` is not in the grid.
    ///
    /// ```
    /// rpar::run(6, |world| {
    ///     let grid = rpar::CartComm::create(&world, [3, 2], [false; 2], false)?.unwrap();
    ///     assert_eq!(grid.coords_of(3)?, [1, 1]);
    ///     assert_eq!(grid.rank_of(grid.coords_of(5)?)?, 5);
    ///     assert!(matches!(grid.coords_of(6), Err(rpar::Error::RankOutOfRange { rank: 6, size: 6 })));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn coords_of(&self, rank: usize) -> Result<[usize; N]> {
        self.comm.check_rank(rank)?;
        Ok(coords_in(&self.dims, rank))
    }

    /// The rank at `coords` (MPI_Cart_rank). On periodic dims any integer is allowed and wraps
    /// around; on the others a coordinate outside `0..dim` is an error.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a coordinate outside `0..dim` on a non-periodic
    /// dim.
    ///
    /// ```
    /// rpar::run(12, |world| {
    ///     let grid = rpar::CartComm::create(&world, [3, 4], [true, false], false)?.unwrap();
    ///     assert_eq!(grid.rank_of([1, 2])?, 6);
    ///     assert_eq!(grid.rank_of([-2, 2])?, 6); // dim 0 wraps
    ///     assert!(grid.rank_of([1, 4]).is_err()); // dim 1 does not
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn rank_of<C: Coordinate>(&self, coords: [C; N]) -> Result<usize> {
        let mut wrapped = [0usize; N];
        for (i, c) in coords.iter().enumerate() {
            wrapped[i] = self.wrap(i, c.to_i128()).ok_or_else(|| {
                Error::invalid(
                    "CartComm::rank_of",
                    format!(
                        "coordinate {} of dim {i} is outside 0..{} and the dim is not periodic",
                        c.to_i128(),
                        self.dims[i]
                    ),
                )
            })?;
        }
        Ok(rank_in(&self.dims, wrapped))
    }

    /// Coordinate `c` on dim `i`, wrapped if the dim is periodic; `None` if off the grid.
    fn wrap(&self, i: usize, c: i128) -> Option<usize> {
        let d = self.dims[i] as i128;
        if self.periods[i] {
            Some(c.rem_euclid(d) as usize)
        } else {
            (0..d).contains(&c).then_some(c as usize)
        }
    }

    /// The ranks `disp` steps back and forward along `dim`: `(source, dest)` for a shift of data
    /// by `disp` (MPI_Cart_shift). [`PROC_NULL`](crate::PROC_NULL) where that step leaves a
    /// non-periodic grid, so that the same send and receive serve the edge (they complete at
    /// once there); on periodic dims any `disp` wraps around, however large.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `dim` is not below `N`.
    ///
    /// ```
    /// rpar::run(5, |world| {
    ///     let line = rpar::CartComm::create(&world, [5], [false], false)?.unwrap();
    ///     if line.rank() == 1 {
    ///         assert_eq!(line.shift(0, 2)?, (rpar::PROC_NULL, 3));
    ///         assert_eq!(line.shift(0, -1)?, (2, 0));
    ///     }
    ///     // a halo exchange along the line: no case for its ends
    ///     let (left, right) = line.shift(0, 1)?;
    ///     let mut from_left = -1i32;
    ///     line.sendrecv(&(line.rank() as i32), right, 0, &mut from_left, left, 0)?;
    ///     assert_eq!(from_left, line.rank() as i32 - 1); // rank 0 keeps its -1
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn shift(&self, dim: usize, disp: isize) -> Result<(usize, usize)> {
        if dim >= N {
            return Err(Error::invalid(
                "CartComm::shift",
                format!("dim {dim} does not exist: the grid has {N} dims"),
            ));
        }
        let at = |step: i128| {
            let c = self.wrap(dim, self.coords[dim] as i128 + step)?;
            let mut coords = self.coords;
            coords[dim] = c;
            Some(rank_in(&self.dims, coords))
        };
        let disp = disp as i128;
        let or_null = |r: Option<usize>| r.unwrap_or(crate::PROC_NULL);
        Ok((or_null(at(-disp)), or_null(at(disp))))
    }

    /// The sub-grids that keep the dims where `remain` is true (MPI_Cart_sub): one `M`-dim
    /// communicator for each setting of the dropped coordinates, ranked row-major in the kept
    /// ones. `M` must be the number of `true`s. Keeping no dim gives every rank a grid of its
    /// own, of size 1 and 0 dims. Collective.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `M` is not the number of `true`s in `remain`; and,
    /// as for every collective, [`Error::Aborted`] if another rank fails during the call.
    ///
    /// ```
    /// rpar::run(6, |world| {
    ///     let grid = rpar::CartComm::create(&world, [2, 3], [false, true], false)?.unwrap();
    ///     let row: rpar::CartComm<1> = grid.sub([false, true])?;
    ///     assert_eq!((row.size(), row.dims(), row.periods()), (3, [3], [true]));
    ///     assert_eq!(row.coords(), [grid.coords()[1]]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn sub<const M: usize>(&self, remain: [bool; N]) -> Result<CartComm<M>> {
        let kept = remain.iter().filter(|&&r| r).count();
        if kept != M {
            return Err(Error::invalid(
                "CartComm::sub",
                format!("the result was declared with {M} dims but remain {remain:?} keeps {kept}"),
            ));
        }
        let pick = |keep: bool| {
            (0..N)
                .filter(move |&i| remain[i] == keep)
                .map(|i| (self.dims[i], self.coords[i]))
        };
        let (dropped_dims, dropped_coords): (Vec<usize>, Vec<usize>) = pick(false).unzip();
        let color = rank_in(&dropped_dims, dropped_coords);
        let mut dims = [0; M];
        let mut periods = [false; M];
        let mut coords = [0; M];
        for (j, i) in (0..N).filter(|&i| remain[i]).enumerate() {
            (dims[j], periods[j], coords[j]) = (self.dims[i], self.periods[i], self.coords[i]);
        }
        let key = rank_in(&dims, coords);
        let comm = self
            .comm
            .split(Some(color as u32), key as i32)?
            .expect("every rank passes a color, so every rank gets a communicator");
        comm.set_topology(TopoKind::Cart);
        Ok(CartComm {
            comm,
            dims,
            periods,
            coords,
        })
    }

    /// A copy with a message space of its own and the same grid (MPI_Comm_dup). Collective.
    ///
    /// # Errors
    ///
    /// As for every collective, [`Error::Aborted`] if another rank fails during the
    /// call and [`Error::CollectiveMismatch`] if the ranks call different collectives.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let grid = rpar::CartComm::create(&world, [2], [true], false)?.unwrap();
    ///     let copy = grid.dup()?;
    ///     assert_eq!((copy.dims(), copy.coords()), (grid.dims(), grid.coords()));
    ///     let other = 1 - grid.rank();
    ///     copy.send(&1u8, other, 0)?;
    ///     grid.send(&2u8, other, 0)?;
    ///     assert_eq!(grid.recv::<u8>(other, 0)?.0, [2]); // not the message sent on `copy`
    ///     assert_eq!(copy.recv::<u8>(other, 0)?.0, [1]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn dup(&self) -> Result<CartComm<N>> {
        Ok(CartComm {
            comm: self.comm.dup()?,
            ..*self
        })
    }

    /// The plain communicator underneath: the same ranks, still reporting the grid it was made
    /// for to [`TopoKind::of`] (as MPI_Topo_test does). (A `CartComm` also dereferences to it, so
    /// `grid.send(…)` works without this.)
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     let grid = rpar::CartComm::create(&world, [2, 2], [false; 2], false)?.unwrap();
    ///     let plain: &rpar::Comm = grid.comm();
    ///     assert_eq!((plain.rank(), plain.size()), (grid.rank(), 4));
    ///     assert_eq!(rpar::TopoKind::of(&plain), rpar::TopoKind::Cart);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// Neighbours in MPI's order for neighbourhood collectives: for each dim, the rank one step
    /// back, then one step forward (`None` off a non-periodic edge).
    pub(super) fn neighbor_ranks(&self) -> Vec<Option<usize>> {
        (0..N)
            .flat_map(|d| {
                let (back, fwd) = self.shift(d, 1).expect("d < N");
                [back, fwd].map(|r| (r != crate::PROC_NULL).then_some(r))
            })
            .collect()
    }
}
