//! A host that does not drain: probing goes on, `published` follows the probed command, the
//! queue stays bounded (state changes coalesced, run events dropped oldest-first and counted),
//! and draining afterwards gives each worker's latest state.

mod common;

use std::time::{Duration, Instant};

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Role};
use prober_engine::{Engine, EngineConfig, Event, TargetId};

const TARGETS: usize = 5;
const RUN_LIMIT: usize = 16;

/// Steps `e` without draining until `done` holds, checking after every step that the queue
/// holds no more than one state event per worker plus `RUN_LIMIT` run events and the runs of
/// one step (at most one per worker here; twice that as a margin).
fn step_until(e: &mut Engine, what: &str, done: impl Fn(&mut Engine) -> bool) {
    let limit = Instant::now() + Duration::from_secs(30);
    while !done(e) {
        assert!(Instant::now() < limit, "{what}: not reached");
        e.wait(Some(ms(50))).unwrap();
        let pending = e.pending_events();
        assert!(pending <= 3 * TARGETS + RUN_LIMIT, "{what}: {pending} events queued");
    }
}

fn all_published(e: &mut Engine, targets: &[TargetId], want: ProbeResult) -> bool {
    targets.iter().all(|t| e.published(*t, Role::Readiness).unwrap() == want)
}

#[test]
fn an_undrained_engine_keeps_probing_with_a_bounded_queue() {
    let flag = std::env::temp_dir().join(format!("prober-backlog-{}", std::process::id()));
    let _ = std::fs::remove_file(&flag);
    let flag_arg = flag.to_str().unwrap();
    let config = EngineConfig { every_run: true, max_run_events: RUN_LIMIT, ..Default::default() };
    let mut e = Engine::with_config(config).unwrap();
    let spec = ProbeSpec::exec(&["test", "-e", flag_arg]).unwrap();
    let targets: Vec<TargetId> = (0..TARGETS)
        .map(|_| {
            let t = e.add_target();
            e.set_probe(t, Role::Readiness, spec.clone(), schedule(20, 1, 1)).unwrap();
            t
        })
        .collect();

    // The command fails (no file): readiness stays Failure while runs pile up undrained.
    step_until(&mut e, "runs dropped", |e| e.dropped_events() >= 3 * RUN_LIMIT as u64);
    std::fs::write(&flag, b"").unwrap();
    step_until(&mut e, "all ready", |e| all_published(e, &targets, ProbeResult::Success));
    std::fs::remove_file(&flag).unwrap();
    step_until(&mut e, "all unready", |e| all_published(e, &targets, ProbeResult::Failure));
    let dropped = e.dropped_events();

    let mut events = Vec::new();
    e.drain(&mut events, usize::MAX);
    // One state event per worker, holding its latest value (Failure, from a run), and the
    // newest RUN_LIMIT run events (plus those of the last step).
    for t in &targets {
        let states: Vec<_> = events
            .iter()
            .filter_map(|ev| match ev {
                Event::State { target, result, outcome, .. } if target == t => {
                    Some((*result, outcome.is_some()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(states, [(ProbeResult::Failure, true)], "target {t}: {events:#?}");
    }
    let runs = events.iter().filter(|ev| matches!(ev, Event::Run { .. })).count();
    assert!((RUN_LIMIT..=RUN_LIMIT + 2 * TARGETS).contains(&runs), "{runs} runs: {events:#?}");
    assert!(dropped >= 3 * RUN_LIMIT as u64);
    assert_eq!(e.pending_events(), 0);

    // Drained: events flow again, each change its own event.
    std::fs::write(&flag, b"").unwrap();
    let mut later = Vec::new();
    run_until(&mut e, &mut later, |ev| {
        targets.iter().all(|t| states(ev, *t) == [(Role::Readiness, ProbeResult::Success)])
    });
    std::fs::remove_file(&flag).unwrap();
}

#[test]
fn cancelling_a_check_stops_it_and_reports_it_once() {
    let mut e = engine();
    let pidfile = std::env::temp_dir().join(format!("prober-cancel-{}", std::process::id()));
    let _ = std::fs::remove_file(&pidfile);
    // "$$$$": the kubelet's expansion makes "$$" of it, the shell's own pid.
    let script = format!("echo $$$$ > {}; exec sleep 30", pidfile.display());
    e.submit(ProbeSpec::exec(&["sh", "-c", &script]).unwrap().with_timeout(ms(20_000)).unwrap(), 5)
        .unwrap();
    e.submit(ProbeSpec::exec(&["true"]).unwrap(), 6).unwrap();
    let limit = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&pidfile).map_or(true, |s| !s.ends_with('\n')) {
        assert!(Instant::now() < limit, "the command never started");
        e.wait(Some(ms(20))).unwrap();
    }
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    assert_eq!(e.cancel_check(5), 1);
    assert_eq!(e.cancel_check(5), 0);
    assert_eq!(e.cancel_check(99), 0);
    // Killed and reaped (by the probe or the reaper thread): the pid disappears entirely.
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < limit, "child {pid} still exists (zombie or alive)");
        std::thread::sleep(ms(5));
    }
    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| ev.len() == 2);
    let cancelled: Vec<_> = events
        .iter()
        .filter_map(|ev| match ev {
            Event::Check { tag: 5, outcome } => Some((outcome.result, outcome.reason)),
            _ => None,
        })
        .collect();
    assert_eq!(cancelled, [(ProbeResult::Unknown, prober_core::Reason::Cancelled)]);
    assert_eq!(e.in_flight(), 0);
    std::fs::remove_file(&pidfile).unwrap();
}
