//! The state a [`TargetServer`](crate::TargetServer) shares with its accept thread and its
//! connection threads: health, counters and their waiters, the stop flag, the live connections.

use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::threads::lock;

/// State shared by the server handle, the accept thread and the connection threads.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) healthy: AtomicBool,
    pub(crate) connections: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) silent: AtomicU64,
    pub(crate) resets: AtomicU64,
    pub(crate) closed: Mutex<u64>,
    pub(crate) closed_cv: Condvar,
    /// Notified whenever `connections` or `requests` grows, for the `wait_for_*` methods.
    pub(crate) progress: Mutex<()>,
    pub(crate) progress_cv: Condvar,
    pub(crate) stopped: Mutex<bool>,
    pub(crate) stop_cv: Condvar,
    pub(crate) stop_flag: AtomicBool,
    /// Live connections, so that stopping the server can shut them down.
    pub(crate) live: Mutex<HashMap<u64, Arc<TcpStream>>>,
}

impl Shared {
    pub(crate) fn new() -> Shared {
        Shared {
            healthy: AtomicBool::new(true),
            connections: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            silent: AtomicU64::new(0),
            resets: AtomicU64::new(0),
            closed: Mutex::new(0),
            closed_cv: Condvar::new(),
            progress: Mutex::new(()),
            progress_cv: Condvar::new(),
            stopped: Mutex::new(false),
            stop_cv: Condvar::new(),
            stop_flag: AtomicBool::new(false),
            live: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stop_flag.load(Ordering::Acquire)
    }

    /// Sleeps for `d` unless the server stops first; returns false if it stopped.
    pub(crate) fn sleep(&self, d: Duration) -> bool {
        let guard = lock(&self.stopped);
        let (guard, _) = self
            .stop_cv
            .wait_timeout_while(guard, d, |stopped| !*stopped)
            .unwrap_or_else(|e| e.into_inner());
        !*guard
    }

    pub(crate) fn set_healthy(&self, healthy: bool) {
        self.healthy.store(healthy, Ordering::SeqCst);
    }

    pub(crate) fn healthy(&self) -> bool {
        self.healthy.load(Ordering::SeqCst)
    }

    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::SeqCst);
        self.progressed();
    }

    /// Wakes the `wait_for_*` waiters after a counter grew. Taking the lock orders the wake-up
    /// after a waiter's check of the counter, so none is lost.
    pub(crate) fn progressed(&self) {
        drop(lock(&self.progress));
        self.progress_cv.notify_all();
    }

    /// Waits until `done` holds (checked whenever a counter grows), at most `timeout`.
    pub(crate) fn wait_progress(&self, timeout: Duration, done: impl Fn() -> bool) -> bool {
        let guard = lock(&self.progress);
        let (_guard, _) = self
            .progress_cv
            .wait_timeout_while(guard, timeout, |()| !done())
            .unwrap_or_else(|e| e.into_inner());
        done()
    }

    /// Called once per connection after its socket is closed.
    pub(crate) fn connection_ended(&self, id: u64, silent: bool, reset: bool) {
        // Dropping the registry's reference closes the socket (the handler's is gone by now).
        drop(lock(&self.live).remove(&id));
        if silent {
            self.silent.fetch_add(1, Ordering::SeqCst);
        }
        if reset {
            self.resets.fetch_add(1, Ordering::SeqCst);
        }
        *lock(&self.closed) += 1;
        self.closed_cv.notify_all();
    }

    pub(crate) fn stop(&self) {
        self.stop_flag.store(true, Ordering::Release);
        *lock(&self.stopped) = true;
        self.stop_cv.notify_all();
        for stream in lock(&self.live).values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}
