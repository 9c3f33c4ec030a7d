//! gRPC keep-alive (`ConnectOptions::keep_alive` of a gRPC spec) through an engine, against grpc-go's health server
//! (`prober_testkit::grpc`), which counts the connections it accepts and, on command, sends
//! GOAWAY on its connections, stops answering Checks, or resets its connections; and against
//! a hand-made h2c server that answers once and then never again.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeResult, ProbeSpec, Reason, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event, TargetId};
use prober_testkit::grpc::HealthServer;

const TIMEOUT: Duration = Duration::from_millis(1500);
const PERIOD: Duration = Duration::from_millis(20);

fn spec(port: u16, keep_alive: bool, timeout: Duration) -> ProbeSpec {
    let mut s =
        ProbeSpec::grpc("127.0.0.1", port.into(), "").unwrap().with_timeout(timeout).unwrap();
    s.set_keep_alive(keep_alive).unwrap();
    s
}

fn engine(config: EngineConfig) -> Engine {
    Engine::with_config(EngineConfig { every_run: true, ..config }).unwrap()
}

/// A readiness probe of `spec` every `period` on a new target.
fn target(e: &mut Engine, spec: ProbeSpec, period: Duration) -> TargetId {
    let target = e.add_target();
    let schedule =
        Schedule { period, success_threshold: 1, failure_threshold: 1, ..Schedule::default() };
    e.set_probe(target, Role::Readiness, spec, schedule).unwrap();
    target
}

/// The outcomes of the next `n` runs of `target`.
fn next_runs(e: &mut Engine, target: TargetId, timeout: Duration, n: usize) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    let limit = Instant::now() + (timeout + PERIOD) * (2 * n as u32 + 4);
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
    outcomes
}

fn assert_success(outcomes: &[Outcome]) {
    for o in outcomes {
        assert_eq!((o.result, &o.output[..]), (ProbeResult::Success, &b"service healthy"[..]));
    }
}

#[test]
fn runs_share_one_connection_one_stream_each() {
    let mut server = HealthServer::start(&[]);
    let mut e = engine(EngineConfig::default());
    let t = target(&mut e, spec(server.port(), true, TIMEOUT), PERIOD);
    let outcomes = next_runs(&mut e, t, TIMEOUT, 10);
    assert_success(&outcomes);
    assert_eq!(server.connections(), 1, "one connection for 10 checks");
    assert!(!outcomes[0].timings.reused && outcomes[0].timings.connect.is_some());
    for o in &outcomes[1..] {
        assert!(o.timings.reused && o.timings.connect.is_none(), "{:?}", o.timings);
        assert!(o.timings.first_byte.is_some() && o.http_status == Some(200), "{o:?}");
    }
    let stats = e.keep_alive_stats();
    assert!(stats.reused >= 9 && stats.retried == 0, "{stats:?}");
}

/// The kept connection is registered with the engine's poll under a token of its own when
/// first kept, not again for each check that takes it (the `epoll_ctl` per check
/// docs/benchmarks.md measured). Only a connection readable while idle is registered again
/// when taken; grpc-go sends nothing after a response's trailers (the PING it sends for each
/// request's DATA is queued before the answer), so ten checks make one registration.
#[test]
fn a_kept_connection_is_not_registered_again_per_check() {
    let mut server = HealthServer::start(&[]);
    let mut e = engine(EngineConfig::default());
    let t = target(&mut e, spec(server.port(), true, TIMEOUT), PERIOD);
    assert_success(&next_runs(&mut e, t, TIMEOUT, 10));
    assert_eq!(server.connections(), 1);
    let stats = e.keep_alive_stats();
    assert!(stats.reused >= 9, "{stats:?}");
    assert_eq!(stats.registrations, 1, "{stats:?}");
}

#[test]
fn off_by_default_every_check_dials() {
    let mut server = HealthServer::start(&[]);
    let mut e = engine(EngineConfig::default());
    let t = target(&mut e, spec(server.port(), false, TIMEOUT), PERIOD);
    let outcomes = next_runs(&mut e, t, TIMEOUT, 5);
    assert_success(&outcomes);
    assert!(outcomes.iter().all(|o| !o.timings.reused));
    assert_eq!(server.connections(), 5);
    assert_eq!(e.keep_alive_stats().kept, 0);
}

