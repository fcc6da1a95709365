//! New intercommunicators from an intercommunicator (MPI-4 §7.4 on intercommunicators):
//! [`InterComm::dup`] (MPI_Comm_dup), [`InterComm::split`] (MPI_Comm_split) and
//! [`InterComm::create_subgroups`] (MPI_Comm_create), each collective over both groups.
//!
//! All agree on fresh ids the way [`InterComm::create`] does (each group proposes, the
//! leaders take the larger), after the leaders exchanged what each group's ranks asked for:
//! every rank's color and key, gathered in each group, so that every rank of both groups knows
//! which ranks of each side will be joined.

use super::InterComm;
use crate::comm::{Call, Group};
use crate::{Error, Result};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The color code of a rank that joins no new intercommunicator (MPI_UNDEFINED).
const UNDEFINED: u64 = u64::MAX;

/// The color code of a rank whose arguments are wrong: every rank of both groups fails.
const REFUSED: u64 = u64::MAX - 1;

/// What a rank of one group asked for: its color code and key, by its rank in its group.
struct Asked<'a> {
    /// `[color, key]` per rank of the group, the key as the bits of an `i64`.
    entries: &'a [u64],
    /// The world ranks of the group, in its order.
    world: &'a [usize],
}

impl Asked<'_> {
    /// The colors asked for, but [`UNDEFINED`].
    fn colors(&self) -> BTreeSet<u64> {
        let colors = self.entries.chunks(2).map(|e| e[0]);
        colors.filter(|&c| c != UNDEFINED).collect()
    }

    /// Whether a rank's arguments were refused.
    fn refused(&self) -> bool {
        self.entries.chunks(2).any(|e| e[0] == REFUSED)
    }

    /// The world ranks of the ranks of color `color`, ordered by key, ties by rank.
    fn members(&self, color: u64) -> Arc<[usize]> {
        let mut chosen: Vec<(i64, usize)> = (self.entries.chunks(2).enumerate())
            .filter(|(_, e)| e[0] == color)
            .map(|(rank, e)| (e[1] as i64, rank))
            .collect();
        chosen.sort_unstable();
        chosen.iter().map(|&(_, rank)| self.world[rank]).collect()
    }
}

