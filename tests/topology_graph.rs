//! Graph and distributed-graph communicators through the public API: creation from MPI's
//! arrays and from adjacency lists, every error, the queries, dup, `TopoKind::of`, and the
//! neighbourhood collectives on graphs.

#[path = "common/neighbor_w_checks.rs"]
mod neighbor_w_checks;

use rpar::{CartComm, DistGraphComm, Error, GraphComm, Neighborhood, TopoKind};

fn invalid(err: &Error, call: &str, words: &str) {
    match err {
        Error::InvalidArgument { call: c, message } => {
            assert_eq!(*c, call);
            assert!(message.contains(words), "{message}");
        }
        other => panic!("expected an invalid argument to {call}, got {other:?}"),
    }
}

#[test]
fn the_lectures_arrays_and_adjacency_lists_agree() {
    let got = rpar::run(5, |world| {
        let index = [2, 3, 4, 6];
        let edges = [1, 3, 0, 3, 0, 2];
        let a = GraphComm::create(&world, &index, &edges, false)?;
        let lists: [&[usize]; 4] = [&[1, 3], &[0], &[3], &[0, 2]];
        let b = GraphComm::from_adjacency(&world, &lists, true)?;
        match (a, b) {
            (Some(a), Some(b)) => {
                assert_eq!(a.graph_get(), (&index[..], &edges[..]));
                assert_eq!(a.graph_get(), b.graph_get());
                assert_eq!(a.graphdims_get(), (4, 6));
                assert_eq!(TopoKind::of(&a), TopoKind::Graph);
                Ok(Some((
                    a.neighbors_count(a.rank())?,
                    a.neighbors(3)?.to_vec(),
                )))
            }
            (None, None) => Ok(None),
            _ => Err(Error::user("the two forms disagree on membership")),
        }
    })
    .unwrap();
    assert_eq!(got[4], None);
    assert_eq!(got[0], Some((2, vec![0, 2])));
    assert_eq!(got[2], Some((1, vec![0, 2])));
}

#[test]
fn creation_errors() {
    rpar::run(3, |world| {
        let call = "GraphComm::create";
        invalid(
            &GraphComm::create(&world, &[], &[0], false).unwrap_err(),
            call,
            "the graph has no nodes, so edges must be empty, but holds 1 entries",
        );
        invalid(
            &GraphComm::create(&world, &[0; 4], &[], false).unwrap_err(),
            call,
            "4 nodes but the communicator only 3",
        );
        invalid(
            &GraphComm::create(&world, &[2, 1], &[1, 0], false).unwrap_err(),
            call,
            "index[1] = 1 < index[0] = 2",
        );
        invalid(
            &GraphComm::create(&world, &[1, 2], &[1], false).unwrap_err(),
            call,
            "edges must hold index[1] = 2 entries, but holds 1",
        );
        invalid(
            &GraphComm::create(&world, &[1, 2], &[1, 2], false).unwrap_err(),
            call,
            "edges[1] = 2 names no node",
        );
        let g = GraphComm::create(&world, &[1, 2, 2], &[1, 0], false)?.unwrap();
        assert!(matches!(
            g.neighbors(3),
            Err(Error::RankOutOfRange { rank: 3, size: 3 })
        ));
        assert_eq!(g.neighbors_count(2)?, 0);
        Ok(())
    })
    .unwrap();
}

#[test]
fn dup_keeps_the_graph() {
    rpar::run(2, |world| {
        let g = GraphComm::from_adjacency(&world, &[vec![1], vec![0]], false)?.unwrap();
        let d = g.dup()?;
        assert_eq!(d.graph_get(), g.graph_get());
        assert_eq!(TopoKind::of(&d), TopoKind::Graph);
        let dg = DistGraphComm::dist_graph_create_adjacent(
            &world,
            &[1 - world.rank()],
            &[1 - world.rank()],
            false,
        )?;
        let dd = dg.dup()?;
        assert_eq!(dd.dist_graph_neighbors(), dg.dist_graph_neighbors());
        assert_eq!(TopoKind::of(&dd), TopoKind::DistGraph);
        Ok(())
    })
    .unwrap();
}

