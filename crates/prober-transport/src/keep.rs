//! Idle kept-alive connections, held by an engine between the runs of keep-alive HTTP probes
//! (`HttpSpec::keep_alive`, beyond the kubelet).
//!
//! [`KeptConns`] is one driver's store: the engine owns one and lends it to every call of a
//! run through [`prober_io::Ctx::with_kept`] (type-erased there; [`store`] gets it back). A
//! [`crate::dial::Dial`] of an endpoint that asks for keep-alive takes an idle connection of
//! the same origin (host, port, Unix socket, TLS options, ALPN, close policy) instead of connecting, and the
//! probe hands the connection back through [`crate::dial::Dial::keep`] when the response
//! allowed it. One connection serves one run at a time: runs of one origin in flight together
//! each have their own.
//!
//! A driver that names kept connections by tokens of their own ([`KeptConns::with_tokens`],
//! as the engine does) has each connection registered under its own token once, when it is
//! first kept, and never again while it serves runs: the run that takes it is recorded as its
//! holder, and the driver hands the connection's readiness to the holder
//! ([`KeptConns::route`]); readiness while it idles is noted instead, and a connection that was
//! readable (or closed) while idle is registered once more when taken, which reports what is
//! waiting to the run (edge-triggered polls report a change once). Without such tokens a
//! connection stays registered under the token of the run that last used it while idle (the
//! engine's tokens carry the slot's generation, so its readiness reaches no run), and taking it
//! re-registers it under the new run's token: an `epoll_ctl` per reuse.
//!
//! A connection is dropped (closed) when:
//! - the peer has closed it or sent anything while it was idle (counted as `stale`): as the
//!   driver's poll reported it, for a connection under a token of its own (a close reported
//!   only after the driver's last wait makes the request fail before any response byte: the
//!   retry below), else checked before reuse with a non-blocking `recv(MSG_PEEK)`;
//! - it has been idle for [`IDLE_LIMIT`] (checked when connections are taken, and by the
//!   engine every turn through [`KeptConns::expire`]);
//! - the target whose run last used it is removed ([`KeptConns::close_owner`]);
//! - the store is full ([`KeptConns::new`]'s cap).
//!
//! A connection may carry its protocol's state ([`Session`]: an HTTP/2 client for gRPC
//! keep-alive); it is handed back with the connection, and such a connection is not checked
//! for quiet before reuse (its peer may send frames while it is idle): the probe reads what
//! came with its response, and dials again when that was the end (GOAWAY, EOF) before any
//! response byte.
//!
//! A server may still close a connection just as it is reused (its idle timer fires between
//! the check and the request): the HTTP probe then retries once on a fresh connection, within
//! the same deadline, when the reused connection fails before any response byte
//! ([`crate::dial::Dial::retry`], counted as `retried`).

use std::time::{Duration, Instant};

use mio::{Registry, Token};
use prober_core::{ClosePolicy, IpFamily, NetNs, TlsOptions, UnixSocket};
use prober_io::{Ctx, Ready};

use crate::Transport;
use crate::endpoint::Endpoint;

/// How long a connection may stay idle before it is closed: 60 s.
///
/// Below the idle timeouts of common servers and clients (nginx `keepalive_timeout` 75 s, Go's
/// `http.Transport.IdleConnTimeout` 90 s) and of middleboxes that drop idle flows silently
/// (Azure's load balancer 4 min, AWS NAT gateway 350 s): a silently dropped connection cannot
/// be detected before reuse and would cost the run its deadline. Servers with shorter timeouts
/// (Apache and Node.js: 5 s) close the connection themselves, which the check before reuse
/// sees, so their probes simply dial again. A probe whose period exceeds the limit gets no
/// reuse and behaves as without keep-alive.
pub const IDLE_LIMIT: Duration = Duration::from_secs(60);

/// How often [`KeptConns::expire`] looks for connections past their idle limit.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// How many idle connections an engine keeps by default, all origins together.
pub const DEFAULT_KEPT_CAP: usize = 1024;

