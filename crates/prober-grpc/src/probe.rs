//! The I/O adapter: [`GrpcProbe`] drives the sans-I/O HTTP/2 client ([`crate::h2`]) and the
//! health protocol ([`crate::health`]) over a mio socket, plain or TLS.
//!
//! [`Dial`] (resolve, connect, TLS handshake when the spec asks for TLS) -> preface and
//! SETTINGS -> the server's SETTINGS (the connection is established) -> HEADERS + DATA ->
//! response head, message, trailers -> close with the spec's close policy (RST by default).
//! One deadline, set at `start`, covers it all, as the kubelet's one context does.
//!
//! With keep-alive ([`prober_core::GrpcSpec::keep_alive`]) the connection and its HTTP/2
//! client go back to the engine's store ([`prober_transport::keep`]) after a check that left
//! the connection usable, and a later run of the same origin opens its stream on them: the
//! run reads what the server sent meanwhile first (PING, SETTINGS, GOAWAY, EOF), and dials
//! again when the connection has ended; a request that the server refused unprocessed
//! (GOAWAY, REFUSED_STREAM), or a connection that ended before any response byte, is sent
//! again once on a fresh connection within the same deadline. A run that times out drops its
//! connection.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prober_core::{
    ClosePolicy, DEFAULT_USER_AGENT, GrpcSpec, Outcome, Reason, TlsOptions, UnixSocket,
};
use prober_io::{Answer, Ctx, Machine, Ready, Step};
use prober_transport::dial::{Dial, DialError, DialEvent, DialStep, Endpoint};
use prober_transport::{ALPN_H2, Transport, TransportError};

use crate::h2::{self, Budget, H2Error, StreamId, Turn};
use crate::health::{self, RpcError, code};
use crate::request::{RequestParts, Session};

/// Bytes asked for in one `read`, once a read has filled [`FIRST_READ`].
const READ_CHUNK: usize = 16 * 1024;

/// One `read` of at most [`READ_CHUNK`] bytes from `io`, handed to `h2` (which buffers what it
/// has not handled yet).
///
/// The read goes into one buffer per thread, zeroed once, as the HTTP probe's reads: a buffer
/// of the probe's own, zero-filled to 16 KiB before its first read (safe Rust cannot hand
/// uninitialised memory to `Read`), was 31 % of a one-shot gRPC probe's user-space
/// instructions and most of the gap to the raw C loop (docs/benchmarks.md, "Raw limits").
fn read_into(io: &mut Transport, h2: &mut h2::Client) -> Result<usize, TransportError> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Box<[u8]>> =
            std::cell::RefCell::new(vec![0; READ_CHUNK].into_boxed_slice());
    }
    SCRATCH.with_borrow_mut(|scratch| {
        let r = io.read(scratch);
        if let Ok(n) = r {
            h2.push(&scratch[..n]);
        }
        r
    })
}
/// Reads per call before the machine yields to the poll loop (256 KiB): a server that never
/// stops sending (frames that are ignored, PINGs) must not hold the engine thread, nor keep
/// this probe past its deadline.
const READS_PER_TURN: usize = 16;
/// Answers queued for a server that does not read them (SETTINGS and PING ACKs): beyond this,
/// nothing more is read until some of it is written, so memory does not grow with what the
/// server sends. A server that neither reads nor stops sending meets the deadline.
const MAX_PENDING_OUTPUT: usize = 64 * 1024;

/// Answers queued when a check ends (the ACK of the PING grpc-go sends with every response,
/// for its bandwidth estimate; a SETTINGS ACK; a connection WINDOW_UPDATE) that a kept
/// connection may hold until the next check, which writes them with its request in one
/// `write`, as the raw C loop does (bench/raw_grpc.c): a `sendto` per check less. Nothing on
/// the server waits for them (grpc-go's estimate just waits for its ACK; its keep-alive PINGs
/// come after hours idle, past the store's idle limit). More than this is written at once.
const DEFERRED_ANSWERS: usize = 128;

