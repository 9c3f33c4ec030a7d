//! The I/O adapter: [`GrpcProbe`] drives the sans-I/O HTTP/2 client ([`crate::h2`]) and the
//! health protocol ([`crate::health`]) over a mio socket, plain or TLS.
//!
//! [`Connector`] (resolve, connect) -> TLS handshake when the spec asks for TLS -> preface and
//! SETTINGS -> the server's SETTINGS (the connection is established) -> HEADERS + DATA ->
//! response head, message, trailers -> close with the spec's close policy (RST by default).
//! One deadline, set at `start`, covers it all, as the kubelet's one context does.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use prober_core::{ClosePolicy, DEFAULT_USER_AGENT, GrpcSpec, Outcome, Reason, TlsOptions};
#[cfg(feature = "tls")]
use prober_io::BlockingJob;
use prober_io::{Answer, Ctx, Machine, Ready, Step};
use prober_tcp::{ConnectStep, Connector};
#[cfg(feature = "tls")]
use prober_transport::tls::{ALPN_H2, TlsClient, TlsConn, TlsSetup, finish_setup, start_setup};
use prober_transport::{Transport, TransportError, op_error_text};

use crate::h2::{self, Budget, H2Error, Turn};
use crate::health::{self, RpcError, code};

/// Bytes asked for in one `read`.
const READ_CHUNK: usize = 16 * 1024;
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
    /// Waiting for the TLS files, loaded off the poll thread, before connecting.
    #[cfg(feature = "tls")]
    LoadingTls(BlockingJob),
    /// Boxed: a connector racing two sockets is the largest state by far.
    Connecting(Box<Connector>),
    #[cfg(feature = "tls")]
    Handshake {
        tls: Box<TlsConn>,
    },
    Open {
        io: Transport,
        h2: Box<h2::Client>,
    },
    Done,
}

