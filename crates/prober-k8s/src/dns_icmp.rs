//! The watch-file probe kinds beyond Kubernetes' four (issue 36): `dns:` (a query to a
//! server, checked as blackbox_exporter's dns prober checks it, its options named after
//! blackbox's in camelCase) and `icmp:` (echo requests, with ping's count and interval, and a
//! loss threshold). Read here and built into specs through the library's constructors; the
//! target's connection fields (`ipFamily`, `sourceAddress`, `netns`) apply through its
//! setters, as for the other kinds.

use std::time::Duration;

use prober::{DnsRrChecks, DnsTransport, IcmpSocket, IcmpSpec, Pattern, ProbeKind, ProbeSpec};
use serde::Deserialize;

use crate::ints::opt_int;

/// `dns:` of a probe.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct DnsAction {
    /// The server (default: the target's host, `--host`).
    pub host: Option<String>,
    /// The server's port (default 53; 853 with `transport: tls`).
    #[serde(default, deserialize_with = "opt_int")]
    pub port: Option<i64>,
    /// The name asked about (blackbox's `query_name`).
    pub name: String,
    /// The query type (default `A`; blackbox's `query_type`).
    #[serde(rename = "type")]
    pub query_type: Option<String>,
    /// The query class (default `IN`).
    pub class: Option<String>,
    /// `udp` (default), `tcp` or `tls` (DNS over TLS; the probe's `tls:` block sets options).
    pub transport: Option<String>,
    /// The RD bit (default true).
    pub recursion_desired: Option<bool>,
    /// EDNS0 with this UDP payload size (default none).
    #[serde(default, deserialize_with = "opt_int")]
    pub edns_udp_size: Option<i64>,
    /// Ask again over TCP when the UDP answer is truncated.
    #[serde(default)]
    pub tcp_on_truncation: bool,
    /// The rcodes that pass (default `[NOERROR]`).
    #[serde(default)]
    pub valid_rcodes: Vec<String>,
    pub validate_answer_rrs: Option<RrChecksField>,
    pub validate_authority_rrs: Option<RrChecksField>,
    pub validate_additional_rrs: Option<RrChecksField>,
}

/// One section's checks, blackbox's `validate_*_rrs`: regular expressions over each record's
/// text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct RrChecksField {
    #[serde(default)]
    fail_if_matches_regexp: Vec<String>,
    #[serde(default)]
    fail_if_all_match_regexp: Vec<String>,
    #[serde(default)]
    fail_if_not_matches_regexp: Vec<String>,
    #[serde(default)]
    fail_if_none_matches_regexp: Vec<String>,
}

/// `icmp:` of a probe.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct IcmpAction {
    /// The host pinged (default: the target's host, `--host`).
    pub host: Option<String>,
    /// Echo requests per run (default 1).
    #[serde(default, deserialize_with = "opt_int")]
    pub packets: Option<i64>,
    /// Milliseconds between two requests (default 1000).
    #[serde(default, deserialize_with = "opt_int")]
    pub interval_milliseconds: Option<i64>,
    /// Bytes of data per request (default 28, blackbox's).
    #[serde(default, deserialize_with = "opt_int")]
    pub payload_size: Option<i64>,
    #[serde(default)]
    pub dont_fragment: bool,
    /// TTL or hop limit of the requests (default: the system's).
    #[serde(default, deserialize_with = "opt_int")]
    pub ttl: Option<i64>,
    /// The run fails when more than this percentage got no reply (default 100: only when
    /// none did).
    #[serde(default, deserialize_with = "opt_int")]
    pub max_loss_percent: Option<i64>,
    /// `auto` (default), `unprivileged` or `raw`.
    pub socket: Option<String>,
}

/// An integer field within `lo..=hi`, or a message naming field `f`.
fn bounded(f: &str, v: Option<i64>, lo: i64, hi: i64) -> Result<Option<i64>, String> {
    match v {
        Some(n) if !(lo..=hi).contains(&n) => Err(format!("{f}: expected {lo} to {hi} (got {n})")),
        other => Ok(other),
    }
}

