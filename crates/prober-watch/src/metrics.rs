//! `prober watch --metrics ADDR`: what the watch sees, as Prometheus metrics at
//! `http://ADDR/metrics`.
//!
//! The families are kept under one lock (the watch loop updates them, a scrape reads them;
//! both hold it for microseconds) and written by libprober's exposition writer
//! (`prober-exposition`, which `prober serve` writes its answers with too), in the format the
//! scraper asks for. The HTTP side is `prober_httpd`'s server, on its own thread (with
//! `--health-listen`'s routes when both name one address): many scrapers at once, each bounded,
//! so no client holds up a scrape, let alone a probe.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use prober::{Outcome, Role};
use prober_exposition::{Format, Kind, family, finish, sample};
use prober_httpd::{Response, Server};

use crate::target_state::TargetState;

/// Probe durations: 0.5 ms to about 16 s (a probe's timeout is at most what the watch file
/// says; most are well under a second on a node).
const DURATION_BUCKETS: (f64, f64, usize) = (0.0005, 2.0, 16);

/// Scheduling lateness: 0.1 ms to about 26 s, by factors of 4 (a healthy engine stays in the
/// lowest buckets; the high ones say the node or the engine was starved).
const LATENESS_BUCKETS: (f64, f64, usize) = (0.0001, 4.0, 10);

/// A histogram: the count in each bucket (not cumulative; the `+Inf` one last), the sum.
#[derive(Debug, Clone)]
struct Histogram {
    bounds: Vec<f64>,
    counts: Vec<u64>,
    sum: f64,
}

impl Histogram {
    /// `n` upper bounds from `start`, each `factor` times the last.
    fn exponential((start, factor, n): (f64, f64, usize)) -> Histogram {
        let bounds: Vec<f64> =
            std::iter::successors(Some(start), |b| Some(b * factor)).take(n).collect();
        Histogram { counts: vec![0; bounds.len() + 1], bounds, sum: 0.0 }
    }

    fn observe(&mut self, v: f64) {
        let i = self.bounds.iter().position(|b| v <= *b).unwrap_or(self.bounds.len());
        self.counts[i] += 1;
        self.sum += v;
    }

    /// `NAME_bucket` (cumulative, `le` after the series' labels), `NAME_sum`, `NAME_count`.
    fn write(&self, out: &mut String, name: &str, labels: &[(&str, &str)]) {
        let mut total = 0;
        let bucket = format!("{name}_bucket");
        for (i, count) in self.counts.iter().enumerate() {
            total += count;
            let le = self.bounds.get(i).map_or_else(|| "+Inf".to_string(), f64::to_string);
            let mut with_le = labels.to_vec();
            with_le.push(("le", &le));
            sample(out, &bucket, &with_le, total);
        }
        sample(out, &format!("{name}_sum"), labels, self.sum);
        sample(out, &format!("{name}_count"), labels, total);
    }
}

