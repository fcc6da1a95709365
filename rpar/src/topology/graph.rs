//! [`GraphComm`] (MPI_Graph_create and the calls on it) and [`DistGraphComm`]
//! (MPI_Dist_graph_create_adjacent): communicators whose ranks are the nodes of a graph.

use super::agreement;
use super::neighbor::tags;
use super::TopoKind;
use crate::collective::Channel;
use crate::comm::Call;
use crate::{Comm, Error, Result};
use std::fmt;
use std::ops::Deref;
use std::rc::Rc;

/// A communicator whose ranks are the nodes of a graph (an MPI graph communicator).
///
/// The graph is given as MPI gives it: `index[i]` is the total degree of nodes `0..=i`
/// (cumulative degrees), and `edges[index[i-1]..index[i]]` are the neighbours of node `i`.
/// Self-loops and repeated edges are allowed, as in MPI. It dereferences to its [`Comm`].
///
/// ```
/// // The MPI standard's example: 0 - 1, 0 - 3, 2 - 3.
/// let nbrs = rpar::run(4, |world| {
///     let g = rpar::GraphComm::create(&world, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], false)?
///         .unwrap();
///     Ok(g.neighbors(g.rank())?.to_vec())
/// })?;
/// assert_eq!(nbrs, vec![vec![1, 3], vec![0], vec![3], vec![0, 2]]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub struct GraphComm {
    comm: Comm,
    index: Rc<[usize]>,
    edges: Rc<[usize]>,
}

impl fmt::Debug for GraphComm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphComm")
            .field("rank", &self.comm.rank())
            .field("index", &self.index)
            .field("edges", &self.edges)
            .finish()
    }
}

impl Deref for GraphComm {
    type Target = Comm;
    fn deref(&self) -> &Comm {
        &self.comm
    }
}

impl GraphComm {
    /// Makes a graph communicator of the first `index.len()` ranks of `comm` from MPI's
    /// (index, edges) arrays (MPI_Graph_create); ranks beyond the graph get `None`. Collective.
    /// Every rank describes the whole graph, the same one. A graph of no nodes (`index` and
    /// `edges` empty) gives every rank `None`, as MPI does since MPI-2.1.
    ///
    /// `reorder` is accepted and ignored: rpar knows no placement of general graphs better than
    /// the identity (MPI allows this; MPICH does the same).
    ///
    /// # Errors
    ///
    /// [`Error::CollectiveMismatch`], on every rank, if the ranks pass different `index`,
    /// `edges` or `reorder`, naming each version and its ranks (MPI makes this erroneous);
    /// [`Error::InvalidArgument`] for more nodes than ranks, `index` decreasing, `edges` not
    /// `index[n-1]` long (empty for no nodes), or an edge to a node that does not exist; and,
    /// as for every collective, [`Error::Aborted`] if another rank fails during the call and
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives.
    ///
    /// ```
    /// let got = rpar::run(5, |world| {
    ///     // a path 0 - 1 - 2 on the first three ranks
    ///     let path = rpar::GraphComm::create(&world, &[1, 3, 4], &[1, 0, 2, 1], false)?;
    ///     // index [1, 3] says 3 edge entries, edges holds 2: refused on every rank
    ///     let bad = rpar::GraphComm::create(&world, &[1, 3], &[1, 0], false);
    ///     assert!(matches!(bad, Err(rpar::Error::InvalidArgument { .. })));
    ///     Ok(path.map(|g| g.neighbors(g.rank()).map(<[usize]>::to_vec)).transpose()?)
    /// })?;
    /// assert_eq!(got, vec![Some(vec![1]), Some(vec![0, 2]), Some(vec![1]), None, None]);
    ///
    /// let empty = rpar::run(3, |world| Ok(rpar::GraphComm::create(&world, &[], &[], false)?.is_none()))?;
    /// assert_eq!(empty, [true; 3]); // no nodes: MPI_COMM_NULL everywhere
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn create(
        comm: &Comm,
        index: &[usize],
        edges: &[usize],
        reorder: bool,
    ) -> Result<Option<GraphComm>> {
        agreement::same_arguments(comm, index.len(), &(index, edges, reorder), || {
            format!(
                "GraphComm::create(index {}, edges {}, reorder {reorder})",
                agreement::list(index),
                agreement::list(edges)
            )
        })?;
        check_graph(index, edges, comm.size())?;
        if index.is_empty() {
            return Ok(None); // MPI_COMM_NULL on every rank, as in MPI since 2.1
        }
        let inside = comm.rank() < index.len();
        let key = comm.rank() as i32;
        let Some(comm) = comm.split(inside.then_some(0), key)? else {
            return Ok(None);
        };
        comm.set_topology(TopoKind::Graph);
        Ok(Some(GraphComm {
            comm,
            index: index.into(),
            edges: edges.into(),
        }))
    }

