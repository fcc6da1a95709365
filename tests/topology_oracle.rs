//! Acceptance suite drawn from MPICH 4.0.2: `tests/oracle/topology_oracle.c` ran against it and
//! its output is committed beside it (see the program's header to regenerate). Checks
//! dims_create for every nnodes in 1..=4096 and 1..=5 dims plus fixed entries; coords, shifts of
//! ±1..3, wrapped coordinates and every sub-grid keep mask on 1-, 2- and 3-D grids with every
//! periods combination; cart_map; graph neighbours.
//!
//! One documented difference: keeping no dim in `sub` gives every rank a 0-dim grid of its own
//! (the MPI standard's partition); MPICH gives it to rank 0 only and MPI_COMM_NULL to the rest.

use rpar::{dims_create, CartComm, GraphComm};

const DIMS: &str = include_str!("oracle/dims_create.txt");
const TOPO: &str = include_str!("oracle/topology.txt");

fn list(v: impl IntoIterator<Item = impl ToString>) -> String {
    let s: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
    if s.is_empty() {
        "-".into()
    } else {
        s.join(",")
    }
}

fn parse_list(s: &str) -> Vec<usize> {
    s.split(',').map(|x| x.parse().unwrap()).collect()
}

fn proc_null(r: usize) -> String {
    if r == rpar::PROC_NULL {
        "-1".into()
    } else {
        r.to_string()
    }
}

#[test]
fn dims_create_matches_mpich_for_every_nnodes_up_to_4096() {
    let mut checked = 0;
    for line in DIMS.lines().filter(|l| l.starts_with("D ")) {
        let mut parts = line[2..].split(" | ");
        let n: usize = parts.next().unwrap().parse().unwrap();
        for (k, want) in parts.enumerate() {
            let mut dims = vec![0; k + 1];
            dims_create(n, &mut dims).unwrap();
            assert_eq!(
                list(&dims).replace(',', " "),
                want,
                "nnodes {n}, {} dims",
                k + 1
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 4096 * 5);
}

#[test]
fn dims_create_with_fixed_entries_matches_mpich() {
    let mut checked = 0;
    for line in DIMS.lines().filter(|l| l.starts_with("F ")) {
        let f: Vec<&str> = line.split(' ').collect();
        let (n, input, want) = (f[1].parse().unwrap(), parse_list(f[2]), f[4]);
        let mut dims = input.clone();
        let got = match dims_create(n, &mut dims) {
            Ok(()) => list(&dims),
            Err(_) => "ERR".into(),
        };
        assert_eq!(got, want, "nnodes {n}, dims {input:?}");
        checked += 1;
    }
    assert!(checked > 8000);
}

/// The oracle's output split into blocks, each starting with a `G`, `H` or `M` line.
fn blocks(kind: char) -> Vec<Vec<&'static str>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    for line in TOPO.lines() {
        if line.starts_with(['G', 'H'])
            || (line.starts_with('M') && !out.last().is_some_and(|b| b[0].starts_with('M')))
        {
            out.push(Vec::new());
        }
        out.last_mut().unwrap().push(line);
    }
    out.retain(|b| b[0].starts_with(kind));
    out
}

/// Every line the oracle prints for one rank of a grid, computed with rpar.
fn grid_lines<const N: usize>(grid: &CartComm<N>) -> rpar::Result<Vec<String>> {
    let me = grid.rank();
    let mut out = vec![format!("C {me} {}", list(grid.coords()))];
    for dim in 0..N {
        for disp in [-3isize, -2, -1, 1, 2, 3] {
            let (src, dst) = grid.shift(dim, disp)?;
            out.push(format!(
                "S {me} {dim} {disp} {} {}",
                proc_null(src),
                proc_null(dst)
            ));
        }
    }
    for mask in 0..1usize << N {
        let remain: [bool; N] = std::array::from_fn(|i| mask >> i & 1 == 1);
        let m: String = remain.iter().map(|&r| if r { 'T' } else { 'F' }).collect();
        let line = match remain.iter().filter(|&&r| r).count() {
            0 => sub_line(&grid.sub::<0>(remain)?, grid)?,
            1 => sub_line(&grid.sub::<1>(remain)?, grid)?,
            2 => sub_line(&grid.sub::<2>(remain)?, grid)?,
            _ => sub_line(&grid.sub::<3>(remain)?, grid)?,
        };
        out.push(format!("B {me} {m} {line}"));
    }
    if me == 0 {
        let (dims, periods) = (grid.dims(), grid.periods());
        let lo: Vec<isize> = (0..N)
            .map(|i| {
                if periods[i] {
                    -2 * dims[i] as isize - 1
                } else {
                    0
                }
            })
            .collect();
        let hi: Vec<isize> = (0..N)
            .map(|i| {
                if periods[i] {
                    2 * dims[i] as isize + 1
                } else {
                    dims[i] as isize - 1
                }
            })
            .collect();
        let total: usize = (0..N).map(|i| (hi[i] - lo[i] + 1) as usize).product();
        for k in 0..total {
            let mut t = k;
            let mut c = [0isize; N];
            for i in (0..N).rev() {
                let w = (hi[i] - lo[i] + 1) as usize;
                c[i] = lo[i] + (t % w) as isize;
                t /= w;
            }
            out.push(format!("W {} {}", list(c), grid.rank_of(c)?));
        }
    }
    Ok(out)
}

