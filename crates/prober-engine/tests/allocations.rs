//! Heap allocations per periodic run in steady state: what a node agent with thousands of
//! workers pays in the allocator every period, counted (not timed) on the engine's thread, for
//! TCP, HTTP and HTTP with kept connections (`prober_testkit::allocations` is the harness).
//!
//! Alone in its test binary: the counting allocator is this binary's global allocator. It
//! counts per thread, and only on a thread that asked for it, so the target server's threads,
//! the harness and the other tests do not show in the figures.

use std::time::Duration;

use prober_core::{ProbeResult, ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event, KeepStats};
use prober_testkit::TargetServer;
use prober_testkit::allocations::{CountingAllocator, NOT_PER_RUN, SteadyState, count_allocations};
use prober_testkit::keep_alive::KeepAliveServer;

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Runs `spec` as a readiness probe of `targets` targets every 5 ms: a warm-up, then 600 ms
/// counted. The probe timeout is a minute: every run puts its deadline in the timing wheel,
/// and that far ahead they share one slot of the wheel's fourth level instead of filling a new
/// one every 268 ms. Returns (runs, allocations) of the counted part; runs are connections, read
/// from the socket pool's counter (every run of these specs takes a pooled socket).
fn steady_state(spec: &ProbeSpec, targets: usize) -> (u64, u64) {
    let mut steady = engine_steady_state(spec, targets);
    let runs_before = steady.subject().socket_pool_stats().reused;
    let allocations = steady.count(Duration::from_millis(600));
    let runs = steady.subject().socket_pool_stats().reused - runs_before;
    assert!(runs >= 100, "only {runs} runs in 600 ms at a 5 ms period");
    (runs, allocations)
}

/// What [`kept_steady_state`] counted.
struct KeptRuns {
    /// Runs that reused a kept connection.
    runs: u64,
    allocations: u64,
    before: KeepStats,
    after: KeepStats,
}

/// Runs `spec` with kept connections as [`steady_state`] does: a warm-up, then 600 ms counted.
/// Runs are the reuses of a kept connection; none of them went stale or was retried.
fn kept_steady_state(spec: &ProbeSpec, targets: usize) -> KeptRuns {
    let mut spec = spec.clone();
    spec.set_keep_alive(true).unwrap();
    let mut steady = engine_steady_state(&spec, targets);
    let before = steady.subject().keep_alive_stats();
    let allocations = steady.count(Duration::from_millis(600));
    let after = steady.subject().keep_alive_stats();
    let runs = after.reused - before.reused;
    assert!(runs >= 100, "only {runs} reused runs in 600 ms at a 5 ms period: {after:?}");
    assert_eq!(after.stale + after.retried, before.stale + before.retried);
    KeptRuns { runs, allocations, before, after }
}

/// An engine probing `spec` on `targets` targets every 5 ms, warmed up.
fn engine_steady_state(
    spec: &ProbeSpec,
    targets: usize,
) -> SteadyState<Engine, Event, impl FnMut(&mut Engine, &mut Vec<Event>)> {
    let mut e =
        Engine::with_config(EngineConfig { every_run: false, ..EngineConfig::default() }).unwrap();
    let schedule =
        Schedule { period: Duration::from_millis(5), jitter: true, ..Schedule::default() };
    for _ in 0..targets {
        let t = e.add_target();
        e.set_probe(t, Role::Readiness, spec.clone(), schedule).unwrap();
    }
    let mut steady = SteadyState::new(e, |e: &mut Engine, events: &mut Vec<Event>| {
        e.wait(Some(Duration::from_millis(1))).unwrap();
        e.drain(events, usize::MAX);
    });
    steady.warm_up(targets, |ev| matches!(ev, Event::State { result: ProbeResult::Success, .. }));
    steady
}

