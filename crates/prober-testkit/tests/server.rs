//! Talks to the target server over real loopback sockets with `std::net::TcpStream`.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use prober_testkit::{TargetServer, closed_port};

/// How long a test waits for the server to do something before failing: no timeout is under
/// test here, so this only turns a hang into a failure; every wait returns at the event.
const WAIT: Duration = Duration::from_secs(5);

/// Sends `request` verbatim and reads until EOF.
fn raw(server: &TargetServer, request: &str) -> Vec<u8> {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    out
}

struct Resp {
    status_line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn status(&self) -> u16 {
        self.status_line.split(' ').nth(1).unwrap().parse().unwrap()
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

fn parse(bytes: &[u8]) -> Resp {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n").expect("complete head");
    let head = std::str::from_utf8(&bytes[..end]).unwrap();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap().to_owned();
    let headers = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.to_owned(), v.trim().to_owned())
        })
        .collect();
    Resp { status_line, headers, body: bytes[end + 4..].to_vec() }
}

fn get(server: &TargetServer, path: &str) -> Resp {
    parse(&raw(
        server,
        &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n", server.port()),
    ))
}

#[test]
fn ok_status_and_not_found() {
    let s = TargetServer::start();
    let r = get(&s, "/");
    assert_eq!((r.status(), r.text()), (200, "ok"));
    assert_eq!(r.status_line, "HTTP/1.1 200 OK");
    assert_eq!(r.header("connection"), Some("close"));
    assert_eq!(r.header("content-length"), Some("2"));
    let r = get(&s, "/status/503");
    assert_eq!(r.status_line, "HTTP/1.1 503 Service Unavailable");
    assert_eq!(r.text(), "status 503");
    let r = get(&s, "/status/299?body=hello%20there%26x");
    assert_eq!(r.status_line, "HTTP/1.1 299 Status");
    assert_eq!(r.text(), "hello there&x");
    let r = get(&s, "/status/204");
    assert_eq!((r.status(), r.header("content-length"), r.text()), (204, None, ""));
    let r = get(&s, "/nope");
    assert_eq!((r.status(), r.text()), (404, "not found"));
    let r = get(&s, "/status/abc");
    assert_eq!(r.status(), 400);
    assert_eq!(s.requests(), 6);
    assert_eq!(s.connections(), 6);
    assert!(s.url("/x").starts_with("http://127.0.0.1:"));
    assert!(s.url("/x").ends_with(&format!(":{}/x", s.port())));
}

