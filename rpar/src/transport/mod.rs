//! The in-process transport: one lock-free mailbox per rank, single-producer lanes beside it
//! for the pairs that talk, MPI matching, rendezvous for large borrowed sends, the abort
//! broadcast, and the shared-memory arenas of communicators. See `README.md` beside this file
//! for the design.
//!
//! Depends on `datatype` (element types of messages) and `error`; nothing above it.

mod endpoint;
mod fabric;
mod handoff;
mod lane;
mod mailbox;
mod message;
#[cfg(feature = "mpi")]
pub(crate) mod mpi;
#[cfg(not(feature = "mpi"))]
mod no_mpi;
mod rendezvous;
mod shared;
mod watch;

#[cfg(feature = "mpi")]
pub(crate) use self::mpi::{
    direct::{Direct, DirectPost},
    native::NativeComm,
    RemotePayload, Wire,
};
#[cfg(not(feature = "mpi"))]
pub(crate) use no_mpi::{Direct, DirectPost, NativeComm, RemotePayload, Wire};

pub use endpoint::CollectiveCall;
pub(crate) use endpoint::{
    CallKey, CallState, Endpoint, Header, Matched, Pattern, Progress, SlotEnd, SlotId, Waiting,
};
pub(crate) use fabric::{Fabric, Failure, Placement};
pub(crate) use message::{
    Data, ElemType, ErasedVec, Message, TypedData, TypedSource, INLINE_BYTES,
};
pub(crate) use rendezvous::{publish, PendingSend, SendOutcome, Ticket};
pub(crate) use shared::{Arena, Post, Step, SLOT_ALIGN};
pub(crate) use watch::watchdog;

/// Messages larger than this many bytes, sent from borrowed buffers by blocking sends, use the
/// single-copy rendezvous; smaller ones are copied eagerly so that the send returns at once.
pub(crate) const RENDEZVOUS_BYTES: usize = 32 * 1024;
