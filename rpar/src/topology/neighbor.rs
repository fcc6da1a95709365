//! Neighbourhood collectives (MPI_Neighbor_allgather, MPI_Neighbor_alltoall and their `v`
//! forms, MPI_Neighbor_alltoallw in `neighbor_w.rs`) on every topology, through the
//! [`Neighborhood`] trait.
//!
//! Neighbour order is MPI's: for a Cartesian grid, per dim the rank one step back, then one step
//! forward (`None` = MPI_PROC_NULL off a non-periodic edge, whose slot is left untouched); for a
//! graph, the node's neighbour list; for a distributed graph, its sources (receives) and
//! destinations (sends).
//!
//! Algorithm: every rank posts all its sends at once (owned copies, which never block), then
//! receives its slots in order. Messages travel on the collective context with tags 400..=499.
//! On a grid a message carries its direction, so a slot "from one step back" takes what that
//! neighbour sent forward even when back and forward are the same rank (a periodic dim of 2 or
//! 1); between graph nodes joined by several edges, the i-th message matches the i-th edge, by
//! MPI's non-overtaking rule.

use super::{CartComm, DistGraphComm, GraphComm, TopoKind};
use crate::collective::{Channel, PerRank};
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Error, Request, Result, Scope};
use std::ops::Range;

/// Tags of topology traffic, in the range 400..=499 reserved for it.
pub(crate) mod tags {
    /// A grid neighbourhood message sent one step back along its dim.
    pub(crate) const CART_BACK: i32 = 400;
    /// A grid neighbourhood message sent one step forward along its dim.
    pub(crate) const CART_FORWARD: i32 = 401;
    /// A graph or distributed-graph neighbourhood message.
    pub(crate) const GRAPH: i32 = 402;
    /// The consistency check of `DistGraphComm::dist_graph_create_adjacent`.
    pub(crate) const DIST_GRAPH: i32 = 403;
}

/// A communicator with neighbours: the neighbourhood collectives (MPI_Neighbor_allgather(v),
/// MPI_Neighbor_alltoall(v)), on [`CartComm`], [`GraphComm`] and [`DistGraphComm`] alike.
///
/// ```
/// use rpar::Neighborhood;
/// let got = rpar::run(3, |world| {
///     let line = rpar::CartComm::create(&world, [3], [false], false)?.unwrap();
///     let mut from = [-1i32; 2]; // [one step back, one step forward]
///     line.neighbor_allgather(&[line.rank() as i32 * 10], &mut from)?;
///     Ok(from)
/// })?;
/// assert_eq!(got, vec![[-1, 10], [0, 20], [10, -1]]); // off the edge: left untouched
/// # Ok::<(), rpar::Error>(())
/// ```
pub trait Neighborhood {
    /// The communicator the messages travel on (the topology communicator's
    /// [`comm`](CartComm::comm)).
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// rpar::run(2, |world| {
    ///     let line = rpar::CartComm::create(&world, [2], [false], false)?.unwrap();
    ///     assert_eq!(line.neighborhood_comm().size(), 2);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn neighborhood_comm(&self) -> &Comm;

    /// The kind of topology (MPI_Topo_test), which fixes the neighbour order.
    ///
    /// ```
    /// use rpar::{Neighborhood, TopoKind};
    /// fn describe(topo: &impl Neighborhood) -> &'static str {
    ///     match topo.topo_kind() {
    ///         TopoKind::Cart => "grid",
    ///         TopoKind::Graph | TopoKind::DistGraph => "graph",
    ///         TopoKind::None => "none",
    ///     }
    /// }
    /// rpar::run(2, |world| {
    ///     let line = rpar::CartComm::create(&world, [2], [true], false)?.unwrap();
    ///     let pair = rpar::GraphComm::from_adjacency(&world, &[[1], [0]], false)?.unwrap();
    ///     assert_eq!((describe(&line), describe(&pair)), ("grid", "graph"));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn topo_kind(&self) -> TopoKind;

