//! HTTPS probes against `prober_testkit::tls::TlsTargetServer` on loopback, with certificates
//! made at test time: verification modes, SNI, mutual TLS, versions, handshake timeout,
//! certificate expiry, redirects between http and https, unusable files.
#![cfg(feature = "tls")]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use prober_core::{
    Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, RedirectPolicy, TlsOptions, TlsVerify,
    TlsVersion,
};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::tls::{
    Issued, TestCa, TlsServerOptions, TlsTargetServer, TlsVersions, self_signed,
};
use prober_testkit::{TargetServer, closed_port};

const TIMEOUT: Duration = Duration::from_secs(5);
/// 2031-02-03T00:00:00Z.
const EXPIRY_2031: i64 = 1_927_843_200;

fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Http(h) = &spec.kind else { panic!("not an HTTP spec") };
    let mut m = HttpProbe::new(h, spec.timeout, spec.output_limit);
    let started = Instant::now();
    let o = run_to_completion(&mut m);
    assert!(started.elapsed() < spec.timeout + Duration::from_secs(10), "probe hung: {o:?}");
    o
}

fn get_with(url: &str, tls: TlsOptions) -> Outcome {
    run(&ProbeSpec::http(url).unwrap().with_timeout(TIMEOUT).unwrap().with_tls(tls).unwrap())
}

fn get(url: &str) -> Outcome {
    get_with(url, TlsOptions::default())
}

/// A fresh directory for this test's files.
fn dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-http-https-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ca_file(ca: &TestCa, tag: &str) -> PathBuf {
    let p = dir(tag).join("ca.pem");
    std::fs::write(&p, &ca.cert().cert_pem).unwrap();
    p
}

fn verify_with(ca: PathBuf) -> TlsOptions {
    TlsOptions { verify: TlsVerify::CaFile(ca), ..TlsOptions::default() }
}

fn server(cert: Issued) -> TlsTargetServer {
    TlsTargetServer::start(TlsServerOptions::new(cert))
}

#[track_caller]
fn assert_success(o: &Outcome, body: &str) {
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
    assert_eq!(String::from_utf8_lossy(&o.output), body);
}

#[track_caller]
fn assert_tls_failure(o: &Outcome, url: &str, detail: &str) {
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    let prefix = format!("Get \"{url}\": tls: ");
    assert!(o.message.starts_with(&prefix), "{:?} does not start with {prefix:?}", o.message);
    assert!(o.message.contains(detail), "{:?} does not contain {detail:?}", o.message);
}

#[test]
fn skip_verify_success_reports_handshake_time_and_expiry() {
    let ca = TestCa::new("probe test CA");
    let s = server(ca.issue_expiring(&["localhost", "127.0.0.1"], (2031, 2, 3)));
    let o = get(&s.url("/ok"));
    assert_success(&o, "ok");
    assert_eq!(o.http_status, Some(200));
    assert_eq!(o.cert_not_after, Some(EXPIRY_2031));
    let t = o.timings;
    let (connect, tls, first) = (t.connect.unwrap(), t.tls.unwrap(), t.first_byte.unwrap());
    // Times are the driver's clock per batch of events, so a fast handshake may read as 0.
    assert!(connect + tls <= first && first <= t.total, "{t:?}");
    let h = s.wait_for_handshakes(1, TIMEOUT);
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].sni, None, "an IP address sends no SNI");
    assert_eq!(h[0].error, None);
    assert_eq!(h[0].alpn.as_deref(), None, "the server offers no ALPN");
}

#[test]
fn any_certificate_is_accepted_by_default() {
    // Self-signed, for another name, never valid for 127.0.0.1: the kubelet accepts it.
    let s = server(self_signed(&["example.invalid"]));
    assert_success(&get(&s.url("/status/200?body=insecure")), "insecure");
    let ca = TestCa::new("expired CA");
    let s = server(ca.issue_expiring(&["127.0.0.1"], (2001, 1, 1)));
    let o = get(&s.url("/ok"));
    assert_success(&o, "ok");
    assert_eq!(o.cert_not_after, Some(978_307_200));
}

