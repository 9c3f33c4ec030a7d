//! TCP probes with TLS and STARTTLS (issue 25; Consul's `TCPUseTLS`, blackbox_exporter's tcp
//! `tls: true` and `starttls`), run by the engine's one-shot check against the testkit's
//! line-protocol server (`prober_testkit::starttls`), which records every handshake.

use std::path::PathBuf;
use std::time::Duration;

use prober_core::{
    Outcome, Pattern, ProbeResult, ProbeSpec, Reason, TlsOptions, TlsVerify, UnixSocket,
};
use prober_engine::check;
use prober_testkit::starttls::{LineMode, StartTlsServer};
use prober_testkit::tls::{TestCa, TlsServerOptions};

struct Pki {
    ca: TestCa,
    ca_file: PathBuf,
}

fn pki(tag: &str) -> Pki {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-tcp-tls-{}-{tag}", std::process::id()));
    let ca = TestCa::new("TCP TLS test CA");
    let (ca_file, _) = ca.cert().write_files(&dir, "ca");
    Pki { ca, ca_file }
}

fn spec(port: u16, tls: TlsOptions) -> ProbeSpec {
    ProbeSpec::tcp("127.0.0.1", port.into())
        .unwrap()
        .with_timeout(Duration::from_secs(5))
        .unwrap()
        .with_tls(tls)
        .unwrap()
}

fn verified(p: &Pki, name: &str) -> TlsOptions {
    TlsOptions {
        verify: TlsVerify::CaFile(p.ca_file.clone()),
        server_name: Some(name.into()),
        ..TlsOptions::default()
    }
}

fn run(s: &ProbeSpec) -> Outcome {
    check(s)
}

#[test]
fn tls_from_the_first_byte() {
    let p = pki("tls");
    let server = StartTlsServer::start(
        TlsServerOptions::new(p.ca.issue_expiring(&["db.internal"], (2031, 2, 3))),
        LineMode::Tls,
    );
    // Connect and handshake only (Consul's TCPUseTLS), verified against the CA.
    let o = run(&spec(server.port(), verified(&p, "db.internal")));
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(o.cert_not_after, Some(1_927_843_200));
    assert!(o.timings.tls.is_some() && o.timings.connect <= o.timings.tls, "{:?}", o.timings);
    // Verified: the chain's expiry is known, and the leaf as blackbox_exporter labels it.
    let t = o.tls.as_deref().expect("TLS facts");
    assert_eq!(t.verified_chain_not_after, Some(1_927_843_200));
    assert_eq!(t.leaf.as_ref().map(|l| l.dns_names.clone()), Some(vec!["db.internal".into()]));
    let seen = server.wait_for_handshakes(1, Duration::from_secs(10));
    assert_eq!(seen[0].sni.as_deref(), Some("db.internal"));
    // Send/expect inside TLS.
    let mut s = spec(server.port(), verified(&p, "db.internal"));
    s.set_send(b"PING\r\n".to_vec()).unwrap();
    s.set_expect_reply(Pattern::new("^\\+PONG").unwrap()).unwrap();
    let o = run(&s);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.output, b"+PONG\r\n");
    // The wrong name: a TLS failure, as for HTTPS.
    let o = run(&spec(server.port(), verified(&p, "other.internal")));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    assert!(o.message.starts_with("tls: invalid peer certificate"), "{o:?}");
}

/// Midnight UTC on 2030-01-01, 2035-01-01 and 2033-01-01, in seconds.
const Y2030: i64 = 1_893_456_000;
const Y2035: i64 = 2_051_222_400;
const Y2033: i64 = 1_988_150_400;

