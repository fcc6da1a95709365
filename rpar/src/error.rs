//! The one error type of rpar.
//!
//! Every fallible call returns [`Result<T>`](crate::Result). Variants carry the facts a user needs
//! to act on (what was expected, what was given); nothing in rpar panics on user error.

use std::fmt;

/// Everything that can go wrong in rpar, as a value (where MPI returns an error class such as
/// `MPI_ERR_RANK`, `MPI_ERR_TAG` or `MPI_ERR_TRUNCATE`, or aborts the job).
///
/// ```
/// let err = rpar::run(2, |world| {
///     world.send(&1u8, 5, 0)?; // rank 5 does not exist in a world of 2
///     Ok(())
/// })
/// .unwrap_err();
/// assert!(err.to_string().contains("rank 5"));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rank argument names no rank of the communicator.
    #[error("rank {rank} is out of range: the communicator has {size} ranks (valid: 0..{size})")]
    RankOutOfRange {
        /// The rank that was given.
        rank: usize,
        /// The size of the communicator.
        size: usize,
    },
    /// A tag outside `0..=TAG_UB` was given to a send (or a negative tag other than `ANY_TAG`).
    #[error(
        "invalid tag {tag}: tags of sends must be in 0..={max}, receives may also use ANY_TAG"
    )]
    InvalidTag {
        /// The tag that was given.
        tag: i32,
        /// The largest valid tag.
        max: i32,
    },
    /// The matched message is larger than the receive buffer. The message is not consumed: it can
    /// still be received with a larger buffer.
    #[error("message truncated: it needs {needed} bytes but the receive buffer holds {capacity} (from rank {source_rank}, tag {tag})")]
    Truncated {
        /// Bytes in the message.
        needed: usize,
        /// Bytes the receive buffer can hold.
        capacity: usize,
        /// Sender of the message.
        source_rank: usize,
        /// Tag of the message.
        tag: i32,
    },
    /// The element types of a send and its matching receive have different type signatures.
    #[error("type mismatch: rank {source_rank} sent {sent} but the receive expects {expected}")]
    TypeMismatch {
        /// What the sender sent (element type and count).
        sent: String,
        /// What the receiver expected.
        expected: String,
        /// Sender of the message.
        source_rank: usize,
    },
    /// An argument is invalid; the message says what was expected and what was given.
    #[error("invalid argument to {call}: {message}")]
    InvalidArgument {
        /// The call that refused the argument.
        call: &'static str,
        /// What was expected and what was given.
        message: String,
    },
    /// A rank is named twice where a call needs distinct ranks (MPI_ERR_RANK): the ranks given to
    /// [`Group::incl`](crate::Group::incl) or [`Group::excl`](crate::Group::excl).
    #[error("{call}: rank {rank} is given twice (at positions {first} and {second}), but the ranks must be distinct")]
    DuplicateRank {
        /// The call that refused the ranks.
        call: &'static str,
        /// The rank given twice.
        rank: usize,
        /// Where it is given first, as an index of the ranks.
        first: usize,
        /// Where it is given again.
        second: usize,
    },
    /// A group that does not fit the communicator it is used with (MPI_ERR_GROUP): a group with
    /// a member outside the communicator, or groups that the ranks of one
    /// [`Group::comm_create`](crate::Group::comm_create) call gave differently.
    #[error("{call}: {message}")]
    InvalidGroup {
        /// The call that refused the group.
        call: &'static str,
        /// What was expected and what was given.
        message: String,
    },
    /// This rank's call could not complete because another rank failed and the run was aborted.
    #[error("aborted because rank {rank} failed: {message}")]
    Aborted {
        /// The rank whose failure aborted the run.
        rank: usize,
        /// That rank's error or panic message.
        message: String,
    },
    /// A rank panicked; the run was aborted.
    #[error("rank {rank} panicked: {message}")]
    RankPanicked {
        /// The rank that panicked.
        rank: usize,
        /// Its panic message.
        message: String,
    },
    /// A rank returned an error; the run was aborted.
    #[error("rank {rank} failed: {source}")]
    RankFailed {
        /// The rank that failed.
        rank: usize,
        /// The error it returned.
        source: Box<Error>,
    },
    /// A peer finished its program while this rank still waited for it.
    #[error("rank {peer} has already finished, but this rank {waiting_for}")]
    PeerFinished {
        /// The peer (a world rank) that finished.
        peer: usize,
        /// What this rank was waiting for.
        waiting_for: String,
    },
    /// The program's own error, raised with [`Error::user`].
    #[error("{0}")]
    User(String),
    /// An info key that is empty or longer than [`MAX_INFO_KEY`](crate::MAX_INFO_KEY) bytes
    /// (MPI_ERR_INFO_KEY).
    #[error("{call}: the info key {key:?} is {} bytes long: a key must have 1 to {max} bytes", .key.len())]
    InfoKey {
        /// The call that refused it.
        call: &'static str,
        /// The key given.
        key: String,
        /// The longest key allowed.
        max: usize,
    },
    /// An info value longer than [`MAX_INFO_VAL`](crate::MAX_INFO_VAL) bytes
    /// (MPI_ERR_INFO_VALUE).
    #[error("{call}: the value of info key {key:?} is {len} bytes long: a value may have at most {max} bytes")]
    InfoValue {
        /// The call that refused it.
        call: &'static str,
        /// The key whose value it is.
        key: String,
        /// The value's length in bytes.
        len: usize,
        /// The longest value allowed.
        max: usize,
    },
    /// An info key that the info object does not hold, where one must be
    /// (MPI_ERR_INFO_NOKEY).
    #[error("{call}: the info object has no key {key:?}")]
    InfoNoKey {
        /// The call that refused it.
        call: &'static str,
        /// The key given.
        key: String,
    },
    /// Every rank still running was blocked and no message in flight could unblock any of them.
    #[error("deadlock: every running rank is blocked and no message can unblock them\n{}", list_deadlock(.blocked, .finished))]
    Deadlock {
        /// What each blocked rank was waiting for, in rank order.
        blocked: Vec<BlockedCall>,
        /// Ranks that had already returned.
        finished: Vec<usize>,
    },
    /// Ranks of one communicator called different collectives (or the same one with different
    /// roots, operators or counts).
    #[error("collective mismatch on communicator {communicator}: {}", .calls.iter().map(|(r, c)| format!("rank {r} called {c}")).collect::<Vec<_>>().join(", "))]
    CollectiveMismatch {
        /// The communicator's id.
        communicator: u32,
        /// (rank in the communicator, what it called), for the ranks that disagree.
        calls: Vec<(usize, String)>,
    },
    /// In strict mode, the run left messages unreceived or receives incomplete.
    #[error("the run left {} problem(s) behind:\n{}", .warnings.len(), list_warnings(.warnings))]
    Leaks {
        /// What was left behind.
        warnings: Vec<Warning>,
    },
    /// A task of a task farm ([`rpar::pattern`](crate::pattern)) failed: its work closure
    /// returned an error, and the farm stopped.
    #[error("task {task} failed on rank {rank}: {message}")]
    TaskFailed {
        /// The task's number, counting from 0 in the order the tasks were given.
        task: usize,
        /// The rank (of the farm's communicator) that ran it.
        rank: usize,
        /// The work closure's error, as text.
        message: String,
    },
    /// A datatype would touch bytes outside the buffer it is used on.
    #[error("{call}: the datatype touches bytes {low}..{high} of the buffer, but the buffer has {len} bytes (valid: 0..{len})")]
    BufferOutOfBounds {
        /// The call that refused.
        call: &'static str,
        /// The lowest byte offset touched (may be negative).
        low: i128,
        /// One past the highest byte offset touched.
        high: i128,
        /// The buffer's size in bytes.
        len: usize,
    },
    /// Bytes bound for a `bool` or `char` are no valid value of it; nothing was written.
    #[error("{call}: the bytes {bytes:?} at packed offset {position} are not a valid {basic}")]
    InvalidValue {
        /// The call that refused.
        call: &'static str,
        /// The basic type the bytes were bound for.
        basic: crate::BasicType,
        /// Offset of the bytes in the packed data.
        position: usize,
        /// The offending bytes.
        bytes: Vec<u8>,
    },
}