#[test]
fn echo_routes() {
    let s = TargetServer::start();
    let req = |path: &str| {
        parse(&raw(
            &s,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: h.example:81\r\nX-B:  two\r\nx-a: 1\r\nAccept: */*\r\n\r\n"
            ),
        ))
    };
    assert_eq!(req("/echo/headers").text(), "Host: h.example:81\nX-B: two\nx-a: 1\nAccept: */*\n");
    assert_eq!(req("/echo/header-names").text(), "Accept\nX-B\nx-a");
    assert_eq!(req("/echo/header-count").text(), "3");
    assert_eq!(req("/echo/host").text(), "h.example:81");
    assert_eq!(req("/echo/request-line?q=1").text(), "GET /echo/request-line?q=1 HTTP/1.1");
    assert_eq!(req("/host-must-be/h.example/anything").text(), "ok");
    let r = req("/host-must-be/other.example");
    assert_eq!((r.status(), r.text()), (400, "wrong host"));
}

#[test]
fn fixed_length_bodies() {
    let s = TargetServer::start();
    for n in [0usize, 1, 65_536, 300_001] {
        let r = get(&s, &format!("/body/{n}"));
        assert_eq!(r.status(), 200);
        assert_eq!(r.header("content-length"), Some(n.to_string().as_str()));
        assert_eq!(r.body.len(), n);
        assert!(r.body.iter().all(|&b| b == b'a'));
    }
    let r = parse(&raw(&s, "HEAD /body/10 HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert_eq!((r.header("content-length"), r.body.len()), (Some("10"), 0));
}

#[test]
fn chunked_framing_is_exact() {
    let s = TargetServer::start();
    let r = get(&s, "/chunked/2500?chunk=1000");
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert_eq!(r.header("content-length"), None);
    let a = |n| "a".repeat(n);
    let want =
        format!("3e8\r\n{}\r\n3e8\r\n{}\r\n1f4\r\n{}\r\n0\r\n\r\n", a(1000), a(1000), a(500));
    assert_eq!(r.text(), want);
    assert_eq!(get(&s, "/chunked/0").text(), "0\r\n\r\n");
    assert_eq!(get(&s, "/chunked/3?chunk=1").text(), "1\r\na\r\n1\r\na\r\n1\r\na\r\n0\r\n\r\n");
    let r = get(&s, "/content-length-and-chunked");
    assert_eq!((r.header("content-length"), r.text()), (Some("5"), "2\r\nok\r\n0\r\n\r\n"));
    assert!(get(&s, "/bad-chunk").text().starts_with("zz\r\n"));
}

#[test]
fn truncated_close_delimited_and_raw_routes() {
    let s = TargetServer::start();
    let r = get(&s, "/truncated/100/10");
    assert_eq!((r.header("content-length"), r.body.len()), (Some("100"), 10));
    let r = get(&s, "/close-delimited/70000");
    assert_eq!((r.header("content-length"), r.header("transfer-encoding")), (None, None));
    assert_eq!(r.body.len(), 70_000);
    assert!(raw(&s, "GET /close HTTP/1.1\r\n\r\n").is_empty());
    assert_eq!(raw(&s, "GET /garbage HTTP/1.1\r\n\r\n"), b"this is not http\r\n\r\n");
    assert_eq!(raw(&s, "GET /http09 HTTP/1.1\r\n\r\n"), b"hello");
    let r = get(&s, "/huge-headers/20000");
    let fill: usize = r
        .headers
        .iter()
        .filter(|(n, _)| n.starts_with("X-Fill-"))
        .map(|(n, v)| n.len() + v.len() + 4)
        .sum();
    assert!((19_000..=21_000).contains(&fill), "fill {fill}");
    assert_eq!(r.text(), "ok");
    let r = parse(&raw(&s, "GET /nothing HTTP/1.1\r\nbroken header\r\n\r\n"));
    assert_eq!(r.status(), 400);
}

#[test]
fn reset_routes() {
    let s = TargetServer::start();
    let mut c = TcpStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(WAIT)).unwrap();
    c.write_all(b"GET /reset HTTP/1.1\r\n\r\n").unwrap();
    let err = c.read(&mut [0u8; 16]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionReset);

    let mut c = TcpStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(WAIT)).unwrap();
    c.write_all(b"GET /reset-after/100000 HTTP/1.1\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let err = c.read_to_end(&mut got).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionReset);
    let r = parse(&got);
    assert_eq!((r.header("content-length"), r.body.len()), (Some("200000"), 100_000));
    // Server-initiated resets are not client resets.
    assert!(s.wait_for_connections_closed(2, WAIT));
    assert_eq!(s.reset_connections(), 0);
}

#[test]
fn redirects() {
    let s = TargetServer::start();
    let r = get(&s, "/redirect?loc=%2Fok%3Fa%3Db&code=307");
    assert_eq!((r.status(), r.header("location"), r.text()), (307, Some("/ok?a=b"), "redirecting"));
    let r = get(&s, "/redirect?loc=http://127.0.0.1:1/x");
    assert_eq!((r.status(), r.header("location")), (302, Some("http://127.0.0.1:1/x")));
    assert_eq!(get(&s, "/loop").header("location"), Some("/loop"));
    assert_eq!(get(&s, "/redirect-chain/2").header("location"), Some("/redirect-chain/1"));
    assert_eq!(get(&s, "/redirect-chain/0").text(), "chain end");
    let r = get(&s, "/no-location/301?body=moved");
    assert_eq!((r.status(), r.header("location"), r.text()), (301, None, "moved"));
    assert_eq!(get(&s, "/bad-location").header("location"), Some("http://[::1"));
}

#[test]
fn bytes_builder() {
    let s = TargetServer::start();
    let r = get(&s, "/bytes?status=201&body=hi&header=X-One:1&header=X-Two:%202");
    assert_eq!(r.status_line, "HTTP/1.1 201 Created");
    assert_eq!((r.header("x-one"), r.header("x-two"), r.text()), (Some("1"), Some("2"), "hi"));
    assert_eq!(r.header("content-length"), Some("2"));
    let r = get(&s, "/bytes?body=abc&header=Content-Length:1&reason=Fine");
    assert_eq!(
        (r.status_line.as_str(), r.header("content-length"), r.text()),
        ("HTTP/1.1 200 Fine", Some("1"), "abc")
    );
}

#[test]
fn health_flip() {
    let s = TargetServer::start();
    assert!(s.healthy());
    assert_eq!(get(&s, "/health").text(), "ok");
    s.set_healthy(false);
    let r = get(&s, "/health");
    assert_eq!((r.status(), r.text()), (503, "unhealthy"));
    assert_eq!(get(&s, "/control/healthy").text(), "ok");
    assert!(s.healthy());
    assert_eq!(get(&s, "/health").status(), 200);
    get(&s, "/control/unhealthy");
    assert!(!s.healthy());
}

#[test]
fn silent_and_reset_connections() {
    let s = TargetServer::start();
    drop(TcpStream::connect(s.addr()).unwrap());
    assert!(s.wait_for_connections_closed(1, WAIT));
    assert_eq!((s.connections(), s.silent_connections(), s.reset_connections()), (1, 1, 0));

    let c = TcpStream::connect(s.addr()).unwrap();
    socket2::SockRef::from(&c).set_linger(Some(Duration::ZERO)).unwrap();
    drop(c);
    assert!(s.wait_for_connections_closed(2, WAIT));
    assert_eq!((s.connections(), s.silent_connections(), s.reset_connections()), (2, 2, 1));

    // A request followed by a reset is a reset but not silent.
    let mut c = TcpStream::connect(s.addr()).unwrap();
    c.write_all(b"GET /never-answer HTTP/1.1\r\n\r\n").unwrap();
    assert!(s.wait_for_requests(1, WAIT), "the request never arrived");
    socket2::SockRef::from(&c).set_linger(Some(Duration::ZERO)).unwrap();
    drop(c);
    assert!(s.wait_for_connections_closed(3, WAIT));
    assert_eq!((s.silent_connections(), s.reset_connections(), s.requests()), (2, 2, 1));
    assert!(!s.wait_for_connections_closed(4, Duration::from_millis(20)));
}

#[test]
fn many_concurrent_connections() {
    let s = TargetServer::start();
    let conns: Vec<TcpStream> = (0..300).map(|_| TcpStream::connect(s.addr()).unwrap()).collect();
    assert!(s.wait_for_connections(300, WAIT), "accepted {} of 300", s.connections());
    assert_eq!(get(&s, "/ok").text(), "ok");
    drop(conns);
    assert!(s.wait_for_connections_closed(301, WAIT));
    assert_eq!(s.silent_connections(), 300);
}

#[test]
fn slow_and_drip() {
    let s = TargetServer::start();
    let t = Instant::now();
    assert_eq!(get(&s, "/slow-headers/100").text(), "ok");
    assert!(t.elapsed() >= Duration::from_millis(100));
    let t = Instant::now();
    let r = get(&s, "/drip/3/30");
    assert_eq!((r.header("content-length"), r.text()), (Some("3"), "aaa"));
    assert!(t.elapsed() >= Duration::from_millis(90));

    let mut c = TcpStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(150))).unwrap();
    c.write_all(b"GET /stall-body/5 HTTP/1.1\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let err = c.read_to_end(&mut got).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut));
    let r = parse(&got);
    assert_eq!((r.header("content-length"), r.text()), (Some("1005"), "aaaaa"));
    c.shutdown(Shutdown::Write).unwrap();
    assert!(s.wait_for_connections_closed(3, WAIT));
}

#[test]
fn drop_stops_the_server() {
    let s = TargetServer::start();
    let addr = s.addr();
    let mut idle = TcpStream::connect(addr).unwrap();
    assert!(s.wait_for_connections(1, WAIT), "the connection was never accepted");
    // Dropping returns once the server has stopped, an idle connection notwithstanding.
    let (dropped, stopped) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(s);
        let _ = dropped.send(());
    });
    stopped.recv_timeout(WAIT).expect("dropping the server returned");
    assert!(TcpStream::connect(addr).is_err());
    idle.set_read_timeout(Some(WAIT)).unwrap();
    assert_eq!(idle.read(&mut [0u8; 8]).unwrap_or(0), 0);
    assert!(TcpStream::connect(("127.0.0.1", closed_port())).is_err());
}

#[test]
fn ipv6_when_available() {
    let s = match TargetServer::start_v6() {
        Ok(s) => s,
        Err(e) => {
            // A host without IPv6 loopback cannot run this case: say so, do not pass quietly.
            eprintln!("ipv6_when_available: not run, no IPv6 loopback here: {e}");
            return;
        }
    };
    assert_eq!(s.url("/ok"), format!("http://[::1]:{}/ok", s.port()));
    let r = get(&s, "/host-must-be/::1");
    assert_eq!(r.status(), 400); // Host was 127.0.0.1:PORT
    let r = parse(&raw(
        &s,
        &format!("GET /host-must-be/%5B%3A%3A1%5D HTTP/1.1\r\nHost: [::1]:{}\r\n\r\n", s.port()),
    ));
    assert_eq!(r.text(), "ok");
}

#[test]
fn binary_serves_until_stdin_eof() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_prober-target"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port: u16 = line.trim_end().parse().unwrap();
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(b"GET /status/201 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    let r = parse(&got);
    assert_eq!((r.status(), r.text()), (201, "status 201"));
    drop(child.stdin.take());
    let t = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(t.elapsed() < WAIT, "prober-target did not exit on stdin EOF");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0));

    let out = Command::new(env!("CARGO_BIN_EXE_prober-target")).arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(!out.stderr.is_empty());
}
