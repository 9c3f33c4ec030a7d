//! cloudprober's configuration for the periodic scenarios (text protobuf, the format its
//! `--config_file` reads): the same targets as `impl=prober`, configured fairly.
//!
//! - Probe type TCP (cloudprober v0.14.4 has one): a connect per run, a new connection each
//!   time, closed at once; timeout 1 s, as ours.
//! - One endpoint per target, all at the benchmark's `HOST:PORT` (names `t0`, `t1`, ...: its
//!   scheduler keys targets by name, so that every one is a target of its own with its own
//!   goroutine, ticker and counters, as a fleet's distinct targets are).
//! - `interval_between_targets_msec: 1`, the smallest it takes (whole milliseconds; 0 would
//!   mean its own default gap of a tenth of the interval over the targets). A probe starts its
//!   targets that far apart, so a probe of `period_ms` targets spreads them evenly over one
//!   period. Targets are split into probes of that size ([`targets_per_probe`]), which start
//!   side by side: 10,000 targets at 1 s start in about 2 s (one probe of 10,000 would take
//!   10 s; 100,000 at 10 s, 100 s), and their runs are spread evenly over the period as
//!   `impl=prober`'s jittered ones are.
//! - Surfacers: only Prometheus (what counts runs: `total` and `success` per target, read from
//!   its `/metrics` outside the measured window), with timestamps so that each target's count
//!   can be divided by its own time span, and a queue that holds two exports of every target
//!   ([`surfacer_buffer`]). The probestatus surfacer, on by default, is
//!   switched off (it keeps per-target time series for its status page); the file surfacer, a
//!   default only when none is configured, is not added. Metrics are exported at cloudprober's
//!   default interval, max(interval, 10 s).
//! - Everything else is left at cloudprober's defaults (its system-variables export every
//!   10 s, its start-up jitter between probes, its in-memory log store).

use std::fmt::Write as _;

/// The gap between a probe's targets at start-up, ms (`interval_between_targets_msec`).
pub(crate) const GAP_MS: u64 = 1;

/// cloudprober's default metrics export interval for a TCP probe of this period (its
/// `stats_export_interval_msec` documentation: max(interval, 10 s)).
pub(crate) fn export_interval_ms(period_ms: u64) -> u64 {
    period_ms.max(10_000)
}

/// Targets per probe: as many as one period holds at `GAP_MS` apart (at least 1).
pub(crate) fn targets_per_probe(targets: u64, period_ms: u64) -> u64 {
    (period_ms / GAP_MS).clamp(1, targets.max(1))
}

/// The Prometheus surfacer's queue of exported results, for `targets` targets: its default,
/// 10,000, or twice the targets. The surfacer stops taking results while it writes its page,
/// and drops what does not fit ("write channel is full"): at 100,000 targets exporting every
/// run (10,000 a second) a page read during set-up overflowed the default. The queue is a
/// channel of pointers, allocated at start: 16 bytes per target, in both the baseline and
/// the probing configuration.
pub(crate) fn surfacer_buffer(targets: u64) -> u64 {
    (2 * targets).max(10_000)
}

/// The part every configuration has: the web server (its `/metrics`) on a loopback port, the
/// Prometheus surfacer with timestamps and a queue of [`surfacer_buffer`], the probestatus
/// surfacer off.
fn common(server_port: u16, targets: u64) -> String {
    let buffer = surfacer_buffer(targets);
    format!(
        "host: \"127.0.0.1\"\nport: {server_port}\n\
         surfacer {{\n  type: PROMETHEUS\n  prometheus_surfacer {{\n    include_timestamp: true\n    \
         metrics_buffer_size: {buffer}\n  }}\n}}\n\
         surfacer {{\n  type: PROBESTATUS\n  probestatus_surfacer {{ disable: true }}\n}}\n"
    )
}

/// No probe at all, the same surfacers as [`probes`] for `targets`: the baseline whose
/// resident memory is taken off the probing one's.
pub(crate) fn empty(server_port: u16, targets: u64) -> String {
    common(server_port, targets)
}

/// `targets` TCP targets at `host:port`, every `period_ms`, in probes of
/// [`targets_per_probe`] targets named `p0`, `p1`, ...
pub(crate) fn probes(
    server_port: u16,
    host: &str,
    port: u16,
    targets: u64,
    period_ms: u64,
) -> String {
    let mut c = common(server_port, targets);
    let per_probe = targets_per_probe(targets, period_ms);
    let timeout_ms = period_ms.min(1000);
    let mut next = 0u64;
    let mut probe = 0u64;
    while next < targets {
        let end = (next + per_probe).min(targets);
        let _ = write!(
            c,
            "probe {{\n  name: \"p{probe}\"\n  type: TCP\n  interval_msec: {period_ms}\n  \
             timeout_msec: {timeout_ms}\n  targets {{\n"
        );
        for t in next..end {
            let _ = writeln!(c, "    endpoint {{ name: \"t{t}\" ip: \"{host}\" }}");
        }
        let _ = write!(
            c,
            "  }}\n  tcp_probe {{\n    port: {port}\n    interval_between_targets_msec: {GAP_MS}\n  }}\n}}\n"
        );
        next = end;
        probe += 1;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_hold_one_period_of_targets() {
        assert_eq!(targets_per_probe(10_000, 1_000), 1_000);
        assert_eq!(targets_per_probe(100_000, 10_000), 10_000);
        assert_eq!(targets_per_probe(300, 1_000), 300);
        assert_eq!(targets_per_probe(0, 1_000), 1);
        assert_eq!(export_interval_ms(1_000), 10_000);
        assert_eq!(export_interval_ms(60_000), 60_000);
        assert_eq!(surfacer_buffer(1_000), 10_000);
        assert_eq!(surfacer_buffer(100_000), 200_000);
    }

    #[test]
    fn every_target_once_split_into_probes() {
        let c = probes(9313, "127.0.0.1", 8080, 2_500, 1_000);
        assert_eq!(c.matches("\nprobe {").count(), 3);
        assert_eq!(c.matches("endpoint {").count(), 2_500);
        assert!(c.contains("endpoint { name: \"t0\" ip: \"127.0.0.1\" }"));
        assert!(c.contains("endpoint { name: \"t2499\" ip: \"127.0.0.1\" }"));
        assert!(!c.contains("\"t2500\""));
        assert_eq!(c.matches("port: 8080").count(), 3);
        assert_eq!(c.matches("interval_between_targets_msec: 1\n").count(), 3);
        assert!(c.starts_with("host: \"127.0.0.1\"\nport: 9313\n"));
        assert!(c.contains("probestatus_surfacer { disable: true }"));
        assert!(c.contains("metrics_buffer_size: 10000\n"));
        // The baseline has the same server and surfacers and no probe.
        let e = empty(9313, 2_500);
        assert!(c.starts_with(&e));
        assert!(!e.contains("\nprobe {"));
    }
}