#[test]
fn tcp_runs_allocate_nothing_in_steady_state() {
    let server = TargetServer::start();
    let tcp = ProbeSpec::tcp("127.0.0.1", i64::from(server.port()))
        .unwrap()
        .with_timeout(Duration::from_secs(60))
        .unwrap();
    let (runs, allocations) = steady_state(&tcp, 8);
    let per_run = allocations as f64 / runs as f64;
    println!("tcp: {runs} runs, {allocations} allocations ({per_run:.2} per run)");
    // An IP literal's address is kept inline by the connector and the socket comes from the
    // pool: a run copies nothing and makes no outcome text.
    assert!(per_run < NOT_PER_RUN, "{allocations} allocations in {runs} TCP runs");
}

#[test]
fn http_runs_allocate_only_their_machine_and_buffers() {
    let server = TargetServer::start();
    let http =
        ProbeSpec::http(&server.url("/ok")).unwrap().with_timeout(Duration::from_secs(60)).unwrap();
    let (runs, allocations) = steady_state(&http, 8);
    let per_run = allocations as f64 / runs as f64;
    println!("http: {runs} runs, {allocations} allocations ({per_run:.2} per run)");
    // Three per run: the boxed machine, the buffer the response head is read into, and the
    // body kept as the outcome's output. The URL, the headers and the request bytes come from
    // the worker's prepared spec (21 allocations per run before it).
    assert!(per_run < 3.0 + NOT_PER_RUN, "{allocations} allocations in {runs} HTTP runs");
}

/// Reusing a kept connection costs no more than making one: the origin's key is allocated once,
/// when a connection is first kept, and travels with it after that.
#[test]
fn keep_alive_runs_allocate_no_more_than_the_kubelets() {
    let server = KeepAliveServer::start();
    let spec = ProbeSpec::http(&format!("http://127.0.0.1:{}/", server.port()))
        .unwrap()
        .with_timeout(Duration::from_secs(60))
        .unwrap();
    let targets = 8;
    let KeptRuns { runs, allocations, before, after } = kept_steady_state(&spec, targets);
    // Every run of the counted part reused a connection and kept it again (up to the runs in
    // flight at either end of the window): none was made, none went stale.
    let kept = after.kept - before.kept;
    assert!(kept.abs_diff(runs) <= targets as u64, "{runs} reused, {kept} kept: {after:?}");
    let per_run = allocations as f64 / runs as f64;
    println!("http keep-alive: {runs} runs, {allocations} allocations ({per_run:.2} per run)");
    // As the kubelet's path: the boxed machine, the head buffer, the body kept as the output.
    assert!(per_run < 3.0 + NOT_PER_RUN, "{allocations} allocations in {runs} keep-alive runs");
}

/// A gRPC check on a kept connection sends the request encoded for the connection's last
/// check (issue 37): the HEADERS block and the message are not rebuilt from strings per check
/// (about 20 allocations: the header list, its names and values, the `grpc-timeout` text, the
/// message and the block), and keeps the response's decoded fields without copying them.
#[test]
fn grpc_keep_alive_runs_reuse_their_encoded_request() {
    let server = prober_testkit::grpc::HealthServer::start(&[]);
    let spec = ProbeSpec::grpc("127.0.0.1", i64::from(server.port()), "")
        .unwrap()
        .with_timeout(Duration::from_secs(60))
        .unwrap();
    let KeptRuns { runs, allocations, .. } = kept_steady_state(&spec, 8);
    let per_run = allocations as f64 / runs as f64;
    println!("grpc keep-alive: {runs} runs, {allocations} allocations ({per_run:.2} per run)");
    // 46.13 per run before the request was kept encoded, 26.15 after, 18.96 once the
    // response's decoded fields became strings without a copy. What is left per check: the
    // boxed machine and what it copies of the spec (authority, user agent, host), the
    // response's field list and strings, the DATA, the outcome's output.
    assert!(
        per_run < 19.0 + NOT_PER_RUN,
        "{allocations} allocations in {runs} gRPC runs: {per_run:.2} per run"
    );
}