#[test]
fn topo_test_names_every_kind() {
    rpar::run(2, |world| {
        assert_eq!(TopoKind::of(&world), TopoKind::None);
        let cart = CartComm::create(&world, [2], [true], false)?.unwrap();
        assert_eq!(TopoKind::of(&cart), TopoKind::Cart);
        // the topology belongs to the communicator, however it is reached (MPI_Topo_test)
        assert_eq!(TopoKind::of(cart.comm()), TopoKind::Cart);
        assert_eq!(TopoKind::of(&cart.comm().dup()?), TopoKind::Cart);
        let dg = DistGraphComm::dist_graph_create_adjacent(&world, &[], &[], false)?;
        assert_eq!(TopoKind::of(&dg), TopoKind::DistGraph);
        assert_eq!(dg.dist_graph_neighbors_count(), (0, 0, false));
        Ok(())
    })
    .unwrap();
}

#[test]
fn dist_graph_errors() {
    rpar::run(3, |world| {
        assert!(matches!(
            DistGraphComm::dist_graph_create_adjacent(&world, &[3], &[], false),
            Err(Error::RankOutOfRange { rank: 3, size: 3 })
        ));
        // rank 0 says it sends to 1, but 1 lists no source
        let dests: &[usize] = if world.rank() == 0 { &[1] } else { &[] };
        let err = DistGraphComm::dist_graph_create_adjacent(&world, &[], dests, false).unwrap_err();
        invalid(
            &err,
            "DistGraphComm::dist_graph_create_adjacent",
            "rank 0 lists rank 1 among its destinations 1 time(s) more",
        );
        Ok(())
    })
    .unwrap();
}

#[test]
fn graph_neighborhood_matches_repeated_edges_in_order() {
    // node 0 - node 1 twice, node 1 has a self-loop
    let got = rpar::run(2, |world| {
        let g = GraphComm::from_adjacency(&world, &[vec![1, 1], vec![0, 1, 0]], false)?.unwrap();
        let r = g.rank() as u32 * 10;
        let mut gathered = vec![0u32; g.neighbors_count(g.rank())?];
        g.neighbor_allgather(&[r], &mut gathered)?;
        let send: Vec<u32> = (0..gathered.len() as u32).map(|k| r + k).collect();
        let mut recv = vec![0u32; send.len()];
        g.neighbor_alltoall(&send, &mut recv, 1)?;
        Ok((gathered, recv))
    })
    .unwrap();
    assert_eq!(got[0].0, [10, 10]);
    assert_eq!(got[1].0, [0, 10, 0]);
    // the i-th block to a neighbour lands in the i-th slot naming the sender
    assert_eq!(got[0].1, [10, 12]);
    assert_eq!(got[1].1, [0, 11, 1]);
}

#[test]
fn dist_graph_alltoallv_uses_sources_and_destinations() {
    // a directed ring 0 -> 1 -> 2 -> 0, plus 0 -> 2
    let got = rpar::run(3, |world| {
        let r = world.rank();
        let (sources, dests): (Vec<usize>, Vec<usize>) = match r {
            0 => (vec![2], vec![1, 2]),
            1 => (vec![0], vec![2]),
            _ => (vec![1, 0], vec![0]),
        };
        let g = DistGraphComm::dist_graph_create_adjacent(&world, &sources, &dests, false)?;
        let send: Vec<i64> = (0..3).map(|k| (r * 10 + k) as i64).collect();
        let counts = vec![1; dests.len()];
        let displs: Vec<usize> = (0..dests.len()).collect();
        let mut recv = vec![-1i64; 2 * sources.len()];
        let rc = vec![1; sources.len()];
        let rd: Vec<usize> = (0..sources.len()).map(|j| 2 * j + 1).collect();
        g.neighbor_alltoallv(&send, &counts, &displs, &mut recv, &rc, &rd)?;
        Ok(recv)
    })
    .unwrap();
    assert_eq!(got[0], [-1, 20]);
    assert_eq!(got[1], [-1, 0]);
    assert_eq!(got[2], [-1, 10, -1, 1]);
}