#[test]
fn verification_against_another_ca_fails_with_reason_tls() {
    let ca = TestCa::new("the server's CA");
    let other = TestCa::new("some other CA");
    let s = server(ca.issue_expiring(&["127.0.0.1"], (2031, 2, 3)));
    let url = s.url("/ok");
    let o = get_with(&url, verify_with(ca_file(&other, "other-ca")));
    assert_tls_failure(&o, &url, "invalid peer certificate: UnknownIssuer");
    assert_eq!(o.message, format!("Get \"{url}\": tls: invalid peer certificate: UnknownIssuer"));
    // The expiry is known even though the certificate was refused.
    assert_eq!(o.cert_not_after, Some(EXPIRY_2031));
    assert!(o.timings.connect.is_some() && o.timings.tls.is_none() && o.http_status.is_none());
    assert_eq!(s.backend().requests(), 0, "no request may be sent after a failed handshake");
    // The server got our alert.
    let h = s.wait_for_handshakes(1, TIMEOUT);
    assert!(h[0].error.as_deref().is_some_and(|e| e.contains("UnknownCA")), "{h:?}");

    // A self-signed certificate against a CA file.
    let s = server(self_signed(&["127.0.0.1"]));
    let url = s.url("/ok");
    assert_tls_failure(&get_with(&url, verify_with(ca_file(&ca, "ca"))), &url, "UnknownIssuer");
}

#[test]
fn verification_with_the_right_ca_succeeds() {
    let ca = TestCa::new("the right CA");
    let s = server(ca.issue(&["localhost", "127.0.0.1"]));
    let ca_path = ca_file(&ca, "right-ca");
    assert_success(&get_with(&s.url("/ok"), verify_with(ca_path.clone())), "ok");
    // By name: the certificate's DNS name is checked against the URL's host (and sent as SNI).
    let url = format!("https://localhost:{}/ok", s.port());
    assert_success(&get_with(&url, verify_with(ca_path.clone())), "ok");
    let h = s.wait_for_handshakes(2, TIMEOUT);
    assert_eq!(h[1].sni.as_deref(), Some("localhost"));
    // A name the certificate is not for.
    let tls = TlsOptions { server_name: Some("other.example".into()), ..verify_with(ca_path) };
    let url = s.url("/ok");
    assert_tls_failure(
        &get_with(&url, tls),
        &url,
        "invalid peer certificate: certificate not valid for name \"other.example\"",
    );
}

#[test]
fn system_roots_do_not_trust_a_test_ca() {
    let ca = TestCa::new("not in the system store");
    let s = server(ca.issue(&["127.0.0.1"]));
    let url = s.url("/ok");
    let o = get_with(&url, TlsOptions { verify: TlsVerify::SystemRoots, ..TlsOptions::default() });
    assert_tls_failure(&o, &url, "UnknownIssuer");
}

#[test]
fn sni_is_the_host_or_the_override() {
    let s = server(self_signed(&["localhost"]));
    let by_name = format!("https://localhost:{}/ok", s.port());
    assert_success(&get(&by_name), "ok");
    let o = get_with(
        &s.url("/ok"),
        TlsOptions { server_name: Some("probe.example".into()), ..TlsOptions::default() },
    );
    assert_success(&o, "ok");
    let o = get_with(
        &by_name,
        TlsOptions { server_name: Some("svc.ns.svc".into()), ..TlsOptions::default() },
    );
    assert_success(&o, "ok");
    let sni: Vec<Option<String>> =
        s.wait_for_handshakes(3, TIMEOUT).into_iter().map(|h| h.sni).collect();
    assert_eq!(
        sni,
        [
            Some("localhost".to_string()),
            Some("probe.example".to_string()),
            Some("svc.ns.svc".into())
        ]
    );
    // The Host header is the URL's, whatever the SNI.
    let o = get_with(
        &s.url("/echo/host"),
        TlsOptions { server_name: Some("probe.example".into()), ..TlsOptions::default() },
    );
    assert_success(&o, &format!("127.0.0.1:{}", s.port()));
}