/// What makes two connections interchangeable: the endpoint's parts, owned (compared with a
/// borrowed [`Endpoint`] by [`Origin::matches`], never with another `Origin`).
#[derive(Debug)]
pub(crate) struct Origin {
    host: String,
    port: u16,
    tls: Option<TlsOptions>,
    alpn: &'static [&'static [u8]],
    close: ClosePolicy,
    nodelay: bool,
    /// The Unix socket connected to, if any: part of the origin, so that a connection through
    /// one socket never serves a probe of another, or of the host's TCP port.
    unix: Option<UnixSocket>,
    /// The network namespace the connection was made in: part of the origin, so that a
    /// container's `127.0.0.1:80` never serves a probe of the host's, nor of another's.
    netns: Option<NetNs>,
    /// The address family asked for: part of the origin, so that a connection made to an
    /// address of one family never serves a probe that excludes that family.
    ip_family: IpFamily,
    /// The local address the socket was bound to: part of the origin, so that a connection
    /// from one address never serves a probe that asks for another (or for none).
    source: Option<std::net::IpAddr>,
}

impl Origin {
    pub(crate) fn of(ep: &Endpoint<'_>) -> Origin {
        Origin {
            host: ep.host.to_string(),
            port: ep.port,
            tls: ep.tls.cloned(),
            alpn: ep.alpn,
            close: ep.close,
            nodelay: ep.nodelay,
            unix: ep.unix.cloned(),
            netns: ep.netns.cloned(),
            ip_family: ep.ip_family,
            source: ep.source,
        }
    }

    pub(crate) fn matches(&self, ep: &Endpoint<'_>) -> bool {
        self.port == ep.port
            && self.host == ep.host
            && self.tls.as_ref() == ep.tls
            && self.alpn == ep.alpn
            && self.close == ep.close
            && self.nodelay == ep.nodelay
            && self.unix.as_ref() == ep.unix
            && self.netns.as_ref() == ep.netns
            && self.ip_family == ep.ip_family
            && self.source == ep.source
    }
}

/// One idle connection.
#[derive(Debug)]
pub(crate) struct Idle {
    pub(crate) origin: Origin,
    pub(crate) conn: Transport,
    /// When it became idle.
    pub(crate) since: Instant,
    /// The target whose run last used it (`None`: a one-shot check's).
    pub(crate) owner: Option<u64>,
    /// The certificate's expiry from the handshake that made the connection.
    pub(crate) cert_not_after: Option<i64>,
    /// What that handshake showed (`Dial::tls_info`).
    pub(crate) tls_info: Option<std::sync::Arc<prober_core::TlsInfo>>,
    /// The protocol's state of the connection, for protocols that keep some between requests
    /// (an HTTP/2 client: HPACK tables, windows, stream ids). Such a connection is not checked
    /// for quiet before reuse: its peer may legitimately send while it is idle (PING, SETTINGS,
    /// WINDOW_UPDATE, GOAWAY), so the protocol reads what came with its next exchange and
    /// judges it.
    pub(crate) session: Option<Session>,
}

/// The protocol's state kept with a connection ([`crate::dial::Dial::keep_session`]).
pub type Session = Box<dyn std::any::Any + Send>;

/// Counters of a [`KeptConns`], for hosts that export metrics and for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeepStats {
    /// Idle connections held now.
    pub idle: usize,
    /// Connections put back after a run.
    pub kept: u64,
    /// Runs that were given a kept connection instead of dialing.
    pub reused: u64,
    /// Kept connections found closed by the peer (or with unexpected bytes) before reuse.
    pub stale: u64,
    /// Runs that dialed again after a reused connection failed before any response byte.
    pub retried: u64,
    /// Connections closed for idling past [`IDLE_LIMIT`].
    pub expired: u64,
    /// Connections closed because the target that last used them was removed.
    pub orphaned: u64,
    /// `epoll_ctl` calls made to register kept connections with the driver's poll again
    /// (under another token, or to report readiness that came while they were idle).
    pub registrations: u64,
}

/// How a driver names kept connections in its poll ([`KeptConns::with_tokens`]): the token
/// of the connection whose descriptor is `fd`, or `None` when its token space has no room for
/// that descriptor (the connection then goes under each run's token, as without).
pub type KeptToken = fn(fd: usize) -> Option<Token>;

/// Who a connection under its own token answers to, by descriptor.
#[derive(Clone, Copy, Debug, Default)]
enum Lease {
    /// Not a kept connection's (or no longer: a closed descriptor's entry is left stale, and
    /// set again when a connection with that descriptor is kept).
    #[default]
    None,
    /// In the store; `ready`: it was readable, or closed, since it was kept.
    Idle { ready: bool },
    /// Taken by the run whose first token this is.
    Held(Token),
}

