//! Host-name resolution off the poll thread.
//!
//! `getaddrinfo` blocks, so it runs on a small process-wide pool of threads shared by every
//! engine and every blocking check. A pool thread posts the answer into the asking
//! [`Resolver`]'s queue and wakes that resolver's poll through its `mio::Waker`. The pool grows
//! on demand (one slow answer never holds up another lookup while the pool has room) and idle
//! threads exit after a while, so an idle process keeps none.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use prober_core::Reason;

/// At most this many lookups run at once across the process.
const MAX_THREADS: usize = 16;
/// A pool thread with nothing to do exits after this long.
const IDLE_EXIT: Duration = Duration::from_secs(10);

/// One answer: the asking machine's ticket, the result, and how long the lookup took.
#[derive(Debug)]
pub struct Resolved {
    pub ticket: u64,
    pub addrs: io::Result<Vec<SocketAddr>>,
    pub took: Duration,
}

#[derive(Debug)]
struct Sink {
    done: Mutex<Vec<Resolved>>,
    waker: Arc<mio::Waker>,
}

/// How a host name becomes addresses: `getaddrinfo` normally.
pub type LookupFn = fn(&str, u16) -> io::Result<Vec<SocketAddr>>;

#[derive(Debug)]
struct Job {
    ticket: u64,
    host: String,
    port: u16,
    lookup: LookupFn,
    sink: Arc<Sink>,
    /// Cleared when the asking probe no longer wants the answer.
    wanted: Arc<AtomicBool>,
}

/// A lookup in flight. Dropping it (the probe finished, timed out or was cancelled) tells the
/// pool to skip the lookup if it has not started, so stale lookups do not hold up live ones.
#[derive(Debug)]
pub struct Lookup {
    wanted: Arc<AtomicBool>,
}

impl Drop for Lookup {
    fn drop(&mut self) {
        self.wanted.store(false, Ordering::Release);
    }
}

#[derive(Debug, Default)]
struct PoolState {
    jobs: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

#[derive(Debug, Default)]
struct Pool {
    state: Mutex<PoolState>,
    cv: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

/// A driver's handle on the resolver pool: lookups it submits are answered into its own queue.
#[derive(Debug)]
pub struct Resolver {
    sink: Arc<Sink>,
}

impl Resolver {
    /// `waker` is woken whenever an answer is queued for this resolver.
    pub fn new(waker: Arc<mio::Waker>) -> Resolver {
        Resolver { sink: Arc::new(Sink { done: Mutex::new(Vec::new()), waker }) }
    }

    /// Queues a lookup of `host`; the answer carries `ticket` and addresses with `port` set.
    pub fn submit(&self, ticket: u64, host: &str, port: u16) -> Lookup {
        self.submit_with(ticket, host, port, lookup)
    }

    /// [`Resolver::submit`] with another lookup function: lets tests make one lookup slow
    /// without touching the system's resolver configuration.
    #[doc(hidden)]
    pub fn submit_with(&self, ticket: u64, host: &str, port: u16, lookup: LookupFn) -> Lookup {
        let pool = pool();
        let mut st = pool.state.lock();
        let host = host.to_string();
        let wanted = Arc::new(AtomicBool::new(true));
        let sink = self.sink.clone();
        st.jobs.push_back(Job { ticket, host, port, lookup, sink, wanted: wanted.clone() });
        // More queued jobs than idle threads: start another (counting idle threads alone would
        // send two quick submits to the one idle thread, one waiting behind the other).
        let mut spawn_error = None;
        if st.jobs.len() > st.idle && st.threads < MAX_THREADS {
            match spawn_thread() {
                Ok(_) => st.threads += 1,
                Err(e) => spawn_error = Some(e),
            }
        }
        // With no thread at all (spawn failed and none exist) the job would wait forever:
        // answer it here instead, as a local resource failure (Unknown, reason resource: the
        // node is out of threads or memory, the name may well resolve).
        if st.threads == 0 {
            let job = st.jobs.pop_back().expect("just pushed");
            drop(st);
            let cause = spawn_error.map_or_else(String::new, |e| format!(": {}", crate::os_error_text(&e)));
            let err = Reason::local_resource_error(format!("cannot start a resolver thread{cause}"));
            deliver(job, Err(err), Duration::ZERO);
            return Lookup { wanted };
        }
        drop(st);
        pool.cv.notify_one();
        Lookup { wanted }
    }

