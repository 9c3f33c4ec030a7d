//! The I/O adapter: [`GrpcProbe`] drives the sans-I/O HTTP/2 client ([`crate::h2`]) and the
//! health protocol ([`crate::health`]) over a mio socket, plain or TLS.
//!
//! [`Dial`] (resolve, connect, TLS handshake when the spec asks for TLS) -> preface and
//! SETTINGS -> the server's SETTINGS (the connection is established) -> HEADERS + DATA ->
//! response head, message, trailers -> close with the spec's close policy (RST by default).
//! One deadline, set at `start`, covers it all, as the kubelet's one context does.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use prober_core::{
    ClosePolicy, DEFAULT_USER_AGENT, GrpcSpec, Outcome, Reason, TlsOptions, UnixSocket,
};
use prober_io::{Answer, Ctx, Machine, Ready, Step};
use prober_transport::dial::{Dial, DialError, DialEvent, DialStep, Endpoint};
use prober_transport::{ALPN_H2, Transport, TransportError};

use crate::h2::{self, Budget, H2Error, Turn};
use crate::health::{self, RpcError, code};

/// Bytes asked for in one `read`.
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

#[derive(Debug)]
enum State {
    Idle,
    /// The probe's [`Dial`] is connecting.
    Dialing,
    Open {
        io: Transport,
        h2: Box<h2::Client>,
    },
    Done,
}

/// A gRPC health probe as a [`Machine`] (see the crate docs for the semantics).
#[derive(Debug)]
pub struct GrpcProbe {
    target: Target,
    /// `host:port` as Go's `net.JoinHostPort` writes it, or the Unix socket in gRPC's naming
    /// (`unix:///run/app.sock`), for messages.
    addr: String,
    /// `:authority`: the spec's, else the TLS server name, else `host:port`, or the host alone
    /// through a Unix socket (grpc-go sends `localhost` for `unix:` targets).
    authority: String,
    /// `user-agent`: the spec's or [`DEFAULT_USER_AGENT`].
    user_agent: String,
    /// Request metadata, sent after the protocol's own headers.
    metadata: Vec<(String, String)>,
    service: String,
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

impl GrpcProbe {
    /// A probe of `spec` that must finish within `timeout`.
    pub fn new(spec: &GrpcSpec, timeout: Duration) -> GrpcProbe {
        let host_port = if spec.host.contains(':') {
            format!("[{}]:{}", spec.host, spec.port)
        } else {
            format!("{}:{}", spec.host, spec.port)
        };
        let (addr, default_authority) = match &spec.unix_socket {
            Some(socket) => (grpc_target(socket), spec.host.clone()),
            None => (host_port.clone(), host_port),
        };
        // grpc-go: an explicit authority (`WithAuthority`), else the TLS server name when one
        // is set (grpc-health-probe's `-tls-server-name`), else the target's.
        let tls_name = spec.tls.as_ref().and_then(|t| t.server_name.clone());
        let authority = spec.authority.clone().or(tls_name).unwrap_or(default_authority);
        GrpcProbe {
            user_agent: spec.user_agent.clone().unwrap_or_else(|| DEFAULT_USER_AGENT.to_string()),
            metadata: spec.metadata.clone(),
            target: Target {
                host: spec.host.clone(),
                port: spec.port,
                close: spec.close,
                tls: spec.tls.clone(),
                unix: spec.unix_socket.clone(),
                filter: spec.address_filter.clone(),
            },
            addr,
            authority,
            service: spec.service.clone(),
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
        let step = self.dial.on(cx, event, &self.target.endpoint());
        self.on_dial(cx, step)
    }

    fn on_dial(&mut self, cx: &mut Ctx<'_>, step: DialStep) -> Step {
        match step {
            DialStep::Pending => {
                self.state = State::Dialing;
                Step::Pending
            }
            DialStep::Connected(io) => {
                self.open(cx, io);
                self.drive(cx)
            }
            DialStep::Failed(e) => {
                let o = match e {
                    DialError::TlsNotBuiltIn => Outcome::unknown(
                        Reason::Unsupported,
                        format!("TLS not built in: cannot probe gRPC over TLS at {}", self.addr),
                    ),
                    DialError::Setup { reason, message } => Outcome::unknown(reason, message),
                    DialError::Connect { reason, detail } => {
                        health::connect_failure(&self.addr, reason, &detail)
                    }
                };
                self.finish(o)
            }
        }
    }

    /// The transport is ready: start HTTP/2.
    fn open(&mut self, cx: &Ctx<'_>, io: Transport) {
        // Rounded up, so that the server's deadline is not before ours.
        let left = self.deadline.map_or(self.timeout, |d| d.saturating_duration_since(cx.now));
        let ms = left.as_micros().div_ceil(1000).max(1);
        let grpc_timeout =
            if ms <= 99_999_999 { format!("{ms}m") } else { format!("{}S", ms / 1000) };
        let tls = self.target.tls.is_some();
        let request = h2::Request {
            method: "POST".into(),
            scheme: if tls { "https" } else { "http" }.into(),
            authority: self.authority.clone(),
            path: health::PATH.into(),
            headers: [
                ("content-type".to_string(), "application/grpc".to_string()),
                ("user-agent".into(), self.user_agent.clone()),
                ("te".into(), "trailers".into()),
                ("grpc-timeout".into(), grpc_timeout),
            ]
            .into_iter()
            .chain(self.metadata.iter().cloned())
            .collect(),
            body: health::encode_request(&self.service),
        };
        self.state = State::Open { io, h2: Box::new(h2::Client::new(request)) };
    }

    /// Runs the connection's I/O until it would block or the run ends.
    fn drive(&mut self, cx: &mut Ctx<'_>) -> Step {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Open { io, h2 } => self.exchange(cx, io, h2),
            other => {
                self.state = other;
                Step::Pending
            }
        }
    }

