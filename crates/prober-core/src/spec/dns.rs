//! DNS probes (issue 36): what one asks and checks ([`DnsSpec`], built by [`ProbeSpec::dns`])
//! and what a run found out ([`DnsFacts`], on [`Outcome::dns`](crate::Outcome::dns)). The
//! machine is prober-dns's.

use std::sync::Arc;
use std::time::Duration;

use super::{ProbeKind, ProbeSpec, SpecError, validate_host};
use crate::dns_name::Name;
use crate::{AddressFilter, IpFamily, Pattern};

/// How the query is carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DnsTransport {
    /// One datagram each way (blackbox_exporter's default).
    #[default]
    Udp,
    /// A TCP connection with two-byte length prefixes (RFC 1035 4.2.2, RFC 7766).
    Tcp,
}

/// One section's checks, blackbox_exporter's `DNSRRValidator`: regular expressions matched
/// anywhere in each record's text as miekg/dns prints it (`RR.String()`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DnsRrChecks {
    /// Fail if any record matches any of these.
    pub fail_if_matches: Vec<Pattern>,
    /// Fail unless every record matches each of these.
    pub fail_if_all_match: Vec<Pattern>,
    /// Fail if any record does not match one of these (and if there is no record).
    pub fail_if_not_matches: Vec<Pattern>,
    /// Fail unless some record matches one of these (and if there is no record).
    pub fail_if_none_matches: Vec<Pattern>,
}

impl DnsRrChecks {
    /// True when no check is set.
    pub fn is_empty(&self) -> bool {
        self.fail_if_matches.is_empty()
            && self.fail_if_all_match.is_empty()
            && self.fail_if_not_matches.is_empty()
            && self.fail_if_none_matches.is_empty()
    }
}

/// A DNS probe: one query of `query_name` to the server `host:port`, the response checked as
/// blackbox_exporter's dns prober checks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsSpec {
    /// The server: a host name or an address.
    pub host: String,
    /// The server's port (53).
    pub port: u16,
    /// UDP or TCP.
    pub transport: DnsTransport,
    /// The question's name, as text (`\` escapes allowed; always fully qualified).
    pub query_name: String,
    /// The question's type (default 1, A).
    pub query_type: u16,
    /// The question's class (default 1, IN).
    pub query_class: u16,
    /// The RD bit (default set).
    pub recursion_desired: bool,
    /// EDNS0: an OPT record advertising this UDP payload size (default none).
    pub edns_udp_size: Option<u16>,
    /// Ask again over TCP when the UDP answer is truncated (default: check it as it is).
    pub tcp_on_truncation: bool,
    /// The response codes that pass; empty means NOERROR only.
    pub valid_rcodes: Vec<u16>,
    /// `validate_answer_rrs`.
    pub validate_answer: DnsRrChecks,
    /// `validate_authority_rrs`.
    pub validate_authority: DnsRrChecks,
    /// `validate_additional_rrs`.
    pub validate_additional: DnsRrChecks,
    /// Which of the server's addresses to query.
    pub ip_family: IpFamily,
    /// Query only servers this allow-list admits.
    pub address_filter: Option<Arc<AddressFilter>>,
}

impl DnsSpec {
    /// Checks the fields a constructor checks.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHost`] for the server, [`SpecError::InvalidPort`] for port 0,
    /// [`SpecError::InvalidRequest`] for a query name that is not a domain name.
    pub fn validate(&self) -> Result<(), SpecError> {
        validate_host(&self.host)?;
        if self.port == 0 {
            return Err(SpecError::InvalidPort(0));
        }
        Name::from_text(&self.query_name)
            .map_err(|e| SpecError::InvalidRequest(format!("DNS query name: {e}")))?;
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
        };
        spec.validate()?;
        Ok(ProbeSpec::with_kind(ProbeKind::Dns(Box::new(spec))))
    }
}

/// How long each phase of a run took, as blackbox's `probe_dns_duration_seconds{phase}`:
/// `resolve` (the server's name; zero for an address), `connect` (socket set up, or TCP
/// connected), `request` (the query out to the answer in). With a retry over TCP each phase
/// adds both attempts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DnsPhases {
    /// Resolving the server's name.
    pub resolve: Duration,
    /// Setting up the socket (UDP) or connecting (TCP).
    pub connect: Duration,
    /// From the query sent to the answer read.
    pub request: Duration,
}

impl DnsPhases {
    /// The phases as blackbox's `probe_dns_duration_seconds{phase}` labels them.
    pub fn labelled(&self) -> [(&'static str, Duration); 3] {
        [("resolve", self.resolve), ("connect", self.connect), ("request", self.request)]
    }
}

/// What a DNS run found out: the facts behind blackbox's `probe_dns_*` metrics, and more.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DnsFacts {
    /// An answer to the query arrived (`probe_dns_query_succeeded`), whatever its rcode.
    pub query_succeeded: bool,
    /// The answer's rcode, extended by EDNS0.
    pub rcode: Option<u16>,
    /// Records in the answer section (`probe_dns_answer_rrs`).
    pub answer_rrs: u32,
    /// Records in the authority section (`probe_dns_authority_rrs`).
    pub authority_rrs: u32,
    /// Records in the additional section, an OPT record included (`probe_dns_additional_rrs`).
    pub additional_rrs: u32,
    /// For an SOA query, the serial of the answer's (last) SOA record (`probe_dns_serial`).
    pub serial: Option<u32>,
    /// The UDP answer had the TC bit.
    pub truncated: bool,
    /// The query was asked again over TCP after a truncated UDP answer.
    pub retried_over_tcp: bool,
    /// Replies that were not the answer and were ignored (wrong id, wrong question, not a
    /// response, unreadable, larger than asked for).
    pub ignored: u32,
    /// The phases' durations.
    pub phases: DnsPhases,
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
}
