//! Heap allocations per periodic run in steady state: what a node agent with thousands of
//! workers pays in the allocator every period, counted (not timed) on the engine's thread.
//!
//! Alone in its test binary: the counting allocator is this binary's global allocator. It
//! counts per thread, and only on a thread that asked for it, so the target server's threads,
//! the harness and the other test do not show in the figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};

use prober_core::{ProbeResult, ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event};
use prober_testkit::TargetServer;

struct Counting;

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
unsafe impl GlobalAlloc for Counting {
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

#[global_allocator]
static GLOBAL: Counting = Counting;

fn run(e: &mut Engine, events: &mut Vec<Event>, d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        e.wait(Some(Duration::from_millis(1))).unwrap();
        e.drain(events, usize::MAX);
    }
}

/// Runs `spec` as a readiness probe of `targets` targets every 5 ms: a warm-up, then 600 ms
/// counted. The probe timeout is a minute: every run puts its deadline in the timing wheel,
/// and that far ahead they share one slot of the wheel's fourth level instead of filling a new
/// one every 268 ms. Returns (runs, allocations) of the counted part; runs are connections, read
/// from the socket pool's counter (every run of these specs takes a pooled socket).
fn steady_state(spec: &ProbeSpec, targets: usize) -> (u64, u64) {
    let mut e =
        Engine::with_config(EngineConfig { every_run: false, ..EngineConfig::default() }).unwrap();
    let schedule =
        Schedule { period: Duration::from_millis(5), jitter: true, ..Schedule::default() };
    for _ in 0..targets {
        let t = e.add_target();
        e.set_probe(t, Role::Readiness, spec.clone(), schedule).unwrap();
    }
    let mut events: Vec<Event> = Vec::with_capacity(1024);
    // Warm-up: every target publishes Success (the bound only catches a hang), then 300 ms
    // more for the pool, the timing wheel and the event queue to reach their working sizes.
    let limit = Instant::now() + Duration::from_secs(30);
    let published = |events: &[Event]| {
        events
            .iter()
            .filter(|ev| matches!(ev, Event::State { result: ProbeResult::Success, .. }))
            .count()
    };
    while published(&events) < targets {
        assert!(Instant::now() < limit, "targets did not become ready: {events:?}");
        run(&mut e, &mut events, Duration::from_millis(10));
    }
    run(&mut e, &mut events, Duration::from_millis(300));
    assert_eq!(published(&events), targets, "warm-up events: {events:?}");
    events.clear();

    let runs_before = e.socket_pool_stats().reused;
    COUNTING.with(|c| c.set(true));
    let before = ALLOCATIONS.with(Cell::get);
    run(&mut e, &mut events, Duration::from_millis(600));
    let allocations = ALLOCATIONS.with(Cell::get) - before;
    COUNTING.with(|c| c.set(false));
    let runs = e.socket_pool_stats().reused - runs_before;
    assert!(events.is_empty(), "events in steady state: {events:?}");
    assert!(runs >= 100, "only {runs} runs in 600 ms at a 5 ms period");
    (runs, allocations)
}

/// Allocations that do not come with runs: the timing wheel's slots grow while they learn how
/// many entries they hold and give back room beyond 64 entries when emptied, a few times per
/// wheel turn. Their number follows the time counted, not the runs, so on a loaded machine
/// (fewer runs in the same time) it was up to 0.17 per run (3 busy loops beside the test on 2
/// cores); in an idle one 0.02. Any allocation made per run adds at least 1 per run, so the
/// bounds below sit half a run above the expected count: one allocation more per run always
/// fails them, load alone does not.
const NOT_PER_RUN: f64 = 0.5;

#[test]
fn tcp_runs_allocate_nothing_in_steady_state() {
    let server = TargetServer::start();
    let tcp = ProbeSpec::tcp("127.0.0.1", i64::from(server.port()))
        .unwrap()
        .with_timeout(Duration::from_secs(60))
        .unwrap();
    let (runs, allocations) = steady_state(&tcp, 8);
    let per_run = allocations as f64 / runs as f64;
    println!("tcp: {runs} runs, {allocations} allocations ({per_run:.2} per run)");
    // An IP literal's address is kept inline by the connector and the socket comes from the
    // pool: a run copies nothing and makes no outcome text.
    assert!(per_run < NOT_PER_RUN, "{allocations} allocations in {runs} TCP runs");
}

#[test]
fn http_runs_allocate_only_their_machine_and_buffers() {
    let server = TargetServer::start();
    let http =
        ProbeSpec::http(&server.url("/ok")).unwrap().with_timeout(Duration::from_secs(60)).unwrap();
    let (runs, allocations) = steady_state(&http, 8);
    let per_run = allocations as f64 / runs as f64;
    println!("http: {runs} runs, {allocations} allocations ({per_run:.2} per run)");
    // Three per run: the boxed machine, the buffer the response head is read into, and the
    // body kept as the outcome's output. The URL, the headers and the request bytes come from
    // the worker's prepared spec (21 allocations per run before it).
    assert!(per_run < 3.0 + NOT_PER_RUN, "{allocations} allocations in {runs} HTTP runs");
}