#[derive(Debug)]
enum State {
    Idle,
    /// The probe's [`Dial`] is connecting.
    Dialing,
    Open {
        io: Transport,
        h2: Box<Session>,
        /// Our stream on `h2`.
        stream: StreamId,
    },
    Done,
}

/// What every run of one gRPC spec shares, made once from it ([`GrpcPlan::new`]): a periodic
/// probe's runs, and one-shot checks of an equal spec (the engine keeps the plans of the last
/// few), then build no strings per run.
#[derive(Debug)]
pub struct GrpcPlan {
    /// The spec it was made of.
    spec: GrpcSpec,
    target: Target,
    /// `host:port` as Go's `net.JoinHostPort` writes it, or the Unix socket in gRPC's naming
    /// (`unix:///run/app.sock`), for messages.
    addr: String,
    /// What the request is made from. `:authority`: the spec's, else the TLS server name, else
    /// `host:port`, or the host alone through a Unix socket (grpc-go sends `localhost` for
    /// `unix:` targets); `user-agent`: the spec's or [`DEFAULT_USER_AGENT`].
    request: RequestParts,
}

/// A gRPC health probe as a [`Machine`] (see the crate docs for the semantics).
#[derive(Debug)]
pub struct GrpcProbe {
    plan: Arc<GrpcPlan>,
    dial: Dial,
    timeout: Duration,
    started: Option<Instant>,
    deadline: Option<Instant>,
    state: State,
    first_byte: Option<Duration>,
    http_status: Option<u16>,
    /// A [`Step::Yield`] was returned and its [`Machine::resume`] has not come yet. Readiness
    /// meanwhile is left to that resume: answering it with work (and another `Yield`) would
    /// queue this run for resumption once more per readiness event, and a peer that keeps the
    /// socket readable would multiply the work this run does per turn.
    resume_owed: bool,
}

impl GrpcPlan {
    /// The plan of `spec` (validated).
    pub fn new(spec: &GrpcSpec) -> GrpcPlan {
        let host_port = if spec.host.is_empty() {
            // The kubelet's `":PORT"`; grpc-go sends `localhost:PORT` as its authority.
            format!(":{}", spec.port)
        } else if spec.host.contains(':') {
            format!("[{}]:{}", spec.host, spec.port)
        } else {
            format!("{}:{}", spec.host, spec.port)
        };
        let (addr, default_authority) = match &spec.connect.unix_socket {
            Some(socket) => (grpc_target(socket), spec.host.clone()),
            None => (host_port.clone(), host_port),
        };
        // grpc-go: an explicit authority (`WithAuthority`), else the TLS server name when one
        // is set (grpc-health-probe's `-tls-server-name`), else the target's.
        let tls_name = spec.connect.tls.as_ref().and_then(|t| t.server_name.clone());
        let default_authority = if default_authority.starts_with(':') {
            format!("localhost{default_authority}")
        } else {
            default_authority
        };
        let authority = spec.authority.clone().or(tls_name).unwrap_or(default_authority);
        GrpcPlan {
            spec: spec.clone(),
            request: RequestParts {
                tls: spec.connect.tls.is_some(),
                authority,
                user_agent: spec
                    .user_agent
                    .clone()
                    .unwrap_or_else(|| DEFAULT_USER_AGENT.to_string()),
                metadata: spec.metadata.clone(),
                service: spec.service.clone(),
            },
            target: Target {
                host: if spec.host.is_empty() && spec.connect.unix_socket.is_none() {
                    unspecified_host(spec.connect.ip_family, spec.connect.source_address)
                        .to_string()
                } else {
                    spec.host.clone()
                },
                port: spec.port,
                close: spec.connect.close,
                tls: spec.connect.tls.clone(),
                tls_sessions: None,
                unix: spec.connect.unix_socket.clone(),
                filter: spec.connect.address_filter.clone(),
                keep_alive: spec.connect.keep_alive,
                netns: spec.connect.netns.clone(),
                ip_family: spec.connect.ip_family,
                source: spec.connect.source_address,
            },
            addr,
        }
    }

    /// The spec the plan was made of.
    pub fn spec(&self) -> &GrpcSpec {
        &self.spec
    }

