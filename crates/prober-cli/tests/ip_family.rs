//! `prober check -4 / -6 / --prefer-ipv4 / --prefer-ipv6` and `ipFamily:` in watch files
//! (issue 28), on real sockets. Names come from the command's own `/etc/hosts` (a private
//! mount namespace: root, as CI runs; without it these tests fail, saying so):
//! `dual.test` is `::1` and `127.0.0.1`, `v4.test` only `127.0.0.1`. Listeners on one family
//! only (a server on `[::1]:P` beside another on `127.0.0.1:P`) tell which family answered.

mod common;

use common::*;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

const HOSTS: &str = "::1 dual.test\n127.0.0.1 dual.test\n127.0.0.1 v4.test\n";

/// `prober ARGS` with the test's `/etc/hosts`.
fn prober_with_hosts(hosts: &TempFile, args: &[&str]) -> Run {
    let mut cmd = prober_with_hosts_file(&hosts.0);
    cmd.args(args);
    let r = run_command(&mut cmd, None);
    assert!(r.stderr.is_empty(), "{args:?}: {}", r.stderr);
    r
}

fn check(hosts: &TempFile, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check", "--json", "--timeout", "5s"];
    all.extend_from_slice(args);
    let r = prober_with_hosts(hosts, &all);
    (r.code, json_line(&r))
}

/// A server on `[::1]:P` and another on `127.0.0.1:P`.
fn dual_servers() -> (TargetServer, TargetServer) {
    let v6 = TargetServer::start_v6().expect("::1 is needed for these tests");
    let v4 = TargetServer::start_on(format!("127.0.0.1:{}", v6.port()).parse().unwrap())
        .expect("the same port on 127.0.0.1");
    (v6, v4)
}

#[test]
fn family_flags_choose_which_listener_answers() {
    let hosts = write_file("hosts", HOSTS);
    let (v6, v4) = dual_servers();
    let url = format!("http://dual.test:{}/ok", v6.port());
    let tcp = format!("tcp://dual.test:{}", v6.port());
    // (flags, requests of ::1 and 127.0.0.1 after it)
    let cases: [(&[&str], (u64, u64)); 6] = [
        (&[], (1, 0)), // every address, the resolver's first (::1) first
        (&["-4"], (1, 1)),
        (&["--ipv6"], (2, 1)),
        (&["--prefer-ipv4"], (2, 2)),
        (&["--prefer-ipv6"], (3, 2)),
        (&["-6", "-4"], (3, 3)), // the last one given, as curl
    ];
    for (flags, want) in cases {
        let mut args = flags.to_vec();
        args.push(&url);
        let (code, v) = check(&hosts, &args);
        assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{flags:?}: {v}");
        assert_eq!((v6.requests(), v4.requests()), want, "{flags:?}");
    }
    // TCP probes too: the connection lands on the family's listener.
    let (c6, c4) = (v6.connections(), v4.connections());
    let (code, v) = check(&hosts, &["-4", &tcp]);
    assert_eq!(code, 0, "{v}");
    assert!(v4.wait_for_connections(c4 + 1, HANG), "{v}");
    assert_eq!(v6.connections(), c6);
}

#[test]
fn only_one_family_without_its_address_fails_naming_it() {
    let hosts = write_file("hosts", HOSTS);
    let v4 = TargetServer::start();
    let port = v4.port().to_string();

    let (code, v) = check(&hosts, &["-6", &format!("http://v4.test:{port}/ok")]);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (1, Some("failure"), Some("dns")),
        "{v}"
    );
    assert_eq!(
        v["message"].as_str().unwrap(),
        format!(
            "Get \"http://v4.test:{port}/ok\": dial tcp6: lookup v4.test: no IPv6 address (only IPv6 was asked for; the name has IPv4 addresses only)"
        )
    );
    assert_eq!(v4.connections(), 0, "nothing was connected to");

    // Preferring IPv6 falls back to the name's IPv4 address (blackbox_exporter's rule).
    let (code, v) = check(&hosts, &["--prefer-ipv6", &format!("http://v4.test:{port}/ok")]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    assert_eq!(v4.requests(), 1);
}

