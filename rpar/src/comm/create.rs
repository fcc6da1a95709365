//! Communicators and groups: a communicator's [`Group`] ([`Comm::group`]), new communicators
//! from groups ([`Group::comm_create`], [`Group::comm_create_group`]), by shared memory
//! ([`Comm::split_type`]), every rank's own ([`Comm::self_comm`]), comparing communicators
//! ([`Comparison::of`]) and naming them ([`Comm::set_name`], [`Comm::name`]).
//!
//! `comm_create` and `split_type` are built on [`Comm::split`]'s machinery (one gather at rank
//! 0). `comm_create_group` is collective over the group's members only: the first member agrees
//! on the new communicator's id with the others over the parent's collective context, outside any
//! collective call of the parent (in-process the fabric hands out ids; on MPI the members take
//! the largest next free id among them, as `reserve_contexts` does for the whole parent), and on
//! MPI the mirror is made by MPI_Comm_create_group.
//!
//! Depends on `transport` (ids, MPI's mirrors) and the rest of `comm`.

use super::group::{Comparison, Group};
use super::{Comm, TAG_UB};
use crate::collective::tags;
use crate::comm::Call;
use crate::{Error, Result};
use std::collections::HashMap;
use std::sync::Arc;

/// The id of every rank's self communicator ([`Comm::self_comm`]): its messages never leave
/// the rank, so one id serves all (the fabric hands out ids from 2 on).
const SELF_ID: u32 = 1;

/// The longest name a communicator keeps, in bytes, plus one (MPI_MAX_OBJECT_NAME, as in
/// MPICH); [`Comm::set_name`] truncates longer names to `MAX_OBJECT_NAME - 1` bytes.
///
/// ```
/// rpar::run(1, |world| {
///     world.set_name(&"x".repeat(500));
///     assert_eq!(world.name().len(), rpar::MAX_OBJECT_NAME - 1);
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub const MAX_OBJECT_NAME: usize = 128;

/// What [`Comm::split_type`] groups ranks by (MPI_Comm_split_type's `split_type`).
///
/// ```
/// let sizes = rpar::run(3, |world| {
///     let node = world.split_type(Some(rpar::SplitType::Shared), 0)?.unwrap();
///     Ok(node.size())
/// })?;
/// assert_eq!(sizes, [3, 3, 3]); // in-process every rank shares memory with every other
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SplitType {
    /// Ranks that can share memory (MPI_COMM_TYPE_SHARED): in-process all the ranks of a run;
    /// on MPI the processes of one node, as MPI decides.
    Shared,
}

