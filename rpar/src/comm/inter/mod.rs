//! Intercommunicators (MPI-4 §7.6): [`InterComm`], two disjoint groups that talk across —
//! made by [`InterComm::create`], merged into one [`Comm`] by [`InterComm::merge`], with
//! point-to-point messages from one group to the other and the collectives with MPI's
//! intercommunicator meaning (`collective.rs`), blocking or started in a scope (`scope.rs`).
//!
//! An `InterComm` is two plain communicators of this rank:
//!
//! - `remote`, whose ranks are the *remote* group's (its `group` holds their world ranks) while
//!   its own rank is this rank's number in the *local* group. A send to `dest` goes to the
//!   remote group's rank `dest`, and its header carries the sender's local rank as its source:
//!   exactly the remote rank the receiver names it by (MPI's rule: peers of an intercommunicator
//!   are named by their rank in the remote group). Both groups' views share one id, so one
//!   context carries the traffic of both directions; no rank receives from its own group on it.
//! - `local`, the local group with an id of its own: the local halves of the collectives, out
//!   of the way of the user's traffic on the communicator the intercommunicator was made from.
//!
//! The collectives are built from local collectives and an exchange between the two groups'
//! rank 0 (their leaders) on the `remote` view's collective context, as MPICH builds them. On
//! the MPI transport every message is rpar's own (matched by rpar over one MPI communicator),
//! so no MPI intercommunicator mirrors this one; the local collectives run rpar's algorithms.
//!
//! Ids: three per intercommunicator (the traffic across, and each group's local communicator).
//! In-process the fabric hands them out (each leader reserves, and both take the larger);
//! on MPI each group agrees on its largest next free id (a max-allreduce), the leaders take the
//! larger of theirs, and every member reserves it, as `Group::comm_create_group` does.
//!
//! Depends on the rest of `comm`, on `collective` (local collectives, operators) and on
//! `transport` (ids).

use super::TAG_UB;
use super::{Buffer, BufferMut, Call, Comm, Group, Probed, RecvBuf, Request, SendBuf, Status};
use crate::datatype::Datatype;
use crate::{Error, Max, Result};
use std::fmt;
use std::sync::Arc;

/// The root of an intercommunicator's rooted collective, as the root itself gives it
/// (MPI_ROOT): in [`InterComm::bcast`], [`InterComm::reduce`], [`InterComm::gather`] and
/// [`InterComm::scatter`] the root passes `ROOT`, the other ranks of its group
/// [`PROC_NULL`](crate::PROC_NULL), and the ranks of the other group the root's rank in the
/// root's group. On a plain [`Comm`] it names no rank ([`Error::RankOutOfRange`]).
///
/// ```
/// let got = rpar::run(3, |world| {
///     let low = world.rank() == 0;
///     let half = world.split(Some(low as u32), 0)?.unwrap();
///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
///     let mut x = [world.rank() as u8; 2];
///     let root = if low { rpar::ROOT } else { 0 }; // world rank 0 broadcasts to the others
///     inter.bcast(&mut x[..], root)?;
///     Ok(x)
/// })?;
/// assert_eq!(got, [[0, 0]; 3]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub const ROOT: usize = usize::MAX - 2;

/// Tags of the intercommunicator's own traffic on its collective context (apart from the
/// ranges the collective families take: see `collective::tags`).
mod tags {
    /// The leaders' exchange of a collective.
    pub(super) const LEADERS: i32 = 10;
    /// A broadcast from its root to the other group's leader.
    pub(super) const BCAST: i32 = 11;
    /// A reduction from the other group's leader to its root.
    pub(super) const REDUCE: i32 = 12;
    /// A block of a gather, to its root.
    pub(super) const GATHER: i32 = 13;
    /// A block of a scatter, from its root.
    pub(super) const SCATTER: i32 = 14;
    /// A block of an allgather.
    pub(super) const ALLGATHER: i32 = 15;
    /// A block of an alltoall.
    pub(super) const ALLTOALL: i32 = 16;
    /// The signatures, then the packed blocks, of an alltoallw.
    pub(super) const ALLTOALLW: i32 = 17;
}

mod alltoallw;
mod attr;
mod collective;
mod derive;
mod idup;
mod scope;
pub use collective::{
    InterAllgatherArgs, InterAlltoallArgs, InterGatherArgs, InterReduceArgs,
    InterReduceScatterArgs, InterScatterArgs,
};
pub use scope::InterScope;

