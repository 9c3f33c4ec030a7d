//! Hostile gRPC servers: HTTP/2 peers that never stop sending. A probe must end by its
//! deadline however fast the server writes, and its memory must not grow with what the
//! server sends (the client's answers to PINGs and SETTINGS it never reads included); a flood
//! of small frames must not hold the engine's thread from the other probes on it; and endless
//! informational (1xx) heads are refused.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason};
use prober_grpc::GrpcProbe;
use prober_io::run_to_completion;
use prober_testkit::bounds::{ends_by, gives_up_after};

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.push(kind);
    f.push(flags);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A server that sends its SETTINGS, then `unit` again and again as fast as it can, never
/// reading, until the client goes away or `stop` is set.
fn flooding_server(unit: Vec<u8>) -> (u16, Arc<AtomicBool>, JoinHandle<u64>) {
    flooding_server_after(Vec::new(), unit)
}

/// As [`flooding_server`], with `prefix` sent once after the SETTINGS.
fn flooding_server_after(
    prefix: Vec<u8>,
    unit: Vec<u8>,
) -> (u16, Arc<AtomicBool>, JoinHandle<u64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let h = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut preface = [0u8; 24];
        let _ = c.read_exact(&mut preface);
        let mut first = frame(0x4, 0, 0, &[]);
        first.extend_from_slice(&prefix);
        if c.write_all(&first).is_err() {
            return 0;
        }
        let mut batch = Vec::new();
        while batch.len() < 64 * 1024 {
            batch.extend_from_slice(&unit);
        }
        let mut sent = first.len() as u64;
        while !s.load(Ordering::Relaxed) && c.write_all(&batch).is_ok() {
            sent += batch.len() as u64;
        }
        sent
    });
    (port, stop, h)
}

fn probe(port: u16, timeout: Duration) -> (Outcome, Duration) {
    let spec =
        ProbeSpec::grpc("127.0.0.1", port.into(), "").unwrap().with_timeout(timeout).unwrap();
    let ProbeKind::Grpc(g) = &spec.kind else { unreachable!() };
    let mut m = GrpcProbe::new(g, spec.timeout);
    let t = Instant::now();
    // A probe that never yields would never return: watch it from another thread, which waits
    // for the probe's end (the channel) and aborts the process if it does not come.
    let (done, ended) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let limit = gives_up_after(timeout);
        if ended.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            eprintln!("probe still running {limit:?} after its start (deadline {timeout:?})");
            std::process::abort();
        }
    });
    let o = run_to_completion(&mut m);
    let took = t.elapsed();
    drop(done);
    watchdog.join().unwrap();
    (o, took)
}

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let l = s.lines().find(|l| l.starts_with(field)).unwrap();
    l.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The tests measure this process's peak RSS: one at a time.
static LOCK: Mutex<()> = Mutex::new(());

fn assert_ends_by_deadline(unit: Vec<u8>, what: &str) {
    let timeout = Duration::from_secs(1);
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (port, stop, server) = flooding_server(unit);
    // Reset the peak RSS (VmHWM), so that memory grown and freed during the run is seen.
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    let before = status_kib("VmHWM:");
    let (o, took) = probe(port, timeout);
    let grew = status_kib("VmHWM:").saturating_sub(before);
    stop.store(true, Ordering::Relaxed);
    let sent = server.join().unwrap();
    println!("{what}: {took:?}, server sent {} MiB, peak RSS +{grew} KiB: {o:?}", sent >> 20);
    assert!(took < ends_by(timeout), "{what}: ended after {took:?}");
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{what}: {o:?}");
    assert_eq!(o.message, "timeout: health rpc did not complete within 1s");
    assert!(grew < 16 * 1024, "{what}: peak RSS grew by {grew} KiB");
}

/// Frames of an unknown type are ignored (RFC 9113 section 5.5): an endless stream of them
/// must not keep the probe reading past its deadline.
#[test]
fn endless_ignored_frames() {
    assert_ends_by_deadline(frame(0xfe, 0, 0, &[0u8; 1024]), "unknown frames");
    assert_ends_by_deadline(frame(0x2, 0, 3, &[0, 0, 0, 1, 16]), "PRIORITY frames");
}

/// A PING flood from a server that never reads: every PING wants an ACK that can never be
/// sent; the ACKs queued must not grow without bound.
#[test]
fn ping_flood_without_reading() {
    assert_ends_by_deadline(frame(0x6, 0, 0, b"12345678"), "PING flood");
    assert_ends_by_deadline(frame(0x4, 0, 0, &[]), "SETTINGS flood");
}

/// HEADERS on stream 1 with `:status: 100` (literal without indexing, name from the static
/// table): an informational head, 14 bytes on the wire.
fn interim_head() -> Vec<u8> {
    frame(0x1, 0x4, 1, &[0x08, 3, b'1', b'0', b'0'])
}

/// A server that sends informational heads without end is refused after a few of them, as
/// Go's clients do, instead of being read until the deadline.
#[test]
fn endless_informational_heads() {
    let timeout = Duration::from_secs(5);
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (port, stop, server) = flooding_server(interim_head());
    let (o, took) = probe(port, timeout);
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
    println!("1xx flood: {took:?}: {o:?}");
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Protocol), "{o:?}");
    assert_eq!(
        o.message,
        "error: health rpc probe failed: rpc error: code = Internal \
         desc = http2: too many 1xx informational responses"
    );
    // It ends on the sixth head, not at the deadline (generous: only a hang fails this).
    assert!(took < timeout / 2, "took {took:?}");
}

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
    use prober_core::{Role, Schedule};
    use prober_engine::{Engine, EngineConfig, Event};

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
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
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
