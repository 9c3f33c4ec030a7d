//! Engines on threads of their own that a host drives as it drives one [`Engine`]: a pollable
//! descriptor, a wait, a step and a drain ([`ShardedEngine`]). The C library's
//! `prober_engine_new_with_threads` and `prober watch --threads` are this.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mio::{Events, Poll, Token, Waker};
use prober_core::{Outcome, ProbeSpec};

use crate::config::{EngineConfig, EngineError};
use crate::event::{Event, TargetId};
use crate::handle::Handle;
use crate::runner::{CHANNEL_CAP, EngineEnd, EngineGroup, EventSink, spawn_sharded_into};

/// `threads` engines, each on a thread of its own (as [`spawn_sharded`](crate::spawn_sharded)
/// makes them), whose events wait in one queue for the host's thread: [`ShardedEngine::fd`]
/// is readable when something waits there, [`ShardedEngine::wait`] blocks until then,
/// [`ShardedEngine::next_event`] takes the events. The engines probe and keep time by
/// themselves, so the host has no timer to keep. Completions of
/// [`ShardedEngine::submit_with`] run on the host's thread, inside its waits, steps and
/// cancels: nothing of the host's runs on an engine thread.
///
/// The queue holds up to [`CHANNEL_CAP`] events; while it is full each engine keeps further
/// events under its own policy ([`Engine::drain`](crate::Engine::drain)) and hands them over
/// as the host drains. Dropping it stops the threads and drops the engines (every in-flight
/// probe cancelled; completions not run yet are dropped uncalled).
#[derive(Debug)]
pub struct ShardedEngine {
    group: EngineGroup,
    queue: Arc<HostQueue>,
    poll: Poll,
    ready: Events,
}

/// Interrupts a [`ShardedEngine::wait`] from any thread.
#[derive(Clone, Debug)]
pub struct HostWaker(Arc<HostQueue>);

impl HostWaker {
    /// Makes a wait in progress return (or the next one return at once).
    ///
    /// # Errors
    ///
    /// The error of writing to the queue's eventfd.
    pub fn wake(&self) -> io::Result<()> {
        self.0.waker.wake()
    }
}

/// A completion of [`ShardedEngine::submit_with`], to run on the host's thread.
type Completion = Box<dyn FnOnce() + Send>;

/// What the engine threads hand to the host.
struct HostQueue {
    queue: Mutex<Queue>,
    /// Wakes the host's poll: what its descriptor reports.
    waker: Waker,
    /// An engine was refused room since the host last made some: wake the engines when it
    /// does, rather than let them look again in their own time.
    refused: AtomicBool,
}

impl std::fmt::Debug for HostQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostQueue").finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Queue {
    events: VecDeque<Event>,
    done: VecDeque<Completion>,
    /// The first engine thread that ended early.
    ended: Option<EngineEnd>,
}

impl HostQueue {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A panic while holding the lock leaves the queue whole (pushes and pops only).
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wake(&self) {
        // An eventfd write fails only when its counter is full: the host is woken anyway.
        let _ = self.waker.wake();
    }
}

/// An engine thread's side of [`HostQueue`].
#[derive(Clone)]
struct Sink(Arc<HostQueue>);

impl EventSink for Sink {
    fn offer(&self, ev: Event) -> Result<(), Event> {
        let mut q = self.0.lock();
        if q.events.len() >= CHANNEL_CAP {
            self.0.refused.store(true, Ordering::Relaxed);
            return Err(ev);
        }
        q.events.push_back(ev);
        Ok(())
    }

    fn offered(&self) {
        self.0.wake();
    }

    fn ended(&self, end: &EngineEnd) {
        self.0.lock().ended.get_or_insert_with(|| end.clone());
        self.0.wake();
    }
}