/// `InterComm::create`'s name in errors.
const CREATE: &str = "InterComm::create";

/// An intercommunicator (MPI_Comm of an intercommunicator): this rank's group (the *local*
/// group) and another group, disjoint from it (the *remote* group). Point-to-point calls name
/// their peers by rank in the remote group, and their statuses say a remote rank; the
/// collectives move data from one group to the other. Made by [`InterComm::create`];
/// [`InterComm::merge`] makes a plain communicator of both groups. (MPI_Comm_test_inter has no
/// counterpart: the type tells an intercommunicator from a [`Comm`].)
///
/// ```
/// let got = rpar::run(4, |world| {
///     // world ranks 0, 1 and 2, 3: rank 0 of each half leads
///     let left = world.rank() < 2;
///     let half = world.split(Some(left as u32), 0)?.unwrap();
///     let inter = rpar::InterComm::create(&half, 0, &world, if left { 2 } else { 0 }, 7)?;
///     assert_eq!((inter.size(), inter.remote_size()), (2, 2));
///     // to the same rank of the other half, and from it
///     let mut got = 0usize;
///     let r = inter.rank();
///     let st = inter.sendrecv(&world.rank(), r, 0, &mut got, r, 0)?;
///     assert_eq!(st.source, r); // a rank of the remote group
///     Ok(got)
/// })?;
/// assert_eq!(got, [2, 3, 0, 1]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub struct InterComm {
    /// The local group, with an id of its own (not the other group's local one): the local
    /// halves of the collectives.
    local: Comm,
    /// The remote group's ranks, this rank numbered as in the local group: the traffic across.
    remote: Comm,
}

impl fmt::Debug for InterComm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InterComm")
            .field("rank", &self.local.rank())
            .field("size", &self.local.size())
            .field("remote_size", &self.remote.size())
            .field("id", &self.remote.id())
            .finish()
    }
}

/// What a leader tells its group at the end of `intercomm_create`: `[OK, first id, remote
/// world ranks…]`, or an error code and its two facts.
const OK: u64 = 0;
const BAD_REMOTE_LEADER: u64 = 1;
const OVERLAP: u64 = 2;

impl InterComm {
    /// An intercommunicator between the group of `local` (the local group) and another,
    /// disjoint group (MPI_Intercomm_create). Collective over `local` and, at once,
    /// over the other group's: each group names its leader, `local_leader` (a rank of `local`,
    /// the same on every rank), and the leader names the other group's leader by its rank in
    /// `peer_comm`, a communicator of both leaders (`peer_comm` and `remote_leader` count only
    /// at the local leader). The leaders exchange their groups on
    /// `peer_comm` with `tag`, so no other message between them on `peer_comm` may have that
    /// tag meanwhile (MPI's rule). The new communicator's ranks are those of `local`.
    ///
    /// Cost: the leaders' exchange (one message each way, `8 (g + 2)` bytes for a group of `g`)
    /// and a broadcast in each group (`ceil(log2 g)` messages deep); on MPI also a
    /// max-allreduce in each group that agrees on the new ids.
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a `local_leader` that is not a rank of `local`
    /// (on every rank) or, at every rank of the local group, a `remote_leader` that is not a
    /// rank of the leader's `peer_comm`; [`Error::InvalidTag`] for a tag outside `0..=TAG_UB`;
    /// [`Error::InvalidGroup`] at every rank of a group whose leader finds the groups overlap
    /// (e.g. a remote leader in the local group, as when one group is all there is); as every
    /// collective, [`Error::CollectiveMismatch`] and [`Error::Aborted`] (the other group's
    /// ranks get the latter when this group fails).
    ///
    /// ```
    /// let got = rpar::run(5, |world| {
    ///     // even and odd world ranks; the leaders are world ranks 0 and 1
    ///     let color = (world.rank() % 2) as u32;
    ///     let half = world.split(Some(color), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, 1 - color as usize, 0)?;
    ///     let everyone: Vec<usize> = (0..inter.remote_size()).collect();
    ///     let remote = inter.remote_group().translate_ranks(&everyone, &world.group())?;
    ///     Ok((inter.rank(), inter.size(), remote))
    /// })?;
    /// assert_eq!(got[0], (0, 3, vec![Some(1), Some(3)]));
    /// assert_eq!(got[3], (1, 2, vec![Some(0), Some(2), Some(4)]));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn create(
        local: &Comm,
        local_leader: usize,
        peer_comm: &Comm,
        remote_leader: usize,
        tag: i32,
    ) -> Result<InterComm> {
        local.intercomm_create(local_leader, peer_comm, remote_leader, tag)
    }
}

