//! Attributes cached on communicators (MPI_Comm_create_keyval, MPI_Comm_set_attr,
//! MPI_Comm_get_attr, MPI_Comm_delete_attr, MPI_Comm_free_keyval, and the attribute part of
//! MPI_Comm_dup and MPI_Comm_free): a value of any type kept on one rank's communicator under a
//! typed [`Keyval`], copied by `dup` as the key says, and shown to the key's delete action when
//! it is deleted, replaced, or its communicator is freed or dropped.
//!
//! Attributes are local, as in MPI: each rank's communicator has its own, and setting one is
//! no communication. A key is made on the rank that uses it (its actions may hold `Rc`s and
//! `Cell`s, as MPI's `extra_state` holds pointers); dropping the key is MPI_Comm_free_keyval:
//! the attributes set with it stay, with their actions, until they are deleted.
//!
//! The actions are called with no borrow of the communicator's attributes held, so an action
//! may read, set or delete attributes of the same communicator (MPICH's `attrdeleteget` reads
//! one from a delete action).

use super::Comm;
use crate::Result;
use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What `dup` does with an attribute: `Ok(Some(copy))` gives the copy its own value,
/// `Ok(None)` leaves it without the attribute, and an error fails the `dup`.
type CopyAction<T> = dyn Fn(&T) -> Result<Option<T>>;

/// What deleting an attribute does besides dropping its value; an error fails the call that
/// deleted it (`delete_attr`, `set_attr` replacing it, `Comm::free`).
type DeleteAction<T> = dyn Fn(&T) -> Result<()>;

/// The ids of keys: never reused within a process.
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// A key under which communicators cache values of type `T` (an MPI keyval), with what
/// `Comm::dup` does with them and what deleting one does.
///
/// ```
/// use rpar::Keyval;
/// use std::rc::Rc;
/// use std::cell::Cell;
///
/// rpar::run(2, |world| {
///     let plain = Keyval::<u32>::new(); // not copied by dup
///     let copied = Keyval::<String>::copied(); // cloned by dup (MPI_COMM_DUP_FN)
///     let deleted = Rc::new(Cell::new(0));
///     let counted = {
///         let deleted = deleted.clone();
///         Keyval::<u8>::with_delete(move |_| {
///             deleted.set(deleted.get() + 1);
///             Ok(())
///         })
///     };
///     world.set_attr(&plain, 7)?;
///     world.set_attr(&copied, "grid".to_string())?;
///     world.set_attr(&counted, 1)?;
///     let copy = world.dup()?;
///     assert_eq!(copy.attr(&plain), None);
///     assert_eq!(copy.attr(&copied).as_deref(), Some("grid"));
///     world.set_attr(&counted, 2)?; // replaces: the old value is deleted
///     world.delete_attr(&counted)?;
///     assert_eq!((world.attr(&counted), deleted.get()), (None, 2));
///     Ok(())
/// })?;
/// # Ok::<(), rpar::Error>(())
/// ```
pub struct Keyval<T: 'static> {
    actions: Rc<Actions<T>>,
}

struct Actions<T> {
    id: u64,
    copy: Option<Box<CopyAction<T>>>,
    delete: Option<Box<DeleteAction<T>>>,
}

impl<T: 'static> Keyval<T> {
    fn make(copy: Option<Box<CopyAction<T>>>, delete: Option<Box<DeleteAction<T>>>) -> Self {
        Keyval {
            actions: Rc::new(Actions {
                id: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
                copy,
                delete,
            }),
        }
    }

    /// A key whose attributes `dup` does not copy and whose deletion only drops the value
    /// (MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN).
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::make(None, None)
    }

    /// A key whose attributes `dup` clones into the copy (MPI_COMM_DUP_FN).
    pub fn copied() -> Self
    where
        T: Clone,
    {
        Self::make(Some(Box::new(|v: &T| Ok(Some(v.clone())))), None)
    }

    /// A key whose attributes `dup` does not copy, with an action run on the value when it is
    /// deleted (MPI_COMM_NULL_COPY_FN and a delete function).
    pub fn with_delete(delete: impl Fn(&T) -> Result<()> + 'static) -> Self {
        Self::make(None, Some(Box::new(delete)))
    }

    /// A key with both actions (MPI_Comm_create_keyval): `copy` decides what `dup` gives the
    /// copy (`Ok(None)`: nothing; an error fails the `dup`), `delete` runs on the value when
    /// it is deleted (an error fails the call that deleted it).
    pub fn with_actions(
        copy: impl Fn(&T) -> Result<Option<T>> + 'static,
        delete: impl Fn(&T) -> Result<()> + 'static,
    ) -> Self {
        Self::make(Some(Box::new(copy)), Some(Box::new(delete)))
    }
}

impl<T: 'static> std::fmt::Debug for Keyval<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyval")
            .field("id", &self.actions.id)
            .field("copied", &self.actions.copy.is_some())
            .field("delete_action", &self.actions.delete.is_some())
            .finish()
    }
}

/// A key's actions on values of an erased type.
trait ErasedActions {
    fn copy(&self, value: &dyn Any) -> Result<Option<Rc<dyn Any>>>;
    fn delete(&self, value: &dyn Any) -> Result<()>;
}

impl<T: 'static> ErasedActions for Actions<T> {
    fn copy(&self, value: &dyn Any) -> Result<Option<Rc<dyn Any>>> {
        let (Some(copy), Some(value)) = (&self.copy, value.downcast_ref::<T>()) else {
            return Ok(None);
        };
        Ok(copy(value)?.map(|v| Rc::new(v) as Rc<dyn Any>))
    }

    fn delete(&self, value: &dyn Any) -> Result<()> {
        match (&self.delete, value.downcast_ref::<T>()) {
            (Some(delete), Some(value)) => delete(value),
            _ => Ok(()),
        }
    }
}

