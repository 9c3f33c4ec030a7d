//! An engine on a thread of its own, for Rust hosts that want events over a channel.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::engine::Engine;
use crate::event::Event;
use crate::handle::Handle;

/// A running engine thread. Use [`EngineThread::handle`] (`call`, `submit`, `trigger`) to drive
/// it and [`EngineThread::events`] to receive its events. Dropping it stops the thread and
/// drops the engine (cancelling every in-flight probe).
///
/// The channel holds up to [`CHANNEL_CAP`] events. While it is full the thread keeps probing
/// and leaves further events in the engine, whose policy then applies (state changes
/// coalesced, run events dropped oldest-first and counted: see [`Engine::drain`]); it looks
/// for room again every 10 ms.
#[derive(Debug)]
pub struct EngineThread {
    handle: Handle,
    events: Receiver<Event>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

/// Moves `engine` to a new thread that waits in it and forwards every event to the channel.
///
/// # Errors
///
/// The [`io::Error`] of starting the thread; the engine is dropped with it.
pub fn spawn(engine: Engine) -> io::Result<EngineThread> {
    let handle = engine.handle();
    let (tx, rx) = sync_channel(CHANNEL_CAP);
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let thread = std::thread::Builder::new()
        .name("prober-engine".into())
        .spawn(move || run(engine, &tx, &stop2))?;
    Ok(EngineThread { handle, events: rx, stop, thread: Some(thread) })
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
    /// Drives the engine from this or any thread: [`Handle::call`], [`Handle::submit`],
    /// [`Handle::trigger`].
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// The engine's events, in order.
    pub fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    /// Stops the thread and returns the error that ended it early, if one did.
    ///
    /// # Errors
    ///
    /// The [`io::Error`] of the poll that ended the thread early, or an error saying it
    /// panicked.
    pub fn stop(mut self) -> io::Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Release);
        let _ = self.handle.wakeup();
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_else(|_| Err(io::Error::other("engine thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for EngineThread {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
