//! Helpers shared by the engine's test binaries.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use prober_core::{ProbeResult, ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event, TargetId};

pub fn engine() -> Engine {
    Engine::with_config(EngineConfig { every_run: true, jitter_seed: 7, ..EngineConfig::default() })
        .unwrap()
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn schedule(period_ms: u64, success: u32, failure: u32) -> Schedule {
    Schedule {
        period: ms(period_ms),
        success_threshold: success,
        failure_threshold: failure,
        ..Schedule::default()
    }
}

pub fn http(url: &str) -> ProbeSpec {
    ProbeSpec::http(url).unwrap().with_timeout(ms(2000)).unwrap()
}

/// Runs the engine, collecting events, until `done(events)` holds. Panics (with the events seen)
/// if it does not within a generous bound: that bound only catches hangs, it is no timing claim.
pub fn run_until(e: &mut Engine, events: &mut Vec<Event>, done: impl Fn(&[Event]) -> bool) {
    let limit = Instant::now() + Duration::from_secs(30);
    while !done(events) {
        assert!(Instant::now() < limit, "condition not reached; events: {events:#?}");
        e.wait(Some(ms(50))).unwrap();
        e.drain(events, usize::MAX);
    }
}

/// Runs the engine for `d`, collecting events.
pub fn run_for(e: &mut Engine, events: &mut Vec<Event>, d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        e.wait(Some(end.saturating_duration_since(Instant::now()))).unwrap();
        e.drain(events, usize::MAX);
    }
}

/// The (role, result) of state events, in order.
pub fn states(events: &[Event], target: TargetId) -> Vec<(Role, ProbeResult)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::State { target: t, role, result, .. } if *t == target => Some((*role, *result)),
            _ => None,
        })
        .collect()
}

/// A compact trace of one role's runs and state changes: "S"/"F"/"U"/"W" for runs,
/// "=S"/"=F"/"=U" for published changes.
pub fn trace(events: &[Event], target: TargetId, role: Role) -> Vec<String> {
    let letter = |r: ProbeResult| match r {
        ProbeResult::Success => "S",
        ProbeResult::Warning => "W",
        ProbeResult::Failure => "F",
        ProbeResult::Unknown => "U",
    };
    events
        .iter()
        .filter_map(|e| match e {
            Event::Run { target: t, role: r, outcome, .. } if *t == target && *r == role => {
                Some(letter(outcome.result).to_string())
            }
            Event::State { target: t, role: r, result, .. } if *t == target && *r == role => {
                Some(format!("={}", letter(*result)))
            }
            _ => None,
        })
        .collect()
}

pub fn runs(events: &[Event], target: TargetId, role: Role) -> usize {
    events
        .iter()
        .filter(
            |e| matches!(e, Event::Run { target: t, role: r, .. } if *t == target && *r == role),
        )
        .count()
}
