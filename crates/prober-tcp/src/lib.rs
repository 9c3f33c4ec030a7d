//! The TCP probe, all of it: connect within the deadline, send nothing, close ([`TcpProbe`],
//! the kubelet's check). Beyond the kubelet, a spec with data to send, an expected reply or
//! steps goes on to an [`exchange`] on the connection before closing it; a spec with TLS
//! (from the first byte, or STARTTLS between steps) runs as a [`TlsTcpProbe`]. A spec with a
//! Unix socket connects there instead (beyond the kubelet).
//!
//! The connection itself is prober-transport's: its [`Connector`] (name resolution, address
//! fallback, the close policy) for the plain probe, its [`Dial`](prober_transport::dial::Dial)
//! (the same with the TLS handshake) for the probe with TLS, as for HTTP, gRPC and DNS, so that
//! connecting behaves the same for every kind.

#![warn(missing_docs)]

pub mod exchange;
mod exchange_step;
mod steps;
mod tcp_tls;

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use prober_core::os_error_text;
use prober_core::{Outcome, ProbeResult, Reason, TcpSpec};
use prober_io::{Ctx, Machine, Ready, Step};

use exchange::{Exchange, ExchangeStep};
use prober_transport::{Conn, ConnectStep, Connector, Peer};

pub use tcp_tls::TlsTcpProbe;

/// A TCP connect probe as a [`Machine`]: Success when the connection is established within the
/// timeout, Failure with the OS error (refused, unreachable, timeout, dns) otherwise, Unknown
/// (reason resource) when this node could not make the attempt (no descriptor, no memory, no
/// resolver thread). No byte
/// is sent; the socket is closed at once (RST by default).
#[derive(Debug)]
pub struct TcpProbe {
    connector: Connector,
    timeout: Duration,
    started: Option<Instant>,
    deadline: Option<Instant>,
    /// Send/expect after connecting (`None`: the kubelet's connect-only check, which then
    /// allocates nothing for it). Boxed: the connect-only probe stays small.
    exchange: Option<Box<ExchangeRun>>,
    /// A [`Step::Yield`] was returned and its [`Machine::resume`] has not come yet: readiness
    /// meanwhile is left to that resume, so that a peer keeping the socket readable cannot
    /// make this run do more than one budget of work per turn.
    resume_owed: bool,
}

/// The exchange of a send/expect probe, with the connection while it runs.
#[derive(Debug)]
struct ExchangeRun {
    exchange: Exchange,
    /// The connection and its connect time, once connected.
    conn: Option<(Conn, Duration)>,
    first_byte: Option<Duration>,
}

impl TcpProbe {
    /// The machine for one run of `spec`, with `timeout` as the run's one deadline.
    pub fn new(spec: &TcpSpec, timeout: Duration) -> TcpProbe {
        let exchange = (!spec.send.is_empty() || spec.expect.is_some() || !spec.steps.is_empty())
            .then(|| {
                let exchange = if spec.steps.is_empty() {
                    Exchange::new(spec.send.clone(), spec.expect.clone())
                } else {
                    Exchange::with_steps(spec.steps.clone())
                };
                Box::new(ExchangeRun { exchange, conn: None, first_byte: None })
            });
        let connector = match &spec.connect.unix_socket {
            Some(socket) => Connector::unix(socket, spec.connect.close),
            None => Connector::new(&spec.host, spec.port, spec.connect.close)
                .with_filter(spec.connect.address_filter.clone())
                .with_netns(spec.connect.netns.as_ref())
                .with_ip_family(spec.connect.ip_family)
                .with_source(spec.connect.source_address),
        };
        TcpProbe { connector, timeout, started: None, deadline: None, exchange, resume_owed: false }
    }

    /// Runs the exchange on the held connection and ends the run once it is decided.
    fn exchange_step(&mut self, cx: &mut Ctx<'_>) -> Step {
        let Some(run) = self.exchange.as_mut() else { return Step::Pending };
        let Some((conn, _)) = run.conn.as_mut() else { return Step::Pending };
        let step = run.exchange.step(conn.stream());
        if run.first_byte.is_none() && run.exchange.has_reply() {
            let started = self.started.unwrap_or(cx.now);
            run.first_byte = Some(cx.now.saturating_duration_since(started));
        }
        let (result, reason, message) = match step {
            ExchangeStep::Pending => return Step::Pending,
            ExchangeStep::Yield => {
                self.resume_owed = true;
                return Step::Yield;
            }
            ExchangeStep::Matched => (ProbeResult::Success, Reason::None, String::new()),
            ExchangeStep::NoMatch(m) => (ProbeResult::Failure, Reason::Body, m),
            ExchangeStep::Protocol(m) => (ProbeResult::Failure, Reason::Protocol, m),
            ExchangeStep::Failed(op, e) => {
                let peer = conn.peer();
                (
                    ProbeResult::Failure,
                    Reason::from_io(&e),
                    format!(
                        "{}{op} {} {peer}: {}",
                        run.exchange.step_label(),
                        peer.network(),
                        os_error_text(&e)
                    ),
                )
            }
            // STARTTLS steps make the engine pick the TLS probe; this one cannot shake hands.
            ExchangeStep::StartTls => (
                ProbeResult::Unknown,
                Reason::Unsupported,
                "STARTTLS needs the TCP probe with TLS (TlsTcpProbe)".to_string(),
            ),
        };
        let o = Outcome::new(result, reason, message);
        self.end_exchange(cx, o)
    }