fn list_warnings(warnings: &[Warning]) -> String {
    warnings
        .iter()
        .map(|w| format!("  {w}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Something a run left behind that is not an error by itself but usually a bug: reported by
/// [`Universe::run_report`](crate::Universe::run_report), and an error in strict mode.
///
/// ```
/// use rpar::Warning;
/// let report = rpar::Universe::new(2).run_report(|world| {
///     if world.rank() == 1 {
///         world.send(&[1u8, 2, 3][..], 0, 9)?; // rank 0 never receives it
///     }
///     Ok(())
/// })?;
/// assert_eq!(
///     report.warnings,
///     [Warning::Unreceived { to: 0, from: 1, tag: 9, communicator: 0, bytes: 3 }]
/// );
/// assert!(report.warnings[0].to_string().contains("was never received"));
/// # Ok::<(), rpar::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// A message was sent but never received.
    Unreceived {
        /// The receiver's world rank.
        to: usize,
        /// The sender's rank in the communicator.
        from: usize,
        /// The message's tag.
        tag: i32,
        /// The communicator's id (0 is the world).
        communicator: u32,
        /// Size in bytes.
        bytes: usize,
    },
    /// A non-blocking receive was started but never completed (e.g. its request was leaked).
    IncompleteReceive {
        /// The world rank that posted it.
        rank: usize,
        /// The source it waits for; `None` for `ANY_SOURCE`.
        source: Option<usize>,
        /// The tag it waits for; `None` for `ANY_TAG`.
        tag: Option<i32>,
        /// The communicator's id.
        communicator: u32,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Unreceived { to, from, tag, communicator, bytes } => write!(
                f,
                "a message of {bytes} bytes from rank {from} to rank {to} (tag {tag}, communicator {communicator}) was never received"
            ),
            Warning::IncompleteReceive { rank, source, tag, communicator } => {
                let source = source.map_or("ANY_SOURCE".to_string(), |s| format!("rank {s}"));
                let tag = tag.map_or("ANY_TAG".to_string(), |t| t.to_string());
                write!(f, "rank {rank} never completed its receive from {source} (tag {tag}, communicator {communicator})")
            }
        }
    }
}

/// What one rank was blocked in when a deadlock was found (for [`Error::Deadlock`]).
///
/// ```
/// let err = rpar::run(3, |world| {
///     if world.rank() < 2 {
///         world.recv::<u32>(1 - world.rank(), 5)?; // ranks 0 and 1 wait for each other
///     }
///     Ok(()) // rank 2 returns
/// })
/// .unwrap_err();
/// let rpar::Error::Deadlock { blocked, finished } = err else { panic!("{err}") };
/// assert_eq!(finished, [2]);
/// let b = &blocked[1];
/// assert_eq!((b.rank, b.call.as_str(), b.peer, b.tag), (1, "recv", Some(0), Some(5)));
/// assert_eq!(b.to_string(), "rank 1 is blocked in recv with rank 0, tag 5 (communicator 0)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedCall {
    /// The rank (in the world).
    pub rank: usize,
    /// The blocking call: `recv`, `probe`, `wait`, `wait_any`, `send`, or a collective's name.
    pub call: String,
    /// The peer, as a rank of the communicator; `None` for `ANY_SOURCE` or no single peer.
    pub peer: Option<usize>,
    /// The tag; `None` for `ANY_TAG` or none.
    pub tag: Option<i32>,
    /// The communicator's id (0 is the world).
    pub communicator: u32,
}

