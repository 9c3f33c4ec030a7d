//! One lookup in flight per name: whoever asks for a name that is already queued or being
//! looked up joins that lookup and gets its answer, with the asker's own port (`getaddrinfo`
//! is called without a service: the port plays no part in the lookup), as Go's resolver does
//! with its `singleflight` group. So a name whose lookup hangs holds one resolver thread
//! however many probes ask for it, and cannot take the threads that other names need.
//!
//! Nothing is cached: the entry goes as soon as its lookup returns, and the next asker starts a
//! new lookup. A joiner may get an answer that was asked for before it asked, never one that
//! came back before it asked.
//!
//! An entry whose askers have all gone while it waits for a thread is dropped without running
//! (the pool skips or prunes it, see `workers.rs`); one that gained an asker meanwhile is queued
//! again rather than lost.

use std::collections::HashMap;
use std::collections::hash_map::Entry as Slot;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parking_lot::Mutex;

use crate::mailbox::{Resolved, Sender};
use crate::workers::{Wanted, WorkPool};

/// How a host name becomes addresses (the port is set afterwards): `getaddrinfo` normally.
pub type LookupFn = fn(&str) -> io::Result<Vec<SocketAddr>>;

/// What an asker does with the answer.
pub(crate) enum Then {
    /// Post it to the asker's mailbox under its ticket.
    Post,
    /// Hand it to this closure, on the pool thread (sockets made in a network namespace).
    Call(Box<dyn FnOnce(io::Result<Vec<SocketAddr>>) + Send>),
}

/// One probe waiting for a name.
pub(crate) struct Asker {
    pub(crate) sender: Sender,
    pub(crate) ticket: u64,
    pub(crate) port: u16,
    /// Cleared when the probe gives up (its `Lookup` is dropped).
    pub(crate) wanted: Arc<AtomicBool>,
    pub(crate) asked: Instant,
    pub(crate) then: Then,
}

impl Asker {
    fn live(&self) -> bool {
        self.wanted.load(Ordering::Acquire) && !self.sender.abandoned()
    }
}

/// A name's lookup, queued or running, and who waits for it.
struct Shared {
    askers: Mutex<Askers>,
}

struct Askers {
    list: Vec<Asker>,
    /// The list's length at which askers that left are next pruned.
    prune_at: usize,
}

impl Wanted for Shared {
    fn wanted(&self) -> bool {
        self.askers.lock().list.iter().any(Asker::live)
    }
}

/// Names are looked up with the function given (tests pass slow ones): lookups of one name by
/// different functions are not shared.
type Key = (String, usize);

fn table() -> &'static Mutex<HashMap<Key, Arc<Shared>>> {
    static TABLE: OnceLock<Mutex<HashMap<Key, Arc<Shared>>>> = OnceLock::new();
    TABLE.get_or_init(Mutex::default)
}

/// Adds `asker` to the lookup of `host` in flight, or queues a new one on `pool`. When no
/// thread can run it, every asker of that lookup is answered with a local resource error.
pub(crate) fn ask(pool: &'static WorkPool, host: &str, lookup: LookupFn, asker: Asker) {
    let key = (host.to_string(), lookup as usize);
    let shared = {
        let mut table = table().lock();
        match table.entry(key.clone()) {
            Slot::Occupied(slot) => {
                let mut askers = slot.get().askers.lock();
                // Probes that gave up are let go as the list grows, so a name that hangs for
                // a long time holds about as many askers as still wait for it.
                if askers.list.len() >= askers.prune_at {
                    askers.list.retain(Asker::live);
                    askers.prune_at = (2 * askers.list.len()).max(PRUNE_MIN);
                }
                askers.list.push(asker);
                return;
            }
            Slot::Vacant(slot) => {
                let askers = Askers { list: vec![asker], prune_at: PRUNE_MIN };
                slot.insert(Arc::new(Shared { askers: Mutex::new(askers) })).clone()
            }
        }
    };
    queue(Task { pool, key, shared, lookup, ran: false });
}

/// The list of askers of one name is first pruned at this length.
const PRUNE_MIN: usize = 8;

