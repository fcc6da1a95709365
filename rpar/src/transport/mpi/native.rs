//! MPI's own collectives under rpar's: [`NativeComm`] mirrors one rpar communicator with an MPI
//! communicator of the same ranks in the same order (made by `MPI_Comm_dup` / `MPI_Comm_split`
//! beside rpar's `dup` / `split`), and runs `MPI_Bcast`, `MPI_Allreduce`, … on it with the
//! elements' MPI datatype. Reductions go to MPI only with an MPI predefined operator on elements
//! of one basic type that MPI reduces (`MPI_SUM` on `f64`, …); other cases run rpar's own
//! algorithms over MPI's point-to-point.

use super::agreement::{self, Agreement};
use super::datatype::{self, MpiDatatype};
use crate::collective::Predefined;
use crate::datatype::{BasicType, Compiled, Datatype};
use crate::transport::CollectiveCall;
use crate::Result;
use ::mpi::ffi;
use ::mpi::ffi::{MPI_Datatype, MPI_Op};
use ::mpi::topology::{Color, Communicator, Group, Rank, SimpleCommunicator};
use ::mpi::traits::{AsRaw, FromRaw};
use std::any::TypeId;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_void;
use std::rc::Rc;

/// The MPI communicator that mirrors an rpar communicator.
pub(crate) struct NativeComm {
    /// Whether the processes called the same collectives on this communicator; first, so that
    /// a comparison still in progress completes (its `Drop`) before the communicator is freed.
    agreement: RefCell<Agreement>,
    comm: SimpleCommunicator,
    /// The MPI datatypes of the element types used so far (freed with the communicator), with
    /// their signatures' hashes (for the [`Agreement`]).
    types: RefCell<HashMap<TypeId, Typed>>,
    /// The last one asked for, looked at first: a program mostly repeats its calls on one type,
    /// and the map's SipHash of a `TypeId` cost ~140 instructions of an 8-byte MPI_Bcast's ~300
    /// on rpar's side. Its handle and signature's hash (the datatype lives in `types`).
    last_type: Cell<Option<(TypeId, MPI_Datatype, u64)>>,
}

/// An element type's MPI datatype and the hash of its signature.
#[derive(Clone)]
struct Typed {
    mpi: Rc<MpiDatatype>,
    signature: u64,
}

impl std::fmt::Debug for NativeComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeComm")
            .field("rank", &self.comm.rank())
            .field("size", &self.comm.size())
            .finish()
    }
}

/// A count MPI takes (`int`), or `None` if it does not fit (then rpar's algorithm runs).
fn count(n: usize) -> Option<i32> {
    i32::try_from(n).ok()
}

/// What MPI reads of a reduction of `send` into `recv`: `send`, or with `send` `None` (in place)
/// a copy of `recv` (rsmpi has no `MPI_IN_PLACE`).
fn input<'a, T: Datatype>(send: Option<&'a [T]>, recv: &[T]) -> Cow<'a, [T]> {
    send.map_or_else(|| Cow::Owned(recv.to_vec()), Cow::Borrowed)
}

/// The MPI operator and element type of a reduction MPI can do itself on `T`.
fn reduction<T: Datatype>(op: Predefined) -> Option<Reduction> {
    let first = const { T::LAYOUT.dense_uniform() }?;
    use BasicType::*;
    let arithmetic = !matches!(first, Bool | Char | Byte | I128 | U128);
    let integer = arithmetic && !matches!(first, F32 | F64 | C32 | C64);
    let allowed = match op {
        Predefined::Sum | Predefined::Prod | Predefined::Min | Predefined::Max => arithmetic,
        Predefined::LAnd | Predefined::LOr | Predefined::LXor => integer || first == Bool,
        Predefined::BAnd | Predefined::BOr | Predefined::BXor => integer,
    };
    if !allowed {
        return None;
    }
    // SAFETY: rsmpi's operator constants are initialised, immutable handles.
    let mpi_op = unsafe {
        match op {
            Predefined::Sum => ffi::RSMPI_SUM,
            Predefined::Prod => ffi::RSMPI_PROD,
            Predefined::Min => ffi::RSMPI_MIN,
            Predefined::Max => ffi::RSMPI_MAX,
            Predefined::LAnd => ffi::RSMPI_LAND,
            Predefined::LOr => ffi::RSMPI_LOR,
            Predefined::LXor => ffi::RSMPI_LXOR,
            Predefined::BAnd => ffi::RSMPI_BAND,
            Predefined::BOr => ffi::RSMPI_BOR,
            Predefined::BXor => ffi::RSMPI_BXOR,
        }
    };
    let per_element = std::mem::size_of::<T>() / first.size();
    Some(Reduction {
        op: mpi_op,
        ty: datatype::predefined(first)?,
        per_element,
        signature: const {
            match T::LAYOUT.dense_uniform() {
                Some(basic) => {
                    agreement::signature_hash(&[(basic, std::mem::size_of::<T>() / basic.size())])
                }
                None => 0, // (no reduction: `first` above is None)
            }
        },
    })
}

