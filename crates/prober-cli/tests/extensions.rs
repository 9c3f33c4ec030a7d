//! The extensions beyond the kubelet through the `prober` command: `check --expect-status`
//! and `--expect-body`, and the watch-file fields `httpGet.expectStatus`,
//! `httpGet.expectBody`, `unhealthyPeriod*`, `transitionPeriod*` and `jitterPercent`, against
//! `prober_testkit::TargetServer`. Bounds only turn hangs into failures.

mod common;

use std::net::TcpListener;

use common::*;
use prober_testkit::grpc::HealthServer;
use prober_testkit::keep_alive::KeepAliveServer;

#[test]
fn check_expect_status() {
    let server = TargetServer::start();
    let (code, v) = check_json(&["--expect-status", "200-299,418", &server.url("/status/418")]);
    assert_eq!(
        (code, v["result"].as_str(), v["http_status"].as_u64()),
        (0, Some("success"), Some(418)),
        "{v}"
    );
    let (code, v) = check_json(&["--expect-status=204", &server.url("/ok")]);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (1, Some("failure"), Some("status")),
        "{v}"
    );
    assert_eq!(v["message"], "HTTP probe failed with statuscode: 200");
}

#[test]
fn check_expect_body() {
    let server = TargetServer::start();
    let (code, v) = check_json(&["--expect-body", "^ok$", &server.url("/health")]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    server.set_healthy(false);
    let args = ["--expect-status", "503", "--expect-body", "^ok$", &server.url("/health")];
    let (code, v) = check_json(&args);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (1, Some("failure"), Some("body")),
        "{v}"
    );
    assert!(v["message"].as_str().unwrap().contains("body did not match \"^ok$\""), "{v}");
    // The human line says the same.
    let r =
        run(&["check", "--expect-status", "503", "--expect-body", "^ok$", &server.url("/health")]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("body did not match"), "{}", r.stdout);
}

#[test]
fn check_body_cel() {
    let server = TargetServer::start();
    // `{"status":"up","n":3}`, percent-encoded for the testkit's `body` parameter.
    let url = server.url("/no-location/200?body=%7B%22status%22%3A%22up%22%2C%22n%22%3A3%7D");
    let up = "body.status == 'up' && body.n > 2";
    let (code, v) = check_json(&["--expect-body-cel", up, &url]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    let (code, v) = check_json(&["--fail-if-body-cel", up, &url]);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (1, Some("failure"), Some("body")),
        "{v}"
    );
    assert!(v["message"].as_str().unwrap().contains("body matched CEL expression"), "{v}");
    // A body that is not JSON fails either way.
    let (code, v) = check_json(&["--expect-body-cel", "true", &server.url("/ok")]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("body")), "{v}");
    assert!(v["message"].as_str().unwrap().contains("JSON"), "{v}");
    // A bad expression is refused before anything runs, with its position.
    assert_usage_error(
        &["check", "--expect-body-cel", "body.status ==", &url],
        "--expect-body-cel: invalid CEL expression \"body.status ==\": Syntax error",
    );
    assert_usage_error(
        &["check", "--fail-if-body-cel", "true", "tcp://127.0.0.1:1"],
        "--fail-if-body-cel applies to http:// and https:// targets only",
    );
}

#[test]
fn check_refuses_bad_expectations() {
    assert_usage_error(
        &["check", "--expect-status", "200-", "http://127.0.0.1:1/"],
        "--expect-status: invalid status set \"200-\"",
    );
    assert_usage_error(
        &["check", "--expect-status", "2xx", "http://127.0.0.1:1/"],
        "is not a status code",
    );
    assert_usage_error(
        &["check", "--expect-body", "a(b", "http://127.0.0.1:1/"],
        "--expect-body: invalid regular expression \"a(b\"",
    );
    assert_usage_error(
        &["check", "--expect-status", "200", "tcp://127.0.0.1:1"],
        "--expect-status applies to http:// and https:// targets only",
    );
    assert_usage_error(
        &["check", "--expect-body", "x", "--", "/bin/true"],
        "--expect-body applies to http://",
    );
    assert_usage_error(&["check", "--expect-body"], "needs a value");
    // An empty expression matches any body (and the first byte of any reply): a value that
    // went missing, not an expectation.
    assert_usage_error(
        &["check", "--expect-body", "", "http://127.0.0.1:1/"],
        "--expect-body: empty regular expression: it matches anything",
    );
    assert_usage_error(
        &["check", "--expect", "", "tcp://127.0.0.1:1"],
        "--expect: empty regular expression: it matches anything",
    );
}

