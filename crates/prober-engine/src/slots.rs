//! What the engine keeps: targets with their workers, and the in-flight runs (slots) with whom
//! they belong to.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeResult, Role};

use crate::arena::Key;
use crate::probe::{AnyProbe, PreparedSpec};
use crate::worker::Worker;

/// Who an in-flight probe belongs to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Owner {
    /// `late_us`: how long after its scheduled instant the run started (for run events).
    Worker {
        target: Key,
        role: Role,
        late_us: u64,
    },
    Check {
        tag: u64,
    },
}

#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) probe: AnyProbe,
    pub(crate) owner: Owner,
    /// A [`Engine::submit_with`](crate::Engine::submit_with) check's function, which takes the
    /// outcome instead of the event queue.
    pub(crate) done: Option<CheckDone>,
    /// The instant of this slot's live timer entry, if any.
    pub(crate) timer: Option<Instant>,
    /// On the list of runs to resume: a run that yields again before its resume (from a
    /// readiness event) is not queued twice, so it gets one budget of work a turn.
    pub(crate) resume_queued: bool,
}

#[derive(Debug)]
pub(crate) struct WorkerSlot {
    pub(crate) spec: PreparedSpec,
    pub(crate) state: Worker,
    /// The instant of the worker's live timer entry (its next scheduled run).
    pub(crate) next_run: Option<Instant>,
    /// The in-flight run's slot.
    pub(crate) in_flight: Option<Key>,
    /// A tick or trigger arrived while a run was in flight: run again right after it (the
    /// kubelet's worker buffers one tick and one manual trigger the same way).
    pub(crate) run_after: bool,
    /// The last scheduled tick and the state's period that placed `next_run` from it: when a
    /// result changes the state's period (per-state periods), the next run is moved.
    pub(crate) tick: Option<(Instant, Duration)>,
}

#[derive(Debug)]
pub(crate) struct Target {
    /// When the target (re)started: initial delays count from here.
    pub(crate) started_at: Instant,
    /// Boxed: most targets have one probe of three, and a slot is 200 bytes (a million
    /// targets: 616 bytes each inline, 40 plus the used slot boxed; `docs/benchmarks.md`).
    pub(crate) workers: [Option<Box<WorkerSlot>>; 3],
}

impl Target {
    /// The kubelet's `Started`: no startup probe, or it published Success.
    pub(crate) fn started(&self) -> bool {
        match &self.workers[Role::Startup.index()] {
            None => true,
            Some(w) => w.state.value() == ProbeResult::Success,
        }
    }
}

/// The function a [`submit_with`](crate::Engine::submit_with) check calls with its outcome.
pub(crate) struct CheckDone(Box<dyn FnOnce(Box<Outcome>) + Send>);

impl CheckDone {
    pub(crate) fn new(f: impl FnOnce(Box<Outcome>) + Send + 'static) -> CheckDone {
        CheckDone(Box::new(f))
    }

    /// Calls the host's function. A panic in it is the host's and ends only that call: it is
    /// caught here so that the engine and every other run go on (the panic's message has
    /// already been printed by the panic hook).
    pub(crate) fn call(self, outcome: Outcome) {
        let f = self.0;
        let _ = catch_unwind(AssertUnwindSafe(move || f(Box::new(outcome))));
    }
}

impl fmt::Debug for CheckDone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CheckDone")
    }
}