    /// The ranks this rank receives from, in slot order (`None`: MPI_PROC_NULL). For a grid,
    /// per dim the rank one step back then one step forward; for a graph, the node's neighbour
    /// list; for a distributed graph, its sources.
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// rpar::run(6, |world| {
    ///     let grid = rpar::CartComm::create(&world, [2, 3], [false, true], false)?.unwrap();
    ///     if grid.coords() == [0, 0] {
    ///         // dim 0: nothing above row 0, rank 3 below; dim 1 wraps: rank 2 left, rank 1 right
    ///         assert_eq!(grid.in_neighbors(), [None, Some(3), Some(2), Some(1)]);
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn in_neighbors(&self) -> Vec<Option<usize>>;

    /// The ranks this rank sends to, in slot order (`None`: MPI_PROC_NULL). The same as
    /// [`in_neighbors`](Neighborhood::in_neighbors) on grids and graphs; a distributed graph's
    /// destinations.
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// rpar::run(3, |world| {
    ///     let (r, p) = (world.rank(), world.size());
    ///     let ring = rpar::DistGraphComm::dist_graph_create_adjacent(
    ///         &world, &[(r + p - 1) % p], &[(r + 1) % p], false)?;
    ///     assert_eq!(ring.out_neighbors(), [Some((r + 1) % p)]);
    ///     assert_eq!(ring.in_neighbors(), [Some((r + p - 1) % p)]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn out_neighbors(&self) -> Vec<Option<usize>>;