/// "subrank subsize dims periods coords members" of a sub-grid.
fn sub_line<const M: usize, const N: usize>(
    sub: &CartComm<M>,
    parent: &CartComm<N>,
) -> rpar::Result<String> {
    let (dims, periods, coords) = sub.cart_get();
    let me = parent.rank();
    // The members' parent ranks: gathered over the sub-grid with a ring of sendrecvs.
    let mut members = vec![0usize; sub.size()];
    members[sub.rank()] = me;
    let (p, r) = (sub.size(), sub.rank());
    let mut carry = me;
    for step in 1..p {
        let mut got = 0usize;
        sub.sendrecv(&carry, (r + 1) % p, 0, &mut got, (r + p - 1) % p, 0)?;
        members[(r + p - step) % p] = got;
        carry = got;
    }
    Ok(format!(
        "{} {} {} {} {} {}",
        sub.rank(),
        sub.size(),
        list(dims),
        list(periods.iter().map(|&p| p as u8)),
        list(coords),
        list(members)
    ))
}

fn check_grid<const N: usize>(block: &[&str], dims: [usize; N], periods: [bool; N]) {
    let nnodes = dims.iter().product();
    let per_rank = rpar::run(nnodes, |world| {
        let grid = CartComm::create(&world, dims, periods, false)?.expect("in the grid");
        grid_lines(&grid)
    })
    .unwrap();
    let got: Vec<String> = per_rank.into_iter().flatten().collect();
    let want: Vec<String> = block[1..].iter().map(|l| l.to_string()).collect();
    assert_eq!(got.len(), want.len(), "{}", block[0]);
    for (g, w) in got.iter().zip(&want) {
        if w.ends_with(" NULL") {
            // MPICH: no dim kept gives MPI_COMM_NULL off rank 0; rpar gives a grid of its own.
            let me = w.split(' ').nth(1).unwrap();
            assert_eq!(
                *g,
                format!("{} 0 1 - - - {me}", &w[..w.len() - 5]),
                "{}",
                block[0]
            );
        } else {
            assert_eq!(g, w, "{}", block[0]);
        }
    }
}

#[test]
fn cartesian_grids_match_mpich() {
    let grids = blocks('G');
    assert_eq!(grids.len(), 36);
    for block in &grids {
        let g: Vec<&str> = block[0].split(' ').collect();
        let dims: Vec<usize> = g[2].split('x').map(|d| d.parse().unwrap()).collect();
        let periods: Vec<bool> = g[3].chars().map(|c| c == 'T').collect();
        match dims.len() {
            1 => check_grid(block, [dims[0]], [periods[0]]),
            2 => check_grid(block, [dims[0], dims[1]], [periods[0], periods[1]]),
            _ => check_grid(
                block,
                [dims[0], dims[1], dims[2]],
                [periods[0], periods[1], periods[2]],
            ),
        }
    }
}

#[test]
fn cart_map_matches_mpich() {
    // The oracle's calls: MPI_Cart_map on a world of 24 with these dims, periods [false, true].
    let shapes = [[4, 5], [6, 4], [1, 1], [3, 3]];
    let got = rpar::run(24, |world| {
        shapes
            .iter()
            .map(|&d| {
                Ok(format!(
                    "M {} {} {}",
                    d[0] * d[1],
                    world.rank(),
                    // MPI_UNDEFINED is -1 too
                    CartComm::cart_map(&world, d, [false, true])?
                        .map_or("-1".into(), |r| r.to_string())
                ))
            })
            .collect::<rpar::Result<Vec<String>>>()
    })
    .unwrap();
    let want: Vec<&str> = blocks('M').concat();
    assert_eq!(got.concat(), want);
}

#[test]
fn graph_neighbors_match_mpich() {
    let graphs = blocks('H');
    assert_eq!(graphs.len(), 4);
    for block in &graphs {
        let h: Vec<&str> = block[0].split(' ').collect();
        let (n, index, edges) = (h[2].parse().unwrap(), parse_list(h[3]), parse_list(h[4]));
        let got = rpar::run(n, |world| {
            let g = GraphComm::create(&world, &index, &edges, false)?.expect("a node");
            let me = g.rank();
            Ok(format!(
                "N {me} {} {}",
                g.neighbors_count(me)?,
                list(g.neighbors(me)?)
            ))
        })
        .unwrap();
        assert_eq!(got, block[1..], "{}", block[0]);
    }
}
