//! Heap allocations per keep-alive run in steady state, counted on the engine's thread as
//! `prober-engine`'s tests/allocations.rs counts them for the kubelet's path: reusing a kept
//! connection must cost no more than making one (the origin's key is allocated once, when a
//! connection is first kept, and travels with it after that).
//!
//! Alone in its test binary: the counting allocator is this binary's global allocator. It
//! counts per thread, and only on a thread that asked for it, so the server's threads do not
//! show in the figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::time::{Duration, Instant};

use prober_core::{ProbeResult, ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event};

struct Counting;

thread_local! {
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

/// A keep-alive server answering every request with 200 `ok`; returns its port.
fn keep_alive_server() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n) = stream.read(&mut chunk) {
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                        if stream.write_all(ok).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    port
}

fn run(e: &mut Engine, events: &mut Vec<Event>, d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        e.wait(Some(Duration::from_millis(1))).unwrap();
        e.drain(events, usize::MAX);
    }
}

/// As in prober-engine's tests/allocations.rs: allocations that follow the time counted, not
/// the runs (the timing wheel's slots); one allocation more per run always exceeds it.
const NOT_PER_RUN: f64 = 0.5;

#[test]
fn keep_alive_runs_allocate_no_more_than_the_kubelets() {
    let port = keep_alive_server();
    let mut spec = ProbeSpec::http(&format!("http://127.0.0.1:{port}/"))
        .unwrap()
        .with_timeout(Duration::from_secs(60))
        .unwrap();
    spec.set_keep_alive(true).unwrap();
    let targets = 8;
    let mut e =
        Engine::with_config(EngineConfig { every_run: false, ..EngineConfig::default() }).unwrap();
    let schedule =
        Schedule { period: Duration::from_millis(5), jitter: true, ..Schedule::default() };
    for _ in 0..targets {
        let t = e.add_target();
        e.set_probe(t, Role::Readiness, spec.clone(), schedule).unwrap();
    }
    let mut events: Vec<Event> = Vec::with_capacity(1024);
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

    let before_stats = e.keep_alive_stats();
    COUNTING.with(|c| c.set(true));
    let before = ALLOCATIONS.with(Cell::get);
    run(&mut e, &mut events, Duration::from_millis(600));
    let allocations = ALLOCATIONS.with(Cell::get) - before;
    COUNTING.with(|c| c.set(false));
    let stats = e.keep_alive_stats();
    let runs = stats.reused - before_stats.reused;
    assert!(events.is_empty(), "events in steady state: {events:?}");
    assert!(runs >= 100, "only {runs} reused runs in 600 ms at a 5 ms period: {stats:?}");
    // Every run of the counted part reused a connection and kept it again (up to the runs in
    // flight at either end of the window): none was made, none went stale.
    let kept = stats.kept - before_stats.kept;
    assert!(kept.abs_diff(runs) <= targets as u64, "{runs} reused, {kept} kept: {stats:?}");
    assert_eq!(stats.stale + stats.retried, before_stats.stale + before_stats.retried);
    let per_run = allocations as f64 / runs as f64;
    println!("http keep-alive: {runs} runs, {allocations} allocations ({per_run:.2} per run)");
    // As the kubelet's path: the boxed machine, the head buffer, the body kept as the output.
    assert!(per_run < 3.0 + NOT_PER_RUN, "{allocations} allocations in {runs} keep-alive runs");
}
