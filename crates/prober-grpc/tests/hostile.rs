//! Hostile gRPC servers: HTTP/2 peers that never stop sending. A probe must end by its
//! deadline however fast the server writes, and its memory must not grow with what the
//! server sends (the client's answers to PINGs and SETTINGS it never reads included); and
//! endless informational (1xx) heads are refused. (That a flood of small frames does not hold
//! an engine's thread from the other probes on it is an engine test:
//! `prober-engine/tests/grpc_floods.rs`.)

use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason};
use prober_grpc::GrpcProbe;
use prober_io::run_to_completion;
use prober_testkit::bounds::{ends_by, gives_up_after};
use prober_testkit::h2::{flooding_server, frame};

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
