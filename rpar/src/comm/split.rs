//! New communicators from old: [`Comm::split`] (MPI_Comm_split) and [`Comm::dup`]
//! (MPI_Comm_dup). Each gets a fresh context id, so its messages never mix with the parent's.

use super::{Call, Comm};
use crate::collective::{allreduce_algorithm as allreduce_run, tags};
use crate::transport::NativeComm;
use crate::{Allreduce, Max, Result};
use std::rc::Rc;
use std::sync::Arc;

impl Comm {
    /// Splits the communicator by `color` (MPI_Comm_split): ranks with the same color form a new
    /// communicator, ordered by `key`, ties broken by rank here. `None` (MPI_UNDEFINED) takes part
    /// in the call but gets no communicator. Collective: every rank must call it.
    ///
    /// Cost: through rank 0, which receives every rank's color and key (`p - 1` messages of 16
    /// bytes), sorts them, and sends each rank its new group (`p - 1` messages of `8 (g + 2)`
    /// bytes for a group of `g`): `2 (p - 1) alpha` and `O(p log p)` at rank 0. On the MPI
    /// transport also a max-allreduce (recursive doubling, `ceil(log2 p) alpha`) that agrees on
    /// the new communicators' ids, and MPI_Comm_split for MPI's mirror of them.
    ///
    /// # Errors
    ///
    /// As for every collective,
    /// [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) if the ranks call
    /// different collectives, [`Error::Aborted`](crate::Error::Aborted) if another rank fails
    /// during the call.
    ///
    /// ```
    /// let sizes = rpar::run(5, |world| {
    ///     let half = world.split(Some((world.rank() % 2) as u32), world.rank() as i32)?.unwrap();
    ///     Ok((half.rank(), half.size()))
    /// })?;
    /// assert_eq!(sizes, vec![(0, 3), (0, 2), (1, 3), (1, 2), (2, 3)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>> {
        self.collective(Call::new("split"), &"GatherAtRank0", || {
            self.split_inner(color, key)
        })
    }

    fn split_inner(&self, color: Option<u32>, key: i32) -> Result<Option<Comm>> {
        let base = self.reserve_contexts(self.size() as u32)?;
        let native = self.native().and_then(|n| n.split(color, key));
        self.split_with(base, color, key, native)
    }

    /// The body of [`Comm::split`] once the ids are reserved from `base` on (see
    /// [`Comm::reserve_contexts`]) and MPI's mirror of the new communicator is made:
    /// [`Group::comm_create`](crate::Group::comm_create) and [`Comm::split_type`] make it otherwise.
    pub(super) fn split_with(
        &self,
        base: u32,
        color: Option<u32>,
        key: i32,
        native: Option<NativeComm>,
    ) -> Result<Option<Comm>> {
        let ctx = self.collective_context();
        let mine = [color.map_or(-1, i64::from), i64::from(key)];
        // Rank 0 gathers (color, key), forms the groups, reserves one context per group and tells
        // every rank its new communicator: [context, new rank, world ranks of the group…].
        if self.rank() == 0 {
            let mut entries = vec![(mine[0], mine[1], 0usize)];
            for _ in 1..self.size() {
                let mut theirs = [0i64; 2];
                let st = self.recv_into_in(ctx, &mut theirs[..], super::ANY_SOURCE, tags::SPLIT)?;
                entries.push((theirs[0], theirs[1], st.source));
            }
            entries.sort_by_key(|&(c, k, r)| (c, k, r));
            let mut reply_to_self = None;
            let mut start = 0;
            while start < entries.len() {
                let color = entries[start].0;
                let end = start + entries[start..].iter().take_while(|e| e.0 == color).count();
                let group: Vec<u64> = entries[start..end]
                    .iter()
                    .map(|e| self.group[e.2] as u64)
                    .collect();
                for (new_rank, e) in entries[start..end].iter().enumerate() {
                    let reply = if color < 0 {
                        vec![u64::MAX]
                    } else {
                        let mut r = vec![u64::from(base) + start as u64, new_rank as u64];
                        r.extend_from_slice(&group);
                        r
                    };
                    if e.2 == 0 {
                        reply_to_self = Some(reply);
                    } else {
                        self.send_owned_in(ctx, reply, e.2, tags::SPLIT)?;
                    }
                }
                start = end;
            }
            let reply = reply_to_self.expect("rank 0 is in one of the groups");
            Ok(self.comm_from_reply(&reply, native))
        } else {
            self.send_in(ctx, &mine[..], 0, tags::SPLIT)?;
            let (reply, _) = self.recv_in::<u64>(ctx, 0, tags::SPLIT)?;
            Ok(self.comm_from_reply(&reply, native))
        }
    }

    /// Reserves `n` fresh communicator ids for a new communicator made from this one; the first
    /// is returned on rank 0 (which hands them out). In-process one fabric hands out ids to all
    /// ranks. On MPI every process has its own, so the ranks agree on the largest next free id
    /// among them (a max-allreduce): an id no member has used, and every member reserves it.
    pub(super) fn reserve_contexts(&self, n: u32) -> Result<u32> {
        let fabric = self.endpoint().fabric();
        if self.endpoint().wire().is_none() {
            return Ok(if self.rank() == 0 {
                fabric.new_contexts(n)
            } else {
                0
            });
        }
        let mut next = [fabric.next_context()];
        allreduce_run(self, &mut next, &Max, Allreduce::RecursiveDoubling)?;
        fabric.reserve_agreed(next[0], n);
        Ok(next[0])
    }

    fn comm_from_reply(&self, reply: &[u64], native: Option<NativeComm>) -> Option<Comm> {
        if reply[0] == u64::MAX {
            return None;
        }
        let group: Arc<[usize]> = reply[2..].iter().map(|&w| w as usize).collect();
        Some(self.derived(group, reply[1] as usize, reply[0] as u32, native))
    }

    /// A new communicator of this rank, without a topology: of the world ranks `group`, where
    /// this rank is `rank`, with id `id` and MPI's mirror `native`.
    pub(super) fn derived(
        &self,
        group: Arc<[usize]>,
        rank: usize,
        id: u32,
        native: Option<NativeComm>,
    ) -> Comm {
        Comm {
            ep: self.ep.clone(),
            group,
            rank,
            id,
            coll_seq: Default::default(),
            choices: Default::default(),
            topology: std::cell::Cell::new(super::TopoKind::None),
            arena: Default::default(),
            native: native.map(Rc::new),
            hints: Default::default(),
            attributes: Default::default(),
        }
    }

    /// A copy of the communicator with a message space of its own (MPI_Comm_dup): same ranks,
    /// but messages on one never match receives on the other. Collective.
    ///
    /// Cost: rank 0 sends the new id to every other rank: `(p - 1) alpha`. On the MPI transport
    /// also a max-allreduce (`ceil(log2 p) alpha`) and MPI_Comm_dup.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::split`].
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let lib = world.dup()?;
    ///     if world.rank() == 0 {
    ///         lib.send(&1u8, 1, 0)?;
    ///         world.send(&2u8, 1, 0)?;
    ///     } else {
    ///         assert_eq!(world.recv::<u8>(0, 0)?.0, [2]); // not the message sent on `lib`
    ///         assert_eq!(lib.recv::<u8>(0, 0)?.0, [1]);
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn dup(&self) -> Result<Comm> {
        self.collective(Call::new("dup"), &"Linear", || self.dup_inner())
    }

    fn dup_inner(&self) -> Result<Comm> {
        let id = self.dup_id()?;
        let copy = self.copy_with_id(id, self.native().map(|n| n.dup()));
        copy.attributes.adopt(self.attributes.copied()?);
        Ok(copy)
    }

    /// A fresh id for a copy of this communicator, agreed by its ranks: rank 0 reserves it
    /// (with the others, on MPI) and sends it to every other rank. Collective.
    pub(super) fn dup_id(&self) -> Result<u32> {
        let ctx = self.collective_context();
        let reserved = self.reserve_contexts(1)?;
        if self.rank() == 0 {
            for r in 1..self.size() {
                self.send_in(ctx, std::slice::from_ref(&reserved), r, tags::DUP)?;
            }
            return Ok(reserved);
        }
        let mut id = 0u32;
        self.recv_into_in(ctx, std::slice::from_mut(&mut id), 0, tags::DUP)?;
        Ok(id)
    }

    /// This communicator's copy with id `id` and MPI's mirror `native` (MPI_Comm_dup keeps the
    /// topology and the info hints).
    pub(super) fn copy_with_id(&self, id: u32, native: Option<NativeComm>) -> Comm {
        Comm {
            ep: self.ep.clone(),
            group: self.group.clone(),
            rank: self.rank,
            id,
            coll_seq: Default::default(),
            choices: Default::default(),
            topology: std::cell::Cell::new(self.topology()),
            arena: Default::default(),
            native: native.map(Rc::new),
            hints: std::cell::Cell::new(self.hints.get()),
            attributes: Default::default(),
        }
    }
}
