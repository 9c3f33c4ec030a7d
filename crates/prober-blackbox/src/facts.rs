//! The metrics of the facts a run learns beyond its verdict (TLS session and certificates,
//! `Last-Modified`, gRPC's codes), as blackbox_exporter v0.25-v0.26 writes them: its names,
//! help texts, labels (sorted by name, as client_golang writes them) and values. `render`
//! calls each where its name falls in the alphabetical order of the answer.

use std::fmt::Write as _;

use prober::{Outcome, TlsVersion};

use crate::module::{Module, Prober};
use crate::numbers::Secs;

/// Go's zero `time.Time` as Unix seconds: what blackbox_exporter reports for the last chain's
/// expiry when no chain was verified (`insecure_skip_verify`).
const GO_ZERO_TIME: i64 = -62_135_596_800;

/// One gauge with its help and type lines, in the text format `/probe` answers in.
pub(crate) use prober_exposition::gauge;
/// A family's help and type lines and its samples, written by the exposition writer.
pub(crate) use prober_exposition::{Format, Kind, family, sample};

/// The help and type lines of a gauge family of `/probe`'s answer (the classic text format).
pub(crate) fn gauge_family(out: &mut String, name: &str, help: &'static str) {
    family(out, Format::Text, name, help, Kind::Gauge);
}

/// Whether the run's (last) TLS handshake completed: blackbox_exporter then has a connection
/// state to read (HTTP: only when a response came back over it; gRPC: only when the call
/// returned a response, see [`grpc_answered`]).
fn handshake_done(m: &Module, o: &Outcome) -> bool {
    let done = o.tls.as_ref().is_some_and(|t| t.version.is_some());
    match m.prober {
        Prober::Http => done && o.http_status.is_some(),
        Prober::Grpc => done && grpc_answered(o),
        Prober::Tcp | Prober::Unix | Prober::Dns => done,
        Prober::Icmp => false,
    }
}

/// Whether blackbox_exporter's HTTP prober has a response (`client.Do` returned one): the
/// last hop's head arrived. Not when the last request failed before it (refused, TLS
/// refused, a timeout), even after a redirect answered: Go's client then returns none.
pub(crate) fn http_responded(o: &Outcome) -> bool {
    o.http_status.is_some() && o.timings.first_byte.is_some()
}

/// blackbox_exporter's `probe_http_ssl` (and what `fail_if_ssl` / `fail_if_not_ssl` judge):
/// the response came over TLS (`resp.TLS != nil`), not merely a handshake was tried.
pub(crate) fn http_ssl(o: &Outcome) -> bool {
    http_responded(o)
        && (o.timings.tls.is_some() || o.tls.as_ref().is_some_and(|t| t.version.is_some()))
}

/// Whether blackbox_exporter's gRPC prober would have the server's peer to read the TLS
/// session from: grpc-go fills in the peer only for a call that returned a response (a health
/// message), so a failed call (a connection that failed, an error status such as NotFound)
/// has no TLS facts, even after a completed handshake.
fn grpc_answered(o: &Outcome) -> bool {
    o.grpc.serving_status.is_some()
}

/// Whether the gRPC run failed resolving the target's name (or finding an address of the
/// family asked for): blackbox_exporter's `ProbeGRPC` returns right after `chooseProtocol`
/// then, before it dials, with only the series it registered and never set.
fn grpc_unresolved(o: &Outcome) -> bool {
    o.reason == prober::Reason::Dns
}

/// `probe_grpc_duration_seconds`, `probe_grpc_healthcheck_response`, `probe_grpc_ssl` and
/// `probe_grpc_status_code` (in that order). `probe_grpc_duration_seconds{phase="check"}` is
/// the run after the name lookup; the status code is grpc-go's for what happened (OK once an
/// answer came; Unavailable for a failed connection; DeadlineExceeded at the deadline).
///
/// When the name did not resolve, blackbox_exporter returns before it dials: the resolve
/// phase's pre-made 0 and no check phase, no health response series at all, status code 0
/// and SSL 0. When the call failed, grpc-go gives no peer: SSL 0 whatever the handshake did.
pub(crate) fn grpc(out: &mut String, m: &Module, o: &Outcome, tls: bool) {
    let unresolved = grpc_unresolved(o);
    let resolve = o.timings.resolve.unwrap_or_default();
    let check = o.timings.total.saturating_sub(resolve);
    let name = "probe_grpc_duration_seconds";
    gauge_family(out, name, "Duration of gRPC request by phase");
    if unresolved {
        sample(out, name, &[("phase", "resolve")], 0u8);
    } else {
        sample(out, name, &[("phase", "check")], Secs(check));
        sample(out, name, &[("phase", "resolve")], Secs(resolve));
        let name = "probe_grpc_healthcheck_response";
        gauge_family(out, name, "Response HealthCheck response");
        // The four statuses of grpc.health.v1, sorted by name as client_golang writes them.
        for (value, status) in
            [(2, "NOT_SERVING"), (3, "SERVICE_UNKNOWN"), (1, "SERVING"), (0, "UNKNOWN")]
        {
            let on = u8::from(o.grpc.serving_status == Some(value));
            sample(out, name, &[("serving_status", status)], on);
        }
    }
    let ssl = tls && handshake_done(m, o);
    gauge(out, "probe_grpc_ssl", "Indicates if SSL was used for the connection", u8::from(ssl));
    let code = match o.grpc.status_code {
        _ if unresolved => 0,
        Some(code) => code,
        None if o.reason == prober::Reason::Timeout => 4,
        None => 14,
    };
    gauge(out, "probe_grpc_status_code", "Response gRPC status code", code);
}

