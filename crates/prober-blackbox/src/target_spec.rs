//! A target into a spec: the module's template with the target's URL or `host:port` (or
//! socket path), checked against the module's allow-list before anything is resolved, and
//! `/probe`'s `hostname` parameter.

use std::time::Duration;

use prober::{ProbeSpec, TlsOptions};
use prober_core::AddressFilter;

use crate::http_module::server_name_from_host;
use crate::module::{Module, Prober, TargetError};
use crate::target;

impl Module {
    /// blackbox_exporter's `hostname` parameter of `/probe`: for an HTTP module the `Host`
    /// header (refused when the module sets another one) and, unless `tls_config.server_name`
    /// is set, the TLS server name; for a TCP module with TLS the server name unless set. gRPC
    /// modules ignore it, as blackbox_exporter does.
    ///
    /// # Errors
    ///
    /// [`TargetError::Bad`] (400): the module's own `Host` header differs, or the value
    /// cannot be a header value.
    pub fn apply_hostname(&self, spec: &mut ProbeSpec, hostname: &str) -> Result<(), TargetError> {
        match self.prober {
            Prober::Http => {
                let prober::ProbeKind::Http(h) = &spec.kind else { return Ok(()) };
                match h.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("Host")) {
                    Some((_, v)) if v != hostname => {
                        return Err(TargetError::Bad(format!(
                            "host header defined both in module configuration ({v}) and with URL-parameter 'hostname' ({hostname})"
                        )));
                    }
                    Some(_) => {}
                    None => spec
                        .add_header("Host", hostname)
                        .map_err(|e| TargetError::Bad(format!("hostname: {e}")))?,
                }
                server_name_from_host(spec, hostname);
            }
            Prober::Tcp if self.tls => {
                let prober::ProbeKind::Tcp(t) = &spec.kind else { return Ok(()) };
                let Some(tls) = t.tls.as_ref().filter(|t| t.server_name.is_none()) else {
                    return Ok(());
                };
                let tls = TlsOptions { server_name: Some(hostname.to_string()), ..tls.clone() };
                spec.set_tls(tls).map_err(|e| TargetError::Bad(format!("hostname: {e}")))?;
            }
            Prober::Tcp | Prober::Grpc | Prober::Unix | Prober::Icmp | Prober::Dns => {}
        }
        Ok(())
    }

    /// The spec that probes `target` with this module within `timeout`.
    ///
    /// # Errors
    ///
    /// [`TargetError::Unprobeable`] for a target this prober cannot take (a malformed URL, no
    /// port, no host), [`TargetError::Bad`] for a spec the library refuses, [`TargetError::Denied`]
    /// for one the allow-list refuses by its name or port (its addresses are checked again
    /// when it is connected to).
    pub fn spec(&self, target: &str, timeout: Duration) -> Result<ProbeSpec, TargetError> {
        let mut spec = self.template.clone();
        let bad = |e: String| TargetError::Bad(e);
        if self.prober == Prober::Icmp {
            return crate::icmp_module::spec(&self.template, self.filter.as_ref(), target, timeout);
        }
        if self.prober == Prober::Unix {
            crate::unix_module::set_target(&mut spec, target, self.paths.as_deref())?;
            spec.set_timeout(timeout.max(Duration::from_millis(1)))
                .map_err(|e| bad(e.to_string()))?;
            return Ok(spec);
        }
        match self.prober {
            Prober::Http => {
                let parsed = target::http_url(target).map_err(TargetError::Unprobeable)?;
                if let Some(f) = &self.filter {
                    self.precheck(f, parsed.host(), parsed.port())?;
                }
                if let Some(e) = &self.body_file_error {
                    return Err(TargetError::Unprobeable(target::Unprobeable::resolve(target, e)));
                }
                // Moved in, not copied: most modules have no allow-list to read it after.
                if let prober::ProbeKind::Http(h) = &mut spec.kind {
                    h.url = parsed;
                }
            }
            Prober::Dns => {
                let tls = matches!(&spec.kind,
                    prober::ProbeKind::Dns(d) if d.transport == prober_core::DnsTransport::Tls);
                let (host, port) =
                    crate::dns_module::server(target, tls).map_err(TargetError::Unprobeable)?;
                if let Some(f) = &self.filter {
                    self.precheck(f, &host, port)?;
                }
                if let prober::ProbeKind::Dns(d) = &mut spec.kind {
                    d.host = host;
                    d.port = port;
                    // A server name no resolver takes: blackbox_exporter's fails there.
                    d.validate().map_err(|e| {
                        TargetError::Unprobeable(crate::target::Unprobeable::resolve(target, e))
                    })?;
                }
            }
            Prober::Tcp | Prober::Grpc | Prober::Unix | Prober::Icmp => {
                let (host, port) = target::host_port(target).map_err(TargetError::Unprobeable)?;
                if let Some(f) = &self.filter {
                    self.precheck(f, &host, port)?;
                }
                match &mut spec.kind {
                    prober::ProbeKind::Tcp(t) => {
                        t.host = host;
                        t.port = port;
                    }
                    prober::ProbeKind::Grpc(g) => {
                        g.host = host;
                        g.port = port;
                    }
                    _ => {}
                }
            }
        }
        if let Some(f) = &self.filter {
            spec.set_address_filter(Some(f.clone())).map_err(|e| bad(e.to_string()))?;
        }
        spec.set_timeout(timeout.max(Duration::from_millis(1))).map_err(|e| bad(e.to_string()))?;
        Ok(spec)
    }

    /// The allow-list's verdict on what the target says before anything is resolved: its
    /// port, its name, and an address written in any of the forms the resolver reads.
    fn precheck(&self, f: &AddressFilter, host: &str, port: u16) -> Result<(), TargetError> {
        let denied = |why: String| {
            TargetError::Denied(format!("target {host}:{port} is not allowed: {why}"))
        };
        if !f.port_allowed(port) {
            return Err(denied(format!("port {port} is not allowed")));
        }
        let literal = host
            .parse::<std::net::IpAddr>()
            .ok()
            .or_else(|| prober_core::allow::parse_ipv4_loose(host).map(std::net::IpAddr::V4));
        match literal {
            Some(ip) => f
                .check(None, std::net::SocketAddr::new(ip, port))
                .map_err(|e| denied(e.to_string())),
            None if !f.host_allowed(host) => Err(denied(format!("host {host} is not allowed"))),
            None => Ok(()),
        }
    }
}
