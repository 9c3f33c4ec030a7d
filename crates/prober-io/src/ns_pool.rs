//! Disconnected TCP sockets of other network namespaces, kept per namespace by one driver for
//! the next probe in the same namespace (issue 37).
//!
//! A socket stays in the namespace it was made in, so a socket of a namespace that has finished
//! its probe can be disconnected (`connect(AF_UNSPEC)`, as [`SocketPool`](crate::SocketPool)
//! does on the host) and handed to the next probe of that namespace: no `prober-netns` thread,
//! no `setns`, no `socket`, no `stat` of the path. But a kept socket also keeps its namespace
//! in existence, and a path may come to name another namespace (a restarted container), so the
//! pool lets go:
//!
//! - **when no spec names the path any more**: an entry holds only a [`WeakNetNs`]; the driver
//!   calls [`NsPools::release_unnamed`] after removing specs and at the end of each turn
//!   (one atomic load when no [`NetNs`] was let go since), which closes the sockets of paths
//!   nobody names. The namespace file's own descriptor goes with the last [`NetNs`], as before;
//! - **when the path's identity changes**: sockets are kept under the identity (device, inode)
//!   of the namespace file the thread checked when it made them. A socket is taken at once only
//!   while that check is younger than the re-check bound (default [`NETNS_RECHECK`]); after
//!   it, the probe asks a thread to check the path again
//!   ([`Ctx::sockets_in_unless`](crate::Ctx::sockets_in_unless): a `stat`, no `setns`, no
//!   socket) and takes a kept socket if it still names their namespace; an answer naming
//!   another identity comes with a socket made there and closes every socket kept under the
//!   old one ([`NsPools::verified`]). So a probe reaches the namespace the path names within
//!   the bound of its re-binding, never through the old one after that, and the `stat` costs
//!   one round trip per namespace per bound instead of one per probe;
//! - **after an idle bound** (default [`NETNS_POOL_IDLE`]) with no probe in the namespace: the
//!   driver keeps [`NsPools::next_expiry`] among its timers and calls [`NsPools::expire`].
//!
//! The `stat` stays off the poll thread on purpose: the path is the host's to choose and may
//! be on a file system that blocks.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use prober_core::{NetNs, WeakNetNs};

/// How long a namespace's kept sockets may stay unused before they are closed (and the
/// namespace, if only they held it, ceases to exist).
pub const NETNS_POOL_IDLE: Duration = Duration::from_secs(10);

/// How long a check of a namespace path's identity is trusted: a probe in the namespace after
/// this goes to a `prober-netns` thread, which checks it again. This bounds how long after a
/// path is re-bound (a container restarted) a probe may still run in the old namespace, and is
/// short beside a probe period (the kubelet's is at least a second) while making the check's
/// cost per probe small for namespaces probed often.
pub const NETNS_RECHECK: Duration = Duration::from_secs(1);

/// Counters of an [`NsPools`], for hosts that export metrics and for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NsPoolStats {
    /// Namespaces with an entry now.
    pub namespaces: usize,
    /// Sockets kept now, over all namespaces.
    pub idle: usize,
    /// Connections made on a kept socket instead of one made by a namespace thread.
    pub reused: u64,
    /// Sockets put back after their connection.
    pub recycled: u64,
    /// Kept sockets closed because their path was no longer named, named another namespace,
    /// or was idle past the bound.
    pub released: u64,
}

#[derive(Debug)]
struct Entry {
    netns: WeakNetNs,
    /// The namespace file's identity when its sockets were made.
    id: (u64, u64),
    /// When that identity was last checked (at the latest).
    verified_at: Instant,
    last_used: Instant,
    v4: Vec<TcpStream>,
    v6: Vec<TcpStream>,
}

impl Entry {
    fn list(&mut self, ipv6: bool) -> &mut Vec<TcpStream> {
        if ipv6 { &mut self.v6 } else { &mut self.v4 }
    }

    fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }
}

/// Disconnected, still-registered TCP sockets by namespace and address family, at most `cap`
/// of each (see the module's documentation). Like [`SocketPool`](crate::SocketPool) it belongs
/// to one driver: its sockets are registered with that driver's poll.
#[derive(Debug)]
pub struct NsPools {
    map: HashMap<usize, Entry>,
    cap: usize,
    idle: Duration,
    recheck: Duration,
    /// [`NetNs::released`] when the entries were last looked over.
    released_seen: u64,
    /// No entry expires before this (a lower bound: uses only move expiries later).
    expiry: Option<Instant>,
    stats: NsPoolStats,
}

impl Default for NsPools {
    fn default() -> NsPools {
        NsPools::new(0, NETNS_POOL_IDLE, NETNS_RECHECK)
    }
}

impl NsPools {
    /// Pools keeping at most `cap` sockets per namespace and address family (0: none), for
    /// `idle` after their namespace's last use, taken only within `recheck` of the last check
    /// of the path's identity.
    pub fn new(cap: usize, idle: Duration, recheck: Duration) -> NsPools {
        NsPools {
            map: HashMap::new(),
            cap,
            idle,
            recheck,
            released_seen: NetNs::released(),
            expiry: None,
            stats: NsPoolStats::default(),
        }
    }

