//! Endpoints protected as exporters are: a web config's TLS (real certificates, client
//! certificates, rotation on disk), basic authentication with real bcrypt hashes, headers;
//! talked to with curl, as an operator would.

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output};

use common::{SCRAPE, get, start, temp_dir};
use prober_httpd::{Limits, Running, WebConfig};
use prober_testkit::tls::{Issued, TestCa, self_signed};

/// Runs curl with `args`; its output.
fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "30"])
        .args(args)
        .output()
        .expect("run curl (these tests need it on PATH)")
}

/// curl's exit status and what it printed (the answer, or why not).
fn curl_says(args: &[&str]) -> (i32, String) {
    let o = curl(args);
    let text =
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    (o.status.code().unwrap_or(-1), text)
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// A TLS server whose web config, in `dir`, names `server.crt` and `server.key` relative to
/// itself, plus `extra` lines under `tls_server_config`.
fn tls_server(dir: &Path, cert: &Issued, extra: &str) -> Running {
    cert.write_files(dir, "server");
    write(
        dir,
        "web.yml",
        &format!("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n{extra}"),
    );
    let web = WebConfig::load(&dir.join("web.yml")).unwrap();
    start(Limits::default(), Some(web))
}

fn url(server: &Running) -> String {
    format!("https://127.0.0.1:{}/metrics", server.local_addr().port())
}

#[test]
fn tls_serves_https_and_refuses_plain_http() {
    let dir = temp_dir("tls");
    let ca = TestCa::new("web config CA");
    write(&dir, "ca.crt", &ca.cert().cert_pem);
    let server = tls_server(&dir, &ca.issue(&["127.0.0.1"]), "");
    let ca_file = dir.join("ca.crt");
    let (code, out) = curl_says(&["--cacert", ca_file.to_str().unwrap(), &url(&server)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("up 1"), "{out}");
    // Plain HTTP to the TLS port: told why, as Go's servers tell it.
    let mut plain = common::connect(server.local_addr());
    plain.write_all(SCRAPE.as_bytes()).unwrap();
    let mut answer = String::new();
    plain.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.0 400 Bad Request\r\n"), "{answer}");
    let http = format!("http://127.0.0.1:{}/metrics", server.local_addr().port());
    let (_, out) = curl_says(&[&http]);
    assert!(out.contains("Client sent an HTTP request to an HTTPS server."), "{out}");
    // A client that does not trust the certificate is refused by itself (curl's 60).
    let (code, _) = curl_says(&[&url(&server)]);
    assert_eq!(code, 60);
}

#[test]
fn a_rotated_certificate_is_served_from_the_next_connection_on() {
    let dir = temp_dir("rotation");
    let (old, new) = (TestCa::new("old CA"), TestCa::new("new CA"));
    write(&dir, "old.crt", &old.cert().cert_pem);
    write(&dir, "new.crt", &new.cert().cert_pem);
    let server = tls_server(&dir, &old.issue(&["127.0.0.1"]), "");
    let trusting = |ca: &str| {
        let ca = dir.join(ca);
        curl_says(&["--cacert", ca.to_str().unwrap(), &url(&server)])
    };
    assert_eq!(trusting("old.crt").0, 0);
    assert_eq!(trusting("new.crt").0, 60);
    // Replaced on disk, as cert-manager or a renewal script does: no restart.
    new.issue(&["127.0.0.1"]).write_files(&dir, "server");
    let (code, out) = trusting("new.crt");
    assert_eq!(code, 0, "{out}");
    assert_eq!(trusting("old.crt").0, 60);
}

/// A CA, a client certificate from it, and one from elsewhere, written into `dir`.
fn client_certs(dir: &Path) -> TestCa {
    let ca = TestCa::new("clients CA");
    write(dir, "clients.crt", &ca.cert().cert_pem);
    ca.issue_client("scraper").write_files(dir, "client");
    self_signed(&["stranger"]).write_files(dir, "stranger");
    ca
}

/// curl to `server` trusting `server_ca.crt`, with the client certificate `stem` if any.
fn with_client(dir: &Path, server: &Running, stem: Option<&str>) -> (i32, String) {
    let ca = dir.join("server_ca.crt");
    let mut args = vec!["--cacert".to_string(), ca.to_str().unwrap().to_string()];
    if let Some(stem) = stem {
        args.extend(["--cert".into(), dir.join(format!("{stem}.crt")).display().to_string()]);
        args.extend(["--key".into(), dir.join(format!("{stem}.key")).display().to_string()]);
    }
    args.push(url(server));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    curl_says(&args)
}

fn client_auth_server(dir: &Path, mode: &str) -> Running {
    let server_ca = TestCa::new("server CA");
    write(dir, "server_ca.crt", &server_ca.cert().cert_pem);
    let ca_line = if mode.contains("Verify") { "  client_ca_file: clients.crt\n" } else { "" };
    let extra = format!("  client_auth_type: {mode}\n{ca_line}");
    tls_server(dir, &server_ca.issue(&["127.0.0.1"]), &extra)
}

#[test]
fn require_and_verify_client_cert() {
    let dir = temp_dir("verify");
    client_certs(&dir);
    let server = client_auth_server(&dir, "RequireAndVerifyClientCert");
    let (code, out) = with_client(&dir, &server, Some("client"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("up 1"), "{out}");
    assert_ne!(with_client(&dir, &server, None).0, 0, "no certificate");
    assert_ne!(with_client(&dir, &server, Some("stranger")).0, 0, "another issuer");
}

#[test]
fn verify_client_cert_if_given() {
    let dir = temp_dir("if-given");
    client_certs(&dir);
    let server = client_auth_server(&dir, "VerifyClientCertIfGiven");
    assert_eq!(with_client(&dir, &server, None).0, 0);
    assert_eq!(with_client(&dir, &server, Some("client")).0, 0);
    assert_ne!(with_client(&dir, &server, Some("stranger")).0, 0, "another issuer");
}

#[test]
fn require_any_client_cert() {
    let dir = temp_dir("any");
    client_certs(&dir);
    let server = client_auth_server(&dir, "RequireAnyClientCert");
    assert_ne!(with_client(&dir, &server, None).0, 0, "no certificate");
    let (code, out) = with_client(&dir, &server, Some("stranger"));
    assert_eq!(code, 0, "any certificate: {out}");
}

#[test]
fn basic_auth_with_bcrypt_hashes() {
    let dir = temp_dir("basic");
    // A real bcrypt hash (cost 4: the lowest, for the test's time), as htpasswd -B makes.
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    write(
        &dir,
        "web.yml",
        &format!(
            "basic_auth_users:\n  prometheus: '{hash}'\nhttp_server_config:\n  headers:\n    \
             X-Content-Type-Options: nosniff\n"
        ),
    );
    let server = start(Limits::default(), Some(WebConfig::load(&dir.join("web.yml")).unwrap()));
    let url = format!("http://127.0.0.1:{}/metrics", server.local_addr().port());
    let head = |user: Option<&str>| {
        let mut args = vec!["--include"];
        if let Some(u) = user {
            args.extend(["--user", u]);
        }
        args.push(&url);
        curl_says(&args).1
    };
    for who in [None, Some("prometheus:wrong"), Some("nobody:s3cret")] {
        let out = head(who);
        assert!(out.starts_with("HTTP/1.1 401 Unauthorized\r\n"), "{who:?}: {out}");
        assert!(out.contains("\r\nWWW-Authenticate: Basic\r\n"), "{out}");
    }
    // Right: 200, and again (from the cache of checked pairs).
    for _ in 0..2 {
        let out = head(Some("prometheus:s3cret"));
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(out.contains("\r\nX-Content-Type-Options: nosniff\r\n"), "{out}");
        assert!(out.ends_with("up 1\n"), "{out}");
    }
    // Every path is protected, not only the routes: an unknown one is 401 too.
    let a = get(server.local_addr(), "GET /nope HTTP/1.1\r\n\r\n");
    assert_eq!(a.status, 401);
}

#[test]
fn openmetrics_only_when_asked_for() {
    let server = start(Limits::default(), None);
    let url = format!("http://127.0.0.1:{}/metrics", server.local_addr().port());
    let (_, classic) = curl_says(&["--include", &url]);
    assert!(
        classic.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8"),
        "{classic}"
    );
    assert!(classic.ends_with("# TYPE up gauge\nup 1\n"), "{classic}");
    let accept =
        "Accept: application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3";
    let (_, om) = curl_says(&["--include", "--header", accept, &url]);
    assert!(om.contains("Content-Type: application/openmetrics-text; version=1.0.0"), "{om}");
    assert!(om.ends_with("up 1\n# EOF\n"), "{om}");
}

#[test]
fn a_bad_web_config_names_its_path_and_the_field() {
    let dir = temp_dir("bad");
    write(&dir, "web.yml", "tls_server_config:\n  cert_file: gone.crt\n  key_file: gone.key\n");
    let path = dir.join("web.yml");
    let e = WebConfig::load(&path).unwrap_err();
    let want = format!(
        "{}: tls_server_config.cert_file: {}: ",
        path.display(),
        dir.join("gone.crt").display()
    );
    assert!(e.starts_with(&want), "{e}");
    write(&dir, "web.yml", "basic_auth_users:\n  a: '$2y$10$short'\n");
    let e = WebConfig::load(&path).unwrap_err();
    assert_eq!(e, format!("{}: basic_auth_users.a: not a bcrypt hash", path.display()));
}

/// A client CA, client certificates from it with the SANs the toolkit compares (DNS, e-mail,
/// URI, IPv4, IPv6 written long), one with another SAN, and one of another issuer carrying an
/// allowed SAN, written into `dir`; a server with `client_auth_type: mode` and
/// `client_allowed_sans`.
fn sans_server(dir: &Path, mode: &str) -> Running {
    let ca = client_certs(dir);
    for (stem, san) in [
        ("dns", "DNS:scraper.example"),
        ("email", "email:prometheus@example.org"),
        ("uri", "URI:spiffe://example.org/ns/monitoring/sa/prometheus"),
        ("ipv4", "IP:192.0.2.9"),
        ("ipv6", "IP:2001:db8:0:0:0:0:0:9"),
        ("other", "DNS:other.example"),
    ] {
        ca.issue_client_sans(&[san]).write_files(dir, stem);
    }
    TestCa::new("other CA").issue_client_sans(&["DNS:scraper.example"]).write_files(dir, "foreign");
    let server_ca = TestCa::new("server CA");
    write(dir, "server_ca.crt", &server_ca.cert().cert_pem);
    let ca_line = if mode.contains("Verify") { "  client_ca_file: clients.crt\n" } else { "" };
    let extra = format!(
        "  client_auth_type: {mode}\n{ca_line}  client_allowed_sans:\n    - scraper.example\n    \
         - prometheus@example.org\n    - spiffe://example.org/ns/monitoring/sa/prometheus\n    \
         - 192.0.2.9\n    - 2001:db8::9\n"
    );
    tls_server(dir, &server_ca.issue(&["127.0.0.1"]), &extra)
}

/// Refused in the handshake with the alert Go's crypto/tls sends when the toolkit's
/// `VerifyPeerCertificate` fails (bad_certificate).
fn assert_bad_certificate((code, out): (i32, String), who: &str) {
    assert_ne!(code, 0, "{who}: {out}");
    assert!(out.contains("bad certificate"), "{who}: {out}");
    assert!(!out.contains("up 1"), "{who}: {out}");
}

#[test]
fn client_allowed_sans_admits_only_certificates_with_a_listed_san() {
    let dir = temp_dir("sans-verify");
    let server = sans_server(&dir, "RequireAndVerifyClientCert");
    for who in ["dns", "email", "uri", "ipv4", "ipv6"] {
        let (code, out) = with_client(&dir, &server, Some(who));
        assert_eq!(code, 0, "{who}: {out}");
        assert!(out.contains("up 1"), "{who}: {out}");
    }
    assert_bad_certificate(with_client(&dir, &server, Some("other")), "other SAN");
    // "scraper" (the DNS SAN of client_certs' client) is not listed.
    assert_bad_certificate(with_client(&dir, &server, Some("client")), "unlisted DNS SAN");
    // The issuer is checked first: an allowed SAN from another CA is refused all the same.
    let (code, out) = with_client(&dir, &server, Some("foreign"));
    assert_ne!(code, 0, "{out}");
    assert!(!out.contains("up 1"), "{out}");
    assert_ne!(with_client(&dir, &server, None).0, 0, "no certificate");
}

/// With client certificates asked for but not verified, the SANs are still checked (as the
/// toolkit checks them), and a client without a certificate is refused.
#[test]
fn client_allowed_sans_without_verification_and_if_given() {
    let dir = temp_dir("sans-any");
    let server = sans_server(&dir, "RequireAnyClientCert");
    assert_eq!(with_client(&dir, &server, Some("foreign")).0, 0, "any issuer, listed SAN");
    assert_bad_certificate(with_client(&dir, &server, Some("stranger")), "unlisted SAN");
    drop(server);
    let dir = temp_dir("sans-if-given");
    let server = sans_server(&dir, "VerifyClientCertIfGiven");
    assert_eq!(with_client(&dir, &server, Some("uri")).0, 0);
    let (code, out) = with_client(&dir, &server, None);
    assert_ne!(code, 0, "no certificate, though the type allows none without SANs: {out}");
    assert!(!out.contains("up 1"), "{out}");
}

#[test]
fn client_allowed_sans_that_would_check_nothing_or_admit_nobody_are_refused() {
    let dir = temp_dir("sans-bad");
    let cert = TestCa::new("CA").issue(&["127.0.0.1"]);
    cert.write_files(&dir, "server");
    let path = dir.join("web.yml");
    for (extra, want) in [
        ("client_allowed_sans: [a.example]", "client_allowed_sans: set, but client_auth_type"),
        (
            "client_auth_type: RequireAnyClientCert\n  client_allowed_sans: []",
            "client_allowed_sans: empty",
        ),
    ] {
        let text = format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  {extra}\n"
        );
        write(&dir, "web.yml", &text);
        let e = WebConfig::load(&path).unwrap_err();
        let want = format!("{}: tls_server_config.{want}", path.display());
        assert!(e.starts_with(&want), "{extra}: {e}");
    }
}
