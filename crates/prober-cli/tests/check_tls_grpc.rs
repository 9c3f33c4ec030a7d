//! `prober check` on grpc:// targets (grpc-go's health server, built with `go build`, see
//! `prober_testkit::grpc`: without Go these tests fail, never skip) and on https://
//! targets against `prober_testkit::tls::TlsTargetServer`.

mod common;

use common::*;
use prober_testkit::grpc::HealthServer;

#[test]
fn check_grpc_serving_exits_0() {
    let s = HealthServer::start(&["-status", "my.pkg.Svc=SERVING"]);
    for target in [
        format!("grpc://127.0.0.1:{}", s.port()),
        grpc_target(s.port(), ""),
        grpc_target(s.port(), "my.pkg.Svc"),
    ] {
        let (code, v) = check_json(&[&target]);
        assert_eq!(code, 0, "{target}: {v}");
        assert_common_fields(&v);
        assert_eq!(v["result"], "success");
        assert_eq!(v["reason"], "none");
        // The kubelet's gRPC prober: no message, output "service healthy".
        assert_eq!(v["message"], "");
        assert_eq!(v["output"], "service healthy");
        assert_eq!(v["output_total"], 15);
        assert_eq!(v["http_status"], 200);
        assert!(v["timings"]["connect_ms"].is_number(), "{v}");
        assert!(v["timings"].get("tls_ms").is_none(), "{v}");
        assert!(v.get("cert_not_after").is_none(), "{v}");
    }
    let r = run(&["check", &grpc_target(s.port(), "my.pkg.Svc")]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("success (HTTP 200, "), "{}", r.stdout);
}

#[test]
fn check_grpc_not_serving_exits_1() {
    let s = HealthServer::start(&["-status", "down=NOT_SERVING"]);
    let (code, v) = check_json(&[&grpc_target(s.port(), "down")]);
    assert_eq!(code, 1, "{v}");
    assert_common_fields(&v);
    assert_eq!(v["result"], "failure");
    assert_eq!(v["reason"], "status");
    assert_eq!(v["message"], "service unhealthy (responded with \"NOT_SERVING\")");
    assert_eq!(v["output"], "");
    let r = run(&["check", &grpc_target(s.port(), "down")]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.starts_with(
            "failure: service unhealthy (responded with \"NOT_SERVING\") (status, HTTP 200, "
        ),
        "{}",
        r.stdout
    );
    // grpc-go answers NotFound for a service it does not know.
    let (code, v) = check_json(&[&grpc_target(s.port(), "no.such.Service")]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        v["message"],
        "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"
    );
}

#[test]
fn check_grpc_closed_port_exits_1() {
    let port = prober_testkit::closed_port();
    let (code, v) = check_json(&[&grpc_target(port, "")]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(
        (v["result"].as_str(), v["reason"].as_str()),
        (Some("failure"), Some("refused")),
        "{v}"
    );
    assert_eq!(
        v["message"],
        format!(
            "error: failed to connect service at \"127.0.0.1:{port}\": dial tcp 127.0.0.1:{port}: \
             connect: connection refused"
        )
    );
}

#[test]
fn check_grpc_over_tls() {
    let p = pki("grpc-tls", &["127.0.0.1", "localhost"]);
    let s = HealthServer::start(&["-tls-cert", &p.cert, "-tls-key", &p.key]);
    let target = grpc_target(s.port(), "");

    // --tls: the kubelet's TLS (KEP-4939), no verification.
    let (code, v) = check_json(&["--tls", &target]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["output"], "service healthy");
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);
    assert!(v["timings"]["tls_ms"].is_number(), "{v}");

    // Without --tls the probe is plaintext h2c, which a TLS server does not speak.
    let (code, v) = check_json(&["--timeout", "2s", &target]);
    assert_eq!(code, 1, "{v}");
    let prefix = format!("error: failed to connect service at \"127.0.0.1:{}\": ", s.port());
    assert!(v["message"].as_str().unwrap().starts_with(&prefix), "{v}");

    // Verified against its CA; TLS 1.3 at least.
    let (code, v) =
        check_json(&["--tls", "--tls-ca", &p.ca_file, "--tls-min-version", "1.3", &target]);
    assert_eq!(code, 0, "{v}");

    // Verified against another CA: failure, reason tls, and the expiry is still reported.
    let (code, v) = check_json(&["--tls", "--tls-ca", &p.other_ca_file, &target]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["reason"], "tls");
    assert_eq!(v["message"], format!("{prefix}tls: invalid peer certificate: UnknownIssuer"));
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);
}

#[test]
fn check_grpc_mutual_tls_with_tls_cert_and_key() {
    let p = pki("grpc-mtls", &["127.0.0.1"]);
    let clients = TestCa::new("client CA");
    let (client_ca, _) = clients.cert().write_files(&p.dir.0, "client-ca");
    let (cert, key) = clients.issue_client("probe").write_files(&p.dir.0, "client");
    let s = HealthServer::start(&[
        "-tls-cert",
        &p.cert,
        "-tls-key",
        &p.key,
        "-client-ca",
        client_ca.to_str().unwrap(),
    ]);
    let target = grpc_target(s.port(), "");
    let (code, v) = check_json(&[
        "--tls",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        &target,
    ]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = check_json(&["--tls", &target]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("tls")), "{v}");
    assert!(v["message"].as_str().unwrap().contains("tls: received fatal alert"), "{v}");
}