    /// The rank this process would have in the graph created with `reorder = true`, or `None`
    /// (MPI_UNDEFINED) if it would not be in the graph (MPI_Graph_map). Local. rpar places
    /// general graphs as [`GraphComm::create`] does, by the identity (as MPICH does): the first
    /// `index.len()` ranks, in order.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a graph that [`GraphComm::create`] refuses (more nodes
    /// than ranks, `index` decreasing, `edges` of the wrong length, an edge to no node).
    ///
    /// ```
    /// let placed = rpar::run(4, |world| {
    ///     rpar::GraphComm::graph_map(&world, &[1, 3, 4], &[1, 0, 2, 1]) // a path of 3 nodes
    /// })?;
    /// assert_eq!(placed, [Some(0), Some(1), Some(2), None]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn graph_map(comm: &Comm, index: &[usize], edges: &[usize]) -> Result<Option<usize>> {
        check_graph(index, edges, comm.size())?;
        Ok((comm.rank() < index.len()).then_some(comm.rank()))
    }

    /// Makes a graph communicator from adjacency lists: `adjacency[i]` lists node `i`'s neighbours.
    /// The same as [`GraphComm::create`] with the (index, edges) arrays they give
    /// (MPI_Graph_create). Collective. No lists is a graph of no nodes: `None` on every rank.
    ///
    /// # Errors
    ///
    /// Those of [`GraphComm::create`] (a mismatch is described by the arrays the lists give).
    ///
    /// ```
    /// let degrees = rpar::run(4, |world| {
    ///     let star = [vec![1, 2, 3], vec![0], vec![0], vec![0]];
    ///     let g = rpar::GraphComm::from_adjacency(&world, &star, false)?.unwrap();
    ///     assert_eq!(g.graph_get(), (&[3, 4, 5, 6][..], &[1, 2, 3, 0, 0, 0][..]));
    ///     g.neighbors_count(g.rank())
    /// })?;
    /// assert_eq!(degrees, vec![3, 1, 1, 1]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn from_adjacency<L: AsRef<[usize]>>(
        comm: &Comm,
        adjacency: &[L],
        reorder: bool,
    ) -> Result<Option<GraphComm>> {
        let mut index = Vec::with_capacity(adjacency.len());
        let mut edges = Vec::new();
        for list in adjacency {
            edges.extend_from_slice(list.as_ref());
            index.push(edges.len());
        }
        Self::create(comm, &index, &edges, reorder)
    }

    /// The (index, edges) arrays (MPI_Graph_get).
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     let g = rpar::GraphComm::create(&world, &[2, 3, 4], &[1, 2, 0, 0], false)?.unwrap();
    ///     let (index, edges) = g.graph_get();
    ///     assert_eq!((index, edges), (&[2, 3, 4][..], &[1, 2, 0, 0][..]));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn graph_get(&self) -> (&[usize], &[usize]) {
        (&self.index, &self.edges)
    }

    /// The number of nodes and of edges (MPI_Graphdims_get); each undirected edge that appears
    /// in both nodes' lists counts twice, as in MPI.
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     // the MPI standard's example: 0 - 1, 0 - 3, 2 - 3, each edge listed by both ends
    ///     let g = rpar::GraphComm::create(&world, &[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2], false)?
    ///         .unwrap();
    ///     assert_eq!(g.graphdims_get(), (4, 6));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn graphdims_get(&self) -> (usize, usize) {
        (self.index.len(), self.edges.len())
    }

    /// The degree of node `rank` (MPI_Graph_neighbors_count).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] if there is no such node.
    ///
    /// ```
    /// rpar::run(4, |world| {
    ///     let star = [vec![1, 2, 3], vec![0], vec![0], vec![0]];
    ///     let g = rpar::GraphComm::from_adjacency(&world, &star, false)?.unwrap();
    ///     assert_eq!(g.neighbors_count(0)?, 3);
    ///     assert_eq!(g.neighbors_count(2)?, 1);
    ///     assert!(g.neighbors_count(4).is_err());
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn neighbors_count(&self, rank: usize) -> Result<usize> {
        Ok(self.neighbors(rank)?.len())
    }

    /// The neighbours of node `rank`, in the order given at creation (MPI_Graph_neighbors).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] if there is no such node.
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     // node 0 lists 2 before 1, and a self-loop
    ///     let g = rpar::GraphComm::from_adjacency(&world, &[vec![2, 1, 0], vec![0], vec![0]], false)?
    ///         .unwrap();
    ///     assert_eq!(g.neighbors(0)?, [2, 1, 0]);
    ///     assert_eq!(g.neighbors(1)?, [0]);
    ///     assert!(matches!(g.neighbors(3), Err(rpar::Error::RankOutOfRange { rank: 3, size: 3 })));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn neighbors(&self, rank: usize) -> Result<&[usize]> {
        self.comm.check_rank(rank)?;
        let start = if rank == 0 { 0 } else { self.index[rank - 1] };
        Ok(&self.edges[start..self.index[rank]])
    }

    /// A copy with a message space of its own and the same graph (MPI_Comm_dup). Collective.
    ///
    /// # Errors
    ///
    /// As for every collective, [`Error::Aborted`] if another rank fails during the call and
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let g = rpar::GraphComm::from_adjacency(&world, &[[1], [0]], false)?.unwrap();
    ///     let copy = g.dup()?;
    ///     assert_eq!(copy.graph_get(), g.graph_get());
    ///     let other = 1 - g.rank();
    ///     copy.send(&1u8, other, 0)?;
    ///     g.send(&2u8, other, 0)?;
    ///     assert_eq!(g.recv::<u8>(other, 0)?.0, [2]); // not the message sent on `copy`
    ///     assert_eq!(copy.recv::<u8>(other, 0)?.0, [1]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn dup(&self) -> Result<GraphComm> {
        Ok(GraphComm {
            comm: self.comm.dup()?,
            index: self.index.clone(),
            edges: self.edges.clone(),
        })
    }

    /// The plain communicator underneath: the graph's ranks; [`TopoKind::of`] still answers
    /// `Graph`. (A `GraphComm`
    /// also dereferences to it.)
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     let g = rpar::GraphComm::from_adjacency(&world, &[vec![1], vec![0]], false)?;
    ///     if let Some(g) = g {
    ///         assert_eq!(g.comm().size(), 2); // the graph's two nodes, not the world's 3 ranks
    ///         assert_eq!(rpar::TopoKind::of(g.comm()), rpar::TopoKind::Graph);
    ///     }
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn comm(&self) -> &Comm {
        &self.comm
    }
}

