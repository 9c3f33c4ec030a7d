//! What the engine tells its host.

use prober_core::{Outcome, ProbeResult, Role};

/// A target's identity, chosen by the engine. Never reused within one engine.
pub type TargetId = u64;

/// One thing that happened, in the order it happened.
///
/// New kinds of events may be added: the enum is `#[non_exhaustive]`, so a `match` on it
/// needs a wildcard arm (ignoring events one does not know is the intended handling).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A worker's published value changed (or was set to its initial value when the probe was
    /// set or the target restarted; then `outcome` is `None`).
    State { target: TargetId, role: Role, result: ProbeResult, outcome: Option<Box<Outcome>> },
    /// A one-shot probe from [`crate::Engine::submit`] finished.
    Check { tag: u64, outcome: Box<Outcome> },
    /// A worker ran once (only with [`crate::EngineConfig::every_run`]); `late_us` is how long
    /// after its scheduled time the run started.
    Run { target: TargetId, role: Role, outcome: Box<Outcome>, late_us: u64 },
}

impl Event {
    pub fn target(&self) -> Option<TargetId> {
        match self {
            Event::State { target, .. } | Event::Run { target, .. } => Some(*target),
            Event::Check { .. } => None,
        }
    }
}
