//! Heap allocations per keep-alive run in steady state, counted on the engine's thread as
//! `prober-engine`'s tests/allocations.rs counts them for the kubelet's path: reusing a kept
//! connection must cost no more than making one (the origin's key is allocated once, when a
//! connection is first kept, and travels with it after that).
//!
//! Alone in its test binary: the counting allocator (`prober_testkit::allocations`) is this
//! binary's global allocator. It counts per thread, and only on a thread that asked for it, so
//! the server's threads do not show in the figures.

use std::time::Duration;

use prober_core::{ProbeResult, ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event};
use prober_testkit::allocations::{CountingAllocator, NOT_PER_RUN, SteadyState};
use prober_testkit::keep_alive::KeepAliveServer;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn keep_alive_runs_allocate_no_more_than_the_kubelets() {
    let server = KeepAliveServer::start();
    let mut spec = ProbeSpec::http(&format!("http://127.0.0.1:{}/", server.port()))
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
    let mut steady = SteadyState::new(e, |e: &mut Engine, events: &mut Vec<Event>| {
        e.wait(Some(Duration::from_millis(1))).unwrap();
        e.drain(events, usize::MAX);
    });
    steady.warm_up(targets, |ev| matches!(ev, Event::State { result: ProbeResult::Success, .. }));

    let before_stats = steady.subject().keep_alive_stats();
    let allocations = steady.count(Duration::from_millis(600));
    let stats = steady.subject().keep_alive_stats();
    let runs = stats.reused - before_stats.reused;
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
