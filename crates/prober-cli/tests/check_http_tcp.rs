//! `prober check` on http://, https:// (without TLS) and tcp:// targets against
//! `prober_testkit::TargetServer`: exit statuses, JSON fields, human lines, headers, redirects,
//! timeouts.

mod common;

use common::*;

#[test]
fn check_success_exits_0_with_json_fields() {
    let server = TargetServer::start();
    let (code, v) = check_json(&[&server.url("/health")]);
    assert_eq!(code, 0);
    assert_common_fields(&v);
    assert_eq!(v["result"], "success");
    assert_eq!(v["message"], "");
    assert_eq!(v["output"], "ok");
    assert_eq!(v["truncated"], false);
    assert_eq!(v["reason"], "none");
    assert_eq!(v["http_status"], 200);
    assert_eq!(v["output_total"], 2);
    assert!(v.get("exit_code").is_none(), "{v}");
}

#[test]
fn check_warning_exits_0() {
    let server = TargetServer::start();
    let (code, v) = check_json(&[&server.url("/status/302?body=moved")]);
    assert_eq!(code, 0);
    assert_common_fields(&v);
    assert_eq!(v["result"], "warning");
    assert_eq!(v["reason"], "redirect");
    assert_eq!(v["http_status"], 302);
    assert_eq!(v["message"], "Probe terminated redirects, Response body: moved");
    assert_eq!(v["output"], "moved");
}

#[test]
fn check_failure_exits_1() {
    let server = TargetServer::start();
    server.set_healthy(false);
    let (code, v) = check_json(&[&server.url("/health")]);
    assert_eq!(code, 1);
    assert_common_fields(&v);
    assert_eq!(v["result"], "failure");
    assert_eq!(v["reason"], "status");
    assert_eq!(v["http_status"], 503);
    assert_eq!(v["message"], "HTTP probe failed with statuscode: 503");
    assert_eq!(v["output"], "unhealthy");
}

#[test]
fn check_https_is_unknown_without_tls_and_a_failure_with_it() {
    // The target server speaks plain HTTP: without TLS built in the probe cannot run (2,
    // unsupported); with TLS the handshake fails (1).
    let server = TargetServer::start();
    let url = server.url("/health").replacen("http://", "https://", 1);
    let (code, v) = check_json(&[&url]);
    assert_common_fields(&v);
    match v["reason"].as_str().unwrap() {
        "unsupported" => assert_eq!((code, v["result"].as_str()), (2, Some("unknown")), "{v}"),
        _ => assert_eq!((code, v["result"].as_str()), (1, Some("failure")), "{v}"),
    }
}

#[test]
fn check_tcp_success_and_refused() {
    let server = TargetServer::start();
    let (code, v) = check_json(&[&format!("tcp://127.0.0.1:{}", server.port())]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    assert!(v.get("output_total").is_none(), "{v}");
    let port = prober_testkit::closed_port();
    let (code, v) = check_json(&[&format!("tcp://127.0.0.1:{port}")]);
    assert_eq!(
        (code, v["result"].as_str(), v["reason"].as_str()),
        (1, Some("failure"), Some("refused")),
        "{v}"
    );
    assert_eq!(v["message"], format!("dial tcp 127.0.0.1:{port}: connect: connection refused"));
}

#[test]
fn check_human_lines() {
    let server = TargetServer::start();
    let r = run(&["check", &server.url("/health")]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("success (HTTP 200, "), "{}", r.stdout);
    assert_eq!(r.stdout.lines().count(), 1);
    let r = run(&["check", &server.url("/status/500")]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with("failure: HTTP probe failed with statuscode: 500 (status, HTTP 500, "),
        "{}",
        r.stdout
    );
    let r = run(&["check", "--", "/bin/sh", "-c", "exit 3"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with("failure: command terminated with exit code 3 (exit_code, exit 3, "),
        "{}",
        r.stdout
    );
}

#[test]
fn default_headers_are_the_kubelets() {
    let server = TargetServer::start();
    let (code, v) = check_json(&[&server.url("/echo/headers")]);
    assert_eq!(code, 0);
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("\nUser-Agent: kube-probe/"), "{out}");
    assert!(out.contains("\nAccept: */*\n"), "{out}");
}

#[test]
fn empty_user_agent_removes_the_header() {
    let server = TargetServer::start();
    let (code, v) = check_json(&["-H", "User-Agent:", &server.url("/echo/headers")]);
    assert_eq!(code, 0);
    let out = v["output"].as_str().unwrap();
    assert!(!out.to_ascii_lowercase().contains("user-agent"), "{out}");
    assert!(out.contains("Accept: */*"), "{out}");
}

#[test]
fn user_headers_replace_defaults_and_add() {
    let server = TargetServer::start();
    let url = server.url("/echo/headers");
    let (code, v) = check_json(&["-H", "User-Agent: my-agent/2", "--header=X-Probe: yes", &url]);
    assert_eq!(code, 0);
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("User-Agent: my-agent/2\n"), "{out}");
    assert!(!out.contains("kube-probe"), "{out}");
    assert!(out.contains("X-Probe: yes\n"), "{out}");
    let (_, v) = check_json(&["-H", "Accept: text/plain", &url]);
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("Accept: text/plain\n") && !out.contains("*/*"), "{out}");
}

#[test]
fn redirect_policy_option() {
    let server = TargetServer::start();
    let url = server.url("/redirect-chain/1");
    let (code, v) = check_json(&[&url]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    let (code, v) = check_json(&["--redirects", "none", &url]);
    assert_eq!(
        (code, v["result"].as_str(), v["http_status"].as_u64()),
        (0, Some("warning"), Some(302)),
        "{v}"
    );
}

#[test]
fn timeout_is_a_failure() {
    let server = TargetServer::start();
    let (code, v) = check_json(&["--timeout", "200ms", &server.url("/slow-headers/2000")]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["result"], "failure");
    assert_eq!(v["reason"], "timeout");
}

#[test]
fn a_failed_http_check_line_shows_the_first_line_of_the_body() {
    let server = TargetServer::start();
    let r =
        run(&["check", &server.url("/status/503?body=database%20not%20reachable%0Aretry%20later")]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let line = r.stdout.strip_suffix('\n').expect("one line");
    assert!(
        line.starts_with("failure: HTTP probe failed with statuscode: 503 (status, HTTP 503, ")
    );
    assert!(line.ends_with(" body: database not reachable"), "{line}");
    // A success line stays as it was: no body.
    let r = run(&["check", &server.url("/status/200?body=fine")]);
    assert_eq!(r.code, 0);
    assert!(!r.stdout.contains("fine"), "{}", r.stdout);
}