/// One driver's idle kept-alive connections (see the module docs).
#[derive(Debug)]
pub struct KeptConns {
    idle: Vec<Idle>,
    /// Indexed by descriptor, for connections under their own tokens.
    leases: Vec<Lease>,
    token_of: Option<KeptToken>,
    cap: usize,
    limit: Duration,
    /// No sweep before this (see [`KeptConns::expire`]).
    next_sweep: Option<Instant>,
    /// No idle connection was kept before this: the oldest `since` when last computed, kept
    /// as a lower bound while connections leave, so [`KeptConns::next_expiry`] is O(1).
    earliest: Option<Instant>,
    stats: KeepStats,
}

impl Default for KeptConns {
    fn default() -> KeptConns {
        KeptConns::new(DEFAULT_KEPT_CAP)
    }
}

impl KeptConns {
    /// A store holding at most `cap` idle connections (0 keeps none).
    pub fn new(cap: usize) -> KeptConns {
        KeptConns {
            idle: Vec::new(),
            leases: Vec::new(),
            token_of: None,
            cap,
            limit: IDLE_LIMIT,
            next_sweep: None,
            earliest: None,
            stats: KeepStats::default(),
        }
    }

    /// The same with another idle limit than [`IDLE_LIMIT`] (for hosts that know their
    /// servers' timeouts, and for tests).
    pub fn with_idle_limit(mut self, limit: Duration) -> KeptConns {
        self.limit = limit;
        self
    }

    /// The same, with kept connections registered under tokens of their own, made by
    /// `token_of` (see the module docs): the driver passes their readiness to
    /// [`KeptConns::route`], and the connections are not registered again per run.
    pub fn with_tokens(mut self, token_of: KeptToken) -> KeptConns {
        self.token_of = Some(token_of);
        self
    }

    /// Readiness `ready` of the kept connection with descriptor `fd` (its token is
    /// `token_of(fd)`): the first token of the run that holds it, to be handed to that run as
    /// readiness of its token 0; `None` when it idles (then noted, for the run that takes it
    /// next) or the descriptor is no kept connection's any more (stale readiness).
    pub fn route(&mut self, fd: usize, ready: Ready) -> Option<Token> {
        match self.leases.get_mut(fd)? {
            Lease::Held(run) => Some(*run),
            Lease::Idle { ready: seen } => {
                *seen |= ready.readable || ready.hup || ready.error;
                None
            }
            Lease::None => None,
        }
    }

    fn lease_mut(&mut self, fd: usize) -> &mut Lease {
        if self.leases.len() <= fd {
            self.leases.resize(fd + 1, Lease::None);
        }
        &mut self.leases[fd]
    }

    /// Registers `conn`, about to be kept, under its own token if the driver gives kept
    /// connections one and it is not there yet (a connection's first keeping: one `epoll_ctl`
    /// for all its runs). `Err`: it could not be, and is to be closed.
    pub(crate) fn adopt(
        &mut self,
        registry: &Registry,
        conn: &mut Transport,
    ) -> std::io::Result<()> {
        let fd = conn.conn().stream.fd();
        let Some(token) = usize::try_from(fd).ok().and_then(|fd| Some((fd, self.token_of?(fd)?)))
        else {
            return Ok(());
        };
        if conn.conn().kept_token != Some(token.1) {
            self.stats.registrations += 1;
            conn.rearm(registry, token.1)?;
            conn.conn_mut().kept_token = Some(token.1);
        }
        *self.lease_mut(token.0) = Lease::Idle { ready: false };
        Ok(())
    }

    /// Whether `conn`, idle, is fit for another request: nothing received, no FIN, no error.
    /// For a connection under its own token the poll has said so while it idled (up to the
    /// driver's last wait: a close reported after that makes the request fail before any
    /// response byte, and the run dial again, as a close just after a peek would), so no
    /// `recv(MSG_PEEK)` is made; for any other the peek is.
    fn is_quiet(&mut self, conn: &mut Transport) -> bool {
        let lease =
            usize::try_from(conn.conn().stream.fd()).ok().and_then(|fd| self.leases.get(fd));
        match (conn.conn().kept_token, lease) {
            (Some(_), Some(Lease::Idle { ready })) => !ready && conn.holds_nothing(),
            _ => conn.is_quiet(),
        }
    }

