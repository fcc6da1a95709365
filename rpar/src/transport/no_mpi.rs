//! Without the `mpi` cargo feature there is no MPI link: [`Wire`] has no values, so an
//! endpoint's `Option<Wire>` is always `None` and every MPI branch compiles away.

use super::{ElemType, Header, Message, PendingSend};
use crate::collective::Predefined;
use crate::datatype::CommittedType;
use crate::Result;

/// The MPI link of a process; uninhabited without the `mpi` feature.
#[derive(Debug)]
pub(crate) enum Wire {}

impl Wire {
    /// See the MPI transport's `Wire::send_borrowed`.
    ///
    /// # Safety
    ///
    /// Never callable: there is no `Wire`.
    pub(crate) unsafe fn send_borrowed(
        &self,
        _to: usize,
        _header: &Header,
        (_elem, _count): (ElemType, usize),
        _src: *const u8,
        _sync: u32,
    ) -> Result<Option<PendingSend>> {
        match *self {}
    }

    /// See the MPI transport's `Wire::wait_sent`.
    pub(crate) fn wait_sent(&self, _sent: &PendingSend) {
        match *self {}
    }

    /// See the MPI transport's `Wire::send_typed`.
    ///
    /// # Safety
    ///
    /// Never callable: there is no `Wire`.
    pub(crate) unsafe fn send_typed(
        &self,
        _to: usize,
        _header: &Header,
        _ty: &CommittedType,
        _count: usize,
        _start: *const u8,
    ) -> Result<()> {
        match *self {}
    }

    /// See the MPI transport's `Wire::send_message`.
    pub(crate) fn send_message(&self, _to: usize, _header: &Header, _m: Message) -> Result<()> {
        match *self {}
    }

    /// See the MPI transport's `Wire::recv_direct`.
    ///
    /// # Safety
    ///
    /// Never callable: there is no `Wire`.
    pub(crate) unsafe fn recv_direct(
        &self,
        _from: usize,
        _header: &Header,
        _buffer: (ElemType, *mut u8, usize),
        _idle: impl FnMut(u32) -> Result<()>,
        _put_back: impl FnOnce(Header, Message),
    ) -> Result<Option<usize>> {
        match *self {}
    }

    /// See the MPI transport's `Wire::post_direct`.
    ///
    /// # Safety
    ///
    /// Never callable: there is no `Wire`.
    pub(crate) unsafe fn post_direct(
        &self,
        _from: usize,
        _header: &Header,
        _buffer: (ElemType, *mut u8, usize),
        _most_bytes: usize,
    ) -> Option<DirectPost> {
        match *self {}
    }

    /// See the MPI transport's `Wire::test_direct`.
    pub(crate) fn test_direct(&self, _post: &mut DirectPost) -> Result<Option<Direct>> {
        match *self {}
    }

    /// See the MPI transport's `Wire::cancel_direct`.
    pub(crate) fn cancel_direct(&self, _post: &mut DirectPost) -> Result<Option<Direct>> {
        match *self {}
    }

    /// See the MPI transport's `Wire::direct_is_live`.
    pub(crate) fn direct_is_live(&self, _post: &DirectPost) -> bool {
        match *self {}
    }

    /// See the MPI transport's `Wire::direct_bound`.
    pub(crate) fn direct_bound(
        &self,
        _from: usize,
        _header: &Header,
        _elem: ElemType,
    ) -> Option<usize> {
        match *self {}
    }

    /// See the MPI transport's `Wire::poll`.
    pub(crate) fn poll(&self) -> Result<Option<(Header, Message)>> {
        match *self {}
    }

    /// See the MPI transport's `Wire::sync_number`.
    pub(crate) fn sync_number(&self) -> u32 {
        match *self {}
    }

    /// See the MPI transport's `Wire::acknowledge`.
    pub(crate) fn acknowledge(&self, _to: usize, _sync: u32) -> Result<()> {
        match *self {}
    }

