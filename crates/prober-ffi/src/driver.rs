//! What a `prober_engine` drives: one engine on the host's thread (`prober_engine_new`, and
//! `prober_engine_new_with_threads` with 1 thread: today's engine, nothing started), or a group
//! of engines on threads of their own (`crate::threads`). Every export calls these methods,
//! which have the engine's names, so the two differ only here.

use std::io;
use std::time::Duration;

use ::prober_engine::{
    Completion, Engine, EngineError, Event, Handle, HostWaker, ShardedEngine, TargetId,
};
use prober_core::{Outcome, ProbeResult, ProbeSpec, Role, Schedule};

use crate::set_error;
use crate::status::*;

#[allow(
    clippy::large_enum_variant,
    reason = "the lone engine is the common case: boxing it would put a pointer hop in every call"
)]
pub(crate) enum Driver {
    One(Engine),
    Group(Group),
}

/// An engine thread's answer, or why none came (its engine is gone).
fn gone(e: &io::Error) -> prober_status {
    set_error(PROBER_E_IO, format!("an engine thread did not answer: {e}"))
}

impl Driver {
    /// Why the engine can no longer be used (an engine thread ended early), if it cannot.
    pub(crate) fn failure(&self) -> Option<prober_status> {
        match self {
            Driver::One(_) => None,
            Driver::Group(g) => g.failure(),
        }
    }

    pub(crate) fn add_target(&mut self) -> Result<TargetId, prober_status> {
        match self {
            Driver::One(e) => Ok(e.add_target()),
            Driver::Group(g) => g.handle().add_target().map_err(|e| gone(&e)),
        }
    }

    pub(crate) fn set_probe(
        &mut self,
        target: TargetId,
        role: Role,
        spec: ProbeSpec,
        schedule: Schedule,
    ) -> Result<(), EngineError> {
        match self {
            Driver::One(e) => e.set_probe(target, role, spec, schedule),
            Driver::Group(g) => g.handle().set_probe(target, role, spec, schedule),
        }
    }

    pub(crate) fn clear_probe(&mut self, target: TargetId, role: Role) -> Result<(), EngineError> {
        match self {
            Driver::One(e) => e.clear_probe(target, role),
            Driver::Group(g) => g.handle().clear_probe(target, role),
        }
    }

    pub(crate) fn restart_target(&mut self, target: TargetId) -> Result<(), EngineError> {
        match self {
            Driver::One(e) => e.restart_target(target),
            Driver::Group(g) => g.handle().restart_target(target),
        }
    }

    pub(crate) fn remove_target(&mut self, target: TargetId) -> Result<(), EngineError> {
        match self {
            Driver::One(e) => e.remove_target(target),
            Driver::Group(g) => g.0.remove_target(target),
        }
    }

    pub(crate) fn trigger(&mut self, target: TargetId, role: Role) -> Result<(), EngineError> {
        match self {
            Driver::One(e) => e.trigger(target, role),
            // Through the owner's engine and back, so that an unknown target or a role without
            // a probe is refused as a lone engine refuses it.
            Driver::Group(g) => g
                .handle()
                .call_target(target, move |e| e.trigger(target, role))
                .map_err(EngineError::Io)?,
        }
    }

    pub(crate) fn published(
        &mut self,
        target: TargetId,
        role: Role,
    ) -> Result<ProbeResult, EngineError> {
        match self {
            Driver::One(e) => e.published(target, role),
            Driver::Group(g) => g.handle().published(target, role),
        }
    }

    pub(crate) fn submit(&mut self, spec: ProbeSpec, tag: u64) -> Result<(), EngineError> {
        match self {
            Driver::One(e) => e.submit(spec, tag),
            Driver::Group(g) => g.handle().submit(spec, tag),
        }
    }

    pub(crate) fn submit_with(
        &mut self,
        spec: ProbeSpec,
        tag: u64,
        done: impl FnOnce(Box<Outcome>) + Send + 'static,
    ) -> Result<(), EngineError> {
        match self {
            Driver::One(e) => e.submit_with(spec, tag, done),
            Driver::Group(g) => g.0.submit_with(spec, tag, done),
        }
    }