#[test]
fn ip_literal_of_the_other_family() {
    let hosts = write_file("hosts", HOSTS);
    let v6 = TargetServer::start_v6().expect("::1 is needed for these tests");
    let port = v6.port();

    let (code, v) = check(&hosts, &["-4", &format!("tcp://[::1]:{port}")]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("dns")), "{v}");
    assert_eq!(
        v["message"].as_str().unwrap(),
        format!("dial tcp4 [::1]:{port}: ::1 is an IPv6 address (only IPv4 was asked for)")
    );
    assert_eq!(v6.connections(), 0);

    // A literal is its own and only address: preferring the other family still uses it.
    let (code, v) = check(&hosts, &["--prefer-ipv4", &format!("http://[::1]:{port}/ok")]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    assert_eq!(v6.requests(), 1);
}

#[test]
fn every_redirect_hop_keeps_the_family() {
    let hosts = write_file("hosts", HOSTS);
    let (v6, v4) = dual_servers();
    let first = TargetServer::start(); // 127.0.0.1 only
    let to_dual =
        format!("http://127.0.0.1:{}/redirect?loc=http://dual.test:{}/ok", first.port(), v6.port());
    // Unrestricted, the hop to dual.test reaches ::1 (the resolver's first address) ...
    let (code, v) = check(&hosts, &["--redirects", "any-host", &to_dual]);
    assert_eq!((code, v["http_status"].as_u64()), (0, Some(200)), "{v}");
    assert_eq!((v6.requests(), v4.requests()), (1, 0));
    // ... and with -4 it reaches 127.0.0.1.
    let (code, v) = check(&hosts, &["-4", "--redirects", "any-host", &to_dual]);
    assert_eq!((code, v["http_status"].as_u64()), (0, Some(200)), "{v}");
    assert_eq!((v6.requests(), v4.requests()), (1, 1));

    // -6 from ::1 to an IPv4 literal: the hop is refused before connecting.
    let to_v4 =
        format!("http://dual.test:{}/redirect?loc=http://127.0.0.1:{}/ok", v6.port(), first.port());
    let (code, v) = check(&hosts, &["-6", "--redirects", "any-host", &to_v4]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("dns")), "{v}");
    let want = format!(
        "Get \"http://127.0.0.1:{}/ok\": dial tcp6 127.0.0.1:{0}: 127.0.0.1 is an IPv4 address (only IPv6 was asked for)",
        first.port()
    );
    assert!(v["message"].as_str().unwrap().contains(&want), "{v}");
    assert_eq!((v6.requests(), first.requests()), (2, 2));
}

