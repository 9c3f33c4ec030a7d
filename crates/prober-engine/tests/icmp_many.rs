//! Many ICMP targets on one engine (issue 36): the runs share one echo socket per family and
//! socket kind instead of opening one each, every reply reaches the run it answers, and ten
//! thousand distinct loopback addresses (127.x.y.z all answer on Linux) are pinged from one
//! engine thread with a handful of descriptors. Raw sockets need root (CI runs as root),
//! unprivileged ones a `net.ipv4.ping_group_range` that admits us; a host that allows neither
//! fails these tests with the message saying so.
//!
//! The tests count this process's descriptors, so they take turns (one lock).

mod common;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;
use prober_core::{IcmpSpec, Outcome, ProbeResult, ProbeSpec};
use prober_engine::{Engine, Event};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count()
}

/// `packets` echoes to `host`, `interval` apart.
fn ping(host: &str, packets: u32, interval: Duration) -> ProbeSpec {
    let spec = IcmpSpec { packets, interval, ..IcmpSpec::new(host) };
    ProbeSpec::icmp_with(spec).unwrap().with_timeout(ms(5000)).unwrap()
}

/// Drives `e` for one turn, moving the checks that completed into `done`.
fn turn(e: &mut Engine, done: &mut HashMap<u64, Box<Outcome>>, events: &mut Vec<Event>) {
    e.wait(Some(ms(50))).unwrap();
    e.drain(events, usize::MAX);
    for ev in events.drain(..) {
        if let Event::Check { tag, outcome } = ev {
            assert!(done.insert(tag, outcome).is_none(), "check {tag} completed twice");
        }
    }
}

/// Every outcome a Success with each of its `packets` answered.
fn all_answered(done: &HashMap<u64, Box<Outcome>>, packets: u32) {
    for (tag, o) in done {
        assert_eq!(o.result, ProbeResult::Success, "{tag}: {o:?}");
        let facts = o.icmp.as_deref().expect("an ICMP run's facts");
        assert_eq!((facts.stats.sent, facts.stats.received), (packets, packets), "{tag}");
    }
}

#[test]
fn runs_in_flight_share_one_socket_per_family() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut e = engine();
    let before = descriptors();
    // Two echoes half a second apart: every run is still in flight, waiting to send its
    // second request, once all are submitted (`submit` starts the run and sends the first).
    let n = 300;
    for tag in 0..n {
        let host = match tag % 3 {
            0 => "::1".to_string(),
            _ => format!("127.0.{}.{}", tag / 200, tag % 200 + 1),
        };
        e.submit(ping(&host, 2, ms(500)), tag).unwrap();
    }
    let held = descriptors().saturating_sub(before);
    let (mut done, mut events) = (HashMap::new(), Vec::new());
    let limit = Instant::now() + Duration::from_secs(60);
    while done.len() < n as usize {
        assert!(Instant::now() < limit, "{} of {n} checks completed", done.len());
        turn(&mut e, &mut done, &mut events);
    }
    all_answered(&done, 2);
    // One socket for IPv4 and one for IPv6, nothing per run.
    assert!(held <= 2, "{n} runs in flight held {held} more descriptors");
}

#[test]
fn ten_thousand_loopback_addresses_from_one_engine() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut e = engine();
    let before = descriptors();
    let n: u64 = 10_000;
    // Up to this many in flight, as fping paces its targets: a burst of ten thousand echoes
    // at once would overflow any socket's receive buffer before the first read.
    let in_flight = 200;
    let (mut done, mut events) = (HashMap::new(), Vec::new());
    let (mut next, mut most_held) = (0u64, 0usize);
    let limit = Instant::now() + Duration::from_secs(120);
    while done.len() < n as usize {
        assert!(Instant::now() < limit, "{} of {n} checks completed", done.len());
        while next < n && next - (done.len() as u64) < in_flight {
            let host = format!("127.{}.{}.{}", 1 + (next >> 16), (next >> 8) & 255, next & 255);
            e.submit(ping(&host, 1, ms(500)), next).unwrap();
            next += 1;
        }
        most_held = most_held.max(descriptors().saturating_sub(before));
        turn(&mut e, &mut done, &mut events);
    }
    assert_eq!(done.len(), n as usize);
    all_answered(&done, 1);
    assert!(most_held <= 2, "{n} targets held up to {most_held} more descriptors");
}
