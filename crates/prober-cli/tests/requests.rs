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

/// A fresh directory for sockets of one test.
fn socket_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("prober-cli-unix-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn check_unix_sockets() {
    use prober_testkit::grpc::HealthServer;
    let dir = socket_dir("check");
    // A connect check: TARGET in gRPC's naming.
    let plain = dir.join("plain.sock");
    let _l = std::os::unix::net::UnixListener::bind(&plain).unwrap();
    let target = format!("unix://{}", plain.display());
    let (code, v) = check_json(&[&target]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    let gone = format!("unix:{}/gone.sock", dir.display());
    let (code, v) = check_json(&[&gone]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("refused")), "{v}");
    assert_eq!(
        v["message"],
        format!("dial unix {}/gone.sock: connect: no such file or directory", dir.display())
    );

    // HTTP through a socket to Go's net/http: the URL gives Host and path.
    let http = dir.join("http.sock");
    let _h = HealthServer::start(&["-http1", "-unix", http.to_str().unwrap()]);
    let sock = http.to_str().unwrap();
    let (code, v) = check_json(&["--unix-socket", sock, "http://localhost/echo"]);
    assert_eq!((code, v["output"].as_str()), (0, Some("GET localhost /echo")), "{v}");
    let (_, v) = check_json(&["--unix-socket", sock, "-X", "PUT", "http://api:81/echo"]);
    assert_eq!(v["output"], "PUT api:81 /echo");

    // gRPC health through a socket to grpc-go, and through an abstract one.
    let grpc = dir.join("grpc.sock");
    let _g = HealthServer::start(&["-unix", grpc.to_str().unwrap(), "-status", "db=NOT_SERVING"]);
    let sock = grpc.to_str().unwrap();
    let (code, v) = check_json(&["--unix-socket", sock, "grpc://localhost/"]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    let (code, v) = check_json(&["--unix-socket", sock, "grpc://localhost/db"]);
    assert_eq!((code, v["result"].as_str()), (1, Some("failure")), "{v}");
    let name = format!("prober-cli-test-{}", std::process::id());
    let _a = HealthServer::start(&["-unix", &format!("@{name}")]);
    let (code, v) = check_json(&["--abstract-unix-socket", &name, "grpc://localhost"]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");

    assert_usage_error(
        &["check", "--unix-socket", "/x", "tcp://127.0.0.1:1"],
        "--unix-socket applies to http://, https:// and grpc:// targets",
    );
    assert_usage_error(
        &["check", "--unix-socket", "/x", "--abstract-unix-socket", "y", "http://h/"],
        "not both",
    );
    assert_usage_error(&["check", "unix://host/x"], "unix:// takes an absolute path");
}

#[test]
fn watch_unix_sockets() {
    use prober_testkit::grpc::HealthServer;
    let dir = socket_dir("watch");
    let http = dir.join("http.sock");
    let grpc = dir.join("grpc.sock");
    let _h = HealthServer::start(&["-http1", "-unix", http.to_str().unwrap()]);
    let _g = HealthServer::start(&["-unix", grpc.to_str().unwrap()]);
    let text = format!(
        "targets:\n\
         - name: web\n  readinessProbe:\n    httpGet: {{path: /echo, port: 80, unixSocket: {}, expectBody: '^GET 127.0.0.1:80 /echo$'}}\n    periodMilliseconds: 100\n\
         - name: sock\n  readinessProbe:\n    tcpSocket: {{unixSocket: {}}}\n    periodMilliseconds: 100\n\
         - name: rpc\n  readinessProbe:\n    grpc: {{unixSocket: 'unix://{}'}}\n    periodMilliseconds: 100\n",
        http.display(),
        http.display(),
        grpc.display()
    );
    let file = write_file("yaml", &text);
    let mut w = Watch::start(&["--for", "10s", "--json", "--until-ready", file.path()]);
    let (status, lines) = w.wait();
    assert!(status.success(), "{lines:?}");
    for target in ["web", "sock", "rpc"] {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("\"target\":\"{target}\""))
                    && l.contains("\"ready\":true")),
            "{target}: {lines:?}"
        );
    }

    let bad = |probe: &str, needle: &str| {
        assert_bad_file(
            &[],
            &format!("targets:\n- name: web\n  readinessProbe:\n    {probe}\n"),
            "yaml",
            &[needle],
        );
    };
    bad(
        "tcpSocket: {port: 1, unixSocket: /x}",
        "readinessProbe.tcpSocket: give port or unixSocket, not both",
    );
    bad("tcpSocket: {host: h}", "missing field `port`");
    bad(
        "httpGet: {port: 1, unixSocket: ''}",
        "readinessProbe.httpGet.unixSocket: Unix socket path is empty",
    );
    bad("grpc: {service: x}", "readinessProbe.grpc: missing field `port`");
}