/// One attribute: its key's id, its value (shared only while an action runs on it) and its
/// key's actions (which outlive the key).
#[derive(Clone)]
pub(crate) struct Attribute {
    key: u64,
    value: Rc<dyn Any>,
    actions: Rc<dyn ErasedActions>,
}

impl Attribute {
    fn delete(&self) -> Result<()> {
        self.actions.delete(&*self.value)
    }
}

/// The attributes of one rank's communicator, in the order they were set.
#[derive(Default)]
pub(crate) struct Attributes {
    list: RefCell<Vec<Attribute>>,
}

impl std::fmt::Debug for Attributes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attributes")
            .field("len", &self.list.borrow().len())
            .finish()
    }
}

impl Attributes {
    fn position(&self, key: u64) -> Option<usize> {
        self.list.borrow().iter().position(|a| a.key == key)
    }

    /// Takes the attribute of `key` out, if set.
    fn take(&self, key: u64) -> Option<(usize, Attribute)> {
        let at = self.position(key)?;
        Some((at, self.list.borrow_mut().remove(at)))
    }

    /// Puts back an attribute taken out at `at` (its delete action failed), unless the action
    /// set the key again meanwhile.
    fn put_back(&self, at: usize, attribute: Attribute) {
        if self.position(attribute.key).is_none() {
            let mut list = self.list.borrow_mut();
            let at = at.min(list.len());
            list.insert(at, attribute);
        }
    }

    /// Copies of the attributes whose keys `dup` copies, in the order they were set; the
    /// first copy action's error fails it (the copies made so far are deleted).
    pub(crate) fn copied(&self) -> Result<Vec<Attribute>> {
        let originals: Vec<Attribute> = self.list.borrow().clone();
        let mut copies = Vec::new();
        for a in originals {
            match a.actions.copy(&*a.value) {
                Ok(Some(value)) => copies.push(Attribute {
                    key: a.key,
                    value,
                    actions: a.actions.clone(),
                }),
                Ok(None) => {}
                Err(e) => {
                    // the copy action's error is the one to report
                    let _ = delete_all(copies);
                    return Err(e);
                }
            }
        }
        Ok(copies)
    }

    /// Installs `copies` (from [`Attributes::copied`]) on a communicator that has none yet.
    pub(crate) fn adopt(&self, copies: Vec<Attribute>) {
        self.list.borrow_mut().extend(copies);
    }

    /// Deletes every attribute, the last set first (as MPI deletes those of MPI_COMM_SELF at
    /// MPI_Finalize); the first delete action's error, after all have run.
    pub(crate) fn delete_every(&self) -> Result<()> {
        let all = std::mem::take(&mut *self.list.borrow_mut());
        delete_all(all)
    }
}

/// Runs the delete actions of `attributes`, the last first; the first error, after all.
fn delete_all(attributes: Vec<Attribute>) -> Result<()> {
    let mut first = Ok(());
    for a in attributes.iter().rev() {
        let deleted = a.delete();
        if first.is_ok() {
            first = deleted;
        }
    }
    first
}

impl Comm {
    /// Sets this rank's attribute of `key` on the communicator to `value` (MPI_Comm_set_attr).
    /// A value already set is deleted first (its key's delete action runs on it).
    ///
    /// # Errors
    ///
    /// The delete action's error, if it fails on the value already set; that value then stays.
    pub fn set_attr<T: 'static>(&self, key: &Keyval<T>, value: T) -> Result<()> {
        let id = key.actions.id;
        if let Some((at, old)) = self.attributes.take(id) {
            if let Err(e) = old.delete() {
                self.attributes.put_back(at, old);
                return Err(e);
            }
        }
        self.attributes.list.borrow_mut().push(Attribute {
            key: id,
            value: Rc::new(value),
            actions: key.actions.clone(),
        });
        Ok(())
    }

    /// This rank's attribute of `key` on the communicator, if set (MPI_Comm_get_attr; `None`
    /// is `flag` false). Values are cloned out: keep an `Rc` for a large one.
    pub fn attr<T: Clone + 'static>(&self, key: &Keyval<T>) -> Option<T> {
        let list = self.attributes.list.borrow();
        let a = list.iter().find(|a| a.key == key.actions.id)?;
        a.value.downcast_ref::<T>().cloned()
    }

    /// Deletes this rank's attribute of `key` on the communicator (MPI_Comm_delete_attr): its
    /// key's delete action runs on it. Deleting an attribute that is not set does nothing.
    ///
    /// # Errors
    ///
    /// The delete action's error; the attribute then stays set.
    pub fn delete_attr<T: 'static>(&self, key: &Keyval<T>) -> Result<()> {
        let Some((at, old)) = self.attributes.take(key.actions.id) else {
            return Ok(());
        };
        let deleted = old.delete();
        if deleted.is_err() {
            self.attributes.put_back(at, old);
        }
        deleted
    }

    /// Frees this rank's handle of the communicator (MPI_Comm_free): deletes its attributes,
    /// the last set first, and drops it. Dropping a communicator does the same but cannot
    /// report an error (and, while its rank unwinds from a panic, runs no delete action).
    ///
    /// # Errors
    ///
    /// The first delete action that failed (every action runs).
    pub fn free(self) -> Result<()> {
        self.attributes.delete_every()
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // a rank unwinding from a panic aborts the run, as MPI_Abort frees nothing: the values
        // are dropped without their delete actions (one that panicked too would abort the
        // whole process)
        if std::thread::panicking() {
            self.attributes.list.borrow_mut().clear();
            return;
        }
        // an error here has no one to go to (`Comm::free` returns it)
        let _ = self.attributes.delete_every();
    }
}
