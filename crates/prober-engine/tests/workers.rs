//! The kubelet's worker cases (`worker_test.go` and the results manager's `TestUpdates`,
//! <https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/prober/worker_test.go>; numbered W7 to W17 and W20 here, in the order
//! ported) as real runs through the engine against the target server and its health switch,
//! with millisecond periods.
//! Assertions are on the sequence of events, never on wall-clock timings.

mod common;

use common::*;
use prober_core::{ProbeResult::*, ProbeSpec, Role, Schedule};
use prober_engine::Event;
use prober_testkit::TargetServer;

#[test]
fn w7_w8_initial_values_then_first_results() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), schedule(20, 1, 3)).unwrap();
    e.set_probe(t, Role::Liveness, http(&server.url("/health")), schedule(20, 1, 3)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| states(ev, t).contains(&(Role::Readiness, Success)));
    let s = states(&ev, t);
    // Initial values first: readiness Failure, liveness Success; then readiness turns Success.
    assert_eq!(&s[..2], &[(Role::Readiness, Failure), (Role::Liveness, Success)]);
    assert_eq!(s[2], (Role::Readiness, Success));
    // Liveness stays Success: no second liveness state event.
    assert_eq!(s.iter().filter(|(r, _)| *r == Role::Liveness).count(), 1);
}

#[test]
fn w8_nothing_runs_during_the_initial_delay() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    let sched = Schedule { initial_delay: ms(60_000), ..schedule(10, 1, 3) };
    e.set_probe(t, Role::Startup, http(&server.url("/health")), sched).unwrap();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), sched).unwrap();
    let mut ev = Vec::new();
    run_for(&mut e, &mut ev, ms(300));
    assert_eq!(states(&ev, t), vec![(Role::Startup, Unknown), (Role::Readiness, Failure)]);
    assert_eq!(server.requests(), 0);
}

#[test]
fn w9_failure_threshold() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), schedule(10, 1, 3)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) >= 3);
    server.set_healthy(false);
    run_until(&mut e, &mut ev, |ev| {
        states(ev, t).last() == Some(&(Role::Readiness, Failure)) && states(ev, t).len() == 3
    });
    let tr = trace(&ev, t, Role::Readiness);
    // After the health flip, exactly three failed runs precede the published Failure.
    let pos = tr.iter().rposition(|x| x == "=F").unwrap();
    assert_eq!(&tr[pos - 3..=pos], &["F", "F", "F", "=F"], "{tr:?}");
    assert_eq!(tr[..3], ["=F", "S", "=S"], "{tr:?}");
}

#[test]
fn w10_success_threshold() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), schedule(10, 3, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| states(ev, t).len() == 2);
    assert_eq!(trace(&ev, t, Role::Readiness)[..5], ["=F", "S", "S", "S", "=S"]);
    server.set_healthy(false);
    run_until(&mut e, &mut ev, |ev| states(ev, t).len() == 3);
    let tr = trace(&ev, t, Role::Readiness);
    // One failure publishes Failure at once.
    let pos = tr.iter().position(|x| x == "F").unwrap();
    assert_eq!(tr[pos + 1], "=F", "{tr:?}");
}

#[test]
fn w11_startup_success_then_holds_and_readiness_starts() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Startup, http(&server.url("/health")), schedule(10, 1, 3)).unwrap();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), schedule(10, 1, 3)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| states(ev, t).contains(&(Role::Readiness, Success)));
    let startup_runs = runs(&ev, t, Role::Startup);
    assert_eq!(startup_runs, 1, "startup stops after its first published result");
    run_for(&mut e, &mut ev, ms(150));
    assert_eq!(runs(&ev, t, Role::Startup), 1);
    assert!(runs(&ev, t, Role::Readiness) >= 2);
    // Readiness never ran before startup succeeded.
    let first_ready_run =
        ev.iter().position(|x| matches!(x, Event::Run { role: Role::Readiness, .. })).unwrap();
    let startup_ok = ev
        .iter()
        .position(|x| matches!(x, Event::State { role: Role::Startup, result: Success, .. }))
        .unwrap();
    assert!(startup_ok < first_ready_run);
}

