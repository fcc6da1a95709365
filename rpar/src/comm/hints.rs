//! A communicator's info hints (MPI-4 §7.4.4): [`Comm::set_info`], [`Comm::info`] and
//! [`Comm::dup_with_info`] (MPI_Comm_set_info, MPI_Comm_get_info, MPI_Comm_dup_with_info).
//!
//! rpar knows the four assertions MPI-4 defines, each `"true"` or `"false"` (any case) and
//! false until set: `mpi_assert_no_any_tag`, `mpi_assert_no_any_source`,
//! `mpi_assert_exact_length` and `mpi_assert_allow_overtaking`. Other keys, and values other
//! than true or false, are ignored, as MPICH ignores them; [`Comm::info`] gives the four with
//! their values. rpar holds the program to the first two: a receive or probe with
//! [`ANY_TAG`](crate::ANY_TAG) or [`ANY_SOURCE`](crate::ANY_SOURCE) on a communicator that
//! asserts it will use none is an error, not a silent reliance on a promise broken.
//! The other two change nothing (rpar keeps messages in order and checks lengths anyway).

use super::{Comm, Request, Scope};
use crate::{Error, Info, Result};

/// The hints MPI-4 defines, in the order [`Comm::info`] gives them.
const NAMES: [&str; 4] = [
    "mpi_assert_no_any_tag",
    "mpi_assert_no_any_source",
    "mpi_assert_exact_length",
    "mpi_assert_allow_overtaking",
];

/// The values of the hints of [`NAMES`], in its order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Hints([bool; 4]);

impl Hints {
    /// Whether the communicator asserts that no receive or probe on it uses `ANY_TAG`.
    pub(crate) fn no_any_tag(self) -> bool {
        self.0[0]
    }

    /// Whether the communicator asserts that no receive or probe on it uses `ANY_SOURCE`.
    pub(crate) fn no_any_source(self) -> bool {
        self.0[1]
    }

    /// These hints updated by those of `info` that name one with the value true or false.
    fn updated(mut self, info: &Info) -> Hints {
        for (key, value) in info.iter() {
            let Some(i) = NAMES.iter().position(|&n| n == key) else {
                continue;
            };
            if value.trim().eq_ignore_ascii_case("true") {
                self.0[i] = true;
            } else if value.trim().eq_ignore_ascii_case("false") {
                self.0[i] = false;
            }
        }
        self
    }
}

impl Comm {
    /// Sets the communicator's hints from `info` (MPI_Comm_set_info): each of MPI-4's four
    /// assertions that `info` sets to `"true"` or `"false"` takes that value; other keys are
    /// ignored. Every rank should pass the same hints (MPI makes the call collective; here it
    /// moves nothing).
    ///
    /// ```
    /// let mut info = rpar::Info::new();
    /// info.set("mpi_assert_no_any_source", "true")?;
    /// let err = rpar::run(2, |world| {
    ///     world.set_info(&info);
    ///     world.recv::<u8>(rpar::ANY_SOURCE, 0).map(drop) // a promise broken
    /// }).unwrap_err();
    /// assert!(err.to_string().contains("mpi_assert_no_any_source"));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn set_info(&self, info: &Info) {
        self.hints.set(self.hints.get().updated(info));
    }

    /// The communicator's hints (MPI_Comm_get_info): MPI-4's four assertions with their values,
    /// `"true"` or `"false"`.
    ///
    /// ```
    /// let got = rpar::run(1, |world| {
    ///     let mut info = rpar::Info::new();
    ///     info.set("mpi_assert_no_any_tag", "true")?;
    ///     info.set("invalid_test_key", "true")?; // ignored
    ///     let copy = world.dup_with_info(&info)?;
    ///     let hints = copy.info();
    ///     Ok((hints.nkeys(), hints.get("mpi_assert_no_any_tag")?.map(String::from),
    ///         hints.get("invalid_test_key")?.is_none()))
    /// })?;
    /// assert_eq!(got[0], (4, Some("true".to_string()), true));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn info(&self) -> Info {
        let mut info = Info::new();
        for (name, &value) in NAMES.iter().zip(&self.hints.get().0) {
            let value = if value { "true" } else { "false" };
            info.set(name, value)
                .expect("a known hint is a valid key and value");
        }
        info
    }

    /// A copy of the communicator, as [`Comm::dup`]'s, with the hints of `info` instead of
    /// this one's (MPI_Comm_dup_with_info). Collective.
    ///
    /// # Errors
    ///
    /// Those of [`Comm::dup`].
    pub fn dup_with_info(&self, info: &Info) -> Result<Comm> {
        let copy = self.dup()?;
        copy.hints.set(Hints::default().updated(info));
        Ok(copy)
    }

    /// Refuses a wildcard on the point-to-point context of a communicator whose hints assert
    /// that none is used (`source_is_any`, `tag_is_any`: the receive's).
    #[cold]
    pub(crate) fn check_promised(&self, source_is_any: bool, tag_is_any: bool) -> Result<()> {
        let hints = self.hints.get();
        let broken = if source_is_any && hints.no_any_source() {
            ("ANY_SOURCE", NAMES[1])
        } else if tag_is_any && hints.no_any_tag() {
            ("ANY_TAG", NAMES[0])
        } else {
            return Ok(());
        };
        Err(Error::invalid(
            "a receive or probe",
            format!(
                "{} on a communicator whose info asserts {} = true: the program promised not \
                 to use it there",
                broken.0, broken.1
            ),
        ))
    }
}

impl<'scope> Scope<'scope, '_> {
    /// [`Scope::idup`] with the hints of `info` instead of the communicator's
    /// (MPI_Comm_idup_with_info).
    ///
    /// # Errors
    ///
    /// Those of [`Comm::dup`], when the request completes.
    pub fn idup_with_info(
        &'scope self,
        new: &'scope mut Option<Comm>,
        info: &Info,
    ) -> Result<Request<'scope>> {
        let hints = Hints::default().updated(info);
        self.idup_then(new, move |copy| copy.hints.set(hints))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_true_or_false_of_a_known_hint_counts() {
        let mut info = Info::new();
        info.set("mpi_assert_no_any_source", "TRUE").unwrap();
        info.set("mpi_assert_exact_length", "yes").unwrap();
        info.set("mpi_assert_no_any_tagx", "true").unwrap();
        let hints = Hints::default().updated(&info);
        assert_eq!(hints, Hints([false, true, false, false]));
        let mut off = Info::new();
        off.set("mpi_assert_no_any_source", " false ").unwrap();
        assert_eq!(hints.updated(&off), Hints::default());
    }
}