fn queue(task: Task) {
    let (pool, key, shared) = (task.pool, task.key.clone(), task.shared.clone());
    let work = Box::new(move || task.run());
    if let Err((work, e)) = pool.submit(work, shared.clone()) {
        // No thread at all: a local resource failure (Unknown, reason resource: the node is
        // out of threads or memory; the name may well resolve). Taken out of the table first,
        // so that dropping the unrun task below finds nothing to queue again.
        let askers = take_if_current(&key, &shared);
        drop(work);
        let what = format!("cannot start a resolver thread: {}", prober_core::os_error_text(&e));
        let now = Instant::now();
        deliver(askers, &Err(prober_core::Reason::local_resource_error(what)), now, now);
    }
}

/// Removes `shared` from the table if it is still the entry of its name, and takes its askers.
fn take_if_current(key: &Key, shared: &Arc<Shared>) -> Vec<Asker> {
    let mut table = table().lock();
    if table.get(key).is_some_and(|s| Arc::ptr_eq(s, shared)) {
        table.remove(key);
    }
    drop(table);
    std::mem::take(&mut shared.askers.lock().list)
}

/// A shared lookup on its way through the pool. Dropped unrun (skipped or pruned because no
/// asker was left), it settles its entry: removed, or queued again if an asker joined since.
struct Task {
    pool: &'static WorkPool,
    key: Key,
    shared: Arc<Shared>,
    lookup: LookupFn,
    ran: bool,
}

impl Task {
    fn run(mut self) {
        self.ran = true;
        {
            let mut table = table().lock();
            if !table.get(&self.key).is_some_and(|s| Arc::ptr_eq(s, &self.shared)) {
                return;
            }
            // Nobody waits any more: the lookup is not made (joiners take the table's lock, so
            // none can come between this check and the removal).
            if !self.shared.wanted() {
                table.remove(&self.key);
                return;
            }
        }
        let started = Instant::now();
        let (lookup, host) = (self.lookup, self.key.0.as_str());
        // A panic (none is known of getaddrinfo) must still answer every asker and free the
        // name: otherwise its later askers would join a lookup that never ends.
        let addrs = std::panic::catch_unwind(|| lookup(host))
            .unwrap_or_else(|_| Err(io::Error::other("the name lookup panicked")));
        let finished = Instant::now();
        let askers = take_if_current(&self.key, &self.shared);
        deliver(askers, &addrs, started, finished);
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if self.ran {
            return;
        }
        let requeue = {
            let mut table = table().lock();
            if !table.get(&self.key).is_some_and(|s| Arc::ptr_eq(s, &self.shared)) {
                false
            } else if self.shared.wanted() {
                true
            } else {
                table.remove(&self.key);
                false
            }
        };
        if requeue {
            let (pool, key, shared) = (self.pool, self.key.clone(), self.shared.clone());
            queue(Task { pool, key, shared, lookup: self.lookup, ran: false });
        }
    }
}

/// Hands `addrs` to every asker still waiting, with its port; `took` is the part of the lookup
/// the asker waited for (from the later of its asking and the lookup's start).
fn deliver(
    askers: Vec<Asker>,
    addrs: &io::Result<Vec<SocketAddr>>,
    started: Instant,
    finished: Instant,
) {
    for asker in askers {
        if !asker.live() {
            continue;
        }
        let mine = match addrs {
            // set_port keeps an IPv6 address's scope (fe80::1%eth0 in /etc/hosts).
            Ok(list) => Ok(list
                .iter()
                .map(|a| {
                    let mut a = *a;
                    a.set_port(asker.port);
                    a
                })
                .collect()),
            Err(e) => Err(copy_error(e)),
        };
        match asker.then {
            Then::Post => {
                let took = finished.saturating_duration_since(started.max(asker.asked));
                asker.sender.post_lookup(Resolved { ticket: asker.ticket, addrs: mine, took });
            }
            Then::Call(then) => then(mine),
        }
    }
}

/// The same error for another asker: the OS code when there is one (EAI_SYSTEM's errno, which
/// tells a node out of descriptors from a bad name), else the kind and the text.
fn copy_error(e: &io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None if prober_core::Reason::is_local_resource(e) => {
            prober_core::Reason::local_resource_error(e.to_string())
        }
        None => io::Error::new(e.kind(), e.to_string()),
    }
}
