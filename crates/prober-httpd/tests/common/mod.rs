//! A server with a few routes, and a raw HTTP client over real loopback sockets.

#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use prober_httpd::{Limits, Response, Running, Server, WebConfig, exposition};

/// Longer than anything a test waits for: a read that takes this long has hung.
pub const HANG: Duration = Duration::from_secs(30);

/// The exposition `/metrics` serves.
pub const METRICS: &str = "# HELP up Up.\n# TYPE up gauge\nup 1\n# EOF\n";

/// A server with `/metrics`, `/big` (8 MiB, to fill a client's socket) and `/panic`.
pub fn start(limits: Limits, web: Option<WebConfig>) -> Running {
    let mut s = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap().with_limits(limits);
    if let Some(w) = web {
        s = s.with_web_config(w);
    }
    s.route("/metrics", |req| exposition::respond(req, METRICS.to_string()));
    s.route("/big", |_| Response::text(200, vec![b'x'; 8 << 20]));
    s.route("/panic", |_| panic!("a handler's bug"));
    s.spawn("test-http").unwrap()
}

/// One answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(HANG)).unwrap();
    s
}

/// Reads one answer (head, then a body of its Content-Length) from a kept connection.
pub fn read_answer<R: Read + ?Sized>(s: &mut R) -> Answer {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut byte).expect("read an answer's head");
        assert!(n > 0, "closed before a whole head: {:?}", String::from_utf8_lossy(&raw));
        raw.push(byte[0]);
    }
    let head = String::from_utf8(raw).unwrap();
    let status = head[9..12].parse().unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("a Content-Length")
        .parse()
        .unwrap();
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    Answer { status, head, body: String::from_utf8_lossy(&body).into_owned() }
}

/// Sends `request` on a new connection and reads the answer.
pub fn get(addr: SocketAddr, request: &str) -> Answer {
    let mut s = connect(addr);
    s.write_all(request.as_bytes()).unwrap();
    read_answer(&mut s)
}

/// `GET /metrics`, kept alive.
pub const SCRAPE: &str = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";

/// Whether the server has closed `s` (end of stream or reset), without waiting.
pub fn closed(s: &mut TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut b = [0u8; 64];
    let r = s.read(&mut b);
    s.set_nonblocking(false).unwrap();
    match r {
        Ok(0) => true,
        Ok(n) => panic!("unexpected bytes: {:?}", String::from_utf8_lossy(&b[..n])),
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(_) => true,
    }
}

/// Waits (blocking, up to [`HANG`]) until the server closes `s`; panics on data.
pub fn wait_closed(s: &mut TcpStream) {
    let mut b = [0u8; 64];
    match s.read(&mut b) {
        Ok(0) => {}
        Ok(n) => panic!("unexpected bytes: {:?}", String::from_utf8_lossy(&b[..n])),
        Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
            panic!("not closed within {HANG:?}")
        }
        Err(_) => {}
    }
}

/// A fresh directory for a test's files.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("prober-httpd-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
