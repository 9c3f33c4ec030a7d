//! Engines sharded over two threads behind one handle (`spawn_sharded`): targets spread over
//! both engines and reached through their ids, one-shot checks from many threads, cancelling
//! a check on either engine. (Dropping the group: `threads_drop.rs`, alone in its process.)

mod common;

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use prober_core::{Outcome, ProbeResult, ProbeSpec, Reason, Role};
use prober_engine::{EngineConfig, EngineError, EngineThread, Event, TargetId};
use prober_testkit::TargetServer;

fn two_engines() -> EngineThread {
    let et = prober_engine::spawn_sharded(EngineConfig::default(), 2).unwrap();
    assert_eq!(et.handle().engines(), 2);
    et
}

/// Receives events until `done` says so; panics after 30 s without it.
fn recv_until(et: &EngineThread, mut done: impl FnMut(Event) -> bool) {
    let limit = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < limit, "the awaited events did not all come");
        if et.events().recv_timeout(Duration::from_millis(100)).is_ok_and(&mut done) {
            return;
        }
    }
}

#[test]
fn targets_spread_over_both_engines_reach_their_states_in_order() {
    let server = TargetServer::start();
    let et = two_engines();
    let h = et.handle();
    let url = server.url("/health");
    // Half probe every 50 ms; half once an hour, so only a trigger that reaches their engine
    // runs them before the test ends. Targets go to the engines in turn: pairs of targets
    // have one on each engine.
    let mut periodic = Vec::new();
    let mut triggered = Vec::new();
    for i in 0..20 {
        let t = h.add_target().unwrap();
        let hourly = (i / 2) % 2 == 1;
        let period = if hourly { 3_600_000 } else { 50 };
        h.set_probe(t, Role::Readiness, http(&url), schedule(period, 1, 1)).unwrap();
        if hourly { triggered.push(t) } else { periodic.push(t) }
    }
    assert_eq!(h.call_each(|e| e.target_count()).unwrap(), [10, 10], "targets spread evenly");
    for &t in &triggered {
        h.trigger(t, Role::Readiness).unwrap();
    }

    // Each target's events in its engine's order: the initial Failure, then Success.
    let mut seen: HashMap<TargetId, Vec<(ProbeResult, bool)>> = HashMap::new();
    let all: Vec<TargetId> = periodic.iter().chain(&triggered).copied().collect();
    recv_until(&et, |ev| {
        if let Event::State { target, role: Role::Readiness, result, outcome } = ev {
            seen.entry(target).or_default().push((result, outcome.is_some()));
        }
        all.iter().all(|t| seen.get(t).is_some_and(|s| s.len() >= 2))
    });
    for t in &all {
        let want = [(ProbeResult::Failure, false), (ProbeResult::Success, true)];
        assert_eq!(seen[t][..2], want, "target {t}");
        assert_eq!(h.published(*t, Role::Readiness).unwrap(), ProbeResult::Success);
    }

    // Removal reaches the target's engine; a second removal is refused there.
    for &t in &triggered {
        h.remove_target(t).unwrap();
        assert!(matches!(h.remove_target(t), Err(EngineError::UnknownTarget(x)) if x == t));
    }
    assert_eq!(h.call_each(|e| e.target_count()).unwrap(), [5, 5]);
    assert!(matches!(h.trigger(triggered[0], Role::Readiness), Ok(())), "ignored when applied");

    // An id says its engine: each engine's own new target is reached through the handle.
    for (engine, t) in h.call_each(|e| e.add_target()).unwrap().into_iter().enumerate() {
        let count = h.call_target(t, move |e| e.remove_target(t).map(|()| e.target_count()));
        assert_eq!(count.unwrap().unwrap(), 5, "engine {engine}'s target {t}");
    }
    et.stop().unwrap();
}

#[test]
fn one_shot_checks_from_several_threads_all_complete() {
    let server = TargetServer::start();
    let et = two_engines();
    let (done_tx, done_rx) = mpsc::channel::<(u64, Box<Outcome>)>();
    const THREADS: u64 = 4;
    const EACH: u64 = 50;
    std::thread::scope(|s| {
        for n in 0..THREADS {
            let (h, url, done_tx) = (et.handle().clone(), server.url("/ok"), done_tx.clone());
            s.spawn(move || {
                for i in 0..EACH {
                    let tag = n * EACH + i;
                    // Every other check answers through a completion instead of an event.
                    if tag % 2 == 0 {
                        h.submit(http(&url), tag).unwrap();
                    } else {
                        let done_tx = done_tx.clone();
                        h.submit_with(http(&url), tag, move |o| drop(done_tx.send((tag, o))))
                            .unwrap();
                    }
                }
            });
        }
    });
    let total = THREADS * EACH;
    let mut outcomes: HashMap<u64, Box<Outcome>> = HashMap::new();
    recv_until(&et, |ev| {
        if let Event::Check { tag, outcome } = ev {
            assert!(outcomes.insert(tag, outcome).is_none(), "tag {tag} twice");
        }
        outcomes.len() as u64 == total / 2
    });
    for _ in 0..total / 2 {
        let (tag, outcome) = done_rx.recv_timeout(Duration::from_secs(30)).expect("completion");
        assert!(outcomes.insert(tag, outcome).is_none(), "tag {tag} twice");
    }
    assert_eq!(outcomes.len() as u64, total);
    for (tag, o) in &outcomes {
        assert_eq!(o.result, ProbeResult::Success, "tag {tag}: {:?}", o.message);
    }
    assert_eq!(server.requests(), total);
    assert_eq!(et.handle().call_each(|e| e.in_flight()).unwrap(), [0, 0]);
    et.stop().unwrap();
}

