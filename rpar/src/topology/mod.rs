//! Virtual topologies: Cartesian grids ([`CartComm`]), graphs ([`GraphComm`]) and distributed
//! graphs ([`DistGraphComm`]) on the ranks of a communicator, [`dims_create`], the Gray-code
//! placement behind `reorder = true`, the neighbourhood collectives ([`Neighborhood`]), and the
//! [`Topology`] trait that `topology!` implements. Inside: `factor` (the prime factorisation
//! behind `dims_create`) and `agreement` (the check that every rank passed a constructor the
//! same arguments).
//!
//! Depends on `comm` (each topology communicator wraps a [`Comm`] made by split or dup) and on
//! `collective::Channel`, through which the neighbourhood collectives talk (tags 400..=499 on the
//! collective context).

mod agreement;
mod cart;
mod dims;
mod factor;
mod graph;
mod neighbor;
mod neighbor_w;
mod reorder;

pub use crate::comm::TopoKind;
pub use cart::{CartComm, Coordinate};
pub use dims::dims_create;
pub use graph::{DistGraphComm, GraphComm};
pub use neighbor::Neighborhood;

use crate::{Comm, Result};

impl TopoKind {
    /// The topology of `comm` (MPI_Topo_test): [`TopoKind::None`] for a plain communicator, the
    /// kind of the grid or graph it was made for otherwise — also when it is seen as a plain
    /// [`Comm`] (a topology communicator's [`comm`](CartComm::comm); a [`CartComm`],
    /// [`GraphComm`] or [`DistGraphComm`] dereferences to it), and after a [`Comm::dup`], which
    /// keeps the topology as MPI_Comm_dup does.
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     use rpar::TopoKind;
    ///     assert_eq!(TopoKind::of(&world), TopoKind::None);
    ///     let grid = rpar::CartComm::create(&world, [2, 2], [false; 2], false)?.unwrap();
    ///     assert_eq!(TopoKind::of(&grid), TopoKind::Cart);
    ///     let plain: &rpar::Comm = grid.comm();
    ///     assert_eq!(TopoKind::of(plain), TopoKind::Cart);
    ///     assert_eq!(TopoKind::of(&plain.dup()?), TopoKind::Cart);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn of(comm: &Comm) -> TopoKind {
        comm.topology()
    }
}

/// A topology declared as a type, as `topology!` writes them: its size and how to build its
/// communicator. `spmd!(topology = T, |grid| …)` launches `T::SIZE` ranks and hands each
/// `T::create(&world)` (MPI_Cart_create or MPI_Graph_create, with the shape checked at compile
/// time).
///
/// ```
/// rpar::topology! {
///     /// A ring of four.
///     Ring = cart[4] periodic[true];
/// }
/// use rpar::Topology;
/// assert_eq!(Ring::SIZE, 4);
/// let coords = rpar::run(Ring::SIZE, |world| Ok(Ring::create(&world)?.unwrap().coords()))?;
/// assert_eq!(coords, vec![[0], [1], [2], [3]]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub trait Topology {
    /// The communicator a rank gets: `CartComm<N>` or `GraphComm`.
    type Comm;
    /// How many ranks the topology has.
    const SIZE: usize;
    /// Builds the topology on the first `SIZE` ranks of `comm`; the others get `None`.
    /// Collective. See the [trait's example](Topology).
    ///
    /// # Errors
    ///
    /// Those of [`CartComm::create`] or [`GraphComm::create`], which `topology!`'s implementation
    /// calls; [`Error::InvalidArgument`](crate::Error::InvalidArgument) in particular when `comm`
    /// has fewer than `SIZE` ranks.
    fn create(comm: &Comm) -> Result<Option<Self::Comm>>;
}