#[test]
fn mutual_tls_accepted_and_refused() {
    let server_ca = TestCa::new("server CA");
    let client_ca = TestCa::new("client CA");
    let d = dir("mtls");
    let good = client_ca.issue_client("probe-client").write_files(&d, "good");
    let bad = TestCa::new("untrusted").issue_client("intruder").write_files(&d, "bad");
    for versions in [TlsVersions::Both, TlsVersions::Tls12Only] {
        let mut opts = TlsServerOptions::new(server_ca.issue(&["127.0.0.1"]));
        opts.client_ca = Some(client_ca.cert().cert_pem.clone());
        opts.versions = versions;
        let s = TlsTargetServer::start(opts);
        let url = s.url("/ok");

        let o =
            get_with(&url, TlsOptions { client_cert: Some(good.clone()), ..TlsOptions::default() });
        assert_success(&o, "ok");
        let h = s.wait_for_handshakes(1, TIMEOUT);
        assert!(h[0].client_cert && h[0].error.is_none(), "{h:?}");

        // No certificate: TLS 1.3 reports it after the client's side of the handshake, as an
        // alert in place of the response; TLS 1.2 during the handshake.
        let o = get(&url);
        assert_tls_failure(&o, &url, "received fatal alert");
        let o =
            get_with(&url, TlsOptions { client_cert: Some(bad.clone()), ..TlsOptions::default() });
        assert_tls_failure(&o, &url, "received fatal alert");
        let h = s.wait_for_handshakes(3, TIMEOUT);
        assert!(h[1].error.is_some() && h[2].error.is_some(), "{versions:?}: {h:?}");
        assert_eq!(s.backend().requests(), 1, "{versions:?}");
    }
}

#[test]
fn minimum_version() {
    let mut opts = TlsServerOptions::new(self_signed(&["127.0.0.1"]));
    opts.versions = TlsVersions::Tls12Only;
    let s = TlsTargetServer::start(opts);
    let url = s.url("/ok");
    let tls = |v| TlsOptions { min_version: Some(v), ..TlsOptions::default() };
    assert_success(&get_with(&url, tls(TlsVersion::Tls12)), "ok");
    assert_success(&get(&url), "ok");
    assert_tls_failure(&get_with(&url, tls(TlsVersion::Tls13)), &url, "");
}

#[test]
fn maximum_version() {
    let mut opts = TlsServerOptions::new(self_signed(&["127.0.0.1"]));
    opts.versions = TlsVersions::Tls13Only;
    let s = TlsTargetServer::start(opts);
    let url = s.url("/ok");
    let tls = |v| TlsOptions { max_version: Some(v), ..TlsOptions::default() };
    assert_success(&get_with(&url, tls(TlsVersion::Tls13)), "ok");
    let o = get_with(&url, tls(TlsVersion::Tls12));
    assert_tls_failure(&o, &url, "received fatal alert: ProtocolVersion");
    assert!(o.message.ends_with("(this probe offers TLS 1.2 only)"), "{:?}", o.message);
    assert_eq!(s.backend().requests(), 1, "the 1.2-only probe never got to send a request");
}

#[test]
fn handshake_timeout_is_reason_timeout() {
    // Accepts TCP (the kernel completes the handshake) and never answers the ClientHello.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/", silent.local_addr().unwrap());
    let spec = ProbeSpec::http(&url).unwrap().with_timeout(Duration::from_millis(300)).unwrap();
    let started = Instant::now();
    let o = run(&spec);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert_eq!(
        o.message,
        format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        )
    );
    assert!(o.timings.connect.is_some() && o.timings.tls.is_none());
    assert_eq!(o.cert_not_after, None);
}

