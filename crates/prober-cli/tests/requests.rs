//! Requests beyond the kubelet through the `prober` command (issue 25): `check -X/-d` and the
//! watch-file fields `httpGet.method` and `httpGet.body`, against
//! `prober_testkit::TargetServer` (which echoes the method and body it received).

mod common;

use common::*;

#[test]
fn check_request_and_data_as_curl() {
    let server = TargetServer::start();
    // -d alone: POST with a form Content-Type, as curl.
    let (code, v) = check_json(&["-d", "a=1", &server.url("/echo/request")]);
    assert_eq!((code, v["output"].as_str()), (0, Some("POST 3\na=1")), "{v}");
    let (_, v) = check_json(&["--data=a=1", &server.url("/echo/headers")]);
    assert!(
        v["output"].as_str().unwrap().contains("Content-Type: application/x-www-form-urlencoded\n"),
        "{v}"
    );
    // -H sets another Content-Type; -X names the method.
    let args = ["-X", "PUT", "-H", "Content-Type: application/json", "-d", "{}"];
    let (_, v) = check_json(&[&args[..], &[&server.url("/echo/headers")]].concat());
    let out = v["output"].as_str().unwrap();
    assert!(out.contains("Content-Type: application/json\n") && !out.contains("urlencoded"), "{v}");
    let (_, v) = check_json(&[&args[..], &[&server.url("/echo/request")]].concat());
    assert_eq!(v["output"], "PUT 2\n{}");
    // @FILE sends the file's bytes.
    let f = write_file("json", "{\"ping\":1}\n");
    let at = format!("@{}", f.path());
    let (_, v) = check_json(&["--request", "PATCH", "-d", &at, &server.url("/echo/request")]);
    assert_eq!(v["output"], "PATCH 11\n{\"ping\":1}\n");
    // HEAD reads no body although the head announces one.
    let (code, v) = check_json(&["-X", "HEAD", "--timeout", "5s", &server.url("/body/100000")]);
    assert_eq!((code, v["result"].as_str(), v["output"].as_str()), (0, Some("success"), Some("")));
    // 303 after a POST: a GET without body, as Go's client.
    let url = server.url("/redirect?code=303&loc=/echo/request");
    let (_, v) = check_json(&["-d", "x", &url]);
    assert_eq!(v["output"], "GET 0\n");
}

#[test]
fn check_refuses_bad_requests() {
    assert_usage_error(&["check", "-X", "GET /", "http://127.0.0.1:1/"], "-X: invalid HTTP method");
    assert_usage_error(
        &["check", "-X", "POST", "tcp://127.0.0.1:1"],
        "-X/--request applies to http",
    );
    assert_usage_error(&["check", "-d", "x", "grpc://127.0.0.1:1"], "-d/--data applies to http");
    assert_usage_error(
        &["check", "-d", "@/nonexistent/x", "http://127.0.0.1:1/"],
        "-d: cannot read",
    );
}

#[test]
fn watch_method_and_body() {
    let server = TargetServer::start();
    let file = one_probe_file(
        "web",
        "readinessProbe",
        &format!(
            "httpGet: {{path: /echo/request, port: {}, method: POST, body: ping, expectBody: \"^POST 4\\nping$\"}}",
            server.port()
        ),
        &["periodMilliseconds: 100", "timeoutMilliseconds: 2000"],
    );
    let mut w = Watch::start(&["--for", "10s", "--json", file.path()]);
    let v = w.next_state("web", "readiness");
    assert_eq!(v["reason"], "initial", "{v}");
    let v = w.next_state("web", "readiness");
    assert_eq!((v["result"].as_str(), v["ready"].as_bool()), (Some("success"), Some(true)), "{v}");
    w.stop();

    assert_bad_file(
        &[],
        "targets:\n- name: web\n  readinessProbe:\n    httpGet: {path: /, port: 1, method: \"A B\"}\n",
        "yaml",
        &["target \"web\": readinessProbe.httpGet.method: invalid HTTP method \"A B\""],
    );
}