/// A run that keeps the final response's header fields and its cookies (every HTTP module of
/// `prober serve` does, for `Last-Modified` and blackbox_exporter's cookie jar) reads the
/// head's fields once, for both: they were read twice, each time through a list of the head's
/// lines, about 13,000 instructions of every `/probe` (issue 37).
#[test]
fn http_runs_keeping_headers_and_cookies_read_the_fields_once() {
    let server = TargetServer::start();
    let mut http =
        ProbeSpec::http(&server.url("/ok")).unwrap().with_timeout(Duration::from_secs(60)).unwrap();
    http.set_keep_headers(true).unwrap();
    http.set_cookies(true).unwrap();
    // What reading this server's fields once costs, counted on the head it answers.
    let head = response_head(server.port(), "/ok");
    let (fields, once) = count_allocations(|| prober_http::response::header_fields(&head));
    assert!(!fields.is_empty(), "no header fields in {:?}", String::from_utf8_lossy(&head));
    let (runs, allocations) = steady_state(&http, 8);
    let per_run = allocations as f64 / runs as f64;
    println!(
        "http keeping headers and cookies: {runs} runs, {allocations} allocations \
         ({per_run:.2} per run; reading the fields once: {once})"
    );
    // The three of every HTTP run, the run's cookie jar, and the fields read once (kept as
    // the outcome's headers). No Set-Cookie here: the jar copies nothing.
    let bound = 3.0 + 1.0 + once as f64 + NOT_PER_RUN;
    assert!(per_run < bound, "{allocations} allocations in {runs} runs: {per_run:.2} >= {bound}");
}

/// The head of the answer to `GET path` on 127.0.0.1:`port`, up to its blank line.
fn response_head(port: u16, path: &str) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).unwrap();
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete head") + 4;
    answer.truncate(end);
    answer
}

/// One-shot checks of one keep-alive spec, submitted again and again (a host polling a target
/// with `Engine::submit`), allocate what a worker's runs do and no more: the engine keeps the
/// plan (URL, headers, request bytes) of the spec it prepared for the first check. Each check
/// prepared its spec again before: 12 allocations per check.
#[test]
fn one_shot_checks_of_one_spec_reuse_its_prepared_plan() {
    let server = KeepAliveServer::start();
    let mut spec = ProbeSpec::http(&format!("http://127.0.0.1:{}/", server.port()))
        .unwrap()
        .with_timeout(Duration::from_secs(60))
        .unwrap();
    spec.set_keep_alive(true).unwrap();
    let mut e = Engine::new().unwrap();
    let mut events = Vec::with_capacity(16);
    // One check at a time, each waited for (a bounded number of waits; every wait ends at an
    // event or after a second): the kept connection is reused by every check after the first.
    let mut checks = |e: &mut Engine, specs: Vec<ProbeSpec>| -> u64 {
        let mut ok = 0;
        for (tag, spec) in specs.into_iter().enumerate() {
            e.submit(spec, tag as u64).unwrap();
            let mut done = false;
            for _ in 0..60 {
                e.wait(Some(Duration::from_secs(1))).unwrap();
                e.drain(&mut events, usize::MAX);
                for ev in events.drain(..) {
                    if let Event::Check { outcome, .. } = ev {
                        done = true;
                        ok += u64::from(outcome.result == ProbeResult::Success);
                    }
                }
                if done {
                    break;
                }
            }
            assert!(done, "check {tag} did not end within its timeout");
        }
        ok
    };
    // Warm-up: the plan, the kept connection, the engine's scratch lists.
    assert_eq!(checks(&mut e, vec![spec.clone(); 20]), 20);
    let n = 200;
    // The copies are the caller's, made before counting: `submit` takes its spec by value.
    let specs = vec![spec.clone(); n];
    let before = e.keep_alive_stats();
    let (ok, allocations) = count_allocations(|| checks(&mut e, specs));
    let stats = e.keep_alive_stats();
    assert_eq!(ok, n as u64, "{stats:?}");
    assert_eq!(stats.reused - before.reused, n as u64, "every check reuses the connection");
    let per_check = allocations as f64 / n as f64;
    println!("one-shot keep-alive: {n} checks, {allocations} allocations ({per_check:.2} each)");
    // A worker's three (the boxed machine, the head buffer, the body kept as the output) and
    // the boxed outcome of the check's event.
    assert!(per_check < 4.0 + NOT_PER_RUN, "{allocations} allocations in {n} one-shot checks");
}
