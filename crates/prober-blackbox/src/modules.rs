//! Reading a module file: the YAML, bounded, into [`Modules`], each module built by its
//! prober's translation (`http_module`, `tcp_module`, `grpc_module`, `unix_module`), a file
//! with one bad module refused whole, naming the module and the field.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use prober::ProbeSpec;
use prober_core::AddressFilter;

use crate::config::{self, File, RawModule};
use crate::module::{Module, Prober};

/// The modules of a file, by name.
#[derive(Debug, Default)]
pub struct Modules {
    /// The modules, by name.
    pub by_name: BTreeMap<String, Module>,
    /// The file as `/config` shows it (YAML, credentials as `<secret>`).
    shown: String,
}

/// The largest module file read (1 MiB): a module file is a few kilobytes.
pub const MAX_FILE_LEN: usize = 1 << 20;

impl Modules {
    /// Reads a module file's text; `base` is the directory relative paths are read from.
    ///
    /// # Errors
    ///
    /// The first problem, naming the module and the field: `module "x": prober: unknown
    /// prober "grpc_probe"`.
    pub fn parse(text: &str, base: &Path) -> Result<Modules, String> {
        if text.len() > MAX_FILE_LEN {
            return Err(format!("the file is larger than {MAX_FILE_LEN} bytes"));
        }
        prober_yaml::check(text)?;
        // serde quotes a value it cannot take, and a credential written in the wrong place
        // must not reach a log or a `/-/reload` answer.
        let file: File = serde_norway::from_str(text)
            .map_err(|e| prober_core::redact_quoted_values(&e.to_string()))?;
        // Shown as read (what was written, no defaults filled in), through the config types'
        // own redaction of credentials.
        let shown = serde_norway::to_string(&file).map_err(|e| e.to_string())?;
        let mut by_name = BTreeMap::new();
        for (name, raw) in file.modules {
            let m = build(&name, raw, base).map_err(|e| format!("module {name:?}: {e}"))?;
            by_name.insert(name, m);
        }
        Ok(Modules { by_name, shown })
    }

    /// The configuration as blackbox_exporter's `/config` shows it: YAML, every credential
    /// (`password`, `bearer_token`, `credentials`, a credential header's value) as `<secret>`.
    pub fn config_yaml(&self) -> &str {
        if self.shown.is_empty() { "modules: {}\n" } else { &self.shown }
    }
}

