//! `preferred_ip_protocol` and `ip_protocol_fallback` (issue 28) against real listeners on one
//! family each, with the `probe_ip_protocol` and `probe_ip_addr_hash` they give (HTTP, TCP
//! and gRPC modules).
//!
//! The names must resolve the same on every machine (`localhost` is `::1` on some and not on
//! others), so the test runs its body again in a child of itself with its own `/etc/hosts`
//! (a private mount namespace: root, as CI runs; without it the test fails, saying so):
//! `dual.test` is `::1` and `127.0.0.1`, `v4.test` only `127.0.0.1`.

use std::path::Path;
use std::process::Stdio;

use prober_blackbox::{Exporter, Modules, Request};
use prober_testkit::TargetServer;
use prober_testkit::grpc::HealthServer;
use prober_testkit::netns::hosts_command;

const CHILD: &str = "PROBER_BLACKBOX_IP_FAMILY_CHILD";

/// blackbox_exporter's `ipHash` of 127.0.0.1 and ::1 (Go's hash/fnv, FNV-1a 32 bits).
const HASH_V4: &str = "3668918509";
const HASH_V6: &str = "1751717746";

const FILE: &str = "
modules:
  http_ip4:
    prober: http
    http: {preferred_ip_protocol: ip4}
  http_ip6:
    prober: http
  http_ip6_only:
    prober: http
    http: {preferred_ip_protocol: ip6, ip_protocol_fallback: false}
  http_ip4_only:
    prober: http
    http: {preferred_ip_protocol: ip4, ip_protocol_fallback: false}
  http_ip6_v4_allowed:
    prober: http
    allow: {networks: ['127.0.0.1/32']}
  tcp_ip4:
    prober: tcp
    tcp: {preferred_ip_protocol: ip4}
  tcp_ip6:
    prober: tcp
  tcp_ip6_only:
    prober: tcp
    tcp: {ip_protocol_fallback: false}
  grpc_ip6:
    prober: grpc
  grpc_ip6_only:
    prober: grpc
    grpc: {ip_protocol_fallback: false}
";

/// The value of the sample `name` in an exposition.
fn sample(body: &str, name: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')).map(str::to_string))
}

/// `/probe?module=M&target=T`: (probe_success, probe_ip_protocol, probe_ip_addr_hash).
fn probe(e: &Exporter, module: &str, target: &str) -> (String, Option<String>, Option<String>) {
    let query = format!("module={module}&target={target}");
    let r = e.handle(&Request { path: "/probe", query: &query, headers: &[] });
    assert_eq!(r.status, 200, "{query}: {}", r.body);
    let b = &r.body;
    (
        sample(b, "probe_success").unwrap(),
        sample(b, "probe_ip_protocol"),
        sample(b, "probe_ip_addr_hash"),
    )
}

