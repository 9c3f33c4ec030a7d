//! `prober watch --metrics --web-config FILE`: the endpoints protected as Prometheus
//! exporters are (TLS with a real certificate, basic auth with a real bcrypt hash), scraped
//! with curl as an operator would; a bad web config refused at start.

mod common;

use std::process::Command;

use prober_testkit::TargetServer;
use prober_testkit::tls::TestCa;

use common::{Run, TempFile, Watch, one_probe_file, run, write_file};

/// curl's exit status and output (`-w` adds the status code on the last line).
fn curl(args: &[&str]) -> (i32, String) {
    let o = Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "30"])
        .args(args)
        .output()
        .expect("run curl (this test needs it on PATH)");
    let text =
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    (o.status.code().unwrap_or(-1), text)
}

#[test]
fn tls_and_basic_auth_protect_metrics_and_health() {
    let target = TargetServer::start();
    let file = one_probe_file(
        "web",
        "readinessProbe",
        &format!("httpGet: {{path: /health, port: {}}}", target.port()),
        &["periodMilliseconds: 100"],
    );
    let ca = TestCa::new("watch CA");
    let dir = TempFile::new("d");
    std::fs::create_dir_all(&*dir).unwrap();
    let (cert, key) = ca.issue(&["127.0.0.1"]).write_files(&dir, "server");
    let ca_file = dir.join("ca.crt");
    std::fs::write(&ca_file, &ca.cert().cert_pem).unwrap();
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let web = write_file(
        "yml",
        &format!(
            "tls_server_config:\n  cert_file: {}\n  key_file: {}\n\
             basic_auth_users:\n  prometheus: '{hash}'\n",
            cert.display(),
            key.display()
        ),
    );
    let mut w = Watch::start(&[
        "--metrics",
        "127.0.0.1:0",
        "--health-listen",
        "127.0.0.1:0",
        "--web-config",
        web.path(),
        file.path(),
    ]);
    let metrics = format!("https://{}/metrics", w.metrics_addr());
    let livez = format!("https://{}/livez", w.health_addr());
    let ca_arg = ca_file.to_str().unwrap();
    let status = "%{http_code}\n";

    // The classic text format by default, for the right credentials only.
    let (code, out) = curl(&["--cacert", ca_arg, "-u", "prometheus:s3cret", &metrics]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("# TYPE prober_ready gauge\n"), "{out}");
    assert!(!out.contains("# EOF"), "{out}");
    let (_, out) = curl(&["--cacert", ca_arg, "-w", status, "-o", "/dev/null", &metrics]);
    assert_eq!(out, "401\n");
    let (_, out) = curl(&["--cacert", ca_arg, "-u", "prometheus:nope", "-i", &metrics]);
    assert!(out.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{out}");
    assert!(out.contains("WWW-Authenticate: Basic\r\n"), "{out}");
    // OpenMetrics when asked for, as Prometheus asks.
    let accept = "Accept: application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1";
    let (_, out) = curl(&["--cacert", ca_arg, "-u", "prometheus:s3cret", "-H", accept, &metrics]);
    assert!(out.ends_with("# EOF\n"), "{out}");
    // The health endpoint is protected the same way.
    let (_, out) = curl(&["--cacert", ca_arg, "-u", "prometheus:s3cret", &livez]);
    assert_eq!(out, "ok\n");
    let (_, out) = curl(&["--cacert", ca_arg, "-w", status, "-o", "/dev/null", &livez]);
    assert_eq!(out, "401\n");
    // Plain HTTP is refused, saying why.
    let (_, out) = curl(&[&metrics.replace("https", "http")]);
    assert!(out.contains("Client sent an HTTP request to an HTTPS server."), "{out}");

    let (status, _) = w.stop();
    assert_eq!(status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&*dir);
}

#[test]
fn a_bad_web_config_stops_the_watch_at_start_naming_the_file_and_field() {
    let file = one_probe_file("web", "readinessProbe", "tcpSocket: {port: 1}", &[]);
    let web = write_file(
        "yml",
        "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  min_version: TLS9\n",
    );
    let Run { code, stdout, stderr } =
        run(&["watch", "--metrics", "127.0.0.1:0", "--web-config", web.path(), file.path()]);
    assert_eq!(code, 64, "{stderr}");
    assert_eq!(stdout, "", "nothing runs");
    assert_eq!(
        stderr,
        format!(
            "prober: --web-config: {}: tls_server_config.min_version: 'TLS9' (expected TLS10, \
             TLS11, TLS12 or TLS13)\n",
            web.path()
        )
    );
    let Run { code, stderr, .. } = run(&[
        "watch",
        "--metrics",
        "127.0.0.1:0",
        "--web-config",
        "/nonexistent/web.yml",
        file.path(),
    ]);
    assert_eq!(code, 66, "{stderr}");
    assert!(stderr.starts_with("prober: --web-config: /nonexistent/web.yml: "), "{stderr}");
    let Run { code, stderr, .. } = run(&["watch", "--web-config", web.path(), file.path()]);
    assert_eq!(code, 64, "{stderr}");
    assert!(stderr.contains("--web-config protects --metrics and --health-listen"), "{stderr}");
}
