//! `prober watch --metrics ADDR`: what the watch sees, as Prometheus metrics at
//! `http://ADDR/metrics`.
//!
//! The registry and its text encoding are the official Prometheus client's
//! (`prometheus-client`); the metrics are atomics, so the watch loop updates them while a scrape
//! reads them. The HTTP side is `prober_httpd`'s server, on its own thread (with
//! `--health-listen`'s routes when both name one address): many scrapers at once, each bounded,
//! so no client holds up a scrape, let alone a probe.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prober::{Outcome, Role};
use prober_httpd::{Response, Server, exposition};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::target_state::TargetState;

/// Labels of `prober_probe_total`. `reason` is [`prober::Reason::as_str`]: a fixed set of
/// names (the `reason` of `--json`), never a message, so that the number of series stays
/// bounded by targets x roles x (result, reason) pairs whatever the probes say.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabels {
    target: String,
    role: &'static str,
    result: &'static str,
    reason: &'static str,
}

/// Labels of the per-probe families.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProbeLabels {
    target: String,
    role: &'static str,
}

/// Labels of `prober_probe_phase_seconds`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhaseLabels {
    target: String,
    role: &'static str,
    phase: &'static str,
}

/// Labels of the per-target 0/1 gauges.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TargetLabels {
    target: String,
}

type Seconds = Gauge<f64, AtomicU64>;

/// Probe durations: 0.5 ms to about 16 s (a probe's timeout is at most what the watch file
/// says; most are well under a second on a node).
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// Scheduling lateness: 0.1 ms to about 26 s, by factors of 4 (a healthy engine stays in the
/// lowest buckets; the high ones say the node or the engine was starved).
fn lateness_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 4.0, 10))
}

/// The metric families of one watch, updated by the watch loop.
#[derive(Debug)]
pub struct Metrics {
    runs: Family<RunLabels, Counter>,
    duration: Family<ProbeLabels, Histogram, fn() -> Histogram>,
    phases: Family<PhaseLabels, Seconds>,
    started: Family<TargetLabels, Gauge>,
    ready: Family<TargetLabels, Gauge>,
    live: Family<TargetLabels, Gauge>,
    cert_not_after: Family<ProbeLabels, Gauge>,
    lateness: Histogram,
}

impl Metrics {
    /// The families, and the registry that encodes them (for the server).
    pub fn new() -> (Metrics, Registry) {
        let m = Metrics {
            runs: Family::default(),
            duration: Family::new_with_constructor(duration_histogram),
            phases: Family::default(),
            started: Family::default(),
            ready: Family::default(),
            live: Family::default(),
            cert_not_after: Family::default(),
            lateness: lateness_histogram(),
        };
        let mut r = Registry::default();
        r.register(
            "prober_probe",
            "Probe runs, by target, role, result and reason",
            m.runs.clone(),
        );
        r.register_with_unit(
            "prober_probe_duration",
            "How long probe runs took",
            Unit::Seconds,
            m.duration.clone(),
        );
        r.register_with_unit(
            "prober_probe_phase",
            "The last run's phases, from the start of the run to the end of the phase (resolve: \
             how long the name lookup took)",
            Unit::Seconds,
            m.phases.clone(),
        );
        r.register(
            "prober_started",
            "1 when the target has started (startup probe)",
            m.started.clone(),
        );
        r.register("prober_ready", "1 when the target is ready", m.ready.clone());
        r.register("prober_live", "1 when the target is live", m.live.clone());
        r.register_with_unit(
            "prober_cert_not_after",
            "When the certificate the last TLS run saw expires, since the Unix epoch",
            Unit::Seconds,
            m.cert_not_after.clone(),
        );
        r.register_with_unit(
            "prober_engine_run_lateness",
            "How long after its scheduled time each run started",
            Unit::Seconds,
            m.lateness.clone(),
        );
        (m, r)
    }

    /// Counts one run of `target`'s `role` probe, `late` after its scheduled time.
    pub fn record_run(&self, target: &str, role: Role, outcome: &Outcome, late: Duration) {
        let (target, role) = (target.to_string(), role.as_str());
        let (result, reason) = (outcome.result.as_str(), outcome.reason.as_str());
        self.runs.get_or_create(&RunLabels { target: target.clone(), role, result, reason }).inc();
        let probe = ProbeLabels { target, role };
        let t = &outcome.timings;
        self.duration.get_or_create(&probe).observe(t.total.as_secs_f64());
        let phases = [
            ("resolve", t.resolve),
            ("connect", t.connect),
            ("tls", t.tls),
            ("first_byte", t.first_byte),
            ("total", Some(t.total)),
        ];
        for (phase, d) in phases {
            let labels = PhaseLabels { target: probe.target.clone(), role, phase };
            match d {
                Some(d) => {
                    self.phases.get_or_create(&labels).set(d.as_secs_f64());
                }
                // A phase the last run did not reach is gone, not left at an older run's value.
                None => {
                    self.phases.remove(&labels);
                }
            }
        }
        if let Some(not_after) = outcome.cert_not_after {
            self.cert_not_after.get_or_create(&probe).set(not_after);
        }
        self.lateness.observe(late.as_secs_f64());
    }