/// The checks of MPI_Graph_create's arguments.
fn check_graph(index: &[usize], edges: &[usize], size: usize) -> Result<()> {
    let call = "GraphComm::create";
    let n = index.len();
    if n == 0 {
        return match edges.len() {
            0 => Ok(()),
            e => Err(Error::invalid(
                call,
                format!("the graph has no nodes, so edges must be empty, but holds {e} entries"),
            )),
        };
    }
    if n > size {
        return Err(Error::invalid(
            call,
            format!("the graph has {n} nodes but the communicator only {size} ranks"),
        ));
    }
    if let Some(i) = (1..n).find(|&i| index[i] < index[i - 1]) {
        return Err(Error::invalid(
            call,
            format!(
                "index holds cumulative degrees and cannot decrease, but index[{i}] = {} < index[{}] = {}",
                index[i],
                i - 1,
                index[i - 1]
            ),
        ));
    }
    if edges.len() != index[n - 1] {
        return Err(Error::invalid(
            call,
            format!(
                "edges must hold index[{}] = {} entries, but holds {}",
                n - 1,
                index[n - 1],
                edges.len()
            ),
        ));
    }
    if let Some(e) = edges.iter().position(|&e| e >= n) {
        return Err(Error::invalid(
            call,
            format!(
                "edges[{e}] = {} names no node: the graph has nodes 0..{n}",
                edges[e]
            ),
        ));
    }
    Ok(())
}