    /// Runs of the plan resume TLS sessions from `sessions`, the target's, and keep there what
    /// the server gives (see [`prober_transport::TlsSessions`]); `None`: full handshakes.
    pub fn with_tls_sessions(
        mut self,
        sessions: Option<std::sync::Arc<prober_transport::TlsSessions>>,
    ) -> GrpcPlan {
        self.target.tls_sessions = sessions;
        self
    }
}

impl GrpcProbe {
    /// A probe of `spec` that must finish within `timeout`.
    pub fn new(spec: &GrpcSpec, timeout: Duration) -> GrpcProbe {
        GrpcProbe::with_plan(Arc::new(GrpcPlan::new(spec)), timeout)
    }

    /// A run of `plan` that must finish within `timeout`.
    pub fn with_plan(plan: Arc<GrpcPlan>, timeout: Duration) -> GrpcProbe {
        GrpcProbe {
            plan,
            dial: Dial::new(),
            timeout,
            started: None,
            deadline: None,
            state: State::Idle,
            first_byte: None,
            http_status: None,
            resume_owed: false,
        }
    }

    /// Time from the start of the run to `now`. Phases are stamped with the clock read where
    /// they end (`Instant::now()`), not the driver's reading for the call: one call can carry a
    /// run through several phases.
    fn since_start(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.started.unwrap_or(now))
    }

    /// A machine call while dialing goes to the dial; in any other state it is not the dial's
    /// (a late answer of an abandoned lookup or job, a stale timer): nothing to do.
    fn dial_event(&mut self, cx: &mut Ctx<'_>, event: DialEvent) -> Step {
        if !matches!(self.state, State::Dialing) {
            return Step::Pending;
        }
        let step = self.dial.on(cx, event, &self.plan.target.endpoint());
        self.on_dial(cx, step)
    }

    fn on_dial(&mut self, cx: &mut Ctx<'_>, step: DialStep) -> Step {
        match step {
            DialStep::Pending => {
                self.state = State::Dialing;
                Step::Pending
            }
            DialStep::Connected(io) => {
                let kept = self.dial.take_session().and_then(|s| s.downcast::<Session>().ok());
                match kept {
                    Some(h2) => self.reuse(cx, io, h2),
                    None => {
                        self.open(cx, io, Box::new(Session::new()));
                        self.drive(cx)
                    }
                }
            }
            DialStep::Failed(e) => {
                let o = match e {
                    DialError::TlsNotBuiltIn => Outcome::unknown(
                        Reason::Unsupported,
                        format!(
                            "TLS not built in: cannot probe gRPC over TLS at {}",
                            self.plan.addr
                        ),
                    ),
                    DialError::Setup { reason, message } => Outcome::unknown(reason, message),
                    DialError::Connect { reason, detail } => {
                        health::connect_failure(&self.plan.addr, reason, &detail)
                    }
                };
                self.finish(o)
            }
        }
    }

    /// A kept connection and its HTTP/2 client: the stream opens and its request goes out at
    /// once. What the server sent while the connection was idle is read with the response: a
    /// GOAWAY there leaves the stream unprocessed, and an EOF or a reset comes before any
    /// response byte; both send the request again on a fresh connection ([`GrpcProbe::ended`],
    /// [`GrpcProbe::may_retry`]). No read is tried before the response can have come: the
    /// connection was registered again for this run (`epoll_ctl` reports data that is already
    /// there), so its readiness says when to read, and a reused check costs a write and a read.
    fn reuse(&mut self, cx: &mut Ctx<'_>, io: Transport, h2: Box<Session>) -> Step {
        if !h2.can_open() {
            io.close(cx);
            let step = self.dial.retry(cx, &self.plan.target.endpoint());
            return self.on_dial(cx, step);
        }
        self.open(cx, io, h2);
        match std::mem::replace(&mut self.state, State::Done) {
            State::Open { io, h2, stream } => self.exchange(cx, io, h2, stream, true),
            other => {
                self.state = other;
                Step::Pending
            }
        }
    }

    /// The transport is ready: open the health check's stream on `h2`.
    fn open(&mut self, cx: &Ctx<'_>, io: Transport, mut h2: Box<Session>) {
        // Rounded up, so that the server's deadline is not before ours. On a kept connection
        // the check starts with it, so the time left is the whole timeout, check after check,
        // and the request encoded for the last check is sent again (see `request`).
        let left = self.deadline.map_or(self.timeout, |d| d.saturating_duration_since(cx.now));
        let ms = left.as_micros().div_ceil(1000).max(1);
        let request = h2.request(&self.plan.request, ms);
        // A kept client is idle (checked before it was kept and by `reuse`), a new one has
        // no stream: the stream opens.
        let stream = h2.open_encoded(request).unwrap_or(1);
        self.state = State::Open { io, h2, stream };
    }

    /// Runs the connection's I/O until it would block or the run ends.
    fn drive(&mut self, cx: &mut Ctx<'_>) -> Step {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Open { io, h2, stream } => self.exchange(cx, io, h2, stream, false),
            other => {
                self.state = other;
                Step::Pending
            }
        }
    }

    fn exchange(
        &mut self,
        cx: &mut Ctx<'_>,
        mut io: Transport,
        mut h2: Box<Session>,
        stream: StreamId,
        // The request was just queued on a connection whose readiness will say when the
        // answer is there: write, then wait without trying a read (see `reuse`).
        mut wait_after_write: bool,
    ) -> Step {
        let mut reads = 0;
        let mut budget = Budget::PER_TURN;
        loop {
            // What is buffered first, within this turn's budget, so that a flood of small
            // frames costs the poll thread a bounded time per turn; and nothing more is read
            // until it is handled, so that the buffer stays within one read and one frame.
            let progress = h2.process(&mut budget);
            if self.first_byte.is_none() && h2.has_response_head(stream) {
                self.first_byte = Some(self.since_start(Instant::now()));
            }
            let spent = match progress {
                Ok(Turn::Pending) => false,
                Ok(Turn::Budget) => true,
                Ok(Turn::Ended(id)) if id == stream => return self.ended(cx, io, h2, stream),
                // Not ours (none other is opened): forgotten.
                Ok(Turn::Ended(id)) => {
                    h2.finish(id);
                    false
                }
                Err(e) => return self.h2_failure(cx, io, h2.is_connected(), &e),
            };
            while !h2.pending_output().is_empty() {
                match io.write(h2.pending_output()) {
                    Ok(0) => {
                        let error = io::Error::from(io::ErrorKind::WriteZero);
                        let e = TransportError::Io { op: "write", error };
                        return self.transport_failure(cx, io, h2.is_connected(), &e);
                    }
                    Ok(n) => h2.consume_output(n),
                    Err(TransportError::WouldBlock) => break,
                    // A kept connection the server had reset or closed: a fresh one.
                    Err(_) if self.may_retry(&h2, stream) => return self.retry(cx, io),
                    Err(e) => return self.transport_failure(cx, io, h2.is_connected(), &e),
                }
            }
            if h2.pending_output().len() > MAX_PENDING_OUTPUT {
                // Wait until the server reads (writable), or the deadline.
                io.sync_interest(cx.registry);
                self.state = State::Open { io, h2, stream };
                return Step::Pending;
            }
            if spent {
                // Let other work have its turn; the driver resumes right after its poll.
                self.state = State::Open { io, h2, stream };
                return self.yield_turn();
            }
            if wait_after_write && h2.pending_output().is_empty() {
                io.sync_interest(cx.registry);
                self.state = State::Open { io, h2, stream };
                return Step::Pending;
            }
            wait_after_write = false;
            if reads == READS_PER_TURN {
                // Let other work have its turn; the driver resumes reading right after.
                self.state = State::Open { io, h2, stream };
                return self.yield_turn();
            }
            reads += 1;
            match read_into(&mut io, &mut h2) {
                Ok(0) => {
                    if self.may_retry(&h2, stream) {
                        return self.retry(cx, io);
                    }
                    let e = h2.eof();
                    return self.h2_failure(cx, io, h2.is_connected(), &e);
                }
                Ok(_) => {}
                Err(TransportError::WouldBlock) => {
                    io.sync_interest(cx.registry);
                    self.state = State::Open { io, h2, stream };
                    return Step::Pending;
                }
                Err(e) if self.may_retry(&h2, stream) => {
                    let _ = e;
                    return self.retry(cx, io);
                }
                Err(e) => return self.transport_failure(cx, io, h2.is_connected(), &e),
            }
        }
    }

    /// Whether a failure of the connection may be retried on a fresh one: it was a kept
    /// connection and nothing of our stream's response came (the server closed it just as it
    /// was reused, as [`prober_transport::dial::Dial::retry`] says for HTTP).
    fn may_retry(&self, h2: &h2::Client, stream: StreamId) -> bool {
        self.dial.reused() && !h2.has_response_head(stream)
    }

    /// Closes the kept connection that failed and dials a fresh one, within the deadline.
    fn retry(&mut self, cx: &mut Ctx<'_>, io: Transport) -> Step {
        io.close(cx);
        let step = self.dial.retry(cx, &self.plan.target.endpoint());
        self.on_dial(cx, step)
    }

    /// Our stream has ended: the verdict; the connection is kept for a later run when the
    /// spec asks for it and it is still usable, else closed.
    fn ended(
        &mut self,
        cx: &mut Ctx<'_>,
        io: Transport,
        mut h2: Box<Session>,
        stream: StreamId,
    ) -> Step {
        let result = h2.finish(stream).unwrap_or_else(|| Err(h2.eof()));
        let response = match result {
            Ok(response) => response,
            Err(e) if e.unprocessed(stream) && self.dial.reused() => return self.retry(cx, io),
            Err(e) => {
                let o = self.rpc_failure(cx.now, &e);
                self.release(cx, io, h2);
                return self.finish(o);
            }
        };
        self.http_status = response.status();
        let o = health::outcome(health::interpret(&response), self.timeout);
        self.release(cx, io, h2);
        self.finish(o)
    }

    /// Ends this run's use of the connection: into the engine's store with its client when
    /// the spec keeps connections, the client is idle and what it queued could be written (up
    /// to [`DEFERRED_ANSWERS`] bytes of it may wait for the next check); else closed.
    fn release(&mut self, cx: &mut Ctx<'_>, mut io: Transport, mut h2: Box<Session>) {
        if !self.plan.target.keep_alive || !h2.is_idle() {
            io.close(cx);
            return;
        }
        if h2.pending_output().len() <= DEFERRED_ANSWERS {
            self.dial.keep_session(cx, io, &self.plan.target.endpoint(), h2);
            return;
        }
        while !h2.pending_output().is_empty() {
            match io.write(h2.pending_output()) {
                Ok(n) if n > 0 => h2.consume_output(n),
                _ => {
                    io.close(cx);
                    return;
                }
            }
        }
        self.dial.keep_session(cx, io, &self.plan.target.endpoint(), h2);
    }

    /// Returns [`Step::Yield`], remembering that a [`Machine::resume`] is owed.
    fn yield_turn(&mut self) -> Step {
        self.resume_owed = true;
        Step::Yield
    }

    /// A socket or TLS error: before the server's SETTINGS a connection failure, after it an
    /// RPC failure (Unavailable, as grpc-go reports a broken transport).
    fn transport_failure(
        &mut self,
        cx: &mut Ctx<'_>,
        mut io: Transport,
        connected: bool,
        e: &TransportError,
    ) -> Step {
        let (reason, detail) = e.describe(&mut io);
        let op = match e {
            TransportError::Io { op, .. } => *op,
            _ => "read",
        };
        io.close(cx);
        let o = if connected {
            let what = if op == "write" { "writing to" } else { "reading from" };
            let rpc =
                RpcError::new(code::UNAVAILABLE, format!("error {what} server: {detail}"), reason);
            health::outcome(Err(rpc), self.timeout)
        } else {
            health::connect_failure(&self.plan.addr, reason, &detail)
        };
        self.finish(o)
    }

    /// An HTTP/2 failure, mapped as grpc-go maps them.
    fn h2_failure(
        &mut self,
        cx: &mut Ctx<'_>,
        io: Transport,
        connected: bool,
        e: &H2Error,
    ) -> Step {
        io.close(cx);
        if !connected {
            let o = health::connect_failure(&self.plan.addr, Reason::Protocol, &e.to_string());
            return self.finish(o);
        }
        let o = self.rpc_failure(cx.now, e);
        self.finish(o)
    }

    /// The outcome of an RPC that failed with `e` after the connection was established.
    fn rpc_failure(&self, now: Instant, e: &H2Error) -> Outcome {
        let past_deadline = self.deadline.is_some_and(|d| now >= d);
        let code = match e {
            // As grpc-go: a cancellation once our deadline has passed is most likely the
            // server acting on our grpc-timeout.
            H2Error::Reset(0x8) if past_deadline => code::DEADLINE_EXCEEDED,
            H2Error::Reset(c) => reset_code(*c),
            H2Error::GoAway { .. } => code::UNAVAILABLE,
            H2Error::Eof { .. } => code::UNAVAILABLE,
            H2Error::Protocol(_) | H2Error::NotHttp2(_) => code::INTERNAL,
        };
        let message = match e {
            H2Error::Eof { .. } => "error reading from server: EOF".to_string(),
            e => e.to_string(),
        };
        health::outcome(Err(RpcError::new(code, message, Reason::Protocol)), self.timeout)
    }

    fn finish(&mut self, mut o: Outcome) -> Step {
        self.state = State::Done;
        self.deadline = None;
        o.http_status = self.http_status;
        self.dial.timings().apply(&mut o.timings);
        o.timings.first_byte = self.first_byte;
        o.timings.total = self.since_start(Instant::now());
        o.cert_not_after = self.dial.cert_not_after();
        o.tls = self.dial.tls_info();
        o.peer = self.dial.peer_addr();
        Step::Done(o)
    }

    fn close_all(&mut self, cx: &mut Ctx<'_>) -> bool {
        match std::mem::replace(&mut self.state, State::Done) {
            // The TLS files not loaded in time make a timeout like a slow name lookup's.
            State::Dialing => {
                self.dial.cancel(cx);
                false
            }
            // A run that ends with its stream open drops the connection: the server may have
            // stopped answering on it.
            State::Open { io, h2, .. } => {
                io.close(cx);
                h2.is_connected()
            }
            State::Idle | State::Done => false,
        }
    }
}

