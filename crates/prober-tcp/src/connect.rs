//! Resolve and connect without blocking: the first half of every TCP and HTTP probe.
//!
//! The recipe is mio's: a nonblocking `connect`, registration for writability, then
//! `take_error` (`SO_ERROR`) and `peer_addr` (`getpeername`) to tell a finished connect from a
//! spurious wake-up. Drivers never hand one run's token to another run (the engine puts slot
//! generations in its tokens), and epoll computes an event from the socket's state when it
//! delivers it, so a writable event without error or hang-up is a finished, successful connect
//! and costs no syscall; only other events go through `SO_ERROR` and `getpeername`.
//! Each resolved address is tried in turn within the owner's one deadline; the first error is
//! reported when all fail, as Go's dialer does. Messages use Go's wording so that users who know
//! the kubelet's events recognise them (`dial tcp 127.0.0.1:1: connect: connection refused`).
//!
//! With a [`SocketPool`](prober_io::SocketPool) lent by the driver, a connection with the reset
//! close policy ends with `connect(AF_UNSPEC)` instead of `close`: the same RST on the wire, the
//! local port released, and the socket kept for the next connection (no `socket`, `setsockopt`
//! or `epoll_ctl(ADD)`, no socket freed and made again; figures in the pool's documentation).

use std::borrow::Cow;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::Interest;
use prober_core::{ClosePolicy, Reason};
use prober_io::{Ctx, Ready, os_error_text};
use socket2::{Domain, Protocol, Socket, Type};

/// What the connector says after each call.
#[derive(Debug)]
pub enum ConnectStep {
    Pending,
    Connected(Conn),
    Failed(ConnectError),
}

