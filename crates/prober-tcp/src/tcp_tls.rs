//! TCP probes with TLS (beyond the kubelet, issue 25): Consul's `TCPUseTLS` and
//! blackbox_exporter's tcp `tls: true` (TLS from the first byte, the send/expect exchange
//! inside it), and STARTTLS (blackbox_exporter's `starttls`: the exchange in plain text, then
//! TLS on the same connection). The TLS options, files and handshake are [`Dial`]'s, as for
//! HTTPS and gRPC; Success needs the handshake, with the verification the options ask for,
//! and the exchange (if any). With [`TcpStep`](prober_core::TcpStep)s, a STARTTLS step
//! upgrades the connection between steps and the following steps run through TLS.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeResult, Reason, TcpSpec, TlsOptions, os_error_text};
use prober_io::{Answer, Ctx, Machine, Ready, Step};
use prober_transport::dial::{Dial, DialError, DialEvent, DialStep, Endpoint};
use prober_transport::{Transport, TransportError};

use crate::exchange::{Exchange, ExchangeStep};

#[derive(Debug)]
enum State {
    Idle,
    /// Connecting (and shaking hands for TLS from the start).
    Dialing,
    /// The exchange runs on the connection.
    Exchanging(Transport),
    /// STARTTLS: the plain connection is being upgraded by the dial.
    Upgrading,
    Done,
}

/// A TCP probe with TLS as a [`Machine`] (see the module docs).
#[derive(Debug)]
pub struct TlsTcpProbe {
    spec: TcpSpec,
    tls: TlsOptions,
    timeout: Duration,
    dial: Dial,
    state: State,
    exchange: Exchange,
    started: Option<Instant>,
    deadline: Option<Instant>,
    first_byte: Option<Duration>,
    /// A [`Step::Yield`] was returned (the steps spent a call's budget) and its
    /// [`Machine::resume`] has not come yet: readiness meanwhile is left to that resume, so
    /// that a peer keeping the socket readable cannot make this run do more than one budget of
    /// work per turn.
    resume_owed: bool,
    /// The target's TLS sessions when its options ask for resumption (see
    /// [`TlsTcpProbe::with_tls_sessions`]).
    tls_sessions: Option<std::sync::Arc<prober_transport::TlsSessions>>,
}

impl TlsTcpProbe {
    /// The run resumes TLS sessions from `sessions`, the target's, and keeps there what the
    /// server gives (see [`prober_transport::TlsSessions`]); `None`: full handshakes.
    pub fn with_tls_sessions(
        mut self,
        sessions: Option<std::sync::Arc<prober_transport::TlsSessions>>,
    ) -> TlsTcpProbe {
        self.tls_sessions = sessions;
        self
    }

    /// A run of `spec` (whose `tls` is set; the default options otherwise) within `timeout`.
    pub fn new(spec: &TcpSpec, timeout: Duration) -> TlsTcpProbe {
        TlsTcpProbe {
            tls: spec.connect.tls.clone().unwrap_or_default(),
            exchange: if spec.steps.is_empty() {
                Exchange::new(spec.send.clone(), spec.expect.clone())
            } else {
                Exchange::with_steps(spec.steps.clone())
            },
            spec: spec.clone(),
            timeout,
            dial: Dial::new(),
            state: State::Idle,
            started: None,
            deadline: None,
            first_byte: None,
            resume_owed: false,
            tls_sessions: None,
        }
    }

    fn has_exchange(&self) -> bool {
        !self.spec.send.is_empty() || self.spec.expect.is_some() || !self.spec.steps.is_empty()
    }

    fn on_dial(&mut self, cx: &mut Ctx<'_>, step: DialStep) -> Step {
        match step {
            DialStep::Pending => Step::Pending,
            DialStep::Connected(conn) => {
                let upgraded = matches!(self.state, State::Upgrading);
                // Steps after a STARTTLS step run through the new TLS connection.
                if upgraded && !self.exchange.done_after_tls() {
                    self.exchange.resume_after_tls();
                    self.state = State::Exchanging(conn);
                    return self.exchange_step(cx);
                }
                // STARTTLS: the exchange ran before the upgrade; TLS from the start: it runs now.
                if upgraded || !self.has_exchange() {
                    if self.spec.starttls && !upgraded {
                        return self.upgrade(cx, conn);
                    }
                    conn.close(cx);
                    return self.finish(Outcome::success());
                }
                self.state = State::Exchanging(conn);
                self.exchange_step(cx)
            }
            DialStep::Failed(e) => {
                let o = match e {
                    DialError::TlsNotBuiltIn => Outcome::unknown(
                        Reason::Unsupported,
                        "TLS not built in: cannot probe TCP with TLS".to_string(),
                    ),
                    DialError::Setup { reason, message } => Outcome::unknown(reason, message),
                    DialError::Connect { reason, detail } => {
                        Outcome::new(reason.failed_result(), reason, detail)
                    }
                };
                self.finish(o)
            }
        }
    }