/// The verified chain's expiry is Go's (blackbox_exporter's
/// `probe_ssl_last_chain_expiry_timestamp_seconds`): the latest over the chains that verify of
/// each one's earliest `notAfter`, the root's included, not the earliest of what the server
/// sent. A server that still sends an older copy of its root (same name and key, expiring
/// first) verifies through the CA file's newer root: that copy's expiry does not count.
#[test]
fn verified_chain_expiry_is_the_latest_chain_that_verifies() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-tcp-tls-{}-chains", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = TestCa::new_expiring("chain test root", (2040, 1, 1));
    let older_root = ca.recertified((2030, 1, 1));
    let mut opts = TlsServerOptions::new(ca.issue_expiring(&["db.internal"], (2035, 1, 1)));
    opts.chain = vec![older_root.cert_pem.clone()];
    let server = StartTlsServer::start(opts, LineMode::Tls);
    let facts = |ca_pem: String, file: &str| {
        let path = dir.join(file);
        std::fs::write(&path, ca_pem).unwrap();
        let tls = TlsOptions {
            verify: TlsVerify::CaFile(path),
            server_name: Some("db.internal".into()),
            ..TlsOptions::default()
        };
        let o = run(&spec(server.port(), tls));
        assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
        let t = o.tls.as_deref().expect("TLS facts").clone();
        (t.earliest_not_after, t.verified_chain_not_after)
    };
    // The CA file has the newer root: leaf (2035) -> root (2040), whatever the server sent
    // beside it. The earliest of what was sent is the older copy's (2030).
    assert_eq!(facts(ca.cert().cert_pem.clone(), "new.pem"), (Some(Y2030), Some(Y2035)));
    // Both copies, as upstream's TestTCPConnectionWithTLSAndVerifiedCertificateChain: the
    // chain through the newer one is the latest.
    let both = format!("{}{}", ca.cert().cert_pem, older_root.cert_pem);
    assert_eq!(facts(both, "both.pem"), (Some(Y2030), Some(Y2035)));
    // Only the older copy trusted: every chain ends there.
    assert_eq!(facts(older_root.cert_pem.clone(), "old.pem"), (Some(Y2030), Some(Y2030)));
    // A root of the CA file that expires before the leaf bounds the chain (Go's chains hold
    // the root), although the server never sent it.
    let short_root = ca.recertified((2033, 1, 1));
    let leaf_only = StartTlsServer::start(
        TlsServerOptions::new(ca.issue_expiring(&["db.internal"], (2035, 1, 1))),
        LineMode::Tls,
    );
    let path = dir.join("short.pem");
    std::fs::write(&path, &short_root.cert_pem).unwrap();
    let tls = TlsOptions {
        verify: TlsVerify::CaFile(path),
        server_name: Some("db.internal".into()),
        ..TlsOptions::default()
    };
    let o = run(&spec(leaf_only.port(), tls));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let t = o.tls.as_deref().expect("TLS facts");
    assert_eq!((t.earliest_not_after, t.verified_chain_not_after), (Some(Y2035), Some(Y2033)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server sending many certificates that chain to its root (40 copies of it, with two
/// copies trusted: 82 paths of two signatures each) cannot make the search for the verified
/// chains run away: webpki's budget (100 signature checks) ends it, the probe succeeds, and
/// the chains found first (the leaf straight to each trusted root) give the expiry.
#[test]
fn verified_chain_search_is_bounded() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-tcp-tls-{}-many", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = TestCa::new_expiring("many copies root", (2040, 1, 1));
    let mut opts = TlsServerOptions::new(ca.issue_expiring(&["db.internal"], (2035, 1, 1)));
    opts.chain =
        (0..40).map(|i| ca.recertified((2030 + i / 12, 1 + (i % 12) as u8, 1)).cert_pem).collect();
    let server = StartTlsServer::start(opts, LineMode::Tls);
    let path = dir.join("ca.pem");
    std::fs::write(
        &path,
        format!("{}{}", ca.recertified((2031, 1, 1)).cert_pem, ca.cert().cert_pem),
    )
    .unwrap();
    let tls = TlsOptions {
        verify: TlsVerify::CaFile(path),
        server_name: Some("db.internal".into()),
        ..TlsOptions::default()
    };
    let o = run(&spec(server.port(), tls));
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    let t = o.tls.as_deref().expect("TLS facts");
    assert_eq!((t.earliest_not_after, t.verified_chain_not_after), (Some(Y2030), Some(Y2035)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn starttls_after_the_exchange() {
    let p = pki("starttls");
    let server = StartTlsServer::start(
        TlsServerOptions::new(p.ca.issue(&["mail.internal"])),
        LineMode::StartTls,
    );
    let mut s = ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap();
    s.set_timeout(Duration::from_secs(5)).unwrap();
    s.set_send(b"STARTTLS\r\n".to_vec()).unwrap();
    s.set_expect_reply(Pattern::new("(?m)^220 go ahead").unwrap()).unwrap();
    s.set_tls(verified(&p, "mail.internal")).unwrap();
    s.set_starttls(true).unwrap();
    let o = run(&s);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert!(o.timings.tls.is_some(), "{:?}", o.timings);
    assert!(o.cert_not_after.is_some());
    assert_eq!(server.wait_for_handshakes(1, Duration::from_secs(10)).len(), 1);
    // The server refuses STARTTLS: the exchange fails before any handshake.
    s.set_send(b"NOTLS\r\n".to_vec()).unwrap();
    let o = run(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body), "{o:?}");
    assert!(o.message.contains("502 no"), "{o:?}");
    assert_eq!(server.handshakes().len(), 1);
    // Verified against another CA: the upgrade fails with reason tls.
    let other = pki("other");
    s.set_send(b"STARTTLS\r\n".to_vec()).unwrap();
    s.set_tls(verified(&other, "mail.internal")).unwrap();
    let o = run(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{o:?}");
    // Without TLS options STARTTLS uses the default ones (no verification).
    let mut plain = ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap();
    plain.set_send(b"STARTTLS\r\n".to_vec()).unwrap();
    plain.set_expect_reply(Pattern::new("220 go").unwrap()).unwrap();
    plain.set_starttls(true).unwrap();
    assert_eq!(run(&plain).result, ProbeResult::Success);
}

#[test]
fn a_plain_server_fails_the_handshake_within_the_deadline() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut s = spec(port, TlsOptions::default());
    s.set_timeout(Duration::from_millis(300)).unwrap();
    let o = run(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert_eq!(o.message, "timeout after 300ms: connecting with TLS did not complete");
    drop(listener);
    let _ = UnixSocket::path("/x"); // TLS over a Unix socket goes the same way (see docs).
}