impl InterComm {
    /// A copy of the intercommunicator with a message space of its own (MPI_Comm_dup on an
    /// intercommunicator): the same two groups, ranks and leaders, but messages and collectives
    /// on one never match those on the other. Collective over both groups.
    ///
    /// Cost: the leaders' exchange of the ids each group proposes and a broadcast in each group
    /// (on MPI also a max-allreduce in each group).
    ///
    /// # Errors
    ///
    /// As for every collective, [`Error::CollectiveMismatch`] and [`Error::Aborted`].
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let copy = inter.dup()?;
    ///     if low {
    ///         copy.send(&1u8, 0, 0)?;
    ///         inter.send(&2u8, 0, 0)?;
    ///         return Ok(0);
    ///     }
    ///     if inter.rank() != 0 {
    ///         return Ok(0);
    ///     }
    ///     let (first, _) = inter.recv::<u8>(0, 0)?; // not the message sent on the copy
    ///     Ok(first[0] + 10 * copy.recv::<u8>(0, 0)?.0[0])
    /// })?;
    /// assert_eq!(got, [0, 12, 0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn dup(&self) -> Result<InterComm> {
        self.across(Call::new("dup"), || {
            let id = self.agree_ids(3)?;
            let (local, remote) = (self.local.group.clone(), self.remote.group.clone());
            let copy = self.local.joined(local, self.rank(), remote, id);
            copy.remote
                .attributes
                .adopt(self.remote.attributes.copied()?);
            Ok(copy)
        })
    }

    /// Splits both groups by color and joins the ranks of each color of one group with those
    /// of the same color of the other (MPI_Comm_split on an intercommunicator): each rank
    /// passes `Some(color)` and a `key` that orders the ranks of its color in its new local
    /// group (ties by their rank here), or `None` (MPI_UNDEFINED). A rank whose color no rank
    /// of the other group passes, or that passes `None`, gets `None` (MPI_COMM_NULL).
    /// Collective over both groups.
    ///
    /// Cost: an allgather of the colors and keys in each group, the leaders' exchange of
    /// them, a broadcast in each group, and the ids' agreement (as [`InterComm::dup`]'s).
    ///
    /// # Errors
    ///
    /// As for every collective, [`Error::CollectiveMismatch`] and [`Error::Aborted`].
    ///
    /// ```
    /// let got = rpar::run(5, |world| {
    ///     let low = world.rank() < 2;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 2 } else { 0 }, 0)?;
    ///     // even world ranks with even ones, odd with odd; world rank 4 stays out
    ///     let color = (world.rank() < 4).then_some(world.rank() as u32 % 2);
    ///     let part = inter.split(color, 0)?;
    ///     Ok(part.map(|p| (p.rank(), p.size(), p.remote_size())))
    /// })?;
    /// assert_eq!(got, [Some((0, 1, 1)), Some((0, 1, 1)), Some((0, 1, 1)), Some((0, 1, 1)), None]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<InterComm>> {
        let code = color.map_or(UNDEFINED, u64::from);
        self.regroup(Call::new("split"), code, key)
    }

    /// A new intercommunicator of a subgroup of each group (MPI_Comm_create on an
    /// intercommunicator): every rank of a group passes the same `group`, a subgroup of its
    /// own (the groups may differ between the two sides); the members of each get an
    /// intercommunicator between the two subgroups, ranked in their subgroup's order, the
    /// others `None` (MPI_COMM_NULL), as do all if either subgroup is empty. Collective over
    /// both groups.
    ///
    /// Cost: as [`InterComm::split`]'s.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidGroup`] at every rank of both groups if a rank passes a group with a
    /// member outside its own group; as for every collective, [`Error::CollectiveMismatch`]
    /// and [`Error::Aborted`].
    ///
    /// ```
    /// let got = rpar::run(4, |world| {
    ///     let low = world.rank() < 2;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 2 } else { 0 }, 0)?;
    ///     let without_first = inter.group().excl(&[0])?; // each side drops its rank 0
    ///     let part = inter.create_subgroups(&without_first)?;
    ///     Ok(part.map(|p| (p.rank(), p.size(), p.remote_size())))
    /// })?;
    /// assert_eq!(got, [None, Some((0, 1, 1)), None, Some((0, 1, 1))]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn create_subgroups(&self, group: &Group) -> Result<Option<InterComm>> {
        let inside = (group.world_ranks().iter()).all(|w| self.local.group.contains(w));
        let me = self.local.group[self.rank()];
        let place = group.world_ranks().iter().position(|&w| w == me);
        let code = match place {
            _ if !inside => REFUSED,
            Some(_) => 0,
            None => UNDEFINED,
        };
        let key = place.map_or(0, |p| p as i32);
        self.regroup(Call::new("create_subgroups"), code, key)
    }

    /// The body of `split` and `create_subgroups`: joins the ranks of each color code of one
    /// group with those of the same code of the other.
    fn regroup(&self, call: Call, code: u64, key: i32) -> Result<Option<InterComm>> {
        self.across(call, || {
            let mine = [code, i64::from(key) as u64];
            let ours = self.in_local(|l| l.allgather(&mine[..]))?;
            let mut theirs = vec![0u64; 2 * self.remote_size()];
            self.leaders_exchange(&ours[..], &mut theirs[..])?;
            self.in_local(|l| l.bcast(&mut theirs[..], 0))?;
            let ours = Asked {
                entries: &ours,
                world: &self.local.group,
            };
            let theirs = Asked {
                entries: &theirs,
                world: &self.remote.group,
            };
            if ours.refused() || theirs.refused() {
                return Err(Error::InvalidGroup {
                    call: "InterComm::create_subgroups",
                    message: "a rank passed a group with a member outside its own group of the \
                              intercommunicator: each side's group must be a subgroup of it"
                        .into(),
                });
            }
            let colors: Vec<u64> = ours
                .colors()
                .intersection(&theirs.colors())
                .copied()
                .collect();
            if colors.is_empty() {
                return Ok(None);
            }
            let base = self.agree_ids(3 * colors.len() as u32)?;
            let Some(i) = colors.iter().position(|&c| c == code) else {
                return Ok(None);
            };
            let local = ours.members(code);
            let me = self.local.group[self.rank()];
            let rank = local
                .iter()
                .position(|&w| w == me)
                .expect("a rank of its color");
            let id = base + 3 * i as u32;
            Ok(Some(self.local.joined(
                local,
                rank,
                theirs.members(code),
                id,
            )))
        })
    }

    /// `n` fresh ids that both groups agree on, reserved (inside a call across): each group
    /// proposes (in-process its leader a fresh range, on MPI the largest next free id among
    /// its ranks), the leaders take the larger, and each tells its group.
    pub(super) fn agree_ids(&self, n: u32) -> Result<u32> {
        let leader = self.local.rank() == 0;
        let proposed = self.in_local(|l| l.candidate_ids(n, leader))?;
        let mut agreed = [u64::from(proposed)];
        if leader {
            let mut theirs = [0u64];
            self.leaders_exchange(&[u64::from(proposed)], &mut theirs)?;
            agreed[0] = agreed[0].max(theirs[0]);
        }
        self.in_local(|l| l.bcast(&mut agreed[..], 0))?;
        let id = agreed[0] as u32;
        self.local.reserve_agreed(id, n);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_ordered_by_key_then_rank() {
        let entries = [7, 2, UNDEFINED, 0, 7, (-1i64) as u64, 7, 2, 3, 0];
        let asked = Asked {
            entries: &entries,
            world: &[10, 11, 12, 13, 14],
        };
        assert_eq!(&*asked.members(7), &[12, 10, 13]);
        assert_eq!(asked.colors(), BTreeSet::from([3, 7]));
        assert!(!asked.refused());
    }
}