impl Comm {
    /// The body of [`InterComm::create`], on the local communicator.
    pub(crate) fn intercomm_create(
        &self,
        local_leader: usize,
        peer_comm: &Comm,
        remote_leader: usize,
        tag: i32,
    ) -> Result<InterComm> {
        self.check_rank(local_leader)?;
        if !(0..=TAG_UB).contains(&tag) {
            return Err(Error::InvalidTag { tag, max: TAG_UB });
        }
        let _span = self.span("intercomm_create", Some(local_leader), Some(tag), 0);
        // Not one collective call of this communicator but three, each checked on its own: the
        // leader's exchange on `peer_comm` must carry no call of this one.
        let leader = self.rank() == local_leader;
        let candidate = self.candidate_ids(3, leader)?;
        let mut told = if leader {
            self.exchange_groups(candidate, peer_comm, remote_leader, tag)?
        } else {
            Vec::new()
        };
        // the leader's word to its group: its length, then itself
        let mut len = [told.len() as u64];
        self.bcast(&mut len[..], local_leader)?;
        told.resize(len[0] as usize, 0);
        self.bcast(&mut told[..], local_leader)?;
        let (id, remote): (u32, Arc<[usize]>) = match told[0] {
            OK => (
                told[1] as u32,
                told[2..].iter().map(|&w| w as usize).collect(),
            ),
            BAD_REMOTE_LEADER => {
                return Err(Error::RankOutOfRange {
                    rank: told[1] as usize,
                    size: told[2] as usize,
                })
            }
            _ => {
                return Err(Error::InvalidGroup {
                    call: CREATE,
                    message: format!(
                        "world rank {} is in both groups (the local leader found it; the remote \
                         leader is rank {} of its peer communicator): the groups of an \
                         intercommunicator must be disjoint",
                        told[1], told[2]
                    ),
                })
            }
        };
        self.reserve_agreed(id, 3);
        Ok(self.joined(self.group.clone(), self.rank(), remote, id))
    }

    /// The intercommunicator between the group `local` (world ranks, this rank its `rank`)
    /// and the group `remote`, on the three ids from `id` that both groups agreed on: `id`
    /// for the traffic across, and each group's local communicator an id of its own (`id + 1`
    /// for the group whose first member has the lower world rank, `id + 2` for the other): the
    /// shared-memory collectives keep their state by id.
    fn joined(&self, local: Arc<[usize]>, rank: usize, remote: Arc<[usize]>, id: u32) -> InterComm {
        let second = remote.first().is_some_and(|&w| w < local[0]);
        let local_id = id + 1 + u32::from(second);
        InterComm {
            local: self.derived(local, rank, local_id, None),
            remote: self.derived(remote, rank, id, None),
        }
    }

    /// The first of `n` ids this group proposes for a communicator it will share with another
    /// group: in-process a fresh range the fabric hands out (at `leader` only), on MPI the
    /// largest next free id among the group (every rank gets it). Collective.
    fn candidate_ids(&self, n: u32, leader: bool) -> Result<u32> {
        let fabric = self.endpoint().fabric();
        if self.endpoint().wire().is_none() {
            return Ok(if leader { fabric.new_contexts(n) } else { 0 });
        }
        self.allreduce(&fabric.next_context(), Max)
    }

    /// Reserves the ids `base..base + n` agreed with another group (on MPI; in-process the
    /// fabric handed them out already).
    fn reserve_agreed(&self, base: u32, n: u32) {
        if self.endpoint().wire().is_some() {
            self.endpoint().fabric().reserve_agreed(base, n);
        }
    }

