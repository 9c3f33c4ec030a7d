//! Deferred routes: an answer that waits on something (a probe's outcome) holds its own
//! connection only, never the loop; a reply dropped unsent is a 500; a reply too late finds
//! its connection closed and reaches no one else.

mod common;

use std::io::Write;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::{HANG, SCRAPE, connect, get, read_answer, wait_closed};
use prober_httpd::{Limits, Reply, Response, Running, Server, exposition};

/// A server whose `/later` hands each request's [`Reply`] (with its query) to the test, and
/// whose `/drop` drops it unsent.
fn start(limits: Limits) -> (Running, Receiver<(String, Reply)>) {
    let (tx, rx) = channel();
    let tx = std::sync::Mutex::new(tx);
    let mut s = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap().with_limits(limits);
    s.route("/metrics", |req| exposition::respond(req, common::METRICS.to_string()));
    s.route_deferred("/later", move |req, reply| {
        let _ = tx.lock().unwrap().send((req.query.clone(), reply));
    });
    s.route_deferred("/drop", |_, reply| drop(reply));
    (s.spawn("test-http").unwrap(), rx)
}

#[test]
fn a_waiting_answer_holds_its_connection_only_and_arrives_when_sent() {
    let (server, replies) = start(Limits::default());
    let addr = server.local_addr();
    let mut waiting = connect(addr);
    waiting.write_all(b"GET /later?n=1 HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let (query, reply) = replies.recv_timeout(HANG).expect("the handler got the request");
    assert_eq!(query, "n=1");
    // The loop serves others meanwhile.
    assert_eq!(get(addr, SCRAPE).status, 200);
    // Sent from another thread, as an engine's dispatcher does.
    std::thread::spawn(move || reply.send(Response::text(200, "probe_success 1\n")))
        .join()
        .unwrap();
    let a = read_answer(&mut waiting);
    assert_eq!((a.status, a.body.as_str()), (200, "probe_success 1\n"));
    // The connection is kept for the next request, deferred again.
    waiting.write_all(b"GET /later?n=2 HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let (query, reply) = replies.recv_timeout(HANG).unwrap();
    assert_eq!(query, "n=2");
    reply.send(Response::text(403, "refused\n"));
    assert_eq!(read_answer(&mut waiting).status, 403);
}

#[test]
fn a_reply_dropped_unsent_is_a_500() {
    let (server, _replies) = start(Limits::default());
    let a = get(server.local_addr(), "GET /drop HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(a.status, 500, "{}", a.head);
    assert_eq!(a.body, "internal error: no answer\n");
}

#[test]
fn past_the_deferred_timeout_the_connection_closes_and_a_late_reply_reaches_no_one() {
    let limits = Limits { deferred_timeout: Duration::from_millis(300), ..Limits::default() };
    let (server, replies) = start(limits);
    let addr = server.local_addr();
    let mut waiting = connect(addr);
    waiting.write_all(b"GET /later HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let (_, late) = replies.recv_timeout(HANG).unwrap();
    wait_closed(&mut waiting);
    // A newer connection waits on its own reply; the late one must not answer it.
    let mut next = connect(addr);
    next.write_all(b"GET /later?n=next HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let (query, reply) = replies.recv_timeout(HANG).unwrap();
    assert_eq!(query, "n=next");
    late.send(Response::text(200, "late\n"));
    reply.send(Response::text(200, "on time\n"));
    assert_eq!(read_answer(&mut next).body, "on time\n");
}
