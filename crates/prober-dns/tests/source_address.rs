//! The source address of a DNS query (`DnsSpec::source_address`, blackbox's
//! `source_ip_address`): a server of the test's own on 127.0.0.1 sees the query come from
//! 127.0.0.2 over UDP, TCP and TLS; an address this host does not have, or one of the other
//! family than the server's, fails the run naming it. In a namespace the test makes (root and
//! iproute2, as CI has), NSD answers a query bound to the namespace's 127.0.0.2.

mod support;

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, UdpSocket};
use std::sync::mpsc;
use std::time::Duration;

use prober_core::{ProbeResult, Reason, TlsOptions, TlsVerify};
use prober_dns::{DnsSpec, Transport};
use support::{nsd_with_dot_in, run};

const TIMEOUT: Duration = Duration::from_secs(5);
/// Bounds the servers' own waits, well past the probe's deadline.
const SERVER_WAIT: Duration = Duration::from_secs(20);

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// The answer to `query`: the query itself with QR set (its question, no records, NOERROR).
fn answer(query: &[u8]) -> Vec<u8> {
    let mut reply = query.to_vec();
    reply[2] |= 0x80;
    reply
}

/// A UDP server on 127.0.0.1 that answers one query and sends where it came from.
fn udp_server() -> (SocketAddr, mpsc::Receiver<SocketAddr>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sock.local_addr().unwrap();
    let (seen, saw) = mpsc::channel();
    std::thread::spawn(move || {
        sock.set_read_timeout(Some(SERVER_WAIT)).unwrap();
        let mut buf = [0u8; 512];
        if let Ok((n, from)) = sock.recv_from(&mut buf) {
            let _ = sock.send_to(&answer(&buf[..n]), from);
            let _ = seen.send(from);
        }
    });
    (addr, saw)
}

/// A TCP server on 127.0.0.1 that takes one connection, sends its peer's address, and (when
/// `answers`) answers one length-prefixed query on it.
fn tcp_server(answers: bool) -> (SocketAddr, mpsc::Receiver<SocketAddr>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (seen, saw) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut conn, from)) = listener.accept() else { return };
        let _ = seen.send(from);
        if !answers {
            return;
        }
        conn.set_read_timeout(Some(SERVER_WAIT)).unwrap();
        let mut len = [0u8; 2];
        if conn.read_exact(&mut len).is_err() {
            return;
        }
        let mut query = vec![0u8; usize::from(u16::from_be_bytes(len))];
        if conn.read_exact(&mut query).is_ok() {
            let reply = answer(&query);
            let _ = conn.write_all(&(reply.len() as u16).to_be_bytes());
            let _ = conn.write_all(&reply);
        }
    });
    (addr, saw)
}

fn from(addr: SocketAddr, transport: Transport, source: &str) -> DnsSpec {
    let mut spec = DnsSpec::new(addr, "host.example").unwrap();
    spec.transport = transport;
    spec.source_address = Some(ip(source));
    spec
}

#[test]
fn the_query_comes_from_the_source_address_over_udp_and_tcp() {
    let (addr, saw) = udp_server();
    let (o, facts) = run(from(addr, Transport::Udp, "127.0.0.2"), TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert!(facts.query_succeeded);
    assert_eq!(saw.recv_timeout(SERVER_WAIT).unwrap().ip(), ip("127.0.0.2"));

    let (addr, saw) = tcp_server(true);
    let (o, _) = run(from(addr, Transport::Tcp, "127.0.0.2"), TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!(saw.recv_timeout(SERVER_WAIT).unwrap().ip(), ip("127.0.0.2"));
}

#[test]
fn the_tls_connection_comes_from_the_source_address() {
    // The server takes the connection and closes it: the handshake fails, after the
    // connection showed where it came from.
    let (addr, saw) = tcp_server(false);
    let mut spec = from(addr, Transport::Tls, "127.0.0.3");
    spec.tls = Some(TlsOptions { verify: TlsVerify::None, ..TlsOptions::default() });
    let (o, _) = run(spec, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Failure, "{}", o.message);
    assert_eq!(saw.recv_timeout(SERVER_WAIT).unwrap().ip(), ip("127.0.0.3"));
}

#[test]
fn an_address_this_host_lacks_fails_naming_it() {
    let (addr, _saw) = udp_server();
    let (o, facts) = run(from(addr, Transport::Udp, "192.0.2.1"), TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Unreachable), "{}", o.message);
    assert_eq!(
        o.message,
        format!("dial udp 192.0.2.1:0->{addr}: bind: cannot assign requested address")
    );
    assert!(!facts.query_succeeded);

    let (addr, _saw) = tcp_server(true);
    let (o, _) = run(from(addr, Transport::Tcp, "192.0.2.1"), TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Unreachable), "{}", o.message);
    assert_eq!(
        o.message,
        format!("dial tcp 192.0.2.1:0->{addr}: bind: cannot assign requested address")
    );
}

#[test]
fn a_source_of_the_other_family_fails_before_any_socket() {
    let (addr, _saw) = udp_server();
    for transport in [Transport::Udp, Transport::Tcp] {
        let (o, _) = run(from(addr, transport, "::1"), TIMEOUT);
        assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Dns), "{}", o.message);
        let net = if transport == Transport::Udp { "udp" } else { "tcp" };
        assert_eq!(
            o.message,
            format!(
                "dial {net} [::1]:0->{addr}: no suitable address found: the source address ::1 \
                 is IPv6 and 127.0.0.1 is IPv4"
            )
        );
    }
}

#[test]
fn in_a_namespace_the_socket_is_bound_there() {
    let dot = nsd_with_dot_in("dns-src");
    for (source, result) in
        [("127.0.0.2", ProbeResult::Success), ("192.0.2.1", ProbeResult::Failure)]
    {
        for transport in [Transport::Udp, Transport::Tcp, Transport::Tls] {
            let server = if transport == Transport::Tls { dot.tls_addr } else { dot.nsd.addr };
            let mut spec = from(server, transport, source).with_type_name("SOA").unwrap();
            spec.name = prober_dns::name::Name::from_text("probe.test").unwrap();
            spec.tls = (transport == Transport::Tls).then(|| dot.tls.clone());
            spec.netns = Some(dot.netns.clone());
            let (o, _) = run(spec, TIMEOUT);
            assert_eq!(o.result, result, "{source} {transport:?}: {}", o.message);
            if result == ProbeResult::Failure {
                assert!(
                    o.message.contains("bind: cannot assign requested address"),
                    "{}",
                    o.message
                );
            }
        }
    }
}
