//! The answer for a target the module's prober gives up on before it connects
//! ([`Unprobeable`]): blackbox_exporter's metrics as they stand when its prober returns early,
//! the gauges it registered up to there at their zero values, in client_golang's order (by
//! name).

use std::time::Duration;

use crate::facts::{gauge, gauge_family, sample};
use crate::module::{Module, Prober};
use crate::numbers::Secs;
use crate::target::Unprobeable;

/// The metrics of a probe of `m` that failed on `u` after `d`.
pub(crate) fn render(m: &Module, u: &Unprobeable, d: Duration) -> String {
    let mut s = String::new();
    // The dns prober registers its own gauges before it reads the target.
    if m.prober == Prober::Dns {
        crate::dns_facts::before_lookup(&mut s, None);
    }
    if u.resolved {
        gauge(
            &mut s,
            "probe_dns_lookup_time_seconds",
            "Returns the time taken for probe dns lookup in seconds",
            0,
        );
    }
    if m.prober == Prober::Dns {
        crate::dns_facts::after_lookup(&mut s, m, None);
    }
    gauge(
        &mut s,
        "probe_duration_seconds",
        "Returns how long the probe took to complete in seconds",
        Secs(d),
    );
    match m.prober {
        Prober::Http => http(&mut s, m, u.resolved),
        Prober::Grpc => grpc(&mut s),
        Prober::Tcp | Prober::Unix | Prober::Dns => {}
        Prober::Icmp => crate::icmp_module::unresolved_metrics(&mut s),
    }
    if u.resolved {
        gauge(
            &mut s,
            "probe_ip_addr_hash",
            "Specifies the hash of IP address. It's useful to detect if the IP address changes.",
            0,
        );
        gauge(&mut s, "probe_ip_protocol", "Specifies whether probe ip protocol is IP4 or IP6", 0);
    }
    gauge(&mut s, "probe_success", "Displays whether or not the probe was a success", 0);
    s
}

/// `ProbeHTTP`'s gauges before its client runs: all 0; the duration by phase has the resolve
/// phase only once the resolver was asked (its other phases are made just before the request).
fn http(s: &mut String, m: &Module, resolved: bool) {
    if m.has_cel() {
        gauge(s, "probe_failed_due_to_cel", crate::module::CEL_HELP, 0);
    }
    gauge(s, "probe_failed_due_to_regex", "Indicates if probe failed due to regex", 0);
    gauge(s, "probe_http_content_length", "Length of http content response", 0);
    if resolved {
        let name = "probe_http_duration_seconds";
        gauge_family(s, name, "Duration of http request by phase, summed over all redirects");
        sample(s, name, &[("phase", "resolve")], 0u8);
    }
    gauge(s, "probe_http_redirects", "The number of redirects", 0);
    gauge(s, "probe_http_ssl", "Indicates if SSL was used for the final redirect", 0);
    gauge(s, "probe_http_status_code", "Response HTTP status code", 0);
    gauge(s, "probe_http_uncompressed_body_length", "Length of uncompressed response body", 0);
    gauge(s, "probe_http_version", "Returns the version of HTTP of the probe response", 0);
}

/// `ProbeGRPC`'s gauges before it dials: the resolve phase's pre-made 0, SSL and status 0, no
/// health response series.
fn grpc(s: &mut String) {
    let name = "probe_grpc_duration_seconds";
    gauge_family(s, name, "Duration of gRPC request by phase");
    sample(s, name, &[("phase", "resolve")], 0u8);
    gauge(s, "probe_grpc_ssl", "Indicates if SSL was used for the connection", 0);
    gauge(s, "probe_grpc_status_code", "Response gRPC status code", 0);
}
