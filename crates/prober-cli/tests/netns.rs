//! `prober check --netns PATH` and `netns: PATH` in watch files (issue 29), with real network
//! namespaces (`ip netns`; root: CI runs as root, and without it these tests fail, saying so):
//! a server answers only inside, on 127.0.0.1, on the same port as a different server on the
//! host; each probe reaches the one it names. The dual-stack cases run the command with its
//! own `/etc/hosts` (a private mount namespace) naming both families, against listeners on
//! 127.0.0.1 and ::1 inside: the host's resolver's order and Happy Eyeballs on real sockets.

mod common;

use common::*;
use prober_testkit::netns::TestNetns;

fn local(ip: &str, port: u16) -> SocketAddr {
    format!("{ip}:{port}").parse().unwrap()
}

#[test]
fn check_reaches_the_namespace_it_names() {
    let host = TargetServer::start();
    host.set_healthy(false);
    let ns = TestNetns::new("cli");
    let guest = ns.start_server(local("127.0.0.1", host.port()));
    let url = host.url("/health");
    let path = ns.path().to_str().unwrap();

    let (code, v) = check_json(&["--netns", path, &url]);
    assert_eq!(
        (code, v["result"].as_str(), v["http_status"].as_u64()),
        (0, Some("success"), Some(200)),
        "{v}"
    );
    let (code, v) = check_json(&[&url]);
    assert_eq!((code, v["http_status"].as_u64()), (1, Some(503)), "{v}");
    assert_eq!((guest.requests(), host.requests()), (1, 1));

    let only_inside = ns.start_server(local("127.0.0.1", 0));
    let tcp = format!("tcp://127.0.0.1:{}", only_inside.port());
    let (code, v) = check_json(&["--netns", path, &tcp]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    let (code, v) = check_json(&[&tcp]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("refused")), "{v}");
}

#[test]
fn check_says_why_a_namespace_cannot_be_used() {
    let (code, v) = check_json(&["--netns", "/run/netns/prober-cli-none", "tcp://127.0.0.1:1"]);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (2, Some("unknown"), Some("namespace")),
        "{v}"
    );
    assert_eq!(
        v["message"],
        "cannot use network namespace \"/run/netns/prober-cli-none\": no such file or directory"
    );
    assert_usage_error(
        &["check", "--netns", "netns/x", "tcp://127.0.0.1:1"],
        "--netns: invalid network namespace path \"netns/x\": it must be absolute",
    );
    assert_usage_error(
        &["check", "--netns", "/run/netns/x", "--", "true"],
        "--netns: a network namespace applies to TCP, HTTP, gRPC, DNS and ICMP probes only",
    );
}

/// Without CAP_SYS_ADMIN (dropped by setpriv before prober starts) the namespace cannot be
/// entered: Unknown, naming the path and the capability, and the run ends within its timeout.
#[test]
fn check_without_the_capability_is_unknown() {
    let ns = TestNetns::new("eperm");
    let server = ns.start_server(local("127.0.0.1", 0));
    let mut cmd = Command::new("setpriv");
    cmd.args(["--inh-caps=-all", "--bounding-set=-sys_admin", "--"])
        .arg(env!("CARGO_BIN_EXE_prober"))
        .args(["check", "--json", "--timeout", "2s", "--netns"])
        .arg(ns.path())
        .arg(format!("tcp://127.0.0.1:{}", server.port()));
    let r = run_command(&mut cmd, None);
    let v = json_line(&r);
    assert_eq!((r.code, v["reason"].as_str()), (2, Some("namespace")), "{v} {}", r.stderr);
    let want = format!(
        "cannot use network namespace {:?}: cannot enter it: operation not permitted (entering a namespace needs CAP_SYS_ADMIN)",
        ns.path()
    );
    assert_eq!(v["message"], want.as_str());
    assert!(v["duration_ms"].as_f64().unwrap() <= 2000.0, "{v}");
}

#[test]
fn watch_file_mixes_namespace_and_host_targets() {
    // The host's server is healthy; the one inside, on the same port, is not.
    let host = TargetServer::start();
    let ns = TestNetns::new("watch");
    let guest = ns.start_server(local("127.0.0.1", host.port()));
    guest.set_healthy(false);
    let only_inside = ns.start_server(local("127.0.0.1", 0));
    let path = ns.path().display();
    let probe = |handler: String| {
        format!(
            "{{{handler}, periodMilliseconds: 100, timeoutMilliseconds: 1000, failureThreshold: 1}}"
        )
    };
    let web = probe(format!("httpGet: {{path: /health, port: {}}}", host.port()));
    let tcp = probe(format!("tcpSocket: {{port: {}}}", only_inside.port()));
    let text = format!(
        "targets:\n\
         - {{name: inside-web, netns: {path}, readinessProbe: {web}}}\n\
         - {{name: host-web, readinessProbe: {web}}}\n\
         - {{name: inside-tcp, netns: {path}, readinessProbe: {tcp}}}\n"
    );
    let file = write_file("yaml", &text);
    let mut w = Watch::start(&["--json", file.path()]);
    let mut ready = std::collections::HashSet::new();
    while ready.len() < 2 {
        let v = w.next_json();
        if v["result"] == "success" {
            ready.insert(v["target"].as_str().unwrap().to_string());
        }
        let inside_web_ready = v["target"] == "inside-web" && v["result"] == "success";
        assert!(!inside_web_ready, "inside-web reached the host's server: {v}");
    }
    assert!(ready.contains("host-web") && ready.contains("inside-tcp"), "{ready:?}");
    // inside-web stayed not ready because it reached the server inside, which said 503.
    assert!(guest.wait_for_requests(1, Duration::from_secs(10)));

    // An exec probe cannot go into the namespace: refused, naming the field.
    assert_bad_file(
        &[],
        &format!(
            "targets:\n- {{name: x, netns: {path}, livenessProbe: {{exec: {{command: [true]}}}}}}\n"
        ),
        "yaml",
        &[
            "target \"x\": netns: applies to tcpSocket, httpGet, grpc, dns and icmp probes; livenessProbe is exec",
        ],
    );
}

