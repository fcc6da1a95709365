//! Attributes cached on communicators (MPI_Comm_create_keyval, _set_attr, _get_attr,
//! _delete_attr, _free_keyval and the attribute part of MPI_Comm_dup, _idup and _free), with
//! the checks of MPICH's attr tests: what dup copies per key, what deleting runs and when,
//! errors from the actions, and attributes that outlive their key.

use rpar::{Comm, Error, InterComm, Keyval};
use std::cell::RefCell;
use std::rc::Rc;

/// The actions that ran, in order, as text.
type Log = Rc<RefCell<Vec<String>>>;

fn log_of(log: &Log) -> Vec<String> {
    log.borrow().clone()
}

/// A key of `u32`s whose actions write to `log`, named `name`; copies add 100, and a value of
/// 13 refuses to be copied or deleted.
fn logged_key(name: &'static str, log: &Log) -> Keyval<u32> {
    let (copies, deletes) = (log.clone(), log.clone());
    Keyval::with_actions(
        move |v: &u32| {
            copies.borrow_mut().push(format!("copy {name} {v}"));
            if *v == 13 {
                return Err(Error::user(format!("{name} refuses to copy 13")));
            }
            Ok(Some(v + 100))
        },
        move |v: &u32| {
            deletes.borrow_mut().push(format!("delete {name} {v}"));
            if *v == 13 {
                return Err(Error::user(format!("{name} refuses to delete 13")));
            }
            Ok(())
        },
    )
}

#[test]
fn set_get_replace_and_delete_on_each_rank_alone() {
    rpar::run(3, |world| {
        let log = Log::default();
        let key = logged_key("a", &log);
        assert_eq!(world.attr(&key), None, "flag false before any set");
        world.delete_attr(&key)?; // not set: nothing to do
        if world.rank() == 1 {
            world.set_attr(&key, 5)?;
        }
        world.barrier()?;
        // attributes are local: only rank 1 has one
        let want = (world.rank() == 1).then_some(5);
        assert_eq!(world.attr(&key), want);
        world.set_attr(&key, 6)?; // replaces rank 1's 5: its delete runs
        assert_eq!(world.attr(&key), Some(6));
        world.delete_attr(&key)?;
        assert_eq!(world.attr(&key), None);
        let mut want = vec!["delete a 6".to_string()];
        if world.rank() == 1 {
            want.insert(0, "delete a 5".into());
        }
        assert_eq!(log_of(&log), want);
        Ok(())
    })
    .unwrap();
}

