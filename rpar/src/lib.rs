//! # rpar — MPI-style message passing for Rust
//!
//! Write one SPMD program; rpar runs it as ranks (threads) on a lock-free in-process runtime,
//! with MPI's model: communicators, tagged point-to-point messages with MPI's matching rules,
//! derived datatypes, virtual topologies and collectives.
//!
//! ```
//! use rpar::prelude::*;
//!
//! let results = spmd!(ranks = 4, |world| {
//!     let next = (world.rank() + 1) % world.size();
//!     let prev = (world.rank() + world.size() - 1) % world.size();
//!     let mut got = 0usize;
//!     world.sendrecv(&world.rank(), next, 0, &mut got, prev, 0)?;
//!     on root {
//!         println!("{} ranks in a ring", world.size());
//!     }
//!     Ok(got)
//! })?;
//! assert_eq!(results, vec![3, 0, 1, 2]);
//! # Ok::<(), rpar::Error>(())
//! ```
//!
//! Module map: `universe` launches ranks; `comm` is the communicator and point-to-point calls;
//! `collective` the collective operations; `datatype` type maps; `topology` Cartesian and graph
//! communicators ([`CartComm`], [`GraphComm`], [`DistGraphComm`], [`topology!`]); `transport`
//! the mailboxes underneath. Data flows one way: user code → `Comm` → collective algorithm →
//! transport.
//!
//! # Collectives
//!
//! Every collective is one method of [`Comm`] named after its MPI routine (MPI_Allreduce is
//! [`Comm::allreduce`], MPI_Gatherv is [`Comm::gather`] with varying blocks), called by every
//! rank of the communicator in the same order. The form of the call lives in its arguments:
//!
//! - `&x` alone: rpar allocates the result (`allreduce(&x, Sum)` → a new value or `Vec`);
//! - `(&x, &mut y)`: MPI's `sendbuf` and `recvbuf`;
//! - [`InPlace`]`(&mut y)`: MPI_IN_PLACE;
//! - an owned `Vec`: moved, uncopied in-process where the algorithm can (`gather`, `scatter`,
//!   `alltoall` of `Vec<Vec<T>>`, `shift_circular`);
//! - [`Typed`]`::new(&x, &ty, n)`: `n` elements of a committed derived datatype, and
//!   [`Typed::varying`] for the typed v-forms;
//! - [`Varying`]`::new(&mut y, &counts, &displs)` and [`Counts`]`(&counts)`: the v-forms'
//!   blocks, a count per rank (MPI_Gatherv, MPI_Alltoallv, MPI_Reduce_scatter, …).
//!
//! The algorithm is a value too: [`Comm::using`]`(Allreduce::Ring)` chooses it for the calls
//! made through what it returns; each family's enum ([`Bcast`], [`Allreduce`], …) gives each
//! variant's alpha-beta cost in its rustdoc.
//!
//! ```
//! use rpar::{Allreduce, Sum};
//!
//! let got = rpar::run(4, |world| {
//!     let mine = [world.rank() as u64, 1];
//!     let mut total = [0u64; 2];
//!     world.allreduce((&mine[..], &mut total[..]), Sum)?; // MPI_Allreduce(sendbuf, recvbuf)
//!     let ring = world.using(Allreduce::Ring).allreduce(&mine[..], Sum)?; // the ring algorithm
//!     assert_eq!(ring, total);
//!     Ok(total)
//! })?;
//! assert_eq!(got[3], [6, 4]);
//! # Ok::<(), rpar::Error>(())
//! ```
//!
//! ## Default algorithms
//!
//! An explicitly chosen algorithm runs as chosen (or refuses with an error: a `Hypercube` on a
//! rank count that is not a power of two, a `Ring` reduction with a non-commutative operator).
//! `Auto` is decided by three rules, the first that applies:
//!
//! 1. **On the MPI transport** `Auto` runs MPI's own `MPI_Barrier`, `MPI_Bcast`,
//!    `MPI_Allgather` (not in place), `MPI_Alltoall`, and `MPI_Reduce` and `MPI_Allreduce` for
//!    predefined operators.
//! 2. **In-process**, where the communicator's ranks share an arena and the element type's
//!    alignment fits it, the forms with equal blocks of barrier, bcast, reduce, allreduce,
//!    allgather and alltoall run `SharedMemory`.
//! 3. **Everywhere else** (and for an explicit `SharedMemory` where it cannot run), the family's
//!    `select(ranks, bytes, commutative)`: a pure function of the operation, the rank count `p`,
//!    the bytes `m` (as the row says), whether `p` is a power of two, and the operator's
//!    commutativity, tuned on the 2-core development machine:
//!
//! | operation | `bytes` (`m`) | `select` |
//! |---|---|---|
//! | barrier ([`Barrier`]) | ignored | `p <= 2` or `p >= 16`: `Central`; else `Dissemination` |
//! | bcast ([`Bcast`]) | the message | `p <= 2`: `Linear`; else `Binomial` |
//! | gather ([`Gather`]), gatherv, gather_owned | one block (gatherv: unknown) | `Linear` |
//! | scatter(v) ([`Scatter`]) | ignored (the receivers do not know it) | `p <= 8`: `Linear`; else `Binomial` |
//! | allgather(v) ([`Allgather`]) | one block (allgatherv: the mean) | `p m < 64 KiB`: `Ring`; `p` a power of two: `RecursiveDoubling`; else `Torus` |
//! | alltoall ([`Alltoall`]) | one block | `p >= 16` and `m <= 256 B`: `Bruck`; `m <= 32 KiB`: `Linear`; else `Pairwise` |
//! | alltoallv | — | `Pairwise` |
//! | alltoall_owned | — | `Linear` |
//! | reduce ([`Reduce`]) | one rank's vector | `p <= 8` or `m < 8 KiB`: `Linear`; else `Binomial` |
//! | allreduce ([`Allreduce`]) | one rank's vector | `m < 4 KiB`: `RecursiveDoubling`; else `ReduceBcast` |
//! | reduce_scatter(_block) ([`ReduceScatter`]) | one rank's whole input | `m < 16 KiB`: `RecursiveHalving`; else `Pairwise` |
//! | scan, exscan ([`Scan`]) | one rank's vector | `p > 8` and `m < 8 KiB`: `RecursiveDoubling`; else `Linear` |
//! | shift_circular ([`Shift`]) | what each rank sends | `Direct` |
//!
//! Commutativity changes no choice: every default keeps a non-commutative operator's rank order
//! (`Ring`, the one reduction algorithm that would not, is never a default). The typed forms
//! (`bcast_typed`, …) run the byte collective's `Auto` on the packed data. Each family's own
//! table, with the measurements behind it, is on its enum.