/// A target's and a role's series key.
type Probe = (String, &'static str);

/// The families' values.
#[derive(Debug)]
struct Families {
    /// `prober_probe_total` by target, role, result and reason. `reason` is
    /// [`prober::Reason::as_str`]: a fixed set of names (the `reason` of `--json`), never a
    /// message, so that the number of series stays bounded by targets x roles x (result,
    /// reason) pairs whatever the probes say.
    runs: BTreeMap<(Probe, &'static str, &'static str), u64>,
    duration: BTreeMap<Probe, Histogram>,
    /// The last run's phases, by target, role and phase.
    phases: BTreeMap<(Probe, &'static str), f64>,
    /// Started, ready, live by target.
    states: BTreeMap<String, [bool; 3]>,
    cert_not_after: BTreeMap<Probe, i64>,
    lateness: Histogram,
}

/// The metric families of one watch, updated by the watch loop.
#[derive(Debug)]
pub struct Metrics {
    families: Arc<Mutex<Families>>,
}

/// What the server reads the families through, for a scrape.
#[derive(Debug, Clone)]
pub struct Registry {
    families: Arc<Mutex<Families>>,
}

impl Metrics {
    /// The families, and the registry that writes them (for the server).
    pub fn new() -> (Metrics, Registry) {
        let families = Arc::new(Mutex::new(Families {
            runs: BTreeMap::new(),
            duration: BTreeMap::new(),
            phases: BTreeMap::new(),
            states: BTreeMap::new(),
            cert_not_after: BTreeMap::new(),
            lateness: Histogram::exponential(LATENESS_BUCKETS),
        }));
        (Metrics { families: families.clone() }, Registry { families })
    }

    fn families(&self) -> std::sync::MutexGuard<'_, Families> {
        self.families.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one run of `target`'s `role` probe, `late` after its scheduled time.
    pub fn record_run(&self, target: &str, role: Role, outcome: &Outcome, late: Duration) {
        let probe: Probe = (target.to_string(), role.as_str());
        let (result, reason) = (outcome.result.as_str(), outcome.reason.as_str());
        let t = &outcome.timings;
        let mut f = self.families();
        *f.runs.entry((probe.clone(), result, reason)).or_default() += 1;
        f.duration
            .entry(probe.clone())
            .or_insert_with(|| Histogram::exponential(DURATION_BUCKETS))
            .observe(t.total.as_secs_f64());
        let phases = [
            ("resolve", t.resolve),
            ("connect", t.connect),
            ("tls", t.tls),
            ("first_byte", t.first_byte),
            ("total", Some(t.total)),
        ];
        for (phase, d) in phases {
            let key = (probe.clone(), phase);
            match d {
                Some(d) => {
                    f.phases.insert(key, d.as_secs_f64());
                }
                // A phase the last run did not reach is gone, not left at an older run's value.
                None => {
                    f.phases.remove(&key);
                }
            }
        }
        if let Some(not_after) = outcome.cert_not_after {
            f.cert_not_after.insert(probe, not_after);
        }
        f.lateness.observe(late.as_secs_f64());
    }

    /// Records a target's started, ready and live flags as the watch knows them.
    pub fn record_target(&self, t: &TargetState) {
        self.record_state(&t.name, t.started(), t.ready(), t.live());
    }

    /// Sets `target`'s started / ready / live gauges.
    pub fn record_state(&self, target: &str, started: bool, ready: bool, live: bool) {
        self.families().states.insert(target.to_string(), [started, ready, live]);
    }
}

impl Registry {
    /// The exposition in `format`.
    pub fn write(&self, format: Format) -> String {
        let f = self.families.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = String::with_capacity(4096);
        fn probe((target, role): &Probe) -> [(&'static str, &str); 2] {
            [("target", target.as_str()), ("role", role)]
        }
        let name = "prober_probe_total";
        family(
            &mut out,
            format,
            name,
            "Probe runs, by target, role, result and reason.",
            Kind::Counter,
        );
        for ((p, result, reason), n) in &f.runs {
            let [t, r] = probe(p);
            sample(&mut out, name, &[t, r, ("result", result), ("reason", reason)], *n);
        }
        let name = "prober_probe_duration_seconds";
        family(&mut out, format, name, "How long probe runs took.", Kind::Histogram);
        unit(&mut out, format, name);
        for (p, h) in &f.duration {
            h.write(&mut out, name, &probe(p));
        }
        let name = "prober_probe_phase_seconds";
        let help = "The last run's phases, from the start of the run to the end of the phase \
                    (resolve: how long the name lookup took).";
        family(&mut out, format, name, help, Kind::Gauge);
        unit(&mut out, format, name);
        for ((p, phase), v) in &f.phases {
            let [t, r] = probe(p);
            sample(&mut out, name, &[t, r, ("phase", phase)], *v);
        }
        let states = [
            ("prober_started", "1 when the target has started (startup probe)."),
            ("prober_ready", "1 when the target is ready."),
            ("prober_live", "1 when the target is live."),
        ];
        for (i, (name, help)) in states.into_iter().enumerate() {
            family(&mut out, format, name, help, Kind::Gauge);
            for (target, flags) in &f.states {
                sample(&mut out, name, &[("target", target)], u8::from(flags[i]));
            }
        }
        let name = "prober_cert_not_after_seconds";
        let help = "When the certificate the last TLS run saw expires, since the Unix epoch.";
        family(&mut out, format, name, help, Kind::Gauge);
        unit(&mut out, format, name);
        for (p, v) in &f.cert_not_after {
            sample(&mut out, name, &probe(p), *v);
        }
        let name = "prober_engine_run_lateness_seconds";
        family(
            &mut out,
            format,
            name,
            "How long after its scheduled time each run started.",
            Kind::Histogram,
        );
        unit(&mut out, format, name);
        f.lateness.write(&mut out, name, &[]);
        finish(&mut out, format);
        out
    }
}

/// OpenMetrics' `# UNIT` line of a family in seconds (the classic format has none).
fn unit(out: &mut String, format: Format, name: &str) {
    if format == Format::OpenMetrics {
        for piece in ["# UNIT ", name, " seconds\n"] {
            out.push_str(piece);
        }
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
        let format = Format::negotiate(req.header("accept"));
        Response::new(200, format.content_type(), registry.write(format))
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
        r.write(Format::OpenMetrics)
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
        // The classic format: the counter's family named with `_total`, no UNIT, no EOF.
        let text = r.write(Format::Text);
        assert!(text.contains("# TYPE prober_probe_total counter\n"), "{text}");
        assert!(text.contains("# TYPE prober_probe_duration_seconds histogram\n"), "{text}");
        let bucket = "prober_probe_duration_seconds_bucket{target=\"web \\\"a\\\"\",role=\"readiness\",le=\"+Inf\"} 2";
        assert!(text.lines().any(|l| l == bucket), "{bucket} missing from:\n{text}");
        assert!(!text.contains("# UNIT") && !text.contains("# EOF"), "{text}");
    }
}