/// A communicator where each rank knows only its own in- and out-neighbours (an MPI
/// distributed graph communicator, from MPI_Dist_graph_create_adjacent). Unweighted.
///
/// ```
/// // A directed ring: each rank receives from its left and sends to its right.
/// let got = rpar::run(3, |world| {
///     use rpar::Neighborhood;
///     let (r, p) = (world.rank(), world.size());
///     let (left, right) = ((r + p - 1) % p, (r + 1) % p);
///     let ring =
///         rpar::DistGraphComm::dist_graph_create_adjacent(&world, &[left], &[right], false)?;
///     let mut from_left = [usize::MAX];
///     ring.neighbor_allgather(&[r], &mut from_left)?;
///     Ok(from_left[0])
/// })?;
/// assert_eq!(got, vec![2, 0, 1]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub struct DistGraphComm {
    comm: Comm,
    sources: Rc<[usize]>,
    destinations: Rc<[usize]>,
}

impl fmt::Debug for DistGraphComm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistGraphComm")
            .field("rank", &self.comm.rank())
            .field("sources", &self.sources)
            .field("destinations", &self.destinations)
            .finish()
    }
}

impl Deref for DistGraphComm {
    type Target = Comm;
    fn deref(&self) -> &Comm {
        &self.comm
    }
}

impl DistGraphComm {
    /// Makes a distributed graph communicator on all ranks of `comm`: this rank receives from
    /// `sources` and sends to `destinations` (MPI_Dist_graph_create_adjacent, unweighted).
    /// Collective. `reorder` is accepted and ignored (the identity placement).
    ///
    /// Every edge must be listed by both ends: `a` lists `b` among its destinations exactly as
    /// often as `b` lists `a` among its sources. rpar checks this (MPI leaves it erroneous).
    ///
    /// # Errors
    ///
    /// [`Error::RankOutOfRange`] for a rank of `sources` or `destinations` that is not in `comm`;
    /// [`Error::InvalidArgument`], on every rank, for edges that the two ends do not agree on; and,
    /// as for every collective, [`Error::Aborted`] if another rank fails during the call.
    ///
    /// ```
    /// let err = rpar::run(2, |world| {
    ///     // rank 0 sends to rank 1, but rank 1 does not list rank 0 among its sources
    ///     let destinations: &[usize] = if world.rank() == 0 { &[1] } else { &[] };
    ///     rpar::DistGraphComm::dist_graph_create_adjacent(&world, &[], destinations, false)?;
    ///     Ok(())
    /// })
    /// .unwrap_err();
    /// assert!(err.to_string().contains("rank 0 lists rank 1 among its destinations"), "{err}");
    /// ```
    pub fn dist_graph_create_adjacent(
        comm: &Comm,
        sources: &[usize],
        destinations: &[usize],
        reorder: bool,
    ) -> Result<DistGraphComm> {
        let _ = reorder;
        for &r in sources.iter().chain(destinations) {
            comm.check_rank(r)?;
        }
        let comm = comm.dup()?;
        // one collective call: a trace shows it as a span holding its messages
        comm.collective(
            Call::new("dist_graph_create_adjacent"),
            &"GatherAtRank0",
            || check_agreement(&comm, sources, destinations),
        )?;
        comm.set_topology(TopoKind::DistGraph);
        Ok(DistGraphComm {
            comm,
            sources: sources.into(),
            destinations: destinations.into(),
        })
    }

    /// (indegree, outdegree, weighted) (MPI_Dist_graph_neighbors_count); never weighted.
    ///
    /// ```
    /// let counts = rpar::run(3, |world| {
    ///     // a star: rank 0 sends to every other rank, which sends nothing
    ///     let (sources, destinations) = if world.rank() == 0 { (vec![], vec![1, 2]) } else { (vec![0], vec![]) };
    ///     let g = rpar::DistGraphComm::dist_graph_create_adjacent(&world, &sources, &destinations, false)?;
    ///     Ok(g.dist_graph_neighbors_count())
    /// })?;
    /// assert_eq!(counts, vec![(0, 2, false), (1, 0, false), (1, 0, false)]);
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn dist_graph_neighbors_count(&self) -> (usize, usize, bool) {
        (self.sources.len(), self.destinations.len(), false)
    }