    /// Moves every queued answer into `out`.
    pub fn drain_into(&self, out: &mut Vec<Resolved>) {
        out.append(&mut self.sink.done.lock());
    }
}

/// Makes the next start of a resolver thread fail as if the system had no thread left
/// (`EAGAIN` from `pthread_create`), for tests of that case: thread creation cannot be made to
/// fail for real without starving the whole test process.
#[doc(hidden)]
pub fn fail_next_thread_start_for_test() {
    FAIL_NEXT_THREAD_START.store(true, Ordering::Release);
}

static FAIL_NEXT_THREAD_START: AtomicBool = AtomicBool::new(false);

fn spawn_thread() -> io::Result<std::thread::JoinHandle<()>> {
    if FAIL_NEXT_THREAD_START.swap(false, Ordering::AcqRel) {
        return Err(io::Error::from_raw_os_error(libc::EAGAIN));
    }
    std::thread::Builder::new().name("prober-resolve".into()).stack_size(256 * 1024).spawn(worker)
}

fn deliver(job: Job, addrs: io::Result<Vec<SocketAddr>>, took: Duration) {
    job.sink.done.lock().push(Resolved { ticket: job.ticket, addrs, took });
    // A failed wake means the poll is gone (its driver was dropped): nobody wants the answer.
    let _ = job.sink.waker.wake();
}

fn worker() {
    let pool = pool();
    loop {
        let job = {
            let mut st = pool.state.lock();
            loop {
                if let Some(job) = st.jobs.pop_front() {
                    break job;
                }
                st.idle += 1;
                let timed_out = pool.cv.wait_for(&mut st, IDLE_EXIT).timed_out();
                st.idle -= 1;
                if timed_out && st.jobs.is_empty() {
                    st.threads -= 1;
                    return;
                }
            }
        };
        // Nobody is waiting for the answer any more: skip the lookup.
        if Arc::strong_count(&job.sink) == 1 || !job.wanted.load(Ordering::Acquire) {
            continue;
        }
        let started = Instant::now();
        let addrs = (job.lookup)(&job.host, job.port);
        deliver(job, addrs, started.elapsed());
    }
}

fn lookup(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
    if addrs.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "no addresses found"));
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll, Token};

    #[test]
    fn resolves_localhost_and_wakes_the_poll() {
        let mut poll = Poll::new().unwrap();
        let waker = Arc::new(mio::Waker::new(poll.registry(), Token(7)).unwrap());
        let r = Resolver::new(waker);
        let _a = r.submit(42, "localhost", 8080);
        let _b = r.submit(43, "no-such-host.invalid", 80);
        let mut got = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(20);
        while got.len() < 2 && Instant::now() < deadline {
            poll.poll(&mut events, Some(Duration::from_millis(500))).unwrap();
            r.drain_into(&mut got);
        }
        got.sort_by_key(|g| g.ticket);
        assert_eq!(got.len(), 2);
        let a = got[0].addrs.as_ref().unwrap();
        assert!(a.iter().all(|s| s.port() == 8080 && s.ip().is_loopback()), "{a:?}");
        assert!(got[1].addrs.is_err());
    }

    fn slow_lookup(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        std::thread::sleep(Duration::from_millis(1500));
        lookup(host, port)
    }

    #[test]
    fn a_slow_lookup_does_not_hold_up_others() {
        let mut poll = Poll::new().unwrap();
        let waker = Arc::new(mio::Waker::new(poll.registry(), Token(1)).unwrap());
        let r = Resolver::new(waker);
        let _a = r.submit_with(1, "localhost", 1, slow_lookup);
        let _b = r.submit_with(2, "localhost", 1, slow_lookup);
        let _c = r.submit(3, "localhost", 2);
        let mut order = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(20);
        while order.len() < 3 && Instant::now() < deadline {
            poll.poll(&mut events, Some(Duration::from_millis(100))).unwrap();
            let mut got = Vec::new();
            r.drain_into(&mut got);
            order.extend(got.iter().map(|g| g.ticket));
        }
        // The fast lookup, queued behind two slow ones, is answered first.
        assert_eq!(order.len(), 3);
        assert_eq!(order[0], 3, "{order:?}");
    }

    #[test]
    fn dropped_lookups_are_skipped() {
        let mut poll = Poll::new().unwrap();
        let waker = Arc::new(mio::Waker::new(poll.registry(), Token(1)).unwrap());
        let r = Resolver::new(waker);
        // Occupy every pool thread with slow lookups, queue abandoned ones behind them, then a
        // live one: it must not wait for the abandoned ones.
        let busy: Vec<_> = (0..MAX_THREADS as u64).map(|t| r.submit_with(t, "localhost", 1, slow_lookup)).collect();
        let abandoned: Vec<_> = (100..164).map(|t| r.submit_with(t, "localhost", 1, slow_lookup)).collect();
        drop(abandoned);
        let _live = r.submit(999, "localhost", 2);
        let mut got = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !got.iter().any(|g: &Resolved| g.ticket == 999) && Instant::now() < deadline {
            poll.poll(&mut events, Some(Duration::from_millis(100))).unwrap();
            r.drain_into(&mut got);
        }
        assert!(got.iter().any(|g| g.ticket == 999), "the live lookup was never answered");
        assert!(got.iter().all(|g| g.ticket < 100 || g.ticket == 999), "an abandoned lookup ran");
        drop(busy);
    }
}