//! `prober check dns://...` and `icmp://...`, and `dns:`/`icmp:` probes in watch files (issue
//! 36), against real parts: echo requests to 127.0.0.1 and ::1 (raw sockets: the tests run as
//! root, as CI does) and NSD, Debian's authoritative server, serving zones the tests write
//! (prober-dns's test support, shared: ci/dns-server.sh installs it; without it these tests
//! fail, saying so).

mod common;
#[path = "../../prober-dns/tests/support/mod.rs"]
mod nsd;

use common::*;
use nsd::Nsd;

/// `prober check ARGS`, with nothing on stderr.
fn check(args: &[&str]) -> Run {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let r = run(&all);
    assert_eq!(r.stderr, "", "{args:?}");
    r
}

/// The numbers of `rtt min/avg/max/mdev = A/B/C/D ms` in a human line.
fn rtts(line: &str) -> Vec<f64> {
    let rest = line.split("rtt min/avg/max/mdev = ").nth(1).expect("ping's rtt figures");
    let figures = rest.split(" ms").next().unwrap();
    figures.split('/').map(|n| n.parse().expect("a number")).collect()
}

#[test]
fn icmp_echoes_to_loopback_print_pings_summary() {
    for host in ["127.0.0.1", "[::1]", "::1"] {
        let target = format!("icmp://{host}");
        let r = check(&["-c", "3", "--interval", "10ms", &target]);
        assert_eq!(r.code, 0, "{target}: {}", r.stdout);
        let line = r.stdout.trim_end();
        assert!(line.starts_with("success (3 sent, 3 received, 0% loss, rtt "), "{line}");
        let rtt = rtts(line);
        assert_eq!(rtt.len(), 4, "{line}");
        assert!(rtt[0] <= rtt[1] && rtt[1] <= rtt[2], "min <= avg <= max: {line}");
        assert!(!r.stdout.contains(" answers: "), "{line}");
    }
    let (code, v) = check_json(&["--count", "2", "--interval", "10ms", "icmp://127.0.0.1"]);
    assert_eq!(code, 0, "{v}");
    assert_common_fields(&v);
    let icmp = &v["icmp"];
    assert_eq!((icmp["sent"].as_u64(), icmp["received"].as_u64()), (Some(2), Some(2)), "{v}");
    assert_eq!(icmp["loss"].as_f64(), Some(0.0), "{v}");
    assert!(icmp["rtt_min_ms"].as_f64().unwrap() <= icmp["rtt_max_ms"].as_f64().unwrap());
    assert!(icmp["reply_hop_limit"].as_u64().is_some(), "{v}");
    assert!(v.get("output_total").is_none(), "an echo has no output: {v}");
}

