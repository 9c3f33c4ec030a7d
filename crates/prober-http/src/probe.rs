//! The I/O adapter: [`HttpProbe`] drives the sans-I/O parts over a mio socket.
//!
//! Per hop: [`Dial`] (resolve, connect, TLS handshake for `https`) -> write the request
//! -> read and parse the head -> redirect decision -> read the body (final response only) ->
//! close the connection with the spec's close policy (RST by default). One deadline, set at
//! `start`, covers every hop.
//!
//! Memory: one buffer per probe, reused across hops. While reading a head it grows to at most
//! [`MAX_HEAD`] + one read chunk; while reading a body it holds one read chunk at a time. The
//! kept body is bounded by the output limit.

mod h1;
mod h2;
mod h2_exchange;
mod plan;
mod read;
mod route;
mod tunnel;
mod tunnel_exchange;

pub use plan::HttpPlan;
use read::{READ_CHUNK, READS_PER_TURN, read_append};
use route::endpoint;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prober_core::{HttpPhases, HttpResponseVersion, HttpSpec, Outcome, Reason, Scheme, Url};
use prober_io::{Answer, Ctx, Machine, Ready, Step};
use prober_transport::dial::{Dial, DialError, DialEvent, DialStep};

use crate::body::{BodyProgress, BodyReader, Framing};
use crate::cookies::{CookieJar, with_cookies};
use crate::redirect::{Decision, Hop, Redirects, error_op};
use crate::request::{Message, build_request_with};
use crate::response::{HeadParser, HeadStatus, MAX_HEAD, ResponseHead};
use crate::verdict::{evaluate, evaluate_cel, evaluate_expected};
use prober_transport::{Transport, TransportError};

/// How much of a followed redirect's body is read before the next request (Go's client's
/// `maxBodySlurpSize`).
const REDIRECT_BODY_READ: usize = 2048;

const HEADERS_TIMEOUT: &str =
    "context deadline exceeded (Client.Timeout exceeded while awaiting headers)";
const BODY_TIMEOUT: &str =
    "context deadline exceeded (Client.Timeout or context cancellation while reading body)";

#[derive(Debug)]
enum State {
    Idle,
    /// The probe's [`Dial`] is connecting to the current hop.
    Dialing,
    Writing {
        conn: Transport,
        request: Request,
        written: usize,
    },
    Head {
        conn: Transport,
        parser: HeadParser,
    },
    Body {
        conn: Transport,
        status: u16,
        reader: BodyReader,
        /// The response lets the connection carry another request once the body is read to
        /// its end (keep-alive probes only).
        keep: bool,
    },
    /// Reading (and dropping) a followed redirect's body before the next hop, as Go's client
    /// does: up to [`REDIRECT_BODY_READ`] bytes, when it has no `Content-Length` or one no
    /// larger than that. Errors end the reading, not the run.
    Discard {
        conn: Transport,
        reader: BodyReader,
        hop: Box<Hop>,
    },
    /// Asking the proxy for a tunnel to an `https` target (see the `tunnel` module).
    Tunnel(Box<tunnel_exchange::Tunnel>),
    /// The connection speaks HTTP/2 (see the `h2` module).
    H2 {
        conn: Transport,
        x: Box<h2_exchange::H2Exchange>,
    },
    Done,
}

/// The bytes of one request: the plan's first request, shared by every run, or one built for a
/// redirect hop.
#[derive(Debug)]
enum Request {
    First(Arc<HttpPlan>),
    Redirected(Vec<u8>),
}

impl Request {
    fn bytes(&self) -> &[u8] {
        match self {
            Request::First(plan) => &plan.request,
            Request::Redirected(bytes) => bytes,
        }
    }
}

/// What a step of the I/O loop wants next.
enum Next {
    Continue,
    Return(Step),
}