impl fmt::Display for BlockedCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {} is blocked in {}", self.rank, self.call)?;
        match self.peer {
            Some(p) => write!(f, " with rank {p}")?,
            None if self.call == "recv" || self.call == "probe" => {
                f.write_str(" from ANY_SOURCE")?
            }
            None => {}
        }
        if let Some(t) = self.tag {
            write!(f, ", tag {t}")?;
        }
        write!(f, " (communicator {})", self.communicator)
    }
}

fn list_deadlock(blocked: &[BlockedCall], finished: &[usize]) -> String {
    let mut lines: Vec<String> = blocked.iter().map(|b| format!("  {b}")).collect();
    if !finished.is_empty() {
        lines.push(format!("  ranks that already returned: {finished:?}"));
    }
    lines.join("\n")
}

impl Error {
    /// An application error with a message, for use inside a rank's closure (returned from a
    /// rank, it ends the run as MPI_Abort would end the job).
    ///
    /// ```
    /// let err = rpar::run(1, |_| -> rpar::Result<()> { Err(rpar::Error::user("no input")) });
    /// assert!(err.unwrap_err().to_string().contains("no input"));
    /// ```
    pub fn user(message: impl fmt::Display) -> Self {
        Error::User(message.to_string())
    }

    /// An [`Error::InvalidArgument`] for `call`.
    pub(crate) fn invalid(call: &'static str, message: impl fmt::Display) -> Self {
        Error::InvalidArgument {
            call,
            message: message.to_string(),
        }
    }
}

/// `Result` with rpar's [`Error`]: what every fallible rpar call returns, and what a rank's
/// program returns.
///
/// ```
/// fn checked_sum(world: &rpar::Comm) -> rpar::Result<u64> {
///     let total = world.allreduce(&(world.rank() as u64), rpar::Sum)?;
///     if total == 0 && world.size() > 1 {
///         return Err(rpar::Error::user("the sum cannot be 0"));
///     }
///     Ok(total)
/// }
/// let sums = rpar::run(4, |world| checked_sum(&world))?;
/// assert_eq!(sums, vec![6; 4]);
/// # Ok::<(), rpar::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;
