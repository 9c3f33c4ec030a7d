//! A `/probe` target read as blackbox_exporter's probers read it. A target they cannot probe
//! is a failed probe there (200, `probe_success 0`), not a refused request: its HTTP prober
//! gives up when `url.Parse` refuses the URL, its TCP prober when `net.SplitHostPort` finds no
//! port, and both when the resolver finds no address for the host (an empty or malformed
//! name). [`Unprobeable`] says which, since the metrics written differ: the resolver's
//! (`probe_dns_lookup_time_seconds`, `probe_ip_protocol` and `probe_ip_addr_hash`, all 0) only
//! once it was asked.

use prober::{Url, UrlError};
use prober_core::{redact_target, target_userinfo};

/// Why a target cannot be probed with a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    /// Not a target this module can probe (400).
    Bad(String),
    /// Refused by the module's allow-list (403).
    Denied(String),
    /// A target blackbox_exporter's prober gives up on: a failed probe (200, `probe_success
    /// 0`), nothing connected to.
    Unprobeable(Unprobeable),
}

/// A target the module's prober gives up on before it connects: a failed probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unprobeable {
    /// Why, for the debug page.
    pub message: String,
    /// blackbox_exporter got as far as its resolver (which found nothing): the resolver's
    /// metrics are written, with zeros.
    pub resolved: bool,
}

impl Unprobeable {
    fn parse(target: &str, why: impl std::fmt::Display) -> Unprobeable {
        Unprobeable { message: Unprobeable::message(target, why), resolved: false }
    }

    pub(crate) fn resolve(target: &str, why: impl std::fmt::Display) -> Unprobeable {
        Unprobeable { message: Unprobeable::message(target, why), resolved: true }
    }

    /// The target quoted with its user information masked, and the reason, which may quote a
    /// part of the target (a host), with that user information left out wherever it appears.
    fn message(target: &str, why: impl std::fmt::Display) -> String {
        let mut why = why.to_string();
        if let Some(userinfo) = target_userinfo(target) {
            why = why.replace(userinfo, "xxxxx");
        }
        format!("target {:?}: {why}", redact_target(target))
    }
}

/// An HTTP module's URL: the target, `http://` in front unless it names a scheme.
///
/// A host Go's `url.Parse` takes but no resolver finds (none at all, as in `:0`, or a
/// malformed name) fails at the resolver; a URL Go refuses (an unclosed `[`) fails before it.
/// A port of 0 or above 65535, which Go would dial and be refused, is refused here before
/// anything is resolved (the library dials ports 1 to 65535 only).
pub(crate) fn http_url(target: &str) -> Result<Url, Unprobeable> {
    let parsed = if target.contains("://") {
        Url::parse(target)
    } else {
        Url::parse(&format!("http://{target}"))
    };
    parsed.map_err(|e| match &e {
        UrlError::MissingHost => Unprobeable::resolve(target, e),
        UrlError::InvalidHost(h) if !h.starts_with('[') => Unprobeable::resolve(target, e),
        _ => Unprobeable::parse(target, e),
    })
}

/// A TCP or gRPC module's `host:port` (an `http://` or `https://` in front is dropped).
///
/// No `:port` fails as `net.SplitHostPort` does, before the resolver; an empty or malformed
/// host at the resolver; a port that is not 1 to 65535 (which blackbox_exporter would dial
/// after resolving the host) before the resolver.
pub(crate) fn host_port(target: &str) -> Result<(String, u16), Unprobeable> {
    let t = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
        .unwrap_or(target);
    let (host, port) = t
        .rsplit_once(':')
        .ok_or_else(|| Unprobeable::parse(target, "missing port in address (host:port)"))?;
    let host = match host.strip_prefix('[') {
        Some(inner) => inner
            .strip_suffix(']')
            .ok_or_else(|| Unprobeable::parse(target, "missing ']' in address"))?,
        None => host,
    };
    if host.is_empty() {
        return Err(Unprobeable::resolve(target, "no host to resolve"));
    }
    prober_core::validate_host(host).map_err(|e| Unprobeable::resolve(target, e))?;
    let port: u16 = port
        .parse()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| Unprobeable::parse(target, format!("bad port {port:?} (1 to 65535)")))?;
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_blackbox_gives_up() {
        let resolved = |t: &str| host_port(t).unwrap_err().resolved;
        assert!(!resolved("127.0.0.1"), "no port: net.SplitHostPort");
        assert!(resolved(":0"), "no host: the resolver");
        assert!(resolved("a b:80"));
        assert!(!resolved("127.0.0.1:0"));
        assert!(!resolved("[::1:80"));
        assert_eq!(host_port("[::1]:80").unwrap(), ("::1".to_string(), 80));
        let resolved = |t: &str| http_url(t).unwrap_err().resolved;
        assert!(!resolved("http://[bad"), "url.Parse refuses it");
        assert!(resolved(":0"));
        assert!(resolved("http:///x"));
    }
}