    /// Sends `send` to every out-neighbour and receives one block of `send.len()` elements from
    /// each in-neighbour into `recv`, in neighbour order (MPI_Neighbor_allgather). Collective.
    /// The [trait's example](Neighborhood) shows the call.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `recv` does not hold exactly one block per in-neighbour; and,
    /// as for every collective, [`Error::Aborted`] if another rank fails during the call.
    fn neighbor_allgather<T: Datatype>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        let n = send.len();
        let sources = self.in_neighbors();
        expect_len("neighbor_allgather", "recv", recv.len(), sources.len() * n)?;
        let outs: Vec<Range<usize>> = self.out_neighbors().iter().map(|_| 0..n).collect();
        let ins: Vec<Range<usize>> = (0..sources.len()).map(|j| j * n..(j + 1) * n).collect();
        Plan::of(self, outs, ins).run(self.neighborhood_comm(), send, recv)
    }

    /// Like [`Neighborhood::neighbor_allgather`], but the block from in-neighbour `j` goes to
    /// `recv[displs[j]..displs[j] + counts[j]]` (MPI_Neighbor_allgatherv). Collective.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `counts` or `displs` not one per in-neighbour, or a block
    /// outside `recv`; and, as for every collective, [`Error::Aborted`] if another rank fails
    /// during the call.
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// let got = rpar::run(3, |world| {
    ///     // a star: node 0 hears from 1 and 2, each of which sends rank + 1 values
    ///     let star = rpar::GraphComm::from_adjacency(&world, &[vec![1, 2], vec![0], vec![0]], false)?
    ///         .unwrap();
    ///     let r = star.rank();
    ///     let mine = vec![r as u8; r + 1];
    ///     let (counts, displs, len) = match r {
    ///         0 => (vec![2, 3], vec![0, 2], 5), // 2 from rank 1 at 0, 3 from rank 2 at 2
    ///         _ => (vec![1], vec![0], 1),
    ///     };
    ///     let mut recv = vec![0u8; len];
    ///     star.neighbor_allgatherv(&mine, &mut recv, &counts, &displs)?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got[0], [1, 1, 2, 2, 2]);
    /// assert_eq!(got[2], [0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn neighbor_allgatherv<T: Datatype>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        let ins = blocks(
            "neighbor_allgatherv",
            "recv",
            &self.in_neighbors(),
            counts,
            displs,
            recv.len(),
        )?;
        let outs: Vec<Range<usize>> = self.out_neighbors().iter().map(|_| 0..send.len()).collect();
        Plan::of(self, outs, ins).run(self.neighborhood_comm(), send, recv)
    }

    /// Sends block `k` of `count` elements of `send` to out-neighbour `k` and receives block
    /// `j` of `recv` from in-neighbour `j` (MPI_Neighbor_alltoall). Collective.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `send` or `recv` does not hold `count` elements per neighbour;
    /// and, as for every collective, [`Error::Aborted`] if another rank fails during the call.
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// let got = rpar::run(4, |world| {
    ///     let ring = rpar::CartComm::create(&world, [4], [true], false)?.unwrap();
    ///     let r = ring.rank() as u32;
    ///     let mut recv = [0u32; 2];
    ///     ring.neighbor_alltoall(&[100 + r, 200 + r], &mut recv, 1)?; // [to back, to forward]
    ///     Ok(recv)
    /// })?;
    /// // slot 0 (from one step back) holds what that rank sent forward
    /// assert_eq!(got[1], [200, 102]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn neighbor_alltoall<T: Datatype>(
        &self,
        send: &[T],
        recv: &mut [T],
        count: usize,
    ) -> Result<()> {
        let (sources, dests) = (self.in_neighbors(), self.out_neighbors());
        expect_len("neighbor_alltoall", "send", send.len(), dests.len() * count)?;
        expect_len(
            "neighbor_alltoall",
            "recv",
            recv.len(),
            sources.len() * count,
        )?;
        let outs: Vec<Range<usize>> = (0..dests.len())
            .map(|k| k * count..(k + 1) * count)
            .collect();
        let ins: Vec<Range<usize>> = (0..sources.len())
            .map(|j| j * count..(j + 1) * count)
            .collect();
        Plan::of(self, outs, ins).run(self.neighborhood_comm(), send, recv)
    }

    /// Like [`Neighborhood::neighbor_alltoall`] with a count and displacement per neighbour for
    /// the sends and for the receives (MPI_Neighbor_alltoallv). Collective.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for counts or displs not one per neighbour, or a block outside
    /// its buffer; and, as for every collective, [`Error::Aborted`] if another rank fails during
    /// the call.
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// let got = rpar::run(3, |world| {
    ///     // a line 0 - 1 - 2: rank 1 sends one value back and two forward
    ///     let line = rpar::CartComm::create(&world, [3], [false], false)?.unwrap();
    ///     let send = [10u16, 20, 21];
    ///     let (back, fwd) = line.shift(0, 1)?;
    ///     let send_counts = [usize::from(back != rpar::PROC_NULL), 2 * usize::from(fwd != rpar::PROC_NULL)];
    ///     let mut recv = [0u16; 3];
    ///     // slot 0 (from one step back) gets 2 values at 0, slot 1 (from forward) 1 value at 2
    ///     line.neighbor_alltoallv(&send, &send_counts, &[0, 1], &mut recv, &[2, 1], &[0, 2])?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got[1], [20, 21, 10]);
    /// assert_eq!(got[2], [20, 21, 0]); // nothing beyond the end: slot 1 left untouched
    /// # Ok::<(), rpar::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)] // MPI_Neighbor_alltoallv's own argument list
    fn neighbor_alltoallv<T: Datatype>(
        &self,
        send: &[T],
        send_counts: &[usize],
        send_displs: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
        recv_displs: &[usize],
    ) -> Result<()> {
        let call = "neighbor_alltoallv";
        let outs = blocks(
            call,
            "send",
            &self.out_neighbors(),
            send_counts,
            send_displs,
            send.len(),
        )?;
        let ins = blocks(
            call,
            "recv",
            &self.in_neighbors(),
            recv_counts,
            recv_displs,
            recv.len(),
        )?;
        Plan::of(self, outs, ins).run(self.neighborhood_comm(), send, recv)
    }

    /// Sends each out-neighbour `k` the block `send` gives for it — `counts[k]` elements of
    /// `types[k]` from byte `displs[k]` of its buffer — and receives each in-neighbour `j`'s
    /// block into the block `recv` gives for it (MPI_Neighbor_alltoallw): both sides are
    /// [`Typed::per_rank`](crate::Typed::per_rank) views with one entry per neighbour, in
    /// neighbour order. Collective.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if a side does not give one type, count and displacement per
    /// neighbour, or a block does not lie in its buffer; [`Error::TypeMismatch`] at a rank
    /// whose block from a neighbour has another type signature than the one it gives for it
    /// (every other block is still received); as for every collective, [`Error::Aborted`].
    ///
    /// ```
    /// use rpar::{Datatype, Neighborhood, TypeMap, Typed};
    /// let (one, pair) = (i32::type_map().commit(), TypeMap::contiguous(2, &i32::type_map())?.commit());
    /// let got = rpar::run(2, |world| {
    ///     let ring = rpar::CartComm::create(&world, [2], [true], false)?.unwrap();
    ///     let r = ring.rank() as i32;
    ///     // to the rank one step back: one i32; one step forward: a pair, from byte 4
    ///     let send = [10 * r, 10 * r + 1, 10 * r + 2];
    ///     let mut recv = [-1i32; 3];
    ///     ring.neighbor_alltoallw(
    ///         Typed::per_rank(&send[..], &[&one, &pair], &[1, 1], &[0, 4]),
    ///         // from one step back comes what it sent forward: a pair; then one i32
    ///         Typed::per_rank(&mut recv[..], &[&pair, &one], &[1, 1], &[0, 8]),
    ///     )?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got[0], [11, 12, 10]);
    /// assert_eq!(got[1], [1, 2, 0]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn neighbor_alltoallw<T: Datatype, U: Datatype>(
        &self,
        send: PerRank<'_, '_, &[T]>,
        mut recv: PerRank<'_, '_, &mut [U]>,
    ) -> Result<()> {
        let neighbours = Neighbours::of(self);
        neighbours.check(&send, &recv)?;
        neighbours.exchange(self.neighborhood_comm(), &send, &mut recv)
    }

    /// Starts [`Neighborhood::neighbor_allgather`] in `scope`, which must be a scope of this
    /// topology's communicator (MPI_Ineighbor_allgather); the buffers stay borrowed until the
    /// scope ends. See [`Scope::iallreduce`](crate::Scope::iallreduce) for how non-blocking
    /// collectives run.
    ///
    /// # Errors
    ///
    /// Those of [`Neighborhood::neighbor_allgather`] (checked now), and
    /// [`Error::InvalidArgument`] for a scope of another communicator.
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// let got = rpar::run(3, |world| {
    ///     let line = rpar::CartComm::create(&world, [3], [false], false)?.unwrap();
    ///     let mine = [line.rank() as i32 * 10];
    ///     let mut from = [-1i32; 2];
    ///     line.comm().scope(|s| line.ineighbor_allgather(s, &mine, &mut from)?.wait().map(drop))?;
    ///     Ok(from)
    /// })?;
    /// assert_eq!(got, vec![[-1, 10], [0, 20], [10, -1]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn ineighbor_allgather<'s, T: Datatype>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<Request<'s>> {
        let n = send.len();
        let sources = self.in_neighbors();
        expect_len("ineighbor_allgather", "recv", recv.len(), sources.len() * n)?;
        let outs: Vec<Range<usize>> = self.out_neighbors().iter().map(|_| 0..n).collect();
        let ins: Vec<Range<usize>> = (0..sources.len()).map(|j| j * n..(j + 1) * n).collect();
        Plan::of(self, outs, ins).start(self.neighborhood_comm(), scope, send, recv)
    }

    /// Starts [`Neighborhood::neighbor_allgatherv`] in `scope` (MPI_Ineighbor_allgatherv), as
    /// [`Neighborhood::ineighbor_allgather`].
    ///
    /// # Errors
    ///
    /// Those of [`Neighborhood::neighbor_allgatherv`] and of
    /// [`Neighborhood::ineighbor_allgather`].
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// let got = rpar::run(2, |world| {
    ///     let pair = rpar::CartComm::create(&world, [2], [false], false)?.unwrap();
    ///     let mine = vec![pair.rank() as u8; pair.rank() + 1];
    ///     let (counts, len) = if pair.rank() == 0 { ([0, 2], 2) } else { ([1, 0], 1) };
    ///     let mut recv = vec![9u8; len];
    ///     pair.comm().scope(|s| {
    ///         pair.ineighbor_allgatherv(s, &mine, &mut recv, &counts, &[0, 0])?.wait().map(drop)
    ///     })?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got, vec![vec![1, 1], vec![0]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn ineighbor_allgatherv<'s, T: Datatype>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<Request<'s>> {
        let ins = blocks(
            "ineighbor_allgatherv",
            "recv",
            &self.in_neighbors(),
            counts,
            displs,
            recv.len(),
        )?;
        let outs: Vec<Range<usize>> = self.out_neighbors().iter().map(|_| 0..send.len()).collect();
        Plan::of(self, outs, ins).start(self.neighborhood_comm(), scope, send, recv)
    }

    /// Starts [`Neighborhood::neighbor_alltoall`] in `scope` (MPI_Ineighbor_alltoall), as
    /// [`Neighborhood::ineighbor_allgather`].
    ///
    /// # Errors
    ///
    /// Those of [`Neighborhood::neighbor_alltoall`] and of
    /// [`Neighborhood::ineighbor_allgather`].
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// let got = rpar::run(4, |world| {
    ///     let ring = rpar::CartComm::create(&world, [4], [true], false)?.unwrap();
    ///     let r = ring.rank() as u32;
    ///     let send = [100 + r, 200 + r];
    ///     let mut recv = [0u32; 2];
    ///     ring.comm().scope(|s| ring.ineighbor_alltoall(s, &send, &mut recv, 1)?.wait().map(drop))?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got[1], [200, 102]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn ineighbor_alltoall<'s, T: Datatype>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
        count: usize,
    ) -> Result<Request<'s>> {
        let (sources, dests) = (self.in_neighbors(), self.out_neighbors());
        let call = "ineighbor_alltoall";
        expect_len(call, "send", send.len(), dests.len() * count)?;
        expect_len(call, "recv", recv.len(), sources.len() * count)?;
        let outs: Vec<Range<usize>> = (0..dests.len())
            .map(|k| k * count..(k + 1) * count)
            .collect();
        let ins: Vec<Range<usize>> = (0..sources.len())
            .map(|j| j * count..(j + 1) * count)
            .collect();
        Plan::of(self, outs, ins).start(self.neighborhood_comm(), scope, send, recv)
    }

    /// Starts [`Neighborhood::neighbor_alltoallv`] in `scope` (MPI_Ineighbor_alltoallv), as
    /// [`Neighborhood::ineighbor_allgather`]; `sends` and `receives` are each (counts,
    /// displs).
    ///
    /// # Errors
    ///
    /// Those of [`Neighborhood::neighbor_alltoallv`] and of
    /// [`Neighborhood::ineighbor_allgather`].
    ///
    /// ```
    /// use rpar::Neighborhood;
    /// let got = rpar::run(2, |world| {
    ///     let pair = rpar::CartComm::create(&world, [2], [true], false)?.unwrap();
    ///     let send = [pair.rank() as u8; 2];
    ///     let mut recv = [0u8; 2];
    ///     let blocks: (&[usize], &[usize]) = (&[1, 1], &[0, 1]);
    ///     pair.comm().scope(|s| pair.ineighbor_alltoallv(s, &send, blocks, &mut recv, blocks)?.wait().map(drop))?;
    ///     Ok(recv)
    /// })?;
    /// assert_eq!(got, vec![[1, 1], [0, 0]]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    fn ineighbor_alltoallv<'s, T: Datatype>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        (send_counts, send_displs): (&[usize], &[usize]),
        recv: &'s mut [T],
        (recv_counts, recv_displs): (&[usize], &[usize]),
    ) -> Result<Request<'s>> {
        let call = "ineighbor_alltoallv";
        let outs = blocks(
            call,
            "send",
            &self.out_neighbors(),
            send_counts,
            send_displs,
            send.len(),
        )?;
        let ins = blocks(
            call,
            "recv",
            &self.in_neighbors(),
            recv_counts,
            recv_displs,
            recv.len(),
        )?;
        Plan::of(self, outs, ins).start(self.neighborhood_comm(), scope, send, recv)
    }

    /// Starts [`Neighborhood::neighbor_alltoallw`] in `scope` (MPI_Ineighbor_alltoallw), as
    /// [`Neighborhood::ineighbor_allgather`].
    ///
    /// # Errors
    ///
    /// Those of [`Neighborhood::neighbor_alltoallw`] (the sides checked now) and of
    /// [`Neighborhood::ineighbor_allgather`].
    fn ineighbor_alltoallw<'s, T: Datatype, U: Datatype>(
        &self,
        scope: &'s Scope<'s, '_>,
        send: PerRank<'s, 's, &'s [T]>,
        mut recv: PerRank<'s, 's, &'s mut [U]>,
    ) -> Result<Request<'s>> {
        let neighbours = Neighbours::of(self);
        neighbours.check(&send, &recv)?;
        check_scope(scope, self.neighborhood_comm())?;
        scope.start(move |call| neighbours.exchange(call, &send, &mut recv))
    }
}

