//! Driving an engine of periodic workers for a while and counting its runs (`sched_*` and
//! `netns_scale`).

use std::time::Instant;

use prober_core::ProbeResult;
use prober_engine::{Engine, Event};

/// What [`collect_runs`] counted.
pub(crate) struct Runs {
    pub(crate) runs: u64,
    pub(crate) ok: u64,
    /// The first run that did not succeed, for a note on standard error.
    pub(crate) first_failure: Option<String>,
}

/// Drives `engine` until `end`, counting its runs and their lateness (into `late_us`).
pub(crate) fn collect_runs(
    engine: &mut Engine,
    events: &mut Vec<Event>,
    end: Instant,
    late_us: &mut Vec<u64>,
) -> Result<Runs, String> {
    let mut r = Runs { runs: 0, ok: 0, first_failure: None };
    loop {
        let now = Instant::now();
        if now >= end {
            return Ok(r);
        }
        engine.wait(Some(end - now)).map_err(|e| format!("wait: {e}"))?;
        engine.drain(events, usize::MAX);
        for ev in events.drain(..) {
            let Event::Run { outcome, late_us: late, .. } = ev else {
                continue;
            };
            r.runs += 1;
            late_us.push(late);
            if outcome.result == ProbeResult::Success {
                r.ok += 1;
            } else if r.first_failure.is_none() {
                r.first_failure =
                    Some(format!("{} {:?}: {}", outcome.result, outcome.reason, outcome.message));
            }
        }
    }
}
