//! `prober check --source-address` and `sourceAddress:` in watch files (issue 34), on real
//! sockets: a loopback server reports the peer address it accepted, and every address of
//! 127.0.0.0/8 is this host's on Linux, so a probe bound to 127.0.0.2 is seen from there.

mod common;

use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener};
use std::sync::mpsc::{Receiver, channel};

use common::*;

/// An HTTP server on 127.0.0.1 answering 200 to every request, one per connection, and
/// sending the peer address of each connection it accepts.
fn peer_reporting_server() -> (u16, Receiver<IpAddr>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        // The address accept(2) gives: a TCP probe may have reset the connection already,
        // and getpeername then fails.
        while let Ok((mut conn, peer)) = l.accept() {
            if tx.send(peer.ip()).is_err() {
                return;
            }
            // Bounded: a TCP probe sends nothing and closes, an HTTP one sends its head.
            conn.set_read_timeout(Some(HANG)).unwrap();
            let mut buf = [0u8; 4096];
            if matches!(conn.read(&mut buf), Ok(n) if n > 0) {
                let _ = conn.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        }
    });
    (port, rx)
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn check_binds_the_source_address() {
    let (port, peers) = peer_reporting_server();
    for (target, from) in [
        (format!("tcp://127.0.0.1:{port}"), "127.0.0.2"),
        (format!("http://127.0.0.1:{port}/"), "127.0.0.3"),
    ] {
        let (code, v) = check_json(&["--timeout", "5s", "--source-address", from, target.as_str()]);
        assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
        assert_eq!(peers.recv_timeout(HANG).unwrap(), ip(from), "{target}");
    }

    let (code, v) = check_json(&[
        "--timeout",
        "5s",
        "--source-address",
        "192.0.2.1",
        &format!("tcp://127.0.0.1:{port}"),
    ]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("unreachable")), "{v}");
    assert_eq!(
        v["message"].as_str().unwrap(),
        format!("dial tcp 192.0.2.1:0->127.0.0.1:{port}: bind: cannot assign requested address")
    );
}

#[test]
fn source_address_flag_errors() {
    assert_usage_error(
        &["check", "--source-address", "127.0.0.2:80", "tcp://127.0.0.1:1"],
        "--source-address: source address \"127.0.0.2:80\" is not an IP address",
    );
    assert_usage_error(
        &["check", "--source-address", "127.0.0.2", "--", "true"],
        "--source-address: a source address applies to TCP, HTTP, gRPC, DNS and ICMP probes only",
    );
}

#[test]
fn watch_file_source_address_per_target() {
    let (port, peers) = peer_reporting_server();
    let text = format!(
        "targets:\n\
         - name: web\n  sourceAddress: 127.0.0.4\n  readinessProbe:\n    \
         httpGet: {{host: 127.0.0.1, path: /health, port: {port}}}\n    \
         periodMilliseconds: 100\n    timeoutMilliseconds: 2000\n    failureThreshold: 1\n"
    );
    let file = write_file("yaml", &text);
    let r = run(&["watch", "--until-ready", "--for", "60s", file.path()]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("web readiness success"), "{}", r.stdout);
    assert_eq!(peers.recv_timeout(HANG).unwrap(), ip("127.0.0.4"));

    let bad = write_file("yaml", &text.replace("127.0.0.4", "localhost"));
    let r = run(&["watch", "--until-ready", "--for", "5s", bad.path()]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "target \"web\": sourceAddress: source address \"localhost\" is not an IP address"
        ),
        "{}",
        r.stderr
    );
}