    pub(crate) fn cancel_check(&mut self, tag: u64) -> Result<usize, prober_status> {
        match self {
            Driver::One(e) => Ok(e.cancel_check(tag)),
            Driver::Group(g) => g.0.cancel_check(tag).map_err(|e| gone(&e)),
        }
    }

    pub(crate) fn complete_run(
        &mut self,
        run: u64,
        result: ProbeResult,
        output: &[u8],
    ) -> Result<Completion, prober_status> {
        match self {
            Driver::One(e) => Ok(e.complete_run(run, result, output)),
            Driver::Group(g) => {
                let output = output.to_vec();
                g.handle()
                    .call_target(run, move |e| e.complete_run(run, result, &output))
                    .map_err(|e| gone(&e))
            }
        }
    }

    /// `f` on every engine, in their order: the counters of a group are their sums.
    pub(crate) fn each<R: Send + 'static>(
        &mut self,
        f: impl Fn(&mut Engine) -> R + Clone + Send + 'static,
    ) -> Result<Vec<R>, prober_status> {
        match self {
            Driver::One(e) => Ok(vec![f(e)]),
            Driver::Group(g) => g.handle().call_each(f).map_err(|e| gone(&e)),
        }
    }

    pub(crate) fn in_flight(&mut self) -> Result<usize, prober_status> {
        Ok(self.each(|e| e.in_flight())?.into_iter().sum())
    }

    /// Events waiting for the host: a group's are those its threads handed over (an engine
    /// keeps more only while that queue is full, and hands them over as it drains).
    pub(crate) fn pending_events(&self) -> usize {
        match self {
            Driver::One(e) => e.pending_events(),
            Driver::Group(g) => g.0.pending_events(),
        }
    }

    pub(crate) fn next_event(&mut self) -> Option<Event> {
        match self {
            Driver::One(e) => e.next_event(),
            Driver::Group(g) => g.0.next_event(),
        }
    }

    pub(crate) fn fd(&self) -> i32 {
        match self {
            Driver::One(e) => e.fd(),
            Driver::Group(g) => g.0.fd(),
        }
    }

    /// When the host must step without I/O: a group's threads keep their own timers, so
    /// never.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        match self {
            Driver::One(e) => e.timeout(),
            Driver::Group(_) => None,
        }
    }

    /// Waits up to `limit` (`Some(0)`: a step), then does the host's part of the turn.
    pub(crate) fn wait(&mut self, limit: Option<Duration>) -> Result<(), prober_status> {
        let io = |e: io::Error| set_error(PROBER_E_IO, e);
        match self {
            Driver::One(e) if limit == Some(Duration::ZERO) => e.step().map(drop).map_err(io),
            Driver::One(e) => e.wait(limit).map(drop).map_err(io),
            Driver::Group(g) => g.wait(limit),
        }
    }
}

/// How `prober_engine_wakeup` interrupts a wait, from any thread.
pub(crate) enum Wakeup {
    /// A lone engine: its own wake-up.
    Engine(Handle),
    /// A group: the host's queue, which its wait polls.
    Group(HostWaker),
}

impl Wakeup {
    pub(crate) fn wake(&self) -> io::Result<()> {
        match self {
            Wakeup::Engine(h) => h.wakeup(),
            Wakeup::Group(w) => w.wake(),
        }
    }
}

/// The engines on their threads, as the C calls see them.
pub(crate) struct Group(pub(crate) ShardedEngine);

impl Group {
    pub(crate) fn handle(&self) -> &Handle {
        self.0.handle()
    }

    /// The status (with its text recorded) of an engine thread's early end, if one ended.
    pub(crate) fn failure(&self) -> Option<prober_status> {
        let end = self.0.ended()?;
        let (status, how) =
            if end.panicked { (PROBER_E_PANIC, "panicked") } else { (PROBER_E_IO, "failed") };
        Some(set_error(
            status,
            format!(
                "engine thread {} {how}: {}; the engine is unusable (only prober_engine_free \
                 remains)",
                end.engine, end.message
            ),
        ))
    }

    /// Waits as `prober_engine_wait` (`Some(0)`: a step), then reports an engine thread's end.
    pub(crate) fn wait(&mut self, limit: Option<Duration>) -> Result<(), prober_status> {
        self.0.wait(limit).map_err(|e| set_error(PROBER_E_IO, e))?;
        self.failure().map_or(Ok(()), Err)
    }
}
