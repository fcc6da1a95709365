//! MPI_Comm_idup on an intercommunicator: [`InterScope::idup`]. The ids are agreed as
//! [`InterComm::dup`] agrees them in-process, and claimed on MPI as `Scope::idup`'s are
//! (`comm/idup.rs`), each round's values combined over both groups (in each group, then
//! between the leaders).

use super::{InterComm, InterScope};
use crate::comm::idup::{claim_ids, Agree, CLAIM_ROUNDS};
use crate::comm::{Call, Request};
use crate::{Max, Min, Result};

/// The local collectives of a round of the claim: an allreduce and a broadcast for each of its
/// two agreements.
const LOCAL_CALLS_PER_ROUND: u32 = 4;

impl<'scope> InterScope<'scope, '_> {
    /// Starts making a copy of the scope's intercommunicator (MPI_Comm_idup on an
    /// intercommunicator): once the request is complete, `new` holds it, as
    /// [`InterComm::dup`]'s.
    ///
    /// # Errors
    ///
    /// Those of [`InterComm::dup`], when the request completes.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let mut copy = None;
    ///     inter.scope(|s| s.idup(&mut copy)?.wait().map(drop))?;
    ///     copy.expect("complete").allreduce(&world.rank(), rpar::Sum)
    /// })?;
    /// assert_eq!(got, [3, 0, 0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn idup(&self, new: &'scope mut Option<InterComm>) -> Result<Request<'scope>> {
        let local_calls = LOCAL_CALLS_PER_ROUND * CLAIM_ROUNDS;
        // attributes are copied at the call, as by `Scope::idup`
        let copies = self.inter().remote.attributes.copied();
        self.start_with(local_calls, move |inter| {
            let copy = inter.idup_inner()?;
            copy.remote.attributes.adopt(copies?);
            *new = Some(copy);
            Ok(())
        })
    }
}

impl InterComm {
    /// The body of [`InterScope::idup`], on the call's views.
    fn idup_inner(&self) -> Result<InterComm> {
        self.across(Call::new("idup"), || {
            let ep = self.local.endpoint();
            let id = if ep.wire().is_none() {
                self.agree_ids(3)?
            } else {
                claim_ids(ep.fabric(), 3, |x, how| self.agree_both(x, how))?
            };
            let (local, remote) = (self.local.group.clone(), self.remote.group.clone());
            Ok(self.local.joined(local, self.rank(), remote, id))
        })
    }

    /// `x` combined as `how` says over every rank of both groups (inside a call across).
    fn agree_both(&self, x: u32, how: Agree) -> Result<u32> {
        let combine = |a: u32, b: u32| match how {
            Agree::Largest => a.max(b),
            Agree::AllTrue => a.min(b),
        };
        let group = self.in_local(|l| match how {
            Agree::Largest => l.allreduce(&x, Max),
            Agree::AllTrue => l.allreduce(&x, Min),
        })?;
        let mut both = [group];
        if self.local.rank() == 0 {
            let mut theirs = [0u32];
            self.leaders_exchange(&[group], &mut theirs)?;
            both[0] = combine(group, theirs[0]);
        }
        self.in_local(|l| l.bcast(&mut both[..], 0))?;
        Ok(both[0])
    }
}
