//! The answer of one probe: its debug log and its metrics, with blackbox_exporter's names,
//! meanings and order (each prober's own metrics in its facts file).

use std::fmt::Write as _;
use std::time::Duration;

use prober::{Outcome, Reason};

use crate::facts::{self, gauge, gauge_family, sample};
use crate::module::{FailedBy, Module, Prober};
use crate::numbers::{Secs, push_millis3, push_secs, push_u64};
use crate::{dns_facts, qr_facts};

/// Room made at once for a probe's metrics (an HTTP probe's: about 2 KiB).
const METRICS_CAPACITY: usize = 2560;

/// The debug log's lines about the outcome: the peer, the phases, TLS, the HTTP status, the
/// engine's message, the failed check and the verdict.
pub(crate) fn explain(
    log: &mut String,
    o: &Outcome,
    verdict: Option<&(String, FailedBy)>,
    success: bool,
    d: Duration,
) {
    if let Some(peer) = o.peer {
        log.push_str("Connected: address=");
        match peer.ip() {
            // `Display` of an IPv4 address, without the formatting machinery (which pads).
            std::net::IpAddr::V4(v4) => {
                for (i, octet) in v4.octets().into_iter().enumerate() {
                    if i > 0 {
                        log.push('.');
                    }
                    push_u64(log, u64::from(octet));
                }
            }
            ip @ std::net::IpAddr::V6(_) => {
                let _ = write!(log, "{ip}");
            }
        }
        let proto = if prober::IpFamily::is_v6(peer.ip()) { "ip6" } else { "ip4" };
        log.push_str(" ip_protocol=");
        log.push_str(proto);
        log.push('\n');
    }
    let t = &o.timings;
    // Written in place: a string per phase cost an allocation each.
    let phases = [
        ("Timings: resolve=", t.resolve),
        (" connect=", t.connect),
        (" tls=", t.tls),
        (" first_byte=", t.first_byte),
        (" total=", Some(t.total)),
    ];
    for (label, d) in phases {
        log.push_str(label);
        match d {
            Some(d) => {
                push_millis3(log, d);
                log.push_str("ms");
            }
            None => log.push('-'),
        }
    }
    log.push('\n');
    if let Some(tls) = o.tls.as_deref() {
        facts::explain_tls(log, tls);
    }
    if let Some(s) = o.http_status {
        log.push_str("Received HTTP response: status_code=");
        push_u64(log, u64::from(s));
        log.push_str(" redirects=");
        push_u64(log, u64::from(o.http_redirects));
        log.push('\n');
    }
    if !o.message.is_empty() {
        let _ = writeln!(
            log,
            "Engine: result={} reason={} message={:?}",
            o.result,
            o.reason,
            prober_core::redact_userinfo(&o.message)
        );
    }
    if let Some((why, _)) = verdict {
        let _ = writeln!(log, "{why}");
    }
    log.push_str(if success { "Probe succeeded" } else { "Probe failed" });
    log.push_str(" duration_seconds=");
    push_secs(log, d);
    log.push('\n');
}

/// blackbox_exporter's `ipHash`: FNV-1a (32 bits) of the address's bytes, the 4 of IPv4 (an
/// IPv4-mapped IPv6 address too, as Go's `To4` reads it) or the 16 of IPv6.
fn ip_hash(ip: std::net::IpAddr) -> u32 {
    let bytes = match ip.to_canonical() {
        std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
        std::net::IpAddr::V6(v6) => v6.octets().to_vec(),
    };
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193))
}

/// The answer of one probe, with blackbox_exporter's names, meanings and order.
pub(crate) fn render(
    m: &Module,
    o: &Outcome,
    success: bool,
    verdict: Option<&(String, FailedBy)>,
    d: Duration,
) -> String {
    let mut s = String::with_capacity(METRICS_CAPACITY);
    let secs = |d: Option<Duration>| Secs(d.unwrap_or_default());
    let t = &o.timings;
    if m.prober == Prober::Dns {
        dns_facts::before_lookup(&mut s, Some(o));
    }
    // The unix prober resolves nothing: blackbox_exporter has no lookup gauge for it.
    if m.prober != Prober::Unix {
        gauge(
            &mut s,
            "probe_dns_lookup_time_seconds",
            "Returns the time taken for probe dns lookup in seconds",
            secs(t.resolve),
        );
    }
    if m.prober == Prober::Dns {
        dns_facts::after_lookup(&mut s, m, Some(o));
    }
    gauge(
        &mut s,
        "probe_duration_seconds",
        "Returns how long the probe took to complete in seconds",
        Secs(d),
    );
    match m.prober {
        Prober::Http => http_metrics(&mut s, m, o, verdict),
        Prober::Grpc => facts::grpc(&mut s, m, o, m.tls),
        Prober::Tcp | Prober::Unix if qr_facts::dialed(m, o) => {
            qr_facts::expect_info(&mut s, m, o);
            qr_facts::failed_due_to(&mut s, m, o);
        }
        Prober::Tcp | Prober::Unix | Prober::Dns => {}
        Prober::Icmp => crate::icmp_module::metrics(&mut s, o),
    }
    // blackbox_exporter's `chooseProtocol` registers both gauges before it resolves: a target
    // it finds no address for (none at all, or none of the family required) leaves them 0.
    // The dns prober's registers them always, so they stand at 0 when its server has no address.
    let unresolved = (o.reason == Reason::Dns && o.http_redirects == 0 && m.prober != Prober::Unix)
        || m.prober == Prober::Dns;
    let ip = o.peer.map(|p| p.ip());
    if ip.is_some() || unresolved {
        gauge(
            &mut s,
            "probe_ip_addr_hash",
            "Specifies the hash of IP address. It's useful to detect if the IP address changes.",
            ip.map_or(0, ip_hash),
        );
        gauge(
            &mut s,
            "probe_ip_protocol",
            "Specifies whether probe ip protocol is IP4 or IP6",
            ip.map_or(0, |ip| if prober::IpFamily::is_v6(ip) { 6 } else { 4 }),
        );
    }
    facts::ssl(&mut s, m, o);
    gauge(
        &mut s,
        "probe_success",
        "Displays whether or not the probe was a success",
        u8::from(success),
    );
    facts::tls_cipher(&mut s, m, o);
    facts::tls_version(&mut s, m, o);
    s
}