/// An HTTP GET probe as a [`Machine`] (see the crate docs for the semantics).
#[derive(Debug)]
pub struct HttpProbe {
    plan: Arc<HttpPlan>,
    timeout: Duration,
    output_limit: usize,
    /// The current hop after a followed redirect (URL, virtual host, `Referer`); `None` while
    /// on the plan's URL.
    hop: Option<Box<Hop>>,
    redirects: Redirects,
    /// The connect phase of the current hop (its TLS client, built at the first `https` hop,
    /// serves the later ones).
    dial: Dial,
    state: State,
    buf: Vec<u8>,
    started: Option<Instant>,
    deadline: Option<Instant>,
    /// Status of the last response head received.
    last_status: Option<u16>,
    /// First response byte of the current (finally: the last) hop; the other phases are the
    /// dial's.
    first_byte: Option<Duration>,
    /// Version and declared length of the last response head (HTTP/1 or HTTP/2).
    last_version: Option<HttpResponseVersion>,
    last_length: Option<u64>,
    /// When the current hop started, from the start of the run.
    hop_started: Duration,
    /// Phase durations of the hops before the current one, then of all (see `add_hop`).
    phases: HttpPhases,
    /// The final response's body was read to its end (its transfer phase counts).
    body_read: bool,
    /// The final response's header fields, when the spec keeps them.
    headers: Vec<(String, String)>,
    /// The run's cookies, when the spec keeps them.
    jar: Option<Box<CookieJar>>,
    /// The current hop's proxy has opened its tunnel: the dial now shakes hands with the
    /// target inside it.
    tunneled: bool,
}

impl HttpProbe {
    /// A probe of `spec` that must finish within `timeout` and keeps at most `output_limit`
    /// bytes of body (at least 1).
    pub fn new(spec: &HttpSpec, timeout: Duration, output_limit: usize) -> HttpProbe {
        HttpProbe::with_plan(Arc::new(HttpPlan::new(spec.clone())), timeout, output_limit)
    }

    /// A probe of the plan's spec (see [`HttpProbe::new`]), for callers that run one spec many
    /// times.
    pub fn with_plan(plan: Arc<HttpPlan>, timeout: Duration, output_limit: usize) -> HttpProbe {
        HttpProbe {
            redirects: Redirects::with_limit(plan.spec.redirects, plan.spec.max_redirects),
            plan,
            timeout,
            output_limit: output_limit.max(1),
            hop: None,
            dial: Dial::new(),
            state: State::Idle,
            buf: Vec::new(),
            started: None,
            deadline: None,
            last_status: None,
            first_byte: None,
            last_version: None,
            last_length: None,
            hop_started: Duration::ZERO,
            phases: HttpPhases::default(),
            body_read: false,
            headers: Vec::new(),
            jar: None,
            tunneled: false,
        }
    }

    /// The URL of the current hop.
    fn url(&self) -> &Url {
        self.hop.as_ref().map_or(&self.plan.spec.url, |h| &h.url)
    }