    /// The local leader's part of `intercomm_create`: checks the remote leader, sends it this
    /// group and the ids it proposes, receives the other group's, and returns what to tell
    /// this group (`[OK, agreed id, remote world ranks…]` or an error code and its facts).
    fn exchange_groups(
        &self,
        candidate: u32,
        peer: &Comm,
        remote_leader: usize,
        tag: i32,
    ) -> Result<Vec<u64>> {
        let Ok(their_leader) = peer.world_rank_of(remote_leader) else {
            return Ok(vec![
                BAD_REMOTE_LEADER,
                remote_leader as u64,
                peer.size() as u64,
            ]);
        };
        if self.group.contains(&their_leader) {
            return Ok(vec![OVERLAP, their_leader as u64, remote_leader as u64]);
        }
        let mut mine = vec![u64::from(candidate)];
        mine.extend(self.group.iter().map(|&w| w as u64));
        // moved, so neither leader waits for the other to receive before it receives
        let ctx = peer.p2p_context();
        peer.send_owned_in(ctx, mine, remote_leader, tag)?;
        let (theirs, _) = peer.recv_in::<u64>(ctx, remote_leader, tag)?;
        let Some((&their_candidate, their_group)) = theirs.split_first() else {
            return Err(Error::invalid(
                CREATE,
                "the remote leader's message is empty: a message on the peer communicator with \
                 the same tag took its place",
            ));
        };
        if let Some(&w) = their_group
            .iter()
            .find(|&&w| self.group.contains(&(w as usize)))
        {
            return Ok(vec![OVERLAP, w, remote_leader as u64]);
        }
        let mut told = vec![OK, u64::from(candidate).max(their_candidate)];
        told.extend_from_slice(their_group);
        Ok(told)
    }
}

impl InterComm {
    /// This rank's number in the local group (MPI_Comm_rank on an intercommunicator).
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let inter = halves(&world)?;
    ///     Ok((inter.rank(), inter.size(), inter.remote_size()))
    /// })?;
    /// assert_eq!(got, [(0, 1, 2), (0, 2, 1), (1, 2, 1)]);
    /// # fn halves(world: &rpar::Comm) -> rpar::Result<rpar::InterComm> {
    /// #     let low = world.rank() == 0;
    /// #     let half = world.split(Some(low as u32), 0)?.unwrap();
    /// #     rpar::InterComm::create(&half, 0, world, if low { 1 } else { 0 }, 0)
    /// # }
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn rank(&self) -> usize {
        self.local.rank()
    }

