//! Disconnected TCP sockets kept by one driver for the next connection.
//!
//! On loopback most of a TCP probe's cost is the kernel making and freeing a socket (`socket`,
//! `close`, the file and inode behind them), not the handshake: a socket that has finished its
//! probe can instead be disconnected with `connect(AF_UNSPEC)`, which sends the same RST as a
//! close with `SO_LINGER 0`, releases the local port and leaves the socket ready for another
//! `connect` with its options and its epoll registration intact. `ci/bench.sh tcp_oneshot`
//! measured 46 -> 28 µs of CPU per probe for a C loop doing exactly that (docs/benchmarks.md).
//!
//! The pool only stores: `prober-transport`'s connector decides what may enter (connected
//! sockets with the reset close policy and no extra options, disconnected successfully) and
//! re-arms what it takes out.
//! Sockets in the pool stay registered with the driver's `Registry` under the token of the run
//! that last used them, which is why a pool belongs to exactly one driver: reusing a socket
//! needs `reregister` on the same poll. The driver must tolerate events for stale tokens (the
//! engine puts slot generations in its tokens for that).

use std::time::Duration;

use mio::net::TcpStream;

use crate::ns_pool::{NETNS_POOL_IDLE, NETNS_RECHECK, NsPools};

/// How many disconnected sockets an engine keeps by default, per address family.
pub const DEFAULT_POOL_CAP: usize = 64;

/// Counters of a [`SocketPool`], for hosts that export metrics and for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Sockets in the pool now.
    pub idle: usize,
    /// Connections made on a socket taken from the pool instead of a new one.
    pub reused: u64,
    /// Sockets put back into the pool after their connection.
    pub recycled: u64,
}

/// Disconnected, still-registered TCP sockets by address family, at most `cap` of each; and
/// those of other network namespaces, by namespace ([`NsPools`], with the same cap).
#[derive(Debug, Default)]
pub struct SocketPool {
    v4: Vec<TcpStream>,
    v6: Vec<TcpStream>,
    cap: usize,
    reused: u64,
    recycled: u64,
    netns: NsPools,
}

impl SocketPool {
    /// A pool keeping at most `cap` sockets per address family; 0 keeps none (every socket is
    /// closed after its connection, as without a pool).
    pub fn new(cap: usize) -> SocketPool {
        SocketPool::with_netns_bounds(cap, NETNS_POOL_IDLE, NETNS_RECHECK)
    }

    /// [`SocketPool::new`], with the idle and re-check bounds of the sockets of other network
    /// namespaces (see [`NsPools::new`]).
    pub fn with_netns_bounds(cap: usize, idle: Duration, recheck: Duration) -> SocketPool {
        SocketPool { cap, netns: NsPools::new(cap, idle, recheck), ..SocketPool::default() }
    }

    /// The sockets of other network namespaces.
    pub fn netns(&mut self) -> &mut NsPools {
        &mut self.netns
    }

    /// The sockets of other network namespaces, to read.
    pub fn netns_ref(&self) -> &NsPools {
        &self.netns
    }

    /// Whether [`SocketPool::put`] can take another socket of this family now.
    pub fn has_room(&self, ipv6: bool) -> bool {
        let list = if ipv6 { &self.v6 } else { &self.v4 };
        list.len() < self.cap
    }

    /// A disconnected socket of the family, if one is kept. It is still registered with the
    /// driver's registry under an old token: re-register it before use.
    pub fn take(&mut self, ipv6: bool) -> Option<TcpStream> {
        let list = if ipv6 { &mut self.v6 } else { &mut self.v4 };
        let s = list.pop()?;
        self.reused += 1;
        Some(s)
    }

    /// Keeps a disconnected socket for reuse, or closes it when the pool is full (callers check
    /// [`SocketPool::has_room`] first, since a socket that will be closed needs no disconnect).
    pub fn put(&mut self, socket: TcpStream, ipv6: bool) {
        let cap = self.cap;
        let list = if ipv6 { &mut self.v6 } else { &mut self.v4 };
        if list.len() < cap {
            list.push(socket);
            self.recycled += 1;
        }
    }

    /// Closes every kept socket, of every namespace.
    pub fn clear(&mut self) {
        self.v4.clear();
        self.v6.clear();
        self.netns.clear();
    }

    /// The pool's counters now (see [`PoolStats`]).
    pub fn stats(&self) -> PoolStats {
        PoolStats {
            idle: self.v4.len() + self.v6.len(),
            reused: self.reused,
            recycled: self.recycled,
        }
    }
}
