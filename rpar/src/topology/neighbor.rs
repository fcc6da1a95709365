//! Neighbourhood collectives (MPI_Neighbor_allgather, MPI_Neighbor_alltoall and their `v`
//! forms) on every topology, through the [`Neighborhood`] trait.
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
use crate::collective::Channel;
use crate::comm::Call;
use crate::datatype::Datatype;
use crate::{Comm, Error, Result};
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

/// A communicator with neighbours: the neighbourhood collectives, on [`CartComm`],
/// [`GraphComm`] and [`DistGraphComm`] alike.
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
    /// The communicator the messages travel on.
    fn neighborhood_comm(&self) -> &Comm;

    /// The kind of topology (MPI_Topo_test).
    fn topo_kind(&self) -> TopoKind;

    /// The ranks this rank receives from, in slot order (`None`: MPI_PROC_NULL).
    fn in_neighbors(&self) -> Vec<Option<usize>>;

    /// The ranks this rank sends to, in slot order (`None`: MPI_PROC_NULL).
    fn out_neighbors(&self) -> Vec<Option<usize>>;

    /// Sends `send` to every out-neighbour and receives one block of `send.len()` elements from
    /// each in-neighbour into `recv`, in neighbour order (MPI_Neighbor_allgather). Collective.
    ///
    /// Errors: `recv` does not hold exactly one block per in-neighbour.
    fn neighbor_allgather<T: Datatype>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        let n = send.len();
        let sources = self.in_neighbors();
        expect_len("neighbor_allgather", "recv", recv.len(), sources.len() * n)?;
        let outs: Vec<Range<usize>> = self.out_neighbors().iter().map(|_| 0..n).collect();
        let ins: Vec<Range<usize>> = (0..sources.len()).map(|j| j * n..(j + 1) * n).collect();
        exchange(self, send, &outs, recv, &ins)
    }

    /// Like [`Neighborhood::neighbor_allgather`], but the block from in-neighbour `j` goes to
    /// `recv[displs[j]..displs[j] + counts[j]]` (MPI_Neighbor_allgatherv). Collective.
    ///
    /// Errors: `counts` or `displs` not one per in-neighbour, or a block outside `recv`.
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
        exchange(self, send, &outs, recv, &ins)
    }

    /// Sends block `k` of `count` elements of `send` to out-neighbour `k` and receives block
    /// `j` of `recv` from in-neighbour `j` (MPI_Neighbor_alltoall). Collective.
    ///
    /// Errors: `send` or `recv` not `count` elements per neighbour.
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
        exchange(self, send, &outs, recv, &ins)
    }

    /// Like [`Neighborhood::neighbor_alltoall`] with a count and displacement per neighbour for
    /// the sends and for the receives (MPI_Neighbor_alltoallv). Collective.
    ///
    /// Errors: counts or displs not one per neighbour, or a block outside its buffer.
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
        exchange(self, send, &outs, recv, &ins)
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
fn slot_tags(kind: TopoKind) -> (SlotTag, SlotTag) {
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

/// Posts `send[outs[k]]` to each out-neighbour `k`, then receives each in-neighbour `j`'s
/// message into `recv[ins[j]]`; absent neighbours are skipped.
fn exchange<N: Neighborhood + ?Sized, T: Datatype>(
    topo: &N,
    send: &[T],
    outs: &[Range<usize>],
    recv: &mut [T],
    ins: &[Range<usize>],
) -> Result<()> {
    let comm = topo.neighborhood_comm();
    let (out_tag, in_tag) = slot_tags(topo.topo_kind());
    // one collective call (traced, and counted so that the other collectives stay in step)
    comm.collective(Call::new("neighborhood exchange"), &"Direct", || {
        for (k, (dest, range)) in topo.out_neighbors().into_iter().zip(outs).enumerate() {
            if let Some(dest) = dest {
                Channel::send_owned(comm, send[range.clone()].to_vec(), dest, out_tag(k))?;
            }
        }
        for (j, (source, range)) in topo.in_neighbors().into_iter().zip(ins).enumerate() {
            if let Some(source) = source {
                Channel::recv_into(comm, &mut recv[range.clone()], source, in_tag(j))?;
            }
        }
        Ok(())
    })
}

impl<const N: usize> Neighborhood for CartComm<N> {
    fn neighborhood_comm(&self) -> &Comm {
        self.comm()
    }
    fn topo_kind(&self) -> TopoKind {
        self.topo_test()
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
        self.topo_test()
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
        self.topo_test()
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
