//! Heap allocations counted per thread, and a steady-state harness around them: what a node
//! agent with thousands of workers pays in the allocator every period, counted (not timed) on
//! the event loop's thread.
//!
//! A test binary installs [`CountingAllocator`] as its global allocator and is then alone in its
//! binary with it:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: CountingAllocator = CountingAllocator;
//! ```
//!
//! It counts per thread, and only on a thread inside [`count_allocations`], so that the target
//! servers' threads, the test harness and tests running in parallel do not show in the figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::Debug;
use std::time::{Duration, Instant};

/// The system allocator, counting the allocations (and reallocations) of the threads that are
/// inside [`count_allocations`].
#[derive(Debug)]
pub struct CountingAllocator;

thread_local! {
    // Per thread, so that tests running in parallel do not count each other's allocations;
    // const-initialised, so that reading them never allocates and the allocator may use them.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments unchanged;
// the counting beside it touches no memory the allocator hands out.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: as above; `ptr` came from this allocator, which is the system's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `f` and returns its result with the number of heap allocations it made on this thread.
///
/// # Panics
///
/// When [`CountingAllocator`] is not the binary's global allocator: every count would be 0, and
/// a bound on it could never fail.
pub fn count_allocations<R>(f: impl FnOnce() -> R) -> (R, u64) {
    COUNTING.with(|c| c.set(true));
    let before = ALLOCATIONS.with(Cell::get);
    drop(std::hint::black_box(Box::new(0u64)));
    let installed = ALLOCATIONS.with(Cell::get) > before;
    let out = f();
    let after = ALLOCATIONS.with(Cell::get);
    COUNTING.with(|c| c.set(false));
    assert!(installed, "CountingAllocator is not this test binary's global allocator");
    // The one allocation above, made to check that allocations are counted, is not `f`'s.
    (out, after - before - 1)
}

/// Allocations per run that do not come with runs: the engine's timing wheel's slots grow while
/// they learn how many entries they hold and give back room beyond 64 entries when emptied, a
/// few times per wheel turn. Their number follows the time counted, not the runs, so on a
/// loaded machine (fewer runs in the same time) it was up to 0.17 per run (3 busy loops beside
/// the test on 2 cores); in an idle one 0.02. Any allocation made per run adds at least 1 per
/// run, so a bound this far above the expected count fails for one allocation more per run
/// and not for load alone.
pub const NOT_PER_RUN: f64 = 0.5;

/// An event loop (`subject`) turned in steady state: the warm-up, then a window in which its
/// allocations are counted.
#[derive(Debug)]
pub struct SteadyState<S, E, T> {
    subject: S,
    events: Vec<E>,
    turn: T,
}

impl<S, E: Debug, T: FnMut(&mut S, &mut Vec<E>)> SteadyState<S, E, T> {
    /// A harness for `subject`; `turn` waits up to a millisecond for work on it, does the work
    /// and appends what it published to the given events.
    pub fn new(subject: S, turn: T) -> Self {
        SteadyState { subject, events: Vec::with_capacity(1024), turn }
    }

    /// The event loop, to read its statistics between the phases.
    pub fn subject(&self) -> &S {
        &self.subject
    }

    fn turn_for(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            (self.turn)(&mut self.subject, &mut self.events);
        }
    }

    /// Turns until `targets` events satisfy `ready` (the 30 s bound only catches a hang), then
    /// 300 ms more for pools, timers and queues to reach their working sizes.
    ///
    /// # Panics
    ///
    /// When the targets are not ready within 30 s, or more than `targets` events satisfy
    /// `ready` (a value changed after the warm-up).
    pub fn warm_up(&mut self, targets: usize, ready: impl Fn(&E) -> bool) {
        let limit = Instant::now() + Duration::from_secs(30);
        let published = |events: &[E]| events.iter().filter(|ev| ready(ev)).count();
        while published(&self.events) < targets {
            assert!(Instant::now() < limit, "targets did not become ready: {:?}", self.events);
            self.turn_for(Duration::from_millis(10));
        }
        self.turn_for(Duration::from_millis(300));
        assert_eq!(published(&self.events), targets, "warm-up events: {:?}", self.events);
        self.events.clear();
    }

    /// Turns for `window` and returns the allocations made meanwhile on this thread.
    ///
    /// # Panics
    ///
    /// When anything was published in the window: a steady state publishes nothing.
    pub fn count(&mut self, window: Duration) -> u64 {
        let ((), allocations) = count_allocations(|| self.turn_for(window));
        assert!(self.events.is_empty(), "events in steady state: {:?}", self.events);
        allocations
    }
}

#[cfg(test)]
mod tests {
    /// This crate's test binary keeps the system allocator: counting there must fail loudly
    /// rather than report 0.
    #[test]
    #[should_panic(expected = "CountingAllocator is not this test binary's global allocator")]
    fn counting_without_the_allocator_fails() {
        let _ = super::count_allocations(|| Box::new(1u8));
    }
}