#[test]
fn redirects_between_http_and_https_on_the_same_host() {
    let plain = TargetServer::start();
    let tls = server(TestCa::new("ca").issue_expiring(&["127.0.0.1"], (2031, 2, 3)));
    // http -> https.
    let to_https =
        format!("{}/redirect?loc=https://127.0.0.1:{}/status/200", plain.url(""), tls.port());
    let o = get(&to_https);
    assert_success(&o, "status 200");
    assert!(o.timings.tls.is_some());
    assert_eq!(o.cert_not_after, Some(EXPIRY_2031));
    assert_eq!(tls.backend().requests(), 1);
    // https -> http: the final hop has no TLS.
    let to_http = format!("{}/redirect?loc=http://127.0.0.1:{}/ok", tls.url(""), plain.port());
    let o = get(&to_http);
    assert_success(&o, "ok");
    assert_eq!((o.timings.tls, o.cert_not_after), (None, None));
    // https -> https, relative.
    assert_success(&get(&tls.url("/redirect-chain/2")), "chain end");
    // The policy still applies: same-origin refuses the scheme change.
    let spec = ProbeSpec::http(&to_https)
        .unwrap()
        .with_redirect_policy(RedirectPolicy::SameOrigin)
        .with_timeout(TIMEOUT)
        .unwrap();
    let o = run(&spec);
    assert_eq!(
        (o.result, o.reason, o.http_status),
        (ProbeResult::Warning, Reason::Redirect, Some(302))
    );
}

#[test]
fn server_name_stays_with_the_original_host_over_redirects() {
    let ca = TestCa::new("redirect CA");
    let ca_path = ca_file(&ca, "sni-redirect");
    // The target: an address serving a virtual host whose certificate has only that name.
    let origin = server(ca.issue(&["svc.example"]));
    // Another host, reached by a name its certificate carries.
    let other = server(ca.issue(&["localhost"]));
    let tls = TlsOptions { server_name: Some("svc.example".into()), ..verify_with(ca_path) };
    let spec = |url: &str| {
        ProbeSpec::http(url)
            .unwrap()
            .with_redirect_policy(RedirectPolicy::AnyHost)
            .with_timeout(TIMEOUT)
            .unwrap()
            .with_tls(tls.clone())
            .unwrap()
    };
    // To another host: its own name is sent and verified, not the target's server name.
    let away = format!("{}/redirect?loc=https://localhost:{}/ok", origin.url(""), other.port());
    assert_success(&run(&spec(&away)), "ok");
    // Back to the original host, absolute or relative: the server name is kept.
    let back = format!("{}/redirect?loc=https://127.0.0.1:{}/ok", origin.url(""), origin.port());
    assert_success(&run(&spec(&back)), "ok");
    assert_success(&run(&spec(&origin.url("/redirect-chain/1"))), "chain end");
    let sni = |s: &TlsTargetServer, n: usize| -> Vec<Option<String>> {
        s.wait_for_handshakes(n, TIMEOUT).into_iter().map(|h| h.sni).collect()
    };
    assert_eq!(sni(&other, 1), [Some("localhost".to_string())]);
    assert_eq!(sni(&origin, 5), vec![Some("svc.example".to_string()); 5]);
}

#[test]
fn redirect_to_https_with_unusable_files_is_unknown() {
    let plain = TargetServer::start();
    let url = format!("{}/redirect?loc=https://127.0.0.1:1/x", plain.url(""));
    let o = get_with(&url, verify_with("/nonexistent/ca.pem".into()));
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Tls), "{o:?}");
    assert_eq!(
        o.message,
        "TLS setup failed: cannot read CA file \"/nonexistent/ca.pem\": no such file or directory"
    );
}

