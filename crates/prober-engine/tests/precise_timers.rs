//! The engine wakes for its timers to the nanosecond, not at the poll's next millisecond: its
//! descriptor becomes readable by itself when the next timer is due (a timerfd in its poll), so
//! neither `Engine::wait` nor a host polling `Engine::fd` with a millisecond timeout waits for
//! the millisecond rounding. Asserted on events (the descriptor became readable, no I/O being
//! in flight), never on how long anything took.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use prober_core::{ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig};
use prober_testkit::TargetServer;

/// Whether `fd` became readable within `bound` (the outer host's own poll).
fn readable_within(fd: i32, bound: Duration) -> bool {
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let deadline = Instant::now() + bound;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one valid, initialised pollfd and a count of 1.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n > 0 {
            return pfd.revents & libc::POLLIN != 0;
        }
        if n == 0 || left.is_zero() {
            return false;
        }
        // EINTR: poll again for what is left.
    }
}

#[test]
fn the_engine_descriptor_is_readable_when_a_timer_is_due() {
    let server = TargetServer::start();
    // No socket pool: a socket goes when its run ends, and no event of it can come later.
    let mut e =
        Engine::with_config(EngineConfig { socket_pool: 0, ..EngineConfig::default() }).unwrap();
    let t = e.add_target();
    // The first run 300 µs from now, then one every 2 ms: between runs the engine has nothing
    // but a timer, due within a period of the last turn.
    let period = Duration::from_millis(2);
    let schedule =
        Schedule { initial_delay: Duration::from_micros(300), period, ..Schedule::default() };
    let spec = ProbeSpec::tcp("127.0.0.1", server.port().into()).unwrap();
    e.set_probe(t, Role::Liveness, spec, schedule).unwrap();
    // Far beyond any period here: only a wake-up that never comes reaches it.
    let bound = period * 5_000;
    let mut events = Vec::new();
    let (mut idle_waits, mut turns) = (0, 0);
    while idle_waits < 5 {
        turns += 1;
        assert!(turns < 10_000, "{idle_waits} idle waits in {turns} turns");
        e.step().unwrap();
        e.drain(&mut events, usize::MAX);
        events.clear();
        if e.in_flight() > 0 {
            e.wait(Some(bound)).unwrap(); // the run's connect
            continue;
        }
        // No run in flight and nothing readable now: no socket can make the descriptor
        // readable, only the next run's timer (no host timeout is involved).
        if readable_within(e.fd(), Duration::ZERO) {
            continue;
        }
        let next = e.timeout().expect("a periodic worker always has a next run");
        assert!(next <= period, "next run in {next:?}");
        assert!(
            readable_within(e.fd(), bound),
            "the engine's descriptor did not become readable for a timer due in {next:?}"
        );
        idle_waits += 1;
    }
}