/// The `dns` probe at path `p` (`readinessProbe`); `host` is the target's default host.
pub(crate) fn dns_spec(p: &str, default_host: &str, d: &DnsAction) -> Result<ProbeSpec, String> {
    let f = format!("{p}.dns");
    let host = d.host.as_deref().filter(|h| !h.is_empty()).unwrap_or(default_host);
    let tls = d.transport.as_deref() == Some("tls");
    let default_port = if tls { 853 } else { 53 };
    let port = bounded(&format!("{f}.port"), d.port, 1, 65535)?.unwrap_or(default_port);
    let mut spec = ProbeSpec::dns(host, port, &d.name).map_err(|e| format!("{f}: {e}"))?;
    if tls {
        // A connection option, through its setter (which selects the TLS transport).
        let set = spec.set_tls(prober::TlsOptions::default());
        set.map_err(|e| format!("{f}.transport: {e}"))?;
    }
    let ProbeKind::Dns(s) = &mut spec.kind else { unreachable!("a DNS spec") };
    if let Some(t) = &d.query_type {
        s.query_type = prober_dns::render::type_from_name(&t.to_ascii_uppercase())
            .ok_or_else(|| format!("{f}.type: unknown type {t:?} (A, AAAA, MX, TXT, ...)"))?;
    }
    if let Some(c) = &d.class {
        s.query_class = prober_dns::render::class_from_name(&c.to_ascii_uppercase())
            .ok_or_else(|| format!("{f}.class: unknown class {c:?} (IN, CH, HS, ANY)"))?;
    }
    s.transport = match d.transport.as_deref() {
        None | Some("udp") => DnsTransport::Udp,
        Some("tcp") => DnsTransport::Tcp,
        Some("tls") => DnsTransport::Tls,
        Some(other) => {
            return Err(format!("{f}.transport: expected udp, tcp or tls (got {other:?})"));
        }
    };
    s.recursion_desired = d.recursion_desired.unwrap_or(true);
    let edns = bounded(&format!("{f}.ednsUdpSize"), d.edns_udp_size, 512, 65535)?;
    s.edns_udp_size = edns.map(|n| n as u16);
    s.tcp_on_truncation = d.tcp_on_truncation;
    for (i, name) in d.valid_rcodes.iter().enumerate() {
        let code = prober_dns::validate::rcode_from_name(&name.to_ascii_uppercase())
            .ok_or_else(|| format!("{f}.validRcodes[{i}]: unknown rcode {name:?}"))?;
        s.valid_rcodes.push(code);
    }
    for (field, given, slot) in [
        ("validateAnswerRrs", &d.validate_answer_rrs, &mut s.validate_answer),
        ("validateAuthorityRrs", &d.validate_authority_rrs, &mut s.validate_authority),
        ("validateAdditionalRrs", &d.validate_additional_rrs, &mut s.validate_additional),
    ] {
        if let Some(c) = given {
            *slot = rr_checks(&format!("{f}.{field}"), c)?;
        }
    }
    Ok(spec)
}

fn rr_checks(f: &str, c: &RrChecksField) -> Result<DnsRrChecks, String> {
    let compile = |name: &str, list: &[String]| -> Result<Vec<Pattern>, String> {
        let each = list.iter().enumerate();
        each.map(|(i, re)| Pattern::new(re).map_err(|e| format!("{f}.{name}[{i}]: {e}"))).collect()
    };
    Ok(DnsRrChecks {
        fail_if_matches: compile("failIfMatchesRegexp", &c.fail_if_matches_regexp)?,
        fail_if_all_match: compile("failIfAllMatchRegexp", &c.fail_if_all_match_regexp)?,
        fail_if_not_matches: compile("failIfNotMatchesRegexp", &c.fail_if_not_matches_regexp)?,
        fail_if_none_matches: compile("failIfNoneMatchesRegexp", &c.fail_if_none_matches_regexp)?,
    })
}

