//! Host-run probes ([`prober_core::HostRunSpec`]): the engine schedules each run, announces it
//! as an [`Event::HostRun`](crate::Event::HostRun), and waits for the host's
//! [`Engine::complete_run`](crate::Engine::complete_run) until the probe's timeout. The run is
//! an ordinary in-flight slot whose machine does nothing but keep the deadline, so thresholds,
//! gating, retries, run events and removal treat it like any other run, and a host that never
//! answers costs one slot and one timer until the deadline: no other worker waits for it.
//! This file is the run's machine and the words of its results; the engine's side (announcing,
//! withdrawing, completing a run) is `hostrun_engine.rs`.
//!
//! A run's id ([`RunId`](crate::RunId)) is its slot's key ([`crate::arena::Key::to_u64`]),
//! with the engine of a sharded group in its index (`crate::shards`): never 0, and a stale id (a run that timed out, was cancelled or was completed already) never
//! reaches the run that reuses the slot, because the generation differs.

use std::time::{Duration, Instant};

use prober_core::{HostRunSpec, Outcome, ProbeResult, Reason, Timings, format_duration};
use prober_io::{Ctx, Machine, Ready, Step};

use crate::config::EngineError;

/// What [`Engine::complete_run`](crate::Engine::complete_run) did with a completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Completion {
    /// The run was in flight: its result is recorded by the worker's rules.
    Accepted,
    /// The id named a run that is no longer in flight (it timed out, was cancelled by a
    /// removal, restart or replacement of its probe, or was completed already): ignored and
    /// counted in [`HostRunStats::late`].
    Late,
    /// No host run has had this id: ignored and counted in [`HostRunStats::unknown`].
    Unknown,
}

/// Counters of host-run probes, from [`Engine::host_run_stats`](crate::Engine::host_run_stats).
/// Each only grows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostRunStats {
    /// Runs announced ([`Event::HostRun`](crate::Event::HostRun)).
    pub announced: u64,
    /// Runs the host completed in time.
    pub completed: u64,
    /// Runs that reached the probe's timeout before the host completed them.
    pub timed_out: u64,
    /// Completions for runs no longer in flight, ignored ([`Completion::Late`]).
    pub late: u64,
    /// Completions for ids no host run has had, ignored ([`Completion::Unknown`]).
    pub unknown: u64,
}

/// The machine of one host run: it only keeps the deadline. The host's answer reaches the
/// engine through [`Engine::complete_run`](crate::Engine::complete_run), not through this machine.
#[derive(Debug)]
pub struct HostRunProbe {
    label: String,
    timeout: Duration,
    output_limit: usize,
    started: Option<Instant>,
}

impl HostRunProbe {
    /// The machine for one run of `spec` with the spec's `timeout` and `output_limit`.
    pub fn new(spec: &HostRunSpec, timeout: Duration, output_limit: usize) -> HostRunProbe {
        HostRunProbe { label: spec.label.clone(), timeout, output_limit, started: None }
    }

    /// The label the host gave the probe.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The run's outcome from the host's answer: the result as given, the output kept up to
    /// the spec's limit, the time from the start of the run.
    pub(crate) fn outcome(&self, result: ProbeResult, output: &[u8], now: Instant) -> Outcome {
        let mut o = match result {
            ProbeResult::Success | ProbeResult::Warning => Outcome::new(result, Reason::None, ""),
            ProbeResult::Failure => Outcome::failure(Reason::None, self.words("failed")),
            ProbeResult::Unknown => {
                Outcome::unknown(Reason::None, self.words("could not be performed"))
            }
        };
        let kept = output.len().min(self.output_limit);
        o.output = output[..kept].to_vec();
        o.truncated = kept < output.len();
        o.output_total = output.len() as u64;
        o.timings = Timings {
            total: self.started.map(|s| now.saturating_duration_since(s)).unwrap_or_default(),
            ..Timings::default()
        };
        o
    }

    /// `host run "LABEL" WHAT`, or `host run WHAT` without a label.
    fn words(&self, what: &str) -> String {
        if self.label.is_empty() {
            format!("host run {what}")
        } else {
            format!("host run {} {what}", prober_core::go_quote(self.label.as_bytes()))
        }
    }

    /// A run the host did not complete in time: Failure with reason `timeout`, worded as the
    /// exec probe words its timeout (`command timed out: "LABEL" timed out after 1s`).
    pub(crate) fn timeout_outcome(&self, now: Instant) -> Outcome {
        let after = format_duration(self.timeout);
        let message = if self.label.is_empty() {
            format!("host run timed out after {after}")
        } else {
            let label = prober_core::go_quote(self.label.as_bytes());
            format!("host run timed out: {label} timed out after {after}")
        };
        let mut o = Outcome::failure(Reason::Timeout, message);
        o.timings.total =
            self.started.map(|s| now.saturating_duration_since(s)).unwrap_or_default();
        o
    }
}

impl Machine for HostRunProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        Step::Pending
    }
    fn ready(&mut self, _: &mut Ctx<'_>, _: usize, _: Ready) -> Step {
        Step::Pending
    }
    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        match self.wake_at() {
            Some(deadline) if cx.now >= deadline => Step::Done(self.timeout_outcome(cx.now)),
            _ => Step::Pending,
        }
    }
    fn wake_at(&self) -> Option<Instant> {
        self.started.map(|s| s + self.timeout)
    }
    fn cancel(&mut self, _: &mut Ctx<'_>) {}
}

/// The outcome of a one-shot check of a host-run probe: there is no host to perform it.
pub(crate) fn no_host_outcome() -> Outcome {
    Outcome::unknown(
        Reason::Unsupported,
        "a host-run probe is performed by its host: set it as a target's probe of an engine \
         (a one-shot check has no host to run it)",
    )
}

/// The refusal of a one-shot submit of a host-run probe (see [`no_host_outcome`]).
pub(crate) fn refuse_submit(spec: &prober_core::ProbeSpec) -> Result<(), EngineError> {
    match spec.kind {
        prober_core::ProbeKind::HostRun(_) => Err(EngineError::HostRunCheck),
        _ => Ok(()),
    }
}