#[test]
fn check_https_does_not_verify_by_default() {
    let p = pki("https-default", &["127.0.0.1"]);
    let server = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let url = server.url("/health");
    let (code, v) = check_json(&[&url]);
    assert_eq!(code, 0, "{v}");
    assert_common_fields(&v);
    assert_eq!(v["result"], "success");
    assert_eq!(v["output"], "ok");
    assert_eq!(v["http_status"], 200);
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);
    assert!(v["timings"]["tls_ms"].is_number(), "{v}");
    // --tls changes nothing for https://.
    let (code, v) = check_json(&["--tls", &url]);
    assert_eq!(code, 0, "{v}");
    // No SNI for an IP address.
    let hs = server.wait_for_handshakes(2, HANG);
    assert!(hs.iter().all(|h| h.sni.is_none() && h.error.is_none()), "{hs:?}");
    // A failure over TLS still reports the certificate.
    server.backend().set_healthy(false);
    let (code, v) = check_json(&[&url]);
    assert_eq!((code, v["http_status"].as_u64()), (1, Some(503)), "{v}");
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);
}

#[test]
fn check_https_verifies_with_tls_ca() {
    let p = pki("https-ca", &["127.0.0.1"]);
    let server = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let url = server.url("/health");
    let (code, v) = check_json(&["--tls-ca", &p.ca_file, &url]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);

    let (code, v) = check_json(&["--tls-ca", &p.other_ca_file, &url]);
    assert_eq!(code, 1, "{v}");
    assert_eq!((v["result"].as_str(), v["reason"].as_str()), (Some("failure"), Some("tls")), "{v}");
    assert_eq!(
        v["message"],
        format!("Get \"{url}\": tls: invalid peer certificate: UnknownIssuer")
    );
    assert_eq!(v["cert_not_after"], CERT_NOT_AFTER);

    // The system's roots do not know the test CA (or there are none here): reason tls either way.
    let (code, v) = check_json(&["--tls-verify", &url]);
    assert_ne!(code, 0, "{v}");
    assert_eq!(v["reason"], "tls", "{v}");

    // A CA file that cannot be read: the probe cannot run (unknown, 2).
    let (code, v) = check_json(&["--tls-ca", "/no/such/ca.pem", &url]);
    assert_eq!(code, 2, "{v}");
    assert_eq!((v["result"].as_str(), v["reason"].as_str()), (Some("unknown"), Some("tls")), "{v}");
    assert_eq!(
        v["message"],
        "TLS setup failed: cannot read CA file \"/no/such/ca.pem\": no such file or directory"
    );
}

#[test]
fn check_https_tls_server_name() {
    // A certificate for a name only: verification against 127.0.0.1 fails, against the name
    // given with --tls-server-name it passes, and that name is sent as SNI.
    let p = pki("https-sni", &["svc.test"]);
    let server = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let url = server.url("/health");
    let (code, v) = check_json(&["--tls-ca", &p.ca_file, &url]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("tls")), "{v}");
    assert!(v["message"].as_str().unwrap().contains("tls: invalid peer certificate"), "{v}");
    let (code, v) = check_json(&["--tls-ca", &p.ca_file, "--tls-server-name", "svc.test", &url]);
    assert_eq!(code, 0, "{v}");
    // (The failed handshake may be recorded after the good one: look for the good one.)
    let hs = server.wait_for_handshakes(2, HANG);
    assert!(hs.iter().any(|h| h.sni.as_deref() == Some("svc.test") && h.error.is_none()), "{hs:?}");
}

#[test]
fn check_https_tls_min_version() {
    let p = pki("https-min", &["127.0.0.1"]);
    let mut opts = TlsServerOptions::new(p.server.clone());
    opts.versions = TlsVersions::Tls12Only;
    let server = TlsTargetServer::start(opts);
    let url = server.url("/health");
    let (code, v) = check_json(&["--tls-min-version", "1.2", &url]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = check_json(&["--tls-min-version", "1.3", &url]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("tls")), "{v}");
}

#[test]
fn check_https_tls_max_version() {
    let p = pki("https-max", &["127.0.0.1"]);
    let mut opts = TlsServerOptions::new(p.server.clone());
    opts.versions = TlsVersions::Tls13Only;
    let server = TlsTargetServer::start(opts);
    let url = server.url("/health");
    let (code, v) = check_json(&["--tls-max-version", "1.3", &url]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = check_json(&["--tls-max-version", "1.2", &url]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("tls")), "{v}");
    let message = v["message"].as_str().unwrap_or_default();
    assert!(message.ends_with("(this probe offers TLS 1.2 only)"), "{v}");
}

/// `--tls-resumption` is a TLS option like the others: taken by https:// (one check, one full
/// handshake: nothing to resume), refused where TLS options are.
#[test]
fn check_https_tls_resumption() {
    let p = pki("https-resume", &["127.0.0.1"]);
    let server = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let url = server.url("/health");
    let (code, v) = check_json(&["--tls-resumption", &url]);
    assert_eq!(code, 0, "{v}");
    let handshakes = server.wait_for_handshakes(1, std::time::Duration::from_secs(10));
    assert!(handshakes.len() == 1 && !handshakes[0].resumed, "{handshakes:?}");
    assert_usage_error(
        &["check", "--tls-resumption", "http://127.0.0.1:1/"],
        "--tls-resumption applies to https:// and grpc:// targets, not http://",
    );
    assert_usage_error(
        &["check", "--tls-resumption", "grpc://127.0.0.1:1"],
        "--tls-resumption needs --tls",
    );
}