    fn exchange(&mut self, cx: &mut Ctx<'_>, mut io: Transport, mut h2: Box<h2::Client>) -> Step {
        let mut reads = 0;
        let mut budget = Budget::PER_TURN;
        loop {
            // What is buffered first, within this turn's budget, so that a flood of small
            // frames costs the poll thread a bounded time per turn; and nothing more is read
            // until it is handled, so that the buffer stays within one read and one frame.
            let progress = h2.process(&mut budget);
            if self.first_byte.is_none() && h2.has_response_head() {
                self.first_byte = Some(self.since_start(Instant::now()));
            }
            let spent = match progress {
                Ok(Turn::Pending) => false,
                Ok(Turn::Budget) => true,
                Ok(Turn::Done) => {
                    io.close(cx);
                    let response = h2.into_response();
                    self.http_status = response.status();
                    let o = health::outcome(health::interpret(&response), self.timeout);
                    return self.finish(o);
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
                    Err(e) => return self.transport_failure(cx, io, h2.is_connected(), &e),
                }
            }
            if h2.pending_output().len() > MAX_PENDING_OUTPUT {
                // Wait until the server reads (writable), or the deadline.
                io.sync_interest(cx.registry);
                self.state = State::Open { io, h2 };
                return Step::Pending;
            }
            if spent {
                // Let other work have its turn; the driver resumes right after its poll.
                self.state = State::Open { io, h2 };
                return self.yield_turn();
            }
            if reads == READS_PER_TURN {
                // Let other work have its turn; the driver resumes reading right after.
                self.state = State::Open { io, h2 };
                return self.yield_turn();
            }
            reads += 1;
            match read_into(&mut io, &mut h2) {
                Ok(0) => {
                    let e = h2.eof();
                    return self.h2_failure(cx, io, h2.is_connected(), &e);
                }
                Ok(_) => {}
                Err(TransportError::WouldBlock) => {
                    io.sync_interest(cx.registry);
                    self.state = State::Open { io, h2 };
                    return Step::Pending;
                }
                Err(e) => return self.transport_failure(cx, io, h2.is_connected(), &e),
            }
        }
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
            health::connect_failure(&self.addr, reason, &detail)
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
            let o = health::connect_failure(&self.addr, Reason::Protocol, &e.to_string());
            return self.finish(o);
        }
        let past_deadline = self.deadline.is_some_and(|d| cx.now >= d);
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
        let o = health::outcome(Err(RpcError::new(code, message, Reason::Protocol)), self.timeout);
        self.finish(o)
    }

    fn finish(&mut self, mut o: Outcome) -> Step {
        self.state = State::Done;
        self.deadline = None;
        o.http_status = self.http_status;
        self.dial.timings().apply(&mut o.timings);
        o.timings.first_byte = self.first_byte;
        o.timings.total = self.since_start(Instant::now());
        o.cert_not_after = self.dial.cert_not_after();
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
            State::Open { io, h2 } => {
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
    unix: Option<UnixSocket>,
    filter: Option<std::sync::Arc<prober_core::AddressFilter>>,
}

impl Target {
    fn endpoint(&self) -> Endpoint<'_> {
        Endpoint {
            host: &self.host,
            port: self.port,
            tls: self.tls.as_ref(),
            alpn: &[ALPN_H2],
            close: self.close,
            // HTTP/2 writes several small frames (preface, SETTINGS, ACKs, HEADERS, DATA).
            nodelay: true,
            // gRPC probes make one connection per run, as the kubelet.
            keep_alive: false,
            unix: self.unix.as_ref(),
            filter: self.filter.as_ref(),
        }
    }
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
        let step = self.dial.start(cx, cx.now, &self.target.endpoint());
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
            health::connect_timeout(&self.addr, self.timeout)
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
