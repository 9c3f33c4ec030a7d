//! Fault isolation: a probe whose own code panics ends that run as Unknown (reason `internal`)
//! and releases what it held, while the engine and every other target go on. The panicking probe
//! is the `test-panic` feature's (exec argv[0] "prober-test-panic"), which runs a real command
//! up to the panic. Alone in its test binary because it counts this process's descriptors.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Reason, Role};
use prober_engine::Event;
use prober_testkit::TargetServer;

/// The tests count this process's descriptors, so they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn panicking(at: &str, script: &str) -> ProbeSpec {
    ProbeSpec::exec(&["prober-test-panic", at, "/bin/sh", "-c", script])
        .unwrap()
        .with_timeout(Duration::from_secs(60))
        .unwrap()
}

fn is_internal(o: &prober_core::Outcome) -> bool {
    o.result == ProbeResult::Unknown
        && o.reason == Reason::Internal
        && o.message.contains("the probe panicked: deliberate test panic")
}

#[test]
fn a_panicking_probe_ends_its_run_and_nothing_else() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("prober-isolation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("pid");
    let server = TargetServer::start();
    let mut e = engine();
    let before = fd_count();

    let healthy = e.add_target();
    let tcp = ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap();
    e.set_probe(healthy, Role::Readiness, tcp, schedule(20, 1, 1)).unwrap();

    // The command writes its pid, then output: the output makes its pipe readable, and the
    // probe panics in `ready` while the child is alive and its pipe and pidfd are registered.
    let hostile = e.add_target();
    let script =
        format!("echo $$$$ > {0}.tmp; mv {0}.tmp {0}; echo hi; exec sleep 30", pidfile.display());
    e.set_probe(hostile, Role::Liveness, panicking("ready", &script), schedule(60_000, 1, 1))
        .unwrap();

    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| {
        ev.iter().any(|x| matches!(x, Event::Run { target, outcome, .. } if *target == hostile && is_internal(outcome)))
    });
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();

    // The healthy target keeps its results coming after the panic.
    let seen = runs(&ev, healthy, Role::Readiness);
    run_until(&mut e, &mut ev, |ev| runs(ev, healthy, Role::Readiness) >= seen + 5);
    assert!(ev.iter().all(|x| match x {
        Event::Run { target, outcome, .. } if *target == healthy =>
            outcome.result == ProbeResult::Success,
        _ => true,
    }));

    // The panicked run's child was killed and reaped: its pid disappears entirely.
    let limit = Instant::now() + Duration::from_secs(30);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < limit, "child {pid} of the panicked run still exists");
        e.wait(Some(ms(10))).unwrap();
        e.drain(&mut ev, usize::MAX);
    }

    // The engine still takes new work, one-shot included.
    e.submit(ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap(), 7).unwrap();
    run_until(&mut e, &mut ev, |ev| ev.iter().any(|x| matches!(x, Event::Check { tag: 7, .. })));
    assert!(ev.iter().any(
        |x| matches!(x, Event::Check { tag: 7, outcome } if outcome.result == ProbeResult::Success)
    ));

    // Nothing the panicked runs held is left once the targets are gone (an Unknown is retried
    // at once, so several runs panicked). The healthy target's finished TCP runs leave their
    // sockets in the engine's pool for reuse: those are counted apart.
    e.remove_target(hostile).unwrap();
    e.remove_target(healthy).unwrap();
    run_for(&mut e, &mut ev, ms(20));
    assert_eq!(e.in_flight(), 0);
    let kept = e.socket_pool_stats().idle;
    assert_eq!(fd_count(), before + kept, "descriptors leaked");
    drop(e);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_shot_and_blocking_checks_that_panic_are_unknown_internal() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut e = engine();
    e.submit(panicking("start", "exec sleep 30"), 1).unwrap();
    e.submit(panicking("timer", "exec sleep 30").with_timeout(ms(50)).unwrap(), 2).unwrap();
    let mut ev = Vec::new();
    run_until(&mut e, &mut ev, |ev| ev.len() == 2);
    for x in &ev {
        let Event::Check { outcome, .. } = x else { panic!("{x:?}") };
        assert!(is_internal(outcome), "{outcome:?}");
    }
    assert_eq!(e.in_flight(), 0);

    let o = prober_engine::check(&panicking("start", "exit 0"));
    assert!(is_internal(&o), "{o:?}");
}
