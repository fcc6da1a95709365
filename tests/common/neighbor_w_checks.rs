//! MPI_Neighbor_alltoallw checked on any world: shared by `tests/topology_graph.rs`
//! (in-process, p = 1..=6) and `tests/mpi.rs` (the MPI transport).

use rpar::{Comm, Datatype, DistGraphComm, Neighborhood, Result, TypeMap, Typed};

/// A distributed graph where rank r sends to r + 1 and r + 2 and receives from r - 1 and
/// r - 2 (multi-edges and self-edges at p = 1, 2): the block of sender s's out-slot k is
/// `k + 1 + s % 2` i32s strided by 2 from element 16 k; the receiver takes it as that many
/// contiguous i32s at element 10 j of its in-slot j (same signature, other layout). Blocking,
/// then started in a scope; the rest of the receive buffer stays untouched. Collective.
pub(crate) fn dist_graph(world: &Comm) -> Result<()> {
    let (r, p) = (world.rank(), world.size());
    let dests = [(r + 1) % p, (r + 2) % p];
    let sources = [(r + p - 1) % p, (r + 2 * p - 2) % p];
    let g = DistGraphComm::dist_graph_create_adjacent(world, &sources, &dests, false)?;
    let int = i32::type_map();
    let count = |s: usize, k: usize| k + 1 + s % 2;
    let strided: Vec<_> = (0..2)
        .map(|k| TypeMap::vector(count(r, k), 1, 2, &int).map(|t| t.commit()))
        .collect::<Result<_>>()?;
    let dense: Vec<_> = (0..2)
        .map(|j| TypeMap::contiguous(count(sources[j], j), &int).map(|t| t.commit()))
        .collect::<Result<_>>()?;
    let send: Vec<i32> = (0..64).map(|i| 1000 * r as i32 + i).collect();
    let (send_types, recv_types) = ([&strided[0], &strided[1]], [&dense[0], &dense[1]]);
    let mut blocking = vec![-1i32; 20];
    g.neighbor_alltoallw(
        Typed::per_rank(&send[..], &send_types, &[1, 1], &[0, 64]),
        Typed::per_rank(&mut blocking[..], &recv_types, &[1, 1], &[0, 40]),
    )?;
    let mut started = vec![-1i32; 20];
    g.comm().scope(|s| {
        g.ineighbor_alltoallw(
            s,
            Typed::per_rank(&send[..], &send_types, &[1, 1], &[0, 64]),
            Typed::per_rank(&mut started[..], &recv_types, &[1, 1], &[0, 40]),
        )?
        .wait()
        .map(drop)
    })?;
    let mut want = vec![-1i32; 20];
    for (j, &s) in sources.iter().enumerate() {
        for t in 0..count(s, j) {
            want[10 * j + t] = 1000 * s as i32 + 16 * j as i32 + 2 * t as i32;
        }
    }
    assert_eq!(blocking, want, "p = {p}, rank {r}, blocking");
    assert_eq!(started, want, "p = {p}, rank {r}, started in a scope");
    Ok(())
}
