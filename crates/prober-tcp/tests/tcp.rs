//! TCP probes against real sockets on loopback: the kubelet's cases (`tcp_test.go`,
//! <https://github.com/kubernetes/kubernetes/blob/master/pkg/probe/tcp/tcp_test.go>) and libprober's close with RST (`SO_LINGER` 0), which
//! leaves no TIME_WAIT behind where the kubelet's close does.

use std::collections::HashSet;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use prober_core::{ClosePolicy, ProbeKind, ProbeResult, ProbeSpec, Reason, SpecError, TcpSpec};
use prober_io::run_to_completion;
use prober_tcp::TcpProbe;
use prober_testkit::hanging::HangingListener;
use prober_testkit::{TargetServer, closed_port};

fn tcp_spec(host: &str, port: u16, close: ClosePolicy) -> TcpSpec {
    TcpSpec {
        host: host.to_string(),
        port,
        connect: prober_core::ConnectOptions { close, ..Default::default() },
        send: Vec::new(),
        expect: None,
        starttls: false,
        steps: Vec::new(),
    }
}

fn probe(spec: &TcpSpec, timeout: Duration) -> prober_core::Outcome {
    run_to_completion(&mut TcpProbe::new(spec, timeout))
}

#[test]
fn t1_listening_port_is_success() {
    let server = TargetServer::start();
    let o =
        probe(&tcp_spec("127.0.0.1", server.port(), ClosePolicy::Reset), Duration::from_secs(1));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.reason, Reason::None);
    assert_eq!(o.message, "");
    assert!(o.timings.connect.is_some());
    assert!(o.timings.resolve.is_none(), "IP literals are not resolved");
}

#[test]
fn t2_invalid_port_is_refused_by_the_spec() {
    assert_eq!(ProbeSpec::tcp("127.0.0.1", -1), Err(SpecError::InvalidPort(-1)));
    assert_eq!(ProbeSpec::tcp("127.0.0.1", 0), Err(SpecError::InvalidPort(0)));
    assert_eq!(ProbeSpec::tcp("127.0.0.1", 65536), Err(SpecError::InvalidPort(65536)));
}

#[test]
fn t3_closed_port_is_failure_connection_refused() {
    let port = closed_port();
    let o = probe(&tcp_spec("127.0.0.1", port, ClosePolicy::Reset), Duration::from_secs(1));
    assert_eq!(o.result, ProbeResult::Failure);
    assert_eq!(o.reason, Reason::Refused);
    assert_eq!(o.message, format!("dial tcp 127.0.0.1:{port}: connect: connection refused"));
}

#[test]
fn t4_unanswered_connect_times_out() {
    // A listener whose accept queue is full drops further SYNs, so a connect to it hangs: a
    // real timeout on loopback, without sending traffic anywhere else.
    let listener = HangingListener::bind("127.0.0.1:0".parse().unwrap());
    let addr = listener.addr();
    let started = Instant::now();
    let o =
        probe(&tcp_spec("127.0.0.1", addr.port(), ClosePolicy::Reset), Duration::from_millis(300));
    assert_eq!(o.result, ProbeResult::Failure, "{o:?}");
    assert_eq!(o.reason, Reason::Timeout);
    assert_eq!(o.message, format!("dial tcp {addr}: i/o timeout"));
    // Did not hang: a generous bound, not a timing assertion.
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(o.timings.total >= Duration::from_millis(300));
}

#[test]
fn t5_nothing_is_sent_and_reset_is_the_default_close() {
    let server = TargetServer::start();
    for _ in 0..5 {
        let o = probe(
            &tcp_spec("127.0.0.1", server.port(), ClosePolicy::Reset),
            Duration::from_secs(1),
        );
        assert_eq!(o.result, ProbeResult::Success);
    }
    assert!(server.wait_for_connections_closed(5, Duration::from_secs(5)));
    assert_eq!(server.silent_connections(), 5, "the probe must not send a byte");
    assert_eq!(server.reset_connections(), 5, "default close is RST");
    assert_eq!(server.requests(), 0);
}