fn expect_len(call: &'static str, what: &str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::invalid(
            call,
            format!("{what} must hold {want} elements (one block per neighbour), but holds {got}"),
        ))
    }
}

/// The ranges of `counts`/`displs`, one per neighbour, each checked to lie in `0..len`.
fn blocks(
    call: &'static str,
    what: &str,
    neighbors: &[Option<usize>],
    counts: &[usize],
    displs: &[usize],
    len: usize,
) -> Result<Vec<Range<usize>>> {
    if counts.len() != neighbors.len() || displs.len() != neighbors.len() {
        return Err(Error::invalid(
            call,
            format!(
                "{what} counts and displs must have one entry per neighbour ({}), but have {} and {}",
                neighbors.len(),
                counts.len(),
                displs.len()
            ),
        ));
    }
    counts
        .iter()
        .zip(displs)
        .enumerate()
        .map(|(k, (&c, &d))| match d.checked_add(c) {
            Some(end) if end <= len => Ok(d..end),
            _ => Err(Error::invalid(
                call,
                format!("{what} block {k} ({c} elements at {d}) does not fit in the {len} elements of {what}"),
            )),
        })
        .collect()
}

/// The tag of a slot's message, from the slot's index.
type SlotTag = fn(usize) -> i32;

/// The tag of the message of out-slot `k` and the tag expected in in-slot `j`.
pub(super) fn slot_tags(kind: TopoKind) -> (SlotTag, SlotTag) {
    if kind == TopoKind::Cart {
        // Out slot 2d goes back, 2d + 1 forward; in slot 2d comes from the rank one step back,
        // which sent it forward.
        (
            |k| {
                if k % 2 == 0 {
                    tags::CART_BACK
                } else {
                    tags::CART_FORWARD
                }
            },
            |j| {
                if j % 2 == 0 {
                    tags::CART_FORWARD
                } else {
                    tags::CART_BACK
                }
            },
        )
    } else {
        (|_| tags::GRAPH, |_| tags::GRAPH)
    }
}