/// The HTTP prober's own metrics (`probe_http_*` and `probe_failed_due_to_regex`), as
/// blackbox_exporter v0.28.0 sets them: without a response (the last request failed) the
/// response's are 0 (`&http.Response{}`); a redirect its `CheckRedirect` refused (not
/// followed, or one too many) counts, and its body is not read.
fn http_metrics(s: &mut String, m: &Module, o: &Outcome, verdict: Option<&(String, FailedBy)>) {
    let responded = facts::http_responded(o);
    let length = match o.http_content_length {
        _ if !responded => 0,
        Some(n) => i64::try_from(n).unwrap_or(i64::MAX),
        None => -1,
    };
    gauge(s, "probe_http_content_length", "Length of http content response", length);
    // The phases as blackbox_exporter splits them, summed over the redirect hops.
    let name = "probe_http_duration_seconds";
    gauge_family(s, name, "Duration of http request by phase, summed over all redirects");
    for (phase, v) in facts::http_phases(o) {
        // blackbox_exporter adds the first request's lookup only when it made one; later
        // requests' lookups (redirects) always.
        if phase == "resolve" && m.skip_resolve_phase && o.http_redirects == 0 {
            continue;
        }
        sample(s, name, &[("phase", phase)], v);
    }
    facts::last_modified(s, o);
    // Registered only for a module with a CEL expression, as blackbox_exporter does.
    if m.has_cel() {
        let cel = u8::from(verdict.is_some_and(|(_, by)| *by == FailedBy::Cel));
        gauge(s, "probe_failed_due_to_cel", crate::module::CEL_HELP, cel);
    }
    let regex = u8::from(verdict.is_some_and(|(_, by)| *by == FailedBy::Regex));
    gauge(s, "probe_failed_due_to_regex", "Indicates if probe failed due to regex", regex);
    let refused = o.reason == Reason::TooManyRedirects || m.redirect_not_followed(o);
    gauge(
        s,
        "probe_http_redirects",
        "The number of redirects",
        o.http_redirects + u32::from(refused),
    );
    let ssl = u8::from(facts::http_ssl(o));
    gauge(s, "probe_http_ssl", "Indicates if SSL was used for the final redirect", ssl);
    let status = o.http_status.filter(|_| responded).unwrap_or(0);
    gauge(s, "probe_http_status_code", "Response HTTP status code", status);
    // What `http.MaxBytesReader` lets through (at most the limit); nothing of a refused
    // redirect's body.
    let body = match m.body_size_limit {
        _ if m.redirect_not_followed(o) => 0,
        Some(l) => o.output_total.min(l),
        None => o.output_total,
    };
    gauge(s, "probe_http_uncompressed_body_length", "Length of uncompressed response body", body);
    // `{}` of `as_f64()` (1, 1.1, 2), written as text: the float formatting cost more.
    let version = match o.http_version {
        Some(prober::HttpResponseVersion::Http10) if responded => "1",
        Some(prober::HttpResponseVersion::Http11) if responded => "1.1",
        Some(prober::HttpResponseVersion::Http2) if responded => "2",
        _ => "0",
    };
    gauge(s, "probe_http_version", "Returns the version of HTTP of the probe response", version);
}

#[cfg(test)]
mod tests {
    use super::*;
    /// The values blackbox_exporter v0.25.0's `ipHash` gives (computed with Go's hash/fnv).
    #[test]
    fn ip_hash_is_blackbox_exporters() {
        let h = |ip: &str| ip_hash(ip.parse().unwrap());
        assert_eq!(h("127.0.0.1"), 3_668_918_509);
        assert_eq!(h("::ffff:127.0.0.1"), 3_668_918_509);
        assert_eq!(h("10.1.2.3"), 2_037_296_051);
        assert_eq!(h("::1"), 1_751_717_746);
        assert_eq!(h("2001:db8::1"), 1_851_458_804);
    }
}
