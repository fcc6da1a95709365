//! [`Info`]: MPI's info objects (MPI-4 §10), ordered sets of string keys and values that pass
//! hints to the library — to a communicator ([`Comm::set_info`](crate::Comm::set_info),
//! [`Comm::dup_with_info`](crate::Comm::dup_with_info)) — and describe the job
//! ([`Info::env`], MPI_INFO_ENV).
//!
//! As in MPICH, keys keep the order they were first set in (replacing a value keeps its
//! place), keys have 1 to [`MAX_INFO_KEY`] bytes and values up to [`MAX_INFO_VAL`], and both
//! are case-sensitive strings. Dropping an `Info` is MPI_Info_free; `clone` is MPI_Info_dup.

use crate::{Error, Result};

/// The longest info key, in bytes (MPI_MAX_INFO_KEY, MPICH's value).
pub const MAX_INFO_KEY: usize = 255;

/// The longest info value, in bytes (MPI_MAX_INFO_VAL, MPICH's value).
pub const MAX_INFO_VAL: usize = 1024;

/// An info object (MPI_Info): keys and their values, in the order the keys were first set.
///
/// ```
/// let mut info = rpar::Info::new();                 // MPI_Info_create
/// info.set("host", "myhost.myorg.org")?;            // MPI_Info_set
/// info.set("file", "runfile.txt")?;
/// info.set("host", "another.org")?;                 // replaces the value, keeps the place
/// assert_eq!(info.get("host")?, Some("another.org")); // MPI_Info_get_string
/// assert_eq!(info.get("soft")?, None);
/// assert_eq!(info.nkeys(), 2);                      // MPI_Info_get_nkeys
/// assert_eq!(info.nth_key(1)?, "file");             // MPI_Info_get_nthkey
/// let copy = info.clone();                          // MPI_Info_dup
/// info.delete("file")?;                             // MPI_Info_delete
/// assert!(info.delete("file").is_err());            // MPI_ERR_INFO_NOKEY
/// assert_eq!((info.nkeys(), copy.nkeys()), (1, 2));
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    entries: Vec<(String, String)>,
}

impl Info {
    /// An empty info object (MPI_Info_create).
    pub fn new() -> Info {
        Info::default()
    }