/// A graph of no nodes is valid MPI since MPI-2.1: every rank gets MPI_COMM_NULL (as MPICH and
/// Open MPI do), from the arrays and from no adjacency lists alike.
#[test]
fn a_graph_of_no_nodes_gives_every_rank_none() {
    let got = rpar::run(3, |world| {
        let arrays = GraphComm::create(&world, &[], &[], false)?;
        let lists = GraphComm::from_adjacency::<Vec<usize>>(&world, &[], true)?;
        // collectives still line up afterwards
        let sum = world.allreduce(&1u32, rpar::Sum)?;
        Ok((arrays.is_none(), lists.is_none(), sum))
    })
    .unwrap();
    assert_eq!(got, vec![(true, true, 3); 3]);
}

/// MPI requires every rank to describe the same graph; rpar sees every rank, so different
/// graphs (or reorder flags) are a collective mismatch on every rank, naming each version.
#[test]
fn different_graphs_on_different_ranks_are_a_mismatch_on_every_rank() {
    let got = rpar::run(4, |world| {
        let r = world.rank();
        // a ring on ranks 0, 1 and 3; a path on rank 2
        let (index, edges): (&[usize], &[usize]) = if r == 2 {
            (&[1, 3, 4], &[1, 0, 2, 1])
        } else {
            (&[2, 4, 6], &[1, 2, 0, 2, 0, 1])
        };
        let arrays = GraphComm::create(&world, index, edges, false).map(|_| ());
        // the same graph, but reorder differs
        let reorder = GraphComm::from_adjacency(&world, &[[1], [0]], r == 0).map(|_| ());
        // a graph of no nodes on one rank only
        let empty: &[usize] = if r == 3 { &[] } else { &[1, 2] };
        let no_nodes = GraphComm::create(&world, empty, &empty[..empty.len().min(2)], false);
        Ok([arrays.err(), reorder.err(), no_nodes.err()])
    })
    .unwrap();
    for (r, errs) in got.iter().enumerate() {
        let [arrays, reorder, no_nodes] = errs.clone().map(|e| match e {
            Some(Error::CollectiveMismatch { calls, .. }) => calls,
            other => panic!("rank {r}: expected a collective mismatch, got {other:?}"),
        });
        assert_eq!(
            arrays,
            [
                (
                    0,
                    "GraphComm::create(index [2, 4, 6], edges [1, 2, 0, 2, 0, 1], reorder false) \
                     (so did ranks 1, 3)"
                        .to_string()
                ),
                (
                    2,
                    "GraphComm::create(index [1, 3, 4], edges [1, 0, 2, 1], reorder false)"
                        .to_string()
                ),
            ],
            "rank {r}"
        );
        assert_eq!(reorder.len(), 2, "rank {r}: {reorder:?}");
        assert!(reorder[0].1.ends_with("reorder true)"), "{reorder:?}");
        assert_eq!(reorder[1].0, 1, "{reorder:?}");
        assert_eq!(
            no_nodes[1].1,
            "GraphComm::create(index [], edges [], reorder false)"
        );
    }
}