/// Why no connection could be made, in words and as a reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectError {
    pub reason: Reason,
    pub message: String,
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
    next: usize,
    current: Option<(SocketAddr, TcpStream)>,
    first_error: Option<ConnectError>,
    resolve_started: Option<Instant>,
    resolve_time: Option<Duration>,
    /// Redials after a self-connect (see `ready`).
    self_connects: u8,
    /// The lookup in flight; dropping it abandons the lookup.
    lookup: Option<prober_io::Lookup>,
    /// Set TCP_NODELAY on the socket (see [`Connector::with_nodelay`]).
    nodelay: bool,
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
            next: 0,
            current: None,
            first_error: None,
            resolve_started: None,
            resolve_time: None,
            self_connects: 0,
            lookup: None,
            nodelay: false,
        }
    }

    /// Disables Nagle's algorithm on the connection: for protocols that make several small
    /// writes in a row (HTTP/2). A probe that sends one request in one write (HTTP/1.1) or
    /// nothing (TCP) does not need it, and saves the setsockopt.
    pub fn with_nodelay(mut self, nodelay: bool) -> Connector {
        self.nodelay = nodelay;
        self
    }

    /// Whether this connector's sockets go to and come from the driver's pool: only sockets
    /// with no option beyond the reset policy's SO_LINGER 0, so a pooled socket fits any
    /// connector that asks for one.
    fn poolable(&self) -> bool {
        self.close == ClosePolicy::Reset && !self.nodelay
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
        match &self.name {
            Some(name) if self.addrs.as_slice().is_empty() => {
                self.state = State::Resolving;
                self.resolve_started = Some(cx.now);
                self.lookup = Some(cx.resolve(name, self.port));
                ConnectStep::Pending
            }
            _ => self.connect_next(cx),
        }
    }

    /// The resolver's answer.
    pub fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> ConnectStep {
        if self.state != State::Resolving {
            return ConnectStep::Pending;
        }
        self.lookup = None;
        self.resolve_time = self.resolve_started.map(|t| cx.now.saturating_duration_since(t));
        match addrs {
            Ok(addrs) if !addrs.is_empty() => {
                self.addrs = Addrs::List(addrs);
                self.connect_next(cx)
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

    /// Readiness on the connector's token while connecting.
    pub fn ready(&mut self, cx: &mut Ctx<'_>, ready: Ready) -> ConnectStep {
        if self.state != State::Connecting {
            return ConnectStep::Pending;
        }
        let Some((addr, stream)) = self.current.as_mut() else {
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
        let (_, stream) = self.current.take().expect("checked above");
        // TCP self-connect: with nothing listening on a loopback port inside the ephemeral
        // range, a socket that happens to get that very port as its own connects to itself
        // (simultaneous open) and looks like a success. Go's dialer redials in that case
        // (net/tcpsock_posix.go, selfConnect), so the kubelet never reports it; neither do we.
        if err.is_none() && in_ephemeral_range(addr.port()) && stream.local_addr().is_ok_and(|l| l == addr) {
            drop(stream); // not recycled: it is connected to itself
            if self.self_connects < 2 {
                self.self_connects += 1;
                self.next -= 1; // the same address again, with a new ephemeral port
            } else {
                let e = io::Error::from_raw_os_error(libc::ECONNREFUSED);
                self.record_error(addr, &e);
            }
            return self.connect_next(cx);
        }
        match err {
            None => {
                self.state = State::Finished;
                let reusable = self.poolable();
                ConnectStep::Connected(Conn { stream, peer: addr, close: self.close, reusable })
            }
            Some(e) => {
                drop(stream); // a failed socket is closed, not recycled
                self.record_error(addr, &e);
                self.connect_next(cx)
            }
        }
    }

    fn record_error(&mut self, addr: SocketAddr, e: &io::Error) {
        self.record_op_error(addr, "connect", e);
    }

    /// Keeps the first error as the one to report, unless a later one is a local resource
    /// failure: then the run says Unknown rather than blaming the target for what the node
    /// lacked (`connect_next` stops at such an error anyway).
    fn record_op_error(&mut self, addr: SocketAddr, op: &str, e: &io::Error) {
        let reason = Reason::from_io(e);
        if self.first_error.is_none() || reason == Reason::Resource {
            self.first_error = Some(ConnectError {
                reason,
                message: format!("dial tcp {addr}: {op}: {}", os_error_text(e)),
            });
        }
    }

    fn connect_next(&mut self, cx: &mut Ctx<'_>) -> ConnectStep {
        while let Some(&addr) = self.addrs.as_slice().get(self.next) {
            self.next += 1;
            let pooled = if self.poolable() {
                cx.pool().and_then(|p| p.take(addr.is_ipv6()))
            } else {
                None
            };
            let opened = match pooled {
                Some(stream) => reconnect(stream, addr).map(|s| (s, true)).map_err(|e| ("connect", e)),
                None => open(addr, self.close, self.nodelay).map(|s| (s, false)),
            };
            match opened {
                Ok((mut stream, reused)) => {
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    let token = cx.token(self.sub);
                    // A pooled socket is still registered under the token of its last run.
                    let registered = if reused {
                        cx.registry.reregister(&mut stream, token, interest)
                    } else {
                        cx.registry.register(&mut stream, token, interest)
                    };
                    if let Err(e) = registered {
                        self.record_op_error(addr, "cannot watch socket", &e);
                        if Reason::is_local_resource(&e) {
                            break;
                        }
                        continue;
                    }
                    self.current = Some((addr, stream));
                    self.state = State::Connecting;
                    return ConnectStep::Pending;
                }
                Err((op, e)) => {
                    self.record_op_error(addr, op, &e);
                    // The next address would run out of the same thing.
                    if Reason::is_local_resource(&e) {
                        break;
                    }
                }
            }
        }
        self.state = State::Finished;
        ConnectStep::Failed(self.first_error.clone().unwrap_or_else(|| ConnectError {
            reason: Reason::Unreachable,
            message: format!("dial tcp {}:{}: no address to connect to", self.host(), self.port),
        }))
    }

    /// How long name resolution took (None for IP literals or when it has not finished).
    pub fn resolve_time(&self) -> Option<Duration> {
        self.resolve_time
    }

    /// Go-style text for a connect that ran into the owner's deadline.
    pub fn describe_timeout(&self) -> String {
        match (&self.state, &self.current) {
            (State::Resolving, _) | (State::Idle, _) => {
                format!("dial tcp: lookup {}: i/o timeout", self.host())
            }
            (_, Some((addr, _))) => format!("dial tcp {addr}: i/o timeout"),
            _ => format!("dial tcp {}: i/o timeout", join_host_port(&self.host(), self.port)),
        }
    }

    /// Drops any half-open socket. A late resolver answer is ignored by the owner.
    pub fn cancel(&mut self, cx: &mut Ctx<'_>) {
        let _ = cx; // kept in the signature: every machine's cancel gets the driver's context
        self.lookup = None;
        // A half-open socket is closed, not recycled: the pool only takes sockets whose
        // connection completed, so it never has to reason about a connect still in flight.
        self.current = None;
        self.state = State::Finished;
    }
}

/// Whether `port` is one the kernel may hand out as a local ephemeral port: only then can a
/// connect to it end up connected to itself. Read once from /proc; the usual default when
/// that fails.
fn in_ephemeral_range(port: u16) -> bool {
    static RANGE: std::sync::OnceLock<(u16, u16)> = std::sync::OnceLock::new();
    let (low, high) = *RANGE.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .ok()
            .and_then(|s| {
                let mut it = s.split_whitespace().map(|p| p.parse::<u16>().ok());
                Some((it.next()??, it.next()??))
            })
            .unwrap_or((32768, 60999))
    });
    (low..=high).contains(&port)
}

fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
}