#[test]
fn w12_startup_failure_threshold_then_hold() {
    let server = TargetServer::start();
    server.set_healthy(false);
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Startup, http(&server.url("/health")), schedule(10, 1, 3)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| states(ev, t).len() == 2);
    assert_eq!(trace(&ev, t, Role::Startup), ["=U", "F", "F", "F", "=F"]);
    run_for(&mut e, &mut ev, ms(150));
    assert_eq!(runs(&ev, t, Role::Startup), 3, "startup holds after a published failure");
}

#[test]
fn w13_liveness_holds_after_failure_until_restart() {
    let server = TargetServer::start();
    server.set_healthy(false);
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Liveness, http(&server.url("/health")), schedule(10, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| states(ev, t).len() == 2);
    assert_eq!(trace(&ev, t, Role::Liveness), ["=S", "F", "=F"]);
    server.set_healthy(true);
    run_for(&mut e, &mut ev, ms(150));
    assert_eq!(trace(&ev, t, Role::Liveness), ["=S", "F", "=F"], "held: no runs, no changes");
    e.restart_target(t).unwrap();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Liveness) >= 3);
    let tr = trace(&ev, t, Role::Liveness);
    assert_eq!(tr[..5], ["=S", "F", "=F", "=S", "S"], "{tr:?}");
}

#[test]
fn w14_liveness_failure_threshold_counts_consecutive_failures() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Liveness, http(&server.url("/health")), schedule(10, 1, 3)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Liveness) >= 1);
    server.set_healthy(false);
    run_until(&mut e, &mut ev, |ev| states(ev, t).len() == 2);
    let tr = trace(&ev, t, Role::Liveness);
    let n = tr.len();
    assert_eq!(tr[n - 4..], ["F", "F", "F", "=F"], "{tr:?}");
    assert!(tr[..n - 4].iter().all(|x| x == "S" || x == "=S"), "{tr:?}");
}

#[test]
fn w16_liveness_waits_for_startup() {
    let server = TargetServer::start();
    let failing = server.url("/status/500");
    let mut e = engine();
    let t = e.add_target();
    // Startup fails forever (threshold high), so liveness must never run.
    e.set_probe(t, Role::Startup, http(&failing), schedule(10, 1, 1000)).unwrap();
    e.set_probe(t, Role::Liveness, http(&failing), schedule(10, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Startup) >= 5);
    assert_eq!(runs(&ev, t, Role::Liveness), 0);
    assert_eq!(states(&ev, t), vec![(Role::Startup, Unknown), (Role::Liveness, Success)]);
}

#[test]
fn w17_startup_stops_once_started() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Startup, http(&server.url("/health")), schedule(10, 1, 2)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| states(ev, t).len() == 2);
    server.set_healthy(false);
    run_for(&mut e, &mut ev, ms(150));
    assert_eq!(trace(&ev, t, Role::Startup), ["=U", "S", "=S"]);
}

#[test]
fn w20_events_only_when_the_published_value_changes() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), schedule(5, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) >= 10);
    assert_eq!(states(&ev, t), vec![(Role::Readiness, Failure), (Role::Readiness, Success)]);
}

#[test]
fn unknown_is_retried_twice_at_once_then_dropped() {
    let mut e = engine();
    let t = e.add_target();
    let spec = ProbeSpec::exec(&["/nonexistent/probe-binary"]).unwrap();
    // One scheduled run at once, the next a minute later: every run seen here is that run or
    // one of its immediate retries.
    e.set_probe(t, Role::Readiness, spec, schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) >= 3);
    run_for(&mut e, &mut ev, ms(200));
    assert_eq!(trace(&ev, t, Role::Readiness), ["=F", "U", "U", "U"]);
    assert_eq!(states(&ev, t), vec![(Role::Readiness, Failure)], "Unknown never counts");
    let Some(Event::Run { outcome, .. }) = ev.iter().find(|x| matches!(x, Event::Run { .. }))
    else {
        panic!()
    };
    assert_eq!(outcome.reason, prober_core::Reason::Spawn);
}

#[test]
fn trigger_runs_now_and_restarts_the_period() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) == 1);
    e.trigger(t, Role::Readiness).unwrap();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) == 2);
    run_for(&mut e, &mut ev, ms(100));
    assert_eq!(runs(&ev, t, Role::Readiness), 2, "the period restarts from the trigger");
}

