//! Resolve and connect without blocking: the first half of every TCP and HTTP probe.
//!
//! The recipe is mio's: a nonblocking `connect`, registration for writability, then
//! `take_error` (`SO_ERROR`) and `peer_addr` (`getpeername`) to tell a finished connect from a
//! spurious wake-up. Drivers never hand one run's token to another run (the engine puts slot
//! generations in its tokens), and epoll computes an event from the socket's state when it
//! delivers it, so a writable event without error or hang-up is a finished, successful connect
//! and costs no syscall; only other events go through `SO_ERROR` and `getpeername`.
//!
//! The addresses of a name are raced as Go's dialer (the kubelet's) races them, in the manner of
//! RFC 8305 ("Happy Eyeballs"): those of the first address's family are tried in turn; if none
//! has connected [`FALLBACK_DELAY`] after the first attempt began, or all of them failed
//! sooner, those of the other family are tried in turn beside them, on a second socket. The
//! first connection wins and the other attempt is closed; all within the owner's one deadline.
//! When both fail, the first family's first error is reported, as Go reports it. Messages use
//! Go's wording so that users who know the kubelet's events recognise them
//! (`dial tcp 127.0.0.1:1: connect: connection refused`).
//!
//! With an address family ([`Connector::with_ip_family`]) only the chosen family's addresses
//! enter the race, so a `Prefer*` family or a single one never races the other. With a source
//! address ([`Connector::with_source`]) only those of its family are left after that, and each
//! socket is bound to it before its `connect`.
//!
//! Owners route readiness of tokens `sub` and `sub + 1` to [`Connector::ready`] while it
//! connects ([`Connector::owns`]), and call [`Connector::timer`] at [`Connector::wake_at`]. A
//! connection made on the second socket is moved to token `sub` before it is handed over.
//!
//! In another network namespace ([`Connector::with_netns`]) the sockets, one per address, are
//! made before the race by a `prober-netns` helper thread and handed back through the driver's
//! mailbox as a lookup's answer (see `prober_io::netns`), or taken from the driver's sockets
//! kept for that namespace (`prober_io::NsPools`); the race itself is unchanged.
//!
//! With a [`SocketPool`](prober_io::SocketPool) lent by the driver, a connection with the reset
//! close policy ends with `connect(AF_UNSPEC)` instead of `close`: the same RST on the wire, the
//! local port released, and the socket kept for the next connection (no `socket`, `setsockopt`
//! or `epoll_ctl(ADD)`, no socket freed and made again; figures in the pool's documentation).

use std::borrow::Cow;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use mio::Interest;
use mio::net::TcpStream;
use prober_core::os_error_text;
use std::sync::Arc;

use ns_connect::NsConnect;
use prober_core::{AddressFilter, ClosePolicy, IpFamily, NetNs, Reason, UnixSocket};
use prober_io::{Ctx, Ready};
use socket2::Socket;

use crate::conn::Conn;

mod netns;
mod ns_connect;
mod select;
use crate::socket::{arm, in_ephemeral_range, open, reconnect};
use crate::stream::{Peer, Stream};

/// What the connector says after each call.
#[derive(Debug)]
pub enum ConnectStep {
    /// Still connecting: wait for readiness, the resolver's answer or the deadline.
    Pending,
    /// Connected, to the first address that accepted.
    Connected(Conn),
    /// No connection could be made (the name did not resolve, every address failed, or the
    /// deadline passed): why.
    Failed(ConnectError),
}

/// Why no connection could be made, in words and as a reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectError {
    /// The cause, as the outcome will report it.
    pub reason: Reason,
    /// The message, in the kubelet's wording (`dial tcp 10.0.0.1:80: connect: connection
    /// refused`).
    pub message: String,
}

/// How long the first address family has alone before the other joins the race (Go's
/// `net.Dialer.FallbackDelay` default).
pub const FALLBACK_DELAY: Duration = Duration::from_millis(300);

