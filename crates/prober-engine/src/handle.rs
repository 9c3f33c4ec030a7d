//! The engine from other threads: a [`Handle`] wakes it and queues work, which the engine takes
//! at its next turn. One handle may stand for several engines, each on its own thread
//! ([`crate::spawn_sharded`]): it then sends a target's work to the engine that has the
//! target, spreads one-shot checks over the engines, and cancels checks on all of them.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mio::Waker;
use prober_core::{ProbeSpec, Role};

use crate::config::EngineError;
use crate::engine::{Command, Engine, Shared};
use crate::event::TargetId;
use crate::hostrun::refuse_submit;
use crate::shards::Shard;
use crate::slots::CheckDone;

/// Thread-safe handle: wakes the engine and queues one-shot checks and triggers.
///
/// A handle from [`Engine::handle`] stands for that engine. One from
/// [`spawn_sharded`](crate::spawn_sharded) stands for all the engines of its group: a target's
/// work ([`Handle::trigger`], [`Handle::call_target`], [`Handle::set_probe`],
/// [`Handle::remove_target`], [`Handle::complete_run`], ...) goes to the engine that has the
/// target (its id says which), one-shot checks ([`Handle::submit`],
/// [`Handle::submit_with`]) and [`Handle::call`]s go to the engines in turn, and
/// [`Handle::cancel_check`] and [`Handle::wakeup`] reach every engine.
#[derive(Clone, Debug)]
pub struct Handle {
    engines: Arc<[Link]>,
    /// The next engine in turn for a submit or a call, shared by the handle's clones.
    turn: Arc<AtomicUsize>,
}

/// How to reach one engine: its queue and its wake-up descriptor.
#[derive(Debug)]
pub(crate) struct Link {
    waker: Arc<Waker>,
    shared: Arc<Shared>,
}

impl Link {
    /// Queues `command` for the engine and wakes it.
    fn send(&self, command: Command) -> io::Result<()> {
        self.shared.push(command)?;
        self.waker.wake()
    }

    /// Runs `f` on the engine's thread; returns what receives its result.
    fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> R + Send + 'static,
    ) -> io::Result<std::sync::mpsc::Receiver<R>> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job = move |e: &mut Engine| {
            let _ = tx.send(f(e));
        };
        self.send(Command::Call(Box::new(job)))?;
        Ok(rx)
    }
}

/// The answer of a call, or why none came.
fn answer<R>(rx: &std::sync::mpsc::Receiver<R>) -> io::Result<R> {
    rx.recv().map_err(|_| io::Error::other("the engine stopped before running the call"))
}

impl Handle {
    /// A handle for the engines of `engines`, in shard order (engine `i` is shard `i`).
    pub(crate) fn over(engines: impl IntoIterator<Item = Link>) -> Handle {
        let engines: Arc<[Link]> = engines.into_iter().collect();
        assert!(!engines.is_empty(), "a handle for no engine");
        Handle { engines, turn: Arc::default() }
    }

    /// How many engines this handle stands for: 1, or the `threads` of
    /// [`spawn_sharded`](crate::spawn_sharded).
    pub fn engines(&self) -> usize {
        self.engines.len()
    }

    /// The next engine in turn.
    fn next(&self) -> &Link {
        match &*self.engines {
            [one] => one,
            all => &all[self.turn.fetch_add(1, Ordering::Relaxed) % all.len()],
        }
    }

    /// The engine that has target (or host run) `id`.
    fn owner(&self, id: u64) -> &Link {
        &self.engines[Shard::of_id(id, self.engines.len())]
    }

    /// Interrupts a [`Engine::wait`] in progress (or makes the next one return at once), in
    /// every engine of the handle.
    ///
    /// # Errors
    ///
    /// The error of writing to the engine's wake-up descriptor (an eventfd).
    pub fn wakeup(&self) -> io::Result<()> {
        // Every engine is woken even when one cannot be.
        self.engines.iter().map(|l| l.waker.wake()).fold(Ok(()), Result::and)
    }