#[test]
fn dup_copies_as_each_key_says() {
    rpar::run(2, |world| {
        let log = Log::default();
        let plain = Keyval::<u64>::new();
        let cloned = Keyval::<Vec<u8>>::copied();
        let logged = logged_key("l", &log);
        let refused = Keyval::<u8>::with_actions(|_| Ok(None), |_| Ok(()));
        world.set_attr(&plain, 1)?;
        world.set_attr(&cloned, vec![1, 2, 3])?;
        world.set_attr(&logged, 7)?;
        world.set_attr(&refused, 9)?;
        let copy = world.dup()?;
        assert_eq!(copy.attr(&plain), None, "MPI_COMM_NULL_COPY_FN");
        assert_eq!(copy.attr(&cloned), Some(vec![1, 2, 3]), "MPI_COMM_DUP_FN");
        assert_eq!(copy.attr(&logged), Some(107), "the copy action's value");
        assert_eq!(copy.attr(&refused), None, "the copy action's flag false");
        // the copy's attributes are its own
        copy.set_attr(&cloned, vec![9])?;
        assert_eq!(world.attr(&cloned), Some(vec![1, 2, 3]));
        // a copy of a copy copies again
        let second = copy.dup()?;
        assert_eq!(second.attr(&logged), Some(207));
        drop(second);
        drop(copy);
        assert_eq!(
            log_of(&log),
            ["copy l 7", "copy l 107", "delete l 207", "delete l 107"]
        );
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_failing_copy_fails_dup_and_deletes_what_it_copied() {
    rpar::run(2, |world| {
        let log = Log::default();
        let (first, failing) = (logged_key("first", &log), logged_key("failing", &log));
        world.set_attr(&first, 1)?;
        world.set_attr(&failing, 13)?;
        let err = world.dup().unwrap_err();
        assert!(
            err.to_string().contains("failing refuses to copy 13"),
            "{err}"
        );
        assert_eq!(
            log_of(&log),
            ["copy first 1", "copy failing 13", "delete first 101"]
        );
        // the communicator is as it was, and usable
        assert_eq!(world.attr(&first), Some(1));
        world.barrier()?;
        assert!(world.set_attr(&failing, 14).is_err(), "deleting 13 fails");
        assert_eq!(world.attr(&failing), Some(13));
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_failing_delete_keeps_the_attribute() {
    rpar::run(1, |world| {
        let log = Log::default();
        let key = logged_key("k", &log);
        world.set_attr(&key, 13)?;
        let err = world.delete_attr(&key).unwrap_err();
        assert!(err.to_string().contains("refuses to delete 13"), "{err}");
        assert_eq!(world.attr(&key), Some(13));
        assert!(world.set_attr(&key, 1).is_err(), "replacing deletes too");
        assert_eq!(world.attr(&key), Some(13));
        Ok(())
    })
    .unwrap();
}

#[test]
fn free_deletes_the_last_set_first_and_reports_the_first_error() {
    rpar::run(2, |world| {
        let log = Log::default();
        let keys: Vec<Keyval<u32>> = ["x", "y", "z"]
            .into_iter()
            .map(|n| logged_key(n, &log))
            .collect();
        let copy = world.dup()?;
        copy.set_attr(&keys[1], 1)?;
        copy.set_attr(&keys[0], 13)?;
        copy.set_attr(&keys[2], 2)?;
        // keys freed (MPI_Comm_free_keyval) while attributes use them: they stay, with their
        // actions, until deleted
        drop(keys);
        let err = copy.free().unwrap_err();
        assert!(err.to_string().contains("x refuses to delete 13"), "{err}");
        assert_eq!(log_of(&log), ["delete z 2", "delete x 13", "delete y 1"]);
        // dropping a communicator deletes too
        let key = logged_key("w", &log);
        let other: Comm = world.dup()?;
        other.set_attr(&key, 3)?;
        drop(other);
        assert_eq!(log_of(&log).last().map(String::as_str), Some("delete w 3"));
        Ok(())
    })
    .unwrap();
}

#[test]
fn idup_copies_the_attributes_set_at_the_call() {
    rpar::run(3, |world| {
        let log = Log::default();
        let key = logged_key("i", &log);
        world.set_attr(&key, 4)?;
        let mut made = None;
        world.scope(|s| {
            let request = s.idup(&mut made)?;
            world.set_attr(&key, 5)?; // after the call: not what the copy gets
            request.wait().map(drop)
        })?;
        let copy = made.expect("complete");
        assert_eq!(copy.attr(&key), Some(104));
        assert_eq!(copy.allreduce(&1u32, rpar::Sum)?, 3);
        Ok(())
    })
    .unwrap();
}

#[test]
fn intercommunicators_keep_and_copy_attributes() {
    rpar::run(4, |world| {
        let half = world
            .split(Some(world.rank() as u32 % 2), world.rank() as i32)?
            .unwrap();
        let inter = InterComm::create(&half, 0, &world, 1 - world.rank() % 2, 7)?;
        let key = Keyval::<usize>::copied();
        let dropped = Keyval::<usize>::new();
        inter.set_attr(&key, world.rank())?;
        inter.set_attr(&dropped, 1)?;
        let copy = inter.dup()?;
        assert_eq!(copy.attr(&key), Some(world.rank()));
        assert_eq!(copy.attr(&dropped), None);
        let mut made = None;
        inter.scope(|s| s.idup(&mut made)?.wait().map(drop))?;
        assert_eq!(made.expect("complete").attr(&key), Some(world.rank()));
        inter.delete_attr(&key)?;
        assert_eq!(inter.attr(&key), None);
        assert_eq!(copy.attr(&key), Some(world.rank()));
        copy.free()
    })
    .unwrap();
}

#[test]
fn a_rank_that_panics_runs_no_delete_action_while_it_unwinds() {
    let err = rpar::run(2, |world| {
        if world.rank() == 1 {
            let key = Keyval::<u8>::with_delete(|_| panic!("a delete action ran in the unwind"));
            world.set_attr(&key, 1)?;
            panic!("rank 1 fails");
        }
        world.barrier()
    })
    .unwrap_err();
    assert!(
        matches!(&err, Error::RankPanicked { rank: 1, message } if message == "rank 1 fails"),
        "{err}"
    );
}
