//! MPI_Comm_idup: [`Scope::idup`], a copy of the communicator made without waiting (the
//! intercommunicator's is `InterScope::idup`, in `inter/idup.rs`).
//!
//! The copy's id is agreed inside the call, which runs on a coroutine like every non-blocking
//! collective (`nonblocking.rs`). In-process one fabric hands out ids, so it is the blocking
//! `dup`'s agreement. On MPI every process has its own, and two such calls may be in progress
//! at once (finishing in any order, started in different orders on different processes): an
//! agreement on "the largest next free id" could then give both the same id. So these ids come
//! from a range of their own (`FIRST_CLAIMED_ID` in `transport/fabric.rs`) and are *claimed*:
//! the processes agree on the largest of their proposals (the first id above their claims plus
//! a random offset, so that calls in progress together propose apart), each claims the ids
//! agreed if none of them is claimed there, and they agree whether all could; if not, they try
//! again. A claim excludes every other overlapping one on its process, so ids that all members
//! claimed are theirs alone.

use super::{Call, Comm, Request, Scope};
use crate::collective::allreduce_algorithm as allreduce_run;
use crate::transport::Fabric;
use crate::{Allreduce, Error, Max, Min, Result};

/// How many times the processes try to claim ids before they give up.
pub(crate) const CLAIM_ROUNDS: u32 = 8;

/// How many places (of the ids a call claims) apart the proposals of calls in progress
/// together may fall: each round of two such calls collides with a chance of about 1 in this.
const JITTER: u64 = 1024;

/// A random number, new at every call (std's per-instance random hash keys, fed a counter).
fn jitter() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    h.finish()
}

/// What the members of a communicator agree on in a round of [`claim_ids`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Agree {
    /// The largest of their values.
    Largest,
    /// Whether every value is 1 (the smallest of 0s and 1s).
    AllTrue,
}

/// `n` ids of the claimed range that every member has claimed, agreed by `agree` (a
/// collective over the members that combines their values as asked).
pub(crate) fn claim_ids(
    fabric: &Fabric,
    n: u32,
    agree: impl Fn(u32, Agree) -> Result<u32>,
) -> Result<u32> {
    for _ in 0..CLAIM_ROUNDS {
        // a random offset, so that calls in progress together propose apart
        let offset = (jitter() % JITTER) as u32 * n;
        let base = agree(fabric.next_claimed().saturating_add(offset), Agree::Largest)?;
        let claimed = fabric.claim(base, n);
        if agree(u32::from(claimed), Agree::AllTrue)? == 1 {
            return Ok(base);
        }
    }
    Err(Error::invalid(
        "idup",
        format!(
            "the processes could not agree on free communicator ids in {CLAIM_ROUNDS} rounds: \
             other non-blocking communicator copies in progress kept taking them"
        ),
    ))
}

impl<'scope> Scope<'scope, '_> {
    /// Starts making a copy of the scope's communicator (MPI_Comm_idup): once the request is
    /// complete, `new` holds it, with a message space of its own, as [`Comm::dup`]'s. Other
    /// calls go on meanwhile, on this communicator too; every rank must start it in the same
    /// order as its other collectives on this communicator.
    ///
    /// On the MPI transport the copy runs rpar's collective algorithms (MPI's own would need a
    /// blocking MPI_Comm_dup beside it).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::dup`], when the request completes.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let mut copy = None;
    ///     world.scope(|s| {
    ///         let made = s.idup(&mut copy)?;
    ///         // rank 0 starts its copy only once every other rank has sent to it
    ///         if world.rank() == 0 {
    ///             for r in 1..world.size() {
    ///                 world.recv::<u8>(r, 0)?;
    ///             }
    ///         } else {
    ///             world.send(&1u8, 0, 0)?;
    ///         }
    ///         made.wait().map(drop)
    ///     })?;
    ///     let copy = copy.expect("complete");
    ///     copy.allreduce(&world.rank(), rpar::Sum)
    /// })?;
    /// assert_eq!(got, [3, 3, 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn idup(&'scope self, new: &'scope mut Option<Comm>) -> Result<Request<'scope>> {
        self.idup_then(new, |_| {})
    }

    /// [`Scope::idup`], with `adjust` applied to the copy before it is handed out.
    pub(super) fn idup_then(
        &'scope self,
        new: &'scope mut Option<Comm>,
        adjust: impl FnOnce(&Comm) + 'scope,
    ) -> Result<Request<'scope>> {
        // attributes are copied now, at the call (as MPICH does); a copy action's error fails
        // the call once the collective part is done, so that no other rank waits for this one
        let copies = self.comm().attributes.copied();
        self.start(move |comm| {
            let copy = comm.idup_inner()?;
            copy.attributes.adopt(copies?);
            adjust(&copy);
            *new = Some(copy);
            Ok(())
        })
    }
}

impl Comm {
    /// The body of [`Scope::idup`], on the call's view of the communicator.
    pub(super) fn idup_inner(&self) -> Result<Comm> {
        self.collective(Call::new("idup"), &"Linear", || {
            let id = if self.endpoint().wire().is_none() {
                self.dup_id()?
            } else {
                claim_ids(self.endpoint().fabric(), 1, |x, how| {
                    let mut v = [x];
                    let rd = Allreduce::RecursiveDoubling;
                    match how {
                        Agree::Largest => allreduce_run(self, &mut v, &Max, rd)?,
                        Agree::AllTrue => allreduce_run(self, &mut v, &Min, rd)?,
                    }
                    Ok(v[0])
                })?
            };
            Ok(self.copy_with_id(id, None))
        })
    }
}
