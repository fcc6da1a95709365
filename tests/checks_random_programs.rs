//! Random programs, deadlock-free by construction, must complete with the right data: random
//! exchanges (shifts around a ring, with random sizes, tags, wildcards, blocking or not) on
//! random sub-communicators, interleaved with barriers and dups.

use proptest::prelude::*;
use rpar::{Comm, Result, ANY_SOURCE, ANY_TAG};

#[derive(Debug, Clone)]
enum Step {
    /// Every rank sends to rank + shift and receives from rank - shift.
    Shift {
        shift: usize,
        len: usize,
        tag: i32,
        wildcard: bool,
        nonblocking: bool,
    },
    /// Split the world into `colors` groups and shift inside each.
    SplitShift {
        colors: u32,
        shift: usize,
        len: usize,
    },
    Barrier,
    Dup,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (1usize..8, prop_oneof![Just(0usize), Just(1), Just(7), Just(100), Just(9000), Just(70_000)], 0i32..5, any::<bool>(), any::<bool>())
            .prop_map(|(shift, len, tag, wildcard, nonblocking)| Step::Shift { shift, len, tag, wildcard, nonblocking }),
        2 => (1u32..4, 1usize..5, 0usize..300).prop_map(|(colors, shift, len)| Step::SplitShift { colors, shift, len }),
        1 => Just(Step::Barrier),
        1 => Just(Step::Dup),
    ]
}

/// The value rank `from` sends rank `to` in step `k`, element `i`.
fn value(k: usize, from: usize, to: usize, i: usize) -> u64 {
    ((k as u64) << 48) ^ ((from as u64) << 32) ^ ((to as u64) << 16) ^ i as u64
}

fn shift_on(
    c: &Comm,
    k: usize,
    shift: usize,
    len: usize,
    tag: i32,
    wildcard: bool,
    nonblocking: bool,
) -> Result<()> {
    let (r, p) = (c.rank(), c.size());
    let to = (r + shift) % p;
    let from = (r + p - shift % p) % p;
    let out: Vec<u64> = (0..len).map(|i| value(k, r, to, i)).collect();
    let mut inc = vec![0u64; len];
    // each step has tags of its own, so a wildcard source matches only this step's message;
    // ANY_TAG is only safe when the sender is named
    let tag = tag + 8 * k as i32;
    let (src, t) = match (wildcard, k % 2) {
        (true, 0) => (ANY_SOURCE, tag),
        (true, _) => (from, ANY_TAG),
        (false, _) => (from, tag),
    };
    if nonblocking {
        let req = c.irecv_into(&mut inc[..], src, t)?;
        c.isend(&out[..], to, tag)?.wait()?;
        let st = req.wait()?;
        assert_eq!((st.source, st.count), (from, len));
    } else {
        let st = c.sendrecv(&out[..], to, tag, &mut inc[..], src, t)?;
        assert_eq!((st.source, st.tag, st.count), (from, tag, len));
    }
    for (i, &x) in inc.iter().enumerate() {
        assert_eq!(x, value(k, from, r, i), "step {k}: rank {r} element {i}");
    }
    Ok(())
}

fn run_program(p: usize, steps: &[Step]) -> Result<()> {
    rpar::run(p, |w| {
        let mut comm = w.dup()?;
        for (k, s) in steps.iter().enumerate() {
            match *s {
                Step::Shift {
                    shift,
                    len,
                    tag,
                    wildcard,
                    nonblocking,
                } => shift_on(&comm, k, shift, len, tag, wildcard, nonblocking)?,
                Step::SplitShift { colors, shift, len } => {
                    let sub = comm
                        .split(Some(comm.rank() as u32 % colors), -(comm.rank() as i32))?
                        .unwrap();
                    shift_on(&sub, k, shift, len, 1, false, false)?;
                }
                Step::Barrier => comm.barrier()?,
                Step::Dup => comm = comm.dup()?,
            }
        }
        Ok(())
    })?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn random_deadlock_free_programs_complete_with_the_right_data(
        p in 1usize..10,
        steps in proptest::collection::vec(step(), 1..12),
    ) {
        run_program(p, &steps).unwrap();
    }
}