/// How MPI reduces elements of a type itself: its operator, the basic type's MPI datatype,
/// the values per element, the hash of the elements' signature.
struct Reduction {
    op: MPI_Op,
    ty: MPI_Datatype,
    per_element: usize,
    signature: u64,
}

impl NativeComm {
    /// The mirror of a run's world communicator: the first `n` ranks of `comm` (collective
    /// over `comm`; `None` on the others).
    pub(crate) fn first_ranks(comm: &SimpleCommunicator, n: usize) -> Option<NativeComm> {
        let color = if (comm.rank() as usize) < n {
            Color::with_value(0)
        } else {
            Color::undefined()
        };
        comm.split_by_color_with_key(color, comm.rank())
            .map(Self::wrap)
    }

    fn wrap(comm: SimpleCommunicator) -> NativeComm {
        // SAFETY: `comm` is a valid communicator and MPI_ERRORS_RETURN a predefined handler:
        // MPI's errors in its collectives come back as codes, which `returned` turns into
        // rpar's errors, instead of ending the job with MPI's own message.
        unsafe { ffi::MPI_Comm_set_errhandler(comm.as_raw(), ffi::RSMPI_ERRORS_RETURN) };
        NativeComm {
            comm,
            types: RefCell::default(),
            last_type: Cell::default(),
            agreement: RefCell::default(),
        }
    }

    /// The mirror of `Comm::dup`.
    pub(crate) fn dup(&self) -> NativeComm {
        Self::wrap(self.comm.duplicate())
    }

    /// The mirror of `Comm::split(color, key)` (ranks ordered by key, then old rank, as rpar's).
    pub(crate) fn split(&self, color: Option<u32>, key: i32) -> Option<NativeComm> {
        let color = match color {
            Some(c) => Color::with_value(c as i32),
            None => Color::undefined(),
        };
        self.comm
            .split_by_color_with_key(color, key)
            .map(Self::wrap)
    }

    /// The mirror of `Comm::self_comm` (of any communicator's process): MPI_COMM_SELF (which
    /// dropping does not free).
    pub(crate) fn self_comm(&self) -> NativeComm {
        Self::wrap(SimpleCommunicator::self_comm())
    }

    /// The mirror of `Group::comm_create_group`: MPI_Comm_create_group of the ranks `members` of
    /// this communicator (in that order) with `tag`; called by the members only.
    pub(crate) fn create_group(&self, members: &[usize], tag: i32) -> Option<NativeComm> {
        let ranks: Vec<Rank> = members.iter().map(|&r| r as Rank).collect();
        let group = self.comm.group().include(&ranks);
        self.comm
            .split_by_subgroup_with_tag(&group, tag)
            .map(Self::wrap)
    }

    /// The mirror of `Comm::split_type`: MPI_Comm_split_type with MPI_COMM_TYPE_SHARED (or
    /// MPI_UNDEFINED for `shared` false, which gives no communicator), ordered by `key`; with
    /// the new communicator, the ranks of this one that are in it, in its order.
    pub(crate) fn split_shared(&self, shared: bool, key: i32) -> Option<(NativeComm, Vec<usize>)> {
        // SAFETY: rsmpi's constants are initialised handles and values; `raw` is written by
        // MPI_Comm_split_type, a collective call every rank of this communicator makes.
        let (raw, null) = unsafe {
            let null = ffi::RSMPI_COMM_NULL;
            let mut raw = null;
            let split_type = if shared {
                ffi::RSMPI_COMM_TYPE_SHARED
            } else {
                ffi::RSMPI_UNDEFINED
            };
            ffi::MPI_Comm_split_type(self.raw(), split_type, key, ffi::RSMPI_INFO_NULL, &mut raw);
            (raw, null)
        };
        if raw == null {
            return None;
        }
        // SAFETY: `raw` is a live intra-communicator that MPI just made for us alone (neither
        // MPI_COMM_WORLD nor MPI_COMM_SELF), used only through the wrapper from here on.
        let comm = unsafe { SimpleCommunicator::from_raw(raw) };
        let n = comm.size();
        let theirs: Vec<Rank> = (0..n).collect();
        let parents = comm
            .group()
            .translate_ranks(&theirs, &self.comm.group())
            .into_iter()
            .map(|r| r.map_or(usize::MAX, |r| r as usize))
            .collect();
        Some((Self::wrap(comm), parents))
    }

