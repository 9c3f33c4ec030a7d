//! The race of address families (Go's dialer, RFC 8305 style): the first family alone for
//! `FALLBACK_DELAY`, then the other beside it; the first family failing starts the other at
//! once; the first connection wins; when all fail, the first family's first error. Real
//! loopback sockets: an IPv6 listener whose accept queue is full drops SYNs (a path that hangs),
//! an IPv4 listener answers.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use prober_core::{ClosePolicy, Outcome, Reason};
use prober_io::{Ctx, Machine, Ready, Step, run_to_completion};
use prober_testkit::hanging::HangingListener;
use prober_transport::{ConnectStep, Connector};

/// A connect of a fixed address list, as `TcpProbe` drives its connector. With `use_timer`
/// false the connector's own timer is never called, so the other family can only join the race
/// because the first one failed.
#[derive(Debug)]
struct Connect {
    connector: Connector,
    timeout: Duration,
    deadline: Option<Instant>,
    use_timer: bool,
}

impl Connect {
    fn new(addrs: Vec<SocketAddr>, timeout: Duration, use_timer: bool) -> Connect {
        Connect {
            connector: Connector::to_addrs(addrs, ClosePolicy::Reset),
            timeout,
            deadline: None,
            use_timer,
        }
    }

    fn step(&mut self, cx: &mut Ctx<'_>, step: ConnectStep) -> Step {
        match step {
            ConnectStep::Pending => Step::Pending,
            ConnectStep::Connected(conn) => {
                let mut o = Outcome::success();
                o.message = conn.peer().to_string();
                conn.close(cx);
                Step::Done(o)
            }
            ConnectStep::Failed(e) => Step::Done(Outcome::failure(e.reason, e.message)),
        }
    }
}

impl Machine for Connect {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.deadline = Some(cx.now + self.timeout);
        let step = self.connector.start(cx, 0);
        self.step(cx, step)
    }
    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        let step = self.connector.ready(cx, sub, ready);
        self.step(cx, step)
    }
    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        let step = self.connector.resolved(cx, addrs);
        self.step(cx, step)
    }
    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        if self.deadline.is_some_and(|d| cx.now >= d) {
            let message = self.connector.describe_timeout();
            self.connector.cancel(cx);
            return Step::Done(Outcome::failure(Reason::Timeout, message));
        }
        let step = self.connector.timer(cx);
        self.step(cx, step)
    }
    fn wake_at(&self) -> Option<Instant> {
        let own = if self.use_timer { self.connector.wake_at() } else { None };
        match (self.deadline, own) {
            (Some(d), Some(c)) => Some(d.min(c)),
            (d, _) => d,
        }
    }
    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.connector.cancel(cx);
    }
}

/// A listener on `ip` whose accept queue is full: connects to it hang.
fn hanging(ip: &str) -> HangingListener {
    HangingListener::bind(format!("{ip}:0").parse().unwrap())
}

/// An address on `ip` where nothing listens (connects are refused).
fn refused(ip: &str) -> SocketAddr {
    let l = TcpListener::bind(format!("{ip}:0")).unwrap();
    let a = l.local_addr().unwrap();
    drop(l);
    a
}

#[test]
fn the_other_family_wins_when_the_first_hangs() {
    let l6 = hanging("[::1]");
    let v6 = l6.addr();
    let v4 = TcpListener::bind("127.0.0.1:0").unwrap();
    let v4_addr = v4.local_addr().unwrap();
    let o = run_to_completion(&mut Connect::new(vec![v6, v4_addr], Duration::from_secs(5), true));
    assert_eq!(
        (o.result.is_ok(), o.message.as_str()),
        (true, v4_addr.to_string().as_str()),
        "{o:?}"
    );
    // Before the race, the same list spent the whole deadline on the IPv6 address.
    let l6b = hanging("[::1]");
    let v6b = l6b.addr();
    let o = run_to_completion(&mut Connect::new(vec![v6b], Duration::from_millis(400), true));
    assert_eq!((o.reason, o.message), (Reason::Timeout, format!("dial tcp {v6b}: i/o timeout")));
}

#[test]
fn the_first_family_failing_starts_the_other_at_once() {
    let v4 = TcpListener::bind("127.0.0.1:0").unwrap();
    let v4_addr = v4.local_addr().unwrap();
    // No connector timer at all: only the refusal can have started the IPv4 attempt.
    let o = run_to_completion(&mut Connect::new(
        vec![refused("[::1]"), v4_addr],
        Duration::from_secs(30),
        false,
    ));
    assert_eq!(
        (o.result.is_ok(), o.message.as_str()),
        (true, v4_addr.to_string().as_str()),
        "{o:?}"
    );
}

#[test]
fn when_every_attempt_fails_the_first_familys_first_error_is_reported() {
    let (a6, b6, a4) = (refused("[::1]"), refused("[::1]"), refused("127.0.0.1"));
    let o = run_to_completion(&mut Connect::new(vec![a6, a4, b6], Duration::from_secs(30), true));
    assert_eq!(
        (o.reason, o.message.as_str()),
        (Reason::Refused, format!("dial tcp {a6}: connect: connection refused").as_str())
    );
    // Both hanging: the deadline names the first family's address, as Go's dialer does.
    let (l6, l4) = (hanging("[::1]"), hanging("127.0.0.1"));
    let (h6, h4) = (l6.addr(), l4.addr());
    let o = run_to_completion(&mut Connect::new(vec![h6, h4], Duration::from_millis(600), true));
    assert_eq!((o.reason, o.message), (Reason::Timeout, format!("dial tcp {h6}: i/o timeout")));
}

#[test]
fn one_family_is_tried_in_turn_as_before() {
    let ok = TcpListener::bind("127.0.0.1:0").unwrap();
    let ok_addr = ok.local_addr().unwrap();
    let o = run_to_completion(&mut Connect::new(
        vec![refused("127.0.0.1"), ok_addr],
        Duration::from_secs(30),
        false,
    ));
    assert_eq!(
        (o.result.is_ok(), o.message.as_str()),
        (true, ok_addr.to_string().as_str()),
        "{o:?}"
    );
}