#![forbid(unsafe_op_in_unsafe_fn)]

#[allow(unused_extern_crates)] // lets `::rpar::…` paths of the derives work inside this crate
extern crate self as rpar;

mod clock;
mod collective;
mod comm;
pub mod cost;
mod datatype;
mod error;
#[cfg(rpar_faults)]
#[doc(hidden)]
pub mod fault;
#[cfg(not(rpar_faults))]
mod fault;
mod info;
#[cfg(feature = "mpi")]
pub mod mpi {
    //! The MPI transport's public pieces (cargo feature `mpi`): rpar type maps as MPI
    //! datatypes, and rsmpi itself for MPI code of your own beside rpar's.
    pub use crate::transport::mpi::datatype::MpiDatatype;
    pub use ::mpi as rsmpi;
}
pub mod pattern;
pub mod sim;
mod topology;
mod trace;
mod transport;
mod universe;

pub use collective::reduce_local;
pub use collective::{gray_code, gray_code_inverse};
pub use collective::{
    Allgather, Allreduce, Alltoall, BAnd, BOr, BXor, Barrier, Bcast, BufferOp, Choice,
    CollectiveAlgorithm, Gather, LAnd, LOr, LXor, Loc, Max, MaxLoc, Min, MinLoc, Predefined, Prod,
    Reduce, ReduceOp, ReduceScatter, Scan, Scatter, Shift, Sum, UserOp, Using,
};
/// The forms of the collectives' arguments (see [`Comm::allreduce`] and the others): the
/// views that say how a buffer is laid out, and the traits that list what each collective
/// takes.
pub use collective::{
    AllgatherArgs, AlltoallArgs, BcastBuf, Blocks, Counts, GatherArgs, InPlace, ReduceArgs,
    ReduceScatterArgs, ScatterArgs, ShiftArgs, Typed, Varying, ViewBuf,
};
pub use comm::{
    buffer_attach, buffer_detach, start_all, test_all, test_any, test_some, wait_all, wait_any,
    wait_some, Buffer, BufferMut, Comm, MatchedMessage, ModeSends, Packed, Persistent, Probed,
    RecvBuf, Request, Scope, SendBuf, SendMode, Status, TestAny, ANY_SOURCE, ANY_TAG,
    BSEND_OVERHEAD, PROC_NULL, TAG_UB, UNDEFINED,
};
pub use comm::{Comparison, Group, Keyval, SplitType, MAX_OBJECT_NAME};
pub use comm::{
    InterAllgatherArgs, InterAlltoallArgs, InterComm, InterGatherArgs, InterReduceArgs,
    InterReduceScatterArgs, InterScatterArgs, InterScope, ROOT,
};
pub use datatype::{
    BasicType, Combiner, CombinerKind, CommittedType, Datatype, Distribution, Envelope, Order,
    TypeLayout, TypeMap,
};