    /// STARTTLS: hands the plain connection to the dial for the handshake.
    fn upgrade(&mut self, cx: &mut Ctx<'_>, conn: Transport) -> Step {
        // Without the `tls` feature `Plain` is the only variant and the else is dead code.
        #[cfg_attr(not(feature = "tls"), allow(irrefutable_let_patterns))]
        let Transport::Plain(conn) = conn else {
            // Already TLS (never: the first dial of a STARTTLS probe is plain).
            conn.close(cx);
            return self.finish(Outcome::success());
        };
        self.state = State::Upgrading;
        let step = self.dial.start_tls(
            cx,
            conn,
            &endpoint(&self.spec, &self.tls, self.tls_sessions.as_deref(), true),
        );
        self.on_dial(cx, step)
    }

    fn exchange_step(&mut self, cx: &mut Ctx<'_>) -> Step {
        let State::Exchanging(mut conn) = std::mem::replace(&mut self.state, State::Done) else {
            return Step::Pending;
        };
        let step = self.exchange.step(&mut TransportIo(&mut conn));
        if self.first_byte.is_none() && self.exchange.has_reply() {
            let started = self.started.unwrap_or(cx.now);
            self.first_byte = Some(Instant::now().saturating_duration_since(started));
        }
        match step {
            ExchangeStep::Pending => {
                conn.sync_interest(cx.registry);
                self.state = State::Exchanging(conn);
                Step::Pending
            }
            ExchangeStep::Yield => {
                conn.sync_interest(cx.registry);
                self.state = State::Exchanging(conn);
                self.resume_owed = true;
                Step::Yield
            }
            ExchangeStep::Matched if self.spec.starttls => self.upgrade(cx, conn),
            ExchangeStep::StartTls => self.upgrade(cx, conn),
            ExchangeStep::Matched => {
                conn.close(cx);
                self.finish(Outcome::success())
            }
            ExchangeStep::NoMatch(m) => {
                conn.close(cx);
                self.finish(Outcome::failure(Reason::Body, m))
            }
            ExchangeStep::Protocol(m) => {
                conn.close(cx);
                self.finish(Outcome::failure(Reason::Protocol, m))
            }
            ExchangeStep::Failed(op, e) => {
                let o = match e.get_ref().and_then(|inner| inner.downcast_ref::<TlsText>()) {
                    Some(TlsText(text)) => Outcome::failure(
                        Reason::Tls,
                        format!("{}{text}", self.exchange.step_label()),
                    ),
                    None => {
                        let peer = conn.peer();
                        let text = format!(
                            "{}{op} {} {peer}: {}",
                            self.exchange.step_label(),
                            peer.network(),
                            os_error_text(&e)
                        );
                        Outcome::new(ProbeResult::Failure, Reason::from_io(&e), text)
                    }
                };
                conn.close(cx);
                self.finish(o)
            }
        }
    }

    fn finish(&mut self, mut o: Outcome) -> Step {
        self.state = State::Done;
        self.deadline = None;
        self.dial.timings().apply(&mut o.timings);
        o.timings.first_byte = self.first_byte;
        o.cert_not_after = self.dial.cert_not_after();
        o.tls = self.dial.tls_info();
        o.peer = self.dial.peer_addr();
        let reply = std::mem::replace(&mut self.exchange, Exchange::new(Vec::new(), None));
        o.output_total = reply.read_total() as u64;
        let reply = reply.into_reply();
        if !reply.is_empty() {
            o.output = reply;
        }
        let started = self.started.unwrap_or_else(Instant::now);
        o.timings.total = Instant::now().saturating_duration_since(started);
        Step::Done(o)
    }