    /// The method and body of the current hop's request: the spec's, or a `GET` without body
    /// once a 301, 302 or 303 changed it (Go's client).
    fn message(&self) -> Message<'_> {
        match &self.hop {
            Some(hop) if hop.as_get => Message::GET,
            _ => Message { method: &self.plan.spec.method, body: &self.plan.spec.body },
        }
    }

    /// The start of an error message, as Go's client wraps it in a `url.Error`: the first
    /// request's method (`Get`, `Post`) and the current URL.
    fn op_url(&self) -> String {
        format!("{} \"{}\"", error_op(&self.plan.spec.method), self.url())
    }

    /// Whether a request that failed on a reused connection may be sent again: Go's
    /// `isReplayable` (`GET`, `HEAD`, `OPTIONS`, `TRACE`); a `POST` is not repeated.
    fn replayable(&self) -> bool {
        matches!(self.message().method, "GET" | "HEAD" | "OPTIONS" | "TRACE")
    }

    /// Time from the start of the run to `now`. Phases are stamped with the clock read where
    /// they end (`Instant::now()`), not the driver's reading for the call: one call can carry a
    /// run through several phases.
    fn since_start(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.started.unwrap_or(now))
    }

    fn start_hop(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.buf.clear();
        self.first_byte = None;
        self.hop_started = match self.hop {
            None => Duration::ZERO,
            Some(_) => self.since_start(Instant::now()),
        };
        self.tunneled = false;
        if let Some(step) = self.proxy_refused(cx) {
            return step;
        }
        let started = self.started.unwrap_or(cx.now);
        let step = self.dial.start(cx, started, &endpoint(&self.plan, self.hop.as_deref(), false));
        self.on_dial(cx, step)
    }

    /// A machine call while dialing goes to the dial; in any other state it is not the dial's
    /// (a late answer of an abandoned lookup or job, a stale timer): nothing to do.
    fn dial_event(&mut self, cx: &mut Ctx<'_>, event: DialEvent) -> Step {
        if !matches!(self.state, State::Dialing) {
            return Step::Pending;
        }
        let step =
            self.dial.on(cx, event, &endpoint(&self.plan, self.hop.as_deref(), self.tunneled));
        self.on_dial(cx, step)
    }

    fn on_dial(&mut self, cx: &mut Ctx<'_>, step: DialStep) -> Step {
        match step {
            DialStep::Pending => {
                self.state = State::Dialing;
                Step::Pending
            }
            DialStep::Connected(conn) if self.tunnel_wanted() => self.start_tunnel(cx, conn),
            DialStep::Connected(conn)
                if h2_exchange::speaks_h2(self.plan.spec.version, self.url().scheme(), &conn)
                    && !self.proxied_plain() =>
            {
                self.start_h2(cx, conn)
            }
            DialStep::Connected(conn) => self.send_request(cx, conn),
            DialStep::Failed(e) => {
                let o = match e {
                    DialError::TlsNotBuiltIn => {
                        let msg = format!("TLS not built in: cannot probe {}", self.url());
                        Outcome::unknown(Reason::Unsupported, msg)
                    }
                    DialError::Setup { reason, message } => Outcome::unknown(reason, message),
                    // Failure, or Unknown when the node ran out of something (reason resource).
                    DialError::Connect { reason, detail } => {
                        // Go's words for a failed dial to the proxy.
                        let via = if self.proxy().is_some() && !self.tunneled {
                            "proxyconnect tcp: "
                        } else {
                            ""
                        };
                        let msg = format!("{}: {via}{detail}", self.op_url());
                        Outcome::new(reason.failed_result(), reason, msg)
                    }
                };
                self.finish(o)
            }
        }
    }

    fn send_request(&mut self, cx: &mut Ctx<'_>, conn: Transport) -> Step {
        let request = match &self.hop {
            None => Request::First(self.plan.clone()),
            Some(hop) => {
                let headers = with_cookies(&self.plan.spec.headers, self.jar.as_deref(), &hop.url);
                let (ua, host, referer) = (
                    &self.plan.spec.user_agent,
                    hop.host_override.as_deref(),
                    hop.referer.as_deref(),
                );
                let (keep, msg) = (self.plan.keep_alive, self.message());
                Request::Redirected(match self.proxy().filter(|_| !self.tunneled) {
                    Some(p) => crate::proxy::build_proxied_request(
                        p, &hop.url, &headers, ua, host, referer, keep, msg,
                    ),
                    None => build_request_with(&hop.url, &headers, ua, host, referer, keep, msg),
                })
            }
        };
        self.state = State::Writing { conn, request, written: 0 };
        self.drive(cx)
    }

    /// Runs the connection's I/O until it would block or the run ends.
    fn drive(&mut self, cx: &mut Ctx<'_>) -> Step {
        loop {
            let next = match std::mem::replace(&mut self.state, State::Done) {
                State::Writing { conn, request, written } => self.write(cx, conn, request, written),
                State::Head { conn, parser } => self.read_head(cx, conn, parser),
                State::Body { conn, status, reader, keep } => {
                    self.read_body(cx, conn, status, reader, keep)
                }
                State::Discard { conn, reader, hop } => self.discard_body(cx, conn, reader, hop),
                State::Tunnel(t) => self.tunnel_turn(cx, t),
                State::H2 { conn, x } => self.h2_turn(cx, conn, x),
                other => {
                    self.state = other;
                    Next::Return(Step::Pending)
                }
            };
            if let Next::Return(step) = next {
                return step;
            }
        }
    }

    fn on_head(&mut self, cx: &mut Ctx<'_>, conn: Transport, head: &ResponseHead) -> Next {
        self.last_status = Some(head.status);
        self.last_version = Some(HttpResponseVersion::http1(head.version));
        self.last_length = match head.framing {
            Framing::Length(n) => Some(n),
            Framing::Chunked | Framing::Close => None,
        };
        let (current, host_override, as_get) = match &self.hop {
            Some(hop) => (&hop.url, hop.host_override.as_deref(), hop.as_get),
            None => (&self.plan.spec.url, self.plan.host_override.as_deref(), false),
        };
        // Read once for both the jar and the kept headers.
        let fields = (self.jar.is_some() || self.plan.spec.keep_headers)
            .then(|| crate::response::header_fields(&self.buf[..head.len]));
        if let (Some(jar), Some(fields)) = (&mut self.jar, &fields) {
            jar.store_fields(current, fields);
        }
        let method = if as_get { "GET" } else { self.plan.spec.method.as_str() };
        // A response to HEAD has no body, whatever its head announces (RFC 9110 9.3.2).
        let framing = if method == "HEAD" { Framing::Length(0) } else { head.framing };
        // The first request's method: Go names it in errors, and only it decides whether a
        // 301, 302 or 303 makes the next request a GET (a GET made so stays one).
        let decision = self.redirects.decide(
            &self.plan.spec.url,
            current,
            host_override,
            &self.plan.spec.method,
            head.status,
            head.location.as_deref(),
        );
        match decision {
            Decision::Follow(mut hop) => {
                hop.as_get |= as_get;
                let read_first = match framing {
                    Framing::Length(n) => n > 0 && n <= REDIRECT_BODY_READ as u64,
                    Framing::Chunked | Framing::Close => true,
                };
                let mut reader = BodyReader::new(framing, REDIRECT_BODY_READ);
                let more = read_first
                    && matches!(reader.feed(&self.buf[head.len..]), Ok(BodyProgress::NeedMore));
                self.buf.clear();
                if more {
                    self.state = State::Discard { conn, reader, hop: Box::new(hop) };
                    Next::Continue
                } else {
                    Next::Return(self.follow(cx, conn, hop))
                }
            }
            Decision::BadLocation(msg) => {
                Next::Return(self.fail(cx, Some(conn), Reason::Protocol, msg, None))
            }
            Decision::TooMany(msg) => {
                Next::Return(self.fail(cx, Some(conn), Reason::TooManyRedirects, msg, None))
            }
            Decision::Final => {
                if self.plan.spec.keep_headers {
                    self.headers = fields.unwrap_or_default();
                }
                let keep = self.plan.keep_alive && !head.close;
                let coding = self.plan.spec.compression;
                let mut reader = BodyReader::with_coding(framing, self.output_limit, coding);
                let progress = reader.feed(&self.buf[head.len..]);
                self.buf.clear();
                match progress {
                    Ok(BodyProgress::Complete { truncated }) => {
                        self.release(cx, conn, keep && reader.at_end());
                        Next::Return(self.respond(head.status, reader, truncated))
                    }
                    Ok(_) => {
                        self.state = State::Body { conn, status: head.status, reader, keep };
                        Next::Continue
                    }
                    Err(e) => Next::Return(self.body_failure(cx, conn, reader, &e)),
                }
            }
        }
    }

    /// Goes to the next hop of a followed redirect.
    fn follow(&mut self, cx: &mut Ctx<'_>, conn: Transport, hop: Hop) -> Step {
        conn.close(cx);
        self.add_hop(None);
        self.hop = Some(Box::new(hop));
        self.start_hop(cx)
    }

    /// Ends the exchange on `conn`: kept for another run when `reusable` (a keep-alive probe
    /// whose response allowed it and whose body was read to its end), else closed.
    fn release(&mut self, cx: &mut Ctx<'_>, conn: Transport, reusable: bool) {
        if reusable && self.proxy().is_none() {
            self.dial.keep(cx, conn, &endpoint(&self.plan, self.hop.as_deref(), self.tunneled));
        } else {
            conn.close(cx);
        }
    }

    /// A reused connection failed before any response byte: the server closed it as it was
    /// reused. Dial again on a fresh connection, once, within the same deadline.
    /// Past the deadline (its timer not yet run: the connection's end and the deadline came in
    /// the same turn) nothing is dialled: the run ends as the deadline would end it.
    fn retry(&mut self, cx: &mut Ctx<'_>, conn: Transport) -> Step {
        conn.close(cx);
        if self.deadline.is_some_and(|d| cx.now >= d) {
            self.state = State::Done;
            let msg = format!("{}: {HEADERS_TIMEOUT}", self.op_url());
            return self.fail(cx, None, Reason::Timeout, msg, None);
        }
        self.buf.clear();
        let step = self.dial.retry(cx, &endpoint(&self.plan, self.hop.as_deref(), self.tunneled));
        self.on_dial(cx, step)
    }

    /// The final response was read (its connection released): the kubelet's result mapping.
    fn respond(&mut self, status: u16, reader: BodyReader, truncated: bool) -> Step {
        let sink = reader.into_sink();
        let spec = &self.plan.spec;
        let (mut result, mut reason, mut message) =
            if spec.expect_status.is_none() && spec.expect_body.is_none() {
                evaluate(status, sink.kept())
            } else {
                evaluate_expected(
                    status,
                    sink.kept(),
                    spec.expect_status.as_ref(),
                    spec.expect_body.as_ref(),
                )
            };
        if result.is_ok() && !spec.expect_body_cel.is_empty() {
            let cel = evaluate_cel(&spec.expect_body_cel, sink.kept(), sink.total(), self.deadline);
            if let Some(failed) = cel {
                (result, reason, message) = failed;
            }
        }
        let mut o = Outcome::new(result, reason, message);
        o.output_total = sink.total();
        o.output = sink.into_kept();
        o.truncated = truncated;
        self.body_read = true;
        self.finish(o)
    }

    fn body_failure(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Transport,
        reader: BodyReader,
        e: &crate::body::BodyError,
    ) -> Step {
        let reason = if e.is_protocol() { Reason::Protocol } else { Reason::BrokenBody };
        let msg = format!("{}: {e}", self.op_url());
        let sink = reader.into_sink();
        let body = Some((sink.total(), sink.into_kept()));
        self.fail(cx, Some(conn), reason, msg, body)
    }

    /// A socket error, worded like Go's `net.OpError`
    /// (`read tcp 127.0.0.1:5000->127.0.0.1:80: read: connection reset by peer`), or a TLS
    /// failure (`tls: invalid peer certificate: UnknownIssuer`, reason Tls).
    fn transport_failure(
        &mut self,
        cx: &mut Ctx<'_>,
        mut conn: Transport,
        e: &TransportError,
        body: Option<(u64, Vec<u8>)>,
    ) -> Step {
        if self.first_byte.is_none() && self.dial.reused() && self.replayable() {
            return self.retry(cx, conn);
        }
        let (reason, detail) = e.describe(&mut conn);
        let msg = format!("{}: {detail}", self.op_url());
        self.fail(cx, Some(conn), reason, msg, body)
    }

    /// A Failure (Unknown for reason resource) that ends the run, closing `conn`; `body` is
    /// what was read of a body.
    fn fail(
        &mut self,
        cx: &mut Ctx<'_>,
        conn: Option<Transport>,
        reason: Reason,
        message: String,
        body: Option<(u64, Vec<u8>)>,
    ) -> Step {
        if let Some(conn) = conn {
            conn.close(cx);
        }
        // Unknown when the node ran out of something (reason resource): not the target's fault.
        let mut o = Outcome::new(reason.failed_result(), reason, message);
        if let Some((total, kept)) = body {
            o.output_total = total;
            o.output = kept;
        }
        self.finish(o)
    }

    fn finish(&mut self, mut o: Outcome) -> Step {
        self.state = State::Done;
        self.deadline = None;
        self.buf = Vec::new();
        o.http_status = self.last_status;
        self.dial.timings().apply(&mut o.timings);
        o.timings.first_byte = self.first_byte;
        o.cert_not_after = self.dial.cert_not_after();
        o.tls = self.dial.tls_info();
        o.peer = self.dial.peer_addr();
        o.http_version = self.last_version;
        o.http_content_length = self.last_length;
        o.http_redirects = self.redirects.followed();
        o.headers = std::mem::take(&mut self.headers);
        o.timings.total = self.since_start(Instant::now());
        let end = self.body_read.then_some(o.timings.total);
        self.add_hop(end);
        o.http_phases = Some(self.phases);
        Step::Done(o)
    }

    /// Adds the current hop's phases to the sums, as blackbox_exporter adds up Go's
    /// `httptrace` stamps per round trip: `end` is when its body was read to the end (`None`
    /// for a redirect, whose body is not read, or a hop that failed).
    fn add_hop(&mut self, end: Option<Duration>) {
        let t = self.dial.timings();
        let p = &mut self.phases;
        let resolve = t.resolve.unwrap_or_default();
        p.resolve += resolve;
        let resolved = self.hop_started + resolve;
        if let Some(connect) = t.connect {
            p.connect += connect.saturating_sub(resolved);
            if let Some(tls) = t.tls {
                p.tls += tls.saturating_sub(connect);
            }
        }
        // The connection was usable after TLS, after connect, or at once when kept alive.
        let usable = match (t.tls.or(t.connect), t.reused) {
            (Some(at), _) => at,
            (None, true) => self.hop_started,
            (None, false) => return,
        };
        let Some(first_byte) = self.first_byte else { return };
        p.processing += first_byte.saturating_sub(usable);
        if let Some(end) = end {
            p.transfer += end.saturating_sub(first_byte);
        }
    }
}