/// One of the two attempts of a race: the first address family (0) or the other (1).
#[derive(Debug, Default)]
struct Attempt {
    /// Index in the address list to look for this attempt's next address from.
    next: usize,
    /// The socket connecting now, and its address.
    current: Option<(SocketAddr, TcpStream)>,
    /// The first error of this attempt's addresses.
    first_error: Option<ConnectError>,
    /// Every address of this attempt's family has failed (or it has none).
    exhausted: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum State {
    Idle,
    Resolving,
    Connecting,
    Finished,
}

/// The addresses to try: an IP literal's one address is kept inline, so that a probe of an IP
/// (the common case: pod IPs) allocates nothing to connect.
#[derive(Debug)]
enum Addrs {
    One(SocketAddr),
    List(Vec<SocketAddr>),
}

impl Addrs {
    fn as_slice(&self) -> &[SocketAddr] {
        match self {
            Addrs::One(a) => std::slice::from_ref(a),
            Addrs::List(v) => v,
        }
    }
}

/// Resolves a host (IP literals skip resolution) and connects to each address in turn.
#[derive(Debug)]
pub struct Connector {
    /// The host name to resolve; `None` for an IP literal (its address is in `addrs`).
    name: Option<String>,
    port: u16,
    close: ClosePolicy,
    state: State,
    sub: usize,
    addrs: Addrs,
    /// The first family's attempt and the other's.
    attempts: [Attempt; 2],
    /// When the other family joins the race, while it has not yet.
    fallback_at: Option<Instant>,
    resolve_started: Option<Instant>,
    resolve_time: Option<Duration>,
    /// Redials after a self-connect (see `ready`).
    self_connects: u8,
    /// The lookup in flight; dropping it abandons the lookup.
    lookup: Option<prober_io::Lookup>,
    /// Set TCP_NODELAY on the socket (see [`Connector::with_nodelay`]).
    nodelay: bool,
    /// Connect to this Unix socket instead (see [`Connector::unix`]); boxed so that the TCP
    /// connector, inline in every probe, does not grow for it.
    unix: Option<Box<UnixSocket>>,
    /// Connect only to addresses this allow-list admits (see [`Connector::with_filter`]).
    filter: Option<Arc<AddressFilter>>,
    /// Make the sockets in this network namespace (see [`Connector::with_netns`]); boxed, as
    /// `unix`.
    ns: Option<Box<NsConnect>>,
    /// Connect only to the addresses of this family (see [`Connector::with_ip_family`]).
    family: IpFamily,
    /// Bind each socket to this local address (see [`Connector::with_source`]).
    source: Option<IpAddr>,
}

impl Connector {
    /// A connector to `host` (a name, or an IP literal with IPv6 unbracketed) and `port`.
    pub fn new(host: &str, port: u16, close: ClosePolicy) -> Connector {
        let (name, addrs) = match host.parse::<IpAddr>() {
            Ok(ip) => (None, Addrs::One(SocketAddr::new(ip, port))),
            Err(_) => (Some(host.to_string()), Addrs::List(Vec::new())),
        };
        Connector {
            name,
            port,
            close,
            state: State::Idle,
            sub: 0,
            addrs,
            attempts: Default::default(),
            fallback_at: None,
            resolve_started: None,
            resolve_time: None,
            self_connects: 0,
            lookup: None,
            nodelay: false,
            unix: None,
            filter: None,
            ns: None,
            family: IpFamily::Any,
            source: None,
        }
    }

    /// Makes the sockets in the network namespace `netns` (none: this process's own). They are
    /// made on a `prober-netns` pool thread (see `prober_io::netns`) and handed back; the
    /// connect and all after it run here as for any socket. A host name is resolved first
    /// through the host's resolver. Such sockets never go to or come from the driver's pool
    /// of this process's namespace, but to and from its pool of `netns`
    /// ([`prober_io::NsPools`]), under the identity of the namespace they were made in: a
    /// probe of an IP literal takes a kept one without the thread while the path's identity
    /// was checked recently enough, and after a thread's check otherwise. A namespace that
    /// cannot be used fails the connect with reason `namespace`, naming the path.
    pub fn with_netns(mut self, netns: Option<&NetNs>) -> Connector {
        self.ns = netns.map(|netns| Box::new(NsConnect::new(netns)));
        self
    }

