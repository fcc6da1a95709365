//! [`Group`] (MPI_Group): an ordered set of ranks, and MPI's operations on groups — the
//! constructors from ranks ([`Group::incl`], [`Group::excl`], [`Group::range_incl`],
//! [`Group::range_excl`]), the set operations ([`Group::union`], [`Group::intersection`],
//! [`Group::difference`]), [`Group::translate_ranks`] and [`Group::compare`], with
//! [`Comparison`], the answer it shares with [`Comparison::of`] (MPI_Comm_compare).
//!
//! Groups are local objects: every operation here is local and never talks to another rank. A
//! group holds world ranks; its members are numbered `0..size()` in its order. Errors follow
//! MPI's classes as MPICH reports them: a rank outside the group is
//! [`Error::RankOutOfRange`] (MPI_ERR_RANK), a rank given twice to `incl`/`excl`
//! [`Error::DuplicateRank`] (MPI_ERR_RANK), a bad `(first, last, stride)` triplet
//! [`Error::InvalidArgument`] (MPI_ERR_ARG).
//!
//! Depends on `error` only.

use crate::{Error, Result};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// How two groups or two communicators relate (MPI_Group_compare's and MPI_Comm_compare's
/// answer).
///
/// ```
/// use rpar::Comparison;
/// rpar::run(3, |world| {
///     let g = world.group();
///     let reversed = g.range_incl(&[(2, 0, -1)])?;
///     assert_eq!(g.compare(&world.group()), Comparison::Ident);
///     assert_eq!(g.compare(&reversed), Comparison::Similar);
///     assert_eq!(g.compare(&g.incl(&[0])?), Comparison::Unequal);
///     assert_eq!(Comparison::of(&world, &world.dup()?), Comparison::Congruent);
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// The same members in the same order (MPI_IDENT); for communicators, the same
    /// communicator.
    Ident,
    /// Communicators only: the same members in the same order, but another message space
    /// (MPI_CONGRUENT), e.g. a communicator and its [`dup`](crate::Comm::dup).
    Congruent,
    /// The same members in another order (MPI_SIMILAR).
    Similar,
    /// Different members (MPI_UNEQUAL).
    Unequal,
}

/// An ordered set of ranks (MPI_Group): what a communicator is made of, without its message
/// space. [`Comm::group`](crate::Comm::group) gives a communicator's; the operations make new
/// groups from old, and [`Group::comm_create`] or [`Group::comm_create_group`] make a
/// communicator of one.
///
/// A group remembers which rank made it, so [`Group::rank`] says this rank's place in it (or
/// `None`). Groups are cheap to clone and are freed when dropped (MPI_Group_free). Members are
/// world ranks; [`Group::translate_ranks`] maps a member's number to another group's.
///
/// ```
/// let sizes = rpar::run(4, |world| {
///     let evens = world.group().range_incl(&[(0, 3, 2)])?; // world ranks 0 and 2
///     Ok((evens.size(), evens.rank()))
/// })?;
/// assert_eq!(sizes, [(2, Some(0)), (2, None), (2, Some(1)), (2, None)]);
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Clone)]
pub struct Group {
    /// The world rank of each member, in the group's order.
    members: Arc<[usize]>,
    /// The world rank of the rank that made the group (`None` for [`Group::empty`]).
    owner: Option<usize>,
    /// The owner's place in `members`.
    rank: Option<usize>,
}

impl fmt::Debug for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("world_ranks", &&*self.members)
            .field("rank", &self.rank)
            .finish()
    }
}

/// Where each member of `members` is: world rank → place.
fn places(members: &[usize]) -> HashMap<usize, usize> {
    members.iter().enumerate().map(|(i, &w)| (w, i)).collect()
}

impl Group {
    /// A group of the world ranks `members` (in that order), made by the rank of world rank
    /// `owner`.
    pub(crate) fn from_world(members: Arc<[usize]>, owner: Option<usize>) -> Group {
        let rank = owner.and_then(|o| members.iter().position(|&w| w == o));
        Group {
            members,
            owner,
            rank,
        }
    }

    /// A group of other members, made by the same rank.
    fn with_members(&self, members: Vec<usize>) -> Group {
        Group::from_world(members.into(), self.owner)
    }

    /// The world ranks of the members, in the group's order.
    pub(crate) fn world_ranks(&self) -> &[usize] {
        &self.members
    }

