//! `prober watch --metrics ADDR`: what the watch sees, as Prometheus metrics at
//! `http://ADDR/metrics`; and the one small HTTP server of the command, which also answers
//! `--health-listen` (`/readyz`, `/livez`: see `health`), on the same address or another.
//!
//! The registry and its text encoding are the official Prometheus client's
//! (`prometheus-client`); the metrics are atomics, so the watch loop updates them while a scrape
//! reads them. The HTTP side is a small blocking server on its own thread: one request at a
//! time, a bounded request, read and write timeouts, so a slow or hostile scraper can hold up
//! only the next scrape, never a probe. Its sockets are close-on-exec (the standard library
//! opens every socket so), so probe commands inherit none of them.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use prober::{Outcome, Role};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::args::Failure;
use crate::health::Health;
use crate::target_state::TargetState;

/// What one listener serves: `/metrics`, `/readyz` and `/livez`, or both.
#[derive(Debug, Default)]
pub struct Site {
    pub registry: Option<Registry>,
    pub health: Option<Health>,
}

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

    /// Sets `target`'s started / ready / live gauges from its published values.
    /// Records a target's started, ready and live flags as the watch knows them.
    pub(crate) fn record_target(&self, t: &TargetState) {
        self.record_state(&t.name, t.started(), t.ready(), t.live());
    }

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

/// The largest request read: a scrape's request is a few hundred bytes.
const MAX_REQUEST_BYTES: usize = 8 << 10;

/// How long a scraper may take to send its request or read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Binds `addr` and serves `site` from a thread of its own; returns the bound address
/// (the port chosen by the system for port 0). `option` names the flag in errors.
///
/// # Errors
///
/// Exit status 70 with the reason when the address cannot be bound (taken, not local, not
/// permitted) or the thread cannot be started.
pub fn serve(addr: SocketAddr, site: Site, option: &str) -> Result<SocketAddr, Failure> {
    let cannot =
        |e: io::Error| Failure::software(format!("{option}: cannot listen on {addr}: {e}"));
    let listener = TcpListener::bind(addr).map_err(cannot)?;
    let bound = listener.local_addr().map_err(cannot)?;
    std::thread::Builder::new()
        .name("http".into())
        .spawn(move || accept_loop(&listener, &site))
        .map_err(|e| Failure::software(format!("{option}: cannot start its thread: {e}")))?;
    Ok(bound)
}

fn accept_loop(listener: &TcpListener, site: &Site) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                // A client that goes away mid-answer is its own problem: the next one is served.
                let _ = answer(stream, site);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // Out of descriptors (or another transient error): wait instead of spinning; the
            // probes are on another thread and go on.
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Reads one request and answers it; the connection is then closed. The whole exchange has
/// [`IO_TIMEOUT`], not each read or write: a scraper that trickles a byte at a time holds the
/// next one up by that much at most. A read or write interrupted by a signal is retried within
/// what is left of it: with a timeout set, the kernel reports EINTR rather than restart the
/// call, and the SIGCHLD of an exec probe's command reaches this thread (see
/// [`prober_io::retry_interrupted`]; its rule is written out in the loops below, where calling
/// it with closures made the release binary 20 KB larger).
fn answer(mut stream: TcpStream, site: &Site) -> io::Result<()> {
    let deadline = Instant::now() + IO_TIMEOUT;
    let mut request = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    let head_end = loop {
        if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break Some(end);
        }
        if request.len() > MAX_REQUEST_BYTES {
            break None;
        }
        stream.set_read_timeout(Some(time_left(deadline)?))?;
        let n = match stream.read(&mut buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => r?,
        };
        if n == 0 {
            return Ok(());
        }
        request.extend_from_slice(&buf[..n]);
    };
    let response = match head_end {
        None => plain(431, "request too large\n"),
        Some(end) => respond(&request[..end], site),
    };
    let mut rest = &response[..];
    while !rest.is_empty() {
        stream.set_write_timeout(Some(time_left(deadline)?))?;
        let n = match stream.write(rest) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => r?,
        };
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        rest = &rest[n..];
    }
    Ok(())
}

/// What is left of the exchange's time; an error once it is over (a zero timeout would mean
/// none to the socket).
fn time_left(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() { Err(io::ErrorKind::TimedOut.into()) } else { Ok(left) }
}

/// The response to a request head (request line and headers).
fn respond(head: &[u8], site: &Site) -> Vec<u8> {
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return plain(400, "bad request line\n");
    };
    if !version.starts_with(b"HTTP/1.") {
        return plain(400, "bad request line\n");
    }
    let mut target = target.splitn(2, |&b| b == b'?');
    let path = target.next().unwrap_or_default();
    let query = target.next().unwrap_or_default();
    let answer = match (&site.registry, &site.health) {
        (Some(registry), _) if path == b"/metrics" => {
            let mut body = String::new();
            if prometheus_client::encoding::text::encode(&mut body, registry).is_err() {
                return plain(500, "cannot encode the metrics\n");
            }
            (200, OPENMETRICS, body)
        }
        (_, Some(health)) => match health.respond(path, query) {
            Some((status, body)) => (status, TEXT, body),
            None => return not_found(site),
        },
        _ => return not_found(site),
    };
    let head_only = match method {
        b"GET" => false,
        b"HEAD" => true,
        _ => return plain(405, "use GET\n"),
    };
    let (status, content_type, body) = answer;
    response(status, content_type, &body, head_only)
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const TEXT: &str = "text/plain; charset=utf-8";

/// 404, naming what is served here.
fn not_found(site: &Site) -> Vec<u8> {
    let mut paths = Vec::new();
    if site.registry.is_some() {
        paths.push("/metrics");
    }
    if site.health.is_some() {
        paths.extend(["/readyz", "/livez"]);
    }
    plain(404, &format!("not found: served here: {}\n", paths.join(", ")))
}

fn plain(status: u16, body: &str) -> Vec<u8> {
    response(status, TEXT, body, false)
}

fn response(status: u16, content_type: &str, body: &str, head_only: bool) -> Vec<u8> {
    let text = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    };
    let allow = if status == 405 { "Allow: GET, HEAD\r\n" } else { "" };
    let mut out = format!(
        "HTTP/1.1 {status} {text}\r\n\
         Content-Type: {content_type}\r\n\
         {allow}Content-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    out
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

    #[test]
    fn requests() {
        let (_, r) = Metrics::new();
        let r = Site { registry: Some(r), health: None };
        let ok = respond(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a", &r);
        let ok = String::from_utf8(ok).unwrap();
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.ends_with("# EOF\n"), "{ok}");
        let head = String::from_utf8(respond(b"HEAD /metrics HTTP/1.0", &r)).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("\r\n\r\n"), "{head}");
        let status = |req: &[u8]| String::from_utf8(respond(req, &r)).unwrap()[9..12].to_string();
        assert_eq!(status(b"GET / HTTP/1.1"), "404");
        assert_eq!(status(b"GET /metricsx HTTP/1.1"), "404");
        assert_eq!(status(b"POST /metrics HTTP/1.1"), "405");
        assert_eq!(status(b"GET /metrics"), "400");
        assert_eq!(status(b"GET /metrics SPDY/3"), "400");
    }
}