    /// Queues a one-shot probe; the engine starts it on its next step. With several engines,
    /// each submit goes to the next engine in turn.
    ///
    /// # Errors
    ///
    /// [`EngineError::Spec`] for an invalid spec (checked here, before queueing),
    /// [`EngineError::HostRunCheck`] for a host-run probe, and [`EngineError::Io`] when the
    /// engine is gone or cannot be woken.
    pub fn submit(&self, spec: ProbeSpec, tag: u64) -> Result<(), EngineError> {
        spec.validate()?;
        refuse_submit(&spec)?;
        self.next().send(Command::Submit(Box::new(spec), tag)).map_err(EngineError::Io)
    }

    /// Queues a one-shot probe whose outcome goes to `done`, called on the engine's thread
    /// that runs it, when the check ends, instead of an [`Event::Check`](crate::Event::Check)
    /// ([`Engine::submit_with`]: what `done` may and may not do). `done` is called exactly
    /// once if this returns `Ok`, unless the engine is dropped first (then it is dropped
    /// uncalled: a waiter holding a channel's receiver sees the sender go).
    ///
    /// # Errors
    ///
    /// As [`Handle::submit`]; `done` is dropped uncalled.
    pub fn submit_with(
        &self,
        spec: ProbeSpec,
        tag: u64,
        done: impl FnOnce(Box<prober_core::Outcome>) + Send + 'static,
    ) -> Result<(), EngineError> {
        spec.validate()?;
        refuse_submit(&spec)?;
        let command = Command::SubmitWith(Box::new(spec), tag, CheckDone::new(done));
        self.next().send(command).map_err(EngineError::Io)
    }

    /// As [`Handle::submit_with`], for a spec validated and prepared before
    /// ([`crate::CheckPlan`]; [`Engine::submit_plan_with`]).
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when the engine is gone or cannot be woken; `done` is dropped uncalled.
    pub fn submit_plan_with(
        &self,
        plan: &crate::CheckPlan,
        tag: u64,
        done: impl FnOnce(Box<prober_core::Outcome>) + Send + 'static,
    ) -> io::Result<()> {
        let plan = plan.clone();
        self.next().send(Command::Call(Box::new(move |e: &mut Engine| {
            e.submit_plan_with(&plan, tag, done);
        })))
    }

    /// Cancels the one-shot checks submitted with `tag` ([`Engine::cancel_check`]) at the
    /// engine's next turn, without waiting for it: for a thread that must not block on the
    /// engine (an HTTP server's loop whose client has gone). A submit queued before this call
    /// is started first, so it is cancelled too. Each cancelled check still reports its
    /// [`crate::Event::Check`] (reason `Cancelled`). With several engines, every engine
    /// cancels its own checks of `tag`.
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when an engine is gone or cannot be woken (the others are still told).
    pub fn cancel_check(&self, tag: u64) -> io::Result<()> {
        let cancel = |l: &Link| {
            l.send(Command::Call(Box::new(move |e: &mut Engine| {
                e.cancel_check(tag);
            })))
        };
        self.engines.iter().map(cancel).fold(Ok(()), Result::and)
    }

