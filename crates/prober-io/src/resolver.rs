//! Host-name resolution off the poll thread.
//!
//! `getaddrinfo` blocks, so it runs on a small process-wide pool of threads shared by every
//! engine and every blocking check. A pool thread posts the answer into the asking
//! [`Resolver`]'s queue and wakes that resolver's poll through its `mio::Waker`. The pool grows
//! on demand (one slow answer never holds up another lookup while the pool has room) and idle
//! threads exit after a while, so an idle process keeps none (see `workers.rs`). Answers go to
//! the asking driver's [`Mailbox`].

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use prober_core::Reason;

use crate::mailbox::Mailbox;
pub use crate::mailbox::Resolved;
use crate::workers::WorkPool;

/// At most this many lookups run at once across the process.
const MAX_THREADS: usize = 16;

/// How a host name becomes addresses: `getaddrinfo` normally.
pub type LookupFn = fn(&str, u16) -> io::Result<Vec<SocketAddr>>;

/// A lookup in flight. Dropping it (the probe finished, timed out or was cancelled) tells the
/// pool to skip the lookup if it has not started, so stale lookups do not hold up live ones.
#[derive(Debug)]
pub struct Lookup {
    wanted: Arc<AtomicBool>,
}

impl Lookup {
    /// A lookup whose skipping is told through `wanted` (shared with the pools' tasks).
    pub(crate) fn from_flag(wanted: Arc<AtomicBool>) -> Lookup {
        Lookup { wanted }
    }
}

impl Drop for Lookup {
    fn drop(&mut self) {
        self.wanted.store(false, Ordering::Release);
    }
}

fn pool() -> &'static WorkPool {
    static POOL: OnceLock<WorkPool> = OnceLock::new();
    POOL.get_or_init(|| WorkPool::new("prober-resolve", MAX_THREADS))
}

/// The former name of [`Mailbox`], from when it only carried lookups.
pub type Resolver = Mailbox;

impl Mailbox {
    /// Queues a lookup of `host`; the answer carries `ticket` and addresses with `port` set.
    pub fn submit(&self, ticket: u64, host: &str, port: u16) -> Lookup {
        self.submit_with(ticket, host, port, lookup)
    }

    /// [`Mailbox::submit`] with another lookup function: lets tests make one lookup slow
    /// without touching the system's resolver configuration.
    #[doc(hidden)]
    pub fn submit_with(&self, ticket: u64, host: &str, port: u16, lookup: LookupFn) -> Lookup {
        let host = host.to_string();
        let wanted = Arc::new(AtomicBool::new(true));
        let sender = self.sender();
        let work = Box::new(move || {
            // Nobody is waiting for the answer any more (the driver is gone): skip the lookup.
            if sender.abandoned() {
                return;
            }
            let started = Instant::now();
            let addrs = lookup(&host, port);
            sender.post_lookup(Resolved { ticket, addrs, took: started.elapsed() });
        });
        if let Err((_, e)) = pool().submit(work, wanted.clone()) {
            // No thread at all: answer here, as a local resource failure (Unknown, reason
            // resource: the node is out of threads or memory; the name may well resolve).
            let what =
                format!("cannot start a resolver thread: {}", prober_core::os_error_text(&e));
            let addrs = Err(Reason::local_resource_error(what));
            self.sender().post_lookup(Resolved { ticket, addrs, took: Duration::ZERO });
        }
        Lookup { wanted }
    }
}

impl Mailbox {
    /// Looks `host` up on the resolver's pool and hands the addresses (or the error) to `then`,
    /// on the pool thread, instead of posting them: for work that goes on after the lookup
    /// (sockets made in a network namespace). Skipped while `wanted` is cleared, as a lookup.
    pub(crate) fn submit_then(
        &self,
        ticket: u64,
        host: &str,
        port: u16,
        wanted: Arc<AtomicBool>,
        then: impl FnOnce(io::Result<Vec<SocketAddr>>) + Send + 'static,
    ) {
        let host = host.to_string();
        let sender = self.sender();
        let then = Arc::new(parking_lot::Mutex::new(Some(then)));
        let work = {
            let then = then.clone();
            Box::new(move || {
                if sender.abandoned() {
                    return;
                }
                if let Some(then) = then.lock().take() {
                    then(lookup(&host, port));
                }
            })
        };
        if let Err((_, e)) = pool().submit(work, wanted) {
            let what =
                format!("cannot start a resolver thread: {}", prober_core::os_error_text(&e));
            let addrs = Err(Reason::local_resource_error(what));
            self.sender().post_lookup(Resolved { ticket, addrs, took: Duration::ZERO });
        }
    }
}

/// Makes the next start of a resolver thread fail as if the system had no thread left
/// (`EAGAIN` from `pthread_create`), for tests of that case: thread creation cannot be made to
/// fail for real without starving the whole test process.
#[doc(hidden)]
pub fn fail_next_thread_start_for_test() {
    pool().fail_next_start_for_test();
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
        let r = Mailbox::new(waker);
        let _a = r.submit(42, "localhost", 8080);
        let _b = r.submit(43, "no-such-host.invalid", 80);
        let mut got = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(20);
        while got.len() < 2 && Instant::now() < deadline {
            crate::retry_interrupted(|| poll.poll(&mut events, Some(Duration::from_millis(500))))
                .unwrap();
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
        let r = Mailbox::new(waker);
        let _a = r.submit_with(1, "localhost", 1, slow_lookup);
        let _b = r.submit_with(2, "localhost", 1, slow_lookup);
        let _c = r.submit(3, "localhost", 2);
        let mut order = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(20);
        while order.len() < 3 && Instant::now() < deadline {
            crate::retry_interrupted(|| poll.poll(&mut events, Some(Duration::from_millis(100))))
                .unwrap();
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
        let r = Mailbox::new(waker);
        // Occupy every pool thread with slow lookups, queue abandoned ones behind them, then a
        // live one: it must not wait for the abandoned ones.
        let busy: Vec<_> = (0..MAX_THREADS as u64)
            .map(|t| r.submit_with(t, "localhost", 1, slow_lookup))
            .collect();
        let abandoned: Vec<_> =
            (100..164).map(|t| r.submit_with(t, "localhost", 1, slow_lookup)).collect();
        drop(abandoned);
        let _live = r.submit(999, "localhost", 2);
        let mut got = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !got.iter().any(|g: &Resolved| g.ticket == 999) && Instant::now() < deadline {
            crate::retry_interrupted(|| poll.poll(&mut events, Some(Duration::from_millis(100))))
                .unwrap();
            r.drain_into(&mut got);
        }
        assert!(got.iter().any(|g| g.ticket == 999), "the live lookup was never answered");
        assert!(got.iter().all(|g| g.ticket < 100 || g.ticket == 999), "an abandoned lookup ran");
        drop(busy);
    }
}
