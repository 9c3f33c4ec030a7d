//! Module options blackbox_exporter v0.28.0 has that `prober serve` refused before (issue 34,
//! section 3), each against a real server on loopback, judged by the lines a scrape reads.

use std::path::{Path, PathBuf};

use prober_blackbox::{Exporter, Modules, Request, Response};
use prober_testkit::grpc::HealthServer;
use prober_testkit::script::{Act, ScriptServer};
use prober_testkit::tls::{TestCa, TlsServerOptions, TlsTargetServer, TlsVersions, self_signed};
use prober_testkit::{TargetServer, closed_port};

fn dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-blackbox-v028-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn exporter(yaml: &str, base: &Path) -> Exporter {
    let modules = Modules::parse(yaml, base).unwrap_or_else(|e| panic!("refused: {e}"));
    Exporter::start(modules).unwrap()
}

fn get(e: &Exporter, query: &str) -> Response {
    e.handle(&Request { path: "/probe", query, headers: &[] })
}

/// The value of the sample `name` (with its labels, as written) in an exposition.
fn sample(body: &str, name: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')).map(str::to_string))
}

/// The whole family `name`: its HELP, TYPE and sample lines, in order.
fn family(body: &str, name: &str) -> Vec<String> {
    body.lines()
        .filter(|l| {
            l.strip_prefix("# HELP ")
                .or_else(|| l.strip_prefix("# TYPE "))
                .unwrap_or(l)
                .strip_prefix(name)
                .is_some_and(|r| r.starts_with([' ', '{']))
        })
        .map(str::to_string)
        .collect()
}

