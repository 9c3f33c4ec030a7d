//! `prober serve`'s exporter against real servers on loopback: module files (blackbox_exporter's
//! own examples), answers, the allow-list, redirects, the timeout rule and `&debug=true`.

use std::path::Path;

use prober_blackbox::{Exporter, Modules, Request, Response};
use prober_testkit::TargetServer;

mod common;
use common::blackbox_module_dir;

fn modules(yaml: &str) -> Modules {
    Modules::parse(yaml, Path::new(".")).unwrap()
}

fn get(e: &Exporter, query: &str, headers: &[(&str, &str)]) -> Response {
    let headers: Vec<(String, String)> =
        headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    e.handle(&Request { path: "/probe", query, headers: &headers })
}

/// The value of the sample `name` (with its labels, as written) in an exposition.
fn sample(body: &str, name: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')).map(str::to_string))
}

const FILE: &str = "
modules:
  http_2xx:
    prober: http
    timeout: 5s
    http:
      # The servers listen on 127.0.0.1; `localhost` may also name ::1, which blackbox's
      # default (ip6 preferred) would choose.
      preferred_ip_protocol: ip4
  http_body:
    prober: http
    http:
      fail_if_body_not_matches_regexp: ['ok']
      fail_if_header_matches:
        - header: X-Nope
          regexp: '.*'
          allow_missing: true
  no_redirects:
    prober: http
    http:
      no_follow_redirects: true
  tcp_connect:
    prober: tcp
  local_only:
    prober: http
    allow:
      hosts: ['localhost']
      networks: ['127.0.0.1/32']
";

#[test]
fn blackbox_example_files_load_or_name_what_is_refused() {
    let data = blackbox_module_dir("v0.25.0");
    let text = std::fs::read_to_string(data.join("blackbox.yml")).unwrap();
    // The whole file loads, its icmp modules too.
    let m = Modules::parse(&text, &data).unwrap();
    let names: Vec<&str> = m.by_name.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "grpc",
            "grpc_plain",
            "http_2xx",
            "http_post_2xx",
            "icmp",
            "icmp_ttl5",
            "irc_banner",
            "pop3s_banner",
            "ssh_banner",
            "tcp_connect"
        ]
    );
    let text = std::fs::read_to_string(data.join("example.yml")).unwrap();
    // Every module loads: its dns modules (dns_soa, dns_tcp_example, dns_udp_example), its
    // OAuth 2 one, and http_post_body_file, whose /files/body.txt is missing here: as in
    // blackbox_exporter, which opens the file per probe, each probe of that module fails.
    let m = Modules::parse(&text, &data).unwrap();
    // Among them the multi-step tcp modules: imap_starttls, irc_banner_example, smtp_starttls,
    // http_gzip and http_gzip_with_accept_encoding, http_with_proxy and
    // http_with_proxy_and_headers; icmp_example; the dns modules; and
    // http_2xx_oauth_client_credentials.
    assert_eq!(m.by_name.len(), 19, "{:?}", m.by_name.keys());
    let body_file = &m.by_name["http_post_body_file"];
    match body_file.spec("http://127.0.0.1:1/", std::time::Duration::from_secs(1)) {
        Err(prober_blackbox::TargetError::Unprobeable(u)) => {
            assert!(u.message.contains("/files/body.txt"), "{}", u.message)
        }
        other => panic!("http_post_body_file: {other:?}"),
    }
    for name in ["dns_soa", "dns_tcp_example", "dns_udp_example"] {
        assert_eq!(m.by_name[name].prober, prober_blackbox::Prober::Dns);
    }
    assert!(m.by_name.contains_key("http_2xx_oauth_client_credentials"));
}

