//! The engine as a host sees it: scale, one-shot submits, wake-ups, removal, bad input.

mod common;

use std::time::{Duration, Instant};

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Reason, Role, Schedule, SpecError};
use prober_engine::{EngineError, Event};
use prober_testkit::TargetServer;

#[test]
fn one_shot_submits_carry_their_tags() {
    let server = TargetServer::start();
    let mut e = engine();
    for tag in 0..100u64 {
        let spec = match tag % 3 {
            0 => http(&server.url("/ok")),
            1 => ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap(),
            _ => ProbeSpec::exec(&["/bin/sh", "-c", "exit 3"]).unwrap(),
        };
        e.submit(spec, tag).unwrap();
    }
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| ev.len() == 100);
    let mut seen = [false; 100];
    for x in &ev {
        let Event::Check { tag, outcome } = x else { panic!("{x:?}") };
        let want = if tag % 3 == 2 { ProbeResult::Failure } else { ProbeResult::Success };
        assert_eq!(outcome.result, want, "tag {tag}: {outcome:?}");
        if tag % 3 == 2 {
            assert_eq!(outcome.exit_code, Some(3));
        }
        seen[*tag as usize] = true;
    }
    assert!(seen.iter().all(|s| *s));
    assert_eq!(e.in_flight(), 0);
}

#[test]
fn wakeup_from_another_thread_interrupts_a_long_wait() {
    let mut e = engine();
    let h = e.handle();
    // The wake-up is sent once the test is about to wait: it either interrupts the wait or,
    // sent just before it, leaves the engine's wake-up descriptor readable so that the wait
    // returns at once. Either way only the wake-up can end it early.
    let (about_to_wait, go) = std::sync::mpsc::channel::<()>();
    let waker = std::thread::spawn(move || {
        go.recv().unwrap();
        h.wakeup().unwrap();
    });
    let started = Instant::now();
    about_to_wait.send(()).unwrap();
    e.wait(Some(Duration::from_secs(30))).unwrap();
    // Returned long before its 30 s limit: only the wake-up can have ended it.
    assert!(started.elapsed() < Duration::from_secs(10));
    waker.join().unwrap();
}

#[test]
fn handle_submit_and_call_from_another_thread() {
    let server = TargetServer::start();
    let e = engine();
    let et = prober_engine::spawn(e).unwrap();
    let h = et.handle().clone();
    let url = server.url("/health");
    let t = h
        .call(move |e| {
            let t = e.add_target();
            e.set_probe(t, Role::Readiness, http(&url), schedule(10, 1, 1)).map(|_| t)
        })
        .unwrap()
        .unwrap();
    h.submit(ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap(), 99).unwrap();
    let mut got_check = false;
    let mut got_ready = false;
    let limit = Instant::now() + Duration::from_secs(30);
    while !(got_check && got_ready) && Instant::now() < limit {
        match et.events().recv_timeout(Duration::from_millis(100)) {
            Ok(Event::Check { tag: 99, outcome }) => {
                assert_eq!(outcome.result, ProbeResult::Success);
                got_check = true;
            }
            Ok(Event::State { target, result: ProbeResult::Success, .. }) if target == t => {
                got_ready = true
            }
            _ => {}
        }
    }
    assert!(got_check && got_ready);
    et.stop().unwrap();
}

#[test]
fn handles_fail_cleanly_once_the_engine_is_gone() {
    let e = engine();
    let h = e.handle();
    drop(e);
    assert!(h.call(|e| e.add_target()).is_err(), "must not wait forever");
    assert!(h.submit(ProbeSpec::tcp("127.0.0.1", 1).unwrap(), 1).is_err());
    assert!(h.trigger(1, Role::Liveness).is_err());
}

#[test]
fn no_events_after_removal_even_if_queued() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), schedule(10, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) >= 2);
    e.remove_target(t).unwrap();
    let mut after = Vec::new();
    run_for(&mut e, &mut after, Duration::from_millis(100));
    assert!(after.is_empty(), "{after:?}");
}

#[test]
fn bad_input_is_refused_and_the_engine_keeps_running() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    let spec = http(&server.url("/ok"));
    let err = e.set_probe(t, Role::Liveness, spec.clone(), schedule(10, 2, 1)).unwrap_err();
    assert_eq!(err.to_string(), "success threshold must be 1 for liveness probes (got 2)");
    let err = e.set_probe(t, Role::Startup, spec.clone(), schedule(10, 3, 1)).unwrap_err();
    assert!(matches!(err, EngineError::Spec(SpecError::InvalidSchedule(_))));
    let zero_period = Schedule { period: Duration::ZERO, ..Schedule::default() };
    assert!(e.set_probe(t, Role::Readiness, spec.clone(), zero_period).is_err());
    assert!(e.set_probe(t, Role::Readiness, spec.clone(), schedule(10, 0, 1)).is_err());
    assert!(e.set_probe(t, Role::Readiness, spec.clone(), schedule(10, 1, 0)).is_err());
    let bogus = t + 12345;
    assert!(
        matches!(e.set_probe(bogus, Role::Readiness, spec.clone(), schedule(10, 1, 1)), Err(EngineError::UnknownTarget(x)) if x == bogus)
    );
    assert!(matches!(e.trigger(bogus, Role::Readiness), Err(EngineError::UnknownTarget(_))));
    assert!(matches!(e.restart_target(bogus), Err(EngineError::UnknownTarget(_))));
    assert!(matches!(e.trigger(t, Role::Readiness), Err(EngineError::NoProbe(_, Role::Readiness))));
    let mut broken = spec.clone();
    broken.timeout = Duration::ZERO;
    assert!(matches!(e.submit(broken, 1), Err(EngineError::Spec(SpecError::InvalidTimeout(_)))));
    // Still works.
    e.submit(spec, 7).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| !ev.is_empty());
    assert!(
        matches!(&ev[0], Event::Check { tag: 7, outcome } if outcome.result == ProbeResult::Success)
    );
}