/// `grpc.metadata` goes with the health check: grpc-go's server answers Unauthenticated
/// unless it receives each pair (a `-bin` value as the bytes written, which go base64-encoded).
#[test]
fn grpc_metadata_is_sent() {
    let g = HealthServer::start(&[
        "-require-metadata",
        "x-tenant=blue",
        "-require-metadata",
        "key2-bin=test",
    ]);
    let e = exporter(
        "modules:
  with_md:
    prober: grpc
    grpc:
      metadata:
        X-Tenant: [blue]
        key2-bin: [test]
  without_md:
    prober: grpc
",
        Path::new("."),
    );
    let addr = format!("127.0.0.1:{}", g.port());
    let r = get(&e, &format!("module=with_md&target={addr}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_grpc_status_code").as_deref(), Some("0"));
    // The same server refuses a request without them: the metadata is what passed.
    let r = get(&e, &format!("module=without_md&target={addr}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(
        family(&r.body, "probe_grpc_status_code").last().map(String::as_str),
        Some("probe_grpc_status_code 16"),
        "Unauthenticated"
    );
}

/// A key gRPC reserves is refused at start, with the module's name, never dropped in silence.
#[test]
fn reserved_grpc_metadata_is_refused() {
    let yaml = "modules:\n  m:\n    prober: grpc\n    grpc: {metadata: {grpc-timeout: [1S]}}\n";
    let err = Modules::parse(yaml, Path::new(".")).unwrap_err();
    assert!(err.contains("module \"m\": grpc.metadata:"), "{err}");
}

/// Go's `tls.CipherSuiteName` for the suites the library negotiates (TLS 1.3's, then 1.2's),
/// as `go run` printed them with Go 1.26.
const GO_SUITE_NAMES: [&str; 9] = [
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
];

/// `probe_tls_cipher_info{cipher}` of an HTTP module over TLS 1.3 and 1.2: the suite the debug
/// log names, in Go's spelling; none over plain HTTP, and none for a tcp module with TLS
/// (blackbox_exporter v0.28.0 registers it in its HTTP prober only).
#[test]
fn tls_cipher_info_names_the_suite_as_go() {
    let e = exporter(
        "modules:
  https:
    prober: http
    http: {tls_config: {insecure_skip_verify: true}}
  tcp_tls:
    prober: tcp
    tcp: {tls: true, tls_config: {insecure_skip_verify: true}}
",
        Path::new("."),
    );
    for (versions, prefix) in
        [(TlsVersions::Tls13Only, "TLS_AES"), (TlsVersions::Tls12Only, "TLS_ECDHE")]
    {
        let mut opts = TlsServerOptions::new(self_signed(&["127.0.0.1"]));
        opts.versions = versions;
        let s = TlsTargetServer::start(opts);
        let r = get(&e, &format!("module=https&target={}&debug=true", s.url("/ok")));
        let b = &r.body;
        assert_eq!(sample(b, "probe_success").as_deref(), Some("1"), "{b}");
        let logged = b
            .lines()
            .find_map(|l| l.split(" cipher_suite=").nth(1))
            .and_then(|r| r.split(' ').next())
            .unwrap_or_else(|| panic!("no cipher_suite in the log:\n{b}"));
        let go_name = logged.replace("TLS13_", "TLS_");
        assert!(GO_SUITE_NAMES.contains(&go_name.as_str()), "{logged}");
        assert!(go_name.starts_with(prefix) || go_name.starts_with("TLS_CHACHA"), "{go_name}");
        assert_eq!(
            family(b, "probe_tls_cipher_info"),
            [
                "# HELP probe_tls_cipher_info Returns the TLS cipher negotiated during handshake"
                    .to_string(),
                "# TYPE probe_tls_cipher_info gauge".to_string(),
                format!("probe_tls_cipher_info{{cipher=\"{go_name}\"}} 1"),
            ]
        );
        // In client_golang's order: right before probe_tls_version_info.
        let at = |n: &str| b.find(&format!("# HELP {n} ")).unwrap_or_else(|| panic!("{n}: {b}"));
        assert!(at("probe_success") < at("probe_tls_cipher_info"));
        assert!(at("probe_tls_cipher_info") < at("probe_tls_version_info"));
        let r = get(&e, &format!("module=tcp_tls&target=127.0.0.1:{}", s.port()));
        assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
        assert!(r.body.contains("probe_tls_version_info"), "{}", r.body);
        assert!(!r.body.contains("probe_tls_cipher_info"), "{}", r.body);
    }
    let plain = TargetServer::start();
    let r = get(&e, &format!("module=https&target={}", plain.url("/ok")));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert!(!r.body.contains("probe_tls_cipher_info"), "{}", r.body);
}

/// A binary greeting read as bytes (`expect_bytes`, with a `\n` inside: not a line), then a
/// line whose groups label `probe_expect_info`, then a last line.
const BYTES_AND_LABELS: &str = r#"
modules:
  greeting:
    prober: tcp
    timeout: 5s
    tcp:
      query_response:
        - expect_bytes: "\x00\x01\nOK"
          send: "HELLO"
        - expect: "^version ([0-9.]+) build (\\w+)$"
          labels:
            - {name: version, value: "${1}"}
            - {name: build, value: "b-${2}"}
          send: "QUIT"
        - expect: "^bye"
"#;

fn greeting_server(greeting: &str, after_hello: Vec<Act>) -> ScriptServer {
    let mut script = vec![Act::say(greeting), Act::hear("HELLO")];
    script.extend(after_hello);
    ScriptServer::start(script, None, false)
}

/// `(probe_success, probe_failed_due_to_bytes, probe_failed_due_to_regex)`.
fn tcp_verdict(r: &Response) -> (String, String, String) {
    let get = |name| sample(&r.body, name).unwrap_or_else(|| panic!("no {name} in {}", r.body));
    (get("probe_success"), get("probe_failed_due_to_bytes"), get("probe_failed_due_to_regex"))
}

#[test]
fn expect_bytes_and_labels() {
    let e = exporter(BYTES_AND_LABELS, Path::new("."));
    let probe = |s: &ScriptServer| {
        get(&e, &format!("module=greeting&target=127.0.0.1:{}&debug=true", s.port()))
    };
    let info = [
        "# HELP probe_expect_info Explicit content matched",
        "# TYPE probe_expect_info gauge",
        "probe_expect_info{build=\"b-abc\",version=\"1.2.3\"} 1",
    ];
    let rest = || vec![Act::say("motd\r\nversion 1.2.3 build abc\r\n"), Act::hear("QUIT")];

    // All steps pass; the server heard the two lines the steps send.
    let mut script = rest();
    script.push(Act::say("bye\r\n"));
    let s = greeting_server("\x00\x01\nOK", script);
    let r = probe(&s);
    assert_eq!(tcp_verdict(&r), ("1".into(), "0".into(), "0".into()), "{}", r.body);
    assert_eq!(family(&r.body, "probe_expect_info"), info);
    let heard = s.wait_heard(2, std::time::Duration::from_secs(10));
    assert_eq!(heard, [b"HELLO\n".to_vec(), b"QUIT\n".to_vec()]);
    // client_golang's order: after probe_duration_seconds, before the failure gauges.
    let at = |n: &str| r.body.find(&format!("# HELP {n} ")).unwrap_or_else(|| panic!("{n}"));
    assert!(at("probe_duration_seconds") < at("probe_expect_info"));
    assert!(at("probe_expect_info") < at("probe_failed_due_to_bytes"));
    assert!(at("probe_failed_due_to_bytes") < at("probe_failed_due_to_regex"));

    // The labelled step matched, the last one did not: the labels stay, the regex failed.
    let s = greeting_server("\x00\x01\nOK", rest());
    let r = probe(&s);
    assert_eq!(tcp_verdict(&r), ("0".into(), "0".into(), "1".into()), "{}", r.body);
    assert_eq!(family(&r.body, "probe_expect_info"), info);

    // Other bytes: failed due to bytes, nothing sent, no labels.
    let s = greeting_server("\x00\x02\nOK", rest());
    let r = probe(&s);
    assert_eq!(tcp_verdict(&r), ("0".into(), "1".into(), "0".into()), "{}", r.body);
    assert!(r.body.contains("step 1 of 3: the bytes read differ"), "{}", r.body);
    assert!(family(&r.body, "probe_expect_info").is_empty(), "{}", r.body);

    // Fewer bytes before the close: failed, but by neither (blackbox returns on the read).
    let s = ScriptServer::start(vec![Act::say("\x00"), Act::Close], None, false);
    let r = probe(&s);
    assert_eq!(tcp_verdict(&r), ("0".into(), "0".into(), "0".into()), "{}", r.body);
    assert!(r.body.contains("after 1 of the 5 expected bytes"), "{}", r.body);
}

/// blackbox_exporter v0.28.0 registers the query_response gauges once connected: a refused
/// connection has neither.
#[test]
fn no_query_response_gauges_without_a_connection() {
    let e = exporter(BYTES_AND_LABELS, Path::new("."));
    let r = get(&e, &format!("module=greeting&target=127.0.0.1:{}", closed_port()));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert!(!r.body.contains("probe_failed_due_to"), "{}", r.body);
}

/// The series of an exposition, as `name{labels}` without values.
fn series(body: &str) -> Vec<&str> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.rsplit_once(' ').map(|(name, _)| name))
        .collect()
}

