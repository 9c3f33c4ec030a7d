//! Keep-alive HTTP(S) probes through an engine, against a real keep-alive server in this file
//! that counts what it sees: connections accepted and closed, requests and the ones that asked
//! it to close. The testkit's target server closes after every response, as the kubelet's
//! probes want, so it cannot serve these.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeResult, ProbeSpec, Role, Schedule, TlsOptions};
use prober_engine::{Engine, EngineConfig, Event, TargetId};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

/// The probe's deadline; every wait in these tests is a multiple of it.
const TIMEOUT: Duration = Duration::from_secs(2);
/// Runs per test.
const RUNS: usize = 8;

#[derive(Debug, Default)]
struct Counts {
    accepted: AtomicU64,
    requests: AtomicU64,
    /// Requests that carried `Connection: close`.
    close_requests: AtomicU64,
    closed: Mutex<u64>,
    closed_cv: Condvar,
}

/// A keep-alive HTTP/1.1 server on 127.0.0.1 (TLS when given a configuration), one thread per
/// connection. Paths:
/// - `/ok`: 200 `ok`, the connection stays open;
/// - `/close`: 200 `ok` with `Connection: close`, then closes;
/// - `/big`: 200 with a 64 KiB body (more than a probe reads), stays open;
/// - `/302`: 302 without `Location`, `/500`: 500; both stay open;
/// - `/chunked`: 200 `ok` in chunked framing, stays open;
/// - `/http10`: an HTTP/1.0 200 `ok` with Content-Length, stays open;
/// - `/drop-idle`: 200 `ok`, then closes at once without saying so (an idle timeout);
/// - `/reset-reused`: 200 `ok` for a connection's first request; a later request on the same
///   connection is answered with RST and no byte.
/// - `/101`: 101 Switching Protocols, after which the connection speaks another protocol: any
///   bytes sent on it are answered with a line that is not HTTP.
struct KeepServer {
    addr: SocketAddr,
    counts: Arc<Counts>,
}

impl KeepServer {
    fn start(tls: Option<Arc<ServerConfig>>) -> KeepServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let counts = Arc::new(Counts::default());
        let c = Arc::clone(&counts);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                c.accepted.fetch_add(1, Ordering::SeqCst);
                let (c, tls) = (Arc::clone(&c), tls.clone());
                std::thread::spawn(move || {
                    let raw = stream.try_clone().unwrap();
                    let _ = match tls {
                        Some(config) => {
                            let conn = ServerConnection::new(config).unwrap();
                            serve(StreamOwned::new(conn, stream), &raw, &c)
                        }
                        None => serve(stream, &raw, &c),
                    };
                    drop(raw);
                    *c.closed.lock().unwrap() += 1;
                    c.closed_cv.notify_all();
                });
            }
        });
        KeepServer { addr, counts }
    }

    fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://{}{path}", self.addr)
    }

    fn accepted(&self) -> u64 {
        self.counts.accepted.load(Ordering::SeqCst)
    }

    fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::SeqCst)
    }

    fn close_requests(&self) -> u64 {
        self.counts.close_requests.load(Ordering::SeqCst)
    }

    /// Waits until `n` connections have ended on the server's side.
    fn wait_closed(&self, n: u64, timeout: Duration) -> bool {
        let guard = self.counts.closed.lock().unwrap();
        let (guard, _) =
            self.counts.closed_cv.wait_timeout_while(guard, timeout, |c| *c < n).unwrap();
        *guard >= n
    }
}

/// Serves requests on one connection until the client closes it or a path ends it.
fn serve(mut io: impl Read + Write, raw: &TcpStream, c: &Counts) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut served = 0;
    loop {
        let Some(head) = read_head(&mut io, &mut buf)? else { return Ok(()) };
        served += 1;
        c.requests.fetch_add(1, Ordering::SeqCst);
        let lower = head.to_ascii_lowercase();
        let asked_close = lower.contains("\r\nconnection: close\r\n");
        if asked_close {
            c.close_requests.fetch_add(1, Ordering::SeqCst);
        }
        let path = head.split(' ').nth(1).unwrap_or("/").to_string();
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        match path.as_str() {
            "/ok" => io.write_all(ok)?,
            "/close" => {
                io.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                )?;
                io.flush()?;
                return Ok(());
            }
            "/big" => {
                io.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 65536\r\n\r\n")?;
                io.write_all(&vec![b'a'; 65536])?;
            }
            "/302" => io.write_all(b"HTTP/1.1 302 Found\r\nContent-Length: 5\r\n\r\nmoved")?,
            "/chunked" => io.write_all(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            )?,
            "/http10" => io.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")?,
            "/500" => {
                io.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")?
            }
            "/drop-idle" => {
                io.write_all(ok)?;
                io.flush()?;
                return Ok(());
            }
            "/reset-reused" if served > 1 => {
                socket2::SockRef::from(raw).set_linger(Some(Duration::ZERO))?;
                return Ok(());
            }
            "/reset-reused" => io.write_all(ok)?,
            "/101" => {
                io.write_all(
                    b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: other\r\n\r\n",
                )?;
                io.flush()?;
                return speak_other_protocol(io);
            }
            _ => io.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")?,
        }
        io.flush()?;
        if asked_close {
            return Ok(());
        }
    }
}

