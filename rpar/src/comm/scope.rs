//! [`Scope`]: non-blocking sends from borrowed buffers without a copy, made sound by waiting for
//! all of them at the end of the scope (as `std::thread::scope` does for threads).

use super::p2p::{check_send_tag, finish_rendezvous, SendTarget};
use super::{Buffer, BufferMut, Comm, Request, Status};
use crate::transport::PendingSend;
use crate::Result;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// A scope for zero-copy non-blocking operations; see [`Comm::scope`].
pub struct Scope<'scope, 'env: 'scope> {
    comm: &'env Comm,
    pending: RefCell<Vec<(PendingSend, SendTarget)>>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("pending_sends", &self.pending.borrow().len())
            .finish()
    }
}

impl Comm {
    /// Runs `f` with a [`Scope`] in which `isend` does not copy its buffer: large messages are
    /// copied once, straight from it into the receiver's buffer. All sends started in the scope
    /// are complete when `scope` returns, so the borrowed buffers are free again.
    ///
    /// ```
    /// rpar::run(2, |world| {
    ///     let other = 1 - world.rank();
    ///     let out = vec![world.rank() as f64; 1 << 16];
    ///     let mut inc = vec![0.0f64; 1 << 16];
    ///     world.scope(|s| {
    ///         let r = s.irecv_into(&mut inc[..], other, 0)?;
    ///         s.isend(&out[..], other, 0)?;
    ///         r.wait()?;
    ///         Ok(())
    ///     })?;
    ///     assert!(inc.iter().all(|&x| x == other as f64));
    ///     Ok(())
    /// })?;
    /// # Ok::<(), rpar::Error>(())
    /// ```
    pub fn scope<'env, F, R>(&'env self, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        let scope = Scope {
            comm: self,
            pending: RefCell::new(Vec::new()),
            _scope: PhantomData,
            _env: PhantomData,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        let pending = scope.pending.take();
        match outcome {
            Ok(result) => {
                let mut first_err = None;
                for (p, to) in &pending {
                    if first_err.is_some() {
                        p.cancel();
                    } else if let Err(e) = finish_rendezvous(self.endpoint(), p, *to) {
                        first_err = Some(e);
                    }
                }
                match first_err {
                    Some(e) => Err(e),
                    None => result,
                }
            }
            Err(panic) => {
                for (p, _) in &pending {
                    p.cancel();
                }
                resume_unwind(panic)
            }
        }
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Starts a send of `buf`, which stays borrowed until the scope ends (MPI_Isend).
    pub fn isend<B: Buffer + ?Sized>(
        &'scope self,
        buf: &'scope B,
        dest: usize,
        tag: i32,
    ) -> Result<Request<'scope>> {
        check_send_tag(tag)?;
        let comm = self.comm;
        let elems = buf.as_elems();
        let status = Status {
            source: comm.rank(),
            tag,
            count: elems.len(),
        };
        // SAFETY: `buf` is borrowed for 'scope, and the scope finishes (or withdraws) every
        // pending rendezvous before it returns, on every path including a panic.
        let pending = unsafe { comm.post_send(comm.p2p_context(), elems, dest, tag)? };
        Ok(match pending {
            None => Request::done(comm.endpoint().clone(), status),
            Some(p) => {
                let to = (comm.p2p_context(), dest, tag);
                self.pending.borrow_mut().push((p.clone(), to));
                Request::rendezvous(comm.endpoint().clone(), p, to, status)
            }
        })
    }

    /// Starts a receive into `buf` (MPI_Irecv), as [`Comm::irecv_into`].
    pub fn irecv_into<B: BufferMut + ?Sized>(
        &'scope self,
        buf: &'scope mut B,
        source: usize,
        tag: i32,
    ) -> Result<Request<'scope>> {
        self.comm.irecv_into(buf, source, tag)
    }

    /// The communicator of the scope.
    pub fn comm(&self) -> &Comm {
        self.comm
    }
}
