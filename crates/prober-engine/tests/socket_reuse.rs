//! The engine's socket pool: probes on reused sockets are real, new connections that end with
//! the same RST, report exactly what a fresh socket would, and the pool stays bounded.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::ms;
use prober_core::{ClosePolicy, ProbeResult, ProbeSpec, Reason};
use prober_engine::{DEFAULT_POOL_CAP, Engine, EngineConfig, Event};
use prober_testkit::{TargetServer, closed_port};

/// Descriptors are counted process-wide and the tests of one binary run on threads of one
/// process: every test here holds this lock, so that one's sockets never show in another's count.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn tcp(host: &str, port: u16) -> ProbeSpec {
    ProbeSpec::tcp(host, i64::from(port)).unwrap().with_timeout(ms(2000)).unwrap()
}

/// Submits every spec with at most `conc` in flight; returns the outcomes by tag.
fn run_all(e: &mut Engine, specs: &[ProbeSpec], conc: usize) -> HashMap<u64, prober_core::Outcome> {
    let limit = Instant::now() + Duration::from_secs(60);
    let mut next = 0;
    let mut out = HashMap::new();
    let mut events = Vec::new();
    while out.len() < specs.len() {
        assert!(Instant::now() < limit, "probes did not finish: {} of {}", out.len(), specs.len());
        while next < specs.len() && next - out.len() < conc {
            e.submit(specs[next].clone(), next as u64).unwrap();
            next += 1;
        }
        e.wait(Some(ms(100))).unwrap();
        e.drain(&mut events, usize::MAX);
        for ev in events.drain(..) {
            if let Event::Check { tag, outcome } = ev {
                assert!(out.insert(tag, *outcome).is_none(), "tag {tag} reported twice");
            }
        }
    }
    out
}

#[test]
fn probes_on_reused_sockets_are_new_connections_ended_by_rst() {
    let _serial = serial();
    let server = TargetServer::start();
    let mut e = Engine::new().unwrap();
    let specs: Vec<_> = (0..300).map(|_| tcp("127.0.0.1", server.port())).collect();
    let out = run_all(&mut e, &specs, 16);
    assert!(out.values().all(|o| o.result == ProbeResult::Success), "{out:?}");

    let stats = e.socket_pool_stats();
    // At most 16 sockets were ever open at once, so nearly every probe ran on a kept one.
    assert!(stats.reused >= 300 - 16, "{stats:?}");
    assert!(stats.idle <= 16, "{stats:?}");
    // Each probe reached the server as a connection of its own, and each ended with a reset
    // (the disconnect sends the same RST as a close with SO_LINGER 0).
    assert!(server.wait_for_connections_closed(300, Duration::from_secs(10)));
    assert_eq!(server.connections(), 300);
    assert_eq!(server.reset_connections(), 300);
}

#[test]
fn reused_sockets_report_refusals_and_successes_exactly() {
    let _serial = serial();
    // A socket that was connected to one port and is reused for a closed one must report the
    // refusal, and the other way round: nothing of the previous connection may leak through.
    let server = TargetServer::start();
    let dead = closed_port();
    let mut e = Engine::new().unwrap();
    let specs: Vec<_> = (0..400)
        .map(|i| if i % 3 == 1 { tcp("127.0.0.1", dead) } else { tcp("127.0.0.1", server.port()) })
        .collect();
    let out = run_all(&mut e, &specs, 8);
    for (tag, o) in &out {
        if tag % 3 == 1 {
            assert_eq!(o.result, ProbeResult::Failure, "tag {tag}: {o:?}");
            assert_eq!(o.reason, Reason::Refused, "tag {tag}: {o:?}");
            assert_eq!(
                o.message,
                format!("dial tcp 127.0.0.1:{dead}: connect: connection refused")
            );
        } else {
            assert_eq!(o.result, ProbeResult::Success, "tag {tag}: {o:?}");
        }
    }
    assert!(e.socket_pool_stats().reused > 100, "{:?}", e.socket_pool_stats());
    assert!(server.wait_for_connections_closed(400 - 133, Duration::from_secs(10)));
    assert_eq!(server.connections(), 400 - 133);
}

