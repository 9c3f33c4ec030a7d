//! A `prober: icmp` module (blackbox_exporter v0.28.0's `icmp:` section) as the library's ICMP
//! echo probe: one echo per probe, its options mapped onto [`IcmpSpec`], and the icmp
//! prober's metrics (`probe_icmp_duration_seconds{phase}`, `probe_icmp_reply_hop_limit`).
//!
//! Sockets: the library tries an unprivileged ICMP socket first and a raw one after, as
//! blackbox_exporter does on Linux; blackbox_exporter takes a raw socket at once for an IPv4
//! `dont_fragment` module (to write the IP header itself), where the library sets
//! don't-fragment on whichever socket it has (`IP_PMTUDISC_DO`).
//!
//! It takes the module's parts rather than the module, so that it stays out of the circle of
//! `module.rs` and the other probers' files.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use prober::{ProbeKind, ProbeSpec};
use prober_core::{AddressFilter, IcmpSpec, Outcome};

use crate::config::{Allow, IcmpModule};
use crate::facts::{gauge, gauge_family, sample};
use crate::ip_protocol::ip_family;
use crate::numbers::Secs;
use crate::target::{TargetError, Unprobeable};

/// blackbox_exporter's `DefaultICMPTTL`: its modules send with TTL (hop limit) 64 unless they
/// say `ttl: 0` (the system's default then).
const BLACKBOX_TTL: u8 = 64;

/// The module's spec from its `icmp:` section, refusing what an icmp module cannot take,
/// naming the field.
pub(crate) fn template(c: &IcmpModule, allow: Option<&Allow>) -> Result<ProbeSpec, String> {
    if allow.is_some_and(|a| !a.ports.is_empty()) {
        return Err("allow.ports does not apply to an icmp module (echoes have no port)".into());
    }
    // blackbox_exporter's own checks and words (config.go), then the library's bound.
    let ttl = match c.ttl {
        None => Some(BLACKBOX_TTL),
        Some(t) if t < 0 => return Err("icmp.ttl: \"ttl\" cannot be negative".into()),
        Some(t) if t > 255 => return Err("icmp.ttl: \"ttl\" cannot exceed 255".into()),
        Some(0) => None,
        Some(t) => u8::try_from(t).ok(),
    };
    // A payload of 0 is blackbox_exporter's default, its 28 bytes; Go's `make` would panic on
    // a negative size, so that is refused here.
    let payload_size = match c.payload_size {
        None | Some(0) => prober_core::DEFAULT_PAYLOAD_SIZE,
        Some(n) if n < 0 => return Err("icmp.payload_size: cannot be negative".into()),
        Some(n) => match usize::try_from(n) {
            Ok(n) if n <= prober_core::MAX_PAYLOAD_SIZE => n,
            _ => {
                return Err(format!(
                    "icmp.payload_size: {n} is over {} bytes",
                    prober_core::MAX_PAYLOAD_SIZE
                ));
            }
        },
    };
    let options = IcmpSpec {
        payload_size,
        dont_fragment: c.dont_fragment,
        ttl,
        ..IcmpSpec::new("localhost")
    };
    let mut spec = ProbeSpec::icmp_with(options).map_err(|e| format!("icmp: {e}"))?;
    let family = ip_family(c.preferred_ip_protocol.as_deref(), c.ip_protocol_fallback, "icmp")?;
    spec.set_ip_family(family).map_err(|e| format!("icmp.preferred_ip_protocol: {e}"))?;
    // Empty is none; so are the unspecified addresses blackbox_exporter binds when none is
    // given (they choose nothing). Text that is no address refuses the module, as the tcp
    // and http modules' `source_ip_address` (blackbox_exporter fails each probe instead).
    if let Some(text) = c.source_ip_address.as_deref().filter(|s| !s.is_empty()) {
        let ip: IpAddr = text
            .parse()
            .map_err(|_| format!("icmp.source_ip_address: {text:?} is not an IP address"))?;
        if !ip.is_unspecified() {
            spec.set_source_address(Some(ip))
                .map_err(|e| format!("icmp.source_ip_address: {e}"))?;
        }
    }
    Ok(spec)
}

/// The spec that pings `target` (a name or an IP address, as blackbox_exporter's resolver
/// takes it: no port, no brackets) with the module's `template` and allow-list within
/// `timeout`.
pub(crate) fn spec(
    template: &ProbeSpec,
    filter: Option<&Arc<AddressFilter>>,
    target: &str,
    timeout: Duration,
) -> Result<ProbeSpec, TargetError> {
    let mut spec = template.clone();
    // A failed probe, as blackbox_exporter gives up on these before it sends.
    let gives_up = |why: &str| {
        TargetError::Unprobeable(Unprobeable {
            message: format!("target {:?}: {why}", prober_core::redact_target(target)),
            resolved: true,
        })
    };
    if target.contains(['[', ']', '/', ' ']) || prober_core::validate_host(target).is_err() {
        return Err(gives_up("no such host"));
    }
    if let Some(f) = filter {
        precheck(f, target)?;
    }
    // A source address of the other family than an IP literal target: blackbox_exporter
    // cannot open its socket and fails the probe; the library refuses such a spec.
    if let (Some(src), Ok(dst)) = (spec.source_address(), target.parse::<IpAddr>()) {
        if src.is_ipv4() != dst.to_canonical().is_ipv4() {
            return Err(gives_up(&format!(
                "source_ip_address {src} is of the other address family"
            )));
        }
    }
    if let ProbeKind::Icmp(i) = &mut spec.kind {
        i.host = target.to_string();
    }
    if let Some(f) = filter {
        spec.set_address_filter(Some(f.clone())).map_err(|e| TargetError::Bad(e.to_string()))?;
    }
    spec.set_timeout(timeout.max(Duration::from_millis(1)))
        .map_err(|e| gives_up(&e.to_string()))?;
    Ok(spec)
}

