//! Communicators: split and dup make isolated message spaces with MPI's rank ordering.

use rpar::{Result, ANY_SOURCE, ANY_TAG};

#[test]
fn split_orders_by_key_then_rank_and_undefined_gets_none() -> Result<()> {
    for p in [1usize, 2, 3, 8, 64] {
        let got = rpar::run(p, |w| {
            let r = w.rank();
            let color = if r % 5 == 4 {
                None
            } else {
                Some((r % 3) as u32)
            };
            // reverse order within each color
            let sub = w.split(color, -(r as i32))?;
            Ok(sub.map(|c| (c.rank(), c.size(), c.group().world_rank_of(0).unwrap())))
        })?;
        for (r, g) in got.iter().enumerate() {
            if r % 5 == 4 {
                assert!(g.is_none());
                continue;
            }
            let members: Vec<usize> = (0..p)
                .filter(|&q| q % 5 != 4 && q % 3 == r % 3)
                .rev()
                .collect();
            let (rank, size, first) = g.unwrap();
            assert_eq!(size, members.len(), "p {p} rank {r}");
            assert_eq!(members[rank], r);
            assert_eq!(first, members[0]);
        }
    }
    Ok(())
}

#[test]
fn messages_on_split_and_dup_never_mix_with_the_parent() -> Result<()> {
    rpar::run(4, |w| {
        let dup = w.dup()?;
        let half = w.split(Some((w.rank() / 2) as u32), 0)?.unwrap();
        // every rank sends on all three with the same tag; receives with wildcards must only
        // see their own communicator's message
        let peer_world = w.rank() ^ 1;
        w.send(&(100 + w.rank() as u32), peer_world, 0)?;
        dup.send(&(200 + w.rank() as u32), peer_world, 0)?;
        half.send(&(300 + w.rank() as u32), half.rank() ^ 1, 0)?;
        let (h, _) = half.recv::<u32>(ANY_SOURCE, ANY_TAG)?;
        let (d, _) = dup.recv::<u32>(ANY_SOURCE, ANY_TAG)?;
        let (x, _) = w.recv::<u32>(ANY_SOURCE, ANY_TAG)?;
        assert_eq!(
            (x[0], d[0], h[0]),
            (
                100 + peer_world as u32,
                200 + peer_world as u32,
                300 + peer_world as u32
            )
        );
        // collectives on the children work and are independent too
        half.barrier()?;
        dup.barrier()?;
        Ok(())
    })?;
    Ok(())
}

#[test]
fn nested_splits_reach_single_rank_communicators() -> Result<()> {
    let got = rpar::run(8, |w| {
        let mut c = w.dup()?;
        let mut depth = 0;
        while c.size() > 1 {
            c = c
                .split(Some((c.rank() % 2) as u32), c.rank() as i32)?
                .unwrap();
            depth += 1;
        }
        Ok(depth)
    })?;
    assert!(got.iter().all(|&d| d == 3));
    Ok(())
}