/// Where the probe connects to, from its spec.
#[derive(Debug)]
struct Target {
    host: String,
    port: u16,
    close: ClosePolicy,
    tls: Option<TlsOptions>,
    /// The target's TLS sessions when its options ask for resumption (see
    /// [`GrpcPlan::with_tls_sessions`]).
    tls_sessions: Option<std::sync::Arc<prober_transport::TlsSessions>>,
    unix: Option<UnixSocket>,
    filter: Option<std::sync::Arc<prober_core::AddressFilter>>,
    keep_alive: bool,
    netns: Option<prober_core::NetNs>,
    ip_family: prober_core::IpFamily,
    source: Option<std::net::IpAddr>,
}

impl Target {
    fn endpoint(&self) -> Endpoint<'_> {
        Endpoint {
            host: &self.host,
            port: self.port,
            tls: self.tls.as_ref(),
            tls_sessions: self.tls_sessions.as_deref(),
            alpn: &[ALPN_H2],
            close: self.close,
            // HTTP/2 writes several small frames (preface, SETTINGS, ACKs, HEADERS, DATA).
            nodelay: true,
            // One connection per run, as the kubelet, unless the spec keeps them.
            keep_alive: self.keep_alive,
            unix: self.unix.as_ref(),
            filter: self.filter.as_ref(),
            netns: self.netns.as_ref(),
            ip_family: self.ip_family,
            source: self.source,
        }
    }
}