    /// The group with no members (MPI_GROUP_EMPTY). What `incl(&[])`, `excl` of every rank or
    /// the intersection of disjoint groups give is [`Comparison::Ident`] to it.
    ///
    /// ```
    /// use rpar::{Comparison, Group};
    /// assert_eq!((Group::empty().size(), Group::empty().rank()), (0, None));
    /// rpar::run(2, |world| {
    ///     let none = world.group().incl(&[])?;
    ///     assert_eq!(none.compare(&Group::empty()), Comparison::Ident);
    ///     assert!(none.comm_create(&world)?.is_none()); // MPI_COMM_NULL on every rank
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn empty() -> Group {
        Group::from_world(Arc::from([]), None)
    }

    /// The number of members (MPI_Group_size).
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     assert_eq!(world.group().size(), 3);
    ///     assert_eq!(world.group().excl(&[1])?.size(), 2);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// This rank's number in the group, or `None` if it is not a member (MPI_Group_rank, with
    /// `None` for MPI_UNDEFINED).
    ///
    /// ```
    /// let ranks = rpar::run(3, |world| Ok(world.group().incl(&[2, 0])?.rank()))?;
    /// assert_eq!(ranks, [Some(1), None, Some(0)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn rank(&self) -> Option<usize> {
        self.rank
    }

    /// Checks that every rank of `ranks` is a member's number and that none is given twice.
    fn check_distinct(&self, call: &'static str, ranks: &[usize]) -> Result<()> {
        let mut seen: HashMap<usize, usize> = HashMap::with_capacity(ranks.len());
        for (i, &r) in ranks.iter().enumerate() {
            if r >= self.size() {
                return Err(Error::RankOutOfRange {
                    rank: r,
                    size: self.size(),
                });
            }
            if let Some(first) = seen.insert(r, i) {
                return Err(Error::DuplicateRank {
                    call,
                    rank: r,
                    first,
                    second: i,
                });
            }
        }
        Ok(())
    }

    /// The group of the members `ranks` of this one, in that order: member `ranks[i]` is rank
    /// `i` of the new group (MPI_Group_incl). `&[]` gives the empty group.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a rank that is not a member's number,
    /// [`Error::DuplicateRank`] for a rank given twice (both MPI_ERR_RANK).
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     let g = world.group().incl(&[3, 1])?;
    ///     assert_eq!(g.translate_ranks(&[0, 1], &world.group())?, [Some(3), Some(1)]);
    ///     let err = world.group().incl(&[1, 4]).unwrap_err();
    ///     assert_eq!(err, rpar::Error::RankOutOfRange { rank: 4, size: 4 });
    ///     assert!(matches!(
    ///         world.group().incl(&[1, 2, 1]),
    ///         Err(rpar::Error::DuplicateRank { rank: 1, first: 0, second: 2, .. })
    ///     ));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn incl(&self, ranks: &[usize]) -> Result<Group> {
        self.check_distinct("Group::incl", ranks)?;
        Ok(self.with_members(ranks.iter().map(|&r| self.members[r]).collect()))
    }

    /// The group of the members not in `ranks`, in this group's order (MPI_Group_excl).
    ///
    /// # Errors
    ///
    /// As [`Group::incl`].
    ///
    /// ```
    /// let ranks = rpar::run(4, |world| Ok(world.group().excl(&[2, 0])?.rank()))?;
    /// assert_eq!(ranks, [None, Some(0), None, Some(1)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn excl(&self, ranks: &[usize]) -> Result<Group> {
        self.check_distinct("Group::excl", ranks)?;
        let out: HashSet<usize> = ranks.iter().copied().collect();
        Ok(self.with_members(
            (0..self.size())
                .filter(|r| !out.contains(r))
                .map(|r| self.members[r])
                .collect(),
        ))
    }

    /// The members' numbers that `(first, last, stride)` triplets name, in order: `first`,
    /// `first + stride`, … as far as `last`; checked as MPICH checks them.
    fn expand(&self, call: &'static str, ranges: &[(usize, usize, isize)]) -> Result<Vec<usize>> {
        let size = self.size();
        let bad = |message: String| Err(Error::invalid(call, message));
        let mut taken: HashMap<usize, usize> = HashMap::new();
        let mut ranks = Vec::new();
        for (i, &(first, last, stride)) in ranges.iter().enumerate() {
            if first >= size {
                return bad(format!(
                    "range {i} starts at rank {first}, but the group has {size} ranks \
                     (valid: 0..{size})"
                ));
            }
            if stride == 0 {
                return bad(format!(
                    "range {i} ({first}, {last}, 0) has stride 0; a stride must be non-zero"
                ));
            }
            if (stride > 0 && first > last) || (stride < 0 && first < last) {
                return bad(format!(
                    "range {i} ({first}, {last}, {stride}) never reaches its last rank: with \
                     first {} last the stride must be {}",
                    if first > last { ">" } else { "<" },
                    if first > last { "negative" } else { "positive" },
                ));
            }
            let step = stride.unsigned_abs();
            let count = first.abs_diff(last) / step + 1;
            let reached = if stride > 0 {
                first + (count - 1) * step
            } else {
                first - (count - 1) * step
            };
            if reached >= size {
                return bad(format!(
                    "range {i} ({first}, {last}, {stride}) reaches rank {reached}, but the group \
                     has {size} ranks (valid: 0..{size})"
                ));
            }
            for k in 0..count {
                let r = if stride > 0 {
                    first + k * step
                } else {
                    first - k * step
                };
                if let Some(before) = taken.insert(r, i) {
                    return bad(format!(
                        "rank {r} is in range {before} and again in range {i}; the ranges must \
                         name distinct ranks"
                    ));
                }
                ranks.push(r);
            }
        }
        Ok(ranks)
    }

    /// The group of the members that `(first, last, stride)` triplets name, in the order they
    /// name them (MPI_Group_range_incl): `(first, last, stride)` names `first`,
    /// `first + stride`, … up to `last` (down to it for a negative stride), as `incl` of those
    /// ranks would.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (MPI_ERR_ARG, as MPICH): a `first` or a last rank reached
    /// outside the group, a stride of 0, a stride that leads away from `last`, or a rank named
    /// by two triplets.
    ///
    /// ```
    /// rpar::run(6, |world| {
    ///     let w = world.group();
    ///     let odd_down = w.range_incl(&[(5, 0, -2)])?; // world ranks 5, 3, 1
    ///     assert_eq!(odd_down.translate_ranks(&[0, 1, 2], &w)?, [Some(5), Some(3), Some(1)]);
    ///     let two = w.range_incl(&[(0, 0, 1), (4, 5, 1)])?; // 0, 4, 5
    ///     assert_eq!(two.size(), 3);
    ///     assert!(w.range_incl(&[(1, 3, 0)]).is_err()); // stride 0
    ///     assert!(w.range_incl(&[(3, 1, 1)]).is_err()); // never reaches 1
    ///     assert!(w.range_incl(&[(0, 2, 1), (2, 4, 1)]).is_err()); // 2 twice
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn range_incl(&self, ranges: &[(usize, usize, isize)]) -> Result<Group> {
        let ranks = self.expand("Group::range_incl", ranges)?;
        Ok(self.with_members(ranks.iter().map(|&r| self.members[r]).collect()))
    }

    /// The group of the members that no `(first, last, stride)` triplet names, in this group's
    /// order (MPI_Group_range_excl).
    ///
    /// # Errors
    ///
    /// As [`Group::range_incl`].
    ///
    /// ```
    /// let ranks = rpar::run(5, |world| Ok(world.group().range_excl(&[(4, 0, -2)])?.rank()))?;
    /// assert_eq!(ranks, [None, Some(0), None, Some(1), None]); // ranks 4, 2, 0 excluded
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn range_excl(&self, ranges: &[(usize, usize, isize)]) -> Result<Group> {
        let out: HashSet<usize> = self
            .expand("Group::range_excl", ranges)?
            .into_iter()
            .collect();
        Ok(self.with_members(
            (0..self.size())
                .filter(|r| !out.contains(r))
                .map(|r| self.members[r])
                .collect(),
        ))
    }

    /// Every member of this group, in its order, then the members of `other` that are not in
    /// this one, in `other`'s order (MPI_Group_union).
    ///
    /// ```
    /// rpar::run(5, |world| {
    ///     let w = world.group();
    ///     let u = w.incl(&[3, 1])?.union(&w.incl(&[0, 1, 4])?);
    ///     assert_eq!(u.translate_ranks(&[0, 1, 2, 3], &w)?, [Some(3), Some(1), Some(0), Some(4)]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn union(&self, other: &Group) -> Group {
        let mine: HashSet<usize> = self.members.iter().copied().collect();
        let mut members = self.members.to_vec();
        members.extend(other.members.iter().filter(|w| !mine.contains(w)));
        Group::from_world(members.into(), self.owner.or(other.owner))
    }

    /// The members of this group that are also in `other`, in this group's order
    /// (MPI_Group_intersection).
    ///
    /// ```
    /// rpar::run(5, |world| {
    ///     let w = world.group();
    ///     let i = w.incl(&[4, 2, 0])?.intersection(&w.incl(&[0, 1, 2])?);
    ///     assert_eq!(i.translate_ranks(&[0, 1], &w)?, [Some(2), Some(0)]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn intersection(&self, other: &Group) -> Group {
        let theirs: HashSet<usize> = other.members.iter().copied().collect();
        let owner = self.owner.or(other.owner);
        let members: Vec<usize> = self
            .members
            .iter()
            .copied()
            .filter(|w| theirs.contains(w))
            .collect();
        Group::from_world(members.into(), owner)
    }

    /// The members of this group that are not in `other`, in this group's order
    /// (MPI_Group_difference).
    ///
    /// ```
    /// rpar::run(5, |world| {
    ///     let w = world.group();
    ///     let d = w.difference(&w.incl(&[1, 3])?);
    ///     assert_eq!(d.translate_ranks(&[0, 1, 2], &w)?, [Some(0), Some(2), Some(4)]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn difference(&self, other: &Group) -> Group {
        let theirs: HashSet<usize> = other.members.iter().copied().collect();
        let owner = self.owner.or(other.owner);
        let members: Vec<usize> = self
            .members
            .iter()
            .copied()
            .filter(|w| !theirs.contains(w))
            .collect();
        Group::from_world(members.into(), owner)
    }

    /// The numbers in `other` of this group's members `ranks`: `None` for a member that is
    /// not in `other` (MPI_Group_translate_ranks, with `None` for MPI_UNDEFINED);
    /// [`PROC_NULL`](crate::PROC_NULL) translates to itself.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] (MPI_ERR_RANK) for a rank that is not a member's number of
    /// this group.
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     let w = world.group();
    ///     let back = w.range_incl(&[(3, 0, -1)])?; // 3, 2, 1, 0
    ///     assert_eq!(w.translate_ranks(&[0, 3], &back)?, [Some(3), Some(0)]);
    ///     let me = world.self_comm().group();
    ///     let mut want = vec![None; 4];
    ///     want[world.rank()] = Some(0);
    ///     assert_eq!(w.translate_ranks(&[0, 1, 2, 3], &me)?, want);
    ///     assert!(w.translate_ranks(&[4], &me).is_err());
    ///     assert_eq!(w.translate_ranks(&[rpar::PROC_NULL], &me)?, [Some(rpar::PROC_NULL)]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn translate_ranks(&self, ranks: &[usize], other: &Group) -> Result<Vec<Option<usize>>> {
        let theirs = places(&other.members);
        ranks
            .iter()
            .map(|&r| match self.members.get(r) {
                _ if r == crate::PROC_NULL => Ok(Some(crate::PROC_NULL)),
                Some(w) => Ok(theirs.get(w).copied()),
                None => Err(Error::RankOutOfRange {
                    rank: r,
                    size: self.size(),
                }),
            })
            .collect()
    }

    /// The world rank of the member of rank `rank` (MPI_Group_translate_ranks from this group
    /// to the world's).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] if `rank` is not a rank of this group.
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     let odd = world.split(Some((world.rank() % 2) as u32), 0)?.unwrap().group();
    ///     if world.rank() % 2 == 1 {
    ///         assert_eq!((odd.world_rank_of(0)?, odd.world_rank_of(1)?), (1, 3));
    ///     }
    ///     let err = odd.world_rank_of(2).unwrap_err();
    ///     assert_eq!(err, rpar::Error::RankOutOfRange { rank: 2, size: 2 });
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn world_rank_of(&self, rank: usize) -> Result<usize> {
        self.members
            .get(rank)
            .copied()
            .ok_or(Error::RankOutOfRange {
                rank,
                size: self.size(),
            })
    }

    /// How this group relates to `other` (MPI_Group_compare): [`Comparison::Ident`] for the
    /// same members in the same order, [`Comparison::Similar`] for the same members in another
    /// order, [`Comparison::Unequal`] otherwise (never `Congruent`).
    ///
    /// ```
    /// use rpar::{Comparison, Group};
    /// rpar::run(4, |world| {
    ///     let w = world.group();
    ///     let evens = w.range_incl(&[(0, 3, 2)])?;
    ///     let odds = w.range_excl(&[(0, 3, 2)])?;
    ///     assert_eq!(evens.union(&odds).compare(&w), Comparison::Similar); // 0 2 1 3
    ///     assert_eq!(w.incl(&[0, 2])?.compare(&evens), Comparison::Ident);
    ///     assert_eq!(Group::empty().compare(&evens), Comparison::Unequal);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn compare(&self, other: &Group) -> Comparison {
        if self.members == other.members {
            Comparison::Ident
        } else if self.size() == other.size()
            && self.members.iter().copied().collect::<HashSet<_>>()
                == other.members.iter().copied().collect::<HashSet<_>>()
        {
            Comparison::Similar
        } else {
            Comparison::Unequal
        }
    }
}