    /// Lends `conn`, just taken, to the run whose first token is `run`: a connection under its
    /// own token gets `run` as its holder, and is registered again (under the same token) only
    /// when it was readable or closed while idle, so that the run is told; any other is
    /// registered under `run`.
    pub(crate) fn lend(
        &mut self,
        registry: &Registry,
        conn: &mut Transport,
        run: Token,
    ) -> std::io::Result<()> {
        let fd = usize::try_from(conn.conn().stream.fd()).ok();
        match (conn.conn().kept_token, fd) {
            (Some(own), Some(fd)) => {
                let was = std::mem::replace(self.lease_mut(fd), Lease::Held(run));
                if matches!(was, Lease::Idle { ready: false }) {
                    return Ok(());
                }
                self.stats.registrations += 1;
                conn.rearm(registry, own)
            }
            _ => {
                self.stats.registrations += 1;
                conn.rearm(registry, run)
            }
        }
    }

    /// The counters, with the number of idle connections now.
    pub fn stats(&self) -> KeepStats {
        KeepStats { idle: self.idle.len(), ..self.stats }
    }

    /// Whether no connection is held.
    pub fn is_empty(&self) -> bool {
        self.idle.is_empty()
    }

    /// Closes the connections the target `owner` last used (the target is being removed);
    /// returns how many.
    pub fn close_owner(&mut self, owner: u64) -> usize {
        let before = self.idle.len();
        self.idle.retain(|i| i.owner != Some(owner));
        let closed = before - self.idle.len();
        self.stats.orphaned += closed as u64;
        closed
    }

    /// Closes the connections idle for longer than the limit at `now`. Cheap to call every
    /// turn: the connections are looked at no more often than every [`SWEEP_EVERY`] (or
    /// the limit, when that is shorter), so a connection may outlive its limit by that much.
    pub fn expire(&mut self, now: Instant) {
        if self.next_sweep.is_some_and(|at| now < at) {
            return;
        }
        self.next_sweep = Some(now + SWEEP_EVERY.min(self.limit));
        let limit = self.limit;
        let before = self.idle.len();
        self.idle.retain(|i| now.saturating_duration_since(i.since) <= limit);
        self.stats.expired += (before - self.idle.len()) as u64;
        self.earliest = self.idle.iter().map(|i| i.since).min();
    }

    /// When [`KeptConns::expire`] next has a connection to close: the oldest connection's
    /// limit, or the next sweep when that is later; `None` while nothing is kept. A driver
    /// that sleeps until its next timer adds this to it, so that an engine with nothing else
    /// to do still closes what it keeps (a server that closed its side would otherwise leave
    /// the descriptor in CLOSE_WAIT until the next run).
    /// Called by a driver on every wait, so it reads a cached bound instead of the
    /// connections: when some left since, the driver may wake early, and the sweep then
    /// finds the true oldest.
    pub fn next_expiry(&self) -> Option<Instant> {
        if self.idle.is_empty() {
            return None;
        }
        let oldest = self.earliest?;
        // Past `since + limit`, not at it: `expire` keeps a connection idle for exactly the
        // limit.
        let due = oldest + self.limit + Duration::from_millis(1);
        Some(self.next_sweep.map_or(due, |sweep| due.max(sweep)))
    }

    /// Closes every connection.
    pub fn clear(&mut self) {
        self.idle.clear();
        self.earliest = None;
    }

    /// The most recently kept live connection of `ep`'s origin, checked before it is handed
    /// out; connections found expired or closed by the peer on the way are closed.
    pub(crate) fn take(&mut self, ep: &Endpoint<'_>, now: Instant) -> Option<Idle> {
        // Newest first: the one least likely to have met the server's idle timeout.
        let mut i = self.idle.len();
        while i > 0 {
            i -= 1;
            if !self.idle[i].origin.matches(ep) {
                continue;
            }
            let mut idle = self.idle.swap_remove(i);
            if now.saturating_duration_since(idle.since) > self.limit {
                self.stats.expired += 1;
                continue;
            }
            if idle.session.is_none() && !self.is_quiet(&mut idle.conn) {
                self.stats.stale += 1;
                continue;
            }
            self.stats.reused += 1;
            return Some(idle);
        }
        None
    }