/// `probe_http_last_modified_timestamp_seconds`, when the final response's `Last-Modified`
/// is a date Go's `http.ParseTime` reads.
pub(crate) fn last_modified(out: &mut String, o: &Outcome) {
    let value = o
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("last-modified"))
        .and_then(|(_, v)| parse_http_date(v));
    if let Some(t) = value {
        gauge(
            out,
            "probe_http_last_modified_timestamp_seconds",
            "Returns the Last-Modified HTTP response header in unixtime",
            t,
        );
    }
}

/// The phases of `probe_http_duration_seconds` (connect, processing, resolve, tls, transfer)
/// from the sums over the run's hops; without them (a run that never started a hop), zeros.
pub(crate) fn http_phases(o: &Outcome) -> [(&'static str, Secs); 5] {
    let p = o.http_phases.unwrap_or_default();
    [
        ("connect", Secs(p.connect)),
        ("processing", Secs(p.processing)),
        ("resolve", Secs(p.resolve)),
        ("tls", Secs(p.tls)),
        ("transfer", Secs(p.transfer)),
    ]
}

/// `probe_ssl_earliest_cert_expiry`, `probe_ssl_last_chain_expiry_timestamp_seconds` and
/// `probe_ssl_last_chain_info`.
///
/// The earliest expiry is over every certificate the server sent, reported whenever one was
/// seen (also when verification then failed: an expired certificate shows here, where
/// blackbox_exporter reports nothing); gRPC modules always have it, as blackbox_exporter
/// registers it for them, but only from a call that returned a response (grpc-go's peer), else
/// 0. The other two need a completed handshake; gRPC has no chain expiry. Without a verified
/// chain (`insecure_skip_verify`) the chain's expiry is Go's zero time, as blackbox_exporter
/// reports it.
pub(crate) fn ssl(out: &mut String, m: &Module, o: &Outcome) {
    let earliest = o.tls.as_ref().and_then(|t| t.earliest_not_after).or(o.cert_not_after);
    let earliest = earliest.filter(|_| m.prober != Prober::Grpc || handshake_done(m, o));
    match (earliest, m.prober) {
        (Some(t), _) => gauge(
            out,
            "probe_ssl_earliest_cert_expiry",
            "Returns last SSL chain expiry in unixtime",
            t,
        ),
        (None, Prober::Grpc) => gauge(
            out,
            "probe_ssl_earliest_cert_expiry",
            "Returns last SSL chain expiry in unixtime",
            0,
        ),
        (None, _) => {}
    }
    let Some(t) = o.tls.as_deref().filter(|_| handshake_done(m, o)) else { return };
    if m.prober != Prober::Grpc {
        gauge(
            out,
            "probe_ssl_last_chain_expiry_timestamp_seconds",
            "Returns last SSL chain expiry in timestamp",
            t.verified_chain_not_after.unwrap_or(GO_ZERO_TIME),
        );
    }
    if let Some(leaf) = &t.leaf {
        let name = "probe_ssl_last_chain_info";
        gauge_family(out, name, "Contains SSL leaf certificate information");
        let labels = [
            ("fingerprint_sha256", leaf.fingerprint_sha256.as_str()),
            ("issuer", leaf.issuer.as_str()),
            ("serialnumber", leaf.serial.as_str()),
            ("subject", leaf.subject.as_str()),
            ("subjectalternative", &leaf.dns_names.join(",")),
        ];
        sample(out, name, &labels, 1u8);
    }
}

/// The debug log's line on the last handshake: version, suite, and the leaf certificate.
pub(crate) fn explain_tls(log: &mut String, t: &prober::TlsInfo) {
    let version = match t.version {
        Some(TlsVersion::Tls12) => "TLS 1.2",
        Some(TlsVersion::Tls13) => "TLS 1.3",
        None => "none (not completed)",
    };
    let leaf = t.leaf.as_ref();
    let _ = writeln!(
        log,
        "TLS handshake: version={version} cipher_suite={} subject={:?} issuer={:?} earliest_cert_expiry={} verified_chain_expiry={}",
        t.cipher_suite.unwrap_or("-"),
        leaf.map_or("", |l| l.subject.as_str()),
        leaf.map_or("", |l| l.issuer.as_str()),
        t.earliest_not_after.map_or_else(|| "-".to_string(), |v| v.to_string()),
        t.verified_chain_not_after.map_or_else(|| "-".to_string(), |v| v.to_string()),
    );
}

/// `probe_tls_cipher_info{cipher="TLS_AES_128_GCM_SHA256"} 1`: the suite a completed
/// handshake negotiated, named as Go's `tls.CipherSuiteName` names it (rustls's `TLS13_` is
/// Go's `TLS_`; TLS 1.2's names are the same). blackbox_exporter v0.28.0 writes it for HTTP
/// only (its tcp and grpc probers do not register it), when the response came over TLS.
pub(crate) fn tls_cipher(out: &mut String, m: &Module, o: &Outcome) {
    if m.prober != Prober::Http || !handshake_done(m, o) {
        return;
    }
    let Some(suite) = o.tls.as_ref().and_then(|t| t.cipher_suite) else { return };
    let cipher = match suite.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => suite.to_string(),
    };
    let name = "probe_tls_cipher_info";
    gauge_family(out, name, "Returns the TLS cipher negotiated during handshake");
    sample(out, name, &[("cipher", &cipher)], 1u8);
}

