//! The metrics of what a run learns beyond its verdict, against real servers on loopback: TLS
//! version and certificates (prober-testkit's TLS server), HTTP/2 (Go's net/http), phases
//! summed over redirects, `Last-Modified`, gRPC's codes (grpc-go's health server), and the
//! `hostname` parameter. Each asserts the exact lines a dashboard reads.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use prober_blackbox::{Exporter, Modules, Request, Response};
use prober_testkit::grpc::HealthServer;
use prober_testkit::tls::{TestCa, TlsServerOptions, TlsTargetServer, TlsVersions, self_signed};
use prober_testkit::{TargetServer, closed_port};

/// 2031-02-03T00:00:00Z.
const EXPIRY_2031: i64 = 1_927_843_200;

fn dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-blackbox-facts-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn exporter(yaml: &str, base: &Path) -> Exporter {
    Exporter::start(Modules::parse(yaml, base).unwrap()).unwrap()
}

fn get(e: &Exporter, query: &str) -> Response {
    e.handle(&Request { path: "/probe", query, headers: &[] })
}

/// `target=URL` with the URL's own query encoded.
fn target(url: &str) -> String {
    url.replace('%', "%25").replace('?', "%3F").replace('=', "%3D").replace('&', "%26")
}

/// The value of the sample `name` (with its labels, as written) in an exposition.
fn sample(body: &str, name: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')).map(str::to_string))
}

fn value(body: &str, name: &str) -> f64 {
    sample(body, name)
        .unwrap_or_else(|| panic!("no {name} in:\n{body}"))
        .parse()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
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

/// SHA-256 of a file, by coreutils' `sha256sum`.
fn sha256sum(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().expect("run sha256sum");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string()
}

#[test]
fn tls_version_and_certificate_metrics() {
    let d = dir("tls");
    let ca = TestCa::new("facts CA");
    let leaf = ca.issue_expiring(&["localhost", "127.0.0.1"], (2031, 2, 3));
    std::fs::write(d.join("leaf.der"), &leaf.cert_der).unwrap();
    std::fs::write(d.join("ca.pem"), &ca.cert().cert_pem).unwrap();
    let s = TlsTargetServer::start(TlsServerOptions::new(leaf));
    let e = exporter(
        "modules:
  insecure:
    prober: http
    http: {tls_config: {insecure_skip_verify: true}}
  verified:
    prober: http
    http: {tls_config: {ca_file: ca.pem, server_name: localhost}}
",
        &d,
    );
    let r = get(&e, &format!("module=insecure&target={}", s.url("/ok")));
    let b = &r.body;
    assert_eq!(sample(b, "probe_success").as_deref(), Some("1"), "{b}");
    assert_eq!(
        family(b, "probe_tls_version_info"),
        [
            "# HELP probe_tls_version_info Returns the TLS version used or NaN when unknown",
            "# TYPE probe_tls_version_info gauge",
            "probe_tls_version_info{version=\"TLS 1.3\"} 1",
        ]
    );
    assert_eq!(value(b, "probe_ssl_earliest_cert_expiry"), EXPIRY_2031 as f64);
    // Not verified: Go's zero time, as blackbox_exporter reports it.
    assert_eq!(value(b, "probe_ssl_last_chain_expiry_timestamp_seconds"), -62_135_596_800.0);
    let info = family(b, "probe_ssl_last_chain_info");
    assert_eq!(
        info[0],
        "# HELP probe_ssl_last_chain_info Contains SSL leaf certificate information"
    );
    let fingerprint = sha256sum(&d.join("leaf.der"));
    let want = format!(
        "probe_ssl_last_chain_info{{fingerprint_sha256=\"{fingerprint}\",issuer=\"CN=facts CA\",serialnumber=\""
    );
    assert!(info[2].starts_with(&want), "{info:?}\nwant {want}");
    assert!(
        info[2].ends_with("\",subject=\"CN=localhost\",subjectalternative=\"localhost\"} 1"),
        "{info:?}"
    );
    let serial = info[2].split("serialnumber=\"").nth(1).unwrap().split('"').next().unwrap();
    assert!(!serial.is_empty() && !serial.starts_with("00"), "{serial}");
    assert!(serial.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)), "{serial}");
    // The families stay in the alphabetical order client_golang writes.
    let at = |n: &str| b.find(&format!("# HELP {n} ")).unwrap_or_else(|| panic!("{n}: {b}"));
    assert!(
        at("probe_ssl_earliest_cert_expiry") < at("probe_ssl_last_chain_expiry_timestamp_seconds")
    );
    assert!(at("probe_ssl_last_chain_info") < at("probe_success"));
    assert!(at("probe_success") < at("probe_tls_version_info"));

    // Verified against the CA: the chain's expiry; the debug log tells the handshake.
    let r = get(&e, &format!("module=verified&target={}&debug=true", s.url("/ok")));
    assert!(r.body.contains("probe_success 1"), "{}", r.body);
    let line = r.body.lines().find(|l| l.starts_with("TLS handshake: ")).expect("TLS line");
    // The suite is the server's pick among TLS 1.3's (its preference may depend on the CPU).
    assert!(line.starts_with("TLS handshake: version=TLS 1.3 cipher_suite=TLS13_"), "{line}");
    assert!(
        line.ends_with(&format!(
            " subject=\"CN=localhost\" issuer=\"CN=facts CA\" earliest_cert_expiry={EXPIRY_2031} verified_chain_expiry={EXPIRY_2031}"
        )),
        "{line}"
    );
    assert_eq!(value(&r.body, "probe_ssl_last_chain_expiry_timestamp_seconds"), EXPIRY_2031 as f64);

    // Plain HTTP: none of them.
    let plain = TargetServer::start();
    let r = get(&e, &format!("module=insecure&target={}", plain.url("/ok")));
    for name in ["probe_tls_version_info", "probe_ssl_last_chain_info", "probe_ssl_earliest"] {
        assert!(!r.body.contains(name), "{name} in:\n{}", r.body);
    }
}

