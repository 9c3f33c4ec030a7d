//! What a DNS probe asks and checks. It lives here until the kind joins prober-core's
//! `ProbeSpec` (issue 36); the engine's constructor will build it from there.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use prober_core::{AddressFilter, IpFamily, NetNs, TlsOptions, TlsVerify};

use crate::name::Name;
use crate::render::{class_from_name, type_from_name};
use crate::validate::{RrValidator, rcode_from_name};

/// How the query is carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// One datagram each way (blackbox's default).
    #[default]
    Udp,
    /// A TCP connection with two-byte length prefixes (RFC 1035 4.2.2, RFC 7766).
    Tcp,
    /// DNS over TLS (RFC 7858): the TCP exchange inside TLS ([`DnsSpec::tls`]).
    Tls,
}

impl Transport {
    /// `udp`, `tcp` or `tcp-tls`, as miekg/dns names them (Go's network names).
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
            Transport::Tls => "tcp-tls",
        }
    }
}

/// Where the query goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
    /// An address and port.
    Addr(SocketAddr),
    /// A host name (or address text) and port, resolved at the start of each run off the poll
    /// thread (prober-io's resolver), as blackbox resolves its target.
    Host(String, u16),
}

/// A DNS probe: one query to `server`, the response checked as blackbox_exporter's dns prober
/// checks it.
#[derive(Clone, Debug)]
pub struct DnsSpec {
    /// The server.
    pub server: Server,
    /// Which of a name's addresses to query (the first of the chosen family); an address
    /// literal of another family fails with reason `dns`, as for TCP.
    pub ip_family: IpFamily,
    /// Query only servers this allow-list admits (checked on the address, and the name when
    /// one was given): anything else fails with reason `denied` before a socket is opened.
    pub address_filter: Option<Arc<AddressFilter>>,
    /// UDP, TCP or TLS.
    pub transport: Transport,
    /// The TLS options of [`Transport::Tls`]; `None`: the chain verified against the
    /// system's trust store. Either way the name verified (and sent as SNI) is the options'
    /// server name, else the server's host as given (a name, or the address).
    pub tls: Option<TlsOptions>,
    /// Make the query's socket in this network namespace (`None`: this process's).
    pub netns: Option<NetNs>,
    /// Bind the query's socket (UDP, TCP or TLS) to this local address, port 0, before it
    /// sends or connects (blackbox's `source_ip_address`); only the server's addresses of its
    /// family are queried (none left: reason `dns`), and an address this host (or the
    /// namespace) does not have fails the run, reason `unreachable` (`bind: cannot assign
    /// requested address`). `None`: the system chooses.
    pub source_address: Option<IpAddr>,
    /// The question's name (always fully qualified).
    pub name: Name,
    /// The question's type (default A; blackbox's modules default to ANY and say so).
    pub qtype: u16,
    /// The question's class (default IN).
    pub qclass: u16,
    /// The RD bit (default set, as blackbox's `recursion_desired`).
    pub recursion_desired: bool,
    /// EDNS0: an OPT record advertising this UDP payload size (default none, as blackbox,
    /// which sends none: servers then truncate UDP answers at 512 bytes).
    pub edns_udp_size: Option<u16>,
    /// A truncated UDP answer (TC) is asked again over TCP within the same deadline; when
    /// false (blackbox's behaviour) the truncated answer is what is checked, and
    /// [`DnsFacts::truncated`](crate::DnsFacts::truncated) says so.
    pub tcp_on_truncation: bool,
    /// The response codes that pass; empty means NOERROR only (blackbox's `valid_rcodes`).
    pub valid_rcodes: Vec<u16>,
    /// `validate_answer_rrs`.
    pub validate_answer: RrValidator,
    /// `validate_authority_rrs`.
    pub validate_authority: RrValidator,
    /// `validate_additional_rrs`.
    pub validate_additional: RrValidator,
}

impl DnsSpec {
    /// A query of `name` (text, `\` escapes allowed), type A class IN with RD, to `server` over
    /// UDP, passing on NOERROR.
    ///
    /// # Errors
    ///
    /// A name that is not a valid domain name (see [`Name::from_text`]).
    pub fn new(server: SocketAddr, name: &str) -> Result<DnsSpec, String> {
        Ok(DnsSpec {
            server: Server::Addr(server),
            ip_family: IpFamily::Any,
            address_filter: None,
            transport: Transport::Udp,
            tls: None,
            netns: None,
            source_address: None,
            name: Name::from_text(name)?,
            qtype: 1,
            qclass: 1,
            recursion_desired: true,
            edns_udp_size: None,
            tcp_on_truncation: false,
            valid_rcodes: Vec::new(),
            validate_answer: RrValidator::default(),
            validate_authority: RrValidator::default(),
            validate_additional: RrValidator::default(),
        })
    }

    /// [`DnsSpec::new`] for a server given by host name (or address text) and port.
    ///
    /// # Errors
    ///
    /// An empty host, or a query name that is not a valid domain name.
    pub fn with_host(host: &str, port: u16, name: &str) -> Result<DnsSpec, String> {
        if host.is_empty() {
            return Err("empty server host".into());
        }
        let mut spec = DnsSpec::new(SocketAddr::from(([0, 0, 0, 0], port)), name)?;
        spec.server = Server::Host(host.to_string(), port);
        Ok(spec)
    }

