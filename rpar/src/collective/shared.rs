//! Shared-memory collective algorithms: ranks that are threads of one process read each
//! other's data in place instead of sending messages. Each family offers them as its
//! `SharedMemory` algorithm, and `Auto` picks them where they win (see each family's table).
//! Only the in-process transport has them (ranks on MPI are processes that share no memory);
//! elsewhere `SharedMemory` runs the family's message-passing default.
//!
//! The ranks of a communicator share an arena (`transport/shared.rs`). A call is one *step*
//! (two for a large allreduce): every rank posts — its data copied into its slot of the arena
//! when small (up to [`EAGER_BYTES`], after which it may return at once), lent in place when
//! large (it returns once every rank has read it) — and then reads what it needs straight from
//! the others' posts into its own buffer. Every read checks that the other rank is in the same
//! collective call ([`Error::CollectiveMismatch`](crate::Error::CollectiveMismatch) otherwise)
//! with the same type signature. Ranks of a rooted collective that read nothing or only the
//! root's post also look at their neighbour's call if it has posted already
//! ([`Step::check_next`]), so that ranks naming different roots are caught — usually, not
//! surely: a neighbour that has not posted yet is not waited for (the message-passing
//! algorithms do not catch it either: their stray messages are never received). Reductions
//! combine the contributions in rank order,
//! `x0 ∘ x1 ∘ … ∘ x(p-1)`, so non-commutative operators get MPI's result, and every rank of an
//! allreduce gets bitwise the same.
//!
//! Costs, for `p` ranks and `m` bytes per rank, with `c` the cost of one synchronisation (a
//! cache line handed between cores, or a thread switch when ranks outnumber cores), `beta` per
//! byte copied and `gamma` per byte combined:
//!
//! - barrier: `c`.
//! - bcast: `c + m beta` on each reader; a small message's root returns at once.
//! - reduce: small, `c + (p - 1) m (beta + gamma)` at the root, the others return at once;
//!   large, as the large allreduce with only the root collecting the blocks.
//! - allreduce: `c + p m (beta + gamma)` per rank when small; when large, a reduce-scatter and an
//!   allgather in place: `2c + 2 m beta + m gamma` per rank.
//! - allgather, alltoall: `c + (p - 1) m beta` per rank.

use super::op::ReduceOp;
use super::reduce::even_slots;
use super::scratch::Scratch;
use super::select::Algorithm;
use super::{Allgather, Allreduce, Alltoall, Barrier, Bcast, Channel, Reduce};
use crate::datatype::Datatype;
use crate::transport::{Arena, ElemType, Endpoint, Post, Step, SLOT_ALIGN};
use crate::{Comm, Error, Result};
use std::mem::MaybeUninit;

/// Posts up to this many bytes are copied into the arena, so that their rank need not wait for
/// its readers; larger ones are lent in place (one copy in all, by each reader).
const EAGER_BYTES: usize = 16 * 1024;

/// A reduction to one root of vectors larger than this shares the combining among all ranks
/// (two steps); smaller ones are combined by the root alone, straight from the posts (one step:
/// with ranks outnumbering cores, the second synchronisation of all ranks costs more than the
/// root's extra work — 8 ranks on 2 cores, 64 KiB: 424 us in blocks, 101 us for linear
/// message passing).
const IN_BLOCKS_BYTES: usize = 256 * 1024;

/// Whether the shared-memory algorithms can run on `comm` for elements of `T`: in-process,
/// with an element alignment that the arena's storage provides.
pub(crate) fn available<T: Datatype>(comm: &Comm) -> bool {
    std::mem::align_of::<T>() <= SLOT_ALIGN && comm.arena().is_some()
}

/// The bytes of `data`, padding included (hence `MaybeUninit`).
fn bytes_of<T: Datatype>(data: &[T]) -> &[MaybeUninit<u8>] {
    // SAFETY: any initialised memory may be viewed as `MaybeUninit<u8>`s (padding bytes are
    // uninitialised, which `MaybeUninit` allows), for the same lifetime and length in bytes.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), std::mem::size_of_val(data)) }
}