#[test]
fn http_probe_answers_with_blackbox_metrics() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    let r = get(&e, &format!("module=http_2xx&target={}", s.url("/status/200")), &[]);
    assert_eq!((r.status, r.content_type), (200, "text/plain; version=0.0.4; charset=utf-8"));
    let b = &r.body;
    assert_eq!(sample(b, "probe_success").as_deref(), Some("1"), "{b}");
    assert_eq!(sample(b, "probe_http_status_code").as_deref(), Some("200"));
    assert_eq!(sample(b, "probe_http_version").as_deref(), Some("1.1"));
    assert_eq!(sample(b, "probe_http_ssl").as_deref(), Some("0"));
    assert_eq!(sample(b, "probe_ip_protocol").as_deref(), Some("4"));
    assert_eq!(sample(b, "probe_http_redirects").as_deref(), Some("0"));
    assert!(sample(b, "probe_http_content_length").is_some_and(|v| v != "-1"), "{b}");
    assert!(sample(b, "probe_http_duration_seconds{phase=\"connect\"}").is_some(), "{b}");
    // A status outside 2xx: probe_success 0, the status still reported.
    let r = get(&e, &format!("module=http_2xx&target={}", s.url("/status/500")), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"));
    assert_eq!(sample(&r.body, "probe_http_status_code").as_deref(), Some("500"));
    // A target without a scheme is http://, as blackbox_exporter does.
    let r = get(&e, &format!("module=tcp_connect&target=127.0.0.1:{}", s.port()), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_status_code"), None, "no HTTP metrics for tcp");
}

#[test]
fn unknown_module_is_400_and_counted() {
    let e = Exporter::start(modules(FILE)).unwrap();
    let r = get(&e, "module=nope&target=127.0.0.1", &[]);
    assert_eq!((r.status, r.body.as_str()), (400, "Unknown module \"nope\"\n"));
    let r = get(&e, "module=http_2xx", &[]);
    assert_eq!((r.status, r.body.as_str()), (400, "Target parameter is missing\n"));
    // A target with a bad escape is no target, as Go's url.ParseQuery leaves its pair out
    // (a sign where a hex digit should be too: Rust's from_str_radix would take `%+1`).
    for target in ["%+1", "%zz", "127.0.0.1%"] {
        let r = get(&e, &format!("module=http_2xx&target={target}"), &[]);
        assert_eq!((r.status, r.body.as_str()), (400, "Target parameter is missing\n"), "{target}");
    }
    let m = e.handle(&Request { path: "/metrics", query: "", headers: &[] });
    assert_eq!(sample(&m.body, "blackbox_module_unknown_total").as_deref(), Some("1"));
    let page = e.handle(&Request { path: "/", query: "", headers: &[] });
    assert!(page.body.contains("<code>local_only</code>: http, allow-list"), "{}", page.body);
}

/// `/metrics` answers OpenMetrics when the scraper's `Accept` prefers it (Prometheus' own
/// header), the classic format otherwise; `/probe` answers the classic format whatever the
/// `Accept`, as blackbox_exporter's `/probe` does.
#[test]
fn metrics_negotiate_openmetrics_and_probe_stays_text() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,\
        application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
    let r = get(
        &e,
        &format!("module=http_2xx&target={}", s.url("/status/200")),
        &[("Accept", prometheus)],
    );
    assert_eq!((r.status, r.content_type), (200, "text/plain; version=0.0.4; charset=utf-8"));
    assert!(!r.body.contains("# EOF"), "{}", r.body);
    let headers = [("Accept".to_string(), prometheus.to_string())];
    let m = e.handle(&Request { path: "/metrics", query: "", headers: &headers });
    assert_eq!(m.content_type, "application/openmetrics-text; version=1.0.0; charset=utf-8");
    let b = &m.body;
    // A counter's family without `_total`, its sample with it; the end marked.
    assert!(b.contains("# TYPE prober_serve_probes counter\nprober_serve_probes_total 1\n"), "{b}");
    assert!(b.contains("# TYPE blackbox_exporter_config_last_reload_successful gauge\n"), "{b}");
    assert!(b.ends_with("# EOF\n"), "{b}");
    let m = e.handle(&Request { path: "/metrics", query: "", headers: &[] });
    assert_eq!(m.content_type, "text/plain; version=0.0.4; charset=utf-8");
    let b = &m.body;
    assert!(
        b.contains("# TYPE prober_serve_probes_total counter\nprober_serve_probes_total 1\n"),
        "{b}"
    );
    assert!(!b.contains("# EOF"), "{b}");
}

