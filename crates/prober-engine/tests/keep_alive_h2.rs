//! Keep-alive over HTTP/2 through an engine: HTTPS where the server picks h2 by ALPN, and h2c
//! with prior knowledge, against Go's own net/http server (prober-testkit's Go fixture in
//! `-http` mode, which counts the connections it accepted at `/conns`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use prober_core::{HttpVersion, Outcome, ProbeResult, ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event};
use prober_testkit::grpc::HealthServer;
use prober_testkit::tls::self_signed;

/// The probe's deadline; every wait in these tests is a multiple of it.
const TIMEOUT: Duration = Duration::from_secs(2);
const RUNS: usize = 6;

fn tls_server() -> HealthServer {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-engine-keep-h2-{}", std::process::id()));
    let (cert, key) = self_signed(&["localhost", "127.0.0.1"]).write_files(&dir, "server");
    HealthServer::start(&[
        "-http",
        "-tls-cert",
        cert.to_str().unwrap(),
        "-tls-key",
        key.to_str().unwrap(),
    ])
}

fn spec(url: &str, version: HttpVersion, keep_alive: bool) -> ProbeSpec {
    let mut s = ProbeSpec::http(url).unwrap().with_timeout(TIMEOUT).unwrap();
    s.set_http_version(version).unwrap();
    s.set_keep_alive(keep_alive).unwrap();
    s
}

/// `n` runs of `spec` as a readiness probe every 20 ms.
fn runs(e: &mut Engine, spec: ProbeSpec, n: usize) -> Vec<Outcome> {
    let target = e.add_target();
    let period = Duration::from_millis(20);
    let schedule =
        Schedule { period, success_threshold: 1, failure_threshold: 1, ..Schedule::default() };
    e.set_probe(target, Role::Readiness, spec, schedule).unwrap();
    let mut outcomes = Vec::new();
    let limit = Instant::now() + (TIMEOUT + period) * (2 * n as u32 + 4);
    while outcomes.len() < n {
        assert!(Instant::now() < limit, "only {} runs: {outcomes:?}", outcomes.len());
        e.wait(Some(Duration::from_millis(50))).unwrap();
        while let Some(ev) = e.next_event() {
            if let Event::Run { target: t, outcome, .. } = ev {
                if t == target {
                    outcomes.push(*outcome);
                }
            }
        }
    }
    e.remove_target(target).unwrap();
    outcomes
}

/// The number of connections the server accepted, the one this asks on included.
fn conns(base: &str) -> u64 {
    let mut s = ProbeSpec::http(&format!("{base}/conns")).unwrap();
    s.set_http_version(HttpVersion::Http1).unwrap();
    let o = prober_engine::check(&s);
    String::from_utf8_lossy(&o.output).parse::<u64>().unwrap()
}

/// The connections made since `before` (a [`conns`] reading), less the asking ones.
fn made_since(base: &str, before: u64) -> u64 {
    conns(base) - before - 1
}

fn one_connection_for_every_run(base: &str, version: HttpVersion) {
    let mut e =
        Engine::with_config(EngineConfig { every_run: true, ..EngineConfig::default() }).unwrap();
    let before = conns(base);
    let outcomes = runs(&mut e, spec(&format!("{base}/proto"), version, true), RUNS);
    for o in &outcomes {
        assert_eq!(
            (o.result, o.output.as_slice()),
            (ProbeResult::Success, &b"HTTP/2.0"[..]),
            "{o:?}"
        );
    }
    assert_eq!(made_since(base, before), 1, "one connection for {RUNS} runs");
    assert!(!outcomes[0].timings.reused);
    for o in &outcomes[1..] {
        assert!(o.timings.reused && o.timings.connect.is_none(), "{:?}", o.timings);
    }
    assert!(e.keep_alive_stats().reused >= (RUNS - 1) as u64, "{:?}", e.keep_alive_stats());

    // Without keep-alive, a connection per run.
    let before = conns(base);
    let outcomes = runs(&mut e, spec(&format!("{base}/proto"), version, false), 3);
    assert!(outcomes.iter().all(|o| o.result == ProbeResult::Success), "{outcomes:?}");
    assert!(made_since(base, before) >= 3);

    // A response with Connection: close (a GOAWAY on HTTP/2) ends the connection: every run
    // dials again, and succeeds.
    let before = conns(base);
    let outcomes = runs(&mut e, spec(&format!("{base}/close"), version, true), 3);
    assert!(outcomes.iter().all(|o| o.result == ProbeResult::Success), "{outcomes:?}");
    assert!(made_since(base, before) >= 3);
}

#[test]
fn https_h2_keeps_its_connection() {
    let s = tls_server();
    one_connection_for_every_run(&format!("https://127.0.0.1:{}", s.port()), HttpVersion::Auto);
}

#[test]
fn h2c_keeps_its_connection() {
    let s = HealthServer::start(&["-http"]);
    one_connection_for_every_run(&format!("http://127.0.0.1:{}", s.port()), HttpVersion::H2c);
}