    /// (sources, destinations) (MPI_Dist_graph_neighbors), in the order given at creation.
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     let (r, p) = (world.rank(), world.size());
    ///     let (left, right) = ((r + p - 1) % p, (r + 1) % p);
    ///     let ring = rpar::DistGraphComm::dist_graph_create_adjacent(&world, &[left], &[right], false)?;
    ///     assert_eq!(ring.dist_graph_neighbors(), (&[left][..], &[right][..]));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn dist_graph_neighbors(&self) -> (&[usize], &[usize]) {
        (&self.sources, &self.destinations)
    }

    /// A copy with a message space of its own and the same graph (MPI_Comm_dup). Collective.
    ///
    /// # Errors
    ///
    /// As for every collective, [`Error::Aborted`] if another rank fails during the call and
    /// [`Error::CollectiveMismatch`] if the ranks call different collectives.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let other = 1 - world.rank();
    ///     let g = rpar::DistGraphComm::dist_graph_create_adjacent(&world, &[other], &[other], false)?;
    ///     let copy = g.dup()?;
    ///     assert_eq!(copy.dist_graph_neighbors(), g.dist_graph_neighbors());
    ///     copy.send(&1u8, other, 0)?;
    ///     g.send(&2u8, other, 0)?;
    ///     assert_eq!(g.recv::<u8>(other, 0)?.0, [2]); // not the message sent on `copy`
    ///     assert_eq!(copy.recv::<u8>(other, 0)?.0, [1]);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn dup(&self) -> Result<DistGraphComm> {
        Ok(DistGraphComm {
            comm: self.comm.dup()?,
            sources: self.sources.clone(),
            destinations: self.destinations.clone(),
        })
    }

    /// The plain communicator underneath: a duplicate of the `comm` it was created on (all of
    /// its ranks); [`TopoKind::of`] still answers `DistGraph` for it. (A `DistGraphComm` also
    /// dereferences to it.)
    ///
    /// ```
    /// rpar::run(3, |world| {
    ///     let g = rpar::DistGraphComm::dist_graph_create_adjacent(&world, &[], &[], false)?;
    ///     assert_eq!((g.comm().rank(), g.comm().size()), (world.rank(), 3));
    ///     assert_eq!(rpar::TopoKind::of(g.comm()), rpar::TopoKind::DistGraph);
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn comm(&self) -> &Comm {
        &self.comm
    }
}

/// Rank 0 collects every rank's lists and checks that both ends of each edge agree; all ranks
/// get the verdict. Runs on the new communicator's collective context.
fn check_agreement(comm: &Comm, sources: &[usize], destinations: &[usize]) -> Result<()> {
    let p = Channel::size(comm);
    let encode = |s: &[usize], d: &[usize]| {
        let mut v = vec![s.len() as u64];
        v.extend(s.iter().chain(d).map(|&x| x as u64));
        v
    };
    if Channel::rank(comm) != 0 {
        Channel::send_owned(comm, encode(sources, destinations), 0, tags::DIST_GRAPH)?;
        let verdict: Vec<u8> = Channel::recv_vec(comm, 0, tags::DIST_GRAPH)?;
        return if verdict.is_empty() {
            Ok(())
        } else {
            Err(Error::invalid(
                "DistGraphComm::dist_graph_create_adjacent",
                String::from_utf8_lossy(&verdict),
            ))
        };
    }
    // count[(a, b)]: edges a -> b as a lists them, minus as b lists them.
    let mut count = std::collections::BTreeMap::<(usize, usize), i64>::new();
    for r in 0..p {
        let lists = if r == 0 {
            encode(sources, destinations)
        } else {
            Channel::recv_vec::<u64>(comm, r, tags::DIST_GRAPH)?
        };
        let (s, d) = lists[1..].split_at(lists[0] as usize);
        for &src in s {
            *count.entry((src as usize, r)).or_default() -= 1;
        }
        for &dst in d {
            *count.entry((r, dst as usize)).or_default() += 1;
        }
    }
    let verdict = count.iter().find(|(_, &c)| c != 0).map(|(&(a, b), &c)| {
        let (n, how) = if c > 0 { (c, "more") } else { (-c, "fewer") };
        format!(
            "rank {a} lists rank {b} among its destinations {n} time(s) {how} than rank {b} \
             lists rank {a} among its sources"
        )
    });
    let bytes = verdict.clone().unwrap_or_default().into_bytes();
    for r in 1..p {
        Channel::send(comm, &bytes, r, tags::DIST_GRAPH)?;
    }
    match verdict {
        None => Ok(()),
        Some(v) => Err(Error::invalid(
            "DistGraphComm::dist_graph_create_adjacent",
            v,
        )),
    }
}
