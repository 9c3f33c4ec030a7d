//! A `prober: dns` module as the library's DNS probe (blackbox_exporter v0.28.0's
//! `prober/dns.go` and its `DNSProbe` defaults: type ANY, class IN, UDP, recursion desired,
//! NOERROR only), and the server a target names.

use std::path::Path;

use prober::ProbeSpec;
use prober_core::{DnsRrChecks, DnsTransport, ProbeKind};
use prober_dns::render::{class_from_name, type_from_name};
use prober_dns::validate::{patterns, rcode_from_name};

use crate::config::{DnsModule, DnsRrValidator};
use crate::ip_protocol::ip_family;
use crate::module::{Module, Prober};
use crate::options::tls_options;
use crate::target::Unprobeable;

/// The query type when the module names none: blackbox_exporter asks for ANY.
const TYPE_ANY: u16 = 255;

/// Fills `m` from the module's `dns:` section.
pub(crate) fn dns(m: &mut Module, d: &DnsModule, base: &Path) -> Result<(), String> {
    let name = d.query_name.as_deref().filter(|n| !n.is_empty());
    let name = name.ok_or("dns.query_name: query name must be set for DNS module")?;
    // blackbox_exporter runs DNS over TLS only over `tcp` (and fails each probe of a module
    // that says otherwise): refused here at start.
    if d.dns_over_tls && d.transport_protocol.as_deref() != Some("tcp") {
        return Err("dns.dns_over_tls: needs transport_protocol: tcp".into());
    }
    let mut spec =
        ProbeSpec::dns("localhost", 53, name).map_err(|e| format!("dns.query_name: {e}"))?;
    let family = ip_family(d.preferred_ip_protocol.as_deref(), d.ip_protocol_fallback, "dns")?;
    spec.set_ip_family(family).map_err(|e| e.to_string())?;
    if let Some(source) = d.source_ip_address.as_deref().filter(|s| !s.is_empty()) {
        spec.set_source_address_text(source).map_err(|e| format!("dns.source_ip_address: {e}"))?;
    }
    let ProbeKind::Dns(q) = &mut spec.kind else { return Err("not a DNS spec".into()) };
    q.transport = match d.transport_protocol.as_deref() {
        None | Some("" | "udp") => DnsTransport::Udp,
        Some("tcp") => DnsTransport::Tcp,
        Some(other) => {
            return Err(format!("dns.transport_protocol: {other:?}: expected udp or tcp"));
        }
    };
    q.query_type = match d.query_type.as_deref() {
        None | Some("") => TYPE_ANY,
        Some(t) => type_from_name(t).ok_or_else(|| format!("query type '{t}' is not valid"))?,
    };
    q.query_class = match d.query_class.as_deref() {
        None | Some("") => 1,
        Some(c) => class_from_name(c).ok_or_else(|| format!("query class '{c}' is not valid"))?,
    };
    q.recursion_desired = d.recursion_desired.unwrap_or(true);
    // blackbox_exporter reads the names at each probe and fails it on one miekg/dns does not
    // know (after the query, whose gauges stand): kept for the verdict ([`judge`]).
    if let Some(names) = &d.valid_rcodes {
        q.valid_rcodes = names.iter().filter_map(|n| rcode_from_name(n)).collect();
        m.dns_unknown_rcode = names.iter().find(|n| rcode_from_name(n).is_none()).cloned();
    }
    q.validate_answer = rr_checks("dns.validate_answer_rrs", &d.validate_answer_rrs)?;
    q.validate_authority = rr_checks("dns.validate_authority_rrs", &d.validate_authority_rrs)?;
    q.validate_additional = rr_checks("dns.validate_additional_rrs", &d.validate_additional_rrs)?;
    if d.dns_over_tls {
        // The name verified is `tls_config.server_name`, else the target's host, as there.
        let tls = tls_options(d.tls_config.as_ref(), base).map_err(|e| format!("dns.{e}"))?;
        spec.set_tls(tls).map_err(|e| format!("dns.tls_config: {e}"))?;
    }
    m.template = spec;
    Ok(())
}