#[test]
fn body_and_header_expressions() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    // /ok answers "ok"; /status/200 answers "status 200".
    let r = get(&e, &format!("module=http_body&target={}", s.url("/ok")), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_failed_due_to_regex").as_deref(), Some("0"));
    let r = get(&e, &format!("module=http_body&target={}", s.url("/status/200")), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_failed_due_to_regex").as_deref(), Some("1"));
}

#[test]
fn redirects_followed_to_another_host_unless_told_not_to() {
    let first = TargetServer::start();
    let other = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    let to = format!("http://localhost:{}/status/200", other.port());
    let target = first.url(&format!("/redirect?loc={to}"));
    let enc = target.replace('?', "%3F").replace('=', "%3D").replace('&', "%26");
    let r = get(&e, &format!("module=http_2xx&target={enc}"), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_redirects").as_deref(), Some("1"));
    let r = get(&e, &format!("module=no_redirects&target={enc}"), &[]);
    assert_eq!(sample(&r.body, "probe_http_status_code").as_deref(), Some("302"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"));
    assert_eq!(other.requests(), 1);
}

#[test]
fn allow_list_refuses_with_403_by_name_address_and_redirect_hop() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    // Allowed: localhost, which resolves to 127.0.0.1.
    let ok =
        get(&e, &format!("module=local_only&target=http://localhost:{}/status/200", s.port()), &[]);
    assert_eq!(sample(&ok.body, "probe_success").as_deref(), Some("1"), "{}", ok.body);
    // 127.0.0.2 is another address: refused before anything is sent, in any spelling.
    for host in ["127.0.0.2", "2130706434", "0x7f.0.0.2", "[::ffff:127.0.0.2]"] {
        let r = get(&e, &format!("module=local_only&target=http://{host}:{}/", s.port()), &[]);
        assert_eq!(r.status, 403, "{host}: {}", r.body);
        assert!(r.body.contains("is not allowed"), "{host}: {}", r.body);
    }
    // A redirect from the allowed host to a refused address: 403 too, with the reason.
    let target =
        format!("http://localhost:{}/redirect%3Floc%3Dhttp://127.0.0.2:{}/", s.port(), s.port());
    let r = get(&e, &format!("module=local_only&target={target}&debug=true"), &[]);
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body.contains("Target refused by the module's allow-list"), "{}", r.body);
    assert!(r.body.contains("dial tcp 127.0.0.2"), "{}", r.body);
    let before = s.requests();
    let m = e.handle(&Request { path: "/metrics", query: "", headers: &[] });
    assert_eq!(sample(&m.body, "prober_serve_denied_total").as_deref(), Some("5"), "{}", m.body);
    assert_eq!(s.requests(), before);
}

#[test]
fn scrape_timeout_header_bounds_the_probe() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    // 1 s scrape timeout less the 0.5 s offset: a response that takes 30 s fails at 0.5 s.
    let r = get(
        &e,
        &format!("module=http_2xx&target={}&debug=true", s.url("/slow-headers/30000")),
        &[("X-Prometheus-Scrape-Timeout-Seconds", "1")],
    );
    assert!(r.body.contains("timeout_seconds=0.5"), "{}", r.body);
    assert!(r.body.contains("reason=timeout"), "{}", r.body);
    let secs: f64 = r
        .body
        .lines()
        .find_map(|l| l.strip_prefix("probe_duration_seconds "))
        .unwrap()
        .parse()
        .unwrap();
    assert!((0.5..5.0).contains(&secs), "{secs}");
    let r = get(&e, "module=http_2xx&target=x", &[("X-Prometheus-Scrape-Timeout-Seconds", "ten")]);
    assert_eq!(r.status, 500);
}

#[test]
fn debug_explains_the_run() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    let r = get(&e, &format!("module=http_2xx&target={}&debug=true", s.url("/status/200")), &[]);
    assert_eq!((r.status, r.content_type), (200, "text/plain; charset=utf-8"));
    for line in [
        "Beginning probe: probe=http",
        "timeout_seconds=5",
        "Connected: address=127.0.0.1 ip_protocol=ip4",
        "Received HTTP response: status_code=200 redirects=0",
        "Probe succeeded",
        "Metrics that would have been returned:",
        "probe_success 1",
        "Module configuration:",
    ] {
        assert!(r.body.contains(line), "missing {line:?} in:\n{}", r.body);
    }
}

