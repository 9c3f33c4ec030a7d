//! The engine's side of host runs ([`crate::hostrun`] has the machine): announcing a run as an
//! [`Event::HostRun`], withdrawing the announcement of a run that ended unanswered, and
//! completing a run with the host's answer, on the engine's thread or through a [`Handle`].

use std::time::Instant;

use prober_core::ProbeResult;
use prober_io::Machine;

use crate::arena::Key;
use crate::engine::Engine;
use crate::event::{Event, RunId};
use crate::handle::Handle;
use crate::hostrun::{Completion, HostRunStats};
use crate::probe::AnyProbe;
use crate::slots::Owner;

impl Engine {
    /// Announces the host run that was just started in `slot` (called before its machine
    /// starts, so the announcement comes before any outcome of it).
    pub(crate) fn announce_host_run(&mut self, slot: Key, owner: Owner, label: String) {
        let Owner::Worker { target, role, .. } = owner else { return };
        self.host_runs.announced += 1;
        self.queue.push(Event::HostRun {
            run: self.shard.run_id(slot),
            target: target.to_u64(),
            role,
            label,
        });
    }

    /// A host run ended without the host's answer (timed out or cancelled): an announcement
    /// the host has not drained yet is withdrawn, so that no host starts work for a run that
    /// is over.
    pub(crate) fn host_run_ended(&mut self, slot: Key, timed_out: bool) {
        if timed_out {
            self.host_runs.timed_out += 1;
        }
        self.queue.withdraw_host_run(self.shard.run_id(slot));
    }

    /// Completes host run `run` (from an [`Event::HostRun`]) with the host's `result` and
    /// `output` (kept up to the spec's output limit). An accepted result is recorded by the
    /// worker's rules as any run's: thresholds, holds, startup gating, the immediate retries of
    /// an Unknown. Success and Warning carry no message; Failure is `host run "LABEL" failed`
    /// and Unknown `host run "LABEL" could not be performed`, with reason `none`: what went
    /// wrong is in the output, in the host's words.
    ///
    /// A completion at or after the probe's timeout is late: the run ends as a timeout, as if
    /// the answer had not come (its deadline timer may not have fired yet). A completion for a
    /// run that is over (timed out, cancelled by the removal, restart or replacement of its
    /// probe, or completed already) or for an id no host run had is ignored. Both are counted
    /// ([`Engine::host_run_stats`]).
    pub fn complete_run(&mut self, run: RunId, result: ProbeResult, output: &[u8]) -> Completion {
        let Some(key) = self.shard.run_slot(run) else {
            // Another engine's run (of a sharded group), or no run at all.
            self.host_runs.unknown += 1;
            return Completion::Unknown;
        };
        let is_host_run =
            self.slots.get(key).is_some_and(|s| matches!(s.probe, AnyProbe::HostRun(_)));
        if !is_host_run {
            // A live slot of another kind of run was never announced; a stale key was.
            return if self.slots.get(key).is_none() && self.slots.issued(key) {
                self.host_runs.late += 1;
                Completion::Late
            } else {
                self.host_runs.unknown += 1;
                Completion::Unknown
            };
        }
        let Some(s) = self.slots.remove(key) else { return Completion::Unknown };
        let now = Instant::now();
        let AnyProbe::HostRun(probe) = &s.probe else { return Completion::Unknown };
        if probe.wake_at().is_some_and(|deadline| now >= deadline) {
            // The deadline passed and its timer has not fired yet (it fires on the engine's next
            // turn): the run timed out all the same, whatever the answer says.
            let outcome = probe.timeout_outcome(now);
            self.host_runs.timed_out += 1;
            self.host_runs.late += 1;
            self.complete(s.owner, outcome, now);
            return Completion::Late;
        }
        let outcome = probe.outcome(result, output, now);
        self.host_runs.completed += 1;
        self.complete(s.owner, outcome, now);
        Completion::Accepted
    }

    /// The counters of host-run probes.
    pub fn host_run_stats(&self) -> HostRunStats {
        self.host_runs
    }
}

impl Handle {
    /// [`Engine::complete_run`] from any thread: queued for the engine that announced the run
    /// (its id says which), and applied at that engine's next turn
    /// (a late or unknown id is then counted in [`Engine::host_run_stats`]).
    ///
    /// # Errors
    ///
    /// An [`std::io::Error`] when the engine is gone or cannot be woken.
    pub fn complete_run(
        &self,
        run: RunId,
        result: ProbeResult,
        output: Vec<u8>,
    ) -> std::io::Result<()> {
        self.send_to_owner(run, move |e: &mut Engine| {
            e.complete_run(run, result, &output);
        })
    }
}
