//! Per-state periods and jitter on every period (beyond the kubelet: HAProxy's `downinter` and
//! `fastinter`, Envoy's `unhealthy_interval` and `interval_jitter_percent`), counted as runs
//! of the testkit's server whose health is flipped. The normal period is a minute, so every
//! quick run seen here comes from a per-state period; the bounds only catch hangs.

mod common;

use common::*;
use prober_core::{ProbeResult::*, Role, Schedule};
use prober_engine::EngineError;
use prober_testkit::TargetServer;

const MINUTE: u64 = 60_000;

#[test]
fn unhealthy_period_while_failure_is_published() {
    let server = TargetServer::start();
    server.set_healthy(false);
    let mut e = engine();
    let t = e.add_target();
    let sched = Schedule { unhealthy_period: Some(ms(20)), ..schedule(MINUTE, 1, 1) };
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), sched).unwrap();
    let mut ev = Vec::new();
    // Readiness starts published Failure: runs every 20 ms, not every minute.
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) >= 5);
    assert!(trace(&ev, t, Role::Readiness)[1..5].iter().all(|r| r == "F"));

    server.set_healthy(true);
    run_until(&mut e, &mut ev, |ev| states(ev, t).last() == Some(&(Role::Readiness, Success)));
    // Published Success: back to the minute. Fifteen unhealthy periods pass without a run.
    let n = runs(&ev, t, Role::Readiness);
    run_for(&mut e, &mut ev, ms(300));
    assert_eq!(runs(&ev, t, Role::Readiness), n, "{:?}", trace(&ev, t, Role::Readiness));

    // A manual run that fails publishes Failure (threshold 1): the fast period is back.
    server.set_healthy(false);
    e.trigger(t, Role::Readiness).unwrap();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Readiness) >= n + 5);
}

#[test]
fn transition_period_while_results_disagree() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    let sched = Schedule { transition_period: Some(ms(20)), ..schedule(MINUTE, 3, 3) };
    e.set_probe(t, Role::Readiness, http(&server.url("/health")), sched).unwrap();
    let mut ev = Vec::new();
    // Published Failure, the first run succeeds: two more successes come at the transition
    // period, and Success is published within a few of them instead of two minutes.
    run_until(&mut e, &mut ev, |ev| states(ev, t).last() == Some(&(Role::Readiness, Success)));
    assert_eq!(trace(&ev, t, Role::Readiness), ["=F", "S", "S", "S", "=S"]);
    let n = runs(&ev, t, Role::Readiness);
    run_for(&mut e, &mut ev, ms(300));
    assert_eq!(runs(&ev, t, Role::Readiness), n, "in agreement: the normal period");

    server.set_healthy(false);
    e.trigger(t, Role::Readiness).unwrap();
    run_until(&mut e, &mut ev, |ev| states(ev, t).last() == Some(&(Role::Readiness, Failure)));
    let tr = trace(&ev, t, Role::Readiness);
    assert_eq!(&tr[tr.len() - 4..], ["F", "F", "F", "=F"], "{tr:?}");
    // No unhealthy period set: a published Failure runs at the normal period again.
    let n = runs(&ev, t, Role::Readiness);
    run_for(&mut e, &mut ev, ms(300));
    assert_eq!(runs(&ev, t, Role::Readiness), n);
}

#[test]
fn transition_period_applies_before_unhealthy_period() {
    let server = TargetServer::start();
    server.set_healthy(false);
    let mut e = engine();
    let t = e.add_target();
    // Liveness starts published Success; three failures publish Failure (then it holds).
    let sched = Schedule {
        transition_period: Some(ms(20)),
        unhealthy_period: Some(ms(MINUTE)),
        ..schedule(MINUTE, 1, 3)
    };
    e.set_probe(t, Role::Liveness, http(&server.url("/health")), sched).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| states(ev, t).last() == Some(&(Role::Liveness, Failure)));
    assert_eq!(trace(&ev, t, Role::Liveness), ["=S", "F", "F", "F", "=F"]);
}

#[test]
fn jittered_periods_still_run_and_bad_values_are_refused() {
    let server = TargetServer::start();
    let mut e = engine();
    let t = e.add_target();
    let sched = Schedule { jitter_percent: 50, ..schedule(10, 1, 1) };
    e.set_probe(t, Role::Liveness, http(&server.url("/health")), sched).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, t, Role::Liveness) >= 10);

    for bad in [
        Schedule { jitter_percent: 51, ..schedule(10, 1, 1) },
        Schedule { unhealthy_period: Some(ms(0)), ..schedule(10, 1, 1) },
        Schedule { transition_period: Some(ms(0)), ..schedule(10, 1, 1) },
    ] {
        let err = e.set_probe(t, Role::Readiness, http(&server.url("/health")), bad).unwrap_err();
        assert!(matches!(err, EngineError::Spec(_)), "{err:?}");
    }
}
