//! Host-run probes: the engine schedules and announces each run, the test (the host) completes
//! it, or does not.

mod common;

use std::net::TcpListener;
use std::time::Duration;

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Reason, Role};
use prober_engine::{Completion, Engine, EngineError, Event, HostRunStats, RunId, TargetId};

fn host_run(label: &str, timeout_ms: u64) -> ProbeSpec {
    ProbeSpec::host_run(label).unwrap().with_timeout(ms(timeout_ms)).unwrap()
}

/// The announcements among `events`: (run, target, role, label).
fn announced(events: &[Event]) -> Vec<(RunId, TargetId, Role, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::HostRun { run, target, role, label } => {
                Some((*run, *target, *role, label.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Runs the engine until `target`'s `role` has an announcement that is not in `seen`, and
/// returns its run id.
fn next_run(e: &mut Engine, events: &mut Vec<Event>, target: TargetId, role: Role) -> RunId {
    let before = announced(events).iter().filter(|a| a.1 == target && a.2 == role).count();
    run_until(e, events, |ev| {
        announced(ev).iter().filter(|a| a.1 == target && a.2 == role).count() > before
    });
    announced(events).iter().rfind(|a| a.1 == target && a.2 == role).unwrap().0
}

/// The outcome of the last state event of (target, role) that has one.
fn last_state(
    events: &[Event],
    target: TargetId,
    role: Role,
) -> (ProbeResult, prober_core::Outcome) {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::State { target: t, role: r, result, outcome: Some(o) }
                if *t == target && *r == role =>
            {
                Some((*result, (**o).clone()))
            }
            _ => None,
        })
        .expect("no state event with an outcome")
}

#[test]
fn completed_runs_are_judged_by_the_worker_rules() {
    let mut e = engine();
    let t = e.add_target();
    let spec = host_run("cat /tmp/healthy", 10_000);
    e.set_probe(t, Role::Readiness, spec, schedule(50, 1, 1)).unwrap();
    let mut ev = Vec::new();
    let run = next_run(&mut e, &mut ev, t, Role::Readiness);
    assert_ne!(run, 0);
    assert_eq!(announced(&ev), [(run, t, Role::Readiness, "cat /tmp/healthy".to_string())]);
    assert_eq!(e.in_flight(), 1, "the announced run is in flight until the host answers");
    assert_eq!(e.complete_run(run, ProbeResult::Success, b"ok\n"), Completion::Accepted);
    assert_eq!(e.in_flight(), 0);
    e.drain(&mut ev, usize::MAX);
    let (published, o) = last_state(&ev, t, Role::Readiness);
    assert_eq!(published, ProbeResult::Success);
    assert_eq!((o.result, o.reason, o.message.as_str()), (ProbeResult::Success, Reason::None, ""));
    assert_eq!(o.output, b"ok\n");

    // A failure: published at once with failure threshold 1, in the host's words.
    let run = next_run(&mut e, &mut ev, t, Role::Readiness);
    assert_eq!(e.complete_run(run, ProbeResult::Failure, b"no such file"), Completion::Accepted);
    e.drain(&mut ev, usize::MAX);
    let (published, o) = last_state(&ev, t, Role::Readiness);
    assert_eq!(published, ProbeResult::Failure);
    assert_eq!(o.message, r#"host run "cat /tmp/healthy" failed"#);
    assert_eq!(o.output, b"no such file");
    assert_eq!(e.published(t, Role::Readiness).unwrap(), ProbeResult::Failure);

    // A second completion of the same run is late, and changes nothing.
    assert_eq!(e.complete_run(run, ProbeResult::Success, b""), Completion::Late);
    assert_eq!(e.published(t, Role::Readiness).unwrap(), ProbeResult::Failure);
    let stats = e.host_run_stats();
    assert_eq!((stats.completed, stats.late, stats.timed_out), (2, 1, 0));
}

#[test]
fn a_run_not_completed_in_time_is_a_timeout_and_its_completion_is_late() {
    let mut e = engine();
    let t = e.add_target();
    let spec = host_run("crictl exec c1 /bin/check", 200);
    e.set_probe(t, Role::Liveness, spec, schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    let run = next_run(&mut e, &mut ev, t, Role::Liveness);
    // The host never answers: the run ends at the probe's timeout, as every kind's does.
    run_until(&mut e, &mut ev, |ev| {
        ev.iter().any(|x| matches!(x, Event::Run { target, .. } if *target == t))
    });
    let (published, o) = last_state(&ev, t, Role::Liveness);
    assert_eq!(published, ProbeResult::Failure);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout));
    assert_eq!(
        o.message,
        r#"host run timed out: "crictl exec c1 /bin/check" timed out after 200ms"#
    );
    assert!(o.timings.total >= ms(200), "{:?}", o.timings.total);
    assert_eq!(e.in_flight(), 0);

    // The answer that comes after is ignored and counted.
    assert_eq!(e.complete_run(run, ProbeResult::Success, b"ok"), Completion::Late);
    assert_eq!(e.published(t, Role::Liveness).unwrap(), ProbeResult::Failure);
    assert_eq!(
        e.host_run_stats(),
        HostRunStats { announced: 1, completed: 0, timed_out: 1, late: 1, unknown: 0 }
    );
}

#[test]
fn an_announcement_not_drained_when_its_run_times_out_is_withdrawn() {
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, host_run("x", 100), schedule(60_000, 1, 3)).unwrap();
    // Turn without draining until the run has timed out.
    let limit = std::time::Instant::now() + Duration::from_secs(30);
    while e.host_run_stats().timed_out == 0 {
        assert!(std::time::Instant::now() < limit, "the run never timed out");
        e.wait(Some(ms(50))).unwrap();
    }
    let mut ev = Vec::new();
    e.drain(&mut ev, usize::MAX);
    assert_eq!(e.host_run_stats().announced, 1);
    assert_eq!(announced(&ev), [], "a host draining late is not asked to run what is over");
    assert_eq!(trace(&ev, t, Role::Readiness), ["=F", "F"]);
}

#[test]
fn unknown_ids_are_ignored_and_counted() {
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, host_run("", 10_000), schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    let run = next_run(&mut e, &mut ev, t, Role::Readiness);
    for bogus in [0, run ^ (1 << 40), u64::MAX] {
        assert_eq!(
            e.complete_run(bogus, ProbeResult::Success, b""),
            Completion::Unknown,
            "{bogus}"
        );
    }
    assert_eq!(e.host_run_stats().unknown, 3);
    assert_eq!(e.in_flight(), 1, "the real run is untouched");
    // Unknown from the host is a run that could not be performed: retried at once (the
    // worker's rule for Unknown), so a new run is announced.
    assert_eq!(e.complete_run(run, ProbeResult::Unknown, b"rpc error"), Completion::Accepted);
    let again = next_run(&mut e, &mut ev, t, Role::Readiness);
    assert_ne!(again, run);
    let o = ev
        .iter()
        .find_map(|x| match x {
            Event::Run { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (o.result, o.message.as_str()),
        (ProbeResult::Unknown, "host run could not be performed")
    );
    assert_eq!(o.output, b"rpc error");
}

#[test]
fn a_host_that_never_answers_blocks_no_other_worker() {
    let mut e = engine();
    let silent = e.add_target();
    e.set_probe(silent, Role::Liveness, host_run("never", 120_000), schedule(60_000, 1, 1))
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let busy = e.add_target();
    let tcp = ProbeSpec::tcp("127.0.0.1", port.into()).unwrap();
    e.set_probe(busy, Role::Readiness, tcp, schedule(20, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| runs(ev, busy, Role::Readiness) >= 5);
    assert!(!announced(&ev).is_empty(), "the silent target's run was announced");
    assert_eq!(runs(&ev, silent, Role::Liveness), 0, "still waiting for its host");
    assert_eq!(e.host_run_stats().timed_out, 0);
    assert_eq!(e.published(busy, Role::Readiness).unwrap(), ProbeResult::Success);
}

#[test]
fn removing_a_target_with_a_run_outstanding_cancels_it() {
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Liveness, host_run("x", 10_000), schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    let run = next_run(&mut e, &mut ev, t, Role::Liveness);
    e.remove_target(t).unwrap();
    assert_eq!(e.in_flight(), 0);
    assert_eq!(e.complete_run(run, ProbeResult::Success, b""), Completion::Late);
    run_for(&mut e, &mut ev, ms(50));
    assert_eq!(e.pending_events(), 0);
    assert!(matches!(e.published(t, Role::Liveness), Err(EngineError::UnknownTarget(_))));
    // Replacing a probe cancels its run the same way; its undrained announcement goes too.
    let t = e.add_target();
    e.set_probe(t, Role::Liveness, host_run("old", 10_000), schedule(60_000, 1, 1)).unwrap();
    while e.host_run_stats().announced < 2 {
        e.wait(Some(ms(50))).unwrap();
    }
    e.set_probe(t, Role::Liveness, host_run("new", 10_000), schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| !announced(ev).is_empty());
    let labels: Vec<String> = announced(&ev).into_iter().map(|a| a.3).collect();
    assert_eq!(labels, ["new"]);
}

#[test]
fn startup_gates_liveness_of_host_runs() {
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Startup, host_run("startup", 10_000), schedule(20, 1, 30)).unwrap();
    e.set_probe(t, Role::Liveness, host_run("liveness", 10_000), schedule(20, 1, 3)).unwrap();
    let mut ev = Vec::new();
    // Startup fails twice: liveness is never announced meanwhile.
    for _ in 0..2 {
        let run = next_run(&mut e, &mut ev, t, Role::Startup);
        assert_eq!(e.complete_run(run, ProbeResult::Failure, b""), Completion::Accepted);
    }
    let run = next_run(&mut e, &mut ev, t, Role::Startup);
    assert!(announced(&ev).iter().all(|a| a.2 == Role::Startup), "{ev:#?}");
    assert_eq!(e.complete_run(run, ProbeResult::Success, b""), Completion::Accepted);
    // Started: now liveness runs.
    let live = next_run(&mut e, &mut ev, t, Role::Liveness);
    assert_eq!(e.complete_run(live, ProbeResult::Success, b""), Completion::Accepted);
    assert_eq!(e.published(t, Role::Startup).unwrap(), ProbeResult::Success);
    assert_eq!(e.published(t, Role::Liveness).unwrap(), ProbeResult::Success);
}

#[test]
fn output_is_kept_up_to_the_limit() {
    let mut e = engine();
    let t = e.add_target();
    let mut spec = host_run("x", 10_000);
    spec.set_output_limit(4).unwrap();
    e.set_probe(t, Role::Readiness, spec, schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    let run = next_run(&mut e, &mut ev, t, Role::Readiness);
    e.complete_run(run, ProbeResult::Success, b"abcdefgh");
    e.drain(&mut ev, usize::MAX);
    let (_, o) = last_state(&ev, t, Role::Readiness);
    assert_eq!((o.output.as_slice(), o.truncated, o.output_total), (&b"abcd"[..], true, 8));
}

#[test]
fn one_shot_checks_of_host_runs_are_refused() {
    let mut e = engine();
    let err = e.submit(host_run("x", 1000), 7).unwrap_err();
    assert!(matches!(err, EngineError::HostRunCheck));
    assert!(err.to_string().contains("cannot be submitted as a one-shot check"), "{err}");
    assert!(matches!(e.handle().submit(host_run("x", 1000), 7), Err(EngineError::HostRunCheck)));
    let o = prober_engine::check(&host_run("x", 1000));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Unsupported));
    assert!(o.message.starts_with("a host-run probe is performed by its host"), "{}", o.message);
}

#[test]
fn a_handle_completes_runs_from_another_thread() {
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Readiness, host_run("x", 10_000), schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    let run = next_run(&mut e, &mut ev, t, Role::Readiness);
    let h = e.handle();
    std::thread::spawn(move || h.complete_run(run, ProbeResult::Success, b"ok".to_vec()).unwrap())
        .join()
        .unwrap();
    run_until(&mut e, &mut ev, |ev| {
        states(ev, t).contains(&(Role::Readiness, ProbeResult::Success))
    });
    assert_eq!(e.host_run_stats().completed, 1);
}

#[test]
fn an_answer_at_the_deadline_is_a_timeout_even_before_the_timer_fires() {
    let mut e = engine();
    let t = e.add_target();
    e.set_probe(t, Role::Liveness, host_run("edge", 100), schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    let run = next_run(&mut e, &mut ev, t, Role::Liveness);
    // The engine is not turned meanwhile, so its deadline timer cannot have fired.
    let past = std::time::Instant::now() + ms(100);
    while std::time::Instant::now() < past {
        std::hint::spin_loop();
    }
    assert_eq!(e.complete_run(run, ProbeResult::Success, b"ok"), Completion::Late);
    e.drain(&mut ev, usize::MAX);
    let (published, o) = last_state(&ev, t, Role::Liveness);
    assert_eq!((published, o.reason), (ProbeResult::Failure, Reason::Timeout));
    let stats = e.host_run_stats();
    assert_eq!((stats.timed_out, stats.late, stats.completed), (1, 1, 0));
}
