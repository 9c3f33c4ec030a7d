//! Dropping a group of engine threads (`spawn_sharded`) ends every thread: alone in its test
//! process, so that the process's thread list is this test's.

mod common;

use std::time::{Duration, Instant};

use common::*;
use prober_core::{ProbeResult, Role};
use prober_engine::{EngineConfig, EngineError, Event};
use prober_testkit::TargetServer;

/// The names of the process's threads (`/proc/self/task/*/comm`).
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .collect()
}

fn engine_threads() -> usize {
    thread_names().iter().filter(|n| n.starts_with("prober-engine")).count()
}

/// The threads that are not the target server's (whose connection threads come and go, and
/// are named after its accepting thread from their start).
fn not_the_server_s() -> usize {
    thread_names().iter().filter(|n| !n.starts_with("prober-target")).count()
}

#[test]
fn dropping_the_group_stops_both_engine_threads() {
    let server = TargetServer::start();
    // A connection accepted: the server's accepting thread runs, so it bears its own name.
    let first = std::net::TcpStream::connect(server.addr()).unwrap();
    assert!(server.wait_for_connections(1, Duration::from_secs(30)));
    drop(first);
    let before = not_the_server_s();
    assert_eq!(engine_threads(), 0);
    let et = prober_engine::spawn_sharded(EngineConfig::default(), 2).unwrap();
    let h = et.handle().clone();
    // A new thread names itself once it runs; until then it has its parent's name.
    assert_eq!(not_the_server_s(), before + 2, "{:?}", thread_names());

    // Both engines at work: a target and a one-shot check each.
    for _ in 0..2 {
        let t = h.add_target().unwrap();
        h.set_probe(t, Role::Liveness, http(&server.url("/health")), schedule(50, 1, 1)).unwrap();
    }
    h.submit(http(&server.url("/never-answer")).with_timeout(ms(50_000)).unwrap(), 1).unwrap();
    h.submit(http(&server.url("/never-answer")).with_timeout(ms(50_000)).unwrap(), 2).unwrap();
    let limit = Instant::now() + Duration::from_secs(30);
    let mut successes = 0;
    while successes < 2 {
        assert!(Instant::now() < limit, "the targets never succeeded");
        if let Ok(Event::State { result: ProbeResult::Success, .. }) =
            et.events().recv_timeout(Duration::from_millis(100))
        {
            successes += 1;
        }
    }
    assert!(server.wait_for_requests(4, Duration::from_secs(30)));
    assert_eq!(engine_threads(), 2, "{:?}", thread_names());

    drop(et);
    // The threads were joined: gone from the process.
    assert_eq!(engine_threads(), 0, "{:?}", thread_names());
    assert_eq!(not_the_server_s(), before, "{:?}", thread_names());
    // A handle kept past the group reaches no engine.
    let refused = h.submit(http(&server.url("/ok")), 3);
    assert!(
        matches!(&refused, Err(EngineError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe),
        "{refused:?}"
    );
}
