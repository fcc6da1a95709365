//! The single-copy claim of typed sends, measured: large non-contiguous messages go from the
//! sender's memory into the receiver's, segment by segment, with no buffer in between. A
//! counting global allocator records the largest allocation made while each message travels;
//! none may be as large as the message (an intermediate pack buffer would be exactly that).
//!
//! One test function runs every case in turn: the allocator's record is global to the process.

use rpar::{Comm, Datatype, TypeMap};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

/// The system allocator, recording the largest block asked for while `WATCHING` is set.
struct Counting;

static WATCHING: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

fn record(bytes: usize) {
    if WATCHING.load(SeqCst) {
        LARGEST.fetch_max(bytes, SeqCst);
    }
}

// SAFETY: every call is passed on unchanged to the system allocator; recording touches only
// atomics (no allocation).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: the caller's guarantee for `layout`, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: as in `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: `ptr` came from this allocator, that is from System, with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as in `realloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A struct with padding: 9 bytes of data in 16.
#[derive(Datatype, Clone, Copy, Debug, PartialEq)]
struct Padded {
    x: f64,
    tag: u8,
}

/// Elements per message: 2 MiB of packed f64s, far above the rendezvous threshold.
const N: usize = 1 << 18;

/// Runs `program` on 2 ranks and returns the largest allocation made inside its calls of
/// [`watched`], and rank 1's result.
fn largest_allocation<R: Send + 'static>(
    program: impl Fn(&Comm) -> rpar::Result<Option<R>> + Send + Sync + 'static,
) -> (usize, R) {
    LARGEST.store(0, SeqCst);
    let mut got = rpar::run(2, move |world| program(&world)).expect("the program runs");
    let result = got.pop().flatten().expect("rank 1's result");
    (LARGEST.load(SeqCst), result)
}

/// `travel()` with the allocator watching, on both ranks: only while the message travels
/// (the buffers are made before, the data checked after).
fn watched(world: &Comm, travel: impl FnOnce() -> rpar::Result<()>) -> rpar::Result<()> {
    world.barrier()?;
    if world.rank() == 0 {
        WATCHING.store(true, SeqCst);
    }
    world.barrier()?;
    travel()?;
    world.barrier()?;
    WATCHING.store(false, SeqCst);
    Ok(())
}

/// Rank 0's side of the first cases: every other f64 of `0, 1, 2, …` (N of them) to rank 1.
fn send_every_other(world: &Comm) -> rpar::Result<Option<bool>> {
    let every_other = TypeMap::vector(N, 1, 2, &f64::type_map())?.commit();
    let data = doubles(2 * N);
    watched(world, || {
        world.send(rpar::Typed::new(&data, &every_other, 1), 1, 0)
    })?;
    Ok(None)
}

fn doubles(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64).collect()
}

fn padded(n: usize) -> Vec<Padded> {
    (0..n)
        .map(|i| Padded {
            x: i as f64,
            tag: i as u8,
        })
        .collect()
}

#[test]
fn large_typed_messages_travel_with_no_buffer_as_large_as_the_message() {
    // (case, packed bytes of its message, largest allocation, data right)
    let mut cases: Vec<(&str, usize, usize, bool)> = Vec::new();

    // typed send, typed receive into another strided layout
    let (largest, ok) = largest_allocation(|world| {
        if world.rank() == 0 {
            return send_every_other(world);
        }
        let thirds = TypeMap::vector(N, 1, 3, &f64::type_map())?.commit();
        let mut into = vec![0.0f64; 3 * N];
        watched(world, || {
            world
                .recv_into(rpar::Typed::new(&mut into, &thirds, 1), 0, 0)
                .map(drop)
        })?;
        Ok(Some((0..N).all(|k| into[3 * k] == (2 * k) as f64)))
    });
    cases.push(("typed -> typed (strided)", 8 * N, largest, ok));

    // typed send, typed receive into a gap-free layout: gathered straight in
    let (largest, ok) = largest_allocation(|world| {
        if world.rank() == 0 {
            return send_every_other(world);
        }
        let dense = TypeMap::contiguous(N, &f64::type_map())?.commit();
        let mut into = vec![0.0f64; N];
        watched(world, || {
            world
                .recv_into(rpar::Typed::new(&mut into, &dense, 1), 0, 0)
                .map(drop)
        })?;
        Ok(Some((0..N).all(|k| into[k] == (2 * k) as f64)))
    });
    cases.push(("typed -> typed (gap-free)", 8 * N, largest, ok));

    // typed send, plain receive into a gap-free Rust type
    let (largest, ok) = largest_allocation(|world| {
        if world.rank() == 0 {
            return send_every_other(world);
        }
        let mut into = vec![0.0f64; N];
        watched(world, || world.recv_into(&mut into[..], 0, 0).map(drop))?;
        Ok(Some((0..N).all(|k| into[k] == (2 * k) as f64)))
    });
    cases.push(("typed -> plain f64", 8 * N, largest, ok));

    // typed send of a padded struct, plain receive into the struct: the bytes go where its
    // type map says, past the padding
    let (largest, ok) = largest_allocation(|world| {
        let (ty, data) = (Padded::type_map().commit(), padded(N));
        if world.rank() == 0 {
            watched(world, || world.send(rpar::Typed::new(&data, &ty, N), 1, 0))?;
            return Ok(None);
        }
        let mut into = vec![Padded { x: -1.0, tag: 0 }; N];
        watched(world, || world.recv_into(&mut into[..], 0, 0).map(drop))?;
        Ok(Some(into == padded(N)))
    });
    cases.push(("typed -> plain padded struct", 9 * N, largest, ok));

    // plain send of the padded struct, typed receive into every other element
    let (largest, ok) = largest_allocation(|world| {
        let data = padded(N);
        if world.rank() == 0 {
            watched(world, || world.send(&data[..], 1, 0))?;
            return Ok(None);
        }
        let alternate = TypeMap::vector(N, 1, 2, &Padded::type_map())?.commit();
        let mut into = vec![Padded { x: -1.0, tag: 0 }; 2 * N];
        watched(world, || {
            world
                .recv_into(rpar::Typed::new(&mut into, &alternate, 1), 0, 0)
                .map(drop)
        })?;
        let want = padded(N);
        Ok(Some((0..N).all(|k| into[2 * k] == want[k])))
    });
    cases.push(("plain padded struct -> typed", 9 * N, largest, ok));

    for &(name, message, largest, ok) in &cases {
        assert!(ok, "{name}: wrong data");
        assert!(
            largest < message,
            "{name}: an allocation of {largest} bytes while a message of {message} bytes \
             travelled (an intermediate buffer)"
        );
    }
}