#[test]
fn host_names_resolve_off_the_engine_thread() {
    let server = TargetServer::start();
    let mut e = engine();
    e.submit(ProbeSpec::tcp("localhost", server.port().into()).unwrap(), 1).unwrap();
    e.submit(ProbeSpec::tcp("no-such-host.invalid", 80).unwrap(), 2).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| ev.len() == 2);
    for x in &ev {
        let Event::Check { tag, outcome } = x else { panic!() };
        match tag {
            1 => {
                assert_eq!(outcome.result, ProbeResult::Success, "{outcome:?}");
                assert!(outcome.timings.resolve.is_some());
            }
            _ => assert_eq!(outcome.reason, Reason::Dns),
        }
    }
}

#[test]
fn fd_and_timeout_integrate_with_an_outer_poll() {
    let server = TargetServer::start();
    let mut e = engine();
    e.submit(http(&server.url("/slow-headers/50")), 5).unwrap();
    let fd = e.fd();
    let mut ev = Vec::new();
    let limit = Instant::now() + Duration::from_secs(30);
    while ev.is_empty() {
        assert!(Instant::now() < limit);
        // The host's own poll() on the engine's fd, bounded by the engine's timeout.
        let timeout = e.timeout().map_or(-1, |d| d.as_millis().min(1000) as i32);
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid, initialised pollfd and a count of 1.
        unsafe { libc::poll(&mut pfd, 1, timeout) };
        e.step().unwrap();
        e.drain(&mut ev, usize::MAX);
    }
    assert!(
        matches!(&ev[0], Event::Check { tag: 5, outcome } if outcome.result == ProbeResult::Success)
    );
}

#[test]
fn output_beyond_one_turns_read_budget_is_read_to_the_end() {
    // A run reads at most 16 chunks per call and then yields (Step::Yield) so that one flood
    // cannot hold the engine thread; the engine must resume it after its next poll even when
    // no further readiness arrives (everything is already buffered in the socket or pipe).
    let server = TargetServer::start();
    let mut e = engine();
    let body = 400_000;
    let mut spec = ProbeSpec::http(&server.url(&format!("/body/{body}")))
        .unwrap()
        .with_timeout(Duration::from_secs(20))
        .unwrap();
    spec.output_limit = 1 << 20;
    e.submit(spec, 1).unwrap();
    // 400 KB into a pipe whose reader is slower than the writer, then the command stays alive:
    // only the reads themselves (and resumes) can finish the run's output before it exits.
    let mut cmd =
        ProbeSpec::exec(&["/bin/sh", "-c", "head -c 400000 /dev/zero | tr '\\0' a; sleep 1"])
            .unwrap()
            .with_timeout(Duration::from_secs(20))
            .unwrap();
    cmd.output_limit = 1 << 20;
    e.submit(cmd, 2).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| ev.len() == 2);
    for x in &ev {
        let Event::Check { tag, outcome } = x else { panic!("{x:?}") };
        assert_eq!(outcome.result, ProbeResult::Success, "tag {tag}: {:?}", outcome.message);
        assert_eq!(outcome.output.len(), body, "tag {tag}");
        assert!(!outcome.truncated, "tag {tag}");
    }
}

#[test]
fn a_handle_cancels_a_hanging_check_without_waiting_for_the_engine() {
    let server = TargetServer::start();
    let et = prober_engine::spawn(engine()).unwrap();
    let h = et.handle().clone();
    let spec = http(&server.url("/never-answer")).with_timeout(Duration::from_secs(50)).unwrap();
    h.submit(spec, 7).unwrap();
    assert!(server.wait_for_requests(1, Duration::from_secs(30)), "the check never asked");
    h.cancel_check(7).unwrap();
    // The target sees its connection closed well before the check's 50 s timeout (and before
    // the server's own 60 s give-up).
    assert!(server.wait_for_connections_closed(1, Duration::from_secs(25)), "still open");
    let limit = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < limit, "no Check event for the cancelled check");
        if let Ok(Event::Check { tag: 7, outcome }) =
            et.events().recv_timeout(Duration::from_millis(100))
        {
            assert_eq!((outcome.result, outcome.reason), (ProbeResult::Unknown, Reason::Cancelled));
            break;
        }
    }
    et.stop().unwrap();
}