/// A line server on a Unix socket: for each of `conns` connections, says a banner, reads one
/// line and answers `bye`. Returns the lines it heard once every connection is done.
fn unix_line_server(path: &Path, conns: usize) -> std::thread::JoinHandle<Vec<String>> {
    use std::io::{BufRead, BufReader, Write};
    let _ = std::fs::remove_file(path);
    let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        let mut heard = Vec::new();
        for _ in 0..conns {
            let (mut conn, _) = listener.accept().unwrap();
            conn.write_all(b"220 app ready v3.1\r\n").unwrap();
            let mut line = String::new();
            BufReader::new(&conn).read_line(&mut line).unwrap();
            heard.push(line);
            conn.write_all(b"bye\r\n").unwrap();
        }
        heard
    })
}

/// `prober: unix` (blackbox_exporter v0.28.0): the target is the socket's path; the
/// query_response steps run over it; only the series its unix prober writes (no lookup, no
/// address); `allow.paths` bounds the sockets reachable.
#[test]
fn unix_prober_runs_query_response_on_a_socket() {
    let d = dir("unix");
    let sock = d.join("app.sock");
    let server = unix_line_server(&sock, 1);
    let yaml = format!(
        r#"
modules:
  unix_banner:
    prober: unix
    timeout: 5s
    unix:
      query_response:
        - expect: "^220 app ready v([0-9.]+)$"
          labels: [{{name: version, value: "${{1}}"}}]
          send: "HELLO"
        - expect: "^bye$"
    allow:
      paths: ["{}/"]
"#,
        d.display()
    );
    let e = exporter(&yaml, Path::new("."));
    let target = sock.display().to_string();
    let r = get(&e, &format!("module=unix_banner&target={target}"));
    assert_eq!(r.status, 200);
    assert_eq!(
        series(&r.body),
        [
            "probe_duration_seconds",
            "probe_expect_info{version=\"3.1\"}",
            "probe_failed_due_to_bytes",
            "probe_failed_due_to_regex",
            "probe_success",
        ],
        "{}",
        r.body
    );
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(server.join().unwrap(), ["HELLO\n"]);

    // No socket there: a failed probe, nothing connected, only the handler's two series.
    let gone = d.join("gone.sock").display().to_string();
    let r = get(&e, &format!("module=unix_banner&target={gone}"));
    assert_eq!(series(&r.body), ["probe_duration_seconds", "probe_success"], "{}", r.body);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"));

    // Outside allow.paths (also by `..`): refused, nothing connected to.
    for outside in ["/run/other.sock".to_string(), format!("{}/../x.sock", d.display())] {
        let r = get(&e, &format!("module=unix_banner&target={outside}"));
        assert_eq!(r.status, 403, "{outside}: {}", r.body);
    }
}

