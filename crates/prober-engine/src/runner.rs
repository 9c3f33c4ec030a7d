//! An engine on a thread of its own, for Rust hosts that want events over a channel; or
//! several engines, each on its own thread, behind one [`Handle`] and one channel
//! ([`spawn_sharded`]), for loads that need more than one core.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::config::EngineConfig;
use crate::engine::Engine;
use crate::event::Event;
use crate::handle::Handle;
use crate::shards::MAX_THREADS;

/// A running engine thread, or a group of them ([`spawn_sharded`]). Use
/// [`EngineThread::handle`] (`call`, `submit`, `trigger`, `set_probe`, ...) to drive it and
/// [`EngineThread::events`] to receive its events. Dropping it stops the threads and drops the
/// engines (cancelling every in-flight probe).
///
/// The channel holds up to [`CHANNEL_CAP`] events. While it is full each thread keeps probing
/// and leaves further events in its engine, whose policy then applies (state changes
/// coalesced, run events dropped oldest-first and counted: see [`Engine::drain`]); it looks
/// for room again every 10 ms.
#[derive(Debug)]
pub struct EngineThread {
    group: EngineGroup,
    events: Receiver<Event>,
}

/// Engines running on threads of their own, each handing its events to an [`EventSink`]
/// ([`spawn_sharded_into`]); what [`EngineThread`] is made of, for hosts that bring their own
/// queue (the C library's, whose descriptor the host polls). Dropping it stops the threads
/// and drops the engines (cancelling every in-flight probe).
#[derive(Debug)]
pub struct EngineGroup {
    handle: Handle,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<io::Result<()>>>,
}

/// Where the engine threads of an [`EngineGroup`] put their events. Each thread has a clone.
pub trait EventSink: Clone + Send + 'static {
    /// Takes `ev`, or gives it back when there is no room: the thread then leaves further
    /// events in its engine (whose policy for a host that is behind applies) and offers `ev`
    /// again within 10 ms.
    ///
    /// # Errors
    ///
    /// `ev` itself, when there is no room for it.
    fn offer(&self, ev: Event) -> Result<(), Event>;

    /// Called after a batch of events was taken (at least one), before the thread waits
    /// again: the moment to wake the receiver once for the batch.
    fn offered(&self) {}

    /// Called on engine thread `end.engine` when it ended before it was told to stop (its
    /// poll failed, or it panicked); its engine has been dropped (every probe of it
    /// cancelled). The other threads go on.
    fn ended(&self, end: &EngineEnd) {
        let _ = end;
    }
}

/// How an engine thread of a group ended early ([`EventSink::ended`]).
#[derive(Clone, Debug)]
pub struct EngineEnd {
    /// Which engine of the group (0 to `threads - 1`).
    pub engine: usize,
    /// True for a panic, false for a failed poll.
    pub panicked: bool,
    /// What happened: the panic's text or the poll's error.
    pub message: String,
}

impl EventSink for SyncSender<Event> {
    fn offer(&self, ev: Event) -> Result<(), Event> {
        match self.try_send(ev) {
            Err(TrySendError::Full(ev)) => Err(ev),
            // Nobody listens any more; the thread keeps running until told to stop.
            Ok(()) | Err(TrySendError::Disconnected(_)) => Ok(()),
        }
    }
}

/// Moves `engine` to a new thread that waits in it and forwards every event to the channel.
///
/// # Errors
///
/// The [`io::Error`] of starting the thread; the engine is dropped with it.
pub fn spawn(engine: Engine) -> io::Result<EngineThread> {
    let handle = engine.handle();
    let (tx, events) = sync_channel(CHANNEL_CAP);
    Ok(EngineThread { group: start(handle, vec![engine], tx)?, events })
}

/// Starts `threads` engines made with `config`, each on a thread of its own, behind one
/// [`Handle`] and one event channel: a load that one core cannot carry (TLS handshakes, say)
/// then uses as many. `threads` 1 is [`spawn`] of [`Engine::with_config`], exactly.
///
/// Each target lives on one engine: [`Handle::add_target`] (or [`Handle::call`]) puts it on
/// the next engine in turn, and its id says which engine has it, so [`Handle::trigger`],
/// [`Handle::set_probe`], [`Handle::remove_target`], [`Handle::call_target`] and
/// [`Handle::complete_run`] reach that engine. One-shot checks ([`Handle::submit`],
/// [`Handle::submit_with`]) go to the engines in turn; [`Handle::cancel_check`] reaches all of
/// them. Every engine has its own socket pool, kept connections and ICMP sockets
/// (`config` is each engine's), so the limits in `config` apply per engine.
///
/// Events are merged into the one channel. The events of one target (and of one check) come
/// in the order its engine made them; events of targets on different engines may interleave
/// in any order, and [`Event::Check`]s of checks on different engines too.
///
/// # Errors
///
/// [`io::ErrorKind::InvalidInput`] for `threads` 0 or over [`MAX_THREADS`]; the
/// [`io::Error`] of making an engine or starting a thread (the engines made so far are
/// stopped and dropped).
pub fn spawn_sharded(config: EngineConfig, threads: usize) -> io::Result<EngineThread> {
    let (tx, events) = sync_channel(CHANNEL_CAP);
    Ok(EngineThread { group: spawn_sharded_into(config, threads, tx)?, events })
}

