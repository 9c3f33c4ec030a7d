//! TCP connect probes: connect within the deadline, send nothing, close.
//!
//! [`Connector`] is also the first half of every HTTP probe (`prober-http` uses it), so name
//! resolution, address fallback and the close policy behave the same for both.

mod connect;

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeResult, Reason, TcpSpec};
use prober_io::{Ctx, Machine, Ready, Step};

pub use connect::{ConnectError, ConnectStep, Conn, Connector};

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
}

impl TcpProbe {
    pub fn new(spec: &TcpSpec, timeout: Duration) -> TcpProbe {
        TcpProbe {
            connector: Connector::new(&spec.host, spec.port, spec.close),
            timeout,
            started: None,
            deadline: None,
        }
    }

    fn finish(&mut self, cx: &mut Ctx<'_>, step: ConnectStep) -> Step {
        let started = self.started.unwrap_or(cx.now);
        let total = cx.now.saturating_duration_since(started);
        let mut outcome = match step {
            ConnectStep::Pending => return Step::Pending,
            ConnectStep::Connected(conn) => {
                conn.close(cx);
                let mut o = Outcome::success();
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
        let message = self.connector.describe_timeout();
        self.connector.cancel(cx);
        self.deadline = None;
        let mut o = Outcome::new(ProbeResult::Failure, Reason::Timeout, message);
        o.timings.resolve = self.connector.resolve_time();
        o.timings.total = cx.now.saturating_duration_since(self.started.unwrap_or(cx.now));
        Step::Done(o)
    }

    fn wake_at(&self) -> Option<Instant> {
        match (self.deadline, self.connector.wake_at()) {
            (Some(d), Some(c)) => Some(d.min(c)),
            (d, _) => d,
        }
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.connector.cancel(cx);
        self.deadline = None;
    }
}
