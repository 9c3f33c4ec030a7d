//! `ShardedEngine`: engine threads that the host's thread drives as it drives one engine (a
//! descriptor, a wait, a drain). Completions run on the host's thread; an engine thread's end is
//! reported and makes the descriptor readable.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use prober_core::{ProbeResult, Role};
use prober_engine::{EngineConfig, Event, ShardedEngine};
use prober_testkit::TargetServer;

#[test]
fn completions_run_on_the_host_thread_and_events_come_through_the_queue() {
    let server = TargetServer::start();
    let mut g = ShardedEngine::start(EngineConfig::default(), 2).unwrap();
    let url = server.url("/health");
    let here = std::thread::current().id();
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    for tag in 0..4 {
        let ran_on = ran_on.clone();
        g.submit_with(http(&url), tag, move |o| {
            ran_on.lock().unwrap().push((std::thread::current().id(), o.result));
        })
        .unwrap();
    }
    let t = g.handle().add_target().unwrap();
    g.handle().set_probe(t, Role::Readiness, http(&url), schedule(3_600_000, 1, 1)).unwrap();
    let limit = Instant::now() + Duration::from_secs(30);
    let mut ready = false;
    let mut events = Vec::new();
    while !ready || ran_on.lock().unwrap().len() < 4 {
        assert!(Instant::now() < limit, "not everything came: {:?}", ran_on.lock().unwrap());
        g.wait(Some(Duration::from_millis(100))).unwrap();
        g.drain(&mut events, usize::MAX);
        ready |= events.drain(..).any(|ev| {
            matches!(ev, Event::State { target, result: ProbeResult::Success, .. } if target == t)
        });
    }
    assert_eq!(*ran_on.lock().unwrap(), [(here, ProbeResult::Success); 4]);
    assert!(g.ended().is_none());
}

#[test]
fn an_engine_thread_that_panics_is_reported_and_wakes_the_host() {
    let mut g = ShardedEngine::start(EngineConfig::default(), 2).unwrap();
    assert!(g.handle().call(|_| -> () { panic!("deliberate test panic") }).is_err());
    let mut p = libc::pollfd { fd: g.fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, whose descriptor `g` keeps open; bounded far above the end.
    assert_eq!(unsafe { libc::poll(&mut p, 1, 30_000) }, 1, "the descriptor turned readable");
    g.step().unwrap();
    let end = g.ended().expect("the end is reported");
    assert!(end.panicked && end.message == "deliberate test panic", "{end:?}");
    // The ended engine answers no call any more (instead of leaving its caller waiting).
    assert!(g.handle().call_each(|e| e.target_count()).is_err());
}