#[test]
fn check_and_watch_grpc_metadata() {
    use prober_testkit::grpc::HealthServer;
    let s = HealthServer::start(&[
        "-require-metadata",
        "authorization=Bearer t0ken",
        "-require-user-agent",
        "grpc_health_probe",
        "-require-authority",
        "health.internal",
    ]);
    let target = format!("grpc://127.0.0.1:{}", s.port());
    let (code, v) =
        check_json(&["-A", "grpc_health_probe", "--authority", "health.internal", &target]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("status")), "{v}");
    assert_eq!(
        v["message"],
        "error: health rpc probe failed: rpc error: code = Unauthenticated desc = missing metadata authorization: 100% denied"
    );
    let args = [
        "--rpc-header",
        "Authorization: Bearer t0ken",
        "--user-agent=grpc_health_probe",
        "--authority",
        "health.internal",
        &target,
    ];
    let (code, v) = check_json(&args);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");

    let file = one_probe_file(
        "rpc",
        "readinessProbe",
        &format!(
            "grpc: {{port: {}, host: 127.0.0.1, userAgent: grpc_health_probe, authority: health.internal, metadata: [{{name: authorization, value: Bearer t0ken}}]}}",
            s.port()
        ),
        &["periodMilliseconds: 100"],
    );
    let r = run(&["watch", "--until-ready", "--for", "10s", file.path()]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);

    assert_usage_error(
        &["check", "--rpc-header", "k-bin: @@", &target],
        "a -bin key takes a base64 value",
    );
    assert_usage_error(&["check", "--rpc-header", "novalue", &target], "expected 'key: value'");
    assert_usage_error(
        &["check", "--authority", "x", "http://h/"],
        "--authority applies to grpc://",
    );
    assert_usage_error(&["check", "--rpc-header", "grpc-x: 1", &target], "reserved key");
    assert_bad_file(
        &[],
        "targets:\n- name: web\n  readinessProbe:\n    grpc: {port: 1, metadata: [{name: 'a b', value: v}]}\n",
        "yaml",
        &["readinessProbe.grpc.metadata[0]: invalid gRPC metadata \"a b\""],
    );
}

#[test]
fn check_user_agent_for_http_as_curl() {
    let server = TargetServer::start();
    let (_, v) = check_json(&["-A", "probe/2", &server.url("/echo/headers")]);
    assert!(v["output"].as_str().unwrap().contains("User-Agent: probe/2\n"), "{v}");
}

