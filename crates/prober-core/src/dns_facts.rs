//! What a DNS run found out ([`DnsFacts`], on [`Outcome::dns`](crate::Outcome::dns)): the
//! facts behind blackbox_exporter's `probe_dns_*` metrics.

use std::time::Duration;

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