    /// Whether [`KeptConns::put`] would keep another connection.
    pub(crate) fn has_room(&self) -> bool {
        self.idle.len() < self.cap
    }

    /// Keeps `idle` (the caller checked [`KeptConns::has_room`]).
    pub(crate) fn put(&mut self, idle: Idle) {
        debug_assert!(self.has_room());
        self.earliest = match self.earliest {
            Some(e) if !self.idle.is_empty() => Some(e.min(idle.since)),
            _ => Some(idle.since),
        };
        self.idle.push(idle);
        self.stats.kept += 1;
    }

    pub(crate) fn note_retry(&mut self) {
        self.stats.retried += 1;
    }
}

/// The store the driver lent through `cx` ([`Ctx::with_kept`]) and the run's owner, if any.
pub fn store<'c>(cx: &'c mut Ctx<'_>) -> Option<(&'c mut KeptConns, Option<u64>)> {
    let (any, owner) = cx.kept()?;
    any.downcast_mut::<KeptConns>().map(|s| (s, owner))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober_core::UnixSocket;

    fn ep<'a>(unix: Option<&'a UnixSocket>) -> Endpoint<'a> {
        Endpoint {
            host: "localhost",
            port: 80,
            tls: None,
            tls_sessions: None,
            alpn: &[crate::ALPN_HTTP1],
            close: ClosePolicy::Reset,
            nodelay: false,
            keep_alive: true,
            unix,
            filter: None,
            netns: None,
            ip_family: IpFamily::Any,
            source: None,
        }
    }

    /// A connection through one Unix socket never serves a probe of another socket, nor of the
    /// same host and port over TCP.
    #[test]
    fn origins_include_the_unix_socket() {
        let a = UnixSocket::path("/run/a.sock").unwrap();
        let b = UnixSocket::path("/run/b.sock").unwrap();
        let origin = Origin::of(&ep(Some(&a)));
        assert!(origin.matches(&ep(Some(&a))));
        assert!(!origin.matches(&ep(Some(&b))));
        assert!(!origin.matches(&ep(None)));
        assert!(!Origin::of(&ep(None)).matches(&ep(Some(&a))));
    }

    /// A connection made under one address family never serves a probe asking for another:
    /// an IPv6 connection of an unrestricted probe is not reused by an IPv4-only one.
    #[test]
    fn origins_include_the_ip_family() {
        let with = |f| Endpoint { ip_family: f, ..ep(None) };
        let origin = Origin::of(&with(IpFamily::Any));
        assert!(origin.matches(&with(IpFamily::Any)));
        assert!(!origin.matches(&with(IpFamily::V4)));
        assert!(!Origin::of(&with(IpFamily::V6)).matches(&with(IpFamily::PreferV6)));
    }

    /// A connection bound to one source address never serves a probe asking for another, nor
    /// one that binds none (and the other way round).
    #[test]
    fn origins_include_the_source_address() {
        let with =
            |ip: Option<&str>| Endpoint { source: ip.map(|ip| ip.parse().unwrap()), ..ep(None) };
        let origin = Origin::of(&with(Some("127.0.0.2")));
        assert!(origin.matches(&with(Some("127.0.0.2"))));
        assert!(!origin.matches(&with(Some("127.0.0.3"))));
        assert!(!origin.matches(&with(None)));
        assert!(!Origin::of(&with(None)).matches(&with(Some("127.0.0.2"))));
    }

    /// A connection made in one network namespace never serves a probe of another, nor of
    /// the host's same address.
    #[test]
    fn origins_include_the_network_namespace() {
        let a = prober_core::NetNs::new("/run/netns/origin-a").unwrap();
        let b = prober_core::NetNs::new("/run/netns/origin-b").unwrap();
        let with = |ns| Endpoint { netns: ns, ..ep(None) };
        let origin = Origin::of(&with(Some(&a)));
        assert!(origin.matches(&with(Some(&a))));
        assert!(!origin.matches(&with(Some(&b))));
        assert!(!origin.matches(&with(None)));
        assert!(!Origin::of(&with(None)).matches(&with(Some(&a))));
    }
}
