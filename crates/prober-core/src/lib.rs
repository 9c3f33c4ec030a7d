//! The vocabulary of libprober, with no I/O: what a probe is ([`ProbeSpec`]), what it produced
//! ([`Outcome`], [`ProbeResult`], [`Reason`], [`Timings`]) and how bad input is refused
//! ([`SpecError`]).
//!
//! Every other crate speaks these types; the C ABI maps them one to one, so the numeric values of
//! [`ProbeResult`] and [`Reason`] are part of the stable ABI and are never renumbered.

#![warn(missing_docs)]

pub mod allow;
mod dns_facts;
pub mod dns_name;
mod expect;
mod expect_cel;
mod facts;
mod family;
mod gotext;
mod icmp;
mod icmp_facts;
mod metadata;
mod netns;
mod outcome;
mod request;
mod schedule;
mod secret;
mod source_address;
mod spec;
mod target;
mod unix;
pub mod url;

pub use allow::{AddressFilter, FilterError, IpNet};
pub use dns_facts::{DnsFacts, DnsPhases};
pub use expect::{Expansion, MAX_PATTERN_LEN, MAX_SEND_LEN, Pattern, StatusSet, unescape};
pub use expect_cel::{
    BodyCel, CelMode, MAX_CEL_BODY_LEN, MAX_CEL_CONCAT_BYTES, MAX_CEL_LEN, MAX_CEL_STEPS,
};
pub use facts::{CertInfo, GrpcFacts, HttpPhases, HttpResponseVersion, TlsInfo, days_from_civil};
pub use family::{IP_FAMILIES, IpFamily};
pub use gotext::{format_duration, go_quote, os_error_text};
pub use icmp::{
    DEFAULT_PAYLOAD_SIZE, IcmpSocket, IcmpSpec, MAX_PACKETS, MAX_PAYLOAD_SIZE, MIN_INTERVAL,
};
pub use icmp_facts::{EchoStats, IcmpError, IcmpFacts, IcmpSocketKind};
pub use metadata::validate_metadata;
pub use netns::{MAX_NETNS_PATH, NetNs, OpenNetNs, WeakNetNs};
pub use outcome::{Outcome, ProbeResult, Reason, Timings};
pub use request::{MAX_BODY_LEN, validate_method};
pub use schedule::{MAX_JITTER_PERCENT, Role, Schedule};
pub use secret::{
    REDACTED, RedactedHeaders, Secret, is_secret_header, printable_header_value,
    redact_quoted_values, redact_target, redact_userinfo, target_userinfo,
};
pub use source_address::{parse_source_address, source_family_admits};
pub use spec::{
    ClosePolicy, Compression, ConnectOption, ConnectOptions, DEFAULT_MAX_REDIRECTS,
    DEFAULT_OUTPUT_LIMIT, DEFAULT_TIMEOUT, DEFAULT_USER_AGENT, DnsRrChecks, DnsSpec, DnsTransport,
    ExecSpec, GrpcSpec, HostRunSpec, HttpProxy, HttpSpec, HttpVersion, MAX_CONNECT_HEADERS,
    MAX_HOST_RUN_LABEL, MAX_MAX_REDIRECTS, MAX_NO_PROXY_ENTRIES, MAX_TCP_STEP_LINE, MAX_TCP_STEPS,
    MAX_TCP_STEPS_READ, NoProxy, ProbeKind, ProbeSpec, ProxyServer, RedirectPolicy, SpecError,
    TCP_BYTES_DIFFER, TcpSpec, TcpStep, TlsOptions, TlsVerify, TlsVersion, validate_header,
    validate_host,
};
pub use spec::{MAX_OAUTH2_PARAMS, MAX_OAUTH2_VALUE, OAuth2, OAuth2AuthStyle, query_escape};
pub use spec::{TlsFieldNames, TlsFields};
pub use target::{HostPortError, split_host_port, unbracket};
pub use unix::{MAX_UNIX_PATH, UnixSocket};
pub use url::{Scheme, Url, UrlError, percent_decode};

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