/// The `icmp` probe at path `p`; `host` is the target's default host.
pub(crate) fn icmp_spec(p: &str, default_host: &str, a: &IcmpAction) -> Result<ProbeSpec, String> {
    let f = format!("{p}.icmp");
    let host = a.host.as_deref().filter(|h| !h.is_empty()).unwrap_or(default_host);
    let mut s = IcmpSpec::new(host);
    let max_packets = i64::from(prober::MAX_PACKETS);
    if let Some(n) = bounded(&format!("{f}.packets"), a.packets, 1, max_packets)? {
        s.packets = n as u32;
    }
    let interval =
        bounded(&format!("{f}.intervalMilliseconds"), a.interval_milliseconds, 2, 3_600_000)?;
    if let Some(ms) = interval {
        s.interval = Duration::from_millis(ms as u64);
    }
    let max_payload = prober::MAX_PAYLOAD_SIZE as i64;
    if let Some(n) = bounded(&format!("{f}.payloadSize"), a.payload_size, 0, max_payload)? {
        s.payload_size = n as usize;
    }
    s.dont_fragment = a.dont_fragment;
    s.ttl = bounded(&format!("{f}.ttl"), a.ttl, 1, 255)?.map(|n| n as u8);
    if let Some(n) = bounded(&format!("{f}.maxLossPercent"), a.max_loss_percent, 0, 100)? {
        s.max_loss_percent = n as u8;
    }
    s.socket = match a.socket.as_deref() {
        None | Some("auto") => IcmpSocket::Auto,
        Some("unprivileged") => IcmpSocket::Unprivileged,
        Some("raw") => IcmpSocket::Raw,
        Some(other) => {
            return Err(format!("{f}.socket: expected auto, unprivileged or raw (got {other:?})"));
        }
    };
    ProbeSpec::icmp_with(s).map_err(|e| format!("{f}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dns(yaml: &str) -> Result<ProbeSpec, String> {
        dns_spec("readinessProbe", "127.0.0.1", &serde_norway::from_str(yaml).unwrap())
    }

    fn icmp(yaml: &str) -> Result<ProbeSpec, String> {
        icmp_spec("livenessProbe", "127.0.0.1", &serde_norway::from_str(yaml).unwrap())
    }

    #[test]
    fn dns_fields_reach_the_spec() {
        let spec = dns("{name: a.test, port: 5353, type: aaaa, transport: tcp, recursionDesired: false, validRcodes: [NOERROR, NXDOMAIN], validateAnswerRrs: {failIfNoneMatchesRegexp: ['AAAA']}}").unwrap();
        let ProbeKind::Dns(d) = &spec.kind else { panic!("dns") };
        assert_eq!((d.host.as_str(), d.port, d.query_type), ("127.0.0.1", 5353, 28));
        assert_eq!((d.transport, d.recursion_desired), (DnsTransport::Tcp, false));
        assert_eq!(
            (d.valid_rcodes.as_slice(), d.validate_answer.fail_if_none_matches.len()),
            (&[0, 3][..], 1)
        );
        for (yaml, want) in [
            ("{name: a.test, port: 0}", "readinessProbe.dns.port: expected 1 to 65535 (got 0)"),
            ("{name: a.test, type: AX}", "readinessProbe.dns.type: unknown type \"AX\""),
            (
                "{name: a.test, transport: quic}",
                "readinessProbe.dns.transport: expected udp, tcp or tls",
            ),
            (
                "{name: a.test, validRcodes: [OK]}",
                "readinessProbe.dns.validRcodes[0]: unknown rcode",
            ),
            ("{name: 'a..b'}", "readinessProbe.dns: "),
            (
                "{name: a, validateAuthorityRrs: {failIfMatchesRegexp: ['(']}}",
                "readinessProbe.dns.validateAuthorityRrs.failIfMatchesRegexp[0]: ",
            ),
        ] {
            let e = dns(yaml).unwrap_err();
            assert!(e.starts_with(want), "{yaml}: {e}");
        }
    }

    #[test]
    fn icmp_fields_reach_the_spec() {
        let spec = icmp("{host: '::1', packets: 3, intervalMilliseconds: 10, payloadSize: 56, ttl: 9, maxLossPercent: 40, socket: raw}").unwrap();
        let ProbeKind::Icmp(i) = &spec.kind else { panic!("icmp") };
        assert_eq!((i.host.as_str(), i.packets, i.interval), ("::1", 3, Duration::from_millis(10)));
        assert_eq!(
            (i.payload_size, i.ttl, i.max_loss_percent, i.socket),
            (56, Some(9), 40, IcmpSocket::Raw)
        );
        for (yaml, want) in [
            ("{packets: 0}", "livenessProbe.icmp.packets: expected 1 to 10000 (got 0)"),
            ("{intervalMilliseconds: 1}", "livenessProbe.icmp.intervalMilliseconds: expected 2 to"),
            ("{ttl: 256}", "livenessProbe.icmp.ttl: expected 1 to 255 (got 256)"),
            ("{socket: any}", "livenessProbe.icmp.socket: expected auto, unprivileged or raw"),
            ("{host: 'a b'}", "livenessProbe.icmp: "),
        ] {
            let e = icmp(yaml).unwrap_err();
            assert!(e.starts_with(want), "{yaml}: {e}");
        }
    }
}