    /// Sets `key` to `value` (MPI_Info_set): a new key goes last, a key already there keeps
    /// its place and takes the new value.
    ///
    /// # Errors
    ///
    /// [`Error::InfoKey`] for a key of no bytes or more than [`MAX_INFO_KEY`];
    /// [`Error::InfoValue`] for a value of more than [`MAX_INFO_VAL`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        check_key("Info::set", key)?;
        if value.len() > MAX_INFO_VAL {
            return Err(Error::InfoValue {
                call: "Info::set",
                key: key.into(),
                len: value.len(),
                max: MAX_INFO_VAL,
            });
        }
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value.into(),
            None => self.entries.push((key.into(), value.into())),
        }
        Ok(())
    }

    /// The value of `key`, if set (MPI_Info_get_string, MPI_Info_get; its length is
    /// MPI_Info_get_valuelen).
    ///
    /// # Errors
    ///
    /// [`Error::InfoKey`] for a key of no bytes or more than [`MAX_INFO_KEY`].
    pub fn get(&self, key: &str) -> Result<Option<&str>> {
        check_key("Info::get", key)?;
        let found = self.entries.iter().find(|(k, _)| k == key);
        Ok(found.map(|(_, v)| v.as_str()))
    }

    /// Removes `key` and its value (MPI_Info_delete).
    ///
    /// # Errors
    ///
    /// [`Error::InfoKey`] for a key of no bytes or more than [`MAX_INFO_KEY`];
    /// [`Error::InfoNoKey`] if the object does not hold `key`.
    pub fn delete(&mut self, key: &str) -> Result<()> {
        check_key("Info::delete", key)?;
        let Some(at) = self.entries.iter().position(|(k, _)| k == key) else {
            return Err(Error::InfoNoKey {
                call: "Info::delete",
                key: key.into(),
            });
        };
        self.entries.remove(at);
        Ok(())
    }

    /// How many keys the object holds (MPI_Info_get_nkeys).
    pub fn nkeys(&self) -> usize {
        self.entries.len()
    }

    /// The `n`th key, from 0, in the order the keys were first set (MPI_Info_get_nthkey).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `n` is not below [`Info::nkeys`] (MPI_ERR_ARG).
    pub fn nth_key(&self, n: usize) -> Result<&str> {
        match self.entries.get(n) {
            Some((k, _)) => Ok(k),
            None => Err(Error::invalid(
                "Info::nth_key",
                format!(
                    "key number {n} asked for, but the object holds {} keys",
                    self.entries.len()
                ),
            )),
        }
    }

    /// The keys and values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// What the job was started with (MPI_INFO_ENV): `command` (the program as started) and
    /// `argv` (its arguments, separated by spaces), when there are any, and `wdir` (the working
    /// directory) and `maxprocs` (the ranks of the run, when known: see
    /// [`Info::env_of_run`]).
    ///
    /// ```
    /// let env = rpar::Info::env();
    /// assert!(env.get("command")?.is_some());
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn env() -> Info {
        let mut info = Info::new();
        let mut args = std::env::args();
        let mut put = |k: &str, v: String| {
            if v.len() <= MAX_INFO_VAL {
                info.entries.push((k.into(), v));
            }
        };
        if let Some(command) = args.next() {
            put("command", command);
        }
        let rest: Vec<String> = args.collect();
        if !rest.is_empty() {
            put("argv", rest.join(" "));
        }
        if let Ok(dir) = std::env::current_dir() {
            put("wdir", dir.display().to_string());
        }
        info
    }

    /// [`Info::env`] with `maxprocs`, the number of ranks of the run `world` belongs to.
    ///
    /// ```
    /// let got = rpar::run(3, |world| Ok(rpar::Info::env_of_run(&world).get("maxprocs")?.map(String::from)))?;
    /// assert_eq!(got[0].as_deref(), Some("3"));
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn env_of_run(world: &crate::Comm) -> Info {
        let mut info = Info::env();
        let procs = world.endpoint().fabric().size();
        info.entries.push(("maxprocs".into(), procs.to_string()));
        info
    }
}

/// Checks an info key's length.
fn check_key(call: &'static str, key: &str) -> Result<()> {
    if key.is_empty() || key.len() > MAX_INFO_KEY {
        return Err(Error::InfoKey {
            call,
            key: key.into(),
            max: MAX_INFO_KEY,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_mpichs_and_errors_name_the_class() {
        let mut info = Info::new();
        assert!(info.set(&"k".repeat(MAX_INFO_KEY), "v").is_ok());
        let long = "k".repeat(MAX_INFO_KEY + 1);
        assert!(matches!(info.set(&long, "v"), Err(Error::InfoKey { .. })));
        assert!(matches!(info.set("", "v"), Err(Error::InfoKey { .. })));
        assert!(info.set("v", &"x".repeat(MAX_INFO_VAL)).is_ok());
        let too_long = "x".repeat(MAX_INFO_VAL + 1);
        assert!(matches!(
            info.set("v", &too_long),
            Err(Error::InfoValue { .. })
        ));
        assert_eq!(info.get("v").unwrap().map(str::len), Some(MAX_INFO_VAL));
        assert!(matches!(info.get(&long), Err(Error::InfoKey { .. })));
        assert!(matches!(info.delete("nope"), Err(Error::InfoNoKey { .. })));
        assert!(matches!(
            info.nth_key(2),
            Err(Error::InvalidArgument { .. })
        ));
    }

    #[test]
    fn keys_keep_the_order_they_were_first_set_in() {
        let mut info = Info::new();
        for (k, v) in [("file", "a"), ("soft", "b"), ("host", "c"), ("soft", "d")] {
            info.set(k, v).unwrap();
        }
        let keys: Vec<&str> = (0..info.nkeys())
            .map(|n| info.nth_key(n).unwrap())
            .collect();
        assert_eq!(keys, ["file", "soft", "host"]);
        assert_eq!(info.get("soft").unwrap(), Some("d"));
        info.delete("file").unwrap();
        assert_eq!(
            info.iter().collect::<Vec<_>>(),
            [("soft", "d"), ("host", "c")]
        );
    }
}