/// After a `101`: answers whatever arrives with a line that is not HTTP, until the client
/// closes.
fn speak_other_protocol(mut io: impl Read + Write) -> io::Result<()> {
    let mut chunk = [0u8; 4096];
    loop {
        match io.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(_) => {
                io.write_all(b"OTHER PROTOCOL\r\n\r\n")?;
                io.flush()?;
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// The next request head, or `None` when the client closed first.
fn read_head(io: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<Option<String>> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end + 4]).into_owned();
            buf.drain(..end + 4);
            return Ok(Some(head));
        }
        match io.read(&mut chunk) {
            Ok(0) => return Ok(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
    }
}

fn tls_config() -> Arc<ServerConfig> {
    let issued = prober_testkit::tls::self_signed(&["localhost", "127.0.0.1"]);
    let certs = vec![CertificateDer::from(issued.cert_der.clone())];
    let key = PrivateKeyDer::from_pem_slice(issued.key_pem.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    Arc::new(config)
}

fn spec(url: &str, keep_alive: bool) -> ProbeSpec {
    let mut s = ProbeSpec::http(url).unwrap().with_timeout(TIMEOUT).unwrap();
    s.set_keep_alive(keep_alive).unwrap();
    if url.starts_with("https") {
        s.set_tls(TlsOptions::default()).unwrap();
    }
    s
}

fn engine(config: EngineConfig) -> Engine {
    Engine::with_config(EngineConfig { every_run: true, ..config }).unwrap()
}

/// Sets `spec` on a new target, every `period`, and collects the outcomes of `n` runs.
fn runs_with(
    e: &mut Engine,
    spec: ProbeSpec,
    period: Duration,
    n: usize,
) -> (TargetId, Vec<Outcome>) {
    let target = e.add_target();
    let schedule =
        Schedule { period, success_threshold: 1, failure_threshold: 1, ..Schedule::default() };
    e.set_probe(target, Role::Readiness, spec, schedule).unwrap();
    let mut outcomes = Vec::new();
    let limit = Instant::now() + (TIMEOUT + period) * (2 * n as u32 + 4);
    while outcomes.len() < n {
        assert!(Instant::now() < limit, "only {} runs: {outcomes:?}", outcomes.len());
        e.wait(Some(Duration::from_millis(50))).unwrap();
        while let Some(ev) = e.next_event() {
            match ev {
                Event::Run { target: t, outcome, .. } if t == target => outcomes.push(*outcome),
                _ => {}
            }
        }
    }
    (target, outcomes)
}

fn runs(e: &mut Engine, spec: ProbeSpec, n: usize) -> (TargetId, Vec<Outcome>) {
    runs_with(e, spec, Duration::from_millis(20), n)
}

fn assert_all(outcomes: &[Outcome], result: ProbeResult) {
    for o in outcomes {
        assert_eq!(o.result, result, "{o:?}");
    }
}

#[test]
fn a_kept_connection_serves_every_run() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/ok"), true), RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    assert_eq!(server.accepted(), 1, "one connection for {} requests", server.requests());
    assert_eq!(server.close_requests(), 0);
    // The first run connected; the others reused its connection and made none.
    assert!(!outcomes[0].timings.reused && outcomes[0].timings.connect.is_some());
    for o in &outcomes[1..] {
        assert!(o.timings.reused && o.timings.connect.is_none(), "{:?}", o.timings);
        assert!(o.timings.first_byte.is_some());
    }
    let stats = e.keep_alive_stats();
    assert!(stats.reused >= (RUNS - 1) as u64, "{stats:?}");
    // Idle now, or in the run that may have started since the last event.
    assert!(stats.idle <= 1 && stats.kept >= (RUNS - 1) as u64, "{stats:?}");
}

/// A kept connection is registered with the engine's poll once, under a token of its own,
/// not again for every run that takes it: `RUNS` runs over one connection, one `epoll_ctl`
/// (the cost per check docs/benchmarks.md measures: a write, a read and a parse).
#[test]
fn a_kept_connection_is_registered_once_for_all_its_runs() {
    for scheme in ["http", "https"] {
        let server = KeepServer::start((scheme == "https").then(tls_config));
        let mut e = engine(EngineConfig::default());
        let (_, outcomes) = runs(&mut e, spec(&server.url(scheme, "/ok"), true), RUNS);
        assert_all(&outcomes, ProbeResult::Success);
        assert_eq!(server.accepted(), 1, "{scheme}: one connection");
        let stats = e.keep_alive_stats();
        assert!(stats.reused >= (RUNS - 1) as u64, "{scheme}: {stats:?}");
        assert_eq!(stats.registrations, 1, "{scheme}: {stats:?}");
    }
}

#[test]
fn off_by_default_every_run_connects_and_asks_to_close() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let s = ProbeSpec::http(&server.url("http", "/ok")).unwrap().with_timeout(TIMEOUT).unwrap();
    let (_, outcomes) = runs(&mut e, s, RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    assert!(server.accepted() >= RUNS as u64, "{} connections", server.accepted());
    assert_eq!(server.close_requests(), server.requests());
    assert_eq!(e.keep_alive_stats().kept, 0);
}

#[test]
fn a_response_that_says_close_is_not_kept() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/close"), true), RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    assert!(server.accepted() >= RUNS as u64, "{} connections", server.accepted());
    assert_eq!(server.close_requests(), 0, "keep-alive requests do not ask to close");
    assert_eq!(e.keep_alive_stats().kept, 0);
}

