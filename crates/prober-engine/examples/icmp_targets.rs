//! What N ICMP targets cost one engine (issue 36): pings N distinct loopback addresses
//! (127.x.y.z all answer on Linux) as one-shot checks from one engine thread, at most 200 in
//! flight, and prints the CPU time per echo (user and system, the whole process) and the most
//! descriptors the engine held beyond its own at any turn.
//!
//! `cargo run -p prober-engine --example icmp_targets -- N` (as root for raw sockets, or with
//! a `net.ipv4.ping_group_range` that admits the process). Under `valgrind --tool=callgrind`
//! the instruction count divided by N is the instructions per echo.

use std::time::{Duration, Instant};

use prober_core::{IcmpSpec, ProbeResult, ProbeSpec};
use prober_engine::{Engine, Event};

fn cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is valid for writes for the whole call.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(r, 0);
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let in_flight = 200;
    let mut e = Engine::new().expect("engine");
    let before = descriptors();
    let started = cpu();
    let (mut next, mut done, mut success, mut most_held) = (0u64, 0u64, 0u64, 0usize);
    let mut events = Vec::new();
    let limit = Instant::now() + Duration::from_secs(600);
    while done < n && Instant::now() < limit {
        while next < n && next - done < in_flight {
            let host = format!("127.{}.{}.{}", 1 + (next >> 16), (next >> 8) & 255, next & 255);
            let spec = ProbeSpec::icmp_with(IcmpSpec::new(&host)).expect("spec");
            e.submit(spec.with_timeout(Duration::from_secs(5)).expect("timeout"), next)
                .expect("submit");
            next += 1;
        }
        most_held = most_held.max(descriptors().saturating_sub(before));
        e.wait(Some(Duration::from_millis(50))).expect("wait");
        e.drain(&mut events, usize::MAX);
        for ev in events.drain(..) {
            if let Event::Check { outcome, .. } = ev {
                done += 1;
                success += u64::from(outcome.result == ProbeResult::Success);
            }
        }
    }
    let each = (cpu() - started) / u32::try_from(n).unwrap_or(u32::MAX);
    println!(
        "{n} targets: {success} Success, {:.1} µs CPU per echo, at most {most_held} descriptors held",
        each.as_secs_f64() * 1e6
    );
}