    /// Runs `f` on the engine's thread at its next turn and returns its result: the way to use
    /// the whole engine API (targets, probes, restarts) from another thread. Blocks until the
    /// engine thread gets to it; must not be called from that thread itself.
    ///
    /// With several engines, `f` runs on the next engine in turn: right for work that makes
    /// its own targets (`add_target` then `set_probe` in one call: the target is that
    /// engine's), wrong for work on a target made before, which goes through
    /// [`Handle::call_target`]; [`Handle::call_each`] runs on every engine.
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when the engine is gone (dropped, or its thread ended) before running
    /// `f`, or cannot be woken.
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> R + Send + 'static,
    ) -> io::Result<R> {
        answer(&self.next().call(f)?)
    }

    /// As [`Handle::call`], on the engine that has `target` (the only engine there is, for a
    /// handle of one). An id no engine issued goes to some engine, which knows no such target.
    ///
    /// # Errors
    ///
    /// As [`Handle::call`].
    pub fn call_target<R: Send + 'static>(
        &self,
        target: TargetId,
        f: impl FnOnce(&mut Engine) -> R + Send + 'static,
    ) -> io::Result<R> {
        answer(&self.owner(target).call(f)?)
    }

    /// Runs `f` on every engine of the handle, all at once, and returns their results in the
    /// engines' order: for counts and settings over the group (`target_count`, `in_flight`).
    ///
    /// # Errors
    ///
    /// As [`Handle::call`], for the first engine that failed.
    pub fn call_each<R: Send + 'static>(
        &self,
        f: impl Fn(&mut Engine) -> R + Clone + Send + 'static,
    ) -> io::Result<Vec<R>> {
        let waiting: Vec<_> = self.engines.iter().map(|l| l.call(f.clone())).collect();
        waiting.into_iter().map(|rx| answer(&rx?)).collect()
    }

    /// Queues a manual trigger (for the engine that has the target); unknown targets or roles
    /// are ignored when it is applied.
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when the engine is gone or cannot be woken.
    pub fn trigger(&self, target: TargetId, role: Role) -> io::Result<()> {
        self.owner(target).send(Command::Trigger(target, role))
    }

    /// [`Engine::add_target`] on the next engine in turn (so a group's targets are spread
    /// evenly over its engines); blocks as [`Handle::call`] does.
    ///
    /// # Errors
    ///
    /// As [`Handle::call`].
    pub fn add_target(&self) -> io::Result<TargetId> {
        self.call(Engine::add_target)
    }

    /// [`Engine::set_probe`] on the engine that has `target`; blocks as [`Handle::call`] does.
    ///
    /// # Errors
    ///
    /// As [`Engine::set_probe`], and [`EngineError::Io`] when the engine is gone.
    pub fn set_probe(
        &self,
        target: TargetId,
        role: Role,
        spec: ProbeSpec,
        schedule: prober_core::Schedule,
    ) -> Result<(), EngineError> {
        self.call_target(target, move |e| e.set_probe(target, role, spec, schedule))
            .map_err(EngineError::Io)?
    }

    /// [`Engine::clear_probe`] on the engine that has `target`; blocks as [`Handle::call`]
    /// does.
    ///
    /// # Errors
    ///
    /// As [`Engine::clear_probe`], and [`EngineError::Io`] when the engine is gone.
    pub fn clear_probe(&self, target: TargetId, role: Role) -> Result<(), EngineError> {
        self.call_target(target, move |e| e.clear_probe(target, role)).map_err(EngineError::Io)?
    }

    /// [`Engine::restart_target`] on the engine that has `target`; blocks as [`Handle::call`]
    /// does.
    ///
    /// # Errors
    ///
    /// As [`Engine::restart_target`], and [`EngineError::Io`] when the engine is gone.
    pub fn restart_target(&self, target: TargetId) -> Result<(), EngineError> {
        self.call_target(target, move |e| e.restart_target(target)).map_err(EngineError::Io)?
    }

    /// [`Engine::remove_target`] on the engine that has `target`; blocks as [`Handle::call`]
    /// does.
    ///
    /// # Errors
    ///
    /// As [`Engine::remove_target`], and [`EngineError::Io`] when the engine is gone.
    pub fn remove_target(&self, target: TargetId) -> Result<(), EngineError> {
        self.call_target(target, move |e| e.remove_target(target)).map_err(EngineError::Io)?
    }

    /// [`Engine::published`] from the engine that has `target`; blocks as [`Handle::call`]
    /// does.
    ///
    /// # Errors
    ///
    /// As [`Engine::published`], and [`EngineError::Io`] when the engine is gone.
    pub fn published(
        &self,
        target: TargetId,
        role: Role,
    ) -> Result<prober_core::ProbeResult, EngineError> {
        self.call_target(target, move |e| e.published(target, role)).map_err(EngineError::Io)?
    }

    /// Queues `job` for the engine that has `id` (a target or a host run), without waiting.
    pub(crate) fn send_to_owner(
        &self,
        id: u64,
        job: impl FnOnce(&mut Engine) + Send + 'static,
    ) -> io::Result<()> {
        self.owner(id).send(Command::Call(Box::new(job)))
    }
}

impl Engine {
    /// A [`Handle`] for other threads: wakes this engine and queues work on it.
    pub fn handle(&self) -> Handle {
        Handle::over([self.link()])
    }

    /// How a [`Handle`] reaches this engine.
    pub(crate) fn link(&self) -> Link {
        Link { waker: self.waker.clone(), shared: self.shared.clone() }
    }
}
