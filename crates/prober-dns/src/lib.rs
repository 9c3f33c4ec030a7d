//! DNS probes: one query to a given server over UDP, TCP or TLS within the probe's deadline, the
//! response checked as blackbox_exporter's dns prober checks it (`valid_rcodes`,
//! `validate_answer_rrs`, `validate_authority_rrs`, `validate_additional_rrs`), and the facts
//! its metrics need ([`DnsFacts`], also on the outcome: [`prober_core::Outcome::dns`]).
//!
//! [`DnsProbe`] is a sans-I/O [`prober_io::Machine`] like the other kinds: it opens one socket,
//! registers it with the driver's registry, and is driven by readiness and its one timer.
//!
//! # DNS over TLS, and network namespaces
//!
//! [`Transport::Tls`] is DNS over TLS (RFC 7858, blackbox's `dns_over_tls`): TCP and TLS are
//! dialed by prober-transport's `Dial`, the connect phase HTTP and gRPC use (TLS files read off
//! the poll thread, rustls), and the TCP exchange runs inside. The port is the one given: 853
//! is DoT's, but nothing is assumed, as blackbox uses its target's. The certificate is verified
//! against [`DnsSpec::tls`]'s CA (the system's trust store without options) and the name in
//! the options, else the server's host as given (blackbox, which dials the resolved address,
//! verifies that address unless `tls_config.server_name` is set; here a server given by name
//! is verified by that name). Without the feature `tls` such a probe ends Unknown, reason
//! `unsupported`.
//!
//! With [`DnsSpec::netns`] the query's socket is made in that network namespace off the poll
//! thread (prober-io's namespace pool: UDP as TCP), so `127.0.0.1` is the namespace's own
//! loopback; the server's name is still resolved through this process's resolver.
//!
//! With [`DnsSpec::source_address`] the socket (UDP, TCP or TLS, in the namespace too) is bound
//! to that local address before the query goes out, and only the server's addresses of its
//! family are queried.
//!
//! # What is checked, and what is ignored
//!
//! A reply is taken as the answer only if it is a response (QR) with the query's random id
//! and the query's question (name compared without regard to ASCII case, type, class); a
//! header-only reply with an error rcode (FORMERR, REFUSED, as some servers send) counts too.
//! Anything else is ignored, as a resolver ignores it, and the probe goes on waiting for the
//! right reply until its deadline: a late answer to an earlier query, a forged one with a
//! wrong id, one that cannot be parsed. Over UDP the socket is connected, so the kernel drops
//! datagrams from any other address or port. A truncated UDP answer (TC) is reported
//! ([`DnsFacts::truncated`]) and checked as it is, as blackbox does, or asked again over TCP
//! when [`DnsSpec::tcp_on_truncation`] is set.
//!
//! Records are matched as text printed exactly as miekg/dns's `RR.String()` prints them (see
//! [`render`]), since blackbox's regular expressions are written against that text.
//!
//! # Our own parser rather than `hickory-proto`
//!
//! Messages are encoded and parsed here ([`wire`], and [`name`] in prober-core: about 500
//! lines) instead of with
//! `hickory-proto`. The probe needs one question out and a handful of record types in, and
//! must print records in miekg/dns's text format, which hickory's `Display` does not produce
//! (it would be rewritten over hickory's types anyway). hickory-proto also needs Rust 1.88
//! (the workspace's MSRV is 1.86) and, even with default features off, brings its own
//! dependency tree into a binary whose size is bounded (ci/package-check.sh); this crate adds
//! no dependency that the workspace does not already build. The parser is fuzzed
//! (`fuzz/fuzz_targets/dns_response.rs`) with hostile responses: compression loops, pointers
//! past the end, records cut short, counts that lie, 64 KiB messages.

#![warn(missing_docs)]

/// Domain names (prober-core's, where a spec's query name is checked).
pub use prober_core::dns_name as name;
mod probe;
pub mod render;
mod source;
mod spec;
mod stream;
pub mod validate;
pub mod wire;

pub use probe::DnsProbe;
pub use prober_core::{DnsFacts, DnsPhases};
pub use spec::{DnsSpec, Server, Transport};
pub use validate::RrValidator;