/// Runs until the server has accepted `want` connections (at most `max` runs), every one a
/// success; returns how many runs that took.
fn runs_until_connections(
    e: &mut Engine,
    server: &mut HealthServer,
    t: TargetId,
    want: u64,
    max: usize,
) -> usize {
    for run in 1..=max {
        assert_success(&next_runs(e, t, TIMEOUT, 1));
        let n = server.connections();
        assert!(n <= want, "{n} connections, expected at most {want}");
        if n == want {
            return run;
        }
    }
    panic!("still not {want} connections after {max} runs");
}

/// A graceful stop (GOAWAY) of the kept connection: no run fails, and the next runs dial
/// once and keep that connection.
#[test]
fn goaway_drops_the_connection_and_no_run_fails() {
    let mut server = HealthServer::start(&[]);
    let mut e = engine(EngineConfig::default());
    let t = target(&mut e, spec(server.port(), true, TIMEOUT), PERIOD);
    assert_success(&next_runs(&mut e, t, TIMEOUT, 3));
    assert_eq!(server.connections(), 1);
    assert_eq!(server.command("goaway"), "ok");
    runs_until_connections(&mut e, &mut server, t, 2, 20);
    assert_success(&next_runs(&mut e, t, TIMEOUT, 5));
    assert_eq!(server.connections(), 2, "the new connection is kept in turn");
}

/// The server resets its connections: the next run dials again, without failing.
#[test]
fn a_reset_connection_is_dialed_again() {
    let mut server = HealthServer::start(&[]);
    let mut e = engine(EngineConfig::default());
    let t = target(&mut e, spec(server.port(), true, TIMEOUT), PERIOD);
    assert_success(&next_runs(&mut e, t, TIMEOUT, 3));
    assert_eq!(server.command("reset"), "1");
    let outcomes = next_runs(&mut e, t, TIMEOUT, 4);
    assert_success(&outcomes);
    assert_eq!(server.connections(), 2);
    // The reset was found when the kept connection was taken, and the run dialed again.
    assert_eq!(e.keep_alive_stats().retried, 1, "{:?}", e.keep_alive_stats());
}

/// A server that keeps the connection but stops answering streams: the run fails within its
/// timeout with the kubelet's message (the engine goes on), and the next run succeeds.
#[test]
fn a_server_that_stops_answering_fails_the_run_in_time() {
    let timeout = Duration::from_millis(300);
    let mut server = HealthServer::start(&[]);
    let mut e = engine(EngineConfig::default());
    let t = target(&mut e, spec(server.port(), true, timeout), PERIOD);
    assert_success(&next_runs(&mut e, t, timeout, 2));
    assert_eq!(server.command("hang"), "ok");
    let hung = next_runs(&mut e, t, timeout, 1).remove(0);
    assert_eq!(hung.result, ProbeResult::Failure, "{hung:?}");
    assert_eq!(hung.reason, Reason::Timeout, "{hung:?}");
    assert_eq!(hung.message, "timeout: health rpc did not complete within 300ms");
    // Its deadline, with a generous bound for a loaded machine.
    assert!(hung.timings.total >= timeout && hung.timings.total < timeout * 4, "{hung:?}");
    assert_eq!(server.command("answer"), "ok");
    let outcomes = next_runs(&mut e, t, timeout, 3);
    assert_success(&outcomes);
    // Either our deadline passed first (the connection is dropped: the next run dials), or
    // grpc-go's own deadline for the stream (our grpc-timeout) reset it with CANCEL just
    // before (the connection answered, and is kept): both end the run as the kubelet does.
    let want = if outcomes[0].timings.reused { 1 } else { 2 };
    assert_eq!(server.connections(), want, "{:?}", outcomes[0]);
}

