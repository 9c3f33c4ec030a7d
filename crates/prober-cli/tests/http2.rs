//! HTTP/2 from the command: `check` on https:// (h2 by ALPN, `--http1.1`) and on http://
//! with `--http2-prior-knowledge` (h2c), and a watch file's `httpGet.protocol: HTTP2`, against
//! Go's own net/http server (prober-testkit's Go fixture in `-http` mode: without Go these
//! tests fail, never skip).

mod common;

use std::path::PathBuf;

use common::*;
use prober_testkit::grpc::HealthServer;
use prober_testkit::tls::self_signed;

fn tls_server() -> HealthServer {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-cli-http2-{}", std::process::id()));
    let (cert, key) = self_signed(&["localhost", "127.0.0.1"]).write_files(&dir, "server");
    HealthServer::start(&[
        "-http",
        "-tls-cert",
        cert.to_str().unwrap(),
        "-tls-key",
        key.to_str().unwrap(),
    ])
}

#[test]
fn check_https_negotiates_h2_unless_http1_1() {
    let s = tls_server();
    let url = format!("https://127.0.0.1:{}/proto", s.port());
    let (code, v) = check_json(&[&url]);
    assert_eq!(
        (code, &v["result"], &v["output"]),
        (0, &"success".into(), &"HTTP/2.0".into()),
        "{v}"
    );
    let (code, v) = check_json(&["--http1.1", &url]);
    assert_eq!((code, &v["output"]), (0, &"HTTP/1.1".into()), "{v}");
    let url = format!("https://127.0.0.1:{}/status/500", s.port());
    let (code, v) = check_json(&[&url]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["message"], "HTTP probe failed with statuscode: 500");
}

#[test]
fn check_h2c_with_prior_knowledge() {
    let s = HealthServer::start(&["-http"]);
    let url = format!("http://127.0.0.1:{}/proto", s.port());
    let (code, v) = check_json(&[&url]);
    assert_eq!((code, &v["output"]), (0, &"HTTP/1.1".into()), "{v}");
    let (code, v) = check_json(&["--http2-prior-knowledge", &url]);
    assert_eq!((code, &v["output"]), (0, &"HTTP/2.0".into()), "{v}");
    assert_usage_error(
        &["check", "--http2-prior-knowledge", "https://127.0.0.1:1/"],
        "--http2-prior-knowledge: HTTP/2 with prior knowledge (h2c) is only supported with http:// URLs",
    );
    assert_usage_error(
        &["check", "--http1.1", "tcp://127.0.0.1:1"],
        "--http1.1 applies to http:// and https:// targets only",
    );
}

#[test]
fn watch_file_protocol_http2_is_h2c() {
    let s = HealthServer::start(&["-http"]);
    // Ready only when the server saw HTTP/2.
    let file = write_file(
        "yaml",
        &format!(
            "targets:\n- name: web\n  readinessProbe:\n    httpGet: {{port: {}, path: /proto, protocol: HTTP2, expectBody: 'HTTP/2\\.0'}}\n    periodMilliseconds: 100\n",
            s.port()
        ),
    );
    let mut w = Watch::start(&["--until-ready", "--for", "30s", "--json", file.path()]);
    loop {
        let v = w.next_json();
        if v.get("summary").is_some() {
            assert_eq!(v["all_ready"], true, "{v}");
            break;
        }
    }
    let (status, _) = w.wait();
    assert_eq!(status.code(), Some(0));
    // The kubelet's validation, with the field's path.
    let file = write_file(
        "yaml",
        "targets:\n- name: web\n  readinessProbe:\n    httpGet: {port: 1, scheme: HTTPS, protocol: HTTP2}\n",
    );
    let r = run(&["watch", file.path()]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert!(
        r.stderr.contains("readinessProbe.httpGet.protocol: Invalid value: \"HTTP2\": is only supported with HTTP (H2C)"),
        "{}",
        r.stderr
    );
}