#[test]
fn unusable_files_are_unknown_before_connecting() {
    let s = server(self_signed(&["127.0.0.1"]));
    let url = s.url("/ok");
    let d = dir("files");
    let garbage = d.join("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let ca = TestCa::new("ca");
    let (cert, key) = ca.issue_client("c").write_files(&d, "client");
    let (other_cert, _) = ca.issue_client("d").write_files(&d, "other");

    let cases: Vec<(TlsOptions, String)> = vec![
        (
            verify_with("/nonexistent/ca.pem".into()),
            "cannot read CA file \"/nonexistent/ca.pem\": no such file or directory".into(),
        ),
        (
            verify_with(garbage.clone()),
            format!("invalid CA file {garbage:?}: no PEM certificate in it"),
        ),
        (
            TlsOptions {
                client_cert: Some((cert.clone(), d.join("nokey.pem"))),
                ..TlsOptions::default()
            },
            format!(
                "cannot read client key file {:?}: no such file or directory",
                d.join("nokey.pem")
            ),
        ),
        (
            TlsOptions {
                client_cert: Some((cert.clone(), garbage.clone())),
                ..TlsOptions::default()
            },
            format!("invalid client key file {garbage:?}: no PEM private key in it"),
        ),
        (
            TlsOptions {
                client_cert: Some((garbage.clone(), key.clone())),
                ..TlsOptions::default()
            },
            format!("invalid client certificate file {garbage:?}: no PEM certificate in it"),
        ),
        (
            TlsOptions { client_cert: Some((other_cert, key)), ..TlsOptions::default() },
            "does not go with key".into(),
        ),
    ];
    for (tls, detail) in cases {
        let o = get_with(&url, tls);
        assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Tls), "{o:?}");
        assert!(o.message.starts_with("TLS setup failed: "), "{}", o.message);
        assert!(o.message.contains(&detail), "{:?} does not contain {detail:?}", o.message);
    }
    assert_eq!(s.backend().connections(), 0);
    assert!(s.handshakes().is_empty());
}

#[test]
fn a_plain_http_server_fails_the_handshake() {
    // Answers whatever comes with an HTTP/1.1 error, as plain servers do to a ClientHello.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut buf = [0u8; 1024];
        let _ = c.read(&mut buf);
        let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        let _ = c.shutdown(std::net::Shutdown::Write);
        let _ = c.read(&mut buf);
    });
    let o = get(&url);
    // Go's transport looks at the first record header and names the mistake.
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    assert_eq!(
        o.message,
        format!("Get \"{url}\": http: server gave HTTP response to HTTPS client")
    );
    assert_eq!(o.cert_not_after, None);
    server.join().unwrap();
}

#[test]
fn refused_connection_is_reported_before_tls() {
    let port = closed_port();
    let url = format!("https://127.0.0.1:{port}/");
    let o = get(&url);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{o:?}");
    assert_eq!(
        o.message,
        format!("Get \"{url}\": dial tcp 127.0.0.1:{port}: connect: connection refused")
    );
}

#[test]
fn bodies_and_statuses_over_tls() {
    let s = server(self_signed(&["127.0.0.1"]));
    let o = get(&s.url("/status/500"));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status));
    assert_eq!(o.message, "HTTP probe failed with statuscode: 500");
    let o = get(&s.url("/body/10241"));
    assert_success(&o, &"a".repeat(10240));
    assert!(o.truncated);
    assert_success(&get(&s.url("/chunked/50000?chunk=777")), &"a".repeat(10240));
    assert_success(&get(&s.url("/close-delimited/3000")), &"a".repeat(3000));
    assert_success(&get(&s.url("/body/0")), "");
    let o = get(&s.url("/truncated/100/10"));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::BrokenBody), "{o:?}");
    assert_eq!(o.output, b"a".repeat(10));
    let o = get(&s.url("/echo/header-names"));
    assert_success(&o, "Accept\nConnection\nUser-Agent");
}

#[test]
fn a_stalled_body_over_tls_times_out() {
    let s = server(self_signed(&["127.0.0.1"]));
    let url = s.url("/stall-body/5");
    let spec = ProbeSpec::http(&url).unwrap().with_timeout(Duration::from_millis(500)).unwrap();
    let o = run(&spec);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert!(o.message.ends_with("(Client.Timeout or context cancellation while reading body)"));
    assert_eq!(o.output, b"aaaaa");
}

/// A self-signed `CA:TRUE` server certificate (what `openssl req -x509` makes) pinned through
/// the CA file is accepted, as Go and OpenSSL accept it; its name and the CA file still count.
#[test]
fn a_pinned_self_signed_ca_certificate_is_accepted() {
    let cert = prober_testkit::tls::self_signed_ca(&["localhost", "127.0.0.1"]);
    let s = server(cert.clone());
    let pem = dir("pinned-ca").join("pinned.pem");
    std::fs::write(&pem, &cert.cert_pem).unwrap();
    assert_success(&get_with(&s.url("/health"), verify_with(pem.clone())), "ok");
    // The name is still checked.
    let wrong_name = TlsOptions { server_name: Some("other.example".into()), ..verify_with(pem) };
    let o = get_with(&s.url("/health"), wrong_name);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    // Another CA:TRUE certificate of the same names is not the pinned one: refused.
    let other = dir("pinned-ca-other").join("other.pem");
    std::fs::write(
        &other,
        prober_testkit::tls::self_signed_ca(&["localhost", "127.0.0.1"]).cert_pem,
    )
    .unwrap();
    let o = get_with(&s.url("/health"), verify_with(other));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
}

