//! Process-wide pools of helper threads for work that must not run on a poll thread.
//!
//! Each pool grows on demand up to its cap (one slow task never holds up another while the pool
//! has room) and its idle threads exit after a while, so an idle process keeps none. A task
//! carries a `wanted` flag: when the asking probe has gone (finished, timed out, cancelled) the
//! task is skipped if it has not started, so stale work does not hold up live work, and such
//! tasks are pruned from the queue as it grows (amortized: whenever it has doubled since the
//! last pruning), so the queue holds at most about twice the tasks still wanted, whatever the
//! number of probes that gave up while every thread was busy. The
//! name resolver ([`crate::resolver`]) and the blocking-job facility ([`crate::blocking`]) each
//! have their own pool, so that a stuck file system cannot starve name resolution or the
//! reverse.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

/// A pool thread with nothing to do exits after this long.
const IDLE_EXIT: Duration = Duration::from_secs(10);

/// The queue is first pruned of unwanted tasks at this length.
const PRUNE_MIN: usize = 64;

pub(crate) type Work = Box<dyn FnOnce() + Send>;

/// Whether a queued task is still wanted: a probe's flag (cleared when it gives up), or for a
/// shared name lookup whether any of its askers still waits.
pub(crate) trait Wanted: Send + Sync {
    fn wanted(&self) -> bool;
}

impl Wanted for AtomicBool {
    fn wanted(&self) -> bool {
        self.load(Ordering::Acquire)
    }
}

struct Task {
    work: Work,
    wanted: Arc<dyn Wanted>,
}

#[derive(Default)]
struct State {
    tasks: VecDeque<Task>,
    threads: usize,
    idle: usize,
    /// The queue's length at which unwanted tasks are next pruned.
    prune_at: usize,
}

pub(crate) struct WorkPool {
    name: &'static str,
    max_threads: usize,
    state: Mutex<State>,
    cv: Condvar,
    /// Test hook: the next thread start fails as if the system had no thread left.
    fail_next_start: AtomicBool,
}

impl std::fmt::Debug for WorkPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkPool").field("name", &self.name).finish_non_exhaustive()
    }
}

impl WorkPool {
    pub(crate) fn new(name: &'static str, max_threads: usize) -> WorkPool {
        WorkPool {
            name,
            max_threads,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            fail_next_start: AtomicBool::new(false),
        }
    }

    /// Makes the next thread start of this pool fail with `EAGAIN` (what `pthread_create`
    /// says when the system has no thread left), for tests: thread creation cannot be made to
    /// fail for real without starving the whole test process.
    pub(crate) fn fail_next_start_for_test(&self) {
        self.fail_next_start.store(true, Ordering::Release);
    }

    /// Queues `work`, run on a pool thread unless `wanted` is cleared before it starts (a
    /// task skipped or pruned is dropped unrun, outside the pool's lock). When no thread exists
    /// and none can be started, the work is handed back with the reason: the caller answers
    /// with an error instead (the work would otherwise wait forever).
    pub(crate) fn submit(
        &'static self,
        work: Work,
        wanted: Arc<dyn Wanted>,
    ) -> Result<(), (Work, io::Error)> {
        let mut pruned = Vec::new();
        let submitted = self.queue(Task { work, wanted }, &mut pruned);
        // Dropped unrun after the lock is released: dropping a task may queue another (a shared
        // lookup that gained an asker meanwhile).
        drop(pruned);
        submitted
    }

    fn queue(&'static self, task: Task, pruned: &mut Vec<Task>) -> Result<(), (Work, io::Error)> {
        let mut st = self.state.lock();
        if st.tasks.len() >= st.prune_at.max(PRUNE_MIN) {
            let (live, dead): (VecDeque<Task>, VecDeque<Task>) =
                std::mem::take(&mut st.tasks).into_iter().partition(|t| t.wanted.wanted());
            st.tasks = live;
            pruned.extend(dead);
            st.prune_at = 2 * st.tasks.len();
        }
        st.tasks.push_back(task);
        // More queued tasks than idle threads: start another (counting idle threads alone would
        // send two quick submits to the one idle thread, one waiting behind the other).
        let mut spawn_error = None;
        if st.tasks.len() > st.idle && st.threads < self.max_threads {
            let spawned = if self.fail_next_start.swap(false, Ordering::AcqRel) {
                Err(io::Error::from_raw_os_error(libc::EAGAIN))
            } else {
                std::thread::Builder::new()
                    .name(self.name.into())
                    .stack_size(256 * 1024)
                    .spawn(move || self.worker())
            };
            match spawned {
                Ok(_) => st.threads += 1,
                Err(e) => spawn_error = Some(e),
            }
        }
        if st.threads == 0 {
            let task = st.tasks.pop_back().expect("just pushed");
            let e = spawn_error.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EAGAIN));
            return Err((task.work, e));
        }
        drop(st);
        self.cv.notify_one();
        Ok(())
    }

    fn worker(&'static self) {
        loop {
            let task = {
                let mut st = self.state.lock();
                loop {
                    if let Some(task) = st.tasks.pop_front() {
                        break task;
                    }
                    st.idle += 1;
                    let timed_out = self.cv.wait_for(&mut st, IDLE_EXIT).timed_out();
                    st.idle -= 1;
                    if timed_out && st.tasks.is_empty() {
                        st.threads -= 1;
                        return;
                    }
                }
            };
            // A panicking task must not take the thread down uncounted (the pool would believe
            // it still has it); the task's own code reports the panic to its asker.
            if task.wanted.wanted() {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task.work));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::OnceLock;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn tasks_nobody_wants_are_pruned_as_the_queue_grows() {
        static POOL: OnceLock<WorkPool> = OnceLock::new();
        let pool = POOL.get_or_init(|| WorkPool::new("prober-test", 1));
        // The one thread is held until the end, so everything else stays queued.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let (started_tx, started) = std::sync::mpsc::channel::<()>();
        let hold = Box::new(move || {
            started_tx.send(()).unwrap();
            let _ = held.recv_timeout(Duration::from_secs(30));
        });
        pool.submit(hold, Arc::new(AtomicBool::new(true))).unwrap_or_else(|_| panic!("no thread"));
        started.recv().unwrap();
        // 10,000 probes that gave up while queued: the queue keeps about as many as are wanted.
        static DROPPED: AtomicUsize = AtomicUsize::new(0);
        struct Counted;
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPPED.fetch_add(1, Ordering::Relaxed);
            }
        }
        let wanted = Arc::new(AtomicBool::new(true));
        pool.submit(Box::new(|| {}), wanted).unwrap_or_else(|_| panic!("no thread"));
        for _ in 0..10_000 {
            let counted = Counted;
            let work = Box::new(move || drop(counted));
            pool.submit(work, Arc::new(AtomicBool::new(false))).unwrap_or_else(|_| panic!());
        }
        let queued = pool.state.lock().tasks.len();
        assert!(queued <= 2 * PRUNE_MIN, "{queued} tasks queued");
        assert!(DROPPED.load(Ordering::Relaxed) >= 10_000 - 2 * PRUNE_MIN);
        release.send(()).unwrap();
    }
}