#[test]
fn icmp_failures_and_usage_errors_have_their_exit_status() {
    // The family refuses the only address: a failure before anything is sent.
    let r = check(&["-6", "icmp://127.0.0.1"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.starts_with("failure: "), "{}", r.stdout);
    assert!(r.stdout.contains("(dns, "), "{}", r.stdout);
    for (args, needle) in [
        (&["-c", "0", "icmp://127.0.0.1"][..], "bad --count '0'"),
        (&["-c", "3", "--timeout", "1s", "icmp://127.0.0.1"], "3 packets"),
        (&["--interval", "1ms", "-c", "2", "icmp://127.0.0.1"], "at least 2ms"),
        (&["--ttl", "256", "icmp://127.0.0.1"], "bad --ttl '256'"),
        (&["--max-loss", "101%", "icmp://127.0.0.1"], "bad --max-loss '101%'"),
        (&["--dns-type", "AAAA", "icmp://127.0.0.1"], "--dns-type applies to dns://"),
        (&["-c", "2", "tcp://127.0.0.1:1"], "-c applies to icmp://"),
        (&["-H", "X: y", "icmp://127.0.0.1"], "applies to http"),
        (&["--tls", "icmp://127.0.0.1"], "--tls applies to https://, grpc://, tcp:// and dns://"),
        (&["icmp://127.0.0.1:80"], "an ICMP target is a host only"),
        (&["icmp://h/x"], "an ICMP target is a host only"),
        (&["--source-address", "::1", "icmp://127.0.0.1"], "other family"),
    ] {
        let mut all = vec!["check"];
        all.extend_from_slice(args);
        assert_usage_error(&all, needle);
    }
}

#[test]
fn dns_queries_to_nsd_print_the_rcode_and_the_answers() {
    let server = Nsd::start();
    let at = |name: &str| format!("dns://{}/{name}", server.addr);
    let r = check(&[&at("a.probe.test")]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let line = r.stdout.trim_end();
    assert!(line.starts_with("success (NOERROR, 1 answer, "), "{line}");
    assert!(line.ends_with(") answers: a.probe.test. 3600 IN A 192.0.2.1"), "{line}");
    let r = check(&["--dns-type", "aaaa", "--dns-tcp", &at("a.probe.test")]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.ends_with("answers: a.probe.test. 3600 IN AAAA 2001:db8::1\n"),
        "{}",
        r.stdout
    );
    // Two records, in one line.
    let r = check(&["--dns-type", "NS", "--valid-rcodes", "NOERROR", &at("probe.test")]);
    assert!(r.stdout.contains("answers: probe.test. 3600 IN NS ns1.probe.test."), "{}", r.stdout);

    // An rcode that is not valid: exit 1, with the rcode in the details.
    let r = check(&[&at("nothing.probe.test")]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(
        r.stdout.split(" (").next().unwrap(),
        "failure: rcode NXDOMAIN is not one of the valid rcodes [NOERROR]"
    );
    assert!(r.stdout.contains("(status, NXDOMAIN, 0 answers, "), "{}", r.stdout);
    let r = check(&["--valid-rcodes", "NOERROR,nxdomain", &at("nothing.probe.test")]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.starts_with("success (NXDOMAIN, 0 answers, "), "{}", r.stdout);

    // An answer that does not hold what is expected.
    let r = check(&["--expect-answer", r"192\.0\.2\.9$", &at("a.probe.test")]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("(body, NOERROR, 1 answer, "), "{}", r.stdout);
    assert!(r.stdout.ends_with("answers: a.probe.test. 3600 IN A 192.0.2.1\n"), "{}", r.stdout);
    let r = check(&["--expect-answer", r"192\.0\.2\.1$", &at("a.probe.test")]);
    assert_eq!(r.code, 0, "{}", r.stdout);

    let (code, v) = check_json(&[&at("a.probe.test")]);
    assert_eq!(code, 0, "{v}");
    assert_common_fields(&v);
    assert_eq!(v["output"], "a.probe.test.\t3600\tIN\tA\t192.0.2.1\n", "{v}");
    assert_eq!(
        (v["dns"]["rcode"].as_str(), v["dns"]["answer_rrs"].as_u64()),
        (Some("NOERROR"), Some(1))
    );
    assert_eq!(v["dns"]["query_succeeded"], true, "{v}");
}

#[test]
fn dns_check_in_a_network_namespace() {
    let server = Nsd::start();
    // --netns: the socket made in a namespace (this one's own, where NSD listens).
    let r =
        check(&["--netns", "/proc/self/ns/net", &format!("dns://{}/a.probe.test", server.addr)]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    // ICMP too: its echo socket made there.
    let r = check(&["--netns", "/proc/self/ns/net", "icmp://::1"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn dns_over_tls_with_the_tls_options() {
    let pki = pki("dot", &["ns1.probe.test"]);
    let server = Nsd::start_tls(&pki.server);
    let target = format!("dns://{}/a.probe.test", server.tls_addr.expect("a TLS port"));
    let verified = ["--tls", "--tls-ca", &pki.ca_file, "--tls-server-name", "ns1.probe.test"];
    let r = check(&[&verified[..], &[&target]].concat());
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.ends_with("answers: a.probe.test. 3600 IN A 192.0.2.1\n"), "{}", r.stdout);
    // Another CA: the handshake fails, reason tls.
    let other = ["--tls", "--tls-ca", &pki.other_ca_file, "--tls-server-name", "ns1.probe.test"];
    let r = check(&[&other[..], &[&target]].concat());
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.starts_with("failure: ") && r.stdout.contains("(tls, "), "{}", r.stdout);
    // Without a port, DNS over TLS asks port 853 (nothing listens there: refused).
    let r = check(&["--tls", "--timeout", "5s", "dns://127.0.0.1/a.probe.test"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("127.0.0.1:853"), "{}", r.stdout);
    let plain = format!("dns://{}/a.probe.test", server.addr);
    assert_usage_error(&["check", "--tls-ca", &pki.ca_file, &plain], "needs --tls on dns://");
    assert_usage_error(&["check", "--tls", "--dns-tcp", &plain], "do not go with --tls");

    // The same in a watch file: transport tls, and the probe's tls: block.
    let text = format!(
        "targets:\n- name: dot\n  readinessProbe:\n    dns: {{host: 127.0.0.1, port: {}, name: a.probe.test, transport: tls}}\n    tls: {{caFile: {:?}, serverName: ns1.probe.test}}\n    periodMilliseconds: 100\n    timeoutSeconds: 5\n",
        server.tls_addr.unwrap().port(),
        pki.ca_file
    );
    let file = write_file("yaml", &text);
    let r = run(&["watch", "--until-ready", "--for", "60s", file.path()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(" dot readiness success (NOERROR, 1 answer)"), "{}", r.stdout);
}

#[test]
fn dns_failures_and_usage_errors_have_their_exit_status() {
    // Nothing listens on a port just freed: refused, a failure.
    let port = std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let r = check(&[&format!("dns://127.0.0.1:{port}/a.probe.test")]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.starts_with("failure: read udp 127.0.0.1:"), "{}", r.stdout);
    for (args, needle) in [
        (&["dns://127.0.0.1"][..], "missing the name to ask"),
        (&["dns://127.0.0.1/"], "missing the name to ask"),
        (&["dns://::1/a.test"], "brackets"),
        (&["dns://127.0.0.1:0/a.test"], "invalid port"),
        (&["dns://127.0.0.1/a..test"], "DNS query name"),
        (&["--dns-type", "AX", "dns://127.0.0.1/a.test"], "bad --dns-type 'AX'"),
        (&["--valid-rcodes", "OK", "dns://127.0.0.1/a.test"], "unknown rcode 'OK'"),
        (&["--dns-tcp", "--dns-tcp-fallback", "dns://127.0.0.1/a.test"], "not both"),
        (&["--dns-edns", "100", "dns://127.0.0.1/a.test"], "bad --dns-edns '100'"),
        (&["--expect-answer", "(", "dns://127.0.0.1/a.test"], "--expect-answer:"),
        (&["--count", "2", "dns://127.0.0.1/a.test"], "--count applies to icmp://"),
        (&["--dns-tcp", "http://127.0.0.1/"], "--dns-tcp applies to dns://"),
        (&["dnss://127.0.0.1/a.test"], "expected http, https, tcp, grpc, dns or icmp"),
        (&["dns:127.0.0.1/a.test"], "did you mean 'dns://127.0.0.1/a.test'?"),
    ] {
        let mut all = vec!["check"];
        all.extend_from_slice(args);
        assert_usage_error(&all, needle);
    }
}

#[test]
fn a_watch_file_with_dns_and_icmp_probes() {
    let server = Nsd::start();
    let text = format!(
        "targets:
- name: ns
  readinessProbe:
    dns: {{host: 127.0.0.1, port: {port}, name: a.probe.test, type: AAAA, transport: tcp,
          validateAnswerRrs: {{failIfNoneMatchesRegexp: ['2001:db8::1$']}}}}
    periodMilliseconds: 100
- name: loopback
  readinessProbe:
    icmp: {{host: '::1', packets: 2, intervalMilliseconds: 10}}
    periodMilliseconds: 100
    timeoutMilliseconds: 2000
",
        port = server.addr.port()
    );
    let file = write_file("yaml", &text);
    let r = run(&["watch", "--until-ready", "--for", "60s", file.path()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let ready = |target: &str, details: &str| {
        lines.iter().any(|l| {
            l.contains(&format!(" {target} readiness success ({details}"))
                && l.ends_with("started=yes ready=yes live=yes")
        })
    };
    assert!(ready("ns", "NOERROR, 1 answer)"), "{lines:#?}");
    assert!(
        ready("loopback", "2 sent, 2 received, 0% loss, rtt min/avg/max/mdev = "),
        "{lines:#?}"
    );
    assert!(lines.last().is_some_and(|l| l.starts_with("summary: ")), "{lines:#?}");
}

#[test]
fn watch_run_lines_carry_the_echo_figures() {
    let file = one_probe_file(
        "loopback",
        "livenessProbe",
        "icmp: {host: 127.0.0.1, packets: 3, intervalMilliseconds: 5}",
        &["periodMilliseconds: 100"],
    );
    let mut w = Watch::start(&["--json", "--every-run", "--for", "60s", file.path()]);
    let line = w.until("a run line", |l| l.contains("\"run\":"));
    let v: Value = serde_json::from_str(&line).unwrap();
    let icmp = &v["run"]["icmp"];
    assert_eq!((icmp["sent"].as_u64(), icmp["received"].as_u64()), (Some(3), Some(3)), "{v}");
    assert!(icmp["rtt_avg_ms"].is_number(), "{v}");
}

#[test]
fn watch_files_refuse_bad_dns_and_icmp_fields_with_their_path() {
    for (probe, needles) in [
        ("dns: {name: a.test, type: AX}", &["readinessProbe.dns.type: unknown type \"AX\""][..]),
        ("dns: {port: 53}", &["missing field `name`"]),
        ("dns: {name: a.test, retries: 2}", &["unknown field `retries`"]),
        ("icmp: {packets: 0}", &["readinessProbe.icmp.packets: expected 1 to 10000 (got 0)"]),
        ("icmp: {packets: 3}", &["readinessProbe.icmp: icmp: 3 packets 1s apart take 2s"]),
        (
            "icmp: {}\n    dns: {name: a.test}",
            &["give only one of exec, httpGet, tcpSocket, grpc, dns and icmp"],
        ),
    ] {
        let text = format!("targets:\n- name: t\n  readinessProbe:\n    {probe}\n");
        assert_bad_file(&[], &text, "yaml", needles);
    }
    // The target's connection fields (netns, ipFamily, sourceAddress) apply to both kinds:
    // none is refused for them (tests/netns.rs and tests/source_address.rs use them).
}
