//! Non-blocking collectives (MPI_Ibarrier, MPI_Iallreduce, …): the blocking collective's own
//! code, run on a stackful coroutine.
//!
//! `Scope::iallreduce` & co. reserve the call's sequence number on the communicator (so that
//! calls are numbered in the order the rank starts them, as MPI requires), make a view of the
//! communicator for that one call ([`Comm::for_call`]: its collective messages carry and match
//! that number, and in-process its shared memory is an arena of its own), and start the
//! blocking collective on a coroutine. Wherever that code would block — a receive with nothing
//! there, a shared-memory wait, a rendezvous — the endpoint suspends the coroutine instead
//! (`Endpoint::suspend`), back to whoever resumed it: first the call that started it, later
//! the request's `test`/`wait` and every other wait of the rank (the endpoint advances all
//! operations in progress, MPI's progress rule), and at the latest the end of the scope. So
//! each algorithm is written once, for the blocking form, and runs as it is, non-blocking.
//!
//! Overlap: a rank that computes (no rpar calls) after starting a collective has done its
//! first steps already — posted its contribution in shared memory, sent its first messages —
//! and the others go on as far as those let them: in-process, where the default algorithms
//! read each other's posts, the others complete while it computes, and its own part finishes
//! at its next `test` or `wait`. (With message-passing algorithms a rank's later messages wait
//! for its next rpar call, as in MPI libraries without an asynchronous progress thread.)
//!
//! Soundness: the coroutine borrows the scope's buffers; the scope keeps every operation it
//! started and completes it before it returns (or, if its closure panics, unwinds the
//! coroutine's stack, which withdraws whatever it lent), so a request leaked with
//! `mem::forget` or dropped early leaves nothing behind that outlives the buffers.

use super::{Comm, Status};
use crate::transport::{CallState, Endpoint, Progress};
use crate::{Error, Result};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::{Cell, RefCell};
use std::ptr::NonNull;
use std::rc::Rc;

/// The stack of a non-blocking collective's coroutine: mapped, committed as it is touched; the
/// collective code runs in a few pages of it.
const STACK_BYTES: usize = 256 << 10;

/// Stacks of finished coroutines kept per rank thread for the next ones (at most this many):
/// mapping and unmapping a stack per call cost ~130 us a call on 2 threads (the address space's
/// lock and TLB shootdowns), reusing one nothing measurable.
const POOLED_STACKS: usize = 16;

thread_local! {
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// A stack for a new coroutine: a pooled one, or a new mapping.
fn stack() -> Result<DefaultStack> {
    if let Some(stack) = STACKS.with_borrow_mut(Vec::pop) {
        return Ok(stack);
    }
    DefaultStack::new(STACK_BYTES).map_err(|e| {
        Error::invalid(
            "a non-blocking collective",
            format!("could not map a stack of {STACK_BYTES} bytes for it: {e}"),
        )
    })
}

/// Keeps a finished coroutine's stack for the next one.
fn recycle(task: Task) {
    let stack = task.into_stack();
    STACKS.with_borrow_mut(|pool| {
        if pool.len() < POOLED_STACKS {
            pool.push(stack);
        }
    });
}

/// The coroutine a non-blocking collective runs on: resumed with nothing, suspends with nothing,
/// returns the collective's outcome.
type Task = Coroutine<(), (), Result<()>, DefaultStack>;

/// Where a coroutine's yielder is, once it has run: a call that would block inside it suspends
/// through it.
pub(crate) type YielderPtr = Option<NonNull<Yielder<(), ()>>>;

/// One non-blocking collective in progress: its coroutine, and what the endpoint holds for it
/// while it is suspended.
pub(crate) struct Operation {
    ep: Rc<Endpoint>,
    /// `None` once the coroutine has returned (its outcome is then in `outcome`).
    coroutine: RefCell<Option<Task>>,
    /// The coroutine's yielder, set by the coroutine when it first runs.
    yielder: Rc<Cell<YielderPtr>>,
    /// The coroutine's collective state while it is suspended.
    state: Cell<CallState>,
    /// How it ended, until a request takes it.
    outcome: RefCell<Option<Result<()>>>,
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("done", &self.coroutine.borrow().is_none())
            .finish()
    }
}