    /// The handle of the MPI datatype of `T` (made on first use, freed with this communicator),
    /// its signature's hash folded into the agreement for the call running.
    fn datatype<T: Datatype>(&self) -> Result<MPI_Datatype> {
        let id = TypeId::of::<T>();
        let (handle, signature) = match self.last_type.get() {
            Some((last, handle, signature)) if last == id => (handle, signature),
            _ => self.look_up_type::<T>()?,
        };
        self.agreement
            .borrow_mut()
            .note_type(std::any::type_name::<T>(), signature);
        Ok(handle)
    }

    /// [`NativeComm::datatype`] of a type other than the last: from the map, or made and kept
    /// there.
    fn look_up_type<T: Datatype>(&self) -> Result<(MPI_Datatype, u64)> {
        let id = TypeId::of::<T>();
        let known = self.types.borrow().get(&id).cloned();
        let t = match known {
            Some(t) => t,
            None => {
                let signature = agreement::signature_hash(&Compiled::of_type::<T>().signature);
                let t = Typed {
                    mpi: Rc::new(MpiDatatype::of::<T>()?),
                    signature,
                };
                self.types.borrow_mut().insert(id, t.clone());
                t
            }
        };
        let found = (t.mpi.as_raw(), t.signature);
        self.last_type.set(Some((id, found.0, found.1)));
        Ok(found)
    }

    /// Takes note of a blocking collective call on this communicator (rpar's `communicator`)
    /// before it runs; every [`agreement::CHECK_EVERY`] calls that `may_run_mpi` at first, up to
    /// [`agreement::CHECK_AT_MOST`] (or as `RPAR_COLLECTIVE_CHECK` says), compares the processes'
    /// calls (collective over the communicator).
    ///
    /// # Errors
    ///
    /// [`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) naming the first call
    /// on which the processes differ, on every process.
    pub(crate) fn note_call(
        &self,
        call: &CollectiveCall,
        communicator: u32,
        may_run_mpi: bool,
    ) -> Result<()> {
        let due = self
            .agreement
            .borrow_mut()
            .note(call, communicator, may_run_mpi);
        if due {
            return self.agreement.borrow_mut().check(self.raw(), communicator);
        }
        Ok(())
    }

    /// Compares the processes' calls on this communicator if any was made since the last
    /// comparison (at the end of a run; collective over the communicator).
    ///
    /// # Errors
    ///
    /// As [`NativeComm::note_call`].
    pub(crate) fn compare_calls(&self, communicator: u32) -> Result<()> {
        let mut agreement = self.agreement.borrow_mut();
        if agreement.pending() {
            return agreement.compare(self.raw(), communicator);
        }
        Ok(())
    }

    fn raw(&self) -> ffi::MPI_Comm {
        self.comm.as_raw()
    }

    /// MPI's answer `code` to a collective call (`routine`) as rpar's: an error code (MPI
    /// returns them on these communicators) means the processes' calls differ in a way rpar's
    /// checks let through (a count, say): a collective mismatch, as this process saw it.
    #[inline]
    fn returned(&self, routine: &str, code: std::ffi::c_int) -> Result<()> {
        if code == ffi::MPI_SUCCESS as std::ffi::c_int {
            return Ok(());
        }
        Err(self.refused(routine, code))
    }

    /// [`NativeComm::returned`]'s error (out of the path of every call).
    #[cold]
    #[inline(never)]
    fn refused(&self, routine: &str, code: std::ffi::c_int) -> crate::Error {
        self.agreement
            .borrow()
            .refused(routine, &error_string(code))
    }

    /// MPI_Barrier.
    pub(crate) fn barrier(&self) -> Result<()> {
        // SAFETY: a barrier on a valid communicator.
        let code = unsafe { ffi::MPI_Barrier(self.raw()) };
        self.returned("MPI_Barrier", code)
    }

    /// MPI_Bcast of `buf` from `root`; false if MPI cannot take it (too many elements).
    pub(crate) fn bcast<T: Datatype>(&self, buf: &mut [T], root: usize) -> Result<bool> {
        let Some(n) = count(buf.len()) else {
            return Ok(false);
        };
        let t = self.datatype::<T>()?;
        // SAFETY: `buf` holds `n` elements of the type `t` describes, writable.
        let code =
            unsafe { ffi::MPI_Bcast(buf.as_mut_ptr().cast(), n, t, root as i32, self.raw()) };
        self.returned("MPI_Bcast", code).map(|()| true)
    }