#[test]
fn trigger_during_the_initial_delay_waits_for_it() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    let sched = Schedule { initial_delay: ms(60_000), ..schedule(60_000, 1, 1) };
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), sched).unwrap();
    e.trigger(t, Role::Readiness).unwrap();
    let mut ev = Vec::new();
    run_for(&mut e, &mut ev, ms(200));
    assert_eq!(runs(&ev, t, Role::Readiness), 0, "the kubelet skips runs during the delay");
}

#[test]
fn trigger_during_a_run_runs_once_more_after_it() {
    let mut e = engine();
    let t = e.add_target();
    let spec = ProbeSpec::exec(&["/bin/sh", "-c", "sleep 0.2"]).unwrap();
    e.set_probe(t, Role::Readiness, spec, schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    while e.in_flight() == 0 {
        e.wait(Some(ms(10))).unwrap();
        e.drain(&mut ev, usize::MAX);
    }
    e.trigger(t, Role::Readiness).unwrap();
    e.trigger(t, Role::Readiness).unwrap(); // one buffered trigger, not two
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) == 2);
    run_for(&mut e, &mut ev, ms(400));
    assert_eq!(runs(&ev, t, Role::Readiness), 2);
}

#[test]
fn readiness_started_by_startup_still_honours_its_initial_delay() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Startup, http(&server.url("/health")), schedule(10, 1, 3)).unwrap();
    let delayed = Schedule { initial_delay: ms(60_000), ..schedule(10, 1, 3) };
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), delayed).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| states(ev, t).contains(&(Role::Startup, Success)));
    run_for(&mut e, &mut ev, ms(200));
    assert_eq!(runs(&ev, t, Role::Readiness), 0);
}

#[test]
fn restart_publishes_initial_values_even_when_unchanged() {
    let server = TargetServer::start();
    server.set_healthy(false);
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), schedule(10, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) >= 1);
    e.restart_target(t).unwrap();
    e.drain(&mut ev, usize::MAX);
    let initial: Vec<_> =
        ev.iter().filter(|x| matches!(x, Event::State { outcome: None, .. })).collect();
    assert_eq!(initial.len(), 2, "set and restart each publish the initial value: {ev:?}");
}

#[test]
fn jitter_spreads_first_runs_over_the_period() {
    let server = TargetServer::start();
    let spec = ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap();
    let run_first_ticks = |jitter: bool| {
        let mut e = engine();
        let sched = Schedule { jitter, ..schedule(60_000, 1, 1) };
        let ids: Vec<_> = (0..50)
            .map(|_| {
                let t = e.add_target();
                e.set_probe(t, Role::Liveness, spec.clone(), sched).unwrap();
                t
            })
            .collect();
        let mut ev = Vec::new();
        if jitter {
            run_for(&mut e, &mut ev, ms(300));
        } else {
            run_until(&mut e, &mut ev, |ev| ids.iter().all(|t| runs(ev, *t, Role::Liveness) == 1));
        }
        ids.iter().filter(|t| runs(&ev, **t, Role::Liveness) > 0).count()
    };
    // Without jitter all 50 run at once; with it, first runs land anywhere in the minute, so
    // all 50 within the first 300 ms would be a (1/200)^50 coincidence.
    assert_eq!(run_first_ticks(false), 50);
    assert!(run_first_ticks(true) < 50);
}

#[test]
fn run_lateness_is_measured_at_the_start_of_the_run() {
    let mut e = engine();
    let t = e.add_target();
    let spec = ProbeSpec::exec(&["/bin/sh", "-c", "sleep 0.3"]).unwrap();
    e.set_probe(t, Role::Readiness, spec, schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) == 1);
    let Some(Event::Run { late_us, outcome, .. }) =
        ev.iter().find(|x| matches!(x, Event::Run { .. }))
    else {
        panic!()
    };
    // The run started on time; its own 300 ms must not count as lateness.
    assert!(
        std::time::Duration::from_micros(*late_us) < outcome.timings.total,
        "late {late_us} us vs a run of {:?}",
        outcome.timings.total
    );
}