    /// True while connected and exchanging.
    fn exchanging(&self) -> bool {
        self.exchange.as_ref().is_some_and(|run| run.conn.is_some())
    }

    /// Closes the exchange's connection and completes `o` with its reply and timings.
    fn end_exchange(&mut self, cx: &mut Ctx<'_>, mut o: Outcome) -> Step {
        if let Some(run) = self.exchange.take() {
            let ExchangeRun { exchange, conn, first_byte } = *run;
            if let Some((conn, connect)) = conn {
                o.peer = tcp_addr(conn.peer());
                conn.close(cx);
                o.timings.connect = Some(connect);
            }
            o.output_total = exchange.read_total() as u64;
            let reply = exchange.into_reply();
            o.output = reply;
            o.timings.first_byte = first_byte;
        }
        o.timings.resolve = self.connector.resolve_time();
        o.timings.total = cx.now.saturating_duration_since(self.started.unwrap_or(cx.now));
        self.deadline = None;
        Step::Done(o)
    }

    fn finish(&mut self, cx: &mut Ctx<'_>, step: ConnectStep) -> Step {
        let started = self.started.unwrap_or(cx.now);
        let total = cx.now.saturating_duration_since(started);
        let mut outcome = match step {
            ConnectStep::Pending => return Step::Pending,
            ConnectStep::Connected(conn) if self.exchange.is_some() => {
                if let Some(run) = self.exchange.as_mut() {
                    run.conn = Some((conn, total));
                }
                return self.exchange_step(cx);
            }
            ConnectStep::Connected(conn) => {
                let peer = tcp_addr(conn.peer());
                conn.close(cx);
                let mut o = Outcome::success();
                o.peer = peer;
                o.timings.connect = Some(total);
                o
            }
            // Failure, or Unknown when the node ran out of something (reason resource).
            ConnectStep::Failed(e) => Outcome::new(e.reason.failed_result(), e.reason, e.message),
        };
        outcome.timings.resolve = self.connector.resolve_time();
        outcome.timings.total = total;
        self.deadline = None;
        Step::Done(outcome)
    }
}

impl Machine for TcpProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        self.deadline = Some(cx.now + self.timeout);
        let step = self.connector.start(cx, 0);
        self.finish(cx, step)
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        if self.exchanging() {
            // The exchange's connection is on token 0 (a second family's socket moved there).
            if sub != 0 || self.resume_owed {
                return Step::Pending;
            }
            return self.exchange_step(cx);
        }
        let step = self.connector.ready(cx, sub, ready);
        self.finish(cx, step)
    }

    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        let step = self.connector.resolved(cx, addrs);
        self.finish(cx, step)
    }

    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        match self.deadline {
            Some(d) if cx.now >= d => {}
            _ => {
                // The connector's own timer: the other address family joins the race.
                let step = self.connector.timer(cx);
                return self.finish(cx, step);
            }
        }
        if self.exchanging() {
            let message = match self.exchange.as_ref().map(|run| &run.exchange) {
                Some(x) => x.describe_timeout(&format!("{:?}", self.timeout)),
                None => String::new(),
            };
            return self.end_exchange(cx, Outcome::failure(Reason::Timeout, message));
        }
        let message = self.connector.describe_timeout();
        self.connector.cancel(cx);
        self.deadline = None;
        let mut o = Outcome::new(ProbeResult::Failure, Reason::Timeout, message);
        o.timings.resolve = self.connector.resolve_time();
        o.timings.total = cx.now.saturating_duration_since(self.started.unwrap_or(cx.now));
        Step::Done(o)
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.resume_owed = false;
        self.exchange_step(cx)
    }

    fn wake_at(&self) -> Option<Instant> {
        match (self.deadline, self.connector.wake_at()) {
            (Some(d), Some(c)) => Some(d.min(c)),
            (d, _) => d,
        }
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        if let Some((conn, _)) = self.exchange.as_mut().and_then(|run| run.conn.take()) {
            conn.close(cx);
        }
        self.connector.cancel(cx);
        self.deadline = None;
    }
}

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The address of a TCP peer, for [`Outcome::peer`] (`None` for a Unix socket).
fn tcp_addr(peer: &Peer) -> Option<std::net::SocketAddr> {
    match peer {
        Peer::Tcp(addr) => Some(*addr),
        Peer::Unix(_) => None,
    }
}