/// `netns:` and `namespacesOf:` on one target: its network probes go through the namespace,
/// its exec probes run inside the process's namespaces (alone, each refuses the other kind).
/// The startup probe reaches a port that listens only inside the network namespace; the
/// readiness probe passes only where the host name is the process's: ready means both ran
/// where they were sent.
#[test]
fn watch_file_target_with_netns_and_namespaces_of() {
    let ns = TestNetns::new("both");
    let only_inside = ns.start_server(local("127.0.0.1", 0));
    let proc = prober_testkit::unshare::Namespaced::start(&prober_testkit::unshare::Options {
        hostname: "cli-both".to_string(),
        user: false,
    });
    let text = format!(
        "targets:\n\
         - name: both\n  netns: {path}\n  namespacesOf: {pid}\n  \
         startupProbe: {{tcpSocket: {{port: {port}}}, periodMilliseconds: 100}}\n  \
         readinessProbe: {{exec: {{command: [sh, -c, 'test \"$$(hostname)\" = cli-both']}}, \
         periodMilliseconds: 100}}\n",
        path = ns.path().display(),
        pid = proc.pid,
        port = only_inside.port()
    );
    let file = write_file("yaml", &text);
    let r = run(&["watch", "--until-ready", "--for", "30s", file.path()]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("both readiness success (exit 0)"), "{}", r.stdout);
    assert!(r.stdout.contains("both startup success"), "{}", r.stdout);
}

/// `dual.test` is ::1 and 127.0.0.1 in the command's own /etc/hosts (the host's resolver, as
/// the command sees it). The resolver puts ::1 first (RFC 6724); inside the namespace:
/// - both listen: ::1 answers;
/// - only 127.0.0.1 listens: ::1 is refused, 127.0.0.1 is tried at once and answers;
/// - ::1 hangs (accept queue full): after the fallback delay 127.0.0.1 joins and wins.
#[test]
fn dual_stack_names_resolve_on_the_host_and_race_inside() {
    let ns = TestNetns::new("dual");
    let hosts = write_file("hosts", "::1 dual.test\n127.0.0.1 dual.test\n");
    let check = |port: u16| {
        let mut cmd = prober_with_hosts_file(&hosts);
        cmd.args(["check", "--json", "--timeout", "5s", "--netns"])
            .arg(ns.path())
            .arg(format!("http://dual.test:{port}/ok"));
        let r = run_command(&mut cmd, None);
        assert!(r.stderr.is_empty(), "{}", r.stderr);
        json_line(&r)
    };

    let v6 = ns.start_server(local("[::1]", 0));
    let port = v6.port();
    let v4 = ns.start_server(local("127.0.0.1", port));
    let v = check(port);
    assert_eq!(v["result"], "success", "{v}");
    assert_eq!((v6.requests(), v4.requests()), (1, 0), "the resolver's first address answers");
    assert!(v["timings"]["resolve_ms"].is_number(), "a name was resolved: {v}");

    let only_v4 = ns.start_server(local("127.0.0.1", 0));
    let v = check(only_v4.port());
    assert_eq!(v["result"], "success", "{v}");
    assert_eq!(only_v4.requests(), 1);

    let hang = ns.start_hanging(local("[::1]", 0));
    let port = hang.addr().port();
    let behind = ns.start_server(local("127.0.0.1", port));
    let v = check(port);
    assert_eq!(v["result"], "success", "{v}");
    assert_eq!(behind.requests(), 1);

    // Neither answers: the first family's error, as Go reports it.
    let closed =
        ns.run_in(|| std::net::TcpListener::bind("[::1]:0").unwrap().local_addr().unwrap().port());
    let v = check(closed);
    assert_eq!(v["reason"], "refused", "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains(&format!("dial tcp [::1]:{closed}: connect: connection refused")),
        "{v}"
    );
}

/// `-4` / `-6` inside a namespace (issue 28): the namespace's sockets are made for every
/// address of `dual.test`, and only those of the family asked for are connected to.
#[test]
fn family_flags_apply_inside_a_namespace() {
    let ns = TestNetns::new("family");
    let hosts = write_file("hosts", "::1 dual.test\n127.0.0.1 dual.test\n");
    let v6 = ns.start_server(local("[::1]", 0));
    let v4 = ns.start_server(local("127.0.0.1", v6.port()));
    for (flag, want) in [("-4", (0, 1)), ("-6", (1, 1))] {
        let mut cmd = prober_with_hosts_file(&hosts);
        cmd.args(["check", "--json", "--timeout", "5s", flag, "--netns"])
            .arg(ns.path())
            .arg(format!("http://dual.test:{}/ok", v6.port()));
        let r = run_command(&mut cmd, None);
        let v = json_line(&r);
        assert_eq!(v["result"], "success", "{flag}: {v} {}", r.stderr);
        assert_eq!((v6.requests(), v4.requests()), want, "{flag}");
    }
}
