//! Attributes cached on intercommunicators (MPI_Comm_set_attr and the others on an
//! intercommunicator): kept on the view across, as `Comm`'s are on a communicator
//! (`comm/attr.rs`); `InterComm::dup` copies them as `Comm::dup` does.

use super::InterComm;
use crate::{Keyval, Result};

impl InterComm {
    /// Sets this rank's attribute of `key` on the intercommunicator (MPI_Comm_set_attr), as
    /// [`Comm::set_attr`](crate::Comm::set_attr) does on a communicator.
    ///
    /// # Errors
    ///
    /// The delete action's error, if it fails on the value already set; that value then stays.
    pub fn set_attr<T: 'static>(&self, key: &Keyval<T>, value: T) -> Result<()> {
        self.remote.set_attr(key, value)
    }

    /// This rank's attribute of `key` on the intercommunicator, if set (MPI_Comm_get_attr).
    pub fn attr<T: Clone + 'static>(&self, key: &Keyval<T>) -> Option<T> {
        self.remote.attr(key)
    }

    /// Deletes this rank's attribute of `key` on the intercommunicator (MPI_Comm_delete_attr).
    ///
    /// # Errors
    ///
    /// The delete action's error; the attribute then stays set.
    pub fn delete_attr<T: 'static>(&self, key: &Keyval<T>) -> Result<()> {
        self.remote.delete_attr(key)
    }

    /// Frees this rank's handle of the intercommunicator (MPI_Comm_free): deletes its
    /// attributes, the last set first, and drops it.
    ///
    /// # Errors
    ///
    /// The first delete action that failed (every action runs).
    pub fn free(self) -> Result<()> {
        self.remote.attributes.delete_every()
    }
}