impl ShardedEngine {
    /// Starts `threads` engines made with `config` (see
    /// [`spawn_sharded`](crate::spawn_sharded) for how targets and checks are spread).
    ///
    /// # Errors
    ///
    /// As [`spawn_sharded`](crate::spawn_sharded); the error of making the queue's descriptors.
    pub fn start(config: EngineConfig, threads: usize) -> io::Result<ShardedEngine> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), Token(0))?;
        let queue =
            Arc::new(HostQueue { queue: Mutex::default(), waker, refused: AtomicBool::new(false) });
        let group = spawn_sharded_into(config, threads, Sink(queue.clone()))?;
        Ok(ShardedEngine { group, queue, poll, ready: Events::with_capacity(4) })
    }

    /// Reaches the engines from any thread; a target's work goes to its engine.
    pub fn handle(&self) -> &Handle {
        self.group.handle()
    }

    /// Interrupts [`ShardedEngine::wait`] from any thread.
    pub fn host_waker(&self) -> HostWaker {
        HostWaker(self.queue.clone())
    }

    /// How the first engine thread that ended early ended, if one did: its engine is gone
    /// (its probes cancelled), so its targets report nothing more.
    pub fn ended(&self) -> Option<EngineEnd> {
        self.queue.lock().ended.clone()
    }

    /// The descriptor to poll for reading (an epoll set holding the queue's eventfd;
    /// close-on-exec): readable when events, completions or an engine thread's end wait.
    pub fn fd(&self) -> RawFd {
        self.poll.as_raw_fd()
    }

    /// Events handed over and not yet taken.
    pub fn pending_events(&self) -> usize {
        self.queue.lock().events.len()
    }

    /// The next event handed over, if any.
    pub fn next_event(&mut self) -> Option<Event> {
        let mut q = self.queue.lock();
        let ev = q.events.pop_front();
        let roomy = q.events.len() < CHANNEL_CAP / 2;
        drop(q);
        if roomy && self.queue.refused.swap(false, Ordering::Relaxed) {
            let _ = self.handle().wakeup();
        }
        ev
    }

    /// Moves up to `max` events into `out`; returns how many.
    pub fn drain(&mut self, out: &mut Vec<Event>, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            let Some(ev) = self.next_event() else { break };
            out.push(ev);
            n += 1;
        }
        n
    }

    /// Removes the target on its engine, then the events about it handed over already: none
    /// is delivered after the removal, as with one engine.
    ///
    /// # Errors
    ///
    /// As [`Handle::remove_target`].
    pub fn remove_target(&mut self, target: TargetId) -> Result<(), EngineError> {
        self.handle().remove_target(target)?;
        self.queue.lock().events.retain(|ev| ev.target() != Some(target));
        Ok(())
    }

    /// Submits a one-shot check whose `done` runs on the host's thread, inside the first
    /// wait, step or cancel after the check ends (never if this is dropped first).
    ///
    /// # Errors
    ///
    /// As [`Handle::submit_with`].
    pub fn submit_with(
        &mut self,
        spec: ProbeSpec,
        tag: u64,
        done: impl FnOnce(Box<Outcome>) + Send + 'static,
    ) -> Result<(), EngineError> {
        let queue = self.queue.clone();
        self.handle().submit_with(spec, tag, move |outcome| {
            queue.lock().done.push_back(Box::new(move || done(outcome)));
            queue.wake();
        })
    }

    /// Cancels the checks of `tag` on every engine and returns how many were cancelled; their
    /// completions run here.
    ///
    /// # Errors
    ///
    /// As [`Handle::call_each`].
    pub fn cancel_check(&mut self, tag: u64) -> io::Result<usize> {
        let n = self.handle().call_each(move |e| e.cancel_check(tag))?.into_iter().sum();
        self.run_completions();
        Ok(n)
    }

    /// Blocks until something is handed over, [`HostWaker::wake`], or `limit` (`None`: no
    /// limit of its own); then runs the completions that arrived. A signal ends the wait
    /// early, as it ends poll(2).
    ///
    /// # Errors
    ///
    /// The poll's error.
    pub fn wait(&mut self, limit: Option<Duration>) -> io::Result<()> {
        match self.poll.poll(&mut self.ready, limit) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        self.run_completions();
        Ok(())
    }

    /// [`ShardedEngine::wait`] without blocking.
    ///
    /// # Errors
    ///
    /// The poll's error.
    pub fn step(&mut self) -> io::Result<()> {
        self.wait(Some(Duration::ZERO))
    }

    /// Runs the completions queued now (not those that arrive meanwhile: the loop ends).
    fn run_completions(&mut self) {
        let n = self.queue.lock().done.len();
        for _ in 0..n {
            let Some(done) = self.queue.lock().done.pop_front() else { break };
            done();
        }
    }
}
