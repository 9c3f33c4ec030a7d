//! `source_ip_address` of `tcp` modules (issue 34; blackbox_exporter v0.28.0's `dialTCP` sets
//! it as the dialer's `LocalAddr`) and of `dns` modules (issue 36; its dns prober sets it as
//! the `dns.Client`'s dialer's `LocalAddr`), against a real listener or UDP socket on 127.0.0.1
//! that reports the peer address the kernel gave: every address of 127.0.0.0/8 is this host's
//! on Linux.

use std::net::{IpAddr, TcpListener, UdpSocket};
use std::path::Path;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use prober_blackbox::{Exporter, Modules, Request};

const FILE: &str = "
modules:
  tcp_from_2:
    prober: tcp
    tcp: {source_ip_address: 127.0.0.2}
  tcp_from_elsewhere:
    prober: tcp
    tcp: {source_ip_address: 192.0.2.1}
  tcp_from_v6:
    prober: tcp
    tcp: {source_ip_address: '::1'}
  tcp_from_empty:
    prober: tcp
    tcp: {source_ip_address: ''}
  dns_from_2:
    prober: dns
    dns: {query_name: probe.test, query_type: A, source_ip_address: 127.0.0.2}
  dns_from_elsewhere:
    prober: dns
    dns: {query_name: probe.test, query_type: A, source_ip_address: 192.0.2.1}
";

/// A listener on 127.0.0.1 sending the peer address of each connection it accepts.
fn peers() -> (u16, Receiver<IpAddr>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        while let Ok((_, peer)) = l.accept() {
            if tx.send(peer.ip()).is_err() {
                return;
            }
        }
    });
    (port, rx)
}

/// A UDP socket on 127.0.0.1 answering each query (its question, no records, NOERROR) and
/// sending where it came from.
fn dns_peers() -> (u16, Receiver<IpAddr>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, peer)) = sock.recv_from(&mut buf) {
            let mut reply = buf[..n].to_vec();
            reply[2] |= 0x80; // QR: the query itself, answered
            let _ = sock.send_to(&reply, peer);
            if tx.send(peer.ip()).is_err() {
                return;
            }
        }
    });
    (port, rx)
}

/// `/probe?module=M&target=T&debug=true`: (probe_success, the whole answer).
fn probe(e: &Exporter, module: &str, target: &str) -> (String, String) {
    let query = format!("module={module}&target={target}&debug=true");
    let r = e.handle(&Request { path: "/probe", query: &query, headers: &[] });
    assert_eq!(r.status, 200, "{query}: {}", r.body);
    let success = r
        .body
        .lines()
        .find_map(|l| l.strip_prefix("probe_success "))
        .unwrap_or_else(|| panic!("no probe_success in {}", r.body))
        .to_string();
    (success, r.body)
}

#[test]
fn tcp_modules_connect_from_the_source_address() {
    let e = Exporter::start(Modules::parse(FILE, Path::new(".")).unwrap()).unwrap();
    let (port, seen) = peers();
    let target = format!("127.0.0.1:{port}");
    let wait = Duration::from_secs(60); // a hang, not a timing claim

    let (ok, body) = probe(&e, "tcp_from_2", &target);
    assert_eq!(ok, "1", "{body}");
    assert_eq!(seen.recv_timeout(wait).unwrap(), "127.0.0.2".parse::<IpAddr>().unwrap());
    // An empty address is none, as blackbox's `len(...) > 0`.
    let (ok, body) = probe(&e, "tcp_from_empty", &target);
    assert_eq!(ok, "1", "{body}");
    assert_eq!(seen.recv_timeout(wait).unwrap(), "127.0.0.1".parse::<IpAddr>().unwrap());

    let (ok, body) = probe(&e, "tcp_from_elsewhere", &target);
    assert_eq!(ok, "0", "{body}");
    assert!(body.contains("bind: cannot assign requested address"), "{body}");
    assert!(body.contains("192.0.2.1:0->127.0.0.1"), "{body}");
    let (ok, body) = probe(&e, "tcp_from_v6", &target);
    assert_eq!(ok, "0", "{body}");
    assert!(body.contains("no suitable address found"), "{body}");
    assert!(seen.try_recv().is_err(), "nothing else connected");
}

#[test]
fn dns_modules_query_from_the_source_address() {
    let e = Exporter::start(Modules::parse(FILE, Path::new(".")).unwrap()).unwrap();
    let (port, seen) = dns_peers();
    let target = format!("127.0.0.1:{port}");
    let wait = Duration::from_secs(60); // a hang, not a timing claim

    let (ok, body) = probe(&e, "dns_from_2", &target);
    assert_eq!(ok, "1", "{body}");
    assert_eq!(seen.recv_timeout(wait).unwrap(), "127.0.0.2".parse::<IpAddr>().unwrap());

    let (ok, body) = probe(&e, "dns_from_elsewhere", &target);
    assert_eq!(ok, "0", "{body}");
    assert!(body.contains("192.0.2.1:0->127.0.0.1"), "{body}");
    assert!(body.contains("bind: cannot assign requested address"), "{body}");
    assert!(seen.try_recv().is_err(), "nothing else queried");
}

#[test]
fn bad_source_addresses_are_refused_at_start() {
    let file = "modules:\n  m:\n    prober: tcp\n    tcp: {source_ip_address: 'not-an-ip'}\n";
    let err = Modules::parse(file, Path::new(".")).unwrap_err().to_string();
    assert!(
        err.contains("tcp.source_ip_address: source address \"not-an-ip\" is not an IP address"),
        "{err}"
    );
    // blackbox_exporter v0.28.0's http and grpc sections have no such field: unknown there too.
    for prober in ["http", "grpc"] {
        let file = format!(
            "modules:\n  m:\n    prober: {prober}\n    {prober}: {{source_ip_address: 127.0.0.2}}\n"
        );
        let err = Modules::parse(&file, Path::new(".")).unwrap_err().to_string();
        assert!(err.contains("source_ip_address"), "{prober}: {err}");
    }
}