#[test]
fn check_and_watch_tcp_with_tls() {
    use prober_testkit::starttls::{LineMode, StartTlsServer};
    use prober_testkit::tls::{TestCa, TlsServerOptions};
    let dir = socket_dir("tls");
    let ca = TestCa::new("CLI TCP TLS CA");
    let (ca_file, _) = ca.cert().write_files(&dir, "ca");
    let ca_file = ca_file.to_str().unwrap().to_string();
    let tls =
        StartTlsServer::start(TlsServerOptions::new(ca.issue(&["db.internal"])), LineMode::Tls);
    let target = format!("tcp://127.0.0.1:{}", tls.port());
    let args = ["--tls", "--tls-ca", &ca_file, "--tls-server-name", "db.internal"];
    let (code, v) = check_json(
        &[&args[..], &["--send", "PING\\r\\n", "--expect", "^\\+PONG", &target]].concat(),
    );
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    assert!(v["timings"]["tls_ms"].is_number(), "{v}");
    let (code, v) = check_json(&["--tls", "--tls-ca", &ca_file, &target]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("tls")), "{v}");

    let st = StartTlsServer::start(
        TlsServerOptions::new(ca.issue(&["mail.internal"])),
        LineMode::StartTls,
    );
    let target = format!("tcp://127.0.0.1:{}", st.port());
    let args = ["--starttls", "--tls-ca", &ca_file, "--tls-server-name", "mail.internal"];
    let (code, v) = check_json(
        &[&args[..], &["--send", "STARTTLS\\r\\n", "--expect", "(?m)^220 go", &target]].concat(),
    );
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");

    let file = one_probe_file(
        "mail",
        "readinessProbe",
        &format!(
            "tcpSocket: {{port: {}, send: \"STARTTLS\\\\r\\\\n\", expect: \"(?m)^220 go\", starttls: true}}",
            st.port()
        ),
        &[
            &format!("tls: {{caFile: {ca_file}, serverName: mail.internal}}"),
            "periodMilliseconds: 100",
        ],
    );
    let r = run(&["watch", "--until-ready", "--for", "10s", file.path()]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
}

/// `--max-redirects N` and `--cookies` (blackbox_exporter's client: 10 redirects, a cookie jar
/// per probe); without them the kubelet's 9 and no jar.
#[test]
fn check_max_redirects_and_cookies() {
    let server = TargetServer::start();
    let chain = server.url("/redirect-chain/10");
    let (code, v) = check_json(&[&chain]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("too_many_redirects")), "{v}");
    let (code, v) = check_json(&["--max-redirects", "10", &chain]);
    assert_eq!((code, v["output"].as_str()), (0, Some("chain end")), "{v}");
    assert_usage_error(&["check", "--max-redirects", "65", &chain], "--max-redirects");
    assert_usage_error(&["check", "--max-redirects", "x", &chain], "bad --max-redirects 'x'");
    assert_usage_error(&["check", "--cookies", "tcp://127.0.0.1:1"], "--cookies applies to http");
    let login = server.url(
        "/bytes?status=302&header=Set-Cookie:session%3Dabc%3B%20Path%3D/&header=Location:/echo/headers",
    );
    let (_, v) = check_json(&[&login]);
    assert!(!v["output"].as_str().unwrap().contains("\nCookie:"), "{v}");
    let (_, v) = check_json(&["--cookies", &login]);
    assert!(v["output"].as_str().unwrap().contains("\nCookie: session=abc\n"), "{v}");
}

/// `--compression CODING` (blackbox_exporter's `compression`): the body decoded before it is
/// kept and matched, up to the limit; without it the bytes as they came.
#[test]
fn check_compression() {
    let server = TargetServer::start();
    let gz = server.url("/encoded/gzip/3000");
    let (code, v) = check_json(&[&gz]);
    assert_eq!(code, 0, "{v}");
    assert_ne!(v["output"].as_str(), Some("a".repeat(3000).as_str()));
    let (code, v) = check_json(&["--compression", "gzip", "--expect-body", "^a{3000}$", &gz]);
    assert_eq!((code, v["output"].as_str()), (0, Some("a".repeat(3000).as_str())), "{v}");
    let (code, v) = check_json(&["--compression", "br", &server.url("/encoded/br/100")]);
    assert_eq!((code, v["output"].as_str()), (0, Some("a".repeat(100).as_str())), "{v}");
    // A bomb ends at the limit (10240 decoded bytes), not at the deadline.
    let (code, v) = check_json(&["--compression", "gzip", &server.url("/encoded/gzip/1073741824")]);
    assert_eq!((code, v["truncated"].as_bool()), (0, Some(true)), "{v}");
    assert_eq!(v["output"].as_str().map(str::len), Some(10240));
    let (code, v) = check_json(&["--compression", "deflate", &gz]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("broken_body")), "{v}");
    assert!(v["message"].as_str().unwrap().ends_with(": flate: corrupt input"), "{v}");
    assert_usage_error(&["check", "--compression", "zstd", &gz], "bad --compression 'zstd'");
    assert_usage_error(
        &["check", "--compression", "gzip", "tcp://127.0.0.1:1"],
        "--compression applies to http",
    );
}