/// Timings follow one convention: each phase from the start of the run to where it ended,
/// stamped where it ended, so they are ordered and a slow phase shows in the right place.
#[test]
fn timings_are_cumulative_and_stamped_where_each_phase_ends() {
    let s = server(self_signed(&["localhost", "127.0.0.1"]));
    for _ in 0..5 {
        let o = get(&s.url("/slow-headers/150"));
        assert_success(&o, "ok");
        let t = o.timings;
        let (connect, tls, first) = (t.connect.unwrap(), t.tls.unwrap(), t.first_byte.unwrap());
        assert!(connect > Duration::ZERO && connect < tls, "{t:?}");
        assert!(tls < first && first <= t.total, "{t:?}");
        // The server waited 150 ms after reading the request: between the handshake's end and
        // the first byte, not anywhere else.
        assert!(first - tls >= Duration::from_millis(150), "{t:?}");
    }
}

#[test]
fn tls_facts_of_the_last_handshake() {
    let ca = TestCa::new("facts CA");
    let s = server(ca.issue_expiring(&["localhost", "127.0.0.1"], (2031, 2, 3)));
    let url = s.url("/ok");
    // Not verified (the kubelet's default): version, suite and certificate, no verified chain.
    let o = get(&url);
    assert_success(&o, "ok");
    let t = o.tls.as_deref().expect("TLS facts");
    assert_eq!(t.version, Some(TlsVersion::Tls13));
    assert!(t.cipher_suite.is_some_and(|c| c.starts_with("TLS13_")), "{t:?}");
    assert_eq!((t.earliest_not_after, t.verified_chain_not_after), (Some(EXPIRY_2031), None));
    let leaf = t.leaf.as_ref().expect("leaf");
    assert_eq!((leaf.subject.as_str(), leaf.issuer.as_str()), ("CN=localhost", "CN=facts CA"));
    assert_eq!(leaf.dns_names, ["localhost"], "the IP address is not a DNS name");
    assert_eq!(leaf.fingerprint_sha256.len(), 64);
    assert!(
        leaf.fingerprint_sha256.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    // Verified against the CA: the chain's expiry is known.
    let o = get_with(&url, verify_with(ca_file(&ca, "facts")));
    assert_success(&o, "ok");
    let t = o.tls.as_deref().expect("TLS facts");
    assert_eq!(t.verified_chain_not_after, Some(EXPIRY_2031));
    // TLS 1.2 by the server's choice.
    let mut opts = TlsServerOptions::new(ca.issue(&["127.0.0.1"]));
    opts.versions = TlsVersions::Tls12Only;
    let s12 = TlsTargetServer::start(opts);
    let o = get(&s12.url("/ok"));
    let t = o.tls.as_deref().expect("TLS facts");
    assert_eq!(t.version, Some(TlsVersion::Tls12));
    assert!(t.cipher_suite.is_some_and(|c| c.starts_with("TLS_ECDHE_")), "{t:?}");
    // A failed verification still shows the certificate, without version or chain.
    let expired = server(ca.issue_expiring(&["127.0.0.1"], (2001, 1, 1)));
    let o = get_with(&expired.url("/ok"), verify_with(ca_file(&ca, "facts-expired")));
    assert_eq!(o.reason, Reason::Tls, "{o:?}");
    let t = o.tls.as_deref().expect("TLS facts");
    assert_eq!((t.version, t.verified_chain_not_after), (None, None));
    assert_eq!(t.earliest_not_after, Some(978_307_200));
    // Plain HTTP: none.
    assert_eq!(get(&TargetServer::start().url("/ok")).tls, None);
}
