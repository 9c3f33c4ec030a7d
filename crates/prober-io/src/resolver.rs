//! Host-name resolution off the poll thread.
//!
//! `getaddrinfo` blocks, and cannot be interrupted: a lookup whose DNS server never answers
//! holds its thread until the resolver's own timeouts give up (`timeout:5 attempts:2` by
//! default, per server and search domain: tens of seconds), long after the probe that asked
//! has timed out. So lookups run on a process-wide pool of threads shared by every engine and
//! every blocking check; a pool thread posts the answer into the asking driver's [`Mailbox`]
//! and wakes its poll through its `mio::Waker`.
//!
//! A lookup of a name that answers at once must not wait behind lookups of names that hang.
//! Three things see to that:
//! - one lookup in flight per name (`shared_lookup.rs`): every probe of a name whose lookup
//!   hangs, however many, shares one thread, and gets its answer when it comes;
//! - the pool grows on demand up to [`MAX_THREADS`] threads, so up to that many names can hang
//!   at once while others are still looked up at once; idle threads exit after a while, so an
//!   idle process keeps none (see `workers.rs`);
//! - a lookup whose probes have all given up (finished, timed out, cancelled) is dropped from
//!   the queue without taking a thread, and the queue is pruned of such lookups as it grows.
//!
//! The worst case left: [`MAX_THREADS`] distinct names hanging at once (say a client of
//! `prober serve` asking for that many names under a domain whose servers never answer) hold
//! every thread; lookups of other names then wait in the queue until a thread is freed, which
//! takes as long as the resolver's timeouts, and their probes time out meanwhile. Threads cannot
//! be taken back from `getaddrinfo`; only a resolver that does not block (its own DNS client)
//! would remove that bound, at the price of reading `nsswitch.conf` itself.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crate::mailbox::Mailbox;
pub use crate::mailbox::Resolved;
pub use crate::shared_lookup::LookupFn;
use crate::shared_lookup::{self, Asker, Then};
use crate::workers::WorkPool;

/// At most this many lookups run at once across the process: as many distinct names can hang
/// before a lookup of another name has to wait. A thread blocked in `getaddrinfo` costs little
/// (a 256 KiB stack, mostly untouched, and one UDP socket).
pub const MAX_THREADS: usize = 64;

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
    /// without touching the system's resolver configuration. Lookups of one name are shared
    /// only between askers with the same function.
    #[doc(hidden)]
    pub fn submit_with(&self, ticket: u64, host: &str, port: u16, lookup: LookupFn) -> Lookup {
        let wanted = Arc::new(AtomicBool::new(true));
        let asker = Asker {
            sender: self.sender(),
            ticket,
            port,
            wanted: wanted.clone(),
            asked: Instant::now(),
            then: Then::Post,
        };
        shared_lookup::ask(pool(), host, lookup, asker);
        Lookup { wanted }
    }

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
        let asker = Asker {
            sender: self.sender(),
            ticket,
            port,
            wanted,
            asked: Instant::now(),
            then: Then::Call(Box::new(then)),
        };
        shared_lookup::ask(pool(), host, lookup, asker);
    }
}

/// Makes the next start of a resolver thread fail as if the system had no thread left
/// (`EAGAIN` from `pthread_create`), for tests of that case: thread creation cannot be made to
/// fail for real without starving the whole test process.
#[doc(hidden)]
pub fn fail_next_thread_start_for_test() {
    pool().fail_next_start_for_test();
}