#[test]
fn cancel_reaches_a_check_on_either_engine() {
    let server = TargetServer::start();
    let et = two_engines();
    let h = et.handle();
    let spec = http(&server.url("/never-answer")).with_timeout(Duration::from_secs(50)).unwrap();
    // Submits go to the engines in turn: one hanging check on each.
    h.submit(spec.clone(), 7).unwrap();
    h.submit(spec, 7).unwrap();
    assert!(server.wait_for_requests(2, Duration::from_secs(30)), "the checks never asked");
    assert_eq!(h.call_each(|e| e.in_flight()).unwrap(), [1, 1], "one check per engine");
    // A check of another tag is left alone.
    h.submit(ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap(), 8).unwrap();

    h.cancel_check(7).unwrap();
    let mut cancelled = 0;
    recv_until(&et, |ev| {
        if let Event::Check { tag: 7, outcome } = ev {
            assert_eq!((outcome.result, outcome.reason), (ProbeResult::Unknown, Reason::Cancelled));
            cancelled += 1;
        }
        cancelled == 2
    });
    assert!(server.wait_for_connections_closed(2, Duration::from_secs(25)), "still open");
    assert_eq!(h.call_each(|e| e.in_flight()).unwrap(), [0, 0]);
    et.stop().unwrap();
}

#[test]
fn host_runs_are_completed_on_the_engine_that_announced_them() {
    let et = two_engines();
    let h = et.handle();
    let spec = ProbeSpec::host_run("check").unwrap().with_timeout(ms(30_000)).unwrap();
    for _ in 0..2 {
        let t = h.add_target().unwrap();
        h.set_probe(t, Role::Readiness, spec.clone(), schedule(3_600_000, 1, 1)).unwrap();
        h.trigger(t, Role::Readiness).unwrap();
    }
    assert_eq!(h.call_each(|e| e.target_count()).unwrap(), [1, 1]);
    // Each announcement answered through the group's handle, which finds the run's engine.
    let mut ready = std::collections::HashSet::new();
    recv_until(&et, |ev| match ev {
        Event::HostRun { run, .. } => {
            h.complete_run(run, ProbeResult::Success, b"ok".to_vec()).unwrap();
            false
        }
        Event::State { target, result: ProbeResult::Success, .. } => {
            ready.insert(target);
            ready.len() == 2
        }
        _ => false,
    });
    let stats = h.call_each(|e| e.host_run_stats()).unwrap();
    for s in &stats {
        assert!(s.completed >= 1 && s.unknown == 0 && s.late == 0, "{stats:?}");
    }
    et.stop().unwrap();
}

/// An event the thread took from its engine but could not send (the channel full) is not sent
/// after its target's removal: events in the channel before the removal come, then none.
#[test]
fn a_held_event_of_a_removed_target_is_not_sent_after_the_removal() {
    let server = TargetServer::start();
    let config = EngineConfig { every_run: true, ..EngineConfig::default() };
    let et = prober_engine::spawn_sharded(config, 1).unwrap();
    let h = et.handle();
    let url = server.url("/health");
    let busy = h.add_target().unwrap();
    h.set_probe(busy, Role::Readiness, http(&url), schedule(1, 1, 1)).unwrap();
    // Nothing is received: the channel fills, then the engine keeps events. Ten kept means the
    // thread's sends have been failing for several turns, so it holds one of `busy`'s.
    let limit = Instant::now() + Duration::from_secs(30);
    while h.call(|e| e.pending_events()).unwrap() < 10 {
        assert!(Instant::now() < limit, "the channel did not fill");
        std::thread::sleep(Duration::from_millis(5));
    }
    h.remove_target(busy).unwrap();
    let marker = h.add_target().unwrap();
    h.set_probe(marker, Role::Readiness, http(&url), schedule(3_600_000, 1, 1)).unwrap();
    // The channel's events (all `busy`'s, sent before the removal), then `marker`'s.
    let mut before = 0;
    recv_until(&et, |ev| match ev.target() {
        Some(t) if t == busy => {
            before += 1;
            assert!(before <= prober_engine::CHANNEL_CAP, "an event of a removed target");
            false
        }
        Some(t) => t == marker,
        None => false,
    });
    assert_eq!(before, prober_engine::CHANNEL_CAP);
}