/// The allow-list's verdict on the target before it is resolved: its name, or its address.
fn precheck(f: &AddressFilter, host: &str) -> Result<(), TargetError> {
    let denied = |why: String| TargetError::Denied(format!("target {host} is not allowed: {why}"));
    match host.parse::<IpAddr>() {
        Ok(ip) => f.check(None, SocketAddr::new(ip, 0)).map_err(|e| denied(e.to_string())),
        Err(_) if !f.host_allowed(host) => Err(denied(format!("host {host} is not allowed"))),
        Err(_) => Ok(()),
    }
}

/// The icmp prober's own metrics, in client_golang's order (by name): the three phases, which
/// blackbox_exporter registers before it resolves (0 for a phase not reached), and the reply's
/// hop limit, registered only when a reply matched and carried one.
pub(crate) fn metrics(s: &mut String, o: &Outcome) {
    let facts = o.icmp.as_deref().copied().unwrap_or_default();
    let resolved = o.peer.is_some();
    let rtt = facts.stats.first_rtt.filter(|_| o.result.is_ok());
    let name = "probe_icmp_duration_seconds";
    gauge_family(s, name, "Duration of icmp request by phase");
    let phases = [
        ("resolve", if resolved { facts.resolve } else { Duration::ZERO }),
        ("setup", if facts.socket.is_some() { facts.setup } else { Duration::ZERO }),
        ("rtt", rtt.unwrap_or_default()),
    ];
    for (phase, d) in phases {
        sample(s, name, &[("phase", phase)], Secs(d));
    }
    if let (Some(_), Some(hops)) = (rtt, facts.stats.reply_hop_limit) {
        gauge(s, "probe_icmp_reply_hop_limit", "Replied packet hop limit (TTL for ipv4)", hops);
    }
}

/// blackbox_exporter's icmp gauges for a target it could not resolve: the phases at 0.
pub(crate) fn unresolved_metrics(s: &mut String) {
    metrics(s, &Outcome::failure(prober::Reason::Dns, String::new()));
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::modules::Modules;

    fn icmp_of(module: &str) -> Result<prober_core::IcmpSpec, String> {
        let file = format!("modules:\n  i: {{prober: icmp, icmp: {module}}}\n");
        let m = Modules::parse(&file, Path::new("."))?;
        match &m.by_name["i"].template.kind {
            prober::ProbeKind::Icmp(i) => Ok(i.clone()),
            other => panic!("{other:?}"),
        }
    }

    /// blackbox_exporter's defaults (TTL 64, 28 bytes, ip6 with fallback) and each option.
    #[test]
    fn options_map_onto_the_echo() {
        let d = icmp_of("{}").unwrap();
        assert_eq!((d.ttl, d.payload_size, d.dont_fragment), (Some(64), 28, false));
        assert_eq!(d.connect.ip_family, prober::IpFamily::PreferV6);
        let i = icmp_of(
            "{ttl: 5, payload_size: 1200, dont_fragment: true, preferred_ip_protocol: ip4, \
             ip_protocol_fallback: false, source_ip_address: 127.0.0.1}",
        )
        .unwrap();
        assert_eq!((i.ttl, i.payload_size, i.dont_fragment), (Some(5), 1200, true));
        assert_eq!(i.connect.ip_family, prober::IpFamily::V4);
        assert_eq!(i.connect.source_address, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(icmp_of("{ttl: 0, payload_size: 0}").unwrap().ttl, None);
        assert_eq!(icmp_of("{source_ip_address: '0.0.0.0'}").unwrap().connect.source_address, None);
    }

    /// What blackbox_exporter refuses, and what this engine cannot take, refuses the file
    /// with the field's path.
    #[test]
    fn refused_options_name_their_field() {
        for (module, field) in [
            ("{ttl: -1}", "icmp.ttl: \"ttl\" cannot be negative"),
            ("{ttl: 256}", "icmp.ttl: \"ttl\" cannot exceed 255"),
            ("{payload_size: -1}", "icmp.payload_size"),
            ("{payload_size: 70000}", "icmp.payload_size"),
            ("{preferred_ip_protocol: ipv4}", "icmp.preferred_ip_protocol"),
            ("{source_ip_address: nowhere}", "icmp.source_ip_address"),
            ("{packets: 3}", "icmp: unknown field `packets`"),
            ("{ttl: abc}", "modules.i.icmp.ttl: invalid type"),
        ] {
            let e = icmp_of(module).unwrap_err();
            let named = e.contains("module \"i\"") || e.contains("modules.i.icmp");
            assert!(named && e.contains(field), "{module}: {e}");
        }
        let ports = "modules:\n  i: {prober: icmp, allow: {ports: [80]}}\n";
        let e = Modules::parse(ports, Path::new(".")).unwrap_err();
        assert!(e.contains("allow.ports"), "{e}");
    }
}