impl Operation {
    /// Starts `run` (the blocking collective, on its own view of the communicator) on a new
    /// coroutine and runs it until it would block.
    ///
    /// # Safety
    ///
    /// Whatever `run` borrows must stay valid until the operation has completed or been
    /// dropped; the caller (a [`Scope`](super::Scope)) keeps it and completes or drops it
    /// before the borrows end.
    pub(crate) unsafe fn start(
        ep: &Rc<Endpoint>,
        run: impl FnOnce() -> Result<()>,
    ) -> Result<Rc<Operation>> {
        let stack = stack()?;
        let yielder = Rc::new(Cell::new(None));
        let slot = yielder.clone();
        let endpoint = ep.clone();
        let body = move |y: &Yielder<(), ()>, ()| {
            let me = NonNull::from(y);
            slot.set(Some(me));
            endpoint.set_coroutine(Some(me));
            run()
        };
        // SAFETY: the closure's borrows outlive the coroutine by this function's contract; the
        // coroutine runs only on this thread (it is not `Send`).
        let coroutine = unsafe { Coroutine::with_stack_unchecked(stack, body) };
        let op = Rc::new(Operation {
            ep: ep.clone(),
            coroutine: RefCell::new(Some(coroutine)),
            yielder,
            state: Cell::new((None, None)),
            outcome: RefCell::new(None),
        });
        if !op.advance() {
            let weak: std::rc::Weak<dyn Progress> = Rc::downgrade(&op) as _;
            ep.track(weak);
        }
        Ok(op)
    }

    /// Takes the outcome once the operation is done: `Some` empty status, or its error.
    pub(crate) fn take(&self) -> Option<Result<Status>> {
        self.outcome
            .borrow_mut()
            .take()
            .map(|outcome| outcome.map(|()| Status::empty()))
    }

    /// Drives the operation to its end, making progress on this rank's mailbox meanwhile.
    pub(crate) fn finish(&self) -> Result<()> {
        while !self.advance() {
            self.ep.wait_progress()?;
        }
        Ok(())
    }

    /// Unwinds a suspended coroutine (its rank is failing): everything on its stack is dropped,
    /// lent posts and rendezvous offers withdrawn.
    pub(crate) fn abandon(&self) {
        let coroutine = self.coroutine.borrow_mut().take();
        if let Some(coroutine) = coroutine {
            let _in_it = Resumed::enter(self);
            drop(coroutine);
        }
    }
}

/// The endpoint switched to an operation's coroutine (its yielder and collective state) for
/// one resume, and back when this drops — also when the coroutine's panic unwinds through.
struct Resumed<'a> {
    op: &'a Operation,
    outer_yielder: YielderPtr,
    outer_state: CallState,
}

impl<'a> Resumed<'a> {
    fn enter(op: &'a Operation) -> Self {
        let outer_yielder = op.ep.set_coroutine(op.yielder.get());
        let outer_state = op.ep.swap_call_state(op.state.get());
        Resumed {
            op,
            outer_yielder,
            outer_state,
        }
    }
}

impl Drop for Resumed<'_> {
    fn drop(&mut self) {
        let ep = &self.op.ep;
        self.op.state.set(ep.swap_call_state(self.outer_state));
        ep.set_coroutine(self.outer_yielder);
    }
}

impl Progress for Operation {
    fn advance(&self) -> bool {
        let Ok(mut slot) = self.coroutine.try_borrow_mut() else {
            return false; // it is running: this is a wait inside it
        };
        let Some(coroutine) = slot.as_mut() else {
            return true;
        };
        let resumed = {
            let _in_it = Resumed::enter(self);
            coroutine.resume(())
        };
        match resumed {
            CoroutineResult::Yield(()) => false,
            CoroutineResult::Return(outcome) => {
                if let Some(task) = slot.take() {
                    recycle(task);
                }
                *self.outcome.borrow_mut() = Some(outcome);
                true
            }
        }
    }
}

impl Comm {
    /// A view of this communicator for one collective call, number `seq`: the same ranks and
    /// endpoint, its messages numbered `seq` (and so matched only by that call), and, in-process,
    /// a shared-memory arena of its own — so that a non-blocking call proceeds beside the calls
    /// after it.
    pub(crate) fn for_call(&self, seq: u32) -> Comm {
        let call = Comm {
            ep: self.ep.clone(),
            group: self.group.clone(),
            rank: self.rank,
            id: self.id,
            coll_seq: Cell::new(seq),
            choices: Cell::new(self.choices.get()),
            topology: Cell::new(self.topology.get()),
            arena: Default::default(),
            // MPI's own collectives would block the coroutine inside MPI: on the MPI transport
            // a non-blocking call runs rpar's algorithms over MPI's point-to-point instead
            native: None,
            hints: Cell::new(self.hints.get()),
            attributes: Default::default(),
        };
        if self.ep.wire().is_none() {
            let context = call.collective_context();
            let arena = self.ep.fabric().call_arena(context, seq, &call.group);
            let _ = call.arena.set(arena);
        }
        call
    }

    /// Reserves the sequence number of the next collective call (the next non-blocking one).
    pub(crate) fn reserve_call(&self) -> u32 {
        let seq = self.coll_seq.get();
        self.coll_seq.set(seq.wrapping_add(1));
        seq
    }
}
