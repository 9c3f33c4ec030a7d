//! What the engine tells its host.

use prober_core::{Outcome, ProbeResult, Role};

/// A target's identity, chosen by the engine: never 0 (C hosts use 0 for "no target"), and
/// not reused by the engine (a removed target's slot is reused under a new generation, which is
/// the id's high half, so the old id stays unknown until 2^32 targets have used that slot).
pub type TargetId = u64;

/// Names one announced host run, for [`Engine::complete_run`](crate::Engine::complete_run);
/// never 0.
pub type RunId = u64;

/// One thing that happened, in the order it happened.
///
/// New kinds of events may be added: the enum is `#[non_exhaustive]`, so a `match` on it
/// needs a wildcard arm (ignoring events one does not know is the intended handling).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A worker's published value changed (or was set to its initial value when the probe was
    /// set or the target restarted; then `outcome` is `None`).
    State {
        /// The target whose worker it is.
        target: TargetId,
        /// Which of the target's workers.
        role: Role,
        /// The value now published (what the kubelet would put in the container's status).
        result: ProbeResult,
        /// The run that made the change; `None` for an initial value.
        outcome: Option<Box<Outcome>>,
    },
    /// A one-shot probe from [`crate::Engine::submit`] finished.
    Check {
        /// The tag given to `submit`, to match the outcome to its request.
        tag: u64,
        /// What the probe found.
        outcome: Box<Outcome>,
    },
    /// A worker ran once (only with [`crate::EngineConfig::every_run`]), whether or not its
    /// published value changed: for hosts that log or count every run.
    Run {
        /// The target whose worker it is.
        target: TargetId,
        /// Which of the target's workers.
        role: Role,
        /// What the run found.
        outcome: Box<Outcome>,
        /// How long after its scheduled instant the run started, in microseconds: how well
        /// the engine kept time.
        late_us: u64,
    },
    /// A run of a host-run probe ([`prober_core::HostRunSpec`]) started: the host performs it
    /// and answers with [`crate::Engine::complete_run`] before the probe's timeout, or the run
    /// ends as a timeout. An announcement the host has not drained when its run ends (timed
    /// out, cancelled) is withdrawn.
    HostRun {
        /// The id to complete the run with; never 0.
        run: RunId,
        /// The target whose worker it is.
        target: TargetId,
        /// Which of the target's workers.
        role: Role,
        /// The probe's label ([`prober_core::HostRunSpec::label`]).
        label: String,
    },
}

impl Event {
    /// The target the event is about; `None` for a one-shot check, which has none.
    pub fn target(&self) -> Option<TargetId> {
        match self {
            Event::State { target, .. }
            | Event::Run { target, .. }
            | Event::HostRun { target, .. } => Some(*target),
            Event::Check { .. } => None,
        }
    }
}
