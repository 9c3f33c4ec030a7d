//! The engine from other threads: a [`Handle`] wakes it and queues work, which the engine takes
//! at its next turn.

use std::io;
use std::sync::Arc;

use mio::Waker;
use prober_core::{ProbeSpec, Role};

use crate::config::EngineError;
use crate::engine::{Command, Engine, Shared};
use crate::event::TargetId;
use crate::hostrun::refuse_submit;
use crate::slots::CheckDone;

/// Thread-safe handle: wakes the engine and queues one-shot checks and triggers.
#[derive(Clone, Debug)]
pub struct Handle {
    pub(crate) waker: Arc<Waker>,
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    /// Interrupts a [`Engine::wait`] in progress (or makes the next one return at once).
    ///
    /// # Errors
    ///
    /// The error of writing to the engine's wake-up descriptor (an eventfd).
    pub fn wakeup(&self) -> io::Result<()> {
        self.waker.wake()
    }

    /// Queues a one-shot probe; the engine starts it on its next step.
    ///
    /// # Errors
    ///
    /// [`EngineError::Spec`] for an invalid spec (checked here, before queueing),
    /// [`EngineError::HostRunCheck`] for a host-run probe, and [`EngineError::Io`] when the
    /// engine is gone or cannot be woken.
    pub fn submit(&self, spec: ProbeSpec, tag: u64) -> Result<(), EngineError> {
        spec.validate()?;
        refuse_submit(&spec)?;
        self.shared.push(Command::Submit(Box::new(spec), tag)).map_err(EngineError::Io)?;
        self.waker.wake().map_err(EngineError::Io)
    }

    /// Queues a one-shot probe whose outcome goes to `done`, called on the engine's thread
    /// when the check ends, instead of an [`Event::Check`](crate::Event::Check)
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
        self.shared.push(command).map_err(EngineError::Io)?;
        self.waker.wake().map_err(EngineError::Io)
    }

    /// Cancels the one-shot checks submitted with `tag` ([`Engine::cancel_check`]) at the
    /// engine's next turn, without waiting for it: for a thread that must not block on the
    /// engine (an HTTP server's loop whose client has gone). A submit queued before this call
    /// is started first, so it is cancelled too. Each cancelled check still reports its
    /// [`crate::Event::Check`] (reason `Cancelled`).
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when the engine is gone or cannot be woken.
    pub fn cancel_check(&self, tag: u64) -> io::Result<()> {
        self.shared.push(Command::Call(Box::new(move |e: &mut Engine| {
            e.cancel_check(tag);
        })))?;
        self.waker.wake()
    }

    /// Runs `f` on the engine's thread at its next turn and returns its result: the way to use
    /// the whole engine API (targets, probes, restarts) from another thread. Blocks until the
    /// engine thread gets to it; must not be called from that thread itself.
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when the engine is gone (dropped, or its thread ended) before running
    /// `f`, or cannot be woken.
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Engine) -> R + Send + 'static,
    ) -> io::Result<R> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job = move |e: &mut Engine| {
            let _ = tx.send(f(e));
        };
        self.shared.push(Command::Call(Box::new(job)))?;
        self.waker.wake()?;
        rx.recv().map_err(|_| io::Error::other("the engine stopped before running the call"))
    }

    /// Queues a manual trigger; unknown targets or roles are ignored when it is applied.
    ///
    /// # Errors
    ///
    /// An [`io::Error`] when the engine is gone or cannot be woken.
    pub fn trigger(&self, target: TargetId, role: Role) -> io::Result<()> {
        self.shared.push(Command::Trigger(target, role))?;
        self.waker.wake()
    }
}

impl Engine {
    /// A [`Handle`] for other threads: wakes this engine and queues work on it.
    pub fn handle(&self) -> Handle {
        Handle { waker: self.waker.clone(), shared: self.shared.clone() }
    }
}