/// What `#[derive(Datatype)]` expands to uses; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::datatype::{static_len, StaticMap};
}
pub use clock::{processor_name, wtick, wtime, wtime_is_global};
pub use error::{BlockedCall, Error, Result, Warning};
pub use info::{Info, MAX_INFO_KEY, MAX_INFO_VAL};
/// The complex numbers of the `num-complex` crate, re-exported: `Complex<f32>` and
/// `Complex<f64>` are basic types ([`BasicType::C32`], [`BasicType::C64`]; MPI_C_FLOAT_COMPLEX,
/// MPI_C_DOUBLE_COMPLEX) that [`Sum`] and [`Prod`] reduce.
///
/// ```
/// use rpar::{Complex, Datatype, Prod};
/// let z = rpar::run(3, |world| world.allreduce(&Complex::new(0.0f64, 1.0), Prod))?;
/// assert_eq!(z[0], Complex::new(0.0, -1.0)); // i * i * i
/// assert_eq!(Complex::<f32>::type_map().size(), 8);
/// # Ok::<(), rpar::Error>(())
/// ```
pub use num_complex::Complex;
pub use topology::{
    dims_create, CartComm, Coordinate, DistGraphComm, GraphComm, Neighborhood, TopoKind, Topology,
};
pub use trace::CommMatrix;
pub use transport::CollectiveCall;
pub use universe::{
    is_main_process, launched_by_mpi, mpi_processes, run, RankResult, ResultLink, RunReport,
    RunResult, Simulation, Transport, Universe,
};

/// Runs a block on every rank: `spmd!(ranks = N, |world| { … })` launches N ranks (threads) and
/// evaluates to their results in rank order, `Result<Vec<R>, Error>`. The closure's parameter
/// is the world communicator; its body returns `Result<R, Error>`.
///
/// Inside the body, `on root { … }` runs a block on rank 0 only and `on rank(k) { … }` on rank
/// `k` only, at any depth. `spmd!(topology = T, |grid| { … })` instead launches exactly the
/// ranks of a [`Topology`] declared with [`topology!`], each with its `CartComm<N>` or
/// `GraphComm`. Misuse (no `ranks`, zero ranks, a closure without exactly one parameter, an
/// unknown key, a malformed `on` clause) is a compile error; see `ui-tests/README.md`.
///
/// ```
/// use rpar::prelude::*;
///
/// let seen = spmd!(ranks = 3, |world| {
///     let mut notes: Vec<String> = Vec::new();
///     on root {
///         notes.push("I am the root".into());
///     }
///     on rank(2) {
///         notes.push("I am the last".into());
///     }
///     world.barrier()?;
///     Ok(notes)
/// })?;
/// assert_eq!(seen, vec![vec!["I am the root"], vec![], vec!["I am the last"]]);
/// # Ok::<(), rpar::Error>(())
/// ```
///
/// MPI: `mpiexec -n N ./prog` with `MPI_Init` / `MPI_Comm_rank` / `MPI_Finalize` around the body.
pub use rpar_derive::spmd;