/// A new nonblocking, close-on-exec socket with its close policy applied, connecting to `addr`.
/// An error comes with the step that failed, for the message ("cannot create socket: too many
/// open files").
fn open(addr: SocketAddr, close: ClosePolicy, nodelay: bool) -> Result<TcpStream, (&'static str, io::Error)> {
    // socket2 creates sockets with SOCK_CLOEXEC; `nonblocking()` adds SOCK_NONBLOCK atomically.
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM.nonblocking(), Some(Protocol::TCP))
        .map_err(|e| ("cannot create socket", e))?;
    if close == ClosePolicy::Reset {
        // SO_LINGER {on, 0}: close() sends RST and frees the port at once, leaving no TIME_WAIT.
        socket.set_linger(Some(Duration::ZERO)).map_err(|e| ("setsockopt", e))?;
    }
    if nodelay {
        socket.set_tcp_nodelay(true).map_err(|e| ("setsockopt", e))?;
    }
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(("connect", e)),
    }
    Ok(TcpStream::from_std(socket.into()))
}

/// Starts connecting a socket taken from the pool (disconnected, SO_LINGER 0 already set).
fn reconnect(stream: TcpStream, addr: SocketAddr) -> io::Result<TcpStream> {
    match socket2::SockRef::from(&stream).connect(&addr.into()) {
        Ok(()) => Ok(stream),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(stream),
        Err(e) => Err(e),
    }
}

/// Ends the connection on `stream` the way `close` with SO_LINGER 0 would (RST to the peer,
/// queues purged, local port released) but keeps the socket for another `connect`:
/// `connect(AF_UNSPEC)` is `tcp_disconnect` in Linux.
fn disconnect(stream: &TcpStream) -> io::Result<()> {
    let addr = libc::sockaddr { sa_family: libc::AF_UNSPEC as libc::sa_family_t, sa_data: [0; 14] };
    let len = std::mem::size_of::<libc::sockaddr>() as libc::socklen_t;
    // SAFETY: the descriptor is open for the whole call (borrowed from `stream`), and `addr` is a
    // valid, initialised sockaddr of `len` bytes that the kernel only reads.
    let rc = unsafe { libc::connect(stream.as_raw_fd(), &addr, len) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// An established connection, still registered on the connector's token with
/// READABLE | WRITABLE interest.
#[derive(Debug)]
pub struct Conn {
    stream: TcpStream,
    peer: SocketAddr,
    close: ClosePolicy,
    /// Can go back to the driver's socket pool when closed: reset close policy, no options
    /// beyond SO_LINGER 0.
    reusable: bool,
}

impl Conn {
    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    pub fn close_policy(&self) -> ClosePolicy {
        self.close
    }

    /// Ends the connection: with RST under [`ClosePolicy::Reset`] (set when the socket was
    /// made), with FIN otherwise. Under the reset policy, when the driver lends a socket pool
    /// with room, the socket is disconnected (the same RST) and kept for the next connection;
    /// otherwise it is closed. No `epoll_ctl(DEL)` before a close: the descriptor is never
    /// duplicated, so closing it removes it from the poll by itself (one syscall less per
    /// probe, measured by ci/bench.sh).
    pub fn close(self, cx: &mut Ctx<'_>) {
        let ipv6 = self.peer.is_ipv6();
        if self.reusable {
            if let Some(pool) = cx.pool().filter(|p| p.has_room(ipv6)) {
                if disconnect(&self.stream).is_ok() {
                    pool.put(self.stream, ipv6);
                    return;
                }
            }
        }
        drop(self.stream);
    }
}
