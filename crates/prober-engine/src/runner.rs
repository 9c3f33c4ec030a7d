//! An engine on a thread of its own, for Rust hosts that want events over a channel; or
//! several engines, each on its own thread, behind one [`Handle`] and one channel
//! ([`spawn_sharded`]), for loads that need more than one core.

use std::io;
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
    handle: Handle,
    events: Receiver<Event>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<io::Result<()>>>,
}

/// Moves `engine` to a new thread that waits in it and forwards every event to the channel.
///
/// # Errors
///
/// The [`io::Error`] of starting the thread; the engine is dropped with it.
pub fn spawn(engine: Engine) -> io::Result<EngineThread> {
    let handle = engine.handle();
    start(handle, vec![engine])
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
    start(handle, engines)
}

/// Runs each of `engines` on a thread of its own, all sending to one channel.
fn start(handle: Handle, engines: Vec<Engine>) -> io::Result<EngineThread> {
    let (tx, rx) = sync_channel(CHANNEL_CAP);
    let stop = Arc::new(AtomicBool::new(false));
    let lone = engines.len() == 1;
    let mut group = EngineThread { handle, events: rx, stop: stop.clone(), threads: Vec::new() };
    for (i, engine) in engines.into_iter().enumerate() {
        let (tx, stop) = (tx.clone(), stop.clone());
        // Thread names are cut to 15 bytes by the kernel.
        let name = if lone { "prober-engine".to_owned() } else { format!("prober-engine{i}") };
        // On an error `group` is dropped: the threads started so far are stopped and joined.
        let thread =
            std::thread::Builder::new().name(name).spawn(move || run(engine, &tx, &stop))?;
        group.threads.push(thread);
    }
    Ok(group)
}

/// The capacity of [`EngineThread::events`].
pub const CHANNEL_CAP: usize = 1024;

fn run(mut engine: Engine, tx: &SyncSender<Event>, stop: &AtomicBool) -> io::Result<()> {
    // An event taken from the engine that did not fit in the channel: sent first next time.
    let mut held: Option<Event> = None;
    while !stop.load(Ordering::Acquire) {
        // A receiver taking events wakes nobody, so a full channel is looked at again soon.
        let limit = if held.is_some() { Duration::from_millis(10) } else { Duration::from_secs(1) };
        engine.wait(Some(limit))?;
        while let Some(ev) = held.take().or_else(|| engine.next_event()) {
            match tx.try_send(ev) {
                Ok(()) => {}
                Err(TrySendError::Full(ev)) => {
                    held = Some(ev);
                    break;
                }
                // Nobody listens any more; keep running until told to stop.
                Err(TrySendError::Disconnected(_)) => {}
            }
        }
    }
    Ok(())
}

impl EngineThread {
    /// Drives the engines from this or any thread: [`Handle::call`], [`Handle::submit`],
    /// [`Handle::trigger`], [`Handle::set_probe`], ...
    pub fn handle(&self) -> &Handle {
        &self.handle
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

impl Drop for EngineThread {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