/// `#[derive(Datatype)]`: writes the [`Datatype`](trait@Datatype) impl of a struct whose fields
/// are all `Datatype`s — its type map, from `core::mem::offset_of!`.
///
/// ```
/// use rpar::prelude::*;
///
/// #[derive(Datatype, Clone, Copy, Debug, PartialEq)]
/// struct Particle { pos: [f64; 3], charge: f32, id: u8 }
///
/// let map = Particle::type_map();
/// assert_eq!(map.size(), 3 * 8 + 4 + 1);
/// assert_eq!(map.extent() as usize, std::mem::size_of::<Particle>());
/// ```
///
/// Tuple structs, nested derived structs, arrays and generic structs (each type parameter gets
/// a `Datatype` bound) work; `#[rpar(skip)]` leaves out a zero-sized field such as
/// `PhantomData`, and `#[rpar(crate = "path")]` names the rpar crate if it is renamed. Enums,
/// unions, references, raw pointers and heap-owning fields are compile errors that say why
/// (see `ui-tests/datatype/`).
pub use rpar_derive::Datatype;

/// `topology! { pub Torus = cart[4, 4] periodic[true, true]; }`: declares virtual topologies
/// as types; see [`Topology`]. The compile-time counterpart of MPI_Cart_create and
/// MPI_Graph_create: the shape is checked when the program compiles, and
/// `spmd!(topology = T, |grid| …)` launches exactly `T::SIZE` ranks, each with its
/// [`CartComm`] or [`GraphComm`].
///
/// ```
/// use rpar::prelude::*;
///
/// topology! {
///     /// A 2 x 3 grid, periodic along the rows.
///     pub Grid = cart[2, 3] periodic[false, true];
///     /// A star of four nodes.
///     Star = graph { 0: [1, 2, 3], 1: [0], 2: [0], 3: [0] };
/// }
/// assert_eq!((Grid::DIMS, Grid::PERIODS, Grid::SIZE), ([2, 3], [false, true], 6));
/// assert_eq!((Star::INDEX, Star::EDGES), ([3, 4, 5, 6], [1, 2, 3, 0, 0, 0]));
///
/// let right = spmd!(topology = Grid, |grid| {
///     let (_, right) = grid.shift(1, 1)?;
///     Ok(right)
/// })?;
/// assert_eq!(right, vec![1, 2, 0, 4, 5, 3]);
/// let degrees = spmd!(topology = Star, |star| star.neighbors_count(star.rank()))?;
/// assert_eq!(degrees, vec![3, 1, 1, 1]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub use rpar_derive::topology;

/// Everything a typical rpar program uses: `use rpar::prelude::*;`.
///
/// ```
/// use rpar::prelude::*;
///
/// #[derive(Datatype, Clone, Copy, Debug, PartialEq)]
/// struct Point { x: f64, y: f64 }
///
/// let max = spmd!(ranks = 3, |world| {
///     let mine = Point { x: world.rank() as f64, y: 1.0 };
///     let all = world.allgather(&mine)?;
///     Ok(all.iter().map(|p| p.x).fold(0.0, f64::max))
/// })?;
/// assert_eq!(max, vec![2.0; 3]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub mod prelude {
    pub use crate::{
        spmd, Comm, CommittedType, Datatype, Error, RankResult, Result, ResultLink, SendMode,
        Status, TypeMap, Universe, ANY_SOURCE, ANY_TAG, PROC_NULL,
    };
    pub use crate::{topology, CartComm, GraphComm, Neighborhood, TopoKind, Topology};
    pub use crate::{
        Allgather, Allreduce, Alltoall, BAnd, BOr, BXor, Barrier, Bcast, Gather, LAnd, LOr, LXor,
        Loc, Max, MaxLoc, Min, MinLoc, Prod, Reduce, ReduceOp, ReduceScatter, Scan, Scatter, Shift,
        Sum, UserOp,
    };
}

/// The README's code, compiled and run as a doc test so that it stays true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The Rust programs of `docs/guide.md`, run as doc tests so the guide stays true to the API.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide.md")]
pub struct GuideDoctests;