/// Whether `ready` brings nothing to a run in `state`: a plain connection reading a response
/// (head or body) told only that it is writable (the ACK of its request freed send room). The
/// poll reports the whole readiness with each event, so bytes, a FIN or an error would have
/// said readable, closed or error; a read now would only return `EAGAIN`. TLS may have records
/// to send, so its connections are driven on every event.
fn waits_for_bytes_only(state: &State, ready: Ready) -> bool {
    let reading_plain = match state {
        State::Head { conn, .. } | State::Body { conn, .. } => matches!(conn, Transport::Plain(_)),
        _ => false,
    };
    reading_plain && !ready.readable && !ready.hup && !ready.error
}

impl Machine for HttpProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        self.deadline = Some(cx.now + self.timeout);
        self.phases = HttpPhases::default();
        self.body_read = false;
        // A new jar for every run: nothing of a run's cookies outlives it.
        self.jar = self.plan.spec.cookies.then(Box::default);
        self.start_hop(cx)
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        // The dial may race two sockets (tokens 0 and 1); the connection is on 0.
        if matches!(self.state, State::Dialing) {
            return self.dial_event(cx, DialEvent::Ready(sub, ready));
        }
        match std::mem::replace(&mut self.state, State::Done) {
            other if sub != 0 || waits_for_bytes_only(&other, ready) => {
                self.state = other;
                Step::Pending
            }
            state @ (State::Writing { .. }
            | State::Head { .. }
            | State::Body { .. }
            | State::Discard { .. }
            | State::Tunnel(_)
            | State::H2 { .. }) => {
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
        let in_body = match &self.state {
            State::Body { .. } => true,
            State::H2 { x, .. } => x.in_body(),
            _ => false,
        };
        // Go's client reads a redirect's body and then sends the next request, which finds its
        // deadline passed: the error names the next URL, awaiting headers.
        let mut next_url = None;
        let body = match std::mem::replace(&mut self.state, State::Done) {
            // The files not loaded in time make a timeout like a slow name lookup's.
            State::Dialing => {
                self.dial.cancel(cx);
                None
            }
            State::Writing { conn, .. } | State::Head { conn, .. } => {
                conn.close(cx);
                None
            }
            State::Tunnel(t) => {
                t.close(cx);
                None
            }
            State::Body { conn, reader, .. } => {
                conn.close(cx);
                let sink = reader.into_sink();
                Some((sink.total(), sink.into_kept()))
            }
            State::Discard { conn, hop, .. } => {
                conn.close(cx);
                next_url = Some(hop.url);
                None
            }
            State::H2 { conn, mut x } => {
                conn.close(cx);
                x.take_body()
            }
            State::Idle | State::Done => None,
        };
        let why = if in_body { BODY_TIMEOUT } else { HEADERS_TIMEOUT };
        let op = error_op(&self.plan.spec.method);
        let msg = format!("{op} \"{}\": {why}", next_url.as_ref().unwrap_or(self.url()));
        self.fail(cx, None, Reason::Timeout, msg, body)
    }

    fn wake_at(&self) -> Option<Instant> {
        match (&self.state, self.deadline) {
            (State::Dialing, Some(d)) => Some(self.dial.wake_at().map_or(d, |at| at.min(d))),
            (_, d) => d,
        }
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.drive(cx)
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Dialing => self.dial.cancel(cx),
            State::Writing { conn, .. }
            | State::Head { conn, .. }
            | State::Body { conn, .. }
            | State::Discard { conn, .. }
            | State::H2 { conn, .. } => conn.close(cx),
            State::Tunnel(t) => t.close(cx),
            State::Idle | State::Done => {}
        }
        self.deadline = None;
        self.buf = Vec::new();
    }
}
