//! Blocking work off the poll thread: what a machine cannot do without possibly blocking
//! (open, stat, read and parse files such as TLS material, which may sit on a hung network
//! file system) runs on a small process-wide pool of threads, beside the name resolver's and
//! built the same way (see `workers.rs`).
//!
//! A machine calls [`Ctx::run_blocking`](crate::Ctx::run_blocking) with a closure; the closure
//! runs on a pool thread, its answer (any `Send` value, boxed) is queued for the driver that
//! asked, the driver's poll is woken through the same waker as for resolver answers, and the
//! driver hands the answer to [`Machine::job_done`](crate::Machine::job_done). The machine's
//! deadline keeps running meanwhile: a job that is not back in time is the machine's timeout
//! like any other wait. Dropping the returned [`BlockingJob`] skips the job if it has not
//! started (a job that has started runs to its end: threads cannot be interrupted, which is
//! why the work handed here must itself be bounded, e.g. size-capped reads).

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::mailbox::Mailbox;
pub use crate::mailbox::{Answer, JobDone};
use crate::workers::WorkPool;

/// At most this many blocking jobs run at once across the process; more wait in a queue.
pub const MAX_THREADS: usize = 8;

/// A job in flight. Dropping it (the probe finished, timed out or was cancelled) tells the pool
/// to skip the job if it has not started.
#[derive(Debug)]
pub struct BlockingJob {
    wanted: Arc<AtomicBool>,
}

impl Drop for BlockingJob {
    fn drop(&mut self) {
        self.wanted.store(false, Ordering::Release);
    }
}

fn pool() -> &'static WorkPool {
    static POOL: OnceLock<WorkPool> = OnceLock::new();
    POOL.get_or_init(|| WorkPool::new("prober-blocking", MAX_THREADS))
}

impl Mailbox {
    /// Runs `work` on the blocking-job pool; its answer is queued with `ticket` for this
    /// driver ([`Mailbox::drain_jobs_into`]) and the driver's poll is woken.
    pub fn submit_blocking(
        &self,
        ticket: u64,
        work: impl FnOnce() -> Answer + Send + 'static,
    ) -> BlockingJob {
        let wanted = Arc::new(AtomicBool::new(true));
        let sender = self.sender();
        let run = Box::new(move || {
            // The driver is gone: nobody would read the answer.
            if sender.abandoned() {
                return;
            }
            // A panic in the work (a parser's bug) is that one job's error, answered like any
            // other so that the probe ends now rather than at its deadline.
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .map_err(|_| io::Error::other("the blocking job panicked"));
            sender.post_job(JobDone { ticket, answer });
        });
        if let Err((_, e)) = pool().submit(run, wanted.clone()) {
            let what =
                format!("cannot start a blocking-job thread: {}", prober_core::os_error_text(&e));
            let answer = Err(prober_core::Reason::local_resource_error(what));
            self.sender().post_job(JobDone { ticket, answer });
        }
        BlockingJob { wanted }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll, Token};
    use std::time::{Duration, Instant};

    #[test]
    fn a_panicking_job_is_answered_with_an_error() {
        let mut poll = Poll::new().unwrap();
        let waker = Arc::new(mio::Waker::new(poll.registry(), Token(3)).unwrap());
        let r = Mailbox::new(waker);
        let _job = r.submit_blocking(5, || panic!("a parser bug"));
        let mut got = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(20);
        while got.is_empty() && Instant::now() < deadline {
            crate::retry_interrupted(|| poll.poll(&mut events, Some(Duration::from_millis(500))))
                .unwrap();
            r.drain_jobs_into(&mut got);
        }
        assert_eq!(got.len(), 1);
        let err = got.remove(0).answer.unwrap_err();
        assert_eq!(err.to_string(), "the blocking job panicked");
    }

    #[test]
    fn answers_come_back_through_the_waker() {
        let mut poll = Poll::new().unwrap();
        let waker = Arc::new(mio::Waker::new(poll.registry(), Token(3)).unwrap());
        let r = Mailbox::new(waker);
        let (gate_tx, gate_rx) = std::sync::mpsc::channel::<()>();
        // A job that blocks until released does not hold up the next one.
        let _slow = r.submit_blocking(1, move || {
            let _ = gate_rx.recv();
            Box::new("slow") as Answer
        });
        let _fast = r.submit_blocking(2, || Box::new(40 + 2u32) as Answer);
        let mut got = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(20);
        while got.is_empty() && Instant::now() < deadline {
            crate::retry_interrupted(|| poll.poll(&mut events, Some(Duration::from_millis(500))))
                .unwrap();
            r.drain_jobs_into(&mut got);
        }
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].ticket, 2);
        let answer = got.remove(0).answer.unwrap();
        assert_eq!(answer.downcast_ref::<u32>(), Some(&42));
        gate_tx.send(()).unwrap();
        while got.is_empty() && Instant::now() < deadline {
            crate::retry_interrupted(|| poll.poll(&mut events, Some(Duration::from_millis(500))))
                .unwrap();
            r.drain_jobs_into(&mut got);
        }
        assert_eq!(got[0].ticket, 1);
        assert_eq!(got.remove(0).answer.unwrap().downcast_ref::<&str>(), Some(&"slow"));
    }
}
