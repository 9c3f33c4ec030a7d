//! A gRPC peer flooding small HTTP/2 frames (PING, empty DATA, WINDOW_UPDATE, 1xx heads on
//! another stream) beside a healthy target on one engine: the flood must not hold the engine's
//! thread from the other probes. (The probe-level hostile servers are in
//! `prober-grpc/tests/hostile.rs`; this one needs the engine, a crate above prober-grpc.)

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeResult, ProbeSpec, Reason, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event};
use prober_testkit::bounds::gives_up_after;
use prober_testkit::h2::{flooding_server_after, frame};

/// What [`beside_healthy`] saw.
struct Beside {
    /// The hostile probe's outcome.
    hostile: Outcome,
    /// Successful runs of the healthy target while the hostile probe was in flight.
    healthy_runs: usize,
    /// The longest `Engine::step` call, in wall-clock time.
    longest_turn: Duration,
    /// The most CPU time (of the engine's thread) one `Engine::step` call took.
    longest_turn_cpu: Duration,
    turns: u64,
}

/// One engine runs a one-shot gRPC probe of the hostile server on `port` (deadline
/// `timeout`) beside a healthy HTTP target probed every 10 ms, stepping (never blocking) until
/// the hostile probe's outcome arrives.
fn beside_healthy(port: u16, timeout: Duration) -> Beside {
    let healthy = prober_testkit::TargetServer::start();
    let mut e =
        Engine::with_config(EngineConfig { every_run: true, ..EngineConfig::default() }).unwrap();
    let target = e.add_target();
    let http_timeout = Duration::from_secs(1);
    let http = ProbeSpec::http(&healthy.url("/bytes?status=200&body=ok"))
        .unwrap()
        .with_timeout(http_timeout)
        .unwrap();
    let every_10ms = Schedule {
        period: Duration::from_millis(10),
        success_threshold: 1,
        failure_threshold: 1,
        ..Schedule::default()
    };
    e.set_probe(target, Role::Readiness, http, every_10ms).unwrap();
    // The healthy target runs first, so that the flood starts against a working engine.
    let mut events = Vec::new();
    let warm = Instant::now() + gives_up_after(http_timeout);
    while !events.iter().any(|ev| matches!(ev, Event::Run { .. })) {
        assert!(Instant::now() < warm, "the healthy target never ran: {events:?}");
        e.wait(Some(Duration::from_millis(50))).unwrap();
        e.drain(&mut events, usize::MAX);
    }
    let grpc =
        ProbeSpec::grpc("127.0.0.1", port.into(), "").unwrap().with_timeout(timeout).unwrap();
    e.submit(grpc, 1).unwrap();
    let (mut healthy_runs, mut turns) = (0, 0u64);
    let (mut longest_turn, mut longest_turn_cpu) = (Duration::ZERO, Duration::ZERO);
    let limit = Instant::now() + gives_up_after(timeout);
    loop {
        assert!(Instant::now() < limit, "the hostile probe never ended");
        let (t, cpu) = (Instant::now(), thread_cpu_time());
        e.step().unwrap();
        longest_turn = longest_turn.max(t.elapsed());
        longest_turn_cpu = longest_turn_cpu.max(thread_cpu_time() - cpu);
        turns += 1;
        events.clear();
        e.drain(&mut events, usize::MAX);
        for ev in events.drain(..) {
            match ev {
                Event::Run { outcome, .. } => {
                    assert_eq!(outcome.result, ProbeResult::Success, "healthy target: {outcome:?}");
                    healthy_runs += 1;
                }
                Event::Check { tag: 1, outcome } => {
                    return Beside {
                        hostile: *outcome,
                        healthy_runs,
                        longest_turn,
                        longest_turn_cpu,
                        turns,
                    };
                }
                _ => {}
            }
        }
    }
}

/// The CPU time this thread has used.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID needs nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Floods of small frames (PINGs, empty DATA after the response head) beside a healthy
/// target on one engine: the healthy target keeps being probed on schedule while the flood
/// lasts, and the hostile probe still ends at its deadline.
#[test]
fn small_frame_floods_do_not_starve_other_probes() {
    let timeout = Duration::from_secs(2);
    let head = frame(0x1, 0x4, 1, &[0x88]); // :status 200 (static index 8)
    let floods = [
        ("PING", Vec::new(), frame(0x6, 0, 0, b"12345678")),
        ("empty DATA", head.clone(), frame(0x0, 0, 1, &[])),
        ("WINDOW_UPDATE", head.clone(), frame(0x8, 0, 0, &[0, 0, 0, 1])),
        ("1xx HEADERS on stream 3", Vec::new(), frame(0x1, 0x4, 3, &[0x08, 3, b'1', b'0', b'0'])),
    ];
    for (what, prefix, unit) in floods {
        let (port, stop, server) = flooding_server_after(prefix, unit);
        let b = beside_healthy(port, timeout);
        stop.store(true, Ordering::Relaxed);
        let sent = server.join().unwrap();
        println!(
            "{what}: server sent {} MiB; {} healthy runs during the flood; longest engine turn \
             {:?} (CPU {:?}) of {} turns",
            sent >> 20,
            b.healthy_runs,
            b.longest_turn,
            b.longest_turn_cpu,
            b.turns
        );
        assert_eq!(
            (b.hostile.result, b.hostile.reason),
            (ProbeResult::Failure, Reason::Timeout),
            "{what}: {:?}",
            b.hostile
        );
        // Unhindered, the healthy target runs about timeout / 10 ms = 200 times meanwhile; a
        // quarter of that leaves room for a loaded machine, while an engine thread held for
        // tens of milliseconds per turn falls far below it.
        let expected = (timeout.as_millis() / 10) as usize;
        assert!(
            b.healthy_runs >= expected / 4,
            "{what}: only {} healthy runs in {timeout:?} (longest turn {:?})",
            b.healthy_runs,
            b.longest_turn
        );
    }
}
