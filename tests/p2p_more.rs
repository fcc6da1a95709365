//! Point-to-point beyond send and receive, in-process: the checks of `tests/common/p2p_more.rs`
//! (also run on MPI by `tests/mpi.rs`) for 1 to 6 ranks.

#[path = "common/p2p_more.rs"]
mod p2p_more;

fn on_every_size(check: fn(&rpar::Comm) -> rpar::Result<()>) {
    for p in 1..=6 {
        rpar::run(p, |world| check(&world)).unwrap_or_else(|e| panic!("p = {p}: {e}"));
    }
}

#[test]
fn proc_null_is_a_peer_that_completes_at_once() {
    on_every_size(p2p_more::proc_null);
}

#[test]
fn send_modes_deliver_and_keep_their_rules() {
    on_every_size(p2p_more::send_modes);
}

/// Two ranks that both send synchronously before receiving wait for each other (MPI hangs;
/// a standard send of the same size would be buffered).
#[test]
fn two_synchronous_sends_to_each_other_are_a_deadlock() {
    let err = rpar::run(2, |world| {
        world
            .using(rpar::SendMode::Synchronous)
            .send(&1u8, 1 - world.rank(), 0)?;
        world.recv::<u8>(1 - world.rank(), 0).map(drop)
    })
    .unwrap_err();
    assert!(err.to_string().contains("deadlock"), "{err}");
    rpar::run(2, |world| {
        world.send(&1u8, 1 - world.rank(), 0)?;
        world.recv::<u8>(1 - world.rank(), 0).map(drop)
    })
    .expect("standard sends of one byte are buffered");
}

/// A ready-mode send that arrives before its receive is posted is reported by that receive.
#[test]
fn a_ready_send_without_a_posted_receive_is_reported() {
    let err = rpar::run(2, |world| {
        if world.rank() == 0 {
            world.using(rpar::SendMode::Ready).send(&5u32, 1, 0)?; // rank 1 has posted nothing
            return world.send(&0u8, 1, 1);
        }
        world.recv_into(&mut 0u8, 0, 1)?; // the rsend arrives first and waits in the queue
        world.recv::<u32>(0, 0).map(drop)
    })
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("ready mode") && text.contains("rank 1"),
        "{text}"
    );
}

#[test]
fn persistent_requests_start_again_and_again() {
    on_every_size(p2p_more::persistent);
}

#[test]
fn cancel_withdraws_what_nothing_has_matched() {
    on_every_size(|world| p2p_more::cancel(world, true));
}

#[test]
fn a_matched_probe_takes_its_message_out_of_matching() {
    on_every_size(p2p_more::matched_probe);
}

#[test]
fn get_elements_counts_the_basic_elements_of_a_part() {
    on_every_size(p2p_more::get_elements);
}

#[test]
fn any_message_can_be_received_packed() {
    on_every_size(p2p_more::packed);
}

/// Empty synchronous sends matched by receives posted together and waited for last to first:
/// the first is matched while the rank waits for the second, and must release its sender
/// (an empty rendezvous used to be taken for a withdrawn one, and its sender waited until
/// the receiver finished: "a message it never received").
#[test]
fn empty_synchronous_sends_to_receives_posted_together_complete() {
    for posted in 2..=4 {
        rpar::run(2, |world| {
            let other = 1 - world.rank();
            let none: [u32; 0] = [];
            world.scope(|s| {
                let sent: Vec<_> = (0..posted)
                    .map(|_| s.issend(&none[..], other, 0))
                    .collect::<rpar::Result<_>>()?;
                let mut bufs = vec![[0u32; 0]; posted];
                let mut received = Vec::new();
                for b in bufs.iter_mut() {
                    received.push(world.irecv_into(&mut b[..], other, 0)?);
                }
                for r in received.into_iter().rev() {
                    assert_eq!(r.wait()?.count, 0);
                }
                rpar::wait_all(sent).map(drop)
            })
        })
        .unwrap_or_else(|e| panic!("{posted} posted: {e}"));
    }
}