#[test]
fn tls_max_version_is_applied() {
    let mut opts = TlsServerOptions::new(self_signed(&["127.0.0.1"]));
    opts.versions = TlsVersions::Tls13Only;
    let s = TlsTargetServer::start(opts);
    let e = exporter(
        "modules:
  tls12:
    prober: http
    http: {tls_config: {insecure_skip_verify: true, max_version: TLS12}}
  tls13:
    prober: http
    http: {tls_config: {insecure_skip_verify: true, max_version: TLS13}}
",
        Path::new("."),
    );
    let r = get(&e, &format!("module=tls13&target={}", s.url("/ok")));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    let r = get(&e, &format!("module=tls12&target={}&debug=true", s.url("/ok")));
    assert!(r.body.contains("probe_success 0"), "{}", r.body);
    assert!(r.body.contains("(this probe offers TLS 1.2 only)"), "{}", r.body);
    // Refused at start: a minimum above the maximum.
    let err = Modules::parse(
        "modules:\n  x:\n    prober: http\n    http: {tls_config: {min_version: TLS13, max_version: TLS12}}\n",
        Path::new("."),
    )
    .unwrap_err();
    assert_eq!(err, "module \"x\": tls_config.min_version: 1.3 is above max_version 1.2");
}

#[test]
fn http2_version_and_valid_http_versions() {
    let d = dir("h2");
    let (cert, key) = self_signed(&["127.0.0.1"]).write_files(&d, "server");
    let go = HealthServer::start(&[
        "-http",
        "-tls-cert",
        cert.to_str().unwrap(),
        "-tls-key",
        key.to_str().unwrap(),
    ]);
    let e = exporter(
        "modules:
  h2_only:
    prober: http
    http: {valid_http_versions: [HTTP/2.0], tls_config: {insecure_skip_verify: true}}
  h1_only:
    prober: http
    http: {valid_http_versions: [HTTP/1.1], tls_config: {insecure_skip_verify: true}}
  h1_no_h2:
    prober: http
    http:
      enable_http2: false
      valid_http_versions: [HTTP/1.1]
      tls_config: {insecure_skip_verify: true}
  h2_explicit:
    prober: http
    http: {enable_http2: true, tls_config: {insecure_skip_verify: true}}
",
        &d,
    );
    let url = format!("https://127.0.0.1:{}/proto", go.port());
    let r = get(&e, &format!("module=h2_only&target={url}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_version").as_deref(), Some("2"));
    let r = get(&e, &format!("module=h1_only&target={url}&debug=true"));
    assert!(r.body.contains("probe_success 0"), "{}", r.body);
    assert!(r.body.contains("Invalid HTTP version number HTTP/2.0"), "{}", r.body);
    // `enable_http2: false`: no `h2` offered, so the same server answers in HTTP/1.1, as Go's
    // transport without HTTP/2 configured gets it; `true` is the default's h2.
    let r = get(&e, &format!("module=h1_no_h2&target={url}&debug=true"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_version").as_deref(), Some("1.1"), "{}", r.body);
    let r = get(&e, &format!("module=h2_explicit&target={url}"));
    assert_eq!(sample(&r.body, "probe_http_version").as_deref(), Some("2"), "{}", r.body);
    // After an HTTP/1.1 redirect, the final response's version.
    let h1 = TargetServer::start();
    let r = get(
        &e,
        &format!("module=h2_only&target={}", target(&h1.url(&format!("/redirect?loc={url}")))),
    );
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_redirects").as_deref(), Some("1"));
    assert_eq!(sample(&r.body, "probe_http_version").as_deref(), Some("2"));
}

/// `Timings: ... connect=1.234ms ... first_byte=2.345ms` of the debug log, in seconds.
fn last_hop(body: &str, phase: &str) -> f64 {
    let line = body.lines().find(|l| l.starts_with("Timings: ")).expect("Timings line");
    let v = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{phase}=")))
        .and_then(|v| v.strip_suffix("ms"))
        .unwrap_or_else(|| panic!("{phase} in {line}"));
    v.parse::<f64>().unwrap() / 1e3
}

#[test]
fn durations_are_summed_over_redirects() {
    let s = TargetServer::start();
    let e = exporter("modules:\n  http_2xx:\n    prober: http\n", Path::new("."));
    let r = get(&e, &format!("module=http_2xx&target={}&debug=true", s.url("/redirect-chain/3")));
    let b = &r.body;
    assert!(b.contains("probe_success 1"), "{b}");
    assert_eq!(sample(b, "probe_http_redirects").as_deref(), Some("3"));
    assert_eq!(s.requests(), 4);
    let phase = |p: &str| value(b, &format!("probe_http_duration_seconds{{phase=\"{p}\"}}"));
    // Four connections and four answers: more than the last hop's.
    let (connect, first_byte) = (last_hop(b, "connect"), last_hop(b, "first_byte"));
    assert!(phase("processing") > first_byte - connect, "{b}");
    assert!(phase("connect") > 0.0 && phase("transfer") > 0.0, "{b}");
    assert_eq!(phase("tls"), 0.0);
    let sum: f64 = ["connect", "processing", "resolve", "tls", "transfer"].map(phase).iter().sum();
    assert!(sum <= value(b, "probe_duration_seconds"), "{b}");
}

#[test]
fn last_modified_header() {
    let s = TargetServer::start();
    let e = exporter("modules:\n  http_2xx:\n    prober: http\n", Path::new("."));
    let url = s.url("/bytes?header=Last-Modified:%20Sun,%2006%20Nov%201994%2008:49:37%20GMT");
    let r = get(&e, &format!("module=http_2xx&target={}", target(&url)));
    assert_eq!(
        family(&r.body, "probe_http_last_modified_timestamp_seconds"),
        [
            "# HELP probe_http_last_modified_timestamp_seconds Returns the Last-Modified HTTP response header in unixtime",
            "# TYPE probe_http_last_modified_timestamp_seconds gauge",
            "probe_http_last_modified_timestamp_seconds 784111777",
        ],
        "{}",
        r.body
    );
    // Without the header (or with one Go cannot read): no sample.
    let r = get(&e, &format!("module=http_2xx&target={}", s.url("/ok")));
    assert!(!r.body.contains("probe_http_last_modified"), "{}", r.body);
}

#[test]
fn grpc_status_and_health_response() {
    let mut g = HealthServer::start(&["-status", "down=NOT_SERVING"]);
    let e = exporter(
        "modules:
  grpc:
    prober: grpc
  grpc_down:
    prober: grpc
    grpc: {service: down}
  grpc_missing:
    prober: grpc
    grpc: {service: no.such.Service}
",
        Path::new("."),
    );
    let addr = format!("127.0.0.1:{}", g.port());
    let r = get(&e, &format!("module=grpc&target={addr}"));
    let b = &r.body;
    assert_eq!(sample(b, "probe_success").as_deref(), Some("1"), "{b}");
    assert_eq!(
        family(b, "probe_grpc_healthcheck_response"),
        [
            "# HELP probe_grpc_healthcheck_response Response HealthCheck response",
            "# TYPE probe_grpc_healthcheck_response gauge",
            "probe_grpc_healthcheck_response{serving_status=\"NOT_SERVING\"} 0",
            "probe_grpc_healthcheck_response{serving_status=\"SERVICE_UNKNOWN\"} 0",
            "probe_grpc_healthcheck_response{serving_status=\"SERVING\"} 1",
            "probe_grpc_healthcheck_response{serving_status=\"UNKNOWN\"} 0",
        ]
    );
    assert_eq!(
        family(b, "probe_grpc_status_code"),
        [
            "# HELP probe_grpc_status_code Response gRPC status code",
            "# TYPE probe_grpc_status_code gauge",
            "probe_grpc_status_code 0",
        ]
    );
    let check = value(b, "probe_grpc_duration_seconds{phase=\"check\"}");
    assert!(check > 0.0 && check <= value(b, "probe_duration_seconds"), "{b}");
    assert_eq!(value(b, "probe_grpc_duration_seconds{phase=\"resolve\"}"), 0.0, "an address");
    assert_eq!(sample(b, "probe_grpc_ssl").as_deref(), Some("0"));
    assert_eq!(sample(b, "probe_ssl_earliest_cert_expiry").as_deref(), Some("0"));
    let at = |n: &str| b.find(&format!("# HELP {n} ")).unwrap_or_else(|| panic!("{n}: {b}"));
    assert!(at("probe_duration_seconds") < at("probe_grpc_duration_seconds"));
    assert!(at("probe_grpc_ssl") < at("probe_grpc_status_code"));
    assert!(at("probe_grpc_status_code") < at("probe_success"));

    let r = get(&e, &format!("module=grpc_down&target={addr}"));
    assert!(r.body.contains("probe_success 0"), "{}", r.body);
    assert!(r.body.contains("probe_grpc_healthcheck_response{serving_status=\"NOT_SERVING\"} 1"));
    assert_eq!(sample(&r.body, "probe_grpc_status_code").as_deref(), Some("0"));
    // grpc-go answers NotFound (5) for a service it does not know; no serving status.
    let r = get(&e, &format!("module=grpc_missing&target={addr}"));
    assert_eq!(sample(&r.body, "probe_grpc_status_code").as_deref(), Some("5"), "{}", r.body);
    let statuses = family(&r.body, "probe_grpc_healthcheck_response");
    assert!(statuses[2..].iter().all(|l| l.ends_with(" 0")), "{statuses:?}");
    assert!(g.checks() >= 3);
    // Nothing listening: Unavailable (14), as grpc-go fails the RPC.
    let r = get(&e, &format!("module=grpc&target=127.0.0.1:{}", closed_port()));
    assert_eq!(sample(&r.body, "probe_grpc_status_code").as_deref(), Some("14"), "{}", r.body);
}

#[test]
fn grpc_over_tls_reports_the_session() {
    let d = dir("grpc-tls");
    let (cert, key) = self_signed(&["127.0.0.1"]).write_files(&d, "server");
    let g = HealthServer::start(&[
        "-tls-cert",
        cert.to_str().unwrap(),
        "-tls-key",
        key.to_str().unwrap(),
    ]);
    let e = exporter(
        "modules:\n  grpc_tls:\n    prober: grpc\n    grpc: {tls: true, tls_config: {insecure_skip_verify: true}}\n",
        &d,
    );
    let r = get(&e, &format!("module=grpc_tls&target=127.0.0.1:{}", g.port()));
    let b = &r.body;
    assert_eq!(sample(b, "probe_success").as_deref(), Some("1"), "{b}");
    assert_eq!(sample(b, "probe_grpc_ssl").as_deref(), Some("1"));
    assert!(b.contains("probe_tls_version_info{version=\"TLS 1.3\"} 1"), "{b}");
    assert!(b.contains("probe_ssl_last_chain_info{fingerprint_sha256=\""), "{b}");
    // gRPC modules have no chain expiry in blackbox_exporter.
    assert!(!b.contains("probe_ssl_last_chain_expiry_timestamp_seconds"), "{b}");

    // A call that fails after the handshake (grpc-go answers NotFound for a service it does
    // not know) leaves grpc-go's peer empty: blackbox_exporter reports no TLS then.
    let e = exporter(
        "modules:\n  grpc_tls:\n    prober: grpc\n    grpc: {tls: true, service: no.such.Service, tls_config: {insecure_skip_verify: true}}\n",
        &d,
    );
    let r = get(&e, &format!("module=grpc_tls&target=127.0.0.1:{}", g.port()));
    let b = &r.body;
    assert_eq!(sample(b, "probe_success").as_deref(), Some("0"), "{b}");
    assert_eq!(sample(b, "probe_grpc_status_code").as_deref(), Some("5"), "{b}");
    assert_eq!(sample(b, "probe_grpc_ssl").as_deref(), Some("0"), "{b}");
    assert_eq!(sample(b, "probe_ssl_earliest_cert_expiry").as_deref(), Some("0"), "{b}");
    assert!(!b.contains("probe_tls_version_info"), "{b}");
    assert!(!b.contains("probe_ssl_last_chain_info"), "{b}");
}

/// A target with no address of the family a module insists on fails as blackbox_exporter's
/// `chooseProtocol` does, before anything is dialed: its gRPC prober then returns with the
/// series it registered and never set (no check phase, no health response, status code 0).
#[test]
fn grpc_resolution_failure_metrics() {
    let mut g = HealthServer::start(&[]);
    let e = exporter(
        "modules:\n  grpc6:\n    prober: grpc\n    grpc: {ip_protocol_fallback: false}\n",
        Path::new("."),
    );
    let r = get(&e, &format!("module=grpc6&target=127.0.0.1:{}&debug=true", g.port()));
    let b = &r.body;
    assert!(b.contains("probe_success 0"), "{b}");
    assert!(b.contains("only IPv6 was asked for"), "{b}");
    assert_eq!(
        family(b, "probe_grpc_duration_seconds"),
        [
            "# HELP probe_grpc_duration_seconds Duration of gRPC request by phase",
            "# TYPE probe_grpc_duration_seconds gauge",
            "probe_grpc_duration_seconds{phase=\"resolve\"} 0",
        ],
        "{b}"
    );
    assert!(!b.contains("probe_grpc_healthcheck_response"), "{b}");
    assert!(b.contains("\nprobe_grpc_status_code 0\n"), "{b}");
    assert!(b.contains("\nprobe_grpc_ssl 0\n"), "{b}");
    assert_eq!(g.checks(), 0, "nothing dialed");
}

#[test]
fn hostname_parameter() {
    let s = TargetServer::start();
    let e = exporter(
        "modules:
  http_2xx:
    prober: http
  with_host:
    prober: http
    http: {headers: {Host: a.example}}
  tls_tcp:
    prober: tcp
    tcp: {tls: true, tls_config: {insecure_skip_verify: true}}
",
        Path::new("."),
    );
    // The Host header: the server answers 200 only for the name asked for.
    let url = s.url("/host-must-be/svc.example");
    let r = get(&e, &format!("module=http_2xx&target={url}&hostname=svc.example"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    let r = get(&e, &format!("module=http_2xx&target={url}"));
    assert_eq!(sample(&r.body, "probe_http_status_code").as_deref(), Some("400"), "{}", r.body);
    // The module's own Host header and another hostname: 400, as blackbox_exporter.
    let r = get(&e, &format!("module=with_host&target={url}&hostname=svc.example"));
    assert_eq!(
        (r.status, r.body.as_str()),
        (
            400,
            "host header defined both in module configuration (a.example) and with URL-parameter 'hostname' (svc.example)\n"
        )
    );
    let r = get(
        &e,
        &format!("module=with_host&target={}&hostname=a.example", s.url("/host-must-be/a.example")),
    );
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);

    // Over TLS, the name is also the server name sent (SNI), for http and tcp modules.
    let tls = TlsTargetServer::start(TlsServerOptions::new(self_signed(&["svc.example"])));
    let e2 = exporter(
        "modules:\n  https:\n    prober: http\n    http: {tls_config: {insecure_skip_verify: true}}\n",
        Path::new("."),
    );
    let r = get(&e2, &format!("module=https&target={}&hostname=svc.example", tls.url("/ok")));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    let r = get(&e, &format!("module=tls_tcp&target=127.0.0.1:{}&hostname=db.example", tls.port()));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    let seen = tls.wait_for_handshakes(2, Duration::from_secs(10));
    let names: Vec<Option<&str>> = seen.iter().map(|h| h.sni.as_deref()).collect();
    assert_eq!(names, [Some("svc.example"), Some("db.example")]);
}

/// blackbox_exporter sends the server name it took from `hostname` (or a `Host` header) only
/// to the first host: a redirect to another host verifies that host's own name.
#[test]
fn hostname_server_name_is_not_sent_to_another_host() {
    let d = dir("hostname-redirect");
    let ca = TestCa::new("hostname CA");
    std::fs::write(d.join("ca.pem"), &ca.cert().cert_pem).unwrap();
    let origin = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["svc.example"])));
    let other = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["localhost"])));
    let e = exporter(
        "modules:\n  https:\n    prober: http\n    http: {tls_config: {ca_file: ca.pem}}\n",
        &d,
    );
    let away = format!("{}/redirect?loc=https://localhost:{}/ok", origin.url(""), other.port());
    let r = get(&e, &format!("module=https&target={}&hostname=svc.example", target(&away)));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_redirects").as_deref(), Some("1"), "{}", r.body);
    let sni =
        |s: &TlsTargetServer| s.wait_for_handshakes(1, Duration::from_secs(10))[0].sni.clone();
    assert_eq!(sni(&origin).as_deref(), Some("svc.example"));
    assert_eq!(sni(&other).as_deref(), Some("localhost"));
}

/// `probe_http_ssl` is blackbox_exporter's `resp.TLS != nil`: a handshake the probe refused
/// (the certificate is not trusted) gives no response, so 0, as over plain HTTP.
#[test]
fn http_ssl_is_0_when_the_handshake_was_refused() {
    let d = dir("ssl-refused");
    let ca = TestCa::new("untrusted CA");
    let s = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["localhost", "127.0.0.1"])));
    let e = exporter("modules:\n  verified:\n    prober: http\n", &d);
    let r = get(&e, &format!("module=verified&target={}&debug=true", s.url("/ok")));
    assert!(r.body.contains("reason=tls"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_ssl").as_deref(), Some("0"), "{}", r.body);
    // Trusted, over TLS: 1.
    let e = exporter(
        "modules:\n  insecure:\n    prober: http\n    http: {tls_config: {insecure_skip_verify: true}}\n",
        &d,
    );
    let r = get(&e, &format!("module=insecure&target={}", s.url("/ok")));
    assert_eq!(sample(&r.body, "probe_http_ssl").as_deref(), Some("1"), "{}", r.body);
}
