//! 2,000 targets at a 100 ms period: every state change arrives exactly once.
//!
//! Alone in its test binary: when the listener closes, its port is free, and a server started
//! by a test on a parallel thread could be given that very port, turning refused connects back
//! into successes (which the prober would rightly report).

mod common;

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::*;
use prober_core::{ProbeResult, ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig, Event};

/// A TCP listener that accepts and drops connections on a thread (cheap enough for thousands
/// of probes a second), until `stop` is set; then the listener is closed (connects refused).
fn accept_loop() -> (u16, Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let l = listener_below_ephemeral_range();
    let port = l.local_addr().unwrap().port();
    // A backlog above the number of targets: the kernel completes every handshake even when
    // this thread is slow to accept (a loaded CI machine), instead of dropping SYNs and
    // turning healthy-phase probes into real timeouts. listen() again just resizes it.
    // SAFETY: a valid listening socket owned by `l`.
    assert_eq!(unsafe { libc::listen(std::os::fd::AsRawFd::as_raw_fd(&l), 4096) }, 0);
    l.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let h = std::thread::spawn(move || {
        while !stop2.load(Ordering::Acquire) {
            match l.accept() {
                Ok((c, _)) => drop(c),
                Err(_) => std::thread::sleep(Duration::from_micros(200)),
            }
        }
    });
    (port, stop, h)
}

/// A listener on a port below the kernel's ephemeral range: once it closes, no socket bound to
/// port 0 anywhere on the machine can be given its port, and no probe can self-connect to it.
fn listener_below_ephemeral_range() -> TcpListener {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
    let low: u16 = range.split_whitespace().next().unwrap().parse().unwrap();
    assert!(low > 2000, "ephemeral range starts too low to find a port below it: {range}");
    let seed = std::process::id() as u16;
    (0..1000u16)
        .map(|i| 1024 + (seed.wrapping_mul(31).wrapping_add(i * 7)) % (low - 1024))
        .find_map(|port| TcpListener::bind(("127.0.0.1", port)).ok())
        .expect("no free port below the ephemeral range")
}

#[test]
fn two_thousand_targets_every_change_exactly_once() {
    let (port, stop, acceptor) = accept_loop();
    let mut e = Engine::with_config(EngineConfig {
        every_run: false,
        jitter_seed: 1,
        ..EngineConfig::default()
    })
    .unwrap();
    let sched = Schedule { jitter: true, ..schedule(100, 1, 1) };
    let spec = ProbeSpec::tcp("127.0.0.1", port.into()).unwrap();
    let ids: Vec<_> = (0..2000)
        .map(|_| {
            let t = e.add_target();
            e.set_probe(t, Role::Readiness, spec.clone(), sched).unwrap();
            t
        })
        .collect();
    let mut ev = Vec::new();
    run_for(&mut e, &mut ev, Duration::from_millis(1500));
    stop.store(true, Ordering::Release);
    acceptor.join().unwrap(); // listener closed: connects are refused from now on
    run_for(&mut e, &mut ev, Duration::from_millis(1500));

    let mut per: HashMap<u64, Vec<ProbeResult>> = HashMap::new();
    for x in &ev {
        if let Event::State { target, role, result, .. } = x {
            assert_eq!(*role, Role::Readiness);
            per.entry(*target).or_default().push(*result);
        }
    }
    assert_eq!(per.len(), 2000, "every target published");
    for t in &ids {
        assert_eq!(
            per[t],
            vec![ProbeResult::Failure, ProbeResult::Success, ProbeResult::Failure],
            "target {t}"
        );
    }
}
