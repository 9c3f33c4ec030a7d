//! TLS session resumption (opt-in, `TlsOptions::resumption`) against a real rustls server that
//! records whether each handshake resumed: a periodic target with the option resumes from its
//! second run on, over TLS 1.3 (tickets) and TLS 1.2 (session IDs), and reports the certificate
//! facts of its first, full handshake; without it (the default) no handshake resumes; a CA file
//! renewed under the same path is another configuration, whose first run makes a full handshake.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use prober_core::{Outcome, ProbeResult, ProbeSpec, Role, TlsInfo, TlsOptions, TlsVerify};
use prober_engine::{Engine, Event, TargetId};
use prober_testkit::tls::{Handshake, TestCa, TlsServerOptions, TlsTargetServer, TlsVersions};

/// Long enough that no run starts by itself after the first: the test triggers each.
const PERIOD_MS: u64 = 600_000;

fn dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-engine-tls-resume-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn server(ca: &TestCa, versions: TlsVersions) -> TlsTargetServer {
    TlsTargetServer::start(TlsServerOptions {
        versions,
        ..TlsServerOptions::new(ca.issue(&["127.0.0.1"]))
    })
}

/// `GET /ok` of `server`, verified against the CA file `ca`, resuming or not.
fn spec(server: &TlsTargetServer, ca: &Path, resumption: bool) -> ProbeSpec {
    let tls = TlsOptions {
        verify: TlsVerify::CaFile(ca.to_path_buf()),
        resumption,
        ..TlsOptions::default()
    };
    http(&server.url("/ok")).with_tls(tls).unwrap()
}

/// The outcomes of `target`'s runs so far.
fn outcomes(events: &[Event], target: TargetId) -> Vec<&Outcome> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Run { target: t, outcome, .. } if *t == target => Some(outcome.as_ref()),
            _ => None,
        })
        .collect()
}

/// Runs `e` until `target` has had `n` runs in all (counted in `events`), each after the
/// previous one ended: the first run of a probe just set starts by itself (`fresh`), the
/// period is long and the test triggers every other. Waits until `server` has seen as many
/// handshakes; returns whether each resumed.
fn run_to(
    e: &mut Engine,
    events: &mut Vec<Event>,
    target: TargetId,
    server: &TlsTargetServer,
    n: usize,
    mut fresh: bool,
) -> Vec<bool> {
    loop {
        let done = runs(events, target, Role::Readiness);
        if done >= n {
            break;
        }
        if !fresh {
            e.trigger(target, Role::Readiness).unwrap();
        }
        fresh = false;
        run_until(e, events, |ev| runs(ev, target, Role::Readiness) > done);
    }
    let seen: Vec<Handshake> = server.wait_for_handshakes(n, Duration::from_secs(10));
    assert!(seen.iter().all(|h| h.error.is_none()), "{seen:#?}");
    seen.iter().map(|h| h.resumed).collect()
}

/// A server of `ca`'s certificate speaking `versions`, and an engine with one periodic target
/// probing it, verified against `ca` (its file in a directory named by `tag`), with resumption
/// on or off.
fn periodic_target(
    ca: &TestCa,
    versions: TlsVersions,
    tag: &str,
    resumption: bool,
) -> (TlsTargetServer, Engine, TargetId) {
    let server = server(ca, versions);
    let ca_file = dir(tag).join("ca.pem");
    std::fs::write(&ca_file, &ca.cert().cert_pem).unwrap();
    let mut e = engine();
    let target = e.add_target();
    e.set_probe(
        target,
        Role::Readiness,
        spec(&server, &ca_file, resumption),
        schedule(PERIOD_MS, 1, 1),
    )
    .unwrap();
    (server, e, target)
}

/// With the option, every run after the first resumes, and reports what the first saw.
#[test]
fn a_periodic_target_resumes_over_tls_1_3_and_1_2() {
    for (versions, name) in
        [(TlsVersions::Tls13Only, "TLSv1_3"), (TlsVersions::Tls12Only, "TLSv1_2")]
    {
        let ca = TestCa::new("resume-ca");
        let (server, mut e, target) = periodic_target(&ca, versions, name, true);
        let mut events = Vec::new();
        let resumed = run_to(&mut e, &mut events, target, &server, 3, true);
        assert_eq!(resumed, [false, true, true], "{name}: {:#?}", server.handshakes());
        assert!(server.handshakes().iter().all(|h| h.version.as_deref() == Some(name)));
        let runs = outcomes(&events, target);
        let first = runs[0];
        assert_eq!(first.result, ProbeResult::Success, "{first:?}");
        let facts = first.tls.as_deref().expect("the full handshake's facts");
        assert!(facts.verified_chain_not_after.is_some() && facts.leaf.is_some(), "{facts:?}");
        assert!(!facts.resumed);
        for later in &runs[1..3] {
            assert_eq!(later.result, ProbeResult::Success, "{name}: {later:?}");
            let resumed = later.tls.as_deref().expect("a resumed run's facts");
            assert!(resumed.resumed, "{name}: {resumed:?}");
            let same = TlsInfo { resumed: false, ..resumed.clone() };
            assert_eq!(&same, facts, "{name}: a resumed run's facts are the first run's");
            assert_eq!(later.cert_not_after, first.cert_not_after, "{name}");
        }
    }
}

