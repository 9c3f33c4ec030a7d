//! Probes whose socket is bound to a source address before it connects (issue 34,
//! blackbox_exporter's `source_ip_address`), against real loopback servers that report the peer
//! address they accepted: every address of 127.0.0.0/8 is this host's on Linux, so a probe
//! bound to 127.0.0.2 reaches 127.0.0.1 from 127.0.0.2. An address the host does not have
//! (192.0.2.1, TEST-NET-1) fails the bind, naming it; a source of the other family than the
//! target's fails, naming both; in a network namespace the bind looks for the address there.

mod common;

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::thread::JoinHandle;

use common::*;
use prober_core::{IpFamily, ProbeResult, ProbeSpec, Reason};
use prober_engine::check;
use prober_testkit::netns::TestNetns;

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Accepts one connection on `listener`, reads what the client sends first (up to a blank
/// line, or whatever one read gives), answers `reply` and returns the peer address seen.
fn serve_once(listener: TcpListener, reply: &'static [u8]) -> JoinHandle<SocketAddr> {
    std::thread::spawn(move || {
        let (mut conn, peer) = listener.accept().expect("a connection");
        // Bounded: the probe's own timeout (2 s) ends it first.
        conn.set_read_timeout(Some(ms(5000))).unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") && seen.len() < 64 * 1024 {
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
            if reply.is_empty() {
                break; // TCP and gRPC: the first bytes (or the close) are enough
            }
        }
        let _ = conn.write_all(reply);
        peer
    })
}

fn listener(addr: &str) -> (TcpListener, u16) {
    let l = TcpListener::bind(addr).unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn tcp(host: &str, port: u16) -> ProbeSpec {
    ProbeSpec::tcp(host, port.into()).unwrap().with_timeout(ms(2000)).unwrap()
}

#[test]
fn tcp_probe_connects_from_the_source_address() {
    let (l, port) = listener("127.0.0.1:0");
    let seen = serve_once(l, b"");
    let o = check(&tcp("127.0.0.1", port).with_source_address(ip("127.0.0.2")).unwrap());
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(seen.join().unwrap().ip(), ip("127.0.0.2"));

    // IPv6: ::1 is the only loopback address, bound explicitly.
    let (l, port) = listener("[::1]:0");
    let seen = serve_once(l, b"");
    let o = check(&tcp("::1", port).with_source_address(ip("::1")).unwrap());
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(seen.join().unwrap().ip(), ip("::1"));
}

#[test]
fn http_probe_binds_every_hop() {
    let (second, second_port) = listener("127.0.0.1:0");
    let (first, first_port) = listener("127.0.0.1:0");
    let redirect = format!(
        "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{second_port}/next\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    let first_seen = serve_once(first, Box::leak(redirect.into_bytes().into_boxed_slice()));
    let second_seen = serve_once(second, OK);
    let spec = http(&format!("http://127.0.0.1:{first_port}/"))
        .with_source_address(ip("127.0.0.3"))
        .unwrap();
    let o = check(&spec);
    assert_eq!((o.result, o.http_status), (ProbeResult::Success, Some(200)), "{o:?}");
    assert_eq!(first_seen.join().unwrap().ip(), ip("127.0.0.3"));
    assert_eq!(second_seen.join().unwrap().ip(), ip("127.0.0.3"), "the redirect's hop too");
}

#[test]
fn grpc_probe_connects_from_the_source_address() {
    // The server closes after the client's first bytes: the run fails, but the peer it
    // accepted is the point.
    let (l, port) = listener("127.0.0.1:0");
    let seen = serve_once(l, b"");
    let spec = ProbeSpec::grpc("127.0.0.1", port.into(), "")
        .unwrap()
        .with_timeout(ms(2000))
        .unwrap()
        .with_source_address(ip("127.0.0.4"))
        .unwrap();
    let o = check(&spec);
    assert_eq!(seen.join().unwrap().ip(), ip("127.0.0.4"), "{o:?}");
}

#[test]
fn an_address_not_on_this_host_fails_naming_it() {
    let (_l, port) = listener("127.0.0.1:0");
    let o = check(&tcp("127.0.0.1", port).with_source_address(ip("192.0.2.1")).unwrap());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Unreachable), "{o:?}");
    assert_eq!(
        o.message,
        format!("dial tcp 192.0.2.1:0->127.0.0.1:{port}: bind: cannot assign requested address")
    );
    let url = format!("http://127.0.0.1:{port}/");
    let o = check(&http(&url).with_source_address(ip("192.0.2.1")).unwrap());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Unreachable), "{o:?}");
    assert!(o.message.contains("192.0.2.1:0->127.0.0.1"), "{o:?}");
}

#[test]
fn a_source_of_the_other_family_fails_naming_both() {
    let (_l, port) = listener("127.0.0.1:0");
    let o = check(&tcp("127.0.0.1", port).with_source_address(ip("::1")).unwrap());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Dns), "{o:?}");
    assert_eq!(
        o.message,
        format!(
            "dial tcp [::1]:0->127.0.0.1:{port}: no suitable address found: the source address ::1 is IPv6 and 127.0.0.1 is IPv4"
        )
    );
    // A name: the address family chooses first (blackbox_exporter's `chooseProtocol`), then
    // the source's family must be among what it chose.
    let o = check(
        &tcp("localhost", port)
            .with_ip_family(IpFamily::V4)
            .unwrap()
            .with_source_address(ip("::1"))
            .unwrap(),
    );
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Dns), "{o:?}");
    assert!(
        o.message.contains("the source address ::1 is IPv6 and address family ipv4 chose IPv4 addresses of localhost"),
        "{o:?}"
    );
}

#[test]
fn the_source_family_picks_among_the_names_addresses() {
    // `localhost` has 127.0.0.1 (and maybe ::1): an IPv4 source connects over IPv4.
    let (l, port) = listener("127.0.0.1:0");
    let seen = serve_once(l, b"");
    let o = check(&tcp("localhost", port).with_source_address(ip("127.0.0.5")).unwrap());
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(seen.join().unwrap().ip(), ip("127.0.0.5"));
}

#[test]
fn inside_a_namespace_the_address_is_the_namespaces() {
    // 10.200.34.1 exists only inside the namespace: the probe made there binds it, the same
    // probe on the host cannot.
    let ns = TestNetns::new("source");
    ns.add_address("10.200.34.1/32");
    let (l, port) = ns.run_in(|| listener("10.200.34.1:0"));
    let seen = serve_once(l, b"");
    let spec = tcp("10.200.34.1", port).with_source_address(ip("10.200.34.1")).unwrap();
    let o = check(&spec.clone().with_netns(ns.path()).unwrap());
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(seen.join().unwrap().ip(), ip("10.200.34.1"));
    let o = check(&spec);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Unreachable), "{o:?}");
    assert!(o.message.contains("bind: cannot assign requested address"), "{o:?}");
}