    /// The number of ranks of the local group (MPI_Comm_size on an intercommunicator).
    ///
    /// ```
    /// let sizes = rpar::run(4, |world| {
    ///     let left = world.rank() == 0;
    ///     let half = world.split(Some(left as u32), 0)?.unwrap();
    ///     Ok(rpar::InterComm::create(&half, 0, &world, if left { 1 } else { 0 }, 0)?.size())
    /// })?;
    /// assert_eq!(sizes, [1, 3, 3, 3]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn size(&self) -> usize {
        self.local.size()
    }

    /// The number of ranks of the remote group (MPI_Comm_remote_size).
    ///
    /// ```
    /// let sizes = rpar::run(4, |world| {
    ///     let left = world.rank() == 0;
    ///     let half = world.split(Some(left as u32), 0)?.unwrap();
    ///     Ok(rpar::InterComm::create(&half, 0, &world, if left { 1 } else { 0 }, 0)?.remote_size())
    /// })?;
    /// assert_eq!(sizes, [3, 1, 1, 1]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[inline]
    pub fn remote_size(&self) -> usize {
        self.remote.size()
    }

    /// The local group (MPI_Comm_group on an intercommunicator): its [`Group::rank`] is
    /// this rank's.
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     let low = world.rank() == 0;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     assert_eq!(inter.group().compare(&half.group()), rpar::Comparison::Ident);
    ///     assert_eq!(inter.group().rank(), Some(inter.rank()));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn group(&self) -> Group {
        self.local.group()
    }

    /// The remote group (MPI_Comm_remote_group), in its ranks' order; this rank is not in it
    /// ([`Group::rank`] is `None`).
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     let low = world.rank() == 0;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let remote = inter.remote_group();
    ///     assert_eq!((remote.size(), remote.rank()), (inter.remote_size(), None));
    ///     let world_ranks = remote.translate_ranks(&[0], &world.group())?;
    ///     assert_eq!(world_ranks, [Some(if low { 1 } else { 0 })]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn remote_group(&self) -> Group {
        Group::from_world(self.remote.group.iter().copied().collect(), None)
    }

    /// Sends `buf` to rank `dest` of the remote group (MPI_Send on an intercommunicator);
    /// [`Comm::send`] says what `buf` may be. [`PROC_NULL`](crate::PROC_NULL) sends nothing.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::send`]; [`Error::RankOutOfRange`] names the remote group's size.
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() == 0;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     if low {
    ///         for r in 0..inter.remote_size() {
    ///             inter.send(&[10 * r as u32, 1][..], r, 5)?;
    ///         }
    ///         return Ok(vec![]);
    ///     }
    ///     let (v, st) = inter.recv::<u32>(0, 5)?;
    ///     assert_eq!((st.source, st.tag), (0, 5));
    ///     Ok(v)
    /// })?;
    /// assert_eq!(got[2], [10, 1]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn send<S: SendBuf>(&self, buf: S, dest: usize, tag: i32) -> Result<()> {
        self.remote.send(buf, dest, tag)
    }

    /// Receives a message from rank `source` of the remote group (or [`ANY_SOURCE`]) as a new
    /// `Vec` (MPI_Recv on an intercommunicator); the status's source is a remote rank.
    ///
    /// [`ANY_SOURCE`]: crate::ANY_SOURCE
    ///
    /// # Errors
    ///
    /// Those of [`Comm::recv`].
    ///
    /// ```
    /// let got = rpar::run(3, |world| {
    ///     let low = world.rank() == 0;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     if !low {
    ///         return inter.send(&(inter.rank() as u8), 0, 1).map(|()| vec![]);
    ///     }
    ///     let mut from = Vec::new();
    ///     for _ in 0..inter.remote_size() {
    ///         let (v, st) = inter.recv::<u8>(rpar::ANY_SOURCE, 1)?;
    ///         assert_eq!(v, [st.source as u8]);
    ///         from.push(st.source);
    ///     }
    ///     from.sort();
    ///     Ok(from)
    /// })?;
    /// assert_eq!(got[0], [0, 1]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn recv<T: Datatype>(&self, source: usize, tag: i32) -> Result<(Vec<T>, Status)> {
        self.remote.recv(source, tag)
    }

    /// Receives a message from rank `source` of the remote group into `buf` (MPI_Recv on an
    /// intercommunicator); [`Comm::recv_into`] says what `buf` may be.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::recv_into`].
    ///
    /// ```
    /// let got = rpar::run(2, |world| {
    ///     let half = world.split(Some(world.rank() as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, 1 - world.rank(), 0)?;
    ///     inter.send(&[world.rank() as i64; 3][..], 0, 0)?;
    ///     let mut buf = [0i64; 4];
    ///     let st = inter.recv_into(&mut buf[..], 0, 0)?;
    ///     Ok((st.count, buf))
    /// })?;
    /// assert_eq!(got, [(3, [1, 1, 1, 0]), (3, [0, 0, 0, 0])]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn recv_into<R: RecvBuf>(&self, buf: R, source: usize, tag: i32) -> Result<Status> {
        self.remote.recv_into(buf, source, tag)
    }

    /// Sends to rank `dest` of the remote group and receives from rank `source` of it in one
    /// call (MPI_Sendrecv on an intercommunicator).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::sendrecv`].
    ///
    /// ```
    /// let got = rpar::run(2, |world| {
    ///     let half = world.split(Some(world.rank() as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, 1 - world.rank(), 0)?;
    ///     let mut theirs = 0u16;
    ///     inter.sendrecv(&(world.rank() as u16 + 7), 0, 0, &mut theirs, 0, 0)?;
    ///     Ok(theirs)
    /// })?;
    /// assert_eq!(got, [8, 7]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)] // MPI_Sendrecv's own argument list
    pub fn sendrecv<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        dest: usize,
        send_tag: i32,
        recv: &mut R,
        source: usize,
        recv_tag: i32,
    ) -> Result<Status> {
        self.remote
            .sendrecv(send, dest, send_tag, recv, source, recv_tag)
    }

    /// Starts a send to rank `dest` of the remote group (MPI_Isend on an intercommunicator);
    /// as [`Comm::isend`].
    ///
    /// # Errors
    ///
    /// Those of [`Comm::isend`].
    ///
    /// ```
    /// let got = rpar::run(2, |world| {
    ///     let half = world.split(Some(world.rank() as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, 1 - world.rank(), 0)?;
    ///     let mut theirs = [0u32; 2];
    ///     let recv = inter.irecv_into(&mut theirs[..], 0, 3)?;
    ///     let send = inter.isend(&[world.rank() as u32; 2][..], 0, 3)?;
    ///     rpar::wait_all(vec![send, recv])?;
    ///     Ok(theirs)
    /// })?;
    /// assert_eq!(got, [[1, 1], [0, 0]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn isend<S: SendBuf>(&self, buf: S, dest: usize, tag: i32) -> Result<Request<'static>> {
        self.remote.isend(buf, dest, tag)
    }

    /// Starts a receive from rank `source` of the remote group into `buf` (MPI_Irecv on an
    /// intercommunicator); as [`Comm::irecv_into`] (see [`InterComm::isend`] for an example).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::irecv_into`].
    pub fn irecv_into<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
        source: usize,
        tag: i32,
    ) -> Result<Request<'a>> {
        self.remote.irecv_into(buf, source, tag)
    }

    /// Waits for a message from rank `source` of the remote group and says what it is without
    /// receiving it (MPI_Probe on an intercommunicator).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::probe`].
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let half = world.split(Some(world.rank() as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, 1 - world.rank(), 0)?;
    ///     if world.rank() == 0 {
    ///         inter.send(&[1u8; 5][..], 0, 2)?;
    ///     } else {
    ///         let p = inter.probe(rpar::ANY_SOURCE, rpar::ANY_TAG)?;
    ///         assert_eq!((p.status.source, p.status.tag, p.bytes), (0, 2, 5));
    ///         inter.recv::<u8>(0, 2)?;
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn probe(&self, source: usize, tag: i32) -> Result<Probed> {
        self.remote.probe(source, tag)
    }

    /// One communicator of both groups (MPI_Intercomm_merge): the group whose ranks pass
    /// `high = false` first, then the other; every rank of a group passes the same `high`. If
    /// both groups pass the same, MPI leaves the order open: here the group whose rank 0 has
    /// the lower world rank (rank 0 of [`Comm`]'s world) comes first. Ranks keep their order
    /// within their group. Collective over both groups.
    ///
    /// Cost: an allreduce in each group (which checks `high`), the leaders' exchange (`2
    /// alpha`) and a broadcast in each group.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] at every rank of a group whose ranks pass different `high`;
    /// as for every collective, [`Error::CollectiveMismatch`] and [`Error::Aborted`].
    ///
    /// ```
    /// let got = rpar::run(4, |world| {
    ///     let low = world.rank() < 1;
    ///     let half = world.split(Some(low as u32), 0)?.unwrap();
    ///     let inter = rpar::InterComm::create(&half, 0, &world, if low { 1 } else { 0 }, 0)?;
    ///     let low_first = inter.merge(!low)?;   // world rank 0 first
    ///     let high_first = inter.merge(low)?;   // world ranks 1, 2, 3 first
    ///     Ok((low_first.rank(), high_first.rank(), high_first.size()))
    /// })?;
    /// assert_eq!(got, [(0, 3, 4), (1, 0, 4), (2, 1, 4), (3, 2, 4)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn merge(&self, high: bool) -> Result<Comm> {
        self.across(Call::new("merge"), || {
            let fabric = self.local.endpoint().fabric();
            let on_mpi = self.local.endpoint().wire().is_some();
            // [largest next free id (MPI), any rank high, any rank low]
            let proposal = [
                if on_mpi { fabric.next_context() } else { 0 },
                u32::from(high),
                u32::from(!high),
            ];
            let agreed = self.in_local(|l| l.allreduce(&proposal[..], Max))?;
            if agreed[1] == agreed[2] {
                return Err(Error::invalid(
                    "InterComm::merge",
                    "the ranks of this group passed both high = true and high = false: every \
                     rank of a group must pass the same",
                ));
            }
            let mut told = [0u64; 2]; // [id, whether this group comes first]
            if self.local.rank() == 0 {
                let candidate = if on_mpi {
                    agreed[0]
                } else {
                    fabric.new_contexts(1)
                };
                let mine = [u64::from(candidate), u64::from(high)];
                let mut theirs = [0u64; 2];
                self.leaders_exchange(&mine[..], &mut theirs[..])?;
                let first = match (high, theirs[1] != 0) {
                    (false, true) => true,
                    (true, false) => false,
                    _ => self.local.group[0] < self.remote.group[0],
                };
                told = [mine[0].max(theirs[0]), u64::from(first)];
            }
            self.in_local(|l| l.bcast(&mut told[..], 0))?;
            let id = told[0] as u32;
            if on_mpi {
                fabric.reserve_agreed(id, 1);
            }
            let (local, remote) = (&*self.local.group, &*self.remote.group);
            let (group, rank): (Arc<[usize]>, usize) = if told[1] != 0 {
                (local.iter().chain(remote).copied().collect(), self.rank())
            } else {
                let group = remote.iter().chain(local).copied().collect();
                (group, remote.len() + self.rank())
            };
            Ok(self.local.derived(group, rank, id, None))
        })
    }
}