/// A connection idle past the engine's limit is closed; the next run dials.
#[test]
fn an_idle_connection_past_the_limit_is_not_reused() {
    let mut server = HealthServer::start(&[]);
    let config =
        EngineConfig { keep_alive_idle: Duration::from_millis(1), ..EngineConfig::default() };
    let mut e = engine(config);
    let t = target(&mut e, spec(server.port(), true, TIMEOUT), Duration::from_millis(100));
    let outcomes = next_runs(&mut e, t, TIMEOUT, 3);
    assert_success(&outcomes);
    assert!(outcomes.iter().all(|o| !o.timings.reused), "{outcomes:?}");
    assert_eq!(server.connections(), 3);
    assert!(e.keep_alive_stats().expired >= 2, "{:?}", e.keep_alive_stats());
}

/// A hand-made h2c server that answers the first health check it receives (SERVING) and none
/// after it, on any connection, without ever resetting a stream (grpc-go would reset it at its
/// own deadline); it counts the connections it accepts.
fn answers_once_server() -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicU64::new(0));
    let answered = Arc::new(AtomicU64::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            count.fetch_add(1, Ordering::SeqCst);
            let answered = answered.clone();
            std::thread::spawn(move || serve_h2c(conn, &answered));
        }
    });
    (port, accepted)
}

fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    v.extend_from_slice(&[kind, flags]);
    v.extend_from_slice(&stream.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// HPACK literals without indexing (names and values shorter than 127 bytes).
fn literals(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut b = Vec::new();
    for (n, v) in fields {
        b.push(0);
        b.push(n.len() as u8);
        b.extend_from_slice(n.as_bytes());
        b.push(v.len() as u8);
        b.extend_from_slice(v.as_bytes());
    }
    b
}

fn serve_h2c(mut conn: TcpStream, answered: &AtomicU64) {
    const PREFACE: usize = 24;
    if conn.write_all(&h2_frame(0x4, 0, 0, &[])).is_err() {
        return;
    }
    let (mut buf, mut chunk) = (Vec::new(), [0u8; 4096]);
    loop {
        let n = match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut pos = PREFACE;
        while buf.len() >= pos + 9 {
            let len = usize::from(buf[pos]) << 16
                | usize::from(buf[pos + 1]) << 8
                | usize::from(buf[pos + 2]);
            if buf.len() < pos + 9 + len {
                break;
            }
            let (kind, flags) = (buf[pos + 3], buf[pos + 4]);
            let stream =
                u32::from_be_bytes([buf[pos + 5], buf[pos + 6], buf[pos + 7], buf[pos + 8]]);
            pos += 9 + len;
            // A request ends with END_STREAM on its DATA (or HEADERS).
            let ends = (kind == 0x0 || kind == 0x1) && flags & 0x1 != 0 && stream % 2 == 1;
            if ends && answered.fetch_add(1, Ordering::SeqCst) == 0 {
                let head = literals(&[(":status", "200"), ("content-type", "application/grpc")]);
                let mut out = h2_frame(0x1, 0x4, stream, &head);
                out.extend(h2_frame(0x0, 0, stream, &[0, 0, 0, 0, 2, 0x08, 0x01]));
                out.extend(h2_frame(0x1, 0x5, stream, &literals(&[("grpc-status", "0")])));
                if conn.write_all(&out).is_err() {
                    return;
                }
            }
        }
        buf.drain(PREFACE..pos);
    }
}

/// A kept connection whose server stops answering (and never resets the stream): the run
/// fails at its own deadline with the kubelet's message, the connection is dropped, and the
/// next run dials a new one.
#[test]
fn a_run_that_times_out_drops_its_kept_connection() {
    let timeout = Duration::from_millis(300);
    let (port, accepted) = answers_once_server();
    let mut e = engine(EngineConfig::default());
    let t = target(&mut e, spec(port, true, timeout), PERIOD);
    assert_success(&next_runs(&mut e, t, timeout, 1));
    let runs = next_runs(&mut e, t, timeout, 2);
    let (hung, next) = (&runs[0], &runs[1]);
    assert!(hung.timings.reused, "{hung:?}");
    assert_eq!(hung.message, "timeout: health rpc did not complete within 300ms");
    assert!(hung.timings.total >= timeout && hung.timings.total < timeout * 4, "{hung:?}");
    assert!(!next.timings.reused, "the timed-out connection was kept: {next:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    assert_eq!(e.keep_alive_stats().reused, 1, "{:?}", e.keep_alive_stats());
}
