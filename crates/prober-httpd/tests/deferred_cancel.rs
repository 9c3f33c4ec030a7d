//! A deferred request nobody waits for any more is cancelled (its client closed, reset or
//! half-closed the connection; its time ran out), and deferred requests, however many clients
//! leave them hanging, never take the connections `/metrics` needs.

mod common;

use std::io::Write;
use std::net::Shutdown;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::{HANG, SCRAPE, connect, get, read_answer, wait_closed};
use prober_httpd::{Limits, Reply, Response, Running, Server, exposition};

/// A server whose `/later` hands each request's [`Reply`] (with its query) to the test.
fn start(limits: Limits) -> (Running, Receiver<(String, Reply)>) {
    let (tx, rx) = channel();
    let tx = std::sync::Mutex::new(tx);
    let mut s = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap().with_limits(limits);
    s.route("/metrics", |req| exposition::respond(req, common::METRICS.to_string()));
    s.route_deferred("/later", move |req, reply| {
        let _ = tx.lock().unwrap().send((req.query.clone(), reply));
    });
    (s.spawn("test-http").unwrap(), rx)
}

/// The reply's cancellation, as a channel that receives once it is cancelled.
fn cancelled(reply: &Reply) -> Receiver<()> {
    let (tx, rx) = channel();
    reply.cancel_signal().on_cancel(move || {
        let _ = tx.send(());
    });
    rx
}

#[test]
fn a_client_that_closes_or_half_closes_cancels_its_waiting_request() {
    let (server, replies) = start(Limits::default());
    let addr = server.local_addr();
    for how in ["close", "half-close"] {
        let mut client = connect(addr);
        client.write_all(b"GET /later HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
        let (_, reply) = replies.recv_timeout(HANG).unwrap();
        let gone = cancelled(&reply);
        match how {
            "close" => drop(client),
            // Go's net/http treats EOF on the connection as the client gone; so does this.
            _ => client.shutdown(Shutdown::Write).unwrap(),
        }
        gone.recv_timeout(HANG).unwrap_or_else(|_| panic!("{how}: not cancelled"));
        assert!(reply.cancel_signal().is_cancelled());
        // Answering it now reaches no one, and the server goes on.
        reply.send(Response::text(200, "late\n"));
        assert_eq!(get(addr, SCRAPE).status, 200);
    }
}

#[test]
fn a_request_sent_and_closed_at_once_is_cancelled() {
    let (server, replies) = start(Limits::default());
    let mut client = connect(server.local_addr());
    client.write_all(b"GET /later HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    drop(client);
    let (_, reply) = replies.recv_timeout(HANG).unwrap();
    // Registered after the client went (possibly after the loop saw it): runs at once.
    cancelled(&reply).recv_timeout(HANG).expect("not cancelled");
}

#[test]
fn a_pipelined_request_does_not_cancel_the_waiting_one() {
    let (server, replies) = start(Limits::default());
    let mut client = connect(server.local_addr());
    client
        .write_all(
            b"GET /later?n=1 HTTP/1.1\r\nHost: t\r\n\r\nGET /later?n=2 HTTP/1.1\r\nHost: t\r\n\r\n",
        )
        .unwrap();
    let (query, first) = replies.recv_timeout(HANG).unwrap();
    assert_eq!(query, "n=1");
    let signal = first.cancel_signal();
    first.send(Response::text(200, "one\n"));
    assert_eq!(read_answer(&mut client).body, "one\n");
    assert!(!signal.is_cancelled(), "the pipelined bytes cancelled the first request");
    let (query, second) = replies.recv_timeout(HANG).unwrap();
    assert_eq!(query, "n=2");
    second.send(Response::text(200, "two\n"));
    assert_eq!(read_answer(&mut client).body, "two\n");
}

#[test]
fn past_the_deferred_timeout_the_request_is_cancelled() {
    let limits = Limits { deferred_timeout: Duration::from_millis(300), ..Limits::default() };
    let (server, replies) = start(limits);
    let mut client = connect(server.local_addr());
    client.write_all(b"GET /later HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let (_, reply) = replies.recv_timeout(HANG).unwrap();
    let gone = cancelled(&reply);
    wait_closed(&mut client);
    gone.recv_timeout(HANG).expect("not cancelled");
}

#[test]
fn hanging_deferred_requests_never_lock_out_metrics() {
    let limits = Limits { max_connections: 8, reserved_connections: 2, ..Limits::default() };
    assert_eq!(limits.max_deferred(), 6);
    let (server, replies) = start(limits);
    let addr = server.local_addr();
    // Twice as many clients as connections, each waiting on an answer that never comes.
    let mut waiting = Vec::new();
    let mut refused = 0;
    for _ in 0..16 {
        let mut c = connect(addr);
        c.write_all(b"GET /later HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
        if waiting.len() < 6 {
            waiting.push((c, replies.recv_timeout(HANG).expect("deferred").1));
        } else {
            let a = read_answer(&mut c);
            assert_eq!(a.status, 503, "{}", a.head);
            assert!(a.body.starts_with("too many requests waiting for an answer"), "{}", a.body);
            assert!(a.head.contains("Retry-After: 1\r\n"), "{}", a.head);
            refused += 1;
        }
        // The reserve keeps /metrics answered throughout.
        let a = get(addr, SCRAPE);
        assert_eq!(a.status, 200, "{}", a.head);
    }
    assert_eq!(refused, 10);
    // One answered: its place is free for the next deferred request.
    let (mut c, reply) = waiting.pop().unwrap();
    reply.send(Response::text(200, "done\n"));
    assert_eq!(read_answer(&mut c).status, 200);
    drop(c);
    let mut next = connect(addr);
    next.write_all(b"GET /later?n=next HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let (query, reply) = replies.recv_timeout(HANG).unwrap();
    assert_eq!(query, "n=next");
    reply.send(Response::text(200, "next\n"));
    assert_eq!(read_answer(&mut next).body, "next\n");
}

#[test]
fn a_client_that_pipelines_past_the_head_bound_then_closes_cancels_its_request() {
    let (server, replies) = start(Limits::default());
    let mut client = connect(server.local_addr());
    client.write_all(b"GET /later HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    let (_, reply) = replies.recv_timeout(HANG).unwrap();
    let gone = cancelled(&reply);
    // More than the 16 KiB the server keeps of a pipelined next request, then gone.
    client.write_all(&vec![b'X'; 17_000]).unwrap();
    drop(client);
    gone.recv_timeout(HANG).expect("the client went but its request was not cancelled");
}