    /// See the MPI transport's `Wire::acked`.
    pub(crate) fn acked(&self, _sync: u32) -> bool {
        match *self {}
    }

    /// See the MPI transport's `Wire::forget_ack`.
    pub(crate) fn forget_ack(&self, _sync: u32) {
        match *self {}
    }

    /// See the MPI transport's `Wire::progressed_since`.
    pub(crate) fn progressed_since(&self) -> bool {
        match *self {}
    }
}

/// A direct receive of MPI's; uninhabited without the `mpi` feature.
#[derive(Debug)]
pub(crate) enum DirectPost {}

impl DirectPost {
    /// See the MPI transport's `DirectPost::class`.
    pub(crate) fn class(&self) -> (usize, u32) {
        match *self {}
    }
}

/// How a direct receive ended (see the MPI transport's `Direct`): only the MPI transport makes
/// one, the endpoint's code reads it either way.
#[allow(dead_code)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direct {
    /// This many elements arrived in the buffer.
    Received(usize),
    /// Nothing arrived: receive the ordinary way.
    Retired,
}

/// A large payload still in MPI; uninhabited without the `mpi` feature.
#[derive(Debug)]
pub(crate) enum RemotePayload {}

impl RemotePayload {
    /// See the MPI transport's `RemotePayload::receive_into`.
    ///
    /// # Safety
    ///
    /// Never callable: there is no `RemotePayload`.
    pub(crate) unsafe fn receive_into(self, _dst: *mut u8) {
        match self {}
    }

    /// See the MPI transport's `RemotePayload::receive`.
    pub(crate) fn receive(self) -> Vec<u8> {
        match self {}
    }
}

/// The MPI mirror of a communicator; uninhabited without the `mpi` feature.
#[derive(Debug)]
pub(crate) enum NativeComm {}

impl NativeComm {
    /// See the MPI transport's `NativeComm::dup`.
    pub(crate) fn dup(&self) -> NativeComm {
        match *self {}
    }

    /// See the MPI transport's `NativeComm::split`.
    pub(crate) fn split(&self, _color: Option<u32>, _key: i32) -> Option<NativeComm> {
        match *self {}
    }

    /// See the MPI transport's `NativeComm::self_comm`.
    pub(crate) fn self_comm(&self) -> NativeComm {
        match *self {}
    }

    /// See the MPI transport's `NativeComm::create_group`.
    pub(crate) fn create_group(&self, _members: &[usize], _tag: i32) -> Option<NativeComm> {
        match *self {}
    }

    /// See the MPI transport's `NativeComm::split_shared`.
    pub(crate) fn split_shared(
        &self,
        _shared: bool,
        _key: i32,
    ) -> Option<(NativeComm, Vec<usize>)> {
        match *self {}
    }
}

/// The native collectives; never callable without the `mpi` feature.
impl NativeComm {
    pub(crate) fn note_call(
        &self,
        _call: &super::CollectiveCall,
        _communicator: u32,
        _may_run_mpi: bool,
    ) -> Result<()> {
        match *self {}
    }

    pub(crate) fn barrier(&self) -> Result<()> {
        match *self {}
    }

    pub(crate) fn bcast<T>(&self, _buf: &mut [T], _root: usize) -> Result<bool> {
        match *self {}
    }

    pub(crate) fn allreduce<T>(
        &self,
        _send: Option<&[T]>,
        _recv: &mut [T],
        _op: Predefined,
    ) -> Result<bool> {
        match *self {}
    }

    pub(crate) fn reduce<T>(
        &self,
        _send: Option<&[T]>,
        _recv: &mut [T],
        _op: Predefined,
        _root: usize,
    ) -> Result<bool> {
        match *self {}
    }

    pub(crate) fn allgather<T>(&self, _send: &[T], _recv: &mut [T]) -> Result<bool> {
        match *self {}
    }

    pub(crate) fn alltoall<T>(&self, _send: &[T], _recv: &mut [T]) -> Result<bool> {
        match *self {}
    }
}