/// A neighbourhood exchange, checked: the neighbours, and the block of the send buffer for
/// each out-neighbour and of the receive buffer for each in-neighbour.
struct Plan {
    at: Neighbours,
    outs: Vec<Range<usize>>,
    ins: Vec<Range<usize>>,
}

impl Plan {
    fn of<N: Neighborhood + ?Sized>(
        topo: &N,
        outs: Vec<Range<usize>>,
        ins: Vec<Range<usize>>,
    ) -> Plan {
        Plan {
            at: Neighbours::of(topo),
            outs,
            ins,
        }
    }

    /// Posts `send[outs[k]]` to each out-neighbour `k`, then receives each in-neighbour `j`'s
    /// message into `recv[ins[j]]`; absent neighbours are skipped.
    fn run<T: Datatype>(&self, comm: &Comm, send: &[T], recv: &mut [T]) -> Result<()> {
        let (out_tag, in_tag) = slot_tags(self.at.kind);
        // one collective call (traced, and counted so that the other collectives stay in step)
        comm.collective(Call::new("neighborhood exchange"), &"Direct", || {
            for (k, (dest, range)) in self.at.dests.iter().zip(&self.outs).enumerate() {
                if let Some(dest) = *dest {
                    Channel::send_owned(comm, send[range.clone()].to_vec(), dest, out_tag(k))?;
                }
            }
            for (j, (source, range)) in self.at.sources.iter().zip(&self.ins).enumerate() {
                if let Some(source) = *source {
                    Channel::recv_into(comm, &mut recv[range.clone()], source, in_tag(j))?;
                }
            }
            Ok(())
        })
    }