impl Comm {
    /// The group of this communicator's ranks, in its order (MPI_Comm_group): its
    /// [`Group::rank`] is this rank's [`Comm::rank`].
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     let g = world.group();
    ///     assert_eq!((g.size(), g.rank()), (3, Some(world.rank())));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn group(&self) -> Group {
        Group::from_world(
            self.group.iter().copied().collect(),
            Some(self.world_rank()),
        )
    }

    /// This rank's world rank.
    fn world_rank(&self) -> usize {
        self.group[self.rank]
    }

    /// This rank alone, as a communicator (MPI_COMM_SELF): size 1, rank 0, named
    /// `"MPI_COMM_SELF"`. Every call gives a handle of the same communicator ([`Comparison::of`]
    /// says [`Comparison::Ident`]); it is no collective call and sends nothing.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let me = world.self_comm();
    ///     me.send(&(world.rank() as u32), 0, 0)?; // to itself
    ///     let total = me.allreduce(&me.recv::<u32>(0, 0)?.0[0], rpar::Sum)?;
    ///     Ok((me.rank(), me.size(), total, me.name()))
    /// })?;
    /// assert_eq!(got[2], (0, 1, 2, "MPI_COMM_SELF".to_string()));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn self_comm(&self) -> Comm {
        let native = self.native().map(|n| n.self_comm());
        self.derived(Arc::from([self.world_rank()]), 0, SELF_ID, native)
    }

    /// The communicator's ranks, each by its place: world rank → rank of this communicator.
    fn places(&self) -> HashMap<usize, usize> {
        self.group
            .iter()
            .enumerate()
            .map(|(i, &w)| (w, i))
            .collect()
    }

    /// The ranks of this communicator that are the members of `group`, in the group's order;
    /// [`Error::InvalidGroup`] if a member is not a rank of it.
    fn members_of(&self, call: &'static str, group: &Group) -> Result<Vec<usize>> {
        let places = self.places();
        group
            .world_ranks()
            .iter()
            .enumerate()
            .map(|(i, w)| {
                places.get(w).copied().ok_or_else(|| Error::InvalidGroup {
                    call,
                    message: format!(
                        "member {i} of the group (world rank {w}) is not a rank of the \
                         communicator, whose world ranks are {:?}; the group must be a subgroup \
                         of the communicator's",
                        &*self.group
                    ),
                })
            })
            .collect()
    }

    /// The body of [`Group::comm_create`], on the parent communicator.
    pub(crate) fn create(&self, group: &Group) -> Result<Option<Comm>> {
        const CALL: &str = "Group::comm_create";
        let members = self.members_of(CALL, group)?;
        self.collective(Call::new("create"), &"Split", || {
            // a group is named by its first member's rank, unique among disjoint groups
            let color = group.rank().map(|_| members[0] as u32);
            let key = group.rank().map_or(0, |r| r as i32);
            let base = self.reserve_contexts(self.size() as u32)?;
            let native = self.native().and_then(|n| n.split(color, key));
            let made = self.split_with(base, color, key, native)?;
            if let Some(c) = &made {
                if *c.group != *group.world_ranks() {
                    return Err(Error::InvalidGroup {
                        call: CALL,
                        message: format!(
                            "this rank gave the group of world ranks {:?}, but the members of \
                             its new communicator together gave {:?}: every member must give the \
                             same group, and different groups must be disjoint",
                            group.world_ranks(),
                            &*c.group
                        ),
                    });
                }
            }
            Ok(made)
        })
    }

    /// The body of [`Group::comm_create_group`], on the parent communicator.
    pub(crate) fn create_group(&self, group: &Group, tag: i32) -> Result<Option<Comm>> {
        const CALL: &str = "Group::comm_create_group";
        if tag < 0 {
            return Err(Error::InvalidTag { tag, max: TAG_UB });
        }
        let members = self.members_of(CALL, group)?;
        let Some(me) = group.rank() else {
            return Ok(None);
        };
        let _span = self.span("create_group", None, Some(tag), 0);
        let ctx = self.collective_context();
        let fabric = self.endpoint().fabric();
        let on_mpi = self.endpoint().wire().is_some();
        let check = |theirs: u64, from: usize| {
            if theirs == tag as u64 {
                Ok(())
            } else {
                Err(Error::invalid(
                    CALL,
                    format!(
                        "rank {from} of the communicator called it with tag {theirs}, this \
                         rank with tag {tag}: the members of a group must give the same tag"
                    ),
                ))
            }
        };
        let id = if me == 0 {
            let id = if on_mpi {
                // the largest next free id among the members: one none of them has used
                let mut next = fabric.next_context();
                // member by member (not from any source): a member's message for a later call
                // with the same first member must wait for that call
                for &m in &members[1..] {
                    let mut theirs = [0u64; 2];
                    self.recv_into_in(ctx, &mut theirs[..], m, tags::CREATE_GROUP)?;
                    check(theirs[0], m)?;
                    next = next.max(theirs[1] as u32);
                }
                fabric.reserve_agreed(next, 1);
                next
            } else {
                fabric.new_contexts(1)
            };
            for &m in &members[1..] {
                self.send_in(ctx, &[tag as u64, u64::from(id)][..], m, tags::CREATE_GROUP)?;
            }
            id
        } else {
            if on_mpi {
                let mine = [tag as u64, u64::from(fabric.next_context())];
                self.send_in(ctx, &mine[..], members[0], tags::CREATE_GROUP)?;
            }
            let mut reply = [0u64; 2];
            self.recv_into_in(ctx, &mut reply[..], members[0], tags::CREATE_GROUP)?;
            check(reply[0], members[0])?;
            let id = reply[1] as u32;
            if on_mpi {
                fabric.reserve_agreed(id, 1);
            }
            id
        };
        let native = self.native().and_then(|n| n.create_group(&members, tag));
        let world: Arc<[usize]> = group.world_ranks().into();
        Ok(Some(self.derived(world, me, id, native)))
    }

    /// Splits the communicator into the ranks that share memory (MPI_Comm_split_type with
    /// MPI_COMM_TYPE_SHARED), ordered by `key`, ties broken by rank; `None` for the split type
    /// (MPI_UNDEFINED) takes part but gets no communicator. Collective. In-process every rank
    /// shares memory with every other: one communicator of all that ask. On MPI, MPI's own
    /// MPI_Comm_split_type decides, and the new communicators have the ranks of MPI's in its
    /// order.
    ///
    /// Cost: that of [`Comm::split`], and on MPI that of MPI_Comm_split_type.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::split`].
    ///
    /// ```
    /// use rpar::SplitType;
    /// let got = rpar::run(4, |world| {
    ///     let kind = (world.rank() != 1).then_some(SplitType::Shared);
    ///     let node = world.split_type(kind, -(world.rank() as i32))?; // reversed
    ///     Ok(node.map(|c| (c.rank(), c.size())))
    /// })?;
    /// assert_eq!(got, [Some((2, 3)), None, Some((1, 3)), Some((0, 3))]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn split_type(&self, kind: Option<SplitType>, key: i32) -> Result<Option<Comm>> {
        self.collective(Call::new("split_type"), &"GatherAtRank0", || {
            let base = self.reserve_contexts(self.size() as u32)?;
            let Some(native) = self.native() else {
                return self.split_with(base, kind.map(|_| 0), key, None);
            };
            match native.split_shared(kind.is_some(), key) {
                None => self.split_with(base, None, key, None),
                Some((node, ranks)) => {
                    // rpar's split of MPI's groups, in MPI's order: named by their first rank,
                    // keyed by the place MPI gave
                    let color = ranks.iter().copied().min().unwrap_or(self.rank) as u32;
                    let place = ranks.iter().position(|&r| r == self.rank).unwrap_or(0);
                    self.split_with(base, Some(color), place as i32, Some(node))
                }
            }
        })
    }

    /// Gives the communicator a name (MPI_Comm_set_name), for traces and messages of your own;
    /// names longer than [`MAX_OBJECT_NAME`]` - 1` bytes are truncated (at a character
    /// boundary), as MPI truncates them. The name belongs to this rank's handles of the
    /// communicator: it is local, and a [`dup`](Comm::dup) does not inherit it.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let halo = world.dup()?;
    ///     assert_eq!(halo.name(), "");
    ///     halo.set_name("halo exchange");
    ///     assert_eq!(halo.name(), "halo exchange");
    ///     assert_eq!(world.name(), "MPI_COMM_WORLD");
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn set_name(&self, name: &str) {
        let mut end = name.len().min(MAX_OBJECT_NAME - 1);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        self.endpoint().set_comm_name(self.id, &name[..end]);
    }

    /// The communicator's name (MPI_Comm_get_name): the last given by [`Comm::set_name`], else
    /// `"MPI_COMM_WORLD"` for the world, `"MPI_COMM_SELF"` for [`Comm::self_comm`] and the
    /// empty string for every other communicator, as in MPI.
    ///
    /// ```
    /// rpar::run(1, |world| {
    ///     assert_eq!(world.name(), "MPI_COMM_WORLD");
    ///     assert_eq!(world.self_comm().name(), "MPI_COMM_SELF");
    ///     assert_eq!(world.split(Some(0), 0)?.unwrap().name(), "");
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn name(&self) -> String {
        match self.endpoint().comm_name(self.id) {
            Some(name) => name.to_string(),
            None if self.id == 0 => "MPI_COMM_WORLD".into(),
            None if self.id == SELF_ID => "MPI_COMM_SELF".into(),
            None => String::new(),
        }
    }
}

