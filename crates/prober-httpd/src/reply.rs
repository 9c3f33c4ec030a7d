//! The way back to the loop for a deferred answer (a leaf below the server: it names only
//! the request types and the pending-request state).

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;

use mio::Waker;

use crate::pending::{CancelSignal, Pending};
use crate::request::{Request, Response};

/// What answers the requests of a deferred route: it runs on the server's thread and must
/// return at once, handing the [`Reply`] to whatever produces the answer later (another
/// thread, an engine's event).
pub type DeferredHandler = Box<dyn Fn(&Request, Reply) + Send>;

/// Deferred answers handed back to the loop: connection and response.
pub(crate) type Replies = Arc<Mutex<Vec<(usize, Response)>>>;

/// The way back to the loop for one deferred request. Send it the answer from any thread;
/// dropped without an answer, it answers 500. An answer that comes after the connection has
/// gone (closed by the client, or past [`crate::Limits::deferred_timeout`]) is dropped: connection
/// numbers are never reused, so it cannot reach another client. Whoever makes the answer
/// learns that the connection has gone through [`Reply::cancel_signal`].
pub struct Reply {
    conn: usize,
    replies: Replies,
    waker: Arc<Waker>,
    /// The server's thread, where the reply is made: an answer sent there needs no wake-up
    /// (the loop sends it at the end of its turn).
    server_thread: ThreadId,
    pending: Arc<Pending>,
    sent: bool,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reply").field("conn", &self.conn).finish_non_exhaustive()
    }
}

impl Reply {
    /// The reply of connection `conn`, made on the server's thread: its answer goes to
    /// `replies`, and `waker` wakes the loop to send it when it comes from another thread.
    pub(crate) fn new(
        conn: usize,
        replies: Replies,
        waker: Arc<Waker>,
        pending: Arc<Pending>,
    ) -> Reply {
        let server_thread = std::thread::current().id();
        Reply { conn, replies, waker, server_thread, pending, sent: false }
    }

    /// Answers the request.
    pub fn send(mut self, response: Response) {
        self.sent = true;
        self.post(response);
    }

    /// What says that nobody waits for this answer any more (the client went, the deferred
    /// timeout passed, the server stopped): the work making it should then stop.
    pub fn cancel_signal(&self) -> CancelSignal {
        CancelSignal(self.pending.clone())
    }

    fn post(&self, response: Response) {
        // Answered: the connection closing from now on cancels nothing.
        self.pending.answered();
        self.replies.lock().unwrap_or_else(PoisonError::into_inner).push((self.conn, response));
        if std::thread::current().id() != self.server_thread {
            let _ = self.waker.wake();
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if !self.sent {
            self.post(Response::text(500, "internal error: no answer\n"));
        }
    }
}