/// As [`spawn_sharded`], with the events handed to `sink` instead of a channel (each thread
/// offers its engine's events to its clone of `sink`, in the order the engine made them).
///
/// # Errors
///
/// As [`spawn_sharded`].
pub fn spawn_sharded_into<S: EventSink>(
    config: EngineConfig,
    threads: usize,
    sink: S,
) -> io::Result<EngineGroup> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{threads} engine threads: from 1 to {MAX_THREADS}"),
        ));
    }
    let engines = (0..threads)
        .map(|i| Engine::shard(config, i, threads))
        .collect::<io::Result<Vec<Engine>>>()?;
    let handle = Handle::over(engines.iter().map(Engine::link));
    start(handle, engines, sink)
}

/// Runs each of `engines` on a thread of its own, all offering to `sink`.
fn start<S: EventSink>(handle: Handle, engines: Vec<Engine>, sink: S) -> io::Result<EngineGroup> {
    let stop = Arc::new(AtomicBool::new(false));
    let lone = engines.len() == 1;
    let mut group = EngineGroup { handle, stop: stop.clone(), threads: Vec::new() };
    let sinks = std::iter::repeat_n(sink, engines.len());
    for (i, (engine, sink)) in engines.into_iter().zip(sinks).enumerate() {
        let stop = stop.clone();
        // Thread names are cut to 15 bytes by the kernel.
        let name = if lone { "prober-engine".to_owned() } else { format!("prober-engine{i}") };
        // On an error `group` is dropped: the threads started so far are stopped and joined.
        let thread = std::thread::Builder::new()
            .name(name)
            .spawn(move || guarded(i, engine, &sink, &stop))?;
        group.threads.push(thread);
    }
    Ok(group)
}

/// [`run`], telling `sink` when it ends early; a panic is then passed on to the thread's
/// joiner as before.
fn guarded<S: EventSink>(i: usize, engine: Engine, sink: &S, stop: &AtomicBool) -> io::Result<()> {
    // The engine is moved into `run`, so it is dropped (its probes cancelled) by the unwinding
    // before `ended` is told.
    match catch_unwind(AssertUnwindSafe(|| run(engine, sink, stop))) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            sink.ended(&EngineEnd { engine: i, panicked: false, message: e.to_string() });
            Err(e)
        }
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            sink.ended(&EngineEnd { engine: i, panicked: true, message });
            resume_unwind(payload)
        }
    }
}

/// The capacity of [`EngineThread::events`].
pub const CHANNEL_CAP: usize = 1024;

fn run<S: EventSink>(mut engine: Engine, sink: &S, stop: &AtomicBool) -> io::Result<()> {
    // An event taken from the engine that did not fit in the sink: offered first next time.
    let mut held: Option<Event> = None;
    while !stop.load(Ordering::Acquire) {
        // A receiver taking events wakes nobody, so a full sink is looked at again soon.
        let limit = if held.is_some() { Duration::from_millis(10) } else { Duration::from_secs(1) };
        engine.wait(Some(limit))?;
        // The held event's target may have been removed by the turn: no event about a removed
        // target is delivered after its removal.
        if held.as_ref().and_then(Event::target).is_some_and(|t| engine.target_mut(t).is_err()) {
            held = None;
        }
        let mut taken = false;
        while let Some(ev) = held.take().or_else(|| engine.next_event()) {
            match sink.offer(ev) {
                Ok(()) => taken = true,
                Err(ev) => {
                    held = Some(ev);
                    break;
                }
            }
        }
        if taken {
            sink.offered();
        }
    }
    Ok(())
}

impl EngineThread {
    /// Drives the engines from this or any thread: [`Handle::call`], [`Handle::submit`],
    /// [`Handle::trigger`], [`Handle::set_probe`], ...
    pub fn handle(&self) -> &Handle {
        self.group.handle()
    }

    /// The engines' events: each target's in order (see [`spawn_sharded`] for a group's).
    pub fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    /// Stops the threads and returns the error that ended one early, if one did.
    ///
    /// # Errors
    ///
    /// The [`io::Error`] of the poll that ended a thread early, or an error saying one
    /// panicked (the first such, in the engines' order).
    pub fn stop(self) -> io::Result<()> {
        self.group.stop()
    }
}

impl EngineGroup {
    /// Drives the engines from this or any thread (see [`EngineThread::handle`]).
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Stops the threads and returns the error that ended one early, if one did (as
    /// [`EngineThread::stop`]).
    ///
    /// # Errors
    ///
    /// As [`EngineThread::stop`].
    pub fn stop(mut self) -> io::Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Release);
        let _ = self.handle.wakeup();
        // Every thread is joined, whatever the first one returned.
        std::mem::take(&mut self.threads)
            .into_iter()
            .map(|t| t.join().unwrap_or_else(|_| Err(io::Error::other("engine thread panicked"))))
            .fold(Ok(()), Result::and)
    }
}

impl Drop for EngineGroup {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