    /// Records a target's started, ready and live flags as the watch knows them.
    pub fn record_target(&self, t: &TargetState) {
        self.record_state(&t.name, t.started(), t.ready(), t.live());
    }

    /// Sets `target`'s started / ready / live gauges.
    pub fn record_state(&self, target: &str, started: bool, ready: bool, live: bool) {
        let labels = TargetLabels { target: target.to_string() };
        self.started.get_or_create(&labels).set(i64::from(started));
        self.ready.get_or_create(&labels).set(i64::from(ready));
        self.live.get_or_create(&labels).set(i64::from(live));
    }
}

/// `--metrics ADDR`: `IP:PORT`, `[IPV6]:PORT`, or `:PORT` for every IPv4 interface. Host
/// names are refused: what is bound must not depend on a lookup.
///
/// # Errors
///
/// A message saying what is expected, for a usage error (exit status 64).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    if let Some(port) = s.strip_prefix(':') {
        if let Ok(port) = port.parse::<u16>() {
            return Ok(SocketAddr::from((Ipv4Addr::UNSPECIFIED, port)));
        }
    }
    s.parse().map_err(|_| {
        format!("bad address '{s}' (expected IP:PORT, [IPV6]:PORT or :PORT, e.g. 127.0.0.1:9464)")
    })
}

/// Serves `registry` at `/metrics` of `server`, in the format the scraper asks for (the
/// classic text format unless its Accept header prefers OpenMetrics).
pub fn route(server: &mut Server, registry: Registry) {
    server.route("/metrics", move |req| {
        let mut body = String::new();
        if prometheus_client::encoding::text::encode(&mut body, &registry).is_err() {
            return Response::text(500, "cannot encode the metrics\n");
        }
        exposition::respond(req, body)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober::{ProbeResult, Reason, Timings};

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("127.0.0.1:9464"), Ok("127.0.0.1:9464".parse().unwrap()));
        assert_eq!(parse_addr("[::1]:0"), Ok("[::1]:0".parse().unwrap()));
        assert_eq!(parse_addr(":9464"), Ok("0.0.0.0:9464".parse().unwrap()));
        for bad in ["", "9464", "localhost:9464", "127.0.0.1", "127.0.0.1:65536", ":x", "::1:80"] {
            assert!(parse_addr(bad).unwrap_err().contains("bad address"), "{bad}");
        }
    }

    fn exposition(r: &Registry) -> String {
        let mut s = String::new();
        prometheus_client::encoding::text::encode(&mut s, r).unwrap();
        s
    }

    #[test]
    fn families_and_phases() {
        let (m, r) = Metrics::new();
        let mut o = Outcome::new(ProbeResult::Failure, Reason::Status, "503");
        o.timings = Timings {
            resolve: None,
            connect: Some(Duration::from_millis(2)),
            tls: Some(Duration::from_millis(5)),
            first_byte: Some(Duration::from_millis(7)),
            total: Duration::from_millis(8),
            reused: false,
        };
        o.cert_not_after = Some(1_900_000_000);
        m.record_run("web \"a\"", Role::Readiness, &o, Duration::from_micros(250));
        m.record_state("web \"a\"", true, false, true);
        let text = exposition(&r);
        for line in [
            "prober_probe_total{target=\"web \\\"a\\\"\",role=\"readiness\",result=\"failure\",reason=\"status\"} 1",
            "prober_probe_phase_seconds{target=\"web \\\"a\\\"\",role=\"readiness\",phase=\"tls\"} 0.005",
            "prober_probe_duration_seconds_count{target=\"web \\\"a\\\"\",role=\"readiness\"} 1",
            "prober_cert_not_after_seconds{target=\"web \\\"a\\\"\",role=\"readiness\"} 1900000000",
            "prober_ready{target=\"web \\\"a\\\"\"} 0",
            "prober_started{target=\"web \\\"a\\\"\"} 1",
            "prober_engine_run_lateness_seconds_count 1",
            "# EOF",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from:\n{text}");
        }
        // A later run without TLS (the connection was refused): its phases only.
        let mut o = Outcome::new(ProbeResult::Failure, Reason::Refused, "refused");
        o.timings.total = Duration::from_millis(1);
        m.record_run("web \"a\"", Role::Readiness, &o, Duration::ZERO);
        let text = exposition(&r);
        assert!(!text.contains("phase=\"tls\""), "{text}");
        assert!(text.contains("phase=\"total\"} 0.001"), "{text}");
        // Each reason is a series of its own: the refusal did not add to the status one.
        assert!(text.contains("result=\"failure\",reason=\"status\"} 1"), "{text}");
        assert!(text.contains("result=\"failure\",reason=\"refused\"} 1"), "{text}");
    }
}