    /// Starts the exchange in `scope`, a scope of `comm` (the topology's communicator).
    fn start<'s, T: Datatype>(
        self,
        comm: &Comm,
        scope: &'s Scope<'s, '_>,
        send: &'s [T],
        recv: &'s mut [T],
    ) -> Result<Request<'s>> {
        check_scope(scope, comm)?;
        scope.start(move |call| self.run(call, send, recv))
    }
}

/// Refuses a scope of another communicator than the topology's own, `comm`.
fn check_scope(scope: &Scope<'_, '_>, comm: &Comm) -> Result<()> {
    if std::ptr::eq(scope.comm(), comm) {
        return Ok(());
    }
    Err(Error::invalid(
        "a non-blocking neighbourhood collective",
        "a scope of the topology's own communicator (`topo.comm().scope(…)`), got a scope of \
         another communicator",
    ))
}

/// The neighbours of a rank in slot order, and the topology kind that fixes the slots' tags.
pub(super) struct Neighbours {
    pub(super) kind: TopoKind,
    pub(super) dests: Vec<Option<usize>>,
    pub(super) sources: Vec<Option<usize>>,
}

impl Neighbours {
    /// The neighbours of `topo`.
    fn of<N: Neighborhood + ?Sized>(topo: &N) -> Neighbours {
        Neighbours {
            kind: topo.topo_kind(),
            dests: topo.out_neighbors(),
            sources: topo.in_neighbors(),
        }
    }
}