impl Comparison {
    /// How communicator `a` relates to `b` (MPI_Comm_compare): [`Comparison::Ident`] if
    /// both are the same communicator (the same message space: e.g. two handles of
    /// [`Comm::self_comm`]), [`Comparison::Congruent`] for the same ranks in the same order
    /// (a [`dup`](Comm::dup)), [`Comparison::Similar`] for the same ranks in another order,
    /// [`Comparison::Unequal`] otherwise. Local: it sends nothing.
    ///
    /// ```
    /// use rpar::Comparison;
    /// rpar::run(2, |world| {
    ///     let reversed = world.split(Some(0), -(world.rank() as i32))?.unwrap();
    ///     assert_eq!(Comparison::of(&world, &world), Comparison::Ident);
    ///     assert_eq!(Comparison::of(&world, &world.dup()?), Comparison::Congruent);
    ///     assert_eq!(Comparison::of(&world, &reversed), Comparison::Similar);
    ///     assert_eq!(Comparison::of(&world, &world.self_comm()), Comparison::Unequal);
    ///     assert_eq!(Comparison::of(&world.self_comm(), &world.self_comm()), Comparison::Ident);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn of(a: &Comm, b: &Comm) -> Comparison {
        match a.group().compare(&b.group()) {
            Comparison::Ident if a.id == b.id => Comparison::Ident,
            Comparison::Ident => Comparison::Congruent,
            unlike => unlike,
        }
    }
}

