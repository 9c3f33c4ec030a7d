//! The exporter's engine driven by its caller's poll loop instead of a thread of its own
//! ([`Exporter::start_driven`](crate::Exporter::start_driven)).
//!
//! With its own thread, each `/probe` crosses threads twice (the request to the engine, the
//! answer back to the HTTP server), and each crossing wakes a sleeping thread; on a busy
//! machine those wake-ups cost more CPU than the probe's own work in user space. Driven from
//! the HTTP server's loop, a `/probe` is checked, probed and answered on one thread: the
//! engine's descriptor is polled with the connections, and [`EngineDriver::turn`] runs the
//! engine's ready work there.

use std::io;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Duration;

use prober::{CheckPlan, Engine, EngineError, Handle, Outcome};

/// How many events one engine step takes at most (the engine's own bound): a step that
/// processed fewer left nothing ready behind.
const STEP_EVENTS: usize = 1024;

/// Steps in one [`EngineDriver::turn`] at most, so that a flood of readiness cannot keep the
/// caller's other work waiting: what is left is taken at the next turn, which
/// [`EngineDriver::timeout`] then asks for at once.
const MAX_STEPS: usize = 8;

/// The exporter's engine, turned by the caller's loop. Dropping it does not stop probes in
/// flight: they end when the [`crate::Exporter`] is dropped (their requests answered 500).
#[derive(Debug)]
pub struct EngineDriver {
    engine: Arc<Mutex<Engine>>,
    fd: RawFd,
    /// The last turn stopped at [`MAX_STEPS`] with events possibly left ready: an
    /// edge-triggered poll of the descriptor would not report them again.
    more: bool,
}

impl EngineDriver {
    /// A descriptor that is readable when the engine has I/O to process (its epoll descriptor;
    /// poll it edge-triggered or level-triggered, either works: [`EngineDriver::turn`] takes
    /// everything that is ready).
    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// How long the caller may wait before the next [`EngineDriver::turn`] (`None`: until the
    /// descriptor is readable).
    pub fn timeout(&self) -> Option<Duration> {
        if self.more {
            return Some(Duration::ZERO);
        }
        lock(&self.engine).timeout()
    }

    /// Runs the engine's ready I/O, due timers and queued commands without blocking; the
    /// outcomes go to their requests' answers here, on the caller's thread.
    ///
    /// # Errors
    ///
    /// The engine's poll failing: no `/probe` can be answered any more (a server should stop
    /// rather than go on with a dead `/probe`).
    pub fn turn(&mut self) -> io::Result<()> {
        let mut engine = lock(&self.engine);
        self.more = true;
        for _ in 0..MAX_STEPS {
            let processed = engine.step()?;
            // Every probe's outcome went to its completion; the engine queues no event for
            // them, and the exporter makes no others.
            while engine.next_event().is_some() {}
            if processed < STEP_EVENTS {
                self.more = false;
                break;
            }
        }
        Ok(())
    }
}

/// How the exporter reaches its engine: through a [`Handle`] when the engine has its own
/// thread, directly when the caller's loop drives it on the thread the requests come from.
#[derive(Debug)]
pub(crate) enum Probing {
    Thread(Handle),
    Driven { engine: Arc<Mutex<Engine>>, handle: Handle },
}

impl Probing {
    /// A driven engine and the driver the caller's loop turns.
    pub(crate) fn driven(engine: Engine) -> (Probing, EngineDriver) {
        let fd = engine.fd();
        let handle = engine.handle();
        let engine = Arc::new(Mutex::new(engine));
        (
            Probing::Driven { engine: engine.clone(), handle },
            EngineDriver { engine, fd, more: false },
        )
    }

    /// Starts a one-shot check whose outcome goes to `done` ([`Engine::submit_plan_with`]).
    pub(crate) fn submit_plan_with(
        &self,
        plan: &CheckPlan,
        tag: u64,
        done: impl FnOnce(Box<Outcome>) + Send + 'static,
    ) -> Result<(), EngineError> {
        match self {
            Probing::Thread(handle) => {
                handle.submit_plan_with(plan, tag, done).map_err(EngineError::Io)
            }
            // Started at once: its socket is in the engine's poll before the caller's loop
            // polls again, and no wake-up is needed.
            Probing::Driven { engine, .. } => {
                lock(engine).submit_plan_with(plan, tag, done);
                Ok(())
            }
        }
    }

    /// Cancels the checks of `tag` without waiting for the engine.
    pub(crate) fn cancel_check(&self, tag: u64) {
        match self {
            Probing::Thread(handle) => {
                let _ = handle.cancel_check(tag);
            }
            Probing::Driven { engine, handle } => match engine.try_lock() {
                Ok(mut engine) => {
                    engine.cancel_check(tag);
                }
                Err(TryLockError::Poisoned(_)) => drop(lock(engine)),
                // Busy (a cancel from within the engine's own turn): queued for its next turn.
                Err(TryLockError::WouldBlock) => {
                    let _ = handle.cancel_check(tag);
                }
            },
        }
    }
}

/// The engine. A panic inside one of its calls (a submit from a handler, which the HTTP server
/// contains, or a turn) may have left it half-changed, and every later `/probe` would depend on
/// it: the process is aborted then, as it is when an engine thread of its own panics, so that a
/// supervisor restarts it rather than leave it running with a broken `/probe`.
fn lock(engine: &Mutex<Engine>) -> MutexGuard<'_, Engine> {
    engine.lock().unwrap_or_else(|_: PoisonError<_>| {
        eprintln!(
            "prober: the /probe engine panicked (the message is above); aborting the process so \
             that it is restarted rather than left running with a broken /probe"
        );
        std::process::abort()
    })
}