fn build(name: &str, raw: RawModule, base: &Path) -> Result<Module, String> {
    let shown = serde_norway::to_value(&raw).map_err(|e| e.to_string())?;
    let prober = match raw.prober.as_str() {
        "http" => Prober::Http,
        "tcp" => Prober::Tcp,
        "grpc" => Prober::Grpc,
        "unix" => Prober::Unix,
        "icmp" => Prober::Icmp,
        "dns" => Prober::Dns,
        "" => return Err("prober: missing (http, tcp, grpc, unix, icmp or dns)".into()),
        other => return Err(format!("prober: unknown prober {other:?}")),
    };
    let timeout = match raw.timeout.as_deref() {
        None => None,
        // Go's time.ParseDuration, as blackbox_exporter reads it; a negative one is refused.
        Some(t) => match prober_yaml::duration::parse_go(t) {
            Ok(0) => None,
            Ok(n) if n > 0 => Some(Duration::from_nanos(n.unsigned_abs())),
            Ok(_) => return Err(format!("timeout: {t:?} is negative")),
            Err(_) => return Err(format!("timeout: {t:?} is not a duration (5s, 1m30s, 500ms)")),
        },
    };
    let paths = crate::unix_module::allowed_paths(prober, raw.allow.as_ref())?;
    let filter = match &raw.allow {
        None => None,
        Some(_) if prober == Prober::Unix => None,
        Some(a) => {
            let ports: Vec<String> = a
                .ports
                .iter()
                .map(|p| match p {
                    config::PortItem::One(n) => n.to_string(),
                    config::PortItem::Text(t) => t.clone(),
                })
                .collect();
            let f = AddressFilter::parse(&a.hosts, &a.networks, &ports)
                .map_err(|e| format!("allow: {e}"))?;
            Some(Arc::new(f))
        }
    };
    let mut m = Module {
        name: name.to_string(),
        prober,
        timeout,
        filter,
        template: ProbeSpec::tcp("localhost", 1).map_err(|e| e.to_string())?,
        body_fail: Vec::new(),
        body_need: Vec::new(),
        cel_fail: None,
        cel_need: None,
        header_fail: Vec::new(),
        header_need: Vec::new(),
        versions: Vec::new(),
        fail_if_ssl: false,
        fail_if_not_ssl: false,
        valid_status: None,
        follow_redirects: false,
        body_size_limit: None,
        body_file_error: None,
        unsupported_compression: false,
        skip_resolve_phase: false,
        tls: false,
        query_response: Vec::new(),
        dns_unknown_rcode: None,
        paths,
        shown,
    };
    match prober {
        Prober::Http => crate::http_module::http(&mut m, &raw.http.unwrap_or_default(), base)?,
        Prober::Tcp => crate::tcp_module::tcp(&mut m, &raw.tcp.unwrap_or_default(), base)?,
        Prober::Grpc => crate::grpc_module::grpc(&mut m, &raw.grpc.unwrap_or_default(), base)?,
        Prober::Unix => crate::unix_module::unix(&mut m, &raw.unix.unwrap_or_default(), base)?,
        Prober::Icmp => {
            m.template =
                crate::icmp_module::template(&raw.icmp.unwrap_or_default(), raw.allow.as_ref())?;
        }
        Prober::Dns => crate::dns_module::dns(&mut m, &raw.dns.unwrap_or_default(), base)?,
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober_core::IpFamily;
    use std::path::Path;
    /// A CEL expression compiles at start: a bad one refuses the file, naming the field and
    /// the position; a good one gives the module its gauge.
    #[test]
    fn cel_expressions_compile_at_start() {
        let file =
            "modules:\n  c: {prober: http, http: {fail_if_body_json_matches_cel: \"body.a ==\"}}\n";
        let e = Modules::parse(file, Path::new(".")).unwrap_err();
        assert!(e.contains("http.fail_if_body_json_matches_cel"), "{e}");
        assert!(e.contains("line 1, column"), "{e}");
        let file = "modules:\n  c: {prober: http, http: {fail_if_body_json_not_matches_cel: \"body.a\"}}\n";
        let m = Modules::parse(file, Path::new(".")).unwrap();
        assert!(m.by_name["c"].has_cel() && m.by_name["c"].cel_fail.is_none());
    }

    /// blackbox_exporter's defaults (ip6, with fallback) and its two options, on every prober
    /// (gRPC connects over both families unless one is required).
    #[test]
    fn ip_protocol_options_map_to_families() {
        let file = "modules:
  h: {prober: http}
  h4: {prober: http, http: {preferred_ip_protocol: ip4}}
  t6only: {prober: tcp, tcp: {ip_protocol_fallback: false}}
  g4only: {prober: grpc, grpc: {preferred_ip_protocol: ip4, ip_protocol_fallback: false}}
  g4: {prober: grpc, grpc: {preferred_ip_protocol: ip4}}
  g: {prober: grpc}
";
        let m = Modules::parse(file, Path::new(".")).unwrap();
        let family = |name: &str| m.by_name[name].template.ip_family();
        assert_eq!(family("h"), IpFamily::PreferV6);
        assert_eq!(family("h4"), IpFamily::PreferV4);
        assert_eq!(family("t6only"), IpFamily::V6);
        assert_eq!(family("g4only"), IpFamily::V4);
        assert_eq!(family("g4"), IpFamily::Any);
        // gRPC dials by name over both families unless the family is required (grpc.go).
        assert_eq!(family("g"), IpFamily::Any);
        let bad = "modules:\n  x: {prober: grpc, grpc: {preferred_ip_protocol: ipv4}}\n";
        let err = Modules::parse(bad, Path::new(".")).unwrap_err();
        assert!(err.contains("grpc.preferred_ip_protocol: \"ipv4\" is not ip4 or ip6"), "{err}");
    }

    /// blackbox_exporter refuses a module that accepts HTTP/3.0 without `enable_http3`
    /// (config.go), which this engine does not have: refused here too, not left to fail.
    #[test]
    fn http3_version_is_refused() {
        let file =
            "modules:\n  h: {prober: http, http: {valid_http_versions: [HTTP/1.1, HTTP/3.0]}}\n";
        let err = Modules::parse(file, Path::new(".")).unwrap_err();
        assert!(err.contains("http.valid_http_versions: HTTP/3.0"), "{err}");
        let ok =
            "modules:\n  h: {prober: http, http: {valid_http_versions: [HTTP/1.1, HTTP/2.0]}}\n";
        assert!(Modules::parse(ok, Path::new(".")).is_ok());
    }
}