impl Group {
    /// A communicator of the members of this group, numbered in the group's order
    /// (MPI_Comm_create): collective over the whole of `parent`; the ranks not in the group get
    /// `None` (MPI_COMM_NULL). As MPI allows since MPI-2.2, ranks may give different groups as
    /// long as those are disjoint: each group becomes a communicator of its own. The empty
    /// group gives `None` everywhere.
    ///
    /// Cost: that of [`Comm::split`], which it runs (a color per group, the key a member's
    /// rank in it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidGroup`] (MPI_ERR_GROUP) on a rank whose group has a member that is not
    /// a rank of `parent`, or whose group differs from what the other members of the new
    /// communicator gave; as every collective, [`Error::CollectiveMismatch`] and
    /// [`Error::Aborted`].
    ///
    /// ```
    /// let got = rpar::run(5, |world| {
    ///     let w = world.group();
    ///     // every rank gives the group of its parity: two communicators
    ///     let mine = w.range_incl(&[(world.rank() % 2, 4, 2)])?;
    ///     let half = mine.comm_create(&world)?.unwrap();
    ///     let high = w.range_incl(&[(4, 3, -1)])?.comm_create(&world)?; // world ranks 4, 3
    ///     Ok((half.size(), half.rank(), high.map(|c| c.rank())))
    /// })?;
    /// assert_eq!(got[3], (2, 1, Some(1)));
    /// assert_eq!(got[4], (3, 2, Some(0)));
    /// assert_eq!(got[0].2, None);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn comm_create(&self, parent: &Comm) -> Result<Option<Comm>> {
        parent.create(self)
    }

    /// A communicator of the members of this group, numbered in the group's order, made by the
    /// members alone (MPI_Comm_create_group): collective over the group only, so the other
    /// ranks of `parent` need not call it (if they do, they get `None` at once). `tag` tells
    /// apart calls that overlap (MPI's rule); the members must give the same.
    ///
    /// Cost: in-process the first member sends the new id to the others, `(g - 1) alpha` for a
    /// group of `g`; on MPI it also gathers their next free ids first (`2 (g - 1) alpha`), and
    /// MPI_Comm_create_group makes MPI's mirror.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidTag`] for a negative tag (MPI_ERR_TAG); [`Error::InvalidGroup`]
    /// (MPI_ERR_GROUP) for a group with a member that is not a rank of `parent`;
    /// [`Error::InvalidArgument`] if the first member gets another tag from a member.
    ///
    /// ```
    /// let got = rpar::run(4, |world| {
    ///     let evens = world.group().range_incl(&[(0, 3, 2)])?;
    ///     if world.rank() % 2 == 1 {
    ///         return Ok(None); // the odd ranks take no part
    ///     }
    ///     let comm = evens.comm_create_group(&world, 7)?.unwrap();
    ///     comm.barrier()?;
    ///     Ok(Some(comm.allreduce(&world.rank(), rpar::Sum)?))
    /// })?;
    /// assert_eq!(got, [Some(2), None, Some(2), None]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn comm_create_group(&self, parent: &Comm, tag: i32) -> Result<Option<Comm>> {
        parent.create_group(self, tag)
    }
}