/// `probe_tls_version_info{version="TLS 1.3"} 1` after a completed handshake.
pub(crate) fn tls_version(out: &mut String, m: &Module, o: &Outcome) {
    let Some(v) = o.tls.as_ref().and_then(|t| t.version).filter(|_| handshake_done(m, o)) else {
        return;
    };
    let version = match v {
        TlsVersion::Tls12 => "TLS 1.2",
        TlsVersion::Tls13 => "TLS 1.3",
    };
    let name = "probe_tls_version_info";
    gauge_family(out, name, "Returns the TLS version used or NaN when unknown");
    sample(out, name, &[("version", version)], 1u8);
}

/// An HTTP date as Go's `http.ParseTime` reads it (seconds since the epoch): IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) or asctime
/// (`Sun Nov  6 08:49:37 1994`).
pub(crate) fn parse_http_date(v: &str) -> Option<i64> {
    let words: Vec<&str> = v.split_whitespace().collect();
    let (day, month, year, time) = match words.as_slice() {
        // IMF-fixdate: "Sun," "06" "Nov" "1994" "08:49:37" "GMT"
        [wd, d, mon, y, t, "GMT"] if wd.ends_with(',') && y.len() == 4 => (*d, *mon, year(y)?, *t),
        // RFC 850: "Sunday," "06-Nov-94" "08:49:37" "GMT" (any zone name, read as UTC)
        [wd, date, t, _zone] if wd.ends_with(',') => {
            let mut parts = date.split('-');
            let (d, mon, y) = (parts.next()?, parts.next()?, parts.next()?);
            if parts.next().is_some() || y.len() != 2 {
                return None;
            }
            // Go's two-digit years: 69-99 are 19xx, 00-68 are 20xx.
            let yy = year(y)?;
            (d, mon, if yy >= 69 { 1900 + yy } else { 2000 + yy }, *t)
        }
        // asctime: "Sun" "Nov" "6" "08:49:37" "1994"
        [_wd, mon, d, t, y] if y.len() == 4 => (*d, *mon, year(y)?, *t),
        _ => return None,
    };
    const MONTHS: [&str; 12] =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let day: i64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok().filter(|_| p.len() == 2));
    let (h, mi, s) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    Some(prober_core::days_from_civil(year, month, day) * 86_400 + h * 3600 + mi * 60 + s)
}

fn year(y: &str) -> Option<i64> {
    y.bytes().all(|b| b.is_ascii_digit()).then(|| y.parse().ok())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_as_go_reads_them() {
        // RFC 9110's example, in its three forms.
        for v in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date(v), Some(784_111_777), "{v}");
        }
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(parse_http_date("Wednesday, 01-Jan-25 00:00:00 GMT"), Some(1_735_689_600));
        for bad in [
            "",
            "yesterday",
            "Sun, 06 Nov 1994 08:49:37 CET",
            "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov +994 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
    }
}
