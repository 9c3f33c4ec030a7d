//! A deferred request's fate, shared by its connection and its [`crate::Reply`]: answered, or
//! abandoned (its client went, its time ran out, the server stopped) so that whatever works on
//! its answer can stop and free what it holds.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

type Callback = Box<dyn FnOnce() + Send>;

enum Fate {
    /// Nobody has answered yet; these run if the request is abandoned.
    Waiting(Vec<Callback>),
    Answered,
    Abandoned,
}

impl Default for Fate {
    fn default() -> Fate {
        Fate::Waiting(Vec::new())
    }
}

#[derive(Default)]
pub(crate) struct Pending {
    fate: Mutex<Fate>,
}

impl Pending {
    /// The answer has been given (or the reply dropped): losing the connection now cancels
    /// nothing.
    pub(crate) fn answered(&self) {
        let mut fate = self.fate.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(*fate, Fate::Abandoned) {
            *fate = Fate::Answered;
        }
    }

    /// Runs `f` when the request is abandoned; at once if it already is, never if it has been
    /// answered.
    pub(crate) fn on_abandon(&self, f: Callback) {
        let mut fate = self.fate.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *fate {
            Fate::Waiting(fs) => fs.push(f),
            Fate::Answered => {}
            Fate::Abandoned => {
                drop(fate);
                run(f);
            }
        }
    }

    pub(crate) fn is_abandoned(&self) -> bool {
        matches!(*self.fate.lock().unwrap_or_else(PoisonError::into_inner), Fate::Abandoned)
    }

    /// The request will never be answered: its callbacks run (here, on the caller's thread).
    fn abandon(&self) {
        let mut fate = self.fate.lock().unwrap_or_else(PoisonError::into_inner);
        let callbacks = match std::mem::replace(&mut *fate, Fate::Abandoned) {
            Fate::Waiting(fs) => fs,
            f @ Fate::Answered => {
                *fate = f;
                Vec::new()
            }
            Fate::Abandoned => Vec::new(),
        };
        drop(fate);
        callbacks.into_iter().for_each(run);
    }
}

/// A callback's panic stays here: it must not unwind through the server's loop.
fn run(f: Callback) {
    let _ = catch_unwind(AssertUnwindSafe(f));
}

/// Held by a connection while its deferred request waits, and counted: dropping it (the
/// connection answered, closed, timed out, or the server stopped) abandons the request unless
/// it was answered.
pub(crate) struct Waiter {
    pub(crate) pending: Arc<Pending>,
    count: Arc<AtomicUsize>,
}

impl Waiter {
    pub(crate) fn new(count: &Arc<AtomicUsize>) -> Waiter {
        count.fetch_add(1, Ordering::Relaxed);
        Waiter { pending: Arc::default(), count: count.clone() }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
        self.pending.abandon();
    }
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Waiter")
    }
}

/// Tells whoever makes a deferred answer ([`crate::Server::route_deferred`]) that nobody
/// waits for it any more, so that it can stop the work and free what it holds (a probe's
/// sockets and buffers). Taken from the request's [`crate::Reply`] with
/// [`crate::Reply::cancel_signal`]; it may be cloned and kept after the reply is sent.
///
/// A request is cancelled when its connection goes before the answer is given: the client
/// closed it, reset it, or shut down its sending side (as Go's `net/http` cancels a request's
/// context when it reads EOF on the connection while the handler runs: a half-closed client
/// is treated as gone); or [`crate::Limits::deferred_timeout`] passed; or the server stopped.
/// Bytes the client sends meanwhile (a pipelined request) do not cancel it.
#[derive(Clone)]
pub struct CancelSignal(pub(crate) Arc<Pending>);

impl CancelSignal {
    /// Runs `f` when the request is cancelled: at once if it already is, never once it has
    /// been answered. It runs on the server's thread (or the caller's, if already cancelled):
    /// it must be quick and never wait (tell the worker, do not join it). A panic in it is
    /// contained.
    pub fn on_cancel(&self, f: impl FnOnce() + Send + 'static) {
        self.0.on_abandon(Box::new(f));
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.is_abandoned()
    }
}

impl std::fmt::Debug for CancelSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelSignal").field("cancelled", &self.is_cancelled()).finish()
    }
}