impl<const N: usize> Neighborhood for CartComm<N> {
    fn neighborhood_comm(&self) -> &Comm {
        self.comm()
    }
    fn topo_kind(&self) -> TopoKind {
        TopoKind::of(self)
    }
    fn in_neighbors(&self) -> Vec<Option<usize>> {
        self.neighbor_ranks()
    }
    fn out_neighbors(&self) -> Vec<Option<usize>> {
        self.neighbor_ranks()
    }
}

impl Neighborhood for GraphComm {
    fn neighborhood_comm(&self) -> &Comm {
        self.comm()
    }
    fn topo_kind(&self) -> TopoKind {
        TopoKind::of(self)
    }
    fn in_neighbors(&self) -> Vec<Option<usize>> {
        let mine = self.neighbors(self.rank()).expect("this rank is a node");
        mine.iter().map(|&r| Some(r)).collect()
    }
    fn out_neighbors(&self) -> Vec<Option<usize>> {
        self.in_neighbors()
    }
}

impl Neighborhood for DistGraphComm {
    fn neighborhood_comm(&self) -> &Comm {
        self.comm()
    }
    fn topo_kind(&self) -> TopoKind {
        TopoKind::of(self)
    }
    fn in_neighbors(&self) -> Vec<Option<usize>> {
        self.dist_graph_neighbors()
            .0
            .iter()
            .map(|&r| Some(r))
            .collect()
    }
    fn out_neighbors(&self) -> Vec<Option<usize>> {
        self.dist_graph_neighbors()
            .1
            .iter()
            .map(|&r| Some(r))
            .collect()
    }
}
