//! A driver's mailbox: where the helper pools off the poll thread (name lookups in
//! [`crate::resolver`], blocking jobs in [`crate::blocking`]) post their answers for one
//! driver, an engine or a blocking check, and the waker that tells its poll.
//!
//! Each pool submits work with a sender ([`Mailbox::sender`]) and the driver drains what came
//! back after a poll. Work whose driver has gone (the mailbox was dropped) is skipped: nobody
//! would read the answer.

use std::any::Any;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

/// One lookup's answer: the asking machine's ticket, the result, and how long the lookup took.
#[derive(Debug)]
pub struct Resolved {
    /// The ticket of the machine that asked ([`crate::Ctx::resolve`]).
    pub ticket: u64,
    /// The addresses, in getaddrinfo's order, or the lookup's error.
    pub addrs: io::Result<Vec<SocketAddr>>,
    /// How long the lookup took (the outcome's resolve timing).
    pub took: Duration,
}

/// What a blocking job returns: the machine downcasts it to the type its closure made.
pub type Answer = Box<dyn Any + Send>;

/// A finished blocking job: the asking machine's ticket and the closure's answer, or an error
/// when the job could not be run (no thread could be started) or panicked.
#[derive(Debug)]
pub struct JobDone {
    /// The ticket of the machine that asked ([`crate::Ctx::run_blocking`]).
    pub ticket: u64,
    /// What the closure returned, or why it could not be run.
    pub answer: io::Result<Answer>,
}

/// A driver's handle on the helper pools: lookups and blocking jobs it submits are answered
/// into its own queues, and its poll is woken through its waker.
#[derive(Debug)]
pub struct Mailbox {
    sender: Sender,
}

/// Where a pool thread posts an answer for one mailbox.
#[derive(Debug, Clone)]
pub(crate) struct Sender {
    inner: Arc<Queues>,
}

#[derive(Debug)]
struct Queues {
    lookups: Mutex<Vec<Resolved>>,
    jobs: Mutex<Vec<JobDone>>,
    waker: Arc<mio::Waker>,
}

impl Mailbox {
    /// `waker` is woken whenever an answer is posted to this mailbox.
    pub fn new(waker: Arc<mio::Waker>) -> Mailbox {
        let queues = Queues { lookups: Mutex::default(), jobs: Mutex::default(), waker };
        Mailbox { sender: Sender { inner: Arc::new(queues) } }
    }

    /// A sender for a pool thread.
    pub(crate) fn sender(&self) -> Sender {
        self.sender.clone()
    }

    /// Moves every lookup answer into `out`.
    pub fn drain_into(&self, out: &mut Vec<Resolved>) {
        out.append(&mut self.sender.inner.lookups.lock());
    }

    /// Moves every finished job into `out`.
    pub fn drain_jobs_into(&self, out: &mut Vec<JobDone>) {
        out.append(&mut self.sender.inner.jobs.lock());
    }
}

impl Sender {
    /// Whether the mailbox is gone (only senders are left): nobody would read an answer.
    pub(crate) fn abandoned(&self) -> bool {
        Arc::strong_count(&self.inner) == 1
    }

    pub(crate) fn post_lookup(&self, answer: Resolved) {
        self.inner.lookups.lock().push(answer);
        self.wake();
    }

    pub(crate) fn post_job(&self, done: JobDone) {
        self.inner.jobs.lock().push(done);
        self.wake();
    }

    fn wake(&self) {
        // A failed wake means the poll is gone (its driver was dropped): nobody wants the
        // answer.
        let _ = self.inner.waker.wake();
    }
}
