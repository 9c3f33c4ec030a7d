//! DNS probes (issue 36): the constructor [`ProbeSpec::dns`] and the checks of a
//! [`DnsSpec`] (the spec itself is in kinds.rs with the others; what a run found out,
//! [`DnsFacts`](crate::DnsFacts), in dns_facts.rs). The machine is prober-dns's.

use super::{DnsRrChecks, DnsSpec, DnsTransport, ProbeKind, ProbeSpec, SpecError, validate_host};
use crate::dns_name::Name;
use crate::ip_family::IpFamily;

impl DnsSpec {
    /// Checks the fields a constructor checks.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHost`] for the server, [`SpecError::InvalidPort`] for port 0,
    /// [`SpecError::InvalidRequest`] for a query name that is not a domain name,
    /// [`SpecError::InvalidTls`] for invalid TLS options or TLS options with a transport
    /// other than [`DnsTransport::Tls`].
    pub fn validate(&self) -> Result<(), SpecError> {
        validate_host(&self.host)?;
        if self.port == 0 {
            return Err(SpecError::InvalidPort(0));
        }
        Name::from_text(&self.query_name)
            .map_err(|e| SpecError::InvalidRequest(format!("DNS query name: {e}")))?;
        if let Some(tls) = &self.tls {
            tls.validate()?;
            if self.transport != DnsTransport::Tls {
                return Err(SpecError::InvalidTls(
                    "TLS options of a DNS probe need its tls transport (DNS over TLS)".into(),
                ));
            }
        }
        Ok(())
    }
}

impl ProbeSpec {
    /// A DNS probe: a query of `query_name`, type A class IN with RD, over UDP to the server
    /// `host:port` (`[v6]` brackets allowed), passing on NOERROR. Its fields
    /// ([`DnsSpec`]) are set on [`ProbeSpec::kind`].
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHost`], [`SpecError::InvalidPort`], or
    /// [`SpecError::InvalidRequest`] for a query name that is not a domain name.
    pub fn dns(host: &str, port: i64, query_name: &str) -> Result<ProbeSpec, SpecError> {
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        let port =
            u16::try_from(port).ok().filter(|p| *p != 0).ok_or(SpecError::InvalidPort(port))?;
        let spec = DnsSpec {
            host: host.to_string(),
            port,
            transport: DnsTransport::Udp,
            query_name: query_name.to_string(),
            query_type: 1,
            query_class: 1,
            recursion_desired: true,
            edns_udp_size: None,
            tcp_on_truncation: false,
            valid_rcodes: Vec::new(),
            validate_answer: DnsRrChecks::default(),
            validate_authority: DnsRrChecks::default(),
            validate_additional: DnsRrChecks::default(),
            ip_family: IpFamily::Any,
            address_filter: None,
            netns: None,
            tls: None,
        };
        spec.validate()?;
        Ok(ProbeSpec::with_kind(ProbeKind::Dns(Box::new(spec))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constructor_checks_server_and_name() {
        let spec = ProbeSpec::dns("[::1]", 53, "example.com").unwrap();
        let ProbeKind::Dns(d) = &spec.kind else { panic!("a DNS kind") };
        assert_eq!((d.host.as_str(), d.port, d.query_type), ("::1", 53, 1));
        assert!(spec.validate().is_ok());
        assert!(matches!(ProbeSpec::dns("a b", 53, "x"), Err(SpecError::InvalidHost(_))));
        assert!(matches!(ProbeSpec::dns("h", 0, "x"), Err(SpecError::InvalidPort(0))));
        assert!(matches!(ProbeSpec::dns("h", 53, "a..b"), Err(SpecError::InvalidRequest(_))));
    }

    #[test]
    fn tls_options_select_dns_over_tls_and_need_it() {
        let mut spec = ProbeSpec::dns("127.0.0.1", 853, "example.com").unwrap();
        spec.set_tls(crate::TlsOptions::default()).unwrap();
        let ProbeKind::Dns(d) = &mut spec.kind else { panic!("a DNS kind") };
        assert_eq!((d.transport, d.tls.is_some()), (DnsTransport::Tls, true));
        assert!(spec.validate().is_ok());
        let ProbeKind::Dns(d) = &mut spec.kind else { panic!("a DNS kind") };
        d.transport = DnsTransport::Udp;
        assert!(matches!(spec.validate(), Err(SpecError::InvalidTls(_))));
    }

    #[test]
    fn a_dns_probe_takes_a_network_namespace() {
        let mut spec = ProbeSpec::dns("127.0.0.1", 53, "example.com").unwrap();
        spec.set_netns("/run/netns/dns-test").unwrap();
        assert_eq!(
            spec.netns().map(|n| n.path().to_path_buf()),
            Some("/run/netns/dns-test".into())
        );
        assert!(spec.validate().is_ok());
    }
}