#[test]
fn watch_file_ip_family_per_target() {
    let hosts = write_file("hosts", HOSTS);
    let (v6, v4) = dual_servers();
    v6.set_healthy(false); // only the IPv4 listener is ready
    let text = format!(
        "targets:\n\
         - name: web\n  ipFamily: ipv4\n  readinessProbe:\n    \
         httpGet: {{host: dual.test, path: /health, port: {}}}\n    \
         periodMilliseconds: 100\n    timeoutMilliseconds: 2000\n    failureThreshold: 1\n",
        v4.port()
    );
    let file = write_file("yaml", &text);
    let r = prober_with_hosts(&hosts, &["watch", "--until-ready", "--for", "60s", file.path()]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("web readiness success"), "{}", r.stdout);
    assert_eq!(v6.requests(), 0, "no probe went to ::1");

    let bad = write_file("yaml", &text.replace("ipFamily: ipv4", "ipFamily: ip4"));
    let r = run(&["watch", "--until-ready", "--for", "5s", bad.path()]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "target \"web\": ipFamily: \"ip4\" is not one of any, ipv4, ipv6, prefer-ipv4, prefer-ipv6"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn family_flags_refused_for_exec() {
    assert_usage_error(
        &["check", "-4", "--", "true"],
        "-4: an address family applies to TCP, HTTP, gRPC, DNS and ICMP probes only",
    );
}

/// The next request head from `stream` (`buf`: bytes read and not yet consumed); `None` once
/// the client closed.
fn next_head(stream: &mut std::net::TcpStream, buf: &mut Vec<u8>) -> Option<String> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head: Vec<u8> = buf.drain(..end + 4).collect();
            return Some(String::from_utf8_lossy(&head).into_owned());
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A keep-alive HTTP/1.1 server on `addr` that answers 200 to `GET /{family}` and 503 to any
/// other path, counting connections and requests.
fn keep_alive_on(addr: &str, family: &'static str) -> (u16, Arc<(AtomicU64, AtomicU64)>) {
    let listener = std::net::TcpListener::bind(addr).expect("bind");
    let port = listener.local_addr().unwrap().port();
    let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let c = Arc::clone(&counts);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            c.0.fetch_add(1, Ordering::SeqCst);
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                while let Some(head) = next_head(&mut stream, &mut buf) {
                    c.1.fetch_add(1, Ordering::SeqCst);
                    let mine = head.starts_with(&format!("GET /{family} "));
                    let answer: &[u8] = if mine {
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                    } else {
                        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n\r\nwrong"
                    };
                    if stream.write_all(answer).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, counts)
}

/// Two keep-alive targets of one host and port, one IPv4-only, one IPv6-only: each reuses its
/// own family's connections and never the other's (a connection to the other family's
/// listener would answer 503 and the target would fail).
#[test]
fn kept_connections_serve_only_their_family() {
    let hosts = write_file("hosts", HOSTS);
    let (port, v6) = keep_alive_on("[::1]:0", "v6");
    let (_, v4) = keep_alive_on(&format!("127.0.0.1:{port}"), "v4");
    let target = |name: &str, family: &str, path: &str| {
        format!(
            "- name: {name}\n  ipFamily: {family}\n  readinessProbe:\n    \
             httpGet: {{host: dual.test, path: /{path}, port: {port}, keepAlive: true}}\n    \
             periodMilliseconds: 20\n    timeoutMilliseconds: 5000\n    failureThreshold: 1\n"
        )
    };
    let text = format!("targets:\n{}{}", target("four", "ipv4", "v4"), target("six", "ipv6", "v6"));
    let file = write_file("yaml", &text);
    let mut cmd = prober_with_hosts_file(&hosts.0);
    cmd.args(["watch", "--for", "120s", file.path()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn prober");
    let limit = Instant::now() + HANG;
    while v4.1.load(Ordering::SeqCst) < 20 || v6.1.load(Ordering::SeqCst) < 20 {
        assert!(child.try_wait().unwrap().is_none(), "prober ended early");
        assert!(Instant::now() < limit, "too few requests");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let failed = stdout.lines().any(|l| l.contains("failure") && !l.contains("(initial)"));
    assert!(!failed, "a target used the other family's connection:\n{stdout}");
    assert!(stdout.contains("four readiness success"), "{stdout}");
    assert!(stdout.contains("six readiness success"), "{stdout}");
    // Connections were kept and reused (else this test would prove nothing).
    for (name, c) in [("v4", &v4), ("v6", &v6)] {
        let (conns, reqs) = (c.0.load(Ordering::SeqCst), c.1.load(Ordering::SeqCst));
        assert!(conns < reqs, "{name}: {conns} connections for {reqs} requests");
    }
}

/// gRPC probes too: a health server on each family of `dual.test`, the IPv6 one saying
/// NOT_SERVING; the family flags decide which one is asked.
#[test]
fn grpc_probes_take_the_family() {
    use prober_testkit::grpc::HealthServer;
    let hosts = write_file("hosts", HOSTS);
    let mut v6 = HealthServer::start(&["-listen", "[::1]:0", "-status", "svc=NOT_SERVING"]);
    let port = v6.port();
    let mut v4 =
        HealthServer::start(&["-listen", &format!("127.0.0.1:{port}"), "-status", "svc=SERVING"]);
    let target = format!("grpc://dual.test:{port}/svc");
    let (code, v) = check(&hosts, &[&target]);
    assert_eq!((code, v["result"].as_str()), (1, Some("failure")), "::1 first: {v}");
    let (code, v) = check(&hosts, &["-4", &target]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    let (code, v) = check(&hosts, &["--prefer-ipv6", &target]);
    assert_eq!((code, v["result"].as_str()), (1, Some("failure")), "{v}");
    assert_eq!((v6.checks(), v4.checks()), (2, 1));
}
