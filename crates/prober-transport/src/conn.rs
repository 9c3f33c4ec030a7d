//! An established connection handed over by the [`Connector`](crate::Connector), and how it
//! is closed (or given back to the driver's socket pool).

use prober_core::ClosePolicy;
use prober_io::Ctx;

use crate::stream::{Peer, Stream};

/// An established connection, still registered on the connector's token with
/// READABLE | WRITABLE interest.
#[derive(Debug)]
pub struct Conn {
    pub(crate) stream: Stream,
    pub(crate) peer: Peer,
    pub(crate) close: ClosePolicy,
    /// Can go back to the driver's socket pool when closed: reset close policy, no options
    /// beyond SO_LINGER 0.
    pub(crate) reusable: bool,
    /// The network namespace the socket was made in and the identity of its file then, for a
    /// socket of another namespace: it goes back to that namespace's pool, never the host's.
    /// Boxed: most connections are the host's.
    pub(crate) netns: Option<Box<(prober_core::NetNs, (u64, u64))>>,
    /// The token of its own it is registered under since it was first kept
    /// ([`crate::keep::KeptConns::with_tokens`]); `None` while under a run's token.
    pub(crate) kept_token: Option<mio::Token>,
}

impl Conn {
    /// The connected socket, for the exchange that follows (reads, writes, registration).
    pub fn stream(&mut self) -> &mut Stream {
        &mut self.stream
    }

    /// What the connection is connected to.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// How this connection will be closed.
    pub fn close_policy(&self) -> ClosePolicy {
        self.close
    }

    /// Ends the connection: with RST under [`ClosePolicy::Reset`] (set when the socket was
    /// made), with FIN otherwise. Under the reset policy, when the driver lends a socket pool
    /// with room, the socket is disconnected (the same RST) and kept for the next connection
    /// (of the same network namespace, for a socket of another one); otherwise it is closed.
    /// No `epoll_ctl(DEL)` before a close: the descriptor is never duplicated, so closing it
    /// removes it from the poll by itself (one syscall less per probe, measured by
    /// ci/bench.sh).
    pub fn close(self, cx: &mut Ctx<'_>) {
        if let (true, Stream::Tcp(stream), Peer::Tcp(addr)) =
            (self.reusable, &self.stream, &self.peer)
        {
            let ipv6 = addr.is_ipv6();
            let now = cx.now;
            let Some(pool) = cx.pool() else { return drop(self.stream) };
            let room = match &self.netns {
                None => pool.has_room(ipv6),
                Some(ns) => pool.netns_ref().has_room(&ns.0, ns.1, ipv6),
            };
            if room && crate::sys::disconnect(stream).is_ok() {
                if let Stream::Tcp(stream) = self.stream {
                    match self.netns {
                        None => pool.put(stream, ipv6),
                        Some(ns) => pool.netns().put(&ns.0, ns.1, ipv6, stream, now),
                    }
                }
                return;
            }
        }
        drop(self.stream);
    }
}