/// One section's `DNSRRValidator`, its expressions compiled at start (blackbox_exporter
/// compiles them at each probe and fails it on a bad one).
fn rr_checks(field: &str, v: &DnsRrValidator) -> Result<DnsRrChecks, String> {
    let list = |name: &str, l: &[String]| patterns(l).map_err(|e| format!("{field}.{name}: {e}"));
    Ok(DnsRrChecks {
        fail_if_matches: list("fail_if_matches_regexp", &v.fail_if_matches_regexp)?,
        fail_if_all_match: list("fail_if_all_match_regexp", &v.fail_if_all_match_regexp)?,
        fail_if_not_matches: list("fail_if_not_matches_regexp", &v.fail_if_not_matches_regexp)?,
        fail_if_none_matches: list("fail_if_none_matches_regexp", &v.fail_if_none_matches_regexp)?,
    })
}

/// The server a DNS module's target names, as `ProbeDNS` reads it: Go's `net.SplitHostPort`,
/// else the whole target with port 53, 853 for DNS over TLS (an IPv6 address may be written
/// bare: `::1`).
///
/// # Errors
///
/// A port that is not a number from 1 to 65535, or an empty host: blackbox_exporter's dial
/// or its resolver fails there, before any query.
pub(crate) fn server(target: &str, tls: bool) -> Result<(String, u16), Unprobeable> {
    let (host, port) = match split_host_port(target) {
        Some((host, port)) => (host, port),
        None => (target, if tls { "853" } else { "53" }),
    };
    if host.is_empty() {
        return Err(Unprobeable::resolve(target, "no server address"));
    }
    match port.parse::<u16>() {
        Ok(p) if p != 0 => Ok((host.to_string(), p)),
        _ => Err(Unprobeable::resolve(target, format!("invalid port {port:?}"))),
    }
}

/// Go's `net.SplitHostPort`: `host:port` or `[host]:port`; `None` where Go returns an error
/// (no port, too many colons, brackets out of place).
fn split_host_port(s: &str) -> Option<(&str, &str)> {
    let colon = s.rfind(':')?;
    let (host, port) = (&s[..colon], &s[colon + 1..]);
    let host = if let Some(inner) = host.strip_prefix('[') {
        let inner = inner.strip_suffix(']')?;
        if inner.contains(['[', ']']) {
            return None;
        }
        inner
    } else {
        if host.contains([':', '[', ']']) {
            return None;
        }
        host
    };
    if port.contains(['[', ']']) {
        return None;
    }
    Some((host, port))
}

impl Module {
    /// blackbox_exporter's checks of a DNS answer the library does not make: a `valid_rcodes`
    /// name miekg/dns does not know fails every probe that got an answer.
    pub(crate) fn judge_dns(&self, o: &prober_core::Outcome) -> Option<String> {
        if self.prober != Prober::Dns {
            return None;
        }
        let answered = o.dns.as_ref().is_some_and(|f| f.query_succeeded);
        let unknown = self.dns_unknown_rcode.as_deref().filter(|_| answered)?;
        Some(format!("Invalid rcode {unknown:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `net.SplitHostPort` and `ProbeDNS`'s fallback to the whole target on port 53.
    #[test]
    fn servers_as_blackbox_reads_them() {
        let ok = |t: &str| server(t, false).unwrap();
        assert_eq!(ok("127.0.0.1"), ("127.0.0.1".into(), 53));
        assert_eq!(ok("127.0.0.1:5353"), ("127.0.0.1".into(), 5353));
        assert_eq!(ok("[::1]:54"), ("::1".into(), 54));
        assert_eq!(ok("::1"), ("::1".into(), 53));
        assert_eq!(ok("ns.example"), ("ns.example".into(), 53));
        assert_eq!(server("ns.example", true).unwrap(), ("ns.example".into(), 853));
        assert_eq!(server("ns.example:8853", true).unwrap(), ("ns.example".into(), 8853));
        assert!(server("127.0.0.1:x", false).is_err());
        assert!(server("127.0.0.1:0", false).is_err());
        assert!(server(":53", false).is_err());
    }
}
