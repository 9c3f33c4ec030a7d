//! DNS over TLS (RFC 7858) against a real server: NSD serving `probe.test.` on a TLS port
//! with a certificate of the testkit's CA (ci/dns-server.sh installs NSD).

mod support;

use std::path::PathBuf;
use std::time::Duration;

use prober_core::{IpFamily, ProbeResult, Reason, TlsOptions, TlsVerify};
use prober_dns::{DnsSpec, Transport};
use prober_testkit::tls::TestCa;
use support::{Nsd, run};

const TIMEOUT: Duration = Duration::from_secs(5);

/// A directory of this test's own for the CA files.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("prober-dns-tls-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// TLS options trusting `ca` only.
fn trusting(ca: &TestCa, tag: &str) -> TlsOptions {
    let (ca_file, _) = ca.cert().write_files(&scratch(tag), "ca");
    TlsOptions { verify: TlsVerify::CaFile(ca_file), ..TlsOptions::default() }
}

fn soa_over_tls(mut spec: DnsSpec, tls: TlsOptions) -> DnsSpec {
    spec = spec.with_type_name("SOA").unwrap();
    spec.transport = Transport::Tls;
    spec.tls = Some(tls);
    spec
}

#[test]
fn a_good_answer_over_tls_verified_by_the_servers_name() {
    let ca = TestCa::new("DoT test CA");
    let nsd = Nsd::start_tls(&ca.issue(&["ns1.probe.test", "localhost"]));
    let tls_addr = nsd.tls_addr.expect("a TLS port");

    // The name to verify from the TLS options; the server given by address.
    let mut tls = trusting(&ca, "good");
    tls.server_name = Some("ns1.probe.test".into());
    let spec = soa_over_tls(DnsSpec::new(tls_addr, "probe.test").unwrap(), tls.clone());
    let (o, facts) = run(spec, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert!(facts.query_succeeded && facts.answer_rrs == 1, "{facts:?}");
    assert_eq!(facts.serial, Some(2026112901));
    assert_eq!(o.peer, Some(tls_addr));
    assert!(o.cert_not_after.is_some() && o.tls.is_some(), "the handshake's facts: {o:?}");

    // The name to verify from the target, when the options name none.
    tls.server_name = None;
    let mut spec =
        soa_over_tls(DnsSpec::with_host("localhost", tls_addr.port(), "probe.test").unwrap(), tls);
    spec.ip_family = IpFamily::V4;
    let (o, facts) = run(spec, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!(facts.serial, Some(2026112901));
}

#[test]
fn a_certificate_of_another_ca_or_name_is_refused() {
    let ca = TestCa::new("DoT test CA");
    let nsd = Nsd::start_tls(&ca.issue(&["ns1.probe.test"]));
    let tls_addr = nsd.tls_addr.expect("a TLS port");

    let other = TestCa::new("another CA");
    let mut tls = trusting(&other, "other-ca");
    tls.server_name = Some("ns1.probe.test".into());
    let spec = soa_over_tls(DnsSpec::new(tls_addr, "probe.test").unwrap(), tls);
    let (o, facts) = run(spec, TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{}", o.message);
    assert!(o.message.contains("certificate"), "{}", o.message);
    assert!(!facts.query_succeeded);

    // The right CA, the wrong name (the address, which the certificate does not name).
    let spec = soa_over_tls(DnsSpec::new(tls_addr, "probe.test").unwrap(), trusting(&ca, "name"));
    let (o, _) = run(spec, TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{}", o.message);
    assert!(o.message.contains("certificate"), "{}", o.message);

    // No TLS options at all: the system's trust store, which does not hold the test CA.
    let mut spec = DnsSpec::new(tls_addr, "probe.test").unwrap();
    spec.transport = Transport::Tls;
    let (o, _) = run(spec, TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Tls), "{}", o.message);
}

#[test]
fn a_server_that_does_not_speak_tls_times_out_in_the_handshake() {
    let ca = TestCa::new("DoT test CA");
    let nsd = Nsd::start();
    // NSD's plain TCP port reads the ClientHello as the length of a DNS message and waits for
    // the rest: nothing comes back before the deadline.
    let timeout = Duration::from_millis(500);
    let mut tls = trusting(&ca, "plain");
    tls.server_name = Some("ns1.probe.test".into());
    let spec = soa_over_tls(DnsSpec::new(nsd.addr, "probe.test").unwrap(), tls);
    let (o, facts) = run(spec, timeout);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{}", o.message);
    assert!(o.message.starts_with("dial tcp-tls 127.0.0.1:"), "{}", o.message);
    assert!(!facts.query_succeeded);
}

#[test]
fn a_ca_file_that_cannot_be_read_is_unknown_and_a_closed_connection_a_failure() {
    // The CA file is missing: this node's matter, not the server's.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let missing = scratch("missing").join("no-such-ca.pem");
    let tls = TlsOptions { verify: TlsVerify::CaFile(missing), ..TlsOptions::default() };
    let spec = soa_over_tls(DnsSpec::new(addr, "probe.test").unwrap(), tls);
    let (o, _) = run(spec, TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Unknown, Reason::Tls), "{}", o.message);
    assert!(o.message.starts_with("TLS setup failed"), "{}", o.message);

    // A server that accepts and closes at once: the handshake fails, never a hang.
    let closer = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("the probe connects");
        drop(stream);
    });
    let mut spec = DnsSpec::new(addr, "probe.test").unwrap();
    spec.transport = Transport::Tls;
    let (o, facts) = run(spec, TIMEOUT);
    closer.join().unwrap();
    assert_eq!(o.result, ProbeResult::Failure, "{}", o.message);
    assert_eq!(o.reason, Reason::Tls, "{}", o.message);
    assert!(!facts.query_succeeded);
}
