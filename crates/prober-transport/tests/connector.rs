//! The connector against real sockets on loopback, without name resolution: each address of
//! a list is tried in turn and the first error is the one reported, as Go's dialer does. (The
//! race of two families is `tests/happy_eyeballs.rs`; the TCP probe's own cases are prober-tcp's
//! `tests/tcp.rs`.)

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use prober_core::{ClosePolicy, ProbeResult, Reason};
use prober_io::{Machine, run_to_completion};
use prober_testkit::{TargetServer, closed_port};
use prober_transport::{ConnectStep, Connector};

#[test]
fn each_address_is_tried_in_turn_and_the_first_error_is_reported() {
    let server = TargetServer::start();
    let dead: SocketAddr = format!("127.0.0.1:{}", closed_port()).parse().unwrap();
    let mut m =
        ConnectOnly(Connector::to_addrs(vec![dead, server.addr()], ClosePolicy::Reset), None);
    let o = run_to_completion(&mut m);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");

    let dead2: SocketAddr = format!("127.0.0.1:{}", closed_port()).parse().unwrap();
    let mut m = ConnectOnly(Connector::to_addrs(vec![dead, dead2], ClosePolicy::Reset), None);
    let o = run_to_completion(&mut m);
    assert_eq!(o.reason, Reason::Refused);
    assert_eq!(o.message, format!("dial tcp {dead}: connect: connection refused"));
}

/// Drives a bare Connector, to test address fallback without resolution.
struct ConnectOnly(Connector, Option<Instant>);

impl Machine for ConnectOnly {
    fn start(&mut self, cx: &mut prober_io::Ctx<'_>) -> prober_io::Step {
        self.1 = Some(cx.now + Duration::from_secs(2));
        let s = self.0.start(cx, 0);
        done(cx, s)
    }
    fn ready(
        &mut self,
        cx: &mut prober_io::Ctx<'_>,
        sub: usize,
        r: prober_io::Ready,
    ) -> prober_io::Step {
        let s = self.0.ready(cx, sub, r);
        done(cx, s)
    }
    fn timer(&mut self, cx: &mut prober_io::Ctx<'_>) -> prober_io::Step {
        self.0.cancel(cx);
        prober_io::Step::Done(prober_core::Outcome::failure(Reason::Timeout, "timeout"))
    }
    fn wake_at(&self) -> Option<Instant> {
        self.1
    }
    fn cancel(&mut self, cx: &mut prober_io::Ctx<'_>) {
        self.0.cancel(cx);
    }
}

fn done(cx: &mut prober_io::Ctx<'_>, s: ConnectStep) -> prober_io::Step {
    match s {
        ConnectStep::Pending => prober_io::Step::Pending,
        ConnectStep::Connected(c) => {
            c.close(cx);
            prober_io::Step::Done(prober_core::Outcome::success())
        }
        ConnectStep::Failed(e) => {
            prober_io::Step::Done(prober_core::Outcome::failure(e.reason, e.message))
        }
    }
}