#[test]
fn graph_map_places_the_first_ranks_and_checks_the_graph() {
    for p in 1..=6usize {
        for nnodes in 1..=p {
            let index: Vec<usize> = (1..=nnodes).collect();
            let edges: Vec<usize> = (0..nnodes).map(|i| (i + 1) % nnodes).collect();
            let got = rpar::run(p, |world| {
                rpar::GraphComm::graph_map(&world, &index, &edges)
            })
            .unwrap();
            let want: Vec<Option<usize>> = (0..p).map(|r| (r < nnodes).then_some(r)).collect();
            assert_eq!(got, want, "p {p}, {nnodes} nodes");
        }
    }
    let errors = rpar::run(2, |world| {
        Ok([
            rpar::GraphComm::graph_map(&world, &[1, 2, 3], &[1, 2, 0]).is_err(), // 3 nodes > 2
            rpar::GraphComm::graph_map(&world, &[1, 2], &[1, 5]).is_err(),       // no node 5
            rpar::GraphComm::graph_map(&world, &[2, 1], &[1, 0]).is_err(),       // decreasing
        ])
    })
    .unwrap();
    assert_eq!(errors, [[true; 3]; 2]);
}

/// MPI_Neighbor_alltoallw on distributed graphs of 1..=6 ranks: the shared check
/// (`common/neighbor_w_checks.rs`, also run on the MPI transport).
#[test]
fn dist_graph_alltoallw_moves_each_block_by_its_types() {
    for p in 1..=6 {
        rpar::run(p, |world| neighbor_w_checks::dist_graph(&world))
            .unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

/// A block whose signature differs from what its receiver gives for it is a type mismatch at
/// that receiver, which still takes its other blocks; sides of the wrong length are refused.
#[test]
fn neighbor_alltoallw_reports_mismatched_blocks_and_bad_sides() {
    use rpar::{Datatype, Typed};
    let got = rpar::run(3, |world| {
        let ring = CartComm::create(&world, [3], [true], false)?.unwrap();
        let r = ring.rank() as i32;
        let (int, real) = (i32::type_map().commit(), f32::type_map().commit());
        let send = [r, r];
        let mut recv = [-1i32; 2];
        // rank 1 receives its forward slot (from rank 2) as f32s: a mismatch there only
        let forward: &rpar::CommittedType = if r == 1 { &real } else { &int };
        let result = ring.neighbor_alltoallw(
            Typed::per_rank(&send[..], &[&int, &int], &[1, 1], &[0, 4]),
            Typed::per_rank(&mut recv[..], &[&int, forward], &[1, 1], &[0, 4]),
        );
        let short = ring
            .neighbor_alltoallw(
                Typed::per_rank(&send[..], &[&int], &[1], &[0]),
                Typed::per_rank(&mut recv[..], &[&int, &int], &[1, 1], &[0, 4]),
            )
            .unwrap_err();
        Ok((result.map_err(|e| e.to_string()), recv, short.to_string()))
    })
    .unwrap();
    assert_eq!(got[0].0, Ok(()));
    assert_eq!(got[0].1, [2, 1]);
    let err = got[1].0.clone().unwrap_err();
    assert!(
        err.contains("type mismatch: rank 2 sent") && err.contains("f32"),
        "{err}"
    );
    assert_eq!(got[1].1, [0, -1], "the slot from rank 0 is still received");
    let short = &got[2].2;
    assert!(
        short.contains("per neighbour (2), but gives 1, 1 and 1"),
        "{short}"
    );
}

/// Off the edge of a non-periodic grid (MPI_PROC_NULL) nothing is sent and the receive block
/// is left untouched.
#[test]
fn neighbor_alltoallw_skips_the_edge_of_a_grid() {
    use rpar::{Datatype, Typed};
    let got = rpar::run(3, |world| {
        let line = CartComm::create(&world, [3], [false], false)?.unwrap();
        let int = i32::type_map().commit();
        let r = line.rank() as i32;
        let send = [10 * r, 10 * r + 1]; // back, forward
        let mut recv = [-1i32; 2];
        let side = [&int, &int];
        line.neighbor_alltoallw(
            Typed::per_rank(&send[..], &side, &[1, 1], &[0, 4]),
            Typed::per_rank(&mut recv[..], &side, &[1, 1], &[0, 4]),
        )?;
        Ok(recv)
    })
    .unwrap();
    assert_eq!(got, [[-1, 10], [1, 20], [11, -1]]);
}