/// The debug page shows the module as the probe used it, as blackbox_exporter's does: YAML as
/// written, with what `&hostname=` set (a tcp module's TLS server name, an http module's
/// `Host` header), and never a server name the file sets replaced.
#[test]
fn debug_shows_the_module_with_the_hostname_it_used() {
    let e = Exporter::start(modules(
        "modules:
  tls_connect:
    prober: tcp
    tcp: {tls: true, preferred_ip_protocol: ip4, tls_config: {insecure_skip_verify: true}}
  tls_named:
    prober: tcp
    tcp: {tls: true, tls_config: {insecure_skip_verify: true, server_name: fixed.example}}
  http_2xx:
    prober: http
",
    ))
    .unwrap();
    // A closed port: the page is the same whether the probe connects or not.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let page = |q: &str| get(&e, &format!("{q}&debug=true&hostname=foo.example.com"), &[]).body;
    let body = page(&format!("module=tls_connect&target={closed}"));
    let config = body.split("Module configuration:\n").nth(1).expect(&body);
    assert!(config.contains("server_name: foo.example.com"), "{config}");
    assert!(config.contains("insecure_skip_verify: true"), "{config}");
    let body = page(&format!("module=tls_named&target={closed}"));
    assert!(body.contains("server_name: fixed.example"), "{body}");
    assert!(!body.contains("foo.example.com\n"), "{body}");
    let body = page(&format!("module=http_2xx&target=http://{closed}/"));
    let config = body.split("Module configuration:\n").nth(1).expect(&body);
    assert!(config.contains("Host: foo.example.com"), "{config}");
    // Without `hostname`, the module as written.
    let body = get(&e, &format!("module=tls_connect&target={closed}&debug=true"), &[]).body;
    assert!(!body.contains("server_name"), "{body}");
}

/// The series of an exposition, as `name{labels}` without values.
fn series(body: &str) -> Vec<&str> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.rsplit_once(' ').map(|(name, _)| name))
        .collect()
}

/// blackbox_exporter v0.28.0 fails a probe whose target it cannot read (200, `probe_success
/// 0`) with the gauges its prober registered up to where it gave up: `url.Parse` and
/// `net.SplitHostPort` before the resolver, an empty host at the resolver.
#[test]
fn malformed_targets_are_failed_probes_with_blackbox_series() {
    let e = Exporter::start(modules(FILE)).unwrap();
    let http_parse = [
        "probe_duration_seconds",
        "probe_failed_due_to_regex",
        "probe_http_content_length",
        "probe_http_redirects",
        "probe_http_ssl",
        "probe_http_status_code",
        "probe_http_uncompressed_body_length",
        "probe_http_version",
        "probe_success",
    ];
    let http_resolve = [
        "probe_dns_lookup_time_seconds",
        "probe_duration_seconds",
        "probe_failed_due_to_regex",
        "probe_http_content_length",
        "probe_http_duration_seconds{phase=\"resolve\"}",
        "probe_http_redirects",
        "probe_http_ssl",
        "probe_http_status_code",
        "probe_http_uncompressed_body_length",
        "probe_http_version",
        "probe_ip_addr_hash",
        "probe_ip_protocol",
        "probe_success",
    ];
    let tcp_parse = ["probe_duration_seconds", "probe_success"];
    let tcp_resolve = [
        "probe_dns_lookup_time_seconds",
        "probe_duration_seconds",
        "probe_ip_addr_hash",
        "probe_ip_protocol",
        "probe_success",
    ];
    let cases: [(&str, &str, &[&str]); 5] = [
        ("http_2xx", "http://%5Bbad", &http_parse),
        ("http_2xx", ":0", &http_resolve),
        ("tcp_connect", "127.0.0.1", &tcp_parse),
        ("tcp_connect", ":0", &tcp_resolve),
        ("tcp_connect", "127.0.0.1:0", &tcp_parse),
    ];
    for (module, target, want) in cases {
        let r = get(&e, &format!("module={module}&target={target}"), &[]);
        assert_eq!(r.status, 200, "{module} {target}: {}", r.body);
        assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
        assert_eq!(series(&r.body), want, "{module} {target}:\n{}", r.body);
        let d = get(&e, &format!("module={module}&target={target}&debug=true"), &[]);
        assert!(d.body.contains("Target cannot be probed: target "), "{}", d.body);
        assert!(d.body.contains("Probe failed"), "{}", d.body);
    }
    // What blackbox_exporter answers 400 to stays 400.
    assert_eq!(get(&e, "module=nope&target=:0", &[]).status, 400);
    assert_eq!(get(&e, "module=http_2xx&target=", &[]).status, 400);
}

/// `body_size_limit` is blackbox_exporter's `http.MaxBytesReader`: a longer body fails the
/// probe, and the length reported is what the reader let through, the limit.
#[test]
fn a_body_longer_than_body_size_limit_fails_the_probe() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(
        "modules:
  limit:
    prober: http
    http: {body_size_limit: 100}
  limit_regex:
    prober: http
    http: {body_size_limit: 100, fail_if_body_not_matches_regexp: ['a']}
",
    ))
    .unwrap();
    for (path, success, length) in [
        ("/body/100", "1", "100"),
        ("/body/101", "0", "100"),
        ("/chunked/1000?chunk=7", "0", "100"),
        ("/close-delimited/5000", "0", "100"),
        ("/body/40", "1", "40"),
    ] {
        let r = get(&e, &format!("module=limit&target={}", s.url(path)), &[]);
        assert_eq!(
            sample(&r.body, "probe_success").as_deref(),
            Some(success),
            "{path}: {}",
            r.body
        );
        assert_eq!(
            sample(&r.body, "probe_http_uncompressed_body_length").as_deref(),
            Some(length),
            "{path}: {}",
            r.body
        );
        assert_eq!(sample(&r.body, "probe_failed_due_to_regex").as_deref(), Some("0"));
    }
    // The body expressions read the body first: they fail on the error.
    let r = get(&e, &format!("module=limit_regex&target={}", s.url("/body/101")), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_failed_due_to_regex").as_deref(), Some("1"));
    let d = get(&e, &format!("module=limit&target={}&debug=true", s.url("/body/101")), &[]);
    assert!(d.body.contains("request body too large"), "{}", d.body);
}

/// `compression` is blackbox_exporter's: the body is decoded with the module's algorithm,
/// whatever the response says; the expressions and `body_size_limit` see decoded bytes, and
/// `probe_http_uncompressed_body_length` counts them.
#[test]
fn compression_decodes_the_body_as_blackbox_exporter_does() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(
        "modules:
  gzip:
    prober: http
    http: {compression: gzip, fail_if_body_not_matches_regexp: ['^a{3000}$']}
  deflate:
    prober: http
    http: {compression: deflate}
  br_limited:
    prober: http
    http: {compression: BR, body_size_limit: 100}
  zstd:
    prober: http
    http: {compression: zstd}
",
    ))
    .unwrap();
    for (module, path, success, length) in [
        ("gzip", "/encoded/gzip/3000", "1", "3000"),
        // The header says nothing, or something else: the module's algorithm decides.
        ("gzip", "/encoded/gzip/3000?as=", "1", "3000"),
        // The expression runs on the decoded body.
        ("gzip", "/encoded/gzip/3001", "0", "3001"),
        ("deflate", "/encoded/deflate/5000", "1", "5000"),
        // gzip bytes are not DEFLATE: the probe fails, nothing decoded.
        ("deflate", "/encoded/gzip/5000", "0", "0"),
        // 16 MiB in a few bytes of brotli: decoded up to the limit, which fails the probe.
        ("br_limited", "/encoded/br/99", "1", "99"),
        ("br_limited", "/encoded/br/16777216", "0", "100"),
        ("zstd", "/body/10", "0", "10"),
    ] {
        let target = s.url(path);
        let r = get(&e, &format!("module={module}&target={target}"), &[]);
        assert_eq!(
            sample(&r.body, "probe_success").as_deref(),
            Some(success),
            "{path}: {}",
            r.body
        );
        assert_eq!(
            sample(&r.body, "probe_http_uncompressed_body_length").as_deref(),
            Some(length),
            "{module} {path}: {}",
            r.body
        );
    }
    // The length of what came on the wire is the compressed body's.
    let r = get(&e, &format!("module=gzip&target={}", s.url("/encoded/gzip/3000")), &[]);
    let wire: u64 = sample(&r.body, "probe_http_content_length").unwrap().parse().unwrap();
    assert!(wire > 0 && wire < 3000, "{}", r.body);
    let d = get(&e, &format!("module=zstd&target={}&debug=true", s.url("/body/10")), &[]);
    assert!(d.body.contains("unsupported compression algorithm"), "{}", d.body);
    // An Accept-Encoding that refuses the algorithm is refused at load, in blackbox's words.
    let err = Modules::parse(
        "modules:\n  m:\n    prober: http\n    http:\n      compression: gzip\n      headers: {Accept-Encoding: 'br, identity'}\n",
        Path::new("."),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "module \"m\": invalid configuration \"Accept-Encoding: br, identity\", \"compression: gzip\""
    );
}

/// blackbox_exporter's `CheckRedirect` follows 10 redirects and refuses the 11th, counting it
/// (`probe_http_redirects 11`); the kubelet's rule (the library's default) stops at 9.
#[test]
fn ten_redirects_are_followed_and_the_eleventh_counted() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    let r = get(&e, &format!("module=http_2xx&target={}", s.url("/redirect-chain/10")), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_redirects").as_deref(), Some("10"));
    assert_eq!(sample(&r.body, "probe_http_status_code").as_deref(), Some("200"));
    let before = s.requests();
    let r = get(&e, &format!("module=http_2xx&target={}", s.url("/loop")), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_redirects").as_deref(), Some("11"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_status_code").as_deref(), Some("302"));
    assert_eq!(s.requests() - before, 11, "11 requests, as Go's client sends");
}

/// The request's headers as blackbox_exporter v0.28.0 sends them: its `User-Agent` unless the
/// module's replaces it, and no `Accept` unless the module sets one. The target echoes the
/// headers it received; the modules' body expressions judge them.
#[test]
fn user_agent_is_blackbox_exporters_or_the_modules_and_no_accept_is_added() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(
        r#"modules:
  default:
    prober: http
    http:
      fail_if_body_not_matches_regexp: ['(?m)^User-Agent: Blackbox-Exporter/0\.28\.0$']
      fail_if_body_matches_regexp: ['(?m)^[Aa]ccept:']
  own:
    prober: http
    http:
      headers: {User-Agent: my-agent/1, Accept: application/json}
      fail_if_body_not_matches_regexp: ['(?m)^User-Agent: my-agent/1$', '(?m)^Accept: application/json$']
      fail_if_body_matches_regexp: ['Blackbox-Exporter']
"#,
    ))
    .unwrap();
    let failed: Vec<String> = ["default", "own"]
        .iter()
        .map(|m| {
            (m, get(&e, &format!("module={m}&target={}&debug=true", s.url("/echo/headers")), &[]))
        })
        .filter(|(_, r)| !r.body.contains("probe_success 1"))
        .map(|(m, r)| format!("{m}: {}", r.body))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// blackbox_exporter's client has a cookie jar per probe: a login that sets a cookie on its
/// redirect and checks it on the next hop succeeds (the page echoes the request's headers).
#[test]
fn a_cookie_set_on_a_redirect_goes_back_on_the_next_hop() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(
        "modules:
  login:
    prober: http
    http: {fail_if_body_not_matches_regexp: ['(?m)^Cookie: session=abc$']}
",
    ))
    .unwrap();
    let login = s.url(
        "/bytes?status=302&header=Set-Cookie:session%3Dabc%3B%20Path%3D/&header=Location:/echo/headers",
    );
    let enc = login.replace('%', "%25").replace('?', "%3F").replace('=', "%3D").replace('&', "%26");
    let r = get(&e, &format!("module=login&target={enc}"), &[]);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_redirects").as_deref(), Some("1"));
}

/// What blackbox_exporter v0.28.0 reports of a response it did not read: a redirect its
/// `CheckRedirect` refused (`no_follow_redirects`) counts as one, its body unread; without
/// any response (the last request failed, also after a redirect), the response's gauges are
/// those of Go's empty `http.Response`: 0.
#[test]
fn unread_and_missing_responses_as_blackbox_reports_them() {
    let s = TargetServer::start();
    let e = Exporter::start(modules(FILE)).unwrap();
    let closed = prober_testkit::closed_port();
    let to_closed = s.url(&format!("/redirect?loc=http://127.0.0.1:{closed}/"));
    let enc = |u: &str| u.replace('?', "%3F").replace('=', "%3D").replace('&', "%26");
    let cases = [
        // module, target, redirects, status, content length, body length, version
        ("no_redirects", enc(&s.url("/redirect?loc=/ok")), "1", "302", "11", "0", "1.1"),
        ("http_2xx", format!("http://127.0.0.1:{closed}/"), "0", "0", "0", "0", "0"),
        ("http_2xx", enc(&to_closed), "1", "0", "0", "0", "0"),
    ];
    let mut wrong = Vec::new();
    for (module, target, redirects, status, length, body, version) in cases {
        let r = get(&e, &format!("module={module}&target={target}"), &[]);
        let b = &r.body;
        let got = [
            "probe_http_redirects",
            "probe_http_status_code",
            "probe_http_content_length",
            "probe_http_uncompressed_body_length",
            "probe_http_version",
        ]
        .map(|n| sample(b, n).unwrap_or_default());
        if got != [redirects, status, length, body, version] {
            wrong.push(format!("{module} {target}: {got:?}"));
        }
        assert_eq!(sample(b, "probe_success").as_deref(), Some("0"));
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
