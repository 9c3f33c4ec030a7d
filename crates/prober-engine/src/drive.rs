//! Running probes: starting a run in a slot, driving its machine, completing it (a worker's
//! verdict or a check's event) and cancelling it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use prober_core::{Outcome, Role};
use prober_io::{Ctx, Machine, Step};

use crate::arena::Key;
use crate::engine::Engine;
use crate::event::{Event, TargetId};
use crate::probe::{self, AnyProbe};
use crate::slots::{CheckDone, Owner, Slot};
use crate::timers::TimerKey;
use crate::token::run_ctx;
use crate::worker::Verdict;
use prober_core::ProbeResult;

impl Engine {
    pub(crate) fn start_probe(&mut self, probe: AnyProbe, owner: Owner) {
        self.start_probe_with(probe, owner, None);
    }

    /// Starts a run; `done` (a [`Engine::submit_with`] check's) takes its outcome instead of
    /// the event queue.
    pub(crate) fn start_probe_with(
        &mut self,
        probe: AnyProbe,
        owner: Owner,
        done: Option<CheckDone>,
    ) {
        let label = match &probe {
            AnyProbe::HostRun(h) => Some(h.label().to_string()),
            _ => None,
        };
        let slot =
            self.slots.insert(Slot { probe, owner, done, timer: None, resume_queued: false });
        if let Owner::Worker { target, role, .. } = owner {
            if let Some(t) = self.targets.get_mut(target) {
                if let Some(w) = t.workers[role.index()].as_mut() {
                    w.in_flight = Some(slot);
                }
            }
        }
        if let Some(label) = label {
            self.announce_host_run(slot, owner, label);
        }
        self.drive(slot, |p, cx| p.start(cx));
    }

    /// Calls into one in-flight machine, then reschedules its timer or completes it. The
    /// clock is read here, per call: a turn that starts hundreds of probes must not hand the
    /// last ones a start time (and so a deadline) from the beginning of the turn.
    pub(crate) fn drive(&mut self, slot: Key, f: impl FnOnce(&mut AnyProbe, &mut Ctx<'_>) -> Step) {
        let now = Instant::now();
        let Some(s) = self.slots.get_mut(slot) else { return };
        let owner = match s.owner {
            Owner::Worker { target, .. } => Some(target.to_u64()),
            Owner::Check { .. } => None,
        };
        let mut cx = run_ctx(&self.poll, &self.mailbox, now, slot)
            .with_pool(&mut self.pool)
            .with_kept(&mut self.kept, owner)
            .with_shared(&mut self.icmp);
        // A panic in a probe's own code ends that run, not the engine: the machine is
        // cancelled (or, should that panic too, dropped: closing its descriptors and killing
        // its child) and the run completes Unknown, while every other run and target goes on.
        let step = match catch_unwind(AssertUnwindSafe(|| f(&mut s.probe, &mut cx))) {
            Ok(step) => step,
            Err(payload) => {
                let _ = catch_unwind(AssertUnwindSafe(|| s.probe.cancel(&mut cx)));
                Step::Done(probe::panicked(payload.as_ref()))
            }
        };
        if matches!(step, Step::Yield) && !s.resume_queued {
            s.resume_queued = true;
            self.yielded.push(slot);
        }
        match step {
            Step::Pending | Step::Yield => {
                let want = s.probe.wake_at();
                if want != s.timer {
                    s.timer = want;
                    if let Some(at) = want {
                        self.timers.push(at, TimerKey::Probe { slot });
                    }
                }
            }
            Step::Done(outcome) => {
                let s = self.slots.remove(slot).expect("slot checked above");
                if let AnyProbe::HostRun(_) = s.probe {
                    self.host_run_ended(slot, outcome.reason == prober_core::Reason::Timeout);
                }
                match s.done {
                    Some(done) => done.call(outcome),
                    None => self.complete(s.owner, outcome, now),
                }
            }
        }
    }

    pub(crate) fn complete(&mut self, owner: Owner, outcome: Outcome, now: Instant) {
        match owner {
            Owner::Check { tag } => {
                self.queue.push(Event::Check { tag, outcome: Box::new(outcome) })
            }
            Owner::Worker { target, role, late_us } => {
                let id = target.to_u64();
                let Ok(t) = self.target_mut(id) else { return };
                let Some(w) = t.workers[role.index()].as_mut() else { return };
                w.in_flight = None;
                let verdict = w.state.record(outcome.result);
                let retry =
                    matches!(verdict, Verdict::RetryNow).then(|| AnyProbe::prepared(&w.spec));
                let run_again = retry.is_none() && std::mem::take(&mut w.run_after);
                if self.config.every_run {
                    let o = Box::new(outcome.clone());
                    self.queue.push(Event::Run { target: id, role, outcome: o, late_us });
                }
                if let Some(probe) = retry {
                    self.start_probe(probe, owner);
                } else if run_again {
                    self.schedule_worker(id, role, now);
                } else {
                    self.reperiod(id, role, now);
                }
                if let Verdict::Published(result) = verdict {
                    let o = Some(Box::new(outcome));
                    self.queue.push(Event::State { target: id, role, result, outcome: o });
                    if role == Role::Startup && result == ProbeResult::Success {
                        // As the kubelet's status sync does: check readiness right away once
                        // the target has started, instead of up to a period later.
                        let _ = self.trigger(id, Role::Readiness);
                    }
                }
            }
        }
    }

    pub(crate) fn cancel_worker_run(&mut self, target: TargetId, role: Role) {
        let Ok(t) = self.target_mut(target) else { return };
        let Some(w) = t.workers[role.index()].as_mut() else { return };
        w.next_run = None;
        let Some(slot) = w.in_flight.take() else { return };
        if let Some(mut s) = self.slots.remove(slot) {
            let mut cx = run_ctx(&self.poll, &self.mailbox, Instant::now(), slot)
                .with_pool(&mut self.pool)
                .with_shared(&mut self.icmp);
            s.probe.cancel(&mut cx);
            if let AnyProbe::HostRun(_) = s.probe {
                self.host_run_ended(slot, false);
            }
        }
    }
}