/// A readiness probe of a target that always answers 503 with a minute's period: with
/// `unhealthyPeriodMilliseconds: 20`, requests keep arriving (counted on the server).
#[test]
fn watch_unhealthy_period_and_jitter() {
    let server = TargetServer::start();
    let file = one_probe_file(
        "web",
        "readinessProbe",
        &format!(
            "httpGet: {{path: /status/503, port: {}, expectStatus: \"200-299\", expectBody: ok}}",
            server.port()
        ),
        &[
            "periodSeconds: 60",
            "failureThreshold: 1",
            "unhealthyPeriodMilliseconds: 20",
            "transitionPeriodMilliseconds: 20",
            "jitterPercent: 10",
        ],
    );
    run_until_requests(&["watch", "--for", "60s", file.path()], 5, || server.requests());
}

#[test]
fn watch_refuses_bad_extension_fields() {
    // "http:..." goes inside the httpGet block, anything else is a probe field.
    let probe = |extra: &str| {
        let (inside, field) = match extra.strip_prefix("http:") {
            Some(inside) => (inside.to_string(), String::new()),
            None => (String::new(), format!("    {extra}\n")),
        };
        write_file(
            "yaml",
            &format!(
                "targets:\n- name: web\n  readinessProbe:\n    httpGet: {{path: /, port: 1{inside}}}\n{field}"
            ),
        )
    };
    let cases = [
        (
            "http:, expectStatus: \"200-\"",
            "target \"web\": readinessProbe.httpGet.expectStatus: invalid status set",
        ),
        (
            "http:, expectBody: \"a(b\"",
            "target \"web\": readinessProbe.httpGet.expectBody: invalid regular expression",
        ),
        (
            "http:, expectBody: \"\"",
            "target \"web\": readinessProbe.httpGet.expectBody: empty regular expression",
        ),
        (
            "unhealthyPeriodSeconds: 0",
            "target \"web\": readinessProbe.unhealthyPeriodSeconds: must be at least 1",
        ),
        (
            "transitionPeriodMilliseconds: -5",
            "target \"web\": readinessProbe.transitionPeriodMilliseconds: must be at least 1",
        ),
        (
            "jitterPercent: 80",
            "target \"web\": readinessProbe.jitterPercent: expected 0 to 50 (got 80)",
        ),
        (
            "unhealthyPeriodSeconds: 1\n    unhealthyPeriodMilliseconds: 5",
            "give unhealthyPeriodSeconds or unhealthyPeriodMilliseconds, not both",
        ),
    ];
    for (extra, needle) in cases {
        let file = probe(extra);
        assert_usage_error(&["watch", "--for", "1s", file.path()], needle);
    }
    // expectStatus on tcpSocket is not a field there: refused with its position.
    let file = write_file(
        "yaml",
        "targets:\n- name: web\n  readinessProbe:\n    tcpSocket: {port: 1, expectStatus: \"200\"}\n",
    );
    assert_usage_error(&["watch", "--for", "1s", file.path()], "expectStatus");
}

/// A Redis-style peer on loopback: answers `+PONG` to `PING` and `-ERR` to anything else, for
/// any number of connections. Returns its port.
fn redis_like() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { return };
            std::thread::spawn(move || {
                let mut line = String::new();
                let _ = BufReader::new(c.try_clone().unwrap()).read_line(&mut line);
                let reply: &[u8] =
                    if line == "PING\r\n" { b"+PONG\r\n" } else { b"-ERR unknown command\r\n" };
                let _ = c.write_all(reply);
            });
        }
    });
    port
}