#[test]
fn a_body_not_read_to_its_end_drops_the_connection() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/big"), true), RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    assert!(outcomes.iter().all(|o| o.truncated && !o.timings.reused));
    assert!(server.accepted() >= RUNS as u64, "{} connections", server.accepted());
    assert_eq!(e.keep_alive_stats().kept, 0);
}

#[test]
fn a_connection_the_server_closed_while_idle_is_not_reused() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/drop-idle"), true), RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    assert!(server.accepted() >= RUNS as u64, "{} connections", server.accepted());
    let stats = e.keep_alive_stats();
    // Found closed before reuse, or (if the FIN came after the check) retried.
    assert!(stats.stale + stats.retried >= (RUNS - 1) as u64, "{stats:?}");
}

#[test]
fn a_reused_connection_reset_before_any_byte_is_retried_within_the_deadline() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/reset-reused"), true), RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    for o in &outcomes {
        assert!(o.timings.total < TIMEOUT, "{o:?}");
        // The run ended on the fresh connection.
        assert!(!o.timings.reused && o.timings.connect.is_some(), "{:?}", o.timings);
    }
    let stats = e.keep_alive_stats();
    assert!(stats.retried >= (RUNS - 1) as u64, "{stats:?}");
}

#[test]
fn removing_the_target_closes_its_kept_connection() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (target, outcomes) = runs(&mut e, spec(&server.url("http", "/ok"), true), 3);
    assert_all(&outcomes, ProbeResult::Success);
    assert_eq!(server.accepted(), 1);
    // A run in flight is cancelled (its connection closed); an idle one goes with the target.
    e.remove_target(target).unwrap();
    assert!(server.wait_closed(1, TIMEOUT * 5), "the server never saw the connection close");
    assert_eq!(e.keep_alive_stats().idle, 0);
}

#[test]
fn connections_idle_past_the_limit_are_closed() {
    let server = KeepServer::start(None);
    let limit = Duration::from_millis(10);
    let mut e = engine(EngineConfig { keep_alive_idle: limit, ..EngineConfig::default() });
    // A period well past the limit: every kept connection expires before the next run.
    let (_, outcomes) = runs_with(&mut e, spec(&server.url("http", "/ok"), true), limit * 20, 4);
    assert_all(&outcomes, ProbeResult::Success);
    assert!(outcomes.iter().all(|o| !o.timings.reused));
    assert!(server.accepted() >= 4);
    let stats = e.keep_alive_stats();
    assert!(stats.expired >= 3, "{stats:?}");
}

