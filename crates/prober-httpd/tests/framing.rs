//! Request smuggling: a body whose framing a proxy in front of the server could read otherwise
//! (differing `Content-Length` values, `Transfer-Encoding` with `Content-Length`) is refused
//! with 400 and the connection closed, so that the body is never answered as a request of its
//! own; over real loopback sockets.

mod common;

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{METRICS, connect, get};
use prober_httpd::{Response, Running, Server};

/// A server with `/metrics`, and `/smuggled`, which counts the requests that reach it.
fn server() -> (Running, Arc<AtomicUsize>) {
    let reached = Arc::new(AtomicUsize::new(0));
    let mut s = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    s.route("/metrics", |_| Response::text(200, METRICS));
    let count = reached.clone();
    s.route("/smuggled", move |_| {
        count.fetch_add(1, Ordering::Relaxed);
        Response::text(200, "smuggled\n")
    });
    (s.spawn("test-http").unwrap(), reached)
}

/// A request to `/smuggled`, sent as the body of a request framed by `framing`.
fn smuggle(framing: &str) -> String {
    let inner = "GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n";
    let framing = framing.replace("{N}", &inner.len().to_string());
    format!("GET /metrics HTTP/1.1\r\nHost: t\r\n{framing}\r\n{inner}")
}

/// Sends `request` and reads everything until the server closes the connection.
fn everything_answered(server: &Running, request: &str) -> String {
    let mut s = connect(server.local_addr());
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    if let Err(e) = s.read_to_end(&mut out) {
        panic!("not closed ({e}) after answering {:?}", String::from_utf8_lossy(&out));
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn framing_a_proxy_could_read_otherwise_is_refused_and_the_body_never_answered() {
    let (server, reached) = server();
    for framing in [
        "Content-Length: 0\r\nContent-Length: {N}\r\n",
        "Content-Length: {N}\r\nContent-Length: 0\r\n",
        "Content-Length: 0, {N}\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 0\r\n",
        "Content-Length: 0\r\nTransfer-Encoding: identity\r\n",
        "Content-Length: +0\r\n",
    ] {
        let answers = everything_answered(&server, &smuggle(framing));
        assert!(answers.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{framing:?}: {answers}");
        assert!(answers.contains("Connection: close\r\n"), "{framing:?}: {answers}");
        assert_eq!(answers.matches("HTTP/1.1 ").count(), 1, "{framing:?}: {answers}");
        assert!(!answers.contains("smuggled"), "{framing:?}: {answers}");
    }
    assert_eq!(reached.load(Ordering::Relaxed), 0, "a body was answered as a request");
    // The same length repeated is that length: answered, and the connection closed after it
    // (a body is never read), so the body is not answered either.
    let repeated = smuggle("Content-Length: {N}\r\nContent-Length: {N}\r\n");
    let answers = everything_answered(&server, &repeated);
    assert!(answers.starts_with("HTTP/1.1 200 OK\r\n"), "{answers}");
    assert_eq!(answers.matches("HTTP/1.1 ").count(), 1, "{answers}");
    assert_eq!(reached.load(Ordering::Relaxed), 0, "a body was answered as a request");
    // Plain requests are still answered, and kept alive.
    assert_eq!(get(server.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n").status, 200);
}