/// `getaddrinfo` without a service (std's lookup); the asker's port is set on the answer.
fn lookup(host: &str) -> io::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = (host, 0).to_socket_addrs()?.collect();
    if addrs.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "no addresses found"));
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll, Token};
    use parking_lot::{Condvar, Mutex};
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    /// Polls until `done` holds for the answers drained so far, within a bound that only
    /// catches hangs.
    fn answers_until(
        poll: &mut Poll,
        r: &Mailbox,
        done: impl Fn(&[Resolved]) -> bool,
    ) -> Vec<Resolved> {
        let mut got = Vec::new();
        let mut events = Events::with_capacity(4);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done(&got) && Instant::now() < deadline {
            crate::retry_interrupted(|| poll.poll(&mut events, Some(Duration::from_millis(100))))
                .unwrap();
            r.drain_into(&mut got);
        }
        got
    }

    fn mailbox(poll: &Poll) -> Mailbox {
        Mailbox::new(Arc::new(mio::Waker::new(poll.registry(), Token(7)).unwrap()))
    }

    #[test]
    fn resolves_localhost_and_wakes_the_poll() {
        let mut poll = Poll::new().unwrap();
        let r = mailbox(&poll);
        let _a = r.submit(42, "localhost", 8080);
        let _b = r.submit(43, "no-such-host.invalid", 80);
        let mut got = answers_until(&mut poll, &r, |g| g.len() == 2);
        got.sort_by_key(|g| g.ticket);
        assert_eq!(got.len(), 2);
        let a = got[0].addrs.as_ref().unwrap();
        assert!(a.iter().all(|s| s.port() == 8080 && s.ip().is_loopback()), "{a:?}");
        assert!(got[1].addrs.is_err());
    }

    fn slow_lookup(host: &str) -> io::Result<Vec<SocketAddr>> {
        std::thread::sleep(Duration::from_millis(1500));
        lookup(host)
    }

    #[test]
    fn a_slow_lookup_does_not_hold_up_others() {
        let mut poll = Poll::new().unwrap();
        let r = mailbox(&poll);
        let _a = r.submit_with(1, "127.0.0.1", 1, slow_lookup);
        let _b = r.submit_with(2, "127.0.0.2", 1, slow_lookup);
        let _c = r.submit(3, "localhost", 2);
        let got = answers_until(&mut poll, &r, |g| g.len() == 3);
        let order: Vec<u64> = got.iter().map(|g| g.ticket).collect();
        // The fast lookup, queued behind two slow ones, is answered first.
        assert_eq!(order.len(), 3);
        assert_eq!(order[0], 3, "{order:?}");
    }

    static ABANDONED_RAN: AtomicUsize = AtomicUsize::new(0);

    fn abandoned_lookup(host: &str) -> io::Result<Vec<SocketAddr>> {
        ABANDONED_RAN.fetch_add(1, Ordering::Relaxed);
        slow_lookup(host)
    }

    #[test]
    fn dropped_lookups_are_skipped() {
        let mut poll = Poll::new().unwrap();
        let r = mailbox(&poll);
        // Occupy every pool thread with slow lookups of distinct names, queue abandoned ones
        // behind them, then live ones: they must not wait for the abandoned ones.
        let busy: Vec<_> = (0..MAX_THREADS as u64)
            .map(|t| r.submit_with(t, &format!("127.0.1.{t}"), 1, slow_lookup))
            .collect();
        let abandoned: Vec<_> = (100..164)
            .map(|t| r.submit_with(t, &format!("127.0.2.{t}"), 1, abandoned_lookup))
            .collect();
        // Given up, then asked again by another probe: the queued lookup is made for it.
        drop(r.submit_with(500, "127.0.3.1", 1, abandoned_lookup));
        let _again = r.submit_with(501, "127.0.3.1", 7, abandoned_lookup);
        drop(abandoned);
        let _live = r.submit(999, "localhost", 2);
        let live = |g: &Resolved| g.ticket == 999 || g.ticket == 501;
        let got = answers_until(&mut poll, &r, |g| g.iter().filter(|g| live(g)).count() == 2);
        assert_eq!(got.iter().filter(|g| live(g)).count(), 2, "{got:?}");
        let again = got.iter().find(|g| g.ticket == 501).unwrap();
        assert_eq!(again.addrs.as_ref().unwrap()[0].port(), 7);
        assert!(got.iter().all(|g| g.ticket < 100 || live(g)), "an abandoned lookup was answered");
        // Only the lookup asked again ran.
        assert_eq!(ABANDONED_RAN.load(Ordering::Relaxed), 1);
        drop(busy);
    }

    /// Lookups that wait until `GATE` opens, counted.
    static GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
    static GATED_CALLS: AtomicUsize = AtomicUsize::new(0);

    fn gated_lookup(host: &str) -> io::Result<Vec<SocketAddr>> {
        GATED_CALLS.fetch_add(1, Ordering::AcqRel);
        let mut open = GATE.0.lock();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !*open && Instant::now() < deadline {
            GATE.1.wait_until(&mut open, deadline);
        }
        drop(open);
        lookup(host)
    }

    #[test]
    fn askers_of_one_name_share_one_lookup() {
        let mut poll = Poll::new().unwrap();
        let r = mailbox(&poll);
        // 300 probes of one name that hangs hold one thread, and each gets the answer with
        // its own port; one that gave up meanwhile gets nothing.
        let mut lookups: Vec<_> = (0..300u64)
            .map(|t| r.submit_with(t, "localhost", 1000 + t as u16, gated_lookup))
            .collect();
        let gave_up = lookups.remove(7);
        drop(gave_up);
        let started = Instant::now() + Duration::from_secs(30);
        while GATED_CALLS.load(Ordering::Acquire) == 0 && Instant::now() < started {
            std::thread::yield_now();
        }
        *GATE.0.lock() = true;
        GATE.1.notify_all();
        let got = answers_until(&mut poll, &r, |g| g.len() == 299);
        assert_eq!(got.len(), 299);
        assert_eq!(GATED_CALLS.load(Ordering::Acquire), 1);
        for g in &got {
            assert_ne!(g.ticket, 7);
            let addrs = g.addrs.as_ref().unwrap();
            assert!(addrs.iter().all(|a| a.port() == 1000 + g.ticket as u16), "{g:?}");
        }
        // Nothing is cached: the next asker makes a lookup of its own.
        let _next = r.submit_with(1, "localhost", 80, gated_lookup);
        let got = answers_until(&mut poll, &r, |g| g.len() == 1);
        assert_eq!(got.len(), 1);
        assert_eq!(GATED_CALLS.load(Ordering::Acquire), 2);
    }
}