/// Without the option (the kubelet's behaviour), no handshake resumes, though the server
/// offers tickets and session IDs every time.
#[test]
fn without_the_option_no_handshake_resumes() {
    for versions in [TlsVersions::Tls13Only, TlsVersions::Tls12Only] {
        let ca = TestCa::new("full-ca");
        let (server, mut e, target) =
            periodic_target(&ca, versions, &format!("off-{versions:?}"), false);
        let mut events = Vec::new();
        assert_eq!(run_to(&mut e, &mut events, target, &server, 3, true), [false, false, false]);
        let runs = outcomes(&events, target);
        assert!(runs.iter().all(|o| o.result == ProbeResult::Success));
        assert!(runs.iter().all(|o| o.tls.as_deref().is_some_and(|t| !t.resumed)));
    }
}

/// A target whose CA option changes does not resume the sessions of the old one: neither when
/// its spec names another CA file, nor when the CA file is renewed under the same path (another
/// version of the files is another configuration).
#[test]
fn a_changed_ca_does_not_resume() {
    let ca = TestCa::new("changing-ca");
    let other = TestCa::new("other-ca");
    let server = server(&ca, TlsVersions::Both);
    let d = dir("changed");
    let (ca_file, bundle) = (d.join("ca.pem"), d.join("bundle.pem"));
    std::fs::write(&ca_file, &ca.cert().cert_pem).unwrap();
    std::fs::write(&bundle, format!("{}{}", other.cert().cert_pem, ca.cert().cert_pem)).unwrap();
    let mut e = engine();
    let target = e.add_target();
    e.set_probe(target, Role::Readiness, spec(&server, &ca_file, true), schedule(PERIOD_MS, 1, 1))
        .unwrap();
    let mut events = Vec::new();
    assert_eq!(run_to(&mut e, &mut events, target, &server, 2, true), [false, true]);

    // Another CA file: the first run after the change makes a full handshake.
    e.set_probe(target, Role::Readiness, spec(&server, &bundle, true), schedule(PERIOD_MS, 1, 1))
        .unwrap();
    let resumed = run_to(&mut e, &mut events, target, &server, 4, true);
    assert_eq!(&resumed[2..4], [false, true], "{:#?}", server.handshakes());

    // The same path, renewed (another CA's certificate added): a full handshake again.
    let third = TestCa::new("third-ca");
    let renewed =
        format!("{}{}{}", ca.cert().cert_pem, other.cert().cert_pem, third.cert().cert_pem);
    std::fs::write(&bundle, renewed).unwrap();
    let resumed = run_to(&mut e, &mut events, target, &server, 6, false);
    assert_eq!(&resumed[4..6], [false, true], "{:#?}", server.handshakes());
    assert!(outcomes(&events, target).iter().all(|o| o.result == ProbeResult::Success));
}

/// A TCP probe with TLS resumes too (its prepared spec keeps the sessions): over TLS 1.2, whose
/// session ID is the handshake's own. (Over TLS 1.3 a TCP probe without an exchange closes
/// once its handshake is done, before the server's tickets arrive: nothing to resume.)
#[test]
fn a_tcp_probe_with_tls_resumes_over_tls_1_2() {
    let ca = TestCa::new("tcp-ca");
    let server = server(&ca, TlsVersions::Tls12Only);
    let ca_file = dir("tcp").join("ca.pem");
    std::fs::write(&ca_file, &ca.cert().cert_pem).unwrap();
    let tls = TlsOptions {
        verify: TlsVerify::CaFile(ca_file),
        resumption: true,
        ..TlsOptions::default()
    };
    let mut tcp = ProbeSpec::tcp("127.0.0.1", server.port().into())
        .unwrap()
        .with_timeout(ms(2000))
        .unwrap()
        .with_tls(tls)
        .unwrap();
    // An orderly close: the client's last flight of a resumed TLS 1.2 handshake reaches the
    // server (a reset could overtake it, and the server would record a failed handshake).
    tcp.set_close_policy(prober_core::ClosePolicy::Fin);
    let mut e = engine();
    let target = e.add_target();
    e.set_probe(target, Role::Readiness, tcp, schedule(PERIOD_MS, 1, 1)).unwrap();
    let mut events = Vec::new();
    assert_eq!(run_to(&mut e, &mut events, target, &server, 3, true), [false, true, true]);
    let runs = outcomes(&events, target);
    assert!(runs.iter().all(|o| o.result == ProbeResult::Success), "{runs:#?}");
    let first = runs[0].tls.as_deref().expect("facts");
    assert!(first.verified_chain_not_after.is_some());
    for later in &runs[1..3] {
        let later = later.tls.as_deref().expect("facts");
        assert_eq!(&TlsInfo { resumed: false, ..later.clone() }, first);
    }
}