/// What Go's dialer connects to for an empty host (`":PORT"`): the unspecified address of the
/// family it prefers, IPv6 where the machine can open an IPv6 socket (Linux connects to its
/// loopback, `::1`), else IPv4. Looked up once per process. An address family that excludes
/// or does not prefer IPv6 gets IPv4's (`0.0.0.0`), one that requires it IPv6's; a source
/// address its own family's, as Go's dialer picks the socket's family from its local address.
fn unspecified_host(
    family: prober_core::IpFamily,
    source: Option<std::net::IpAddr>,
) -> &'static str {
    use prober_core::IpFamily;
    match source.filter(|ip| !ip.is_unspecified()) {
        Some(ip) if IpFamily::is_v6(ip) => return "::",
        Some(_) => return "0.0.0.0",
        None => {}
    }
    match family {
        IpFamily::V4 | IpFamily::PreferV4 => return "0.0.0.0",
        IpFamily::V6 => return "::",
        IpFamily::Any | IpFamily::PreferV6 => {}
    }
    static HOST: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        // A socket only (std's are close-on-exec), bound to nothing reachable: IPv6 present?
        match std::net::UdpSocket::bind((std::net::Ipv6Addr::LOCALHOST, 0)) {
            Ok(_) => "::",
            Err(_) => "0.0.0.0",
        }
    })
}

