//! The MPI transport (cargo feature `mpi`): each rank is one MPI process, started by an MPI
//! launcher (`mpiexec -n 4 ./prog`, `srun`), on MPICH or Open MPI through the `mpi` crate
//! (rsmpi). rpar's messages travel as MPI messages ([`Wire`]); collectives can use MPI's own
//! ([`native`]), with rpar's type maps turned into MPI derived datatypes ([`datatype`]).
//!
//! Depends on `datatype` and the rest of `transport`; nothing above it.

mod agreement;
mod classes;
pub(crate) mod clock;
pub(crate) mod datatype;
pub(crate) mod direct;
mod link;
pub(crate) mod native;
mod payload;
mod sends;
pub(crate) mod setup;
mod stand_ins;
mod wire;

pub(crate) use link::Wire;
pub(crate) use payload::RemotePayload;
