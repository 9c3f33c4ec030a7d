//! A completion per one-shot submission: [`Engine::submit_with`] and
//! [`Handle::submit_with`](crate::Handle::submit_with) take a function that the engine calls
//! with the check's outcome, on its own thread, when the check ends, instead of queueing an
//! [`Event::Check`](crate::Event::Check). A host that waits for one check (an HTTP request
//! waiting for its probe, a command-line check, a binding's pending call) then keeps no map
//! from tags to waiters: the waiter travels with the submission.

use std::sync::Arc;

use prober_core::{Outcome, ProbeSpec};

use crate::config::EngineError;
use crate::engine::Engine;
use crate::hostrun::refuse_submit;
use crate::probe::{AnyProbe, PreparedSpec};
use crate::slots::{CheckDone, Owner};

/// A one-shot check's spec validated and prepared once ([`CheckPlan::new`]), for a caller that
/// submits the same check again and again ([`Engine::submit_plan_with`]): `prober serve` keeps
/// one per module and target it was asked for, and a `/probe` of one of them then builds,
/// validates and compares no spec. A run never changes its plan; clones share it.
#[derive(Clone)]
pub struct CheckPlan {
    prepared: Arc<PreparedSpec>,
}

impl std::fmt::Debug for CheckPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A spec can carry secrets (a header's credentials): nothing of it is shown.
        f.debug_struct("CheckPlan").finish_non_exhaustive()
    }
}

impl CheckPlan {
    /// Validates and prepares `spec` for any number of one-shot runs.
    ///
    /// # Errors
    ///
    /// As [`Engine::submit`]: [`EngineError::Spec`] for an invalid spec,
    /// [`EngineError::HostRunCheck`] for a host-run probe.
    pub fn new(spec: ProbeSpec) -> Result<CheckPlan, EngineError> {
        spec.validate()?;
        refuse_submit(&spec)?;
        Ok(CheckPlan { prepared: Arc::new(PreparedSpec::new(spec)) })
    }

    /// The machine for one run.
    pub(crate) fn probe(&self) -> AnyProbe {
        AnyProbe::prepared(&self.prepared)
    }
}

impl Engine {
    /// Starts a one-shot probe whose outcome goes to `done`, called on this engine's thread
    /// when the check ends (from within [`Engine::step`]/[`Engine::wait`], from
    /// [`Engine::cancel_check`] when it is cancelled, or from within this call when the probe
    /// ends as it starts, as a kind this build lacks does), instead of an
    /// [`Event::Check`](crate::Event::Check). `tag` is still the check's name for
    /// [`Engine::cancel_check`]. `done` is called exactly once if this returns `Ok`, and never
    /// otherwise; if the engine is dropped with the check still running, `done` is dropped
    /// without being called. It runs on the engine's thread, so it should be quick (hand the
    /// outcome over, do not probe); a panic in it is caught and ends only that call.
    ///
    /// # Errors
    ///
    /// As [`Engine::submit`]: [`EngineError::Spec`] for an invalid spec,
    /// [`EngineError::HostRunCheck`] for a host-run probe; nothing is started.
    pub fn submit_with(
        &mut self,
        spec: ProbeSpec,
        tag: u64,
        done: impl FnOnce(Box<Outcome>) + Send + 'static,
    ) -> Result<(), EngineError> {
        let probe = self.plans.probe(spec)?;
        self.start_check(probe, tag, CheckDone::new(done));
        Ok(())
    }

    /// As [`Engine::submit_with`], for a spec validated and prepared before ([`CheckPlan`]):
    /// nothing is validated or built from a spec here. `done` is called exactly once.
    pub fn submit_plan_with(
        &mut self,
        plan: &CheckPlan,
        tag: u64,
        done: impl FnOnce(Box<Outcome>) + Send + 'static,
    ) {
        self.start_check(plan.probe(), tag, CheckDone::new(done));
    }

    pub(crate) fn start_check(&mut self, probe: AnyProbe, tag: u64, done: CheckDone) {
        self.start_probe_with(probe, Owner::Check { tag }, Some(done));
    }
}