    fn dial_event(&mut self, cx: &mut Ctx<'_>, event: DialEvent) -> Step {
        if !matches!(self.state, State::Dialing | State::Upgrading) {
            return Step::Pending;
        }
        let with_tls = matches!(self.state, State::Upgrading) || !self.spec.has_starttls();
        let step = self.dial.on(
            cx,
            event,
            &endpoint(&self.spec, &self.tls, self.tls_sessions.as_deref(), with_tls),
        );
        self.on_dial(cx, step)
    }
}

impl Machine for TlsTcpProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        self.deadline = Some(cx.now + self.timeout);
        self.state = State::Dialing;
        let now = cx.now;
        let ep = endpoint(
            &self.spec,
            &self.tls,
            self.tls_sessions.as_deref(),
            !self.spec.has_starttls(),
        );
        let step = self.dial.start(cx, now, &ep);
        self.on_dial(cx, step)
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        match self.state {
            State::Dialing | State::Upgrading => self.dial_event(cx, DialEvent::Ready(sub, ready)),
            State::Exchanging(_) if sub == 0 && !self.resume_owed => self.exchange_step(cx),
            _ => Step::Pending,
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
            _ => return self.dial_event(cx, DialEvent::Timer),
        }
        let t = prober_core::format_duration(self.timeout);
        let message = match std::mem::replace(&mut self.state, State::Done) {
            State::Exchanging(conn) => {
                conn.close(cx);
                self.exchange.describe_timeout(&t)
            }
            State::Upgrading => {
                self.dial.cancel(cx);
                let step = self.exchange.step_label();
                format!("{step}timeout after {t}: the STARTTLS handshake did not complete")
            }
            _ => {
                self.dial.cancel(cx);
                format!("timeout after {t}: connecting with TLS did not complete")
            }
        };
        self.finish(Outcome::failure(Reason::Timeout, message))
    }

    fn wake_at(&self) -> Option<Instant> {
        match (&self.state, self.deadline) {
            (State::Dialing | State::Upgrading, Some(d)) => {
                Some(self.dial.wake_at().map_or(d, |at| at.min(d)))
            }
            (_, d) => d,
        }
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.resume_owed = false;
        self.exchange_step(cx)
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Exchanging(conn) => conn.close(cx),
            State::Dialing | State::Upgrading => self.dial.cancel(cx),
            State::Idle | State::Done => {}
        }
        self.deadline = None;
    }
}

/// Where the probe connects; `with_tls`: with the TLS options (the dial of TLS from the start,
/// and the upgrade), else plain.
fn endpoint<'a>(
    spec: &'a TcpSpec,
    tls: &'a TlsOptions,
    sessions: Option<&'a prober_transport::TlsSessions>,
    with_tls: bool,
) -> Endpoint<'a> {
    Endpoint {
        host: &spec.host,
        port: spec.port,
        tls: with_tls.then_some(tls),
        tls_sessions: sessions,
        // No ALPN: the protocol inside is the user's.
        alpn: &[],
        close: spec.connect.close,
        nodelay: false,
        keep_alive: false,
        unix: spec.connect.unix_socket.as_ref(),
        filter: spec.connect.address_filter.as_ref(),
        netns: spec.connect.netns.as_ref(),
        ip_family: spec.connect.ip_family,
        source: spec.connect.source_address,
    }
}

/// A TLS failure's text carried through `io::Error` to the exchange's caller.
#[derive(Debug)]
struct TlsText(String);

impl std::fmt::Display for TlsText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TlsText {}

/// The transport as the `Read + Write` the exchange speaks: `WouldBlock` kept, socket errors
/// as they are, TLS failures wrapped so that the probe reports them as reason `tls`.
struct TransportIo<'a>(&'a mut Transport);

impl TransportIo<'_> {
    fn error(e: TransportError) -> io::Error {
        match e {
            TransportError::WouldBlock => io::ErrorKind::WouldBlock.into(),
            TransportError::Io { error, .. } => error,
            other => io::Error::other(TlsText(other.to_string())),
        }
    }
}

impl io::Read for TransportIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(TransportIo::error)
    }
}

impl io::Write for TransportIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.0.write(buf).map_err(TransportIo::error)?;
        // TLS buffers records: send them now (what cannot go yet goes with the next call).
        match self.0.flush() {
            Ok(()) | Err(TransportError::WouldBlock) => Ok(n),
            Err(e) => Err(TransportIo::error(e)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(TransportIo::error)
    }
}