    /// MPI_Allreduce of `send` into `recv` (as long), or with `send` `None` of `recv` in place
    /// (MPI then reads a copy of it: [`input`]); false if MPI cannot reduce these elements with
    /// `op`.
    pub(crate) fn allreduce<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        op: Predefined,
    ) -> Result<bool> {
        let Some(r) = reduction::<T>(op) else {
            return Ok(false);
        };
        let Some(n) = count(recv.len() * r.per_element) else {
            return Ok(false);
        };
        self.agreement
            .borrow_mut()
            .note_type(std::any::type_name::<T>(), r.signature);
        let (mpi_op, t) = (r.op, r.ty);
        let send = input(send, recv);
        // SAFETY: `send` and `recv` hold `n` values of the basic type `t` each (T is dense, of
        // that type only; the caller checked that they are as long); they do not overlap.
        let code = unsafe {
            ffi::MPI_Allreduce(
                send.as_ptr() as *const c_void,
                recv.as_mut_ptr().cast(),
                n,
                t,
                mpi_op,
                self.raw(),
            )
        };
        self.returned("MPI_Allreduce", code).map(|()| true)
    }

    /// MPI_Reduce to `root` of `send` into the root's `recv` (as long; not touched at the other
    /// ranks), or with `send` `None` of `recv` in place (at the root MPI then reads a copy of
    /// it); false if MPI cannot reduce these elements with `op`.
    pub(crate) fn reduce<T: Datatype>(
        &self,
        send: Option<&[T]>,
        recv: &mut [T],
        op: Predefined,
        root: usize,
    ) -> Result<bool> {
        let Some(r) = reduction::<T>(op) else {
            return Ok(false);
        };
        let Some(n) = count(send.map_or(recv.len(), <[T]>::len) * r.per_element) else {
            return Ok(false);
        };
        self.agreement
            .borrow_mut()
            .note_type(std::any::type_name::<T>(), r.signature);
        let (mpi_op, t) = (r.op, r.ty);
        let me = self.comm.rank() as usize;
        // SAFETY: MPI reads `n` values of `t` from the send buffer (`send`, or `recv` or a copy
        // of it); at the root it writes as many into `recv` (the caller checked its length),
        // which does not overlap the send buffer; elsewhere it ignores the receive buffer.
        let code = unsafe {
            if me == root {
                let send = input(send, recv);
                ffi::MPI_Reduce(
                    send.as_ptr() as *const c_void,
                    recv.as_mut_ptr().cast(),
                    n,
                    t,
                    mpi_op,
                    root as i32,
                    self.raw(),
                )
            } else {
                ffi::MPI_Reduce(
                    send.unwrap_or(recv).as_ptr().cast(),
                    std::ptr::null_mut(),
                    n,
                    t,
                    mpi_op,
                    root as i32,
                    self.raw(),
                )
            }
        };
        self.returned("MPI_Reduce", code).map(|()| true)
    }

    /// MPI_Allgather of equal blocks: `recv` is `send.len()` times the ranks.
    pub(crate) fn allgather<T: Datatype>(&self, send: &[T], recv: &mut [T]) -> Result<bool> {
        let (Some(n), Some(_)) = (count(send.len()), count(recv.len())) else {
            return Ok(false);
        };
        let t = self.datatype::<T>()?;
        // SAFETY: `send` holds n elements; `recv` holds n per rank (the caller sized it).
        let code = unsafe {
            ffi::MPI_Allgather(
                send.as_ptr() as *const c_void,
                n,
                t,
                recv.as_mut_ptr().cast(),
                n,
                t,
                self.raw(),
            )
        };
        self.returned("MPI_Allgather", code).map(|()| true)
    }

    /// MPI_Alltoall of equal blocks: `send` and `recv` hold one block per rank.
    pub(crate) fn alltoall<T: Datatype>(&self, send: &[T], recv: &mut [T]) -> Result<bool> {
        let p = self.comm.size() as usize;
        let (Some(n), Some(_)) = (count(send.len() / p.max(1)), count(recv.len())) else {
            return Ok(false);
        };
        let t = self.datatype::<T>()?;
        // SAFETY: both buffers hold p blocks of n elements (the caller sized them).
        let code = unsafe {
            ffi::MPI_Alltoall(
                send.as_ptr() as *const c_void,
                n,
                t,
                recv.as_mut_ptr().cast(),
                n,
                t,
                self.raw(),
            )
        };
        self.returned("MPI_Alltoall", code).map(|()| true)
    }
}

/// MPI's text for the error code `code` (its first line).
pub(super) fn error_string(code: std::ffi::c_int) -> String {
    let mut text = vec![0u8; ffi::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: std::ffi::c_int = 0;
    // SAFETY: `text` has room for MPI_MAX_ERROR_STRING characters, as MPI_Error_string asks.
    let ok = unsafe { ffi::MPI_Error_string(code, text.as_mut_ptr().cast(), &mut len) };
    if ok != ffi::MPI_SUCCESS as std::ffi::c_int {
        return format!("MPI error code {code}");
    }
    text.truncate(len.max(0) as usize);
    // MPICH follows its text with a stack of internal calls: the first line is what it says
    let text = String::from_utf8_lossy(&text);
    let first = text.lines().next().unwrap_or_default();
    first.trim_end_matches(", error stack:").trim().to_string()
}