#[test]
fn address_families_keep_their_own_sockets() {
    let _serial = serial();
    let v4 = TargetServer::start();
    let v6 = match TargetServer::start_v6() {
        Ok(s) => s,
        Err(err) => panic!("IPv6 loopback is needed by this suite and is unavailable: {err}"),
    };
    let mut e = Engine::new().unwrap();
    let specs: Vec<_> = (0..200)
        .map(|i| if i % 2 == 0 { tcp("127.0.0.1", v4.port()) } else { tcp("::1", v6.port()) })
        .collect();
    let out = run_all(&mut e, &specs, 4);
    assert!(out.values().all(|o| o.result == ProbeResult::Success), "{out:?}");
    assert!(e.socket_pool_stats().reused > 150, "{:?}", e.socket_pool_stats());
    assert!(v4.wait_for_connections_closed(100, Duration::from_secs(10)));
    assert!(v6.wait_for_connections_closed(100, Duration::from_secs(10)));
    assert_eq!(v4.connections(), 100);
    assert_eq!(v6.connections(), 100);
}

#[test]
fn http_probes_reuse_sockets_and_read_their_own_responses() {
    let _serial = serial();
    let server = TargetServer::start();
    let mut e = Engine::new().unwrap();
    let mut specs = Vec::new();
    for i in 0..150 {
        // Alternate healthy and failing paths so that a response read on a reused socket
        // belongs to its own request.
        let path = if i % 2 == 0 { "/" } else { "/status/503" };
        specs.push(ProbeSpec::http(&server.url(path)).unwrap().with_timeout(ms(2000)).unwrap());
    }
    let out = run_all(&mut e, &specs, 8);
    for (tag, o) in &out {
        let want = if tag % 2 == 0 { ProbeResult::Success } else { ProbeResult::Failure };
        assert_eq!(o.result, want, "tag {tag}: {o:?}");
        if tag % 2 == 1 {
            assert_eq!(o.http_status, Some(503), "tag {tag}: {o:?}");
        }
    }
    assert!(e.socket_pool_stats().reused > 100, "{:?}", e.socket_pool_stats());
    assert!(server.wait_for_connections_closed(150, Duration::from_secs(10)));
    assert_eq!(server.requests(), 150);
}

#[test]
fn orderly_close_policy_sockets_are_closed_not_kept() {
    let _serial = serial();
    let server = TargetServer::start();
    let mut e = Engine::new().unwrap();
    let specs: Vec<_> = (0..50)
        .map(|_| {
            let mut s = tcp("127.0.0.1", server.port());
            s.set_close_policy(ClosePolicy::Fin);
            s
        })
        .collect();
    let out = run_all(&mut e, &specs, 4);
    assert!(out.values().all(|o| o.result == ProbeResult::Success));
    let stats = e.socket_pool_stats();
    assert_eq!((stats.recycled, stats.reused, stats.idle), (0, 0, 0), "{stats:?}");
    assert!(server.wait_for_connections_closed(50, Duration::from_secs(10)));
    assert_eq!(server.reset_connections(), 0, "FIN closes must not be turned into resets");
}

#[test]
fn the_pool_is_bounded_and_can_be_turned_off() {
    let _serial = serial();
    let server = TargetServer::start();
    let specs: Vec<_> = (0..400).map(|_| tcp("127.0.0.1", server.port())).collect();

    // 200 in flight at once, then all done: at most the cap (64 per family) stays open.
    // (The in-process server holds a descriptor per connection until it sees the end, so
    // descriptors are counted once it has seen them all end.)
    let before = fd_count();
    let mut e = Engine::new().unwrap();
    let with_engine = fd_count();
    let out = run_all(&mut e, &specs, 200);
    assert!(out.values().all(|o| o.result == ProbeResult::Success));
    assert!(server.wait_for_connections_closed(400, Duration::from_secs(10)));
    let stats = e.socket_pool_stats();
    assert_eq!(stats.idle, DEFAULT_POOL_CAP, "{stats:?}");
    assert_eq!(fd_count(), with_engine + DEFAULT_POOL_CAP);
    drop(e);
    assert_eq!(fd_count(), before, "dropping the engine closes the kept sockets");

    // socket_pool 0: every socket is closed after its probe, none kept.
    let config = EngineConfig { socket_pool: 0, ..EngineConfig::default() };
    let mut e = Engine::with_config(config).unwrap();
    let with_engine = fd_count();
    let out = run_all(&mut e, &specs, 16);
    assert!(out.values().all(|o| o.result == ProbeResult::Success));
    assert!(server.wait_for_connections_closed(800, Duration::from_secs(10)));
    let stats = e.socket_pool_stats();
    assert_eq!((stats.recycled, stats.reused, stats.idle), (0, 0, 0), "{stats:?}");
    assert_eq!(fd_count(), with_engine);
}