#[test]
fn check_tcp_send_expect() {
    let port = redis_like();
    let target = format!("tcp://127.0.0.1:{port}");
    let (code, v) = check_json(&["--send", "PING\\r\\n", "--expect", "^\\+PONG", &target]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    let (code, v) = check_json(&["--send", "HELLO\\r\\n", "--expect", "^\\+PONG", &target]);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (1, Some("failure"), Some("body")),
        "{v}"
    );
    assert!(
        v["message"].as_str().unwrap().contains("received: \"-ERR unknown command\\r\\n\""),
        "{v}"
    );

    assert_usage_error(
        &["check", "--send", "x", "http://127.0.0.1:1/"],
        "--send applies to tcp:// targets only",
    );
    assert_usage_error(
        &["check", "--expect", "x", "--", "/bin/true"],
        "--expect applies to tcp:// targets only",
    );
    assert_usage_error(&["check", "--send", "PING\\q", &target], "--send: invalid data to send");
    assert_usage_error(&["check", "--send", "\\x4", &target], "needs two hex digits");
    assert_usage_error(
        &["check", "--expect", "(", &target],
        "--expect: invalid regular expression",
    );
}

#[test]
fn watch_tcp_send_expect() {
    let port = redis_like();
    let file = one_probe_file(
        "redis",
        "readinessProbe",
        &format!("tcpSocket: {{port: {port}, send: \"PING\\\\r\\\\n\", expect: \"^\\\\+PONG\"}}"),
        &["periodMilliseconds: 50"],
    );
    let r = run(&["watch", "--until-ready", "--for", "60s", file.path()]);
    assert_eq!(r.code, 0, "{}", r.stderr);

    let bad = write_file(
        "yaml",
        "targets:\n- name: r\n  readinessProbe:\n    tcpSocket: {port: 1, send: \"a\\\\z\"}\n",
    );
    assert_usage_error(
        &["watch", "--for", "1s", bad.path()],
        "readinessProbe.tcpSocket.send: invalid data to send",
    );
    let bad = write_file(
        "yaml",
        "targets:\n- name: r\n  readinessProbe:\n    httpGet: {port: 1, send: x}\n",
    );
    assert_usage_error(&["watch", "--for", "1s", bad.path()], "send");
    let bad = write_file(
        "yaml",
        "targets:\n- name: r\n  readinessProbe:\n    tcpSocket: {port: 1, expect: \"\"}\n",
    );
    assert_usage_error(
        &["watch", "--for", "1s", bad.path()],
        "target \"r\": readinessProbe.tcpSocket.expect: empty regular expression: it matches anything",
    );
}

#[test]
fn watch_keep_alive_reuses_one_connection() {
    let server = KeepAliveServer::start();
    let port = server.port();
    let file = one_probe_file(
        "web",
        "readinessProbe",
        &format!("httpGet: {{path: /, port: {port}, keepAlive: true}}"),
        &["periodMilliseconds: 20"],
    );
    run_until_requests(&["watch", "--for", "60s", file.path()], 5, || server.requests());
    assert_eq!(server.connections(), 1, "one connection for every run");
}

#[test]
fn watch_grpc_keep_alive_reuses_one_connection() {
    let server = std::cell::RefCell::new(HealthServer::start(&[]));
    let port = server.borrow().port();
    let file = one_probe_file(
        "api",
        "readinessProbe",
        &format!("grpc: {{port: {port}, keepAlive: true}}"),
        &["periodMilliseconds: 20"],
    );
    run_until_requests(&["watch", "--for", "60s", file.path()], 5, || server.borrow_mut().checks());
    assert_eq!(server.borrow_mut().connections(), 1, "one connection for every check");
}

#[test]
fn check_keep_alive_is_harmless_and_http_only() {
    let server = KeepAliveServer::start();
    let port = server.port();
    let url = format!("http://127.0.0.1:{port}/");
    let (code, v) = check_json(&["--keep-alive", &url]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"], "success", "{v}");
    assert_eq!(server.connections(), 1);
    assert_usage_error(&["check", "--keep-alive", "tcp://127.0.0.1:1"], "--keep-alive applies to");
    // gRPC too: one check, one connection, closed at the end.
    let mut grpc = HealthServer::start(&[]);
    let (code, v) = check_json(&["--keep-alive", &format!("grpc://127.0.0.1:{}", grpc.port())]);
    assert_eq!((code, &v["result"]), (0, &serde_json::json!("success")), "{v}");
    assert_eq!(grpc.connections(), 1);
}