#[test]
fn an_engine_with_nothing_else_to_do_still_closes_idle_connections() {
    let server = KeepServer::start(None);
    let limit = Duration::from_millis(50);
    let mut e = engine(EngineConfig { keep_alive_idle: limit, ..EngineConfig::default() });
    // A one-shot check: no target, no period, no timer left once it is done.
    e.submit(spec(&server.url("http", "/ok"), true), 1).unwrap();
    let deadline = Instant::now() + TIMEOUT * 4;
    let outcome = loop {
        assert!(Instant::now() < deadline, "no check event");
        e.wait(Some(TIMEOUT)).unwrap();
        if let Some(Event::Check { outcome, .. }) = e.next_event() {
            break outcome;
        }
    };
    assert_eq!(outcome.result, ProbeResult::Success, "{outcome:?}");
    assert_eq!(e.keep_alive_stats().idle, 1);
    // The host sleeps as long as the engine says: it must name the connection's limit, not
    // only its timers (here the finished check's deadline, a TIMEOUT away, is all there is).
    let wait = e.timeout().expect("a kept connection is a reason to wake up");
    assert!(wait <= limit * 2, "the engine asks to sleep {wait:?}, past the idle limit {limit:?}");
    while e.keep_alive_stats().idle > 0 {
        assert!(Instant::now() < deadline + limit * 40, "still kept: {:?}", e.keep_alive_stats());
        e.wait(None).unwrap();
    }
    assert!(server.wait_closed(1, TIMEOUT * 4), "the server did not see the connection close");
}

#[test]
fn https_keeps_the_tls_connection() {
    let server = KeepServer::start(Some(tls_config()));
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("https", "/ok"), true), RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    assert_eq!(server.accepted(), 1, "one TLS connection for {} requests", server.requests());
    assert!(outcomes[0].timings.tls.is_some());
    for o in &outcomes[1..] {
        assert!(o.timings.reused && o.timings.tls.is_none(), "{:?}", o.timings);
        // The certificate's expiry is still reported from the handshake that made it.
        assert_eq!(o.cert_not_after, outcomes[0].cert_not_after);
        assert!(o.cert_not_after.is_some());
        // So are the handshake's version and certificates.
        assert_eq!(o.tls, outcomes[0].tls);
        assert!(o.tls.as_ref().is_some_and(|t| t.version.is_some()));
    }
}

#[test]
fn https_reset_on_reuse_is_retried() {
    let server = KeepServer::start(Some(tls_config()));
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("https", "/reset-reused"), true), 4);
    assert_all(&outcomes, ProbeResult::Success);
    assert!(e.keep_alive_stats().retried >= 3, "{:?}", e.keep_alive_stats());
}

#[test]
fn verdicts_on_a_kept_connection_are_the_kubelets() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (first, outcomes) = runs(&mut e, spec(&server.url("http", "/302"), true), 3);
    assert_all(&outcomes, ProbeResult::Warning);
    assert_eq!(outcomes[2].message, "Probe terminated redirects, Response body: moved");
    assert!(outcomes[1].timings.reused && outcomes[2].timings.reused, "{outcomes:?}");
    assert_eq!(server.accepted(), 1);
    // One target at a time: two running at once may each need a connection.
    e.remove_target(first).unwrap();
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/500"), true), 3);
    assert_all(&outcomes, ProbeResult::Failure);
    assert_eq!(outcomes[2].message, "HTTP probe failed with statuscode: 500");
    assert!(outcomes[1].timings.reused && outcomes[2].timings.reused, "{outcomes:?}");
    assert_eq!(server.accepted(), 2);
}

#[test]
fn a_one_shot_check_keeps_nothing() {
    let server = KeepServer::start(None);
    let s = spec(&server.url("http", "/ok"), true);
    for _ in 0..3 {
        let o = prober_engine::check(&s);
        assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    }
    // No engine holds the connection: each check closed its own.
    assert_eq!(server.accepted(), 3);
    assert!(server.wait_closed(3, TIMEOUT * 5));
}

#[test]
fn a_chunked_body_read_to_its_end_keeps_the_connection() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/chunked"), true), RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    assert!(outcomes.iter().all(|o| o.output == b"ok"));
    assert_eq!(server.accepted(), 1);
}

#[test]
fn an_http_1_0_response_is_not_kept() {
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/http10"), true), RUNS);
    assert_all(&outcomes, ProbeResult::Success);
    assert!(server.accepted() >= RUNS as u64, "{} connections", server.accepted());
    assert_eq!(e.keep_alive_stats().kept, 0);
}

#[test]
fn a_connection_switched_to_another_protocol_is_not_kept() {
    // After a 101 the connection no longer speaks HTTP/1.1: a later run must not send its
    // request on it (Go's client never reuses a switched connection either).
    let server = KeepServer::start(None);
    let mut e = engine(EngineConfig::default());
    let (_, outcomes) = runs(&mut e, spec(&server.url("http", "/101"), true), 4);
    for o in &outcomes {
        assert_eq!(o.http_status, Some(101), "{o:?}");
        assert_eq!(o.message, outcomes[0].message, "{outcomes:?}");
        assert!(!o.timings.reused, "{o:?}");
    }
    assert!(server.accepted() >= 4, "{} connections", server.accepted());
    assert_eq!(e.keep_alive_stats().kept, 0);
}