/// A unix module's allow-list takes paths only, and paths go with unix modules only.
#[test]
fn unix_allow_lists_are_checked_at_start() {
    for (yaml, want) in [
        (
            "modules:\n  u:\n    prober: unix\n    allow: {ports: [80]}\n",
            "do not apply to a unix module",
        ),
        ("modules:\n  t:\n    prober: tcp\n    allow: {paths: [/run/]}\n", "unix modules only"),
        ("modules:\n  u:\n    prober: unix\n    allow: {paths: [run/]}\n", "not an absolute path"),
        ("modules:\n  u:\n    prober: unix\n    unix: {tls: true}\n", "server_name is needed"),
    ] {
        let err = Modules::parse(yaml, Path::new(".")).unwrap_err();
        assert!(err.contains(want), "{err}");
    }
}

/// `unix.tls`: the handshake over the socket (grpc-go's server with its certificate, on a Unix
/// socket), verified against a CA for `tls_config.server_name`; the TLS series as the tcp
/// prober's, without `probe_tls_cipher_info` (HTTP's only).
#[test]
fn unix_prober_with_tls() {
    let d = dir("unix-tls");
    let ca = TestCa::new("unix CA");
    let (cert, key) = ca.issue(&["app.internal"]).write_files(&d, "leaf");
    std::fs::write(d.join("ca.pem"), &ca.cert().cert_pem).unwrap();
    let sock = d.join("tls.sock");
    let _g = HealthServer::start(&[
        "-unix",
        sock.to_str().unwrap(),
        "-tls-cert",
        cert.to_str().unwrap(),
        "-tls-key",
        key.to_str().unwrap(),
    ]);
    let e = exporter(
        "modules:
  verified:
    prober: unix
    unix: {tls: true, tls_config: {ca_file: ca.pem, server_name: app.internal}}
  wrong_name:
    prober: unix
    unix: {tls: true, tls_config: {ca_file: ca.pem, server_name: other.internal}}
",
        &d,
    );
    let target = sock.display().to_string();
    let r = get(&e, &format!("module=verified&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    let names: Vec<&str> =
        series(&r.body).into_iter().map(|s| s.split('{').next().unwrap()).collect();
    assert_eq!(
        names,
        [
            "probe_duration_seconds",
            "probe_failed_due_to_bytes",
            "probe_failed_due_to_regex",
            "probe_ssl_earliest_cert_expiry",
            "probe_ssl_last_chain_expiry_timestamp_seconds",
            "probe_ssl_last_chain_info",
            "probe_success",
            "probe_tls_version_info",
        ],
        "{}",
        r.body
    );
    // A name the certificate does not hold: the dial fails, so no query_response series.
    let r = get(&e, &format!("module=wrong_name&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert!(!r.body.contains("probe_failed_due_to"), "{}", r.body);
}
