//! http modules through a real proxy on loopback (tinyproxy, see `prober_testkit::proxy`):
//! `proxy_url` with credentials for `http://` and `https://` targets, the phases with
//! `skip_resolve_phase_with_proxy`, and the credentials never shown.

use std::path::Path;

use prober_blackbox::{Exporter, Modules, Request, Response};
use prober_testkit::TargetServer;
use prober_testkit::proxy::Tinyproxy;
use prober_testkit::tls::{TestCa, TlsServerOptions, TlsTargetServer};

fn get(e: &Exporter, path: &str, query: &str) -> Response {
    e.handle(&Request { path, query, headers: &[] })
}

fn sample<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    body.lines().find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
}

#[test]
fn modules_probe_through_the_proxy() {
    let proxy = Tinyproxy::start("BasicAuth prober s3cretPW");
    let target = TargetServer::start();
    let tls_target = TlsTargetServer::start(TlsServerOptions::new(TestCa::new("ca").issue(&["a"])));
    let yaml = format!(
        "modules:
  via:
    prober: http
    http:
      proxy_url: http://prober:s3cretPW@127.0.0.1:{port}
      proxy_connect_header:
        X-Tenant: [blue]
      tls_config: {{insecure_skip_verify: true}}
  skipping:
    prober: http
    http:
      proxy_url: http://prober:s3cretPW@127.0.0.1:{port}
      skip_resolve_phase_with_proxy: true
  no_credentials:
    prober: http
    http:
      proxy_url: http://127.0.0.1:{port}
",
        port = proxy.port()
    );
    let e = Exporter::start(Modules::parse(&yaml, Path::new(".")).unwrap()).unwrap();
    let url = target.url("/ok");
    let r = get(&e, "/probe", &format!("module=via&target={url}"));
    assert_eq!(sample(&r.body, "probe_success"), Some("1"), "{}", r.body);
    assert!(
        proxy
            .wait_for_log(&format!("GET {url}"), std::time::Duration::from_secs(5))
            .contains(&format!("GET {url}"))
    );
    assert!(r.body.contains("probe_http_duration_seconds{phase=\"resolve\"}"), "{}", r.body);
    // https: a CONNECT tunnel, TLS with the target inside it.
    let r = get(&e, "/probe", &format!("module=via&target={}", tls_target.url("/ok")));
    assert_eq!(sample(&r.body, "probe_success"), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_ssl"), Some("1"), "{}", r.body);
    assert_eq!(tls_target.handshakes().len(), 1);
    // No resolve phase when the module skips it (blackbox_exporter's metrics).
    let r = get(&e, "/probe", &format!("module=skipping&target={url}"));
    assert_eq!(sample(&r.body, "probe_success"), Some("1"), "{}", r.body);
    assert!(!r.body.contains("phase=\"resolve\""), "{}", r.body);
    assert!(r.body.contains("phase=\"connect\""), "{}", r.body);
    // Without the credentials the proxy answers 407: a failed probe.
    let r = get(&e, "/probe", &format!("module=no_credentials&target={url}"));
    assert_eq!(sample(&r.body, "probe_success"), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_http_status_code"), Some("407"), "{}", r.body);
    let r = get(&e, "/probe", &format!("module=no_credentials&target={}", tls_target.url("/")));
    assert_eq!(sample(&r.body, "probe_success"), Some("0"), "{}", r.body);
    // The password is never shown, neither on /config nor in a debug answer.
    let config = get(&e, "/config", "");
    assert!(config.body.contains("prober:xxxxx@127.0.0.1"), "{}", config.body);
    let debug = get(&e, "/probe", &format!("module=via&target={url}&debug=true"));
    for body in [&config.body, &debug.body] {
        assert!(!body.contains("s3cretPW") && !body.contains("czNjcmV0"), "{body}");
        assert!(!body.contains("blue"), "{body}");
    }
}
