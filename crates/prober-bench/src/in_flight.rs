//! The one-shot loop of the `*_oneshot` scenarios and of `https_threads`: `n` checks of one
//! spec, `conc` in flight, one more submitted for each that finishes.

use std::time::Duration;

use prober_core::{Outcome, ProbeResult, ProbeSpec};
use prober_engine::{Engine, EngineThread, Event};

/// Where the loop's checks go and their outcomes come from. Outcomes stay in the boxes the
/// engine's events carry them in: taking them out would copy each.
#[allow(clippy::vec_box)]
pub(crate) trait Checks {
    /// Starts a check of `spec` tagged `tag`.
    fn submit(&mut self, spec: ProbeSpec, tag: u64) -> Result<(), String>;
    /// Appends the outcomes of checks that finished to `done`, waiting for one when none has;
    /// it may return with none (an event that was not a check's, a wait that ended early).
    fn finished(&mut self, done: &mut Vec<Box<Outcome>>) -> Result<(), String>;
}

/// One engine turned on this thread.
pub(crate) struct OneEngine {
    pub(crate) engine: Engine,
    pub(crate) events: Vec<Event>,
}

impl Checks for OneEngine {
    fn submit(&mut self, spec: ProbeSpec, tag: u64) -> Result<(), String> {
        self.engine.submit(spec, tag).map_err(|e| e.to_string())
    }

    fn finished(&mut self, done: &mut Vec<Box<Outcome>>) -> Result<(), String> {
        // Drained before waiting: a probe that ends as it starts (a kind this build lacks, a
        // spec the engine refuses) ends within its submit, and no wait would wake for it.
        self.engine.drain(&mut self.events, usize::MAX);
        if self.events.is_empty() {
            self.engine.wait(None).map_err(|e| format!("wait: {e}"))?;
            return Ok(());
        }
        for ev in self.events.drain(..) {
            if let Event::Check { outcome, .. } = ev {
                done.push(outcome);
            }
        }
        Ok(())
    }
}

/// An engine group (`spawn_sharded`): submitted through its one handle, answered on its one
/// channel.
impl Checks for EngineThread {
    fn submit(&mut self, spec: ProbeSpec, tag: u64) -> Result<(), String> {
        self.handle().submit(spec, tag).map_err(|e| e.to_string())
    }

    fn finished(&mut self, done: &mut Vec<Box<Outcome>>) -> Result<(), String> {
        // Every check ends by its timeout (the spec's default, 1 s) or sooner.
        let ev = self
            .events()
            .recv_timeout(Duration::from_secs(30))
            .map_err(|e| format!("events: {e}"))?;
        if let Event::Check { outcome, .. } = ev {
            done.push(outcome);
        }
        Ok(())
    }
}

/// What [`keep_in_flight`] counted.
pub(crate) struct Tally {
    pub(crate) ok: u64,
    /// Checks whose TLS handshake resumed a session (`https_resume`).
    pub(crate) resumed: u64,
    /// The first check that did not succeed, for a note on standard error.
    first_failure: Option<String>,
}

impl Tally {
    /// Notes on standard error how many of `n` checks did not succeed, and the first.
    pub(crate) fn note_failures(&self, n: u64) {
        if let Some(f) = &self.first_failure {
            eprintln!("prober-bench: {} of {n} probes did not succeed; first: {f}", n - self.ok);
        }
    }
}

/// Runs `n` checks of `spec` through `checks`, `conc` in flight: submits `conc`, then one more
/// for each that finishes.
pub(crate) fn keep_in_flight(
    checks: &mut impl Checks,
    spec: &ProbeSpec,
    n: u64,
    conc: u64,
) -> Result<Tally, String> {
    let (mut submitted, mut done) = (0u64, 0u64);
    let mut tally = Tally { ok: 0, resumed: 0, first_failure: None };
    let mut outcomes = Vec::with_capacity(1024);
    while submitted < n.min(conc) {
        checks.submit(spec.clone(), submitted)?;
        submitted += 1;
    }
    while done < n {
        checks.finished(&mut outcomes)?;
        for outcome in outcomes.drain(..) {
            done += 1;
            tally.resumed += u64::from(outcome.tls.as_ref().is_some_and(|t| t.resumed));
            if outcome.result == ProbeResult::Success {
                tally.ok += 1;
            } else if tally.first_failure.is_none() {
                tally.first_failure =
                    Some(format!("{} {:?}: {}", outcome.result, outcome.reason, outcome.message));
            }
            if submitted < n {
                checks.submit(spec.clone(), submitted)?;
                submitted += 1;
            }
        }
    }
    Ok(tally)
}