    /// A connector to a Unix socket (beyond the kubelet). The connect is decided at once (a
    /// Unix `connect` does not wait for the peer): [`Connector::start`] says `Connected` or
    /// `Failed`, in Go's words (`dial unix /run/app.sock: connect: no such file or
    /// directory`). A missing socket file is reason `refused`, as nothing listens there.
    pub fn unix(socket: &UnixSocket, close: ClosePolicy) -> Connector {
        Connector { unix: Some(Box::new(socket.clone())), ..Connector::new("", 0, close) }
    }

    /// Disables Nagle's algorithm on the connection: for protocols that make several small
    /// writes in a row (HTTP/2). A probe that sends one request in one write (HTTP/1.1) or
    /// nothing (TCP) does not need it, and saves the setsockopt.
    pub fn with_nodelay(mut self, nodelay: bool) -> Connector {
        self.nodelay = nodelay;
        self
    }

    /// Connects only to addresses `filter` admits: each resolved address (or the IP literal)
    /// is checked, with the host name as given, before a socket is opened for it. Refused ones
    /// are dropped; when none is left the connect fails with reason `denied` and nothing was
    /// sent anywhere. Unix sockets are not filtered (they are the spec's, not a peer's).
    pub fn with_filter(mut self, filter: Option<Arc<AddressFilter>>) -> Connector {
        self.filter = filter;
        self
    }

    /// Connects only to the addresses `family` selects ([`IpFamily::select`]), of a resolved
    /// name or an IP literal, before the allow-list is applied. When the family required has
    /// none the connect fails with reason `dns` (as a name that does not resolve: nothing was
    /// sent anywhere), naming the family.
    pub fn with_ip_family(mut self, family: IpFamily) -> Connector {
        self.family = family;
        self
    }

    /// Binds each socket to the local address `source` (port 0: the system's choice) before
    /// it connects, and connects only to the addresses of its family, after
    /// [`Connector::with_ip_family`] has chosen (Go's dialer with a `LocalAddr`). When none is
    /// left the connect fails with reason `dns` (nothing was sent anywhere), naming the
    /// source; a bind that fails (an address this host does not have) is that address's
    /// connect error, in Go's words (`dial tcp 192.0.2.1:0->127.0.0.1:80: bind: cannot assign
    /// requested address`). An unspecified address (`0.0.0.0`, `::`) binds nothing, as in Go.
    pub fn with_source(mut self, source: Option<IpAddr>) -> Connector {
        self.source = source.map(|ip| ip.to_canonical()).filter(|ip| !ip.is_unspecified());
        self
    }

    /// Whether this connector's sockets go to and come from the driver's pool: only sockets
    /// with no option beyond the reset policy's SO_LINGER 0 (and no bound address), so a
    /// pooled socket fits any connector that asks for one.
    fn poolable(&self) -> bool {
        self.ns.is_none() && self.plain()
    }

    /// Sockets with no option beyond the reset policy's SO_LINGER 0 and no bound address: in
    /// another namespace, they go to and come from the driver's pool of that namespace.
    fn plain(&self) -> bool {
        self.close == ClosePolicy::Reset && !self.nodelay && self.source.is_none()
    }

    /// A connector for addresses that are already known, tried in order (no resolution).
    pub fn to_addrs(addrs: Vec<SocketAddr>, close: ClosePolicy) -> Connector {
        let port = addrs.first().map_or(0, SocketAddr::port);
        Connector { name: None, addrs: Addrs::List(addrs), ..Connector::new("", port, close) }
    }

    /// The host for messages: the name as given, or the IP of an address known from the start
    /// (in its canonical form: `0:0:0:0:0:0:0:1` reads `::1`). No message of an IP literal
    /// reaches this today (a timeout names the address being connected to), but the fallbacks
    /// stay correct if one does.
    fn host(&self) -> Cow<'_, str> {
        match (&self.name, self.addrs.as_slice().first()) {
            (Some(name), _) => Cow::Borrowed(name),
            (None, Some(a)) => Cow::Owned(a.ip().to_string()),
            (None, None) => Cow::Borrowed(""),
        }
    }