/// A gRPC health probe as a [`Machine`] (see the crate docs for the semantics).
#[derive(Debug)]
pub struct GrpcProbe {
    host: String,
    port: u16,
    /// `host:port` as Go's `net.JoinHostPort` writes it, for messages and `:authority`.
    addr: String,
    service: String,
    close: ClosePolicy,
    tls_options: Option<TlsOptions>,
    #[cfg(feature = "tls")]
    tls: Option<TlsClient>,
    timeout: Duration,
    started: Option<Instant>,
    deadline: Option<Instant>,
    state: State,
    buf: Vec<u8>,
    resolve: Option<Duration>,
    connect: Option<Duration>,
    tls_time: Option<Duration>,
    first_byte: Option<Duration>,
    cert_not_after: Option<i64>,
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
        let addr = if spec.host.contains(':') {
            format!("[{}]:{}", spec.host, spec.port)
        } else {
            format!("{}:{}", spec.host, spec.port)
        };
        GrpcProbe {
            host: spec.host.clone(),
            port: spec.port,
            addr,
            service: spec.service.clone(),
            close: spec.close,
            tls_options: spec.tls.clone(),
            #[cfg(feature = "tls")]
            tls: None,
            timeout,
            started: None,
            deadline: None,
            state: State::Idle,
            buf: Vec::new(),
            resolve: None,
            connect: None,
            tls_time: None,
            first_byte: None,
            cert_not_after: None,
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

    /// Builds the TLS client when the spec asks for TLS: `Ok(true)` when ready (or no TLS),
    /// `Ok(false)` when its files are being loaded off the poll thread (the run goes on in
    /// `job_done`).
    #[cfg(feature = "tls")]
    fn tls_setup(&mut self, cx: &mut Ctx<'_>) -> Result<bool, (Reason, String)> {
        let Some(opts) = &self.tls_options else { return Ok(true) };
        match start_setup(cx, opts, &[ALPN_H2]) {
            TlsSetup::Ready(Ok(client)) => {
                self.tls = Some(client);
                Ok(true)
            }
            TlsSetup::Ready(Err(e)) => Err((Reason::Tls, format!("TLS setup failed: {e}"))),
            TlsSetup::Loading(job) => {
                self.state = State::LoadingTls(job);
                Ok(false)
            }
        }
    }

    #[cfg(not(feature = "tls"))]
    fn tls_setup(&mut self, _: &mut Ctx<'_>) -> Result<bool, (Reason, String)> {
        match &self.tls_options {
            Some(_) => Err((
                Reason::Unsupported,
                format!("TLS not built in: cannot probe gRPC over TLS at {}", self.addr),
            )),
            None => Ok(true),
        }
    }

    fn connect(&mut self, cx: &mut Ctx<'_>) -> Step {
        // HTTP/2 writes several small frames (preface, SETTINGS, ACKs, HEADERS, DATA): no Nagle.
        let mut connector =
            Box::new(Connector::new(&self.host, self.port, self.close).with_nodelay(true));
        let step = connector.start(cx, 0);
        self.on_connect_step(cx, connector, step)
    }

    fn on_connect_step(
        &mut self,
        cx: &mut Ctx<'_>,
        connector: Box<Connector>,
        step: ConnectStep,
    ) -> Step {
        self.resolve = connector.resolve_time();
        match step {
            ConnectStep::Pending => {
                self.state = State::Connecting(connector);
                Step::Pending
            }
            ConnectStep::Connected(conn) => {
                self.connect = Some(self.since_start(Instant::now()));
                #[cfg(feature = "tls")]
                if let Some(client) = &self.tls {
                    return match client.connect(conn, cx.token(0), &self.host) {
                        Ok(tls) => {
                            self.state = State::Handshake { tls: Box::new(tls) };
                            self.drive(cx)
                        }
                        Err((conn, e)) => {
                            conn.close(cx);
                            let msg = format!("TLS setup failed: {e}");
                            self.finish(Outcome::unknown(Reason::Tls, msg))
                        }
                    };
                }
                self.open(cx, Transport::Plain(conn));
                self.drive(cx)
            }
            ConnectStep::Failed(e) => {
                let o = health::connect_failure(&self.addr, e.reason, &e.message);
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
        let tls = self.tls_options.is_some();
        let request = h2::Request {
            method: "POST".into(),
            scheme: if tls { "https" } else { "http" }.into(),
            authority: self.addr.clone(),
            path: health::PATH.into(),
            headers: vec![
                ("content-type".into(), "application/grpc".into()),
                ("user-agent".into(), DEFAULT_USER_AGENT.into()),
                ("te".into(), "trailers".into()),
                ("grpc-timeout".into(), grpc_timeout),
            ],
            body: health::encode_request(&self.service),
        };
        self.state = State::Open { io, h2: Box::new(h2::Client::new(request)) };
    }

    /// Runs the connection's I/O until it would block or the run ends.
    // Without TLS there is no handshake to loop back from.
    #[cfg_attr(not(feature = "tls"), allow(clippy::never_loop))]
    fn drive(&mut self, cx: &mut Ctx<'_>) -> Step {
        loop {
            match std::mem::replace(&mut self.state, State::Done) {
                #[cfg(feature = "tls")]
                State::Handshake { mut tls } => {
                    let r = tls.handshake();
                    if !matches!(r, Ok(false)) {
                        self.cert_not_after = self.tls.as_ref().and_then(TlsClient::cert_not_after);
                    }
                    match r {
                        Ok(true) => {
                            self.tls_time = Some(self.since_start(Instant::now()));
                            self.open(cx, Transport::Tls(tls));
                        }
                        Ok(false) | Err(TransportError::WouldBlock) => {
                            tls.sync_interest(cx.registry);
                            self.state = State::Handshake { tls };
                            return Step::Pending;
                        }
                        Err(e) => return self.transport_failure(cx, Transport::Tls(tls), false, e),
                    }
                }
                State::Open { io, h2 } => return self.exchange(cx, io, h2),
                other => {
                    self.state = other;
                    return Step::Pending;
                }
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
                Err(e) => return self.h2_failure(cx, io, h2.is_connected(), e),
            };
            while !h2.pending_output().is_empty() {
                match io.write(h2.pending_output()) {
                    Ok(0) => {
                        let error = io::Error::from(io::ErrorKind::WriteZero);
                        let e = TransportError::Io { op: "write", error };
                        return self.transport_failure(cx, io, h2.is_connected(), e);
                    }
                    Ok(n) => h2.consume_output(n),
                    Err(TransportError::WouldBlock) => break,
                    Err(e) => return self.transport_failure(cx, io, h2.is_connected(), e),
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
            self.buf.resize(READ_CHUNK, 0);
            match io.read(&mut self.buf) {
                Ok(0) => {
                    let e = h2.eof();
                    return self.h2_failure(cx, io, h2.is_connected(), e);
                }
                Ok(n) => h2.push(&self.buf[..n]),
                Err(TransportError::WouldBlock) => {
                    io.sync_interest(cx.registry);
                    self.state = State::Open { io, h2 };
                    return Step::Pending;
                }
                Err(e) => return self.transport_failure(cx, io, h2.is_connected(), e),
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
        e: TransportError,
    ) -> Step {
        let (reason, detail, op) = match &e {
            TransportError::Io { op, error } => {
                (Reason::from_io(error), op_error_text(&mut io, op, error), *op)
            }
            TransportError::Tls(_) => (Reason::Tls, e.to_string(), "read"),
            TransportError::WouldBlock => (Reason::Io, e.to_string(), "read"),
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
    fn h2_failure(&mut self, cx: &mut Ctx<'_>, io: Transport, connected: bool, e: H2Error) -> Step {
        io.close(cx);
        if !connected {
            let o = health::connect_failure(&self.addr, Reason::Protocol, &e.to_string());
            return self.finish(o);
        }
        let past_deadline = self.deadline.is_some_and(|d| cx.now >= d);
        let code = match &e {
            // As grpc-go: a cancellation once our deadline has passed is most likely the
            // server acting on our grpc-timeout.
            H2Error::Reset(0x8) if past_deadline => code::DEADLINE_EXCEEDED,
            H2Error::Reset(c) => reset_code(*c),
            H2Error::GoAway { .. } => code::UNAVAILABLE,
            H2Error::Eof { .. } => code::UNAVAILABLE,
            H2Error::Protocol(_) | H2Error::NotHttp2(_) => code::INTERNAL,
        };
        let message = match &e {
            H2Error::Eof { .. } => "error reading from server: EOF".to_string(),
            e => e.to_string(),
        };
        let o = health::outcome(Err(RpcError::new(code, message, Reason::Protocol)), self.timeout);
        self.finish(o)
    }

    fn finish(&mut self, mut o: Outcome) -> Step {
        self.state = State::Done;
        self.deadline = None;
        self.buf = Vec::new();
        o.http_status = self.http_status;
        o.timings.resolve = self.resolve;
        o.timings.connect = self.connect;
        o.timings.tls = self.tls_time;
        o.timings.first_byte = self.first_byte;
        o.timings.total = self.since_start(Instant::now());
        o.cert_not_after = self.cert_not_after;
        Step::Done(o)
    }

    fn close_all(&mut self, cx: &mut Ctx<'_>) -> bool {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Connecting(mut c) => {
                c.cancel(cx);
                false
            }
            #[cfg(feature = "tls")]
            State::Handshake { tls, .. } => {
                tls.close(cx);
                false
            }
            State::Open { io, h2 } => {
                io.close(cx);
                h2.is_connected()
            }
            // The files were not loaded in time: a timeout like a slow name lookup's.
            #[cfg(feature = "tls")]
            State::LoadingTls(_) => false,
            State::Idle | State::Done => false,
        }
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
        match self.tls_setup(cx) {
            Ok(true) => self.connect(cx),
            Ok(false) => Step::Pending,
            Err((reason, msg)) => self.finish(Outcome::unknown(reason, msg)),
        }
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        // A run that yielded does no more until its resume: one budget of frames a turn.
        if self.resume_owed {
            return Step::Pending;
        }
        match std::mem::replace(&mut self.state, State::Done) {
            // The connector may race two sockets (tokens 0 and 1); the connection is on 0.
            State::Connecting(mut connector) => {
                let step = connector.ready(cx, sub, ready);
                self.on_connect_step(cx, connector, step)
            }
            other if sub != 0 => {
                self.state = other;
                Step::Pending
            }
            state @ State::Open { .. } => {
                self.state = state;
                self.drive(cx)
            }
            #[cfg(feature = "tls")]
            state @ State::Handshake { .. } => {
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
        match std::mem::replace(&mut self.state, State::Done) {
            State::Connecting(mut connector) => {
                let step = connector.resolved(cx, addrs);
                self.on_connect_step(cx, connector, step)
            }
            other => {
                self.state = other;
                Step::Pending
            }
        }
    }

    fn job_done(&mut self, cx: &mut Ctx<'_>, answer: io::Result<Answer>) -> Step {
        match std::mem::replace(&mut self.state, State::Done) {
            #[cfg(feature = "tls")]
            State::LoadingTls(_job) => {
                let built = match &self.tls_options {
                    Some(opts) => finish_setup(answer, opts, &[ALPN_H2]),
                    // Never loads without them.
                    None => Err((Reason::Tls, "no TLS options".to_string())),
                };
                match built {
                    Ok(client) => {
                        self.tls = Some(client);
                        self.connect(cx)
                    }
                    Err((reason, e)) => {
                        let o = Outcome::unknown(reason, format!("TLS setup failed: {e}"));
                        self.finish(o)
                    }
                }
            }
            other => {
                let _ = (cx, answer);
                self.state = other;
                Step::Pending
            }
        }
    }

    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        match self.deadline {
            Some(d) if cx.now >= d => {}
            _ => {
                // Before the deadline only the connector has a timer (its second family).
                return match std::mem::replace(&mut self.state, State::Done) {
                    State::Connecting(mut connector) => {
                        let step = connector.timer(cx);
                        self.on_connect_step(cx, connector, step)
                    }
                    other => {
                        self.state = other;
                        Step::Pending
                    }
                };
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
            (State::Connecting(c), Some(d)) => Some(c.wake_at().map_or(d, |at| at.min(d))),
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
        self.buf = Vec::new();
    }
}
