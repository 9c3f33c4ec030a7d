//! TCP send/expect against real listeners on loopback, one thread per scripted peer: a
//! Redis-style `PING`/`+PONG`, an SMTP `220` banner, a line protocol, and hostile peers (a
//! wrong banner then close, silence until the deadline, an endless stream).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prober_core::{Outcome, Pattern, ProbeKind, ProbeResult, ProbeSpec, Reason, unescape};
use prober_io::run_to_completion;
use prober_tcp::TcpProbe;

/// Listens on loopback and runs `serve` on the first connection.
fn peer(serve: impl FnOnce(TcpStream) + Send + 'static) -> (u16, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        serve(s);
    });
    (port, h)
}

fn probe(port: u16, send: &str, expect: Option<&str>, timeout: Duration) -> Outcome {
    let mut spec = ProbeSpec::tcp("127.0.0.1", port.into()).unwrap();
    if !send.is_empty() {
        spec.set_send(unescape(send).unwrap()).unwrap();
    }
    if let Some(re) = expect {
        spec.set_expect_reply(Pattern::new(re).unwrap()).unwrap();
    }
    let ProbeKind::Tcp(t) = &spec.kind else { unreachable!() };
    run_to_completion(&mut TcpProbe::new(t, timeout))
}

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn redis_ping_pong() {
    let (port, h) = peer(|s| {
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let mut s = s;
        let reply: &[u8] = if line == "PING\r\n" { b"+PONG\r\n" } else { b"-ERR unknown\r\n" };
        s.write_all(reply).unwrap();
        // Stay open: the match, not the close, ends the probe.
        let _ = s.read(&mut [0u8; 16]);
    });
    let o = probe(port, "PING\\r\\n", Some(r"^\+PONG\r\n"), SECOND);
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
    assert_eq!(o.output, b"+PONG\r\n");
    assert!(o.timings.connect.is_some() && o.timings.first_byte.is_some());
    h.join().unwrap();
}

#[test]
fn smtp_banner_without_sending() {
    let (port, h) = peer(|mut s| {
        s.write_all(b"220 mail.example ESMTP ready\r\n").unwrap();
        let _ = s.read(&mut [0u8; 16]);
    });
    let o = probe(port, "", Some("^220 "), SECOND);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    h.join().unwrap();
}

#[test]
fn wrong_banner_then_close_says_what_arrived() {
    let (port, h) = peer(|mut s| {
        s.write_all(b"554 no service\r\n").unwrap();
    });
    let o = probe(port, "", Some("^220 "), SECOND);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body), "{o:?}");
    assert_eq!(
        o.message,
        "reply did not match \"^220 \": the peer closed the connection, 16 bytes received: \"554 no service\\r\\n\""
    );
    assert_eq!(o.output, b"554 no service\r\n");
    h.join().unwrap();
}

#[test]
fn line_protocol_reply_split_over_writes() {
    let (port, h) = peer(|s| {
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert_eq!(line, "STATUS\n");
        let mut s = s;
        for part in [&b"sta"[..], b"tus: o", b"k\n"] {
            s.write_all(part).unwrap();
            s.flush().unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = s.read(&mut [0u8; 16]);
    });
    let o = probe(port, "STATUS\\n", Some("(?m)^status: ok$"), SECOND);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.output, b"status: ok\n");
    h.join().unwrap();
}

#[test]
fn silent_peer_times_out_at_the_deadline() {
    let (port, h) = peer(|mut s| {
        s.write_all(b"hello").unwrap();
        // Silent until the probe closes.
        let _ = s.read(&mut [0u8; 16]);
    });
    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    let o = probe(port, "", Some("^never"), timeout);
    let took = started.elapsed();
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert_eq!(
        o.message,
        "reply did not match \"^never\": no match within 300ms, 5 bytes received: \"hello\""
    );
    assert!(took >= timeout && took < timeout * 10, "{took:?}");
    h.join().unwrap();
}

#[test]
fn endless_stream_stops_at_the_reply_limit() {
    let (port, h) = peer(|mut s| {
        let chunk = [b'x'; 4096];
        // Until the probe closes (a write error ends the loop).
        while s.write_all(&chunk).is_ok() {}
    });
    let o = probe(port, "", Some("^y"), Duration::from_secs(5));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body), "{o:?}");
    assert!(o.message.contains("10240 bytes read, 10240 bytes received"), "{}", o.message);
    assert_eq!(o.output.len(), 10240);
    h.join().unwrap();
}

#[test]
fn send_only_succeeds_once_written() {
    let (port, h) = peer(|s| {
        let mut got = Vec::new();
        let _ = BufReader::new(s).read_until(b'\n', &mut got);
        assert_eq!(got, b"QUIT\r\n");
    });
    let o = probe(port, "QUIT\\r\\n", None, SECOND);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    h.join().unwrap();
}