#[test]
fn preferred_ip_protocol_chooses_the_family() {
    if std::env::var_os(CHILD).is_some() {
        return in_child();
    }
    let dir = std::env::temp_dir().join(format!("prober-blackbox-ipf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, "::1 dual.test\n127.0.0.1 dual.test\n127.0.0.1 v4.test\n").unwrap();
    let out = hosts_command(&hosts, std::env::current_exe().unwrap())
        .args(["--exact", "preferred_ip_protocol_chooses_the_family", "--nocapture"])
        .env(CHILD, "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "the test's body, run with its own /etc/hosts (needs root for unshare --mount), failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The child did run the body (a filter matching nothing would also succeed).
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "{out:?}");
}

fn in_child() {
    let v6 = TargetServer::start_v6().expect("::1 is needed for this test");
    let v4 = TargetServer::start_on(format!("127.0.0.1:{}", v6.port()).parse().unwrap()).unwrap();
    let port = v6.port();
    let e = Exporter::start(Modules::parse(FILE, Path::new(".")).unwrap()).unwrap();
    let s = |v: &str| Some(v.to_string());
    let dual = format!("http://dual.test:{port}/ok");
    let v4_only = format!("http://v4.test:{port}/ok");

    assert_eq!(probe(&e, "http_ip4", &dual), ("1".into(), s("4"), s(HASH_V4)));
    assert_eq!((v6.requests(), v4.requests()), (0, 1));
    // blackbox_exporter's default: ip6, with fallback.
    assert_eq!(probe(&e, "http_ip6", &dual), ("1".into(), s("6"), s(HASH_V6)));
    assert_eq!((v6.requests(), v4.requests()), (1, 1));
    // Fallback to the family the name has.
    assert_eq!(probe(&e, "http_ip6", &v4_only), ("1".into(), s("4"), s(HASH_V4)));
    assert_eq!((v6.requests(), v4.requests()), (1, 2));
    // Without fallback: nothing is connected to, and the protocol and the address are 0, as
    // blackbox_exporter's `chooseProtocol` leaves them when it finds no address.
    assert_eq!(probe(&e, "http_ip6_only", &v4_only), ("0".into(), s("0"), s("0")));
    assert_eq!(probe(&e, "http_ip6_only", &dual), ("1".into(), s("6"), s(HASH_V6)));
    assert_eq!((v6.requests(), v4.requests()), (2, 2));
    // An IP literal of the other family: used with fallback, refused without.
    let literal = format!("http://[::1]:{port}/ok");
    assert_eq!(probe(&e, "http_ip4", &literal), ("1".into(), s("6"), s(HASH_V6)));
    assert_eq!(probe(&e, "http_ip4_only", &literal), ("0".into(), s("0"), s("0")));
    assert_eq!((v6.requests(), v4.requests()), (3, 2));

    // With an allow-list, the preference looks at the admitted addresses: dual.test's ::1 is
    // refused, so its 127.0.0.1 is used rather than the probe failing.
    assert_eq!(probe(&e, "http_ip6_v4_allowed", &dual), ("1".into(), s("4"), s(HASH_V4)));
    assert_eq!((v6.requests(), v4.requests()), (3, 3));

    // Redirects: blackbox_exporter dials the target's chosen address, and Go's client a
    // redirect that names a host by name, over both families. A relative redirect stays on
    // the family chosen: ::1 here.
    let relative = format!("http://dual.test:{port}/redirect?loc=/ok");
    assert_eq!(probe(&e, "http_ip6_only", &relative), ("1".into(), s("6"), s(HASH_V6)));
    assert_eq!((v6.requests(), v4.requests()), (5, 3));
    // An IPv6 literal named by a module that requires IPv4: dialed all the same.
    let to_v6 = format!("http://v4.test:{port}/redirect?loc=http://[::1]:{port}/ok");
    assert_eq!(probe(&e, "http_ip4_only", &to_v6).0, "1");
    assert_eq!((v6.requests(), v4.requests()), (6, 4));
    // A name with both families, served on 127.0.0.1 only, reached from a module that prefers
    // IPv6: its ::1 refuses, its 127.0.0.1 answers (the hop would fail if it kept the
    // preference, which finds ::1 only).
    let v4_alone = TargetServer::start();
    let to_dual =
        format!("http://v4.test:{port}/redirect?loc=http://dual.test:{}/ok", v4_alone.port());
    assert_eq!(probe(&e, "http_ip6", &to_dual).0, "1");
    assert_eq!(v4_alone.requests(), 1);

    // &debug=true names the choice.
    let query = format!("module=http_ip6_only&target={v4_only}&debug=true");
    let r = e.handle(&Request { path: "/probe", query: &query, headers: &[] });
    assert!(r.body.contains("Address family: ipv6\n"), "{}", r.body);
    assert!(r.body.contains("no IPv6 address (only IPv6 was asked for"), "{}", r.body);

    // TCP modules the same.
    let (c6, c4) = (v6.connections(), v4.connections());
    assert_eq!(
        probe(&e, "tcp_ip4", &format!("dual.test:{port}")),
        ("1".into(), s("4"), s(HASH_V4))
    );
    assert!(v4.wait_for_connections(c4 + 1, std::time::Duration::from_secs(60)));
    assert_eq!(
        probe(&e, "tcp_ip6", &format!("dual.test:{port}")),
        ("1".into(), s("6"), s(HASH_V6))
    );
    assert!(v6.wait_for_connections(c6 + 1, std::time::Duration::from_secs(60)));
    assert_eq!(probe(&e, "tcp_ip6_only", &format!("v4.test:{port}")), ("0".into(), s("0"), s("0")));

    // gRPC modules dial by name over both families, as blackbox_exporter's grpc.go does
    // (grpc-go's dialer): a server on 127.0.0.1 alone is reached through dual.test although
    // the module prefers IPv6, and the metrics name the address connected to.
    let mut g = HealthServer::start(&[]);
    assert_eq!(
        probe(&e, "grpc_ip6", &format!("dual.test:{}", g.port())),
        ("1".into(), s("4"), s(HASH_V4))
    );
    assert_eq!(g.checks(), 1);
    // Without the fallback the family is kept, on purpose (docs/cli.md): blackbox_exporter
    // would reach 127.0.0.1 by name although the module tests IPv6 only.
    assert_eq!(probe(&e, "grpc_ip6_only", &format!("dual.test:{}", g.port())).0, "0");
    assert_eq!(g.checks(), 1);
}