    /// The spec of a [`prober_core::ProbeSpec::dns`] probe (its [`prober_core::DnsSpec`]),
    /// for the engine.
    ///
    /// # Errors
    ///
    /// An empty host or an invalid query name (which `ProbeSpec::validate` refuses first).
    pub fn from_core(core: &prober_core::DnsSpec) -> Result<DnsSpec, String> {
        let mut spec = DnsSpec::with_host(&core.host, core.port, &core.query_name)?;
        spec.transport = match core.transport {
            prober_core::DnsTransport::Udp => Transport::Udp,
            prober_core::DnsTransport::Tcp => Transport::Tcp,
            prober_core::DnsTransport::Tls => Transport::Tls,
        };
        spec.tls.clone_from(&core.connect.tls);
        spec.netns.clone_from(&core.connect.netns);
        spec.qtype = core.query_type;
        spec.qclass = core.query_class;
        spec.recursion_desired = core.recursion_desired;
        spec.edns_udp_size = core.edns_udp_size;
        spec.tcp_on_truncation = core.tcp_on_truncation;
        spec.valid_rcodes.clone_from(&core.valid_rcodes);
        spec.validate_answer.clone_from(&core.validate_answer);
        spec.validate_authority.clone_from(&core.validate_authority);
        spec.validate_additional.clone_from(&core.validate_additional);
        spec.ip_family = core.connect.ip_family;
        spec.address_filter.clone_from(&core.connect.address_filter);
        // The unspecified addresses bind nothing and keep every family, as in Go.
        spec.source_address = core
            .connect
            .source_address
            .map(|ip| ip.to_canonical())
            .filter(|ip| !ip.is_unspecified());
        Ok(spec)
    }

    /// Sets the type by its name as miekg/dns spells it (`A`, `AAAA`, `MX`, `ANY`, ...).
    ///
    /// # Errors
    ///
    /// A name miekg/dns does not know (blackbox refuses the module then).
    pub fn with_type_name(mut self, name: &str) -> Result<DnsSpec, String> {
        self.qtype =
            type_from_name(name).ok_or_else(|| format!("query type '{name}' is not valid"))?;
        Ok(self)
    }

    /// Sets the class by its name (`IN`, `CH`, `HS`, `CS`, `NONE`, `ANY`).
    ///
    /// # Errors
    ///
    /// A name miekg/dns does not know.
    pub fn with_class_name(mut self, name: &str) -> Result<DnsSpec, String> {
        self.qclass =
            class_from_name(name).ok_or_else(|| format!("query class '{name}' is not valid"))?;
        Ok(self)
    }

    /// Sets `valid_rcodes` from names (`NOERROR`, `NXDOMAIN`, ...).
    ///
    /// # Errors
    ///
    /// A name miekg/dns does not know.
    pub fn with_valid_rcodes<S: AsRef<str>>(mut self, names: &[S]) -> Result<DnsSpec, String> {
        self.valid_rcodes = names
            .iter()
            .map(|n| {
                rcode_from_name(n.as_ref()).ok_or_else(|| format!("invalid rcode {:?}", n.as_ref()))
            })
            .collect::<Result<_, _>>()?;
        Ok(self)
    }

    /// The TLS options a DNS-over-TLS run dials with: the spec's (else blackbox's default,
    /// the system's trust store), with the server's host as the name to verify when they
    /// name none (the dial connects to the chosen address, which is not the name).
    pub(crate) fn tls_for_dial(&self) -> TlsOptions {
        let mut tls = self.tls.clone().unwrap_or_else(|| TlsOptions {
            verify: TlsVerify::SystemRoots,
            ..TlsOptions::default()
        });
        if tls.server_name.is_none() {
            if let Server::Host(host, _) = &self.server {
                tls.server_name = Some(host.clone());
            }
        }
        tls
    }

    /// Whether `rcode` passes.
    pub fn rcode_is_valid(&self, rcode: u16) -> bool {
        if self.valid_rcodes.is_empty() { rcode == 0 } else { self.valid_rcodes.contains(&rcode) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_core_carries_dns_over_tls_and_the_namespace() {
        let mut core = prober_core::ProbeSpec::dns("ns.example", 853, "example.com").unwrap();
        let tls = TlsOptions { verify: TlsVerify::SystemRoots, ..TlsOptions::default() };
        core.set_tls(tls.clone()).unwrap();
        core.set_netns("/run/netns/dns-unit").unwrap();
        let prober_core::ProbeKind::Dns(d) = &core.kind else { panic!("a DNS kind") };
        let spec = DnsSpec::from_core(d).unwrap();
        assert_eq!(spec.transport, Transport::Tls);
        assert_eq!(spec.tls.as_ref(), Some(&tls));
        assert_eq!(
            spec.netns.as_ref().map(|n| n.path().to_path_buf()),
            Some("/run/netns/dns-unit".into())
        );
        // The name verified is the server's host when the options name none.
        assert_eq!(spec.tls_for_dial().server_name.as_deref(), Some("ns.example"));
        // No options: the system's trust store, not the unverified default.
        let mut bare = spec.clone();
        bare.tls = None;
        assert_eq!(bare.tls_for_dial().verify, TlsVerify::SystemRoots);
    }
}