#[test]
fn fin_close_policy_closes_in_order() {
    let server = TargetServer::start();
    for _ in 0..3 {
        let o =
            probe(&tcp_spec("127.0.0.1", server.port(), ClosePolicy::Fin), Duration::from_secs(1));
        assert_eq!(o.result, ProbeResult::Success);
    }
    assert!(server.wait_for_connections_closed(3, Duration::from_secs(5)));
    assert_eq!(server.silent_connections(), 3);
    assert_eq!(server.reset_connections(), 0, "FIN policy must not reset");
}

/// The TIME_WAIT sockets whose local or remote port is `port`, from /proc/net/tcp{,6}, as
/// "local remote" address pairs.
fn time_wait_on_port(port: u16) -> HashSet<String> {
    let mut found = HashSet::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 4 || f[3] != "06" {
                continue;
            }
            let port_of =
                |s: &str| u16::from_str_radix(s.rsplit(':').next().unwrap_or(""), 16).ok();
            if port_of(f[1]) == Some(port) || port_of(f[2]) == Some(port) {
                found.insert(format!("{} {}", f[1], f[2]));
            }
        }
    }
    found
}

/// TIME_WAIT sockets on `port` that were not there in `before`. Only new ones count: the port
/// number may have been a listener's of an earlier test (in this or another test binary) whose
/// connections still wait out their 60 s (seen in CI: 50 such sockets on a fresh server's port).
fn new_time_wait_on_port(port: u16, before: &HashSet<String>) -> usize {
    time_wait_on_port(port).difference(before).count()
}

#[test]
fn reset_close_leaves_no_time_wait_and_fin_does() {
    let server = TargetServer::start();
    let before = time_wait_on_port(server.port());
    for _ in 0..20 {
        probe(&tcp_spec("127.0.0.1", server.port(), ClosePolicy::Reset), Duration::from_secs(1));
    }
    assert!(server.wait_for_connections_closed(20, Duration::from_secs(5)));
    assert_eq!(
        new_time_wait_on_port(server.port(), &before),
        0,
        "RST close must leave no TIME_WAIT"
    );

    let fin_server = TargetServer::start();
    let before = time_wait_on_port(fin_server.port());
    for _ in 0..20 {
        probe(&tcp_spec("127.0.0.1", fin_server.port(), ClosePolicy::Fin), Duration::from_secs(1));
    }
    assert!(fin_server.wait_for_connections_closed(20, Duration::from_secs(5)));
    // The prober closes first, so its side enters TIME_WAIT: the cost the default avoids.
    assert!(
        new_time_wait_on_port(fin_server.port(), &before) > 0,
        "FIN close is expected to leave TIME_WAIT"
    );
}

#[test]
fn host_names_are_resolved_and_timed() {
    let server = TargetServer::start();
    let listener_v4_only = server.addr();
    assert!(listener_v4_only.is_ipv4());
    let o =
        probe(&tcp_spec("localhost", server.port(), ClosePolicy::Reset), Duration::from_secs(5));
    // localhost may resolve to ::1 first; the connector then falls back to 127.0.0.1.
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert!(o.timings.resolve.is_some());
}

#[test]
fn unresolvable_name_is_failure_dns() {
    let o =
        probe(&tcp_spec("no-such-host.invalid", 80, ClosePolicy::Reset), Duration::from_secs(5));
    assert_eq!(o.result, ProbeResult::Failure);
    assert_eq!(o.reason, Reason::Dns);
    assert!(o.message.starts_with("dial tcp: lookup no-such-host.invalid: "), "{}", o.message);
}

#[test]
fn ipv6_loopback() {
    let server = match TargetServer::start_v6() {
        Ok(s) => s,
        Err(e) => panic!("IPv6 loopback is needed by this suite and is unavailable: {e}"),
    };
    let o = probe(&tcp_spec("::1", server.port(), ClosePolicy::Reset), Duration::from_secs(1));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let port = {
        let l = TcpListener::bind("[::1]:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let o = probe(&tcp_spec("::1", port, ClosePolicy::Reset), Duration::from_secs(1));
    assert_eq!(o.message, format!("dial tcp [::1]:{port}: connect: connection refused"));
}

#[test]
fn spec_kind_round_trip() {
    // The spec constructor and the probe agree on host/port handling (brackets stripped).
    let s = ProbeSpec::tcp("[::1]", 9).unwrap();
    let ProbeKind::Tcp(t) = s.kind else { panic!() };
    assert_eq!(t.host, "::1");
}