    /// A kept socket of `netns` and the family, with the identity it was made under, if one is
    /// kept and the path's identity was checked within the re-check bound. It is still
    /// registered with the driver's registry under an old token: re-register it before use.
    pub fn take(
        &mut self,
        netns: &NetNs,
        ipv6: bool,
        now: Instant,
    ) -> Option<(TcpStream, (u64, u64))> {
        let entry = self.map.get(&netns.key())?;
        if now.saturating_duration_since(entry.verified_at) >= self.recheck {
            return None;
        }
        self.take_verified(netns, ipv6, now)
    }

    /// [`NsPools::take`] right after a thread's check ([`NsPools::verified`]) found the path
    /// still naming the namespace of the kept sockets, however long its answer took.
    pub fn take_verified(
        &mut self,
        netns: &NetNs,
        ipv6: bool,
        now: Instant,
    ) -> Option<(TcpStream, (u64, u64))> {
        let entry = self.map.get_mut(&netns.key())?;
        let socket = entry.list(ipv6).pop()?;
        entry.last_used = now;
        self.stats.reused += 1;
        Some((socket, entry.id))
    }

    /// The identity under which a socket of `netns` and the family is kept, if one is (checked
    /// too long ago to be taken, say: see [`Ctx::sockets_in_unless`](crate::Ctx::sockets_in_unless)).
    pub fn kept_identity(&self, netns: &NetNs, ipv6: bool) -> Option<(u64, u64)> {
        let entry = self.map.get(&netns.key())?;
        let list = if ipv6 { &entry.v6 } else { &entry.v4 };
        (!list.is_empty()).then_some(entry.id)
    }

    /// A thread found `netns`'s path naming the namespace `id` in a check made no earlier than
    /// `at`: sockets kept under another identity are closed (never used again), and kept ones
    /// may be taken for the re-check bound from `at`. An answer older than the last one known
    /// changes nothing.
    pub fn verified(&mut self, netns: &NetNs, id: (u64, u64), at: Instant) {
        if self.cap == 0 {
            return;
        }
        let entry = self.map.entry(netns.key()).or_insert_with(|| Entry {
            netns: netns.downgrade(),
            id,
            verified_at: at,
            last_used: at,
            v4: Vec::new(),
            v6: Vec::new(),
        });
        if at < entry.verified_at {
            return;
        }
        if entry.id != id {
            self.stats.released += entry.len() as u64;
            entry.v4.clear();
            entry.v6.clear();
            entry.id = id;
        }
        entry.verified_at = at;
        entry.last_used = entry.last_used.max(at);
        let expires = entry.last_used + self.idle;
        self.expiry = Some(self.expiry.map_or(expires, |e| e.min(expires)));
    }

    /// Whether [`NsPools::put`] would keep a socket of `netns` made under `id`, of the family.
    pub fn has_room(&self, netns: &NetNs, id: (u64, u64), ipv6: bool) -> bool {
        self.map
            .get(&netns.key())
            .is_some_and(|e| e.id == id && if ipv6 { e.v6.len() } else { e.v4.len() } < self.cap)
    }

    /// Keeps a disconnected socket of `netns` made under `id`, or closes it when there is no
    /// room or the path has been found naming another namespace since.
    pub fn put(
        &mut self,
        netns: &NetNs,
        id: (u64, u64),
        ipv6: bool,
        socket: TcpStream,
        now: Instant,
    ) {
        let cap = self.cap;
        let Some(entry) = self.map.get_mut(&netns.key()) else { return };
        if entry.id != id {
            return;
        }
        entry.last_used = entry.last_used.max(now);
        let list = entry.list(ipv6);
        if list.len() < cap {
            list.push(socket);
            self.stats.recycled += 1;
        }
    }

    /// Closes the kept sockets of `netns`: its path could not be used (gone, say).
    pub fn forget(&mut self, netns: &NetNs) {
        if let Some(entry) = self.map.remove(&netns.key()) {
            self.stats.released += entry.len() as u64;
        }
    }

    /// Closes the kept sockets of every path no spec names any more; a single atomic load when
    /// no [`NetNs`] was let go since the last call.
    pub fn release_unnamed(&mut self) {
        let released = NetNs::released();
        if released == self.released_seen {
            return;
        }
        self.released_seen = released;
        let stats = &mut self.stats;
        self.map.retain(|_, e| {
            let keep = e.netns.is_named();
            if !keep {
                stats.released += e.len() as u64;
            }
            keep
        });
    }

    /// When [`NsPools::expire`] may next have something to close.
    pub fn next_expiry(&self) -> Option<Instant> {
        if self.map.is_empty() { None } else { self.expiry }
    }

    /// Closes the sockets of namespaces unused for the idle bound at `now`.
    pub fn expire(&mut self, now: Instant) {
        if self.expiry.is_none_or(|e| e > now) {
            return;
        }
        let (idle, stats) = (self.idle, &mut self.stats);
        let mut next: Option<Instant> = None;
        self.map.retain(|_, e| {
            let expires = e.last_used + idle;
            if expires <= now {
                stats.released += e.len() as u64;
                return false;
            }
            next = Some(next.map_or(expires, |n| n.min(expires)));
            true
        });
        self.expiry = next;
    }

    /// Closes every kept socket.
    pub fn clear(&mut self) {
        self.map.clear();
        self.expiry = None;
    }

    /// The counters now (see [`NsPoolStats`]).
    pub fn stats(&self) -> NsPoolStats {
        NsPoolStats {
            namespaces: self.map.len(),
            idle: self.map.values().map(Entry::len).sum(),
            ..self.stats
        }
    }
}