    /// Starts resolving or connecting; the socket will use `cx.token(sub)`.
    pub fn start(&mut self, cx: &mut Ctx<'_>, sub: usize) -> ConnectStep {
        self.sub = sub;
        if let Some(socket) = self.unix.take() {
            return self.connect_unix(cx, socket);
        }
        if self.ns.is_some() {
            return self.start_in_netns(cx);
        }
        match &self.name {
            Some(name) if self.addrs.as_slice().is_empty() => {
                self.state = State::Resolving;
                self.resolve_started = Some(cx.now);
                self.lookup = Some(cx.resolve(name, self.port));
                ConnectStep::Pending
            }
            _ => self.begin(cx),
        }
    }

    fn connect_unix(&mut self, cx: &mut Ctx<'_>, socket: Box<UnixSocket>) -> ConnectStep {
        self.state = State::Finished;
        let fail = |op: &str, e: &io::Error| {
            let reason = match e.raw_os_error() {
                Some(libc::ENOENT) => Reason::Refused,
                _ => Reason::from_io(e),
            };
            let message = format!("dial unix {socket}: {op}: {}", os_error_text(e));
            ConnectStep::Failed(ConnectError { reason, message })
        };
        let mut stream = match crate::sys::connect_unix(&socket) {
            Ok(s) => Stream::Unix(s),
            Err(e) => return fail("connect", &e),
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = cx.registry.register(&mut stream, cx.token(self.sub), interest) {
            return fail("cannot watch socket", &e);
        }
        let close = self.close;
        let peer = Peer::Unix((*socket).clone());
        self.unix = Some(socket);
        ConnectStep::Connected(Conn {
            stream,
            peer,
            close,
            reusable: false,
            netns: None,
            kept_token: None,
        })
    }

    /// Starts the race once the addresses are known: the first family now, the other after
    /// [`FALLBACK_DELAY`] (if there is one).
    fn begin(&mut self, cx: &mut Ctx<'_>) -> ConnectStep {
        if let Some(step) = self.apply_family() {
            return step;
        }
        if let Some(step) = self.apply_source() {
            return step;
        }
        if let Some(step) = self.apply_filter() {
            return step;
        }
        let other = self.addrs.as_slice().iter().any(|a| a.is_ipv6() != self.first_is_ipv6());
        self.attempts[1].exhausted = !other;
        if other {
            self.fallback_at = Some(cx.now + FALLBACK_DELAY);
        }
        self.state = State::Connecting;
        self.advance(cx, 0)
    }

    fn first_is_ipv6(&self) -> bool {
        self.addrs.as_slice().first().is_some_and(SocketAddr::is_ipv6)
    }

    /// Whether readiness of `sub` belongs to this connector while it connects.
    pub fn owns(&self, sub: usize) -> bool {
        sub == self.sub || (sub == self.sub + 1 && self.attempts[1].current.is_some())
    }

    /// When the connector needs [`Connector::timer`]: the start of the second family's attempt.
    pub fn wake_at(&self) -> Option<Instant> {
        if self.state == State::Connecting { self.fallback_at } else { None }
    }

    /// Starts the second family's attempt when its time has come.
    pub fn timer(&mut self, cx: &mut Ctx<'_>) -> ConnectStep {
        match self.fallback_at {
            Some(at) if self.state == State::Connecting && cx.now >= at => {
                self.fallback_at = None;
                self.advance(cx, 1)
            }
            _ => ConnectStep::Pending,
        }
    }

    /// The resolver's answer.
    pub fn resolved(
        &mut self,
        cx: &mut Ctx<'_>,
        addrs: io::Result<Vec<SocketAddr>>,
    ) -> ConnectStep {
        if self.state != State::Resolving {
            return ConnectStep::Pending;
        }
        self.lookup = None;
        self.resolve_time = self.resolve_started.map(|t| cx.now.saturating_duration_since(t));
        if let Some(step) = self.netns_answer(cx) {
            return step;
        }
        match addrs {
            Ok(addrs) if !addrs.is_empty() => {
                self.addrs = Addrs::List(addrs);
                self.begin(cx)
            }
            Ok(_) => self.fail_dns("no such host"),
            // The node, not the name, failed: no resolver thread, or getaddrinfo out of
            // descriptors or memory (EAI_SYSTEM with EMFILE, ...).
            Err(e) if Reason::is_local_resource(&e) => {
                self.state = State::Finished;
                ConnectStep::Failed(ConnectError {
                    reason: Reason::Resource,
                    message: format!("dial tcp: lookup {}: {}", self.host(), os_error_text(&e)),
                })
            }
            Err(e) => {
                let text = os_error_text(&e);
                // getaddrinfo's EAI_NONAME reads "failed to lookup address information: Name or
                // service not known"; Go says "no such host". Keep the OS text: it says more.
                self.fail_dns(&text)
            }
        }
    }

    fn fail_dns(&mut self, text: &str) -> ConnectStep {
        self.state = State::Finished;
        ConnectStep::Failed(ConnectError {
            reason: Reason::Dns,
            message: format!("dial tcp: lookup {}: {text}", self.host()),
        })
    }

    /// Readiness on one of the connector's tokens (`sub` or `sub + 1`) while connecting.
    pub fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> ConnectStep {
        if self.state != State::Connecting || !self.owns(sub) {
            return ConnectStep::Pending;
        }
        let which = sub - self.sub;
        let Some((addr, stream)) = self.attempts[which].current.as_mut() else {
            return ConnectStep::Pending;
        };
        if !(ready.writable || ready.error || ready.hup) {
            return ConnectStep::Pending;
        }
        let addr = *addr;
        // Writable without error or hang-up: epoll computed that from the socket's state when
        // it delivered the event (EPOLLERR whenever SO_ERROR is set, EPOLLOUT only once the
        // handshake is done), so the connect has finished and succeeded; no syscall needed.
        let unambiguous = ready.writable && !ready.hup && !ready.error;
        let err = if unambiguous { Ok(None) } else { stream.take_error() };
        let err = match err {
            Ok(Some(e)) | Err(e) => Some(e),
            Ok(None) if unambiguous => None,
            Ok(None) => match stream.peer_addr() {
                Ok(_) => None,
                // Spurious wake-up: not connected yet.
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return ConnectStep::Pending,
                Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {
                    return ConnectStep::Pending;
                }
                Err(e) => Some(e),
            },
        };
        let (_, stream) = self.attempts[which].current.take().expect("checked above");
        // TCP self-connect: with nothing listening on a loopback port inside the ephemeral
        // range, a socket that happens to get that very port as its own connects to itself
        // (simultaneous open) and looks like a success. Go's dialer redials in that case
        // (net/tcpsock_posix.go, selfConnect), so the kubelet never reports it; neither do we.
        if err.is_none()
            && in_ephemeral_range(addr.port())
            && stream.local_addr().is_ok_and(|l| l == addr)
        {
            drop(stream); // not recycled: it is connected to itself
            if self.self_connects < 2 {
                self.self_connects += 1;
                self.attempts[which].next -= 1; // the same address again, with a new ephemeral port
            } else {
                let e = io::Error::from_raw_os_error(libc::ECONNREFUSED);
                self.record_error(which, addr, &e);
            }
            return self.advance(cx, which);
        }
        match err {
            None => self.connected(cx, which, addr, stream),
            Some(e) => {
                drop(stream); // a failed socket is closed, not recycled
                self.record_error(which, addr, &e);
                self.advance(cx, which)
            }
        }
    }

    /// `which` connected: the race is over. The other attempt's socket is closed, and a
    /// connection on the second token moves to the first, where the owner expects it.
    fn connected(
        &mut self,
        cx: &mut Ctx<'_>,
        which: usize,
        addr: SocketAddr,
        mut stream: TcpStream,
    ) -> ConnectStep {
        self.state = State::Finished;
        self.fallback_at = None;
        self.attempts[1 - which].current = None;
        if which == 1 {
            let interest = Interest::READABLE | Interest::WRITABLE;
            if let Err(e) = cx.registry.reregister(&mut stream, cx.token(self.sub), interest) {
                self.record_op_error(which, addr, "cannot watch socket", &e);
                return self.fail();
            }
        }
        let reusable = self.plain();
        let netns = self.ns.as_ref().map(|ns| (ns.netns.clone(), ns.id));
        // A socket of another namespace goes back only under the identity it was made in.
        let (reusable, netns) = match netns {
            None => (reusable, None),
            Some((netns, Some(id))) => (reusable, Some(Box::new((netns, id)))),
            Some((_, None)) => (false, None),
        };
        let stream = Stream::Tcp(stream);
        let peer = Peer::Tcp(addr);
        ConnectStep::Connected(Conn {
            stream,
            peer,
            close: self.close,
            reusable,
            netns,
            kept_token: None,
        })
    }

    fn record_error(&mut self, which: usize, addr: SocketAddr, e: &io::Error) {
        self.record_op_error(which, addr, "connect", e);
    }

    /// Keeps an attempt's first error as the one to report, unless a later one is a local
    /// resource failure: then the run says Unknown rather than blaming the target for what the
    /// node lacked (`connect_next` ends the race at such an error).
    fn record_op_error(&mut self, which: usize, addr: SocketAddr, op: &str, e: &io::Error) {
        let reason = Reason::from_io(e);
        let at = self.source_to(addr);
        let attempt = &mut self.attempts[which];
        if attempt.first_error.is_none() || reason == Reason::Resource {
            attempt.first_error = Some(ConnectError {
                reason,
                message: format!("dial tcp {at}: {op}: {}", os_error_text(e)),
            });
        }
    }

    /// The operand of `dial tcp` in a message: `to`, or `source:0->to` with a source address,
    /// as Go's `net.OpError` prints a dial with a local address.
    fn source_to(&self, to: impl std::fmt::Display) -> String {
        match self.source {
            Some(ip) => format!("{}->{to}", SocketAddr::new(ip, 0)),
            None => to.to_string(),
        }
    }

    /// Goes on with attempt `which` (0: the first family, 1: the other): its next address, or,
    /// when it has none left, the end of the race if the other attempt is over too. The first
    /// family failing before the delay starts the other at once, as Go does.
    fn advance(&mut self, cx: &mut Ctx<'_>, which: usize) -> ConnectStep {
        if let Some(step) = self.connect_next(cx, which) {
            return step;
        }
        self.attempts[which].exhausted = true;
        if which == 0 && self.fallback_at.take().is_some() {
            return self.advance(cx, 1);
        }
        let other = &self.attempts[1 - which];
        if other.exhausted || (which == 1 && other.current.is_none()) {
            return self.fail();
        }
        ConnectStep::Pending // the other attempt goes on
    }

    /// Every attempt failed: the first family's first error, as Go reports it.
    fn fail(&mut self) -> ConnectStep {
        self.state = State::Finished;
        self.fallback_at = None;
        let [a, b] = &mut self.attempts;
        a.current = None;
        b.current = None;
        // A local resource failure of either attempt wins: the node lacked something.
        let resource =
            |e: &Option<ConnectError>| e.as_ref().is_some_and(|e| e.reason == Reason::Resource);
        let error = if resource(&b.first_error) && !resource(&a.first_error) {
            b.first_error.take()
        } else {
            a.first_error.take().or_else(|| b.first_error.take())
        };
        ConnectStep::Failed(error.unwrap_or_else(|| ConnectError {
            reason: Reason::Unreachable,
            message: format!("dial tcp {}:{}: no address to connect to", self.host(), self.port),
        }))
    }

    /// Opens a socket to attempt `which`'s next address of its family; `None` when it has no
    /// address left (errors on the way are recorded).
    fn connect_next(&mut self, cx: &mut Ctx<'_>, which: usize) -> Option<ConnectStep> {
        let ipv6 = self.first_is_ipv6() != (which == 1);
        loop {
            let next = self.attempts[which].next;
            let (i, &addr) = self
                .addrs
                .as_slice()
                .iter()
                .enumerate()
                .skip(next)
                .find(|(_, a)| a.is_ipv6() == ipv6)?;
            self.attempts[which].next = i + 1;
            let pooled =
                if self.poolable() { cx.pool().and_then(|p| p.take(addr.is_ipv6())) } else { None };
            let opened = match (pooled, &mut self.ns) {
                (Some(stream), _) => {
                    reconnect(stream, addr).map(|s| (s, true)).map_err(|e| ("connect", e))
                }
                (None, Some(ns)) if ns.kept.is_some() => {
                    let kept = ns.kept.take().expect("checked in the guard");
                    reconnect(kept, addr).map(|s| (s, true)).map_err(|e| ("connect", e))
                }
                (None, Some(ns)) => match ns.sockets.get_mut(i).and_then(Option::take) {
                    Some(fd) => arm(Socket::from(fd), addr, self.close, self.nodelay, self.source),
                    // Used already: a redial of the same address after a self-connect. The
                    // pool made one socket per address, so there is none for it: refused, as Go
                    // reports a self-connect it gave up on.
                    None => Err(("connect", io::Error::from_raw_os_error(libc::ECONNREFUSED))),
                }
                .map(|s| (s, false)),
                (None, None) => {
                    open(addr, self.close, self.nodelay, self.source).map(|s| (s, false))
                }
            };
            match opened {
                Ok((mut stream, reused)) => {
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    let token = cx.token(self.sub + which);
                    // A pooled socket is still registered under the token of its last run.
                    let registered = if reused {
                        cx.registry.reregister(&mut stream, token, interest)
                    } else {
                        cx.registry.register(&mut stream, token, interest)
                    };
                    if let Err(e) = registered {
                        self.record_op_error(which, addr, "cannot watch socket", &e);
                        // The other addresses would run out of the same thing.
                        if Reason::is_local_resource(&e) {
                            return Some(self.fail());
                        }
                        continue;
                    }
                    self.attempts[which].current = Some((addr, stream));
                    return Some(ConnectStep::Pending);
                }
                Err((op, e)) => {
                    self.record_op_error(which, addr, op, &e);
                    // The other addresses would run out of the same thing.
                    if Reason::is_local_resource(&e) {
                        return Some(self.fail());
                    }
                }
            }
        }
    }

    /// How long name resolution took (None for IP literals or when it has not finished).
    pub fn resolve_time(&self) -> Option<Duration> {
        self.resolve_time
    }

    /// Go-style text for a connect that ran into the owner's deadline.
    /// (The first family's address when both attempts are connecting, as Go reports it.)
    pub fn describe_timeout(&self) -> String {
        if let Some(socket) = &self.unix {
            return format!("dial unix {socket}: i/o timeout");
        }
        let current = self.attempts.iter().find_map(|a| a.current.as_ref());
        if let (Some(ns), State::Resolving, None) = (&self.ns, &self.state, &self.name) {
            let at = join_host_port(&self.host(), self.port);
            return format!(
                "dial tcp {at}: i/o timeout (making the socket in network namespace {:?})",
                ns.netns.path()
            );
        }
        match (&self.state, current) {
            (State::Resolving, _) | (State::Idle, _) => {
                format!("dial tcp: lookup {}: i/o timeout", self.host())
            }
            (_, Some((addr, _))) => format!("dial tcp {}: i/o timeout", self.source_to(addr)),
            _ => {
                let at = join_host_port(&self.host(), self.port);
                format!("dial tcp {}: i/o timeout", self.source_to(at))
            }
        }
    }

    /// Drops any half-open socket. A late resolver answer is ignored by the owner.
    pub fn cancel(&mut self, cx: &mut Ctx<'_>) {
        let _ = cx; // kept in the signature: every machine's cancel gets the driver's context
        self.lookup = None;
        // A half-open socket is closed, not recycled: the pool only takes sockets whose
        // connection completed, so it never has to reason about a connect still in flight.
        for a in &mut self.attempts {
            a.current = None;
        }
        self.fallback_at = None;
        self.state = State::Finished;
    }
}

fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
}
