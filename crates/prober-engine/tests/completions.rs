//! A completion per one-shot submission (`Engine::submit_with`, `Handle::submit_with`): the
//! outcome goes to the submitter's function, once, on the engine's thread, and never to the
//! event queue; cancelled checks and a panicking function included.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::*;
use prober_core::{Outcome, ProbeResult, ProbeSpec, Reason};
use prober_engine::{EngineError, Event};
use prober_testkit::TargetServer;

#[test]
fn each_check_s_outcome_goes_to_its_own_function_and_not_to_the_queue() {
    let server = TargetServer::start();
    let mut e = engine();
    let (tx, rx) = mpsc::channel::<(u64, Box<Outcome>, std::thread::ThreadId)>();
    for n in 0..30u64 {
        let spec = match n % 3 {
            0 => http(&server.url("/ok")),
            1 => ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap(),
            _ => ProbeSpec::exec(&["/bin/sh", "-c", "exit 3"]).unwrap(),
        };
        let tx = tx.clone();
        // Every check shares tag 0: the function, not the tag, says whose outcome it is.
        e.submit_with(spec, 0, move |o| {
            tx.send((n, o, std::thread::current().id())).unwrap();
        })
        .unwrap();
    }
    drop(tx);
    let mut events = Vec::new();
    let mut got = Vec::new();
    let limit = std::time::Instant::now() + Duration::from_secs(30);
    while got.len() < 30 {
        assert!(std::time::Instant::now() < limit, "outcomes so far: {}", got.len());
        e.wait(Some(ms(50))).unwrap();
        e.drain(&mut events, usize::MAX);
        got.extend(rx.try_iter());
    }
    assert!(events.iter().all(|ev| !matches!(ev, Event::Check { .. })), "{events:#?}");
    let mut seen = [0u32; 30];
    for (n, o, thread) in &got {
        assert_eq!(*thread, std::thread::current().id(), "called off the engine's thread");
        let want = if n % 3 == 2 { ProbeResult::Failure } else { ProbeResult::Success };
        assert_eq!(o.result, want, "check {n}: {o:?}");
        seen[*n as usize] += 1;
    }
    assert!(seen.iter().all(|c| *c == 1), "each function called once: {seen:?}");
    assert_eq!(e.in_flight(), 0);
}

#[test]
fn a_cancelled_check_tells_its_function_and_a_refused_one_never_calls_it() {
    let server = TargetServer::start();
    let et = prober_engine::spawn(engine()).unwrap();
    let h = et.handle().clone();
    let (tx, rx) = mpsc::channel::<Box<Outcome>>();
    let spec = http(&server.url("/never-answer")).with_timeout(Duration::from_secs(50)).unwrap();
    let t = tx.clone();
    h.submit_with(spec, 9, move |o| t.send(o).unwrap()).unwrap();
    assert!(server.wait_for_requests(1, Duration::from_secs(30)), "the check never asked");
    h.cancel_check(9).unwrap();
    let o = rx.recv_timeout(Duration::from_secs(30)).expect("no outcome for the cancelled check");
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Cancelled));

    // A spec the engine refuses: an error, and the function dropped uncalled.
    let mut bad = ProbeSpec::tcp("127.0.0.1", 1).unwrap();
    bad.timeout = Duration::ZERO;
    let t = tx.clone();
    let err = h.submit_with(bad, 10, move |o| t.send(o).unwrap()).unwrap_err();
    assert!(matches!(err, EngineError::Spec(_)), "{err:?}");
    drop(tx);
    assert!(rx.recv_timeout(Duration::from_secs(5)).is_err(), "a refused check was answered");
    et.stop().unwrap();
}

#[test]
fn a_panicking_function_ends_only_its_own_call() {
    let server = TargetServer::start();
    let mut e = engine();
    e.submit_with(ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap(), 1, |_| {
        panic!("the host's function panics")
    })
    .unwrap();
    let (tx, rx) = mpsc::channel::<Box<Outcome>>();
    e.submit_with(http(&server.url("/ok")), 2, move |o| tx.send(o).unwrap()).unwrap();
    let mut events = Vec::new();
    let limit = std::time::Instant::now() + Duration::from_secs(30);
    let o = loop {
        assert!(std::time::Instant::now() < limit, "the second check never finished");
        e.wait(Some(ms(50))).unwrap();
        e.drain(&mut events, usize::MAX);
        if let Ok(o) = rx.try_recv() {
            break o;
        }
    };
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    // The engine goes on: a later check still runs.
    e.submit(ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap(), 3).unwrap();
    run_until(&mut e, &mut events, |ev| {
        ev.iter().any(|x| matches!(x, Event::Check { tag: 3, .. }))
    });
}

/// A check that ends within its submit (its only address refused by the allow-list before any
/// socket is made) queues its event outside any turn: the engine's timeout says "now", so a
/// host that submits, waits and then drains does not sleep on it; once a turn has passed, an
/// undrained event no longer makes the timeout "now" (a host that never drains does not spin).
#[test]
fn an_event_queued_within_its_submit_does_not_let_the_host_sleep() {
    let mut e = engine();
    let mut spec = ProbeSpec::tcp("127.0.0.1", 9).unwrap();
    let only_ten =
        prober_core::AddressFilter::parse(&[] as &[&str], &["10.0.0.0/8"], &[] as &[&str]).unwrap();
    spec.set_address_filter(Some(std::sync::Arc::new(only_ten))).unwrap();
    assert_eq!(e.timeout(), None, "an idle engine has nothing to wake for");
    e.submit(spec, 7).unwrap();
    assert_eq!(e.pending_events(), 1, "the check ended within its submit");
    assert_eq!(e.timeout(), Some(Duration::ZERO));
    // What a host does next: wait (returns at once), then drain.
    e.wait(None).unwrap();
    let mut events = Vec::new();
    e.drain(&mut events, usize::MAX);
    match events.as_slice() {
        [Event::Check { tag: 7, outcome }] => assert_eq!(outcome.reason, Reason::Denied),
        other => panic!("{other:?}"),
    }
    // Queued again outside a turn, then a turn passes undrained: no longer "now".
    let mut spec = ProbeSpec::tcp("127.0.0.1", 9).unwrap();
    let only_ten =
        prober_core::AddressFilter::parse(&[] as &[&str], &["10.0.0.0/8"], &[] as &[&str]).unwrap();
    spec.set_address_filter(Some(std::sync::Arc::new(only_ten))).unwrap();
    e.submit(spec, 8).unwrap();
    e.step().unwrap();
    assert_eq!(e.pending_events(), 1);
    assert_eq!(e.timeout(), None);
}
