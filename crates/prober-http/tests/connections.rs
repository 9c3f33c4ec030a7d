//! Connection handling, timings and cancellation of HTTP probes.

mod common;

use common::*;

#[test]
fn connections_are_closed_with_rst_by_default_fin_on_request() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/")), "ok");
    assert!(s.wait_for_connections_closed(1, Duration::from_secs(10)));
    assert_eq!(s.reset_connections(), 1);

    let mut sp = spec(&s.url("/"));
    sp.set_close_policy(ClosePolicy::Fin);
    assert_success(&run(&sp), "ok");
    assert!(s.wait_for_connections_closed(2, Duration::from_secs(10)));
    assert_eq!(s.reset_connections(), 1, "FIN close counted as a reset");
}

#[test]
fn every_hop_connection_is_closed() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/redirect-chain/3")), "chain end");
    assert!(s.wait_for_connections_closed(4, Duration::from_secs(10)));
    assert_eq!(s.connections(), 4);
}

#[test]
fn timings_are_filled_in() {
    let s = TargetServer::start();
    let o = get(&s.url("/"));
    let t = o.timings;
    assert_eq!(t.resolve, None, "IP literal");
    assert_eq!(t.tls, None);
    let (c, f) = (t.connect.unwrap(), t.first_byte.unwrap());
    assert!(c <= f && f <= t.total, "{t:?}");
    let o = get(&format!("http://localhost:{}/", s.port()));
    assert_success(&o, "ok");
    assert!(o.timings.resolve.is_some());
    assert!(o.timings.resolve.unwrap() <= o.timings.connect.unwrap());
    let o = get(&format!("http://127.0.0.1:{}/", closed_port()));
    assert_eq!((o.timings.connect, o.timings.first_byte), (None, None));
}

#[test]
fn output_limit_is_configurable() {
    let s = TargetServer::start();
    let mut sp = spec(&s.url("/body/100"));
    sp.set_output_limit(10).unwrap();
    let o = run(&sp);
    assert_eq!(out(&o), "a".repeat(10));
    assert!(o.truncated);
}

#[test]
fn cancel_closes_the_connection() {
    use mio::{Events, Poll, Waker};
    use prober_io::{Ctx, Machine, Mailbox, Ready, Step};
    use std::sync::Arc;

    let s = TargetServer::start();
    let sp = spec(&s.url("/never-answer"));
    let ProbeKind::Http(h) = &sp.kind else { unreachable!() };
    let mut m = HttpProbe::new(h, sp.timeout, sp.output_limit);
    let mut poll = Poll::new().unwrap();
    let waker = Arc::new(Waker::new(poll.registry(), mio::Token(99)).unwrap());
    let mailbox = Mailbox::new(waker);
    let mut events = Events::with_capacity(8);
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    assert!(matches!(m.start(&mut cx), Step::Pending));
    assert!(m.wake_at().is_some());
    // Drive until the request is on the server.
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.requests() == 0 && Instant::now() < deadline {
        poll.poll(&mut events, Some(Duration::from_millis(50))).unwrap();
        for ev in events.iter() {
            let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
            assert!(matches!(m.ready(&mut cx, ev.token().0, Ready::from_event(ev)), Step::Pending));
        }
    }
    assert_eq!(s.requests(), 1);
    let mut cx = Ctx::new(poll.registry(), Instant::now(), 0, &mailbox, 0);
    m.cancel(&mut cx);
    assert!(
        s.wait_for_connections_closed(1, Duration::from_secs(10)),
        "cancel left the socket open"
    );
    assert_eq!(s.reset_connections(), 1);
}