/// What every algorithm works with: the arena, this rank's endpoint, its rank and the size.
struct Shm<'a> {
    arena: &'a Arena,
    ep: &'a Endpoint,
    me: usize,
    p: usize,
}

impl<'a> Shm<'a> {
    /// The shared memory of `comm`'s ranks, for an algorithm of the family `A`: reported to the
    /// trace as `A`'s `SharedMemory`, which runs.
    fn of<A: Algorithm>(comm: &'a Comm) -> Result<Self> {
        let arena = comm.arena().ok_or_else(|| {
            Error::invalid(
                "a shared-memory collective",
                "the ranks share no memory on the MPI transport",
            )
        })?;
        if let Some(shared) = A::SHARED {
            comm.runs(shared);
        }
        Ok(Shm {
            arena,
            ep: comm.endpoint(),
            me: comm.rank(),
            p: comm.size(),
        })
    }

    /// Starts a step posting a copy of `data` (or nothing).
    fn post<T: Datatype>(&self, data: Option<&[T]>) -> Result<Step<'a>> {
        let data = data.map(|d| (bytes_of(d), ElemType::of::<T>()));
        self.arena.step(self.ep, self.me, data)
    }

    /// Runs `f` in a step that lends `data` in place; returns once nobody reads it.
    fn lend<T: Datatype, R>(
        &self,
        data: &[T],
        f: impl FnOnce(&Step<'a>) -> Result<R>,
    ) -> Result<R> {
        self.arena
            .lend(self.ep, self.me, bytes_of(data), ElemType::of::<T>(), f)
    }

    /// Posts `data` — copied if it is small, else lent — and runs `f` in the step.
    fn share<T: Datatype, R>(
        &self,
        data: &[T],
        f: impl FnOnce(&Step<'a>) -> Result<R>,
    ) -> Result<R> {
        if std::mem::size_of_val(data) <= EAGER_BYTES {
            f(&self.post(Some(data))?)
        } else {
            self.lend(data, f)
        }
    }

    /// Posts `data` for others to read and returns without reading anything: at once if it is
    /// small, once it has been read if it is lent. (It looks at its neighbour's call on the
    /// way now and then: [`Step::check_next`].)
    fn give<T: Datatype>(&self, data: &[T]) -> Result<()> {
        self.share(data, |step| {
            // a root running ahead would pay a cache miss on every call for this look at a
            // line its neighbour has not written yet (2 ranks, 8 B bcast: 0.10 -> 0.26 us), so
            // it looks at every 16th call only; the readers look every time
            if step.number() % 16 == 0 {
                step.check_next()?;
            }
            Ok(())
        })
    }

    /// Rank `r`'s post in `step` as `n` elements of `T`, given to `f`: checked to come from the
    /// same collective call, to have `T`'s type signature and to hold `n` elements.
    fn read<T: Datatype, R>(
        &self,
        step: &Step<'_>,
        r: usize,
        n: usize,
        f: impl FnOnce(&[T]) -> R,
    ) -> Result<R> {
        step.read(r, |post| {
            self.check::<T>(r, n, post)?;
            let data = if n == 0 {
                &[]
            } else {
                // SAFETY: `check` made sure that the post holds `n` values with `T`'s
                // signature, hence valid `T`s; its storage is aligned for `T` (slot storage is
                // SLOT_ALIGN-aligned, `available` checked `T`'s alignment; lent posts are `T`
                // slices), and it stays unchanged while `Step::read` runs this closure.
                unsafe { std::slice::from_raw_parts(post.data.cast::<T>(), n) }
            };
            Ok(f(data))
        })
    }

    /// Checks rank `r`'s post against this rank's call and an expectation of `n` `T`s.
    fn check<T: Datatype>(&self, r: usize, n: usize, post: &Post) -> Result<()> {
        let size = std::mem::size_of::<T>();
        let want = ElemType::of::<T>();
        let same_type = match post.elem {
            None => post.bytes == 0,
            Some(elem) => {
                elem.id == want.id || elem.reads_as(post.bytes / elem.size.max(1), want, n)
            }
        };
        if !same_type {
            let elem = post.elem.unwrap_or(want);
            return Err(self.ep.collective_failure(Error::TypeMismatch {
                sent: format!("{} x {}", post.bytes / elem.size.max(1), (elem.name)()),
                expected: (want.name)().to_string(),
                source_rank: r,
            }));
        }
        if post.bytes != n * size {
            let operation = self.ep.collective().map_or("a collective", |c| c.operation);
            return Err(self.ep.collective_failure(Error::invalid(
                operation,
                format!(
                    "rank {r} contributed {} bytes where rank {} expected {}",
                    post.bytes,
                    self.me,
                    n * size
                ),
            )));
        }
        Ok(())
    }

    /// `acc = x(a) ∘ x(a+1) ∘ … ∘ x(b-1)` for `ranks` `a..b` of the step, over `block` of their
    /// posts (each holds `total` elements). What `acc` held before is overwritten.
    fn combine<T: Datatype, O: ReduceOp<T>>(
        &self,
        step: &Step<'_>,
        acc: &mut [T],
        op: &O,
        ranks: std::ops::Range<usize>,
        (total, block): (usize, std::ops::Range<usize>),
    ) -> Result<()> {
        let mut ranks = ranks;
        let Some(first) = ranks.next() else {
            return Ok(());
        };
        self.read(step, first, total, |x| {
            acc.copy_from_slice(&x[block.clone()])
        })?;
        for r in ranks {
            self.read(step, r, total, |x| op.reduce_right(acc, &x[block.clone()]))?;
        }
        Ok(())
    }
}

/// MPI_Barrier: every rank posts nothing and waits for every post.
pub(crate) fn barrier(comm: &Comm) -> Result<()> {
    let shm = Shm::of::<Barrier>(comm)?;
    let step = shm.post::<u8>(None)?;
    step.await_all()?;
    (0..shm.p).try_for_each(|r| shm.read::<u8, _>(&step, r, 0, |_| ()))
}

/// MPI_Bcast from `root`: the root posts, the others copy its post.
pub(crate) fn bcast<T: Datatype>(comm: &Comm, buf: &mut [T], root: usize) -> Result<()> {
    let shm = Shm::of::<Bcast>(comm)?;
    if shm.me == root {
        return shm.give(buf);
    }
    let step = shm.post::<T>(None)?;
    let n = buf.len();
    shm.read(&step, root, n, |x| buf.copy_from_slice(x))?;
    if (shm.me + 1) % shm.p == root {
        return Ok(()); // the next member is the root, whose call `read` just checked
    }
    step.check_next()
}

/// MPI_Reduce to `root` of every rank's `send` into the root's `acc`, or with `send` `None` of
/// `acc` in place (MPI_IN_PLACE; the root's `acc` ends as the result). Outside the root `acc` is
/// not touched when `send` is given. Small vectors (up to [`IN_BLOCKS_BYTES`]): every rank posts
/// (a copy, and returns at once, if it is small) and the root combines them all. Larger ones: as
/// [`in_blocks`], the root alone collecting the blocks.
pub(crate) fn reduce<T: Datatype, O: ReduceOp<T>>(
    comm: &Comm,
    send: Option<&[T]>,
    acc: &mut [T],
    op: &O,
    root: usize,
) -> Result<()> {
    let shm = Shm::of::<Reduce>(comm)?;
    let input = send.unwrap_or(acc);
    if std::mem::size_of_val(input) > IN_BLOCKS_BYTES {
        return in_blocks(&shm, send, acc, op, shm.me == root);
    }
    if shm.me != root {
        return shm.give(input);
    }
    let step = shm.post::<T>(None)?;
    step.await_all()?;
    let n = acc.len();
    match send {
        // the lower ranks' combination lands in `acc`, the root's own is read where it is
        Some(own) if root > 0 => {
            shm.combine(&step, acc, op, 0..root, (n, 0..n))?;
            op.reduce_right(acc, own);
        }
        Some(own) => acc.copy_from_slice(own),
        None if root > 0 => {
            let mut lower = Scratch::new(acc, n);
            shm.combine(&step, &mut lower, op, 0..root, (n, 0..n))?;
            op.reduce_left(&lower, acc);
        }
        None => {}
    }
    for r in root + 1..shm.p {
        shm.read(&step, r, n, |x| op.reduce_right(acc, x))?;
    }
    Ok(())
}

/// MPI_Allreduce of `send` into `acc` (as long), or with `send` `None` of `acc` in place
/// (MPI_IN_PLACE). Small vectors: every rank posts its input and combines every post into
/// `acc`. Large ones: [`in_blocks`].
pub(crate) fn allreduce<T: Datatype, O: ReduceOp<T>>(
    comm: &Comm,
    send: Option<&[T]>,
    acc: &mut [T],
    op: &O,
) -> Result<()> {
    let shm = Shm::of::<Allreduce>(comm)?;
    let n = acc.len();
    let input = send.unwrap_or(acc);
    if std::mem::size_of_val(input) > EAGER_BYTES {
        return in_blocks(&shm, send, acc, op, true);
    }
    let step = shm.post(Some(input))?;
    step.await_all()?;
    shm.combine(&step, acc, op, 0..shm.p, (n, 0..n))
}

/// The reduction of large vectors, in two steps with every input read in place (`send`, or
/// with `send` `None` `acc` itself): each rank combines its `1/p` block of all ranks' inputs (a
/// reduce-scatter, the work shared by all), then each rank that `collects` copies every rank's
/// combined block into its `acc` (as long as the input; not touched elsewhere).
fn in_blocks<T: Datatype, O: ReduceOp<T>>(
    shm: &Shm<'_>,
    send: Option<&[T]>,
    acc: &mut [T],
    op: &O,
    collects: bool,
) -> Result<()> {
    let input = send.unwrap_or(acc);
    let n = input.len();
    let blocks = even_slots(n, shm.p, op.block_len());
    let mine = blocks[shm.me]..blocks[shm.me + 1];
    let mut part = Scratch::new(input, mine.len());
    shm.lend(input, |step| {
        step.await_all()?;
        shm.combine(step, &mut part, op, 0..shm.p, (n, mine.clone()))
    })?;
    shm.lend(&part, |step| {
        if !collects {
            return Ok(());
        }
        step.await_all()?;
        for r in 0..shm.p {
            let block = blocks[r]..blocks[r + 1];
            let into = &mut acc[block.clone()];
            if r == shm.me {
                into.copy_from_slice(&part);
            } else {
                shm.read(step, r, block.len(), |x| into.copy_from_slice(x))?;
            }
        }
        Ok(())
    })
}

/// MPI_Allgather: every rank posts its block and copies every other rank's into `recv`.
pub(crate) fn allgather<T: Datatype>(comm: &Comm, send: &[T], recv: &mut [T]) -> Result<()> {
    let shm = Shm::of::<Allgather>(comm)?;
    let n = send.len();
    shm.share(send, |step| {
        step.await_all()?;
        for (r, into) in recv.chunks_exact_mut(n.max(1)).enumerate().take(shm.p) {
            if r == shm.me {
                into.copy_from_slice(send);
            } else {
                shm.read(step, r, n, |x| into.copy_from_slice(x))?;
            }
        }
        Ok(())
    })
}

/// MPI_Alltoall: every rank posts its whole send buffer (`p` blocks) and copies block `me` of
/// every rank's into `recv`.
pub(crate) fn alltoall<T: Datatype>(comm: &Comm, send: &[T], recv: &mut [T]) -> Result<()> {
    let shm = Shm::of::<Alltoall>(comm)?;
    let n = send.len() / shm.p;
    let me = shm.me;
    shm.share(send, |step| {
        step.await_all()?;
        for (r, into) in recv.chunks_exact_mut(n.max(1)).enumerate().take(shm.p) {
            if r == me {
                into.copy_from_slice(&send[me * n..(me + 1) * n]);
            } else {
                shm.read(step, r, send.len(), |x| {
                    into.copy_from_slice(&x[me * n..(me + 1) * n]);
                })?;
            }
        }
        Ok(())
    })
}