/// A Unix socket in gRPC's naming, as grpc-health-probe's `-addr` takes it.
fn grpc_target(socket: &UnixSocket) -> String {
    match socket {
        UnixSocket::Path(p) if p.is_absolute() => format!("unix://{}", p.display()),
        UnixSocket::Path(p) => format!("unix:{}", p.display()),
        UnixSocket::Abstract(n) => format!("unix-abstract:{}", String::from_utf8_lossy(n)),
    }
}

/// grpc-go's status code for an RST_STREAM error code.
fn reset_code(h2_code: u32) -> u32 {
    match h2_code {
        0x3 | 0xb => code::RESOURCE_EXHAUSTED, // FLOW_CONTROL_ERROR, ENHANCE_YOUR_CALM
        0x7 => code::UNAVAILABLE,              // REFUSED_STREAM
        0x8 => 1,                              // CANCEL: Canceled
        0xc => 7,                              // INADEQUATE_SECURITY: PermissionDenied
        _ => code::INTERNAL,
    }
}

impl Machine for GrpcProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        self.deadline = Some(cx.now + self.timeout);
        let step = self.dial.start(cx, cx.now, &self.plan.target.endpoint());
        self.on_dial(cx, step)
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        // A run that yielded does no more until its resume: one budget of frames a turn.
        if self.resume_owed {
            return Step::Pending;
        }
        // The dial may race two sockets (tokens 0 and 1); the connection is on 0.
        if matches!(self.state, State::Dialing) {
            return self.dial_event(cx, DialEvent::Ready(sub, ready));
        }
        match std::mem::replace(&mut self.state, State::Done) {
            other if sub != 0 => {
                self.state = other;
                Step::Pending
            }
            state @ State::Open { .. } => {
                self.state = state;
                self.drive(cx)
            }
            other => {
                self.state = other;
                Step::Pending
            }
        }
    }

    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        self.dial_event(cx, DialEvent::Resolved(addrs))
    }

    fn job_done(&mut self, cx: &mut Ctx<'_>, answer: io::Result<Answer>) -> Step {
        self.dial_event(cx, DialEvent::JobDone(answer))
    }

    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        match self.deadline {
            Some(d) if cx.now >= d => {}
            _ => {
                // Before the deadline only the dial has a timer (its second family).
                return self.dial_event(cx, DialEvent::Timer);
            }
        }
        let o = if self.close_all(cx) {
            health::rpc_timeout(self.timeout)
        } else {
            health::connect_timeout(&self.plan.addr, self.timeout)
        };
        self.finish(o)
    }

    fn wake_at(&self) -> Option<Instant> {
        match (&self.state, self.deadline) {
            (State::Dialing, Some(d)) => Some(self.dial.wake_at().map_or(d, |at| at.min(d))),
            (_, d) => d,
        }
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.resume_owed = false;
        self.drive(cx)
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.close_all(cx);
        self.deadline = None;
    }
}
