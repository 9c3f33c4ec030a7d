//! DNS probes on the C ABI (issue 36): `prober_spec_new_dns`, the setters of its query and of
//! blackbox_exporter's checks on the answer, and what a run found out (`prober_outcome_dns`).
//! The connection options (address family, allow-list) are the shared setters'.

use std::ffi::c_char;

use prober_core::{DnsRrChecks, DnsSpec, DnsTransport, Outcome, Pattern, ProbeSpec};

use crate::enums::c_enum;
use crate::outcome::{micros, prober_outcome};
use crate::ptr::{BoxedHandle, Out, try_slice_from_ptr, try_str_from_ptr};
use crate::spec::{edit_kind, new_spec, prober_spec, spec_status};
use crate::status::*;
use crate::{guard, guard_status, set_error};

c_enum! {
    /// How a DNS probe carries its query (`prober_spec_set_dns_transport`).
    pub enum prober_dns_transport, inputs {
        /// One datagram each way (blackbox_exporter's default, and the default here).
        PROBER_DNS_TRANSPORT_UDP = 0,
        /// A TCP connection with two-byte length prefixes (RFC 7766).
        PROBER_DNS_TRANSPORT_TCP = 1,
        /// DNS over TLS (RFC 7858): the TCP framing inside TLS, to the port given (853 is not
        /// assumed). The certificate is verified against the system's roots unless the
        /// `prober_spec_set_tls_*` setters say otherwise (any of them also selects this).
        PROBER_DNS_TRANSPORT_TLS = 2,
    }
}

c_enum! {
    /// The sections of a DNS answer whose records `prober_spec_add_dns_rr_check` checks
    /// (blackbox_exporter's `validate_answer_rrs`, `validate_authority_rrs`,
    /// `validate_additional_rrs`).
    pub enum prober_dns_section, inputs {
        /// The answer section.
        PROBER_DNS_SECTION_ANSWER = 0,
        /// The authority section.
        PROBER_DNS_SECTION_AUTHORITY = 1,
        /// The additional section (an OPT record is not among its records).
        PROBER_DNS_SECTION_ADDITIONAL = 2,
    }
}

c_enum! {
    /// The checks `prober_spec_add_dns_rr_check` adds, blackbox_exporter's four. A regular
    /// expression is matched anywhere in each record's text as miekg/dns prints it
    /// (`a.probe.test.\t3600\tIN\tA\t192.0.2.1`).
    pub enum prober_dns_rr_check, inputs {
        /// Fail if any record matches the expression (`fail_if_matches_regexp`).
        PROBER_DNS_FAIL_IF_MATCHES = 0,
        /// Fail if every record matches the expression (`fail_if_all_match_regexp`).
        PROBER_DNS_FAIL_IF_ALL_MATCH = 1,
        /// Fail if any record does not match the expression, or there is none
        /// (`fail_if_not_matches_regexp`).
        PROBER_DNS_FAIL_IF_NOT_MATCHES = 2,
        /// Fail unless some record matches the expression, or there is none
        /// (`fail_if_none_matches_regexp`).
        PROBER_DNS_FAIL_IF_NONE_MATCHES = 3,
    }
}

/// What a DNS run found out: blackbox_exporter's `probe_dns_*` figures and more, from
/// `prober_outcome_dns`. Durations in microseconds.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prober_dns_facts {
    /// An answer to the query arrived, whatever its rcode (`probe_dns_query_succeeded`).
    pub query_succeeded: bool,
    /// The UDP answer had the TC (truncated) bit.
    pub truncated: bool,
    /// The query was asked again over TCP after a truncated UDP answer
    /// (`prober_spec_set_dns_tcp_on_truncation`).
    pub retried_over_tcp: bool,
    /// The answer's rcode, extended by EDNS0 (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, ...); -1
    /// without an answer.
    pub rcode: i32,
    /// Records in the answer section (`probe_dns_answer_rrs`).
    pub answer_rrs: u32,
    /// Records in the authority section (`probe_dns_authority_rrs`).
    pub authority_rrs: u32,
    /// Records in the additional section, an OPT record included (`probe_dns_additional_rrs`).
    pub additional_rrs: u32,
    /// Replies that were not the answer and were ignored (wrong id or question, not a
    /// response, unreadable, larger than asked for).
    pub ignored: u32,
    /// For an SOA query, the serial of the answer's SOA record (`probe_dns_serial`); -1
    /// without one.
    pub serial: i64,
    /// Resolving the server's name (0 for an address): `probe_dns_duration_seconds{phase="resolve"}`.
    pub resolve_us: u64,
    /// Setting up the socket (UDP) or connecting (TCP): `{phase="connect"}`.
    pub connect_us: u64,
    /// From the query sent to the answer read: `{phase="request"}`.
    pub request_us: u64,
    /// Reserved for future fields; zero.
    pub reserved: [u64; 4],
}

/// The C form of a run's DNS facts; `None` when the run was not a DNS probe's.
pub(crate) fn dns_facts_of(o: &Outcome) -> Option<prober_dns_facts> {
    let d = o.dns.as_deref()?;
    Some(prober_dns_facts {
        query_succeeded: d.query_succeeded,
        truncated: d.truncated,
        retried_over_tcp: d.retried_over_tcp,
        rcode: d.rcode.map_or(-1, i32::from),
        answer_rrs: d.answer_rrs,
        authority_rrs: d.authority_rrs,
        additional_rrs: d.additional_rrs,
        ignored: d.ignored,
        serial: d.serial.map_or(-1, i64::from),
        resolve_us: micros(d.phases.resolve),
        connect_us: micros(d.phases.connect),
        request_us: micros(d.phases.request),
        reserved: [0; 4],
    })
}

/// A DNS probe: a query of `name` (type A, class IN, recursion desired) over UDP to the server
/// `server` (a name or an IP literal; IPv6 with or without brackets) on `port` (1..=65535,
/// usually 53). It passes when the answer's rcode is NOERROR (see
/// `prober_spec_set_dns_valid_rcodes`) and the checks added with
/// `prober_spec_add_dns_rr_check` hold. On success `*out` owns a new spec.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_INVALID_HOST` for the server,
/// `PROBER_E_INVALID_PORT`, `PROBER_E_INVALID` for a name that is not a domain name (an empty
/// label, a label over 63 bytes, a name over 255 bytes).
///
/// # Safety
/// `server` and `name` must be NULL or NUL-terminated strings; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_new_dns(
    server: *const c_char,
    port: i32,
    name: *const c_char,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let out = Out::try_from_ptr(out, "out")?;
        let server = try_str_from_ptr(server, "server")?;
        let name = try_str_from_ptr(name, "name")?;
        new_spec(ProbeSpec::dns(server, port.into(), name), out)
    })
}

/// A 16-bit value of a DNS field, 1 to 65535 (`zero_ok`: 0 too).
fn field_u16(what: &str, value: u32, zero_ok: bool) -> Result<u16, prober_status> {
    u16::try_from(value).ok().filter(|v| zero_ok || *v != 0).ok_or_else(|| {
        let low = if zero_ok { 0 } else { 1 };
        set_error(PROBER_E_INVALID, format!("{what} {value} is out of range ({low} to 65535)"))
    })
}

/// Sets how the query is carried: `PROBER_DNS_TRANSPORT_UDP` (the default),
/// `PROBER_DNS_TRANSPORT_TCP` or `PROBER_DNS_TRANSPORT_TLS`. Going back to UDP or TCP drops TLS
/// options set before.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_ENUM`, `PROBER_E_WRONG_KIND` for a probe that is not DNS.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_dns_transport(
    spec: *mut prober_spec,
    transport: u32,
) -> prober_status {
    let Some(t) = prober_dns_transport::from_code(transport) else {
        return set_error(
            PROBER_E_INVALID_ENUM,
            format!("{transport} is not a PROBER_DNS_TRANSPORT_* value"),
        );
    };
    edit_kind::<DnsSpec>(spec, "a DNS transport applies to", |d| {
        d.transport = match t {
            prober_dns_transport::PROBER_DNS_TRANSPORT_UDP => DnsTransport::Udp,
            prober_dns_transport::PROBER_DNS_TRANSPORT_TCP => DnsTransport::Tcp,
            prober_dns_transport::PROBER_DNS_TRANSPORT_TLS => DnsTransport::Tls,
        };
        if d.transport != DnsTransport::Tls {
            d.connect.tls = None;
        }
        Ok(())
    })
}

/// Sets the question's type and class by number: type 1 A, 28 AAAA, 5 CNAME, 15 MX, 2 NS, 12
/// PTR, 6 SOA, 33 SRV, 16 TXT, 257 CAA, 255 ANY, ... (default 1); class 1 IN (the default), 3
/// CH, 255 ANY, ... Both 1 to 65535.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID` for 0 or a number over 65535, `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_dns_query(
    spec: *mut prober_spec,
    qtype: u32,
    qclass: u32,
) -> prober_status {
    edit_kind::<DnsSpec>(spec, "a DNS query type applies to", |d| {
        let (t, c) = (field_u16("DNS type", qtype, false)?, field_u16("DNS class", qclass, false)?);
        (d.query_type, d.query_class) = (t, c);
        Ok(())
    })
}

/// Sets the RD (recursion desired) bit of the query (default set).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_dns_recursion_desired(
    spec: *mut prober_spec,
    on: bool,
) -> prober_status {
    edit_kind::<DnsSpec>(spec, "recursion desired applies to", |d| {
        d.recursion_desired = on;
        Ok(())
    })
}

/// Adds EDNS0 to the query: an OPT record advertising `size` bytes of UDP payload (1 to
/// 65535; blackbox_exporter's modules often say 4096); 0 removes it (the default).
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID` over 65535, `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_dns_edns_udp_size(
    spec: *mut prober_spec,
    size: u32,
) -> prober_status {
    edit_kind::<DnsSpec>(spec, "EDNS0 applies to", |d| {
        let size = field_u16("EDNS0 UDP size", size, true)?;
        d.edns_udp_size = (size != 0).then_some(size);
        Ok(())
    })
}

/// Asks again over TCP when the UDP answer is truncated (the TC bit), as a resolver does; off
/// by default: the truncated answer is checked as it is, as blackbox_exporter does.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_dns_tcp_on_truncation(
    spec: *mut prober_spec,
    on: bool,
) -> prober_status {
    edit_kind::<DnsSpec>(spec, "TCP on truncation applies to", |d| {
        d.tcp_on_truncation = on;
        Ok(())
    })
}

/// Sets the rcodes that pass (blackbox_exporter's `valid_rcodes`): `count` numbers at `rcodes`
/// (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, ...; extended ones up to 4095); `count` 0 restores the
/// default, NOERROR only. Any other rcode is a Failure. The numbers are copied.
///
/// # Errors
/// `PROBER_E_NULL` (`rcodes` NULL with a `count`), `PROBER_E_INVALID` for a number over 4095
/// or more than 64 of them, `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `rcodes`
/// NULL or `count` readable numbers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_dns_valid_rcodes(
    spec: *mut prober_spec,
    rcodes: *const u16,
    count: usize,
) -> prober_status {
    edit_kind::<DnsSpec>(spec, "valid rcodes applies to", |d| {
        if count > 64 {
            return Err(set_error(PROBER_E_INVALID, format!("{count} rcodes (at most 64)")));
        }
        let codes = match count {
            0 => &[][..],
            _ => try_slice_from_ptr(rcodes, count, "rcodes")?,
        };
        if let Some(bad) = codes.iter().find(|c| **c > 4095) {
            return Err(set_error(PROBER_E_INVALID, format!("rcode {bad} is over 4095")));
        }
        d.valid_rcodes = codes.to_vec();
        Ok(())
    })
}

/// Adds a check of the records of one section of the answer: `section` is a
/// `PROBER_DNS_SECTION_*`, `check` a `PROBER_DNS_FAIL_IF_*`, `regex` a regular expression (the
/// syntax of every expectation of libprober: Rust's `regex`, linear time, ASCII classes),
/// matched anywhere in each record's text. Checks add up; a failed one makes the run a
/// Failure with `PROBER_REASON_BODY`, the message naming the expression and the record.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_INVALID_ENUM`, `PROBER_E_INVALID` for an
/// expression that is empty or does not compile, `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `regex`
/// NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_add_dns_rr_check(
    spec: *mut prober_spec,
    section: u32,
    check: u32,
    regex: *const c_char,
) -> prober_status {
    let (Some(section), Some(check)) =
        (prober_dns_section::from_code(section), prober_dns_rr_check::from_code(check))
    else {
        return set_error(
            PROBER_E_INVALID_ENUM,
            format!("section {section} or check {check} is not a PROBER_DNS_* value"),
        );
    };
    edit_kind::<DnsSpec>(spec, "a record check applies to", |d| {
        let pattern =
            Pattern::new(try_str_from_ptr(regex, "regex")?).map_err(|e| spec_status(&e))?;
        let checks: &mut DnsRrChecks = match section {
            prober_dns_section::PROBER_DNS_SECTION_ANSWER => &mut d.validate_answer,
            prober_dns_section::PROBER_DNS_SECTION_AUTHORITY => &mut d.validate_authority,
            prober_dns_section::PROBER_DNS_SECTION_ADDITIONAL => &mut d.validate_additional,
        };
        let list = match check {
            prober_dns_rr_check::PROBER_DNS_FAIL_IF_MATCHES => &mut checks.fail_if_matches,
            prober_dns_rr_check::PROBER_DNS_FAIL_IF_ALL_MATCH => &mut checks.fail_if_all_match,
            prober_dns_rr_check::PROBER_DNS_FAIL_IF_NOT_MATCHES => &mut checks.fail_if_not_matches,
            prober_dns_rr_check::PROBER_DNS_FAIL_IF_NONE_MATCHES => {
                &mut checks.fail_if_none_matches
            }
        };
        if list.len() >= 64 {
            return Err(set_error(PROBER_E_INVALID, "at most 64 expressions per check"));
        }
        list.push(pattern);
        Ok(())
    })
}

/// Copies what a DNS run found out into `*out` and returns true; false (and `*out` untouched)
/// for NULL arguments and for a run that was not a DNS probe's.
///
/// # Safety
/// `o` must be NULL or a live outcome; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_dns(
    o: *const prober_outcome,
    out: *mut prober_dns_facts,
) -> bool {
    guard(|| {
        let facts = prober_outcome::ref_from_ptr(o).and_then(|o| dns_facts_of(&o.outcome));
        match (facts, Out::from_ptr(out)) {
            (Some(f), Some(out)) => {
                out.write(f);
                true
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers are the ABI: never renumbered.
    #[test]
    fn numbers_stay() {
        use prober_dns_rr_check::*;
        use prober_dns_section::*;
        use prober_dns_transport::*;
        let transports =
            [PROBER_DNS_TRANSPORT_UDP, PROBER_DNS_TRANSPORT_TCP, PROBER_DNS_TRANSPORT_TLS];
        for (n, t) in (0..).zip(transports) {
            assert_eq!(prober_dns_transport::from_code(n), Some(t));
        }
        assert_eq!(prober_dns_transport::from_code(3), None);
        let sections = [
            PROBER_DNS_SECTION_ANSWER,
            PROBER_DNS_SECTION_AUTHORITY,
            PROBER_DNS_SECTION_ADDITIONAL,
        ];
        for (n, s) in (0..).zip(sections) {
            assert_eq!(prober_dns_section::from_code(n), Some(s));
        }
        assert_eq!(prober_dns_section::from_code(3), None);
        let checks = [
            PROBER_DNS_FAIL_IF_MATCHES,
            PROBER_DNS_FAIL_IF_ALL_MATCH,
            PROBER_DNS_FAIL_IF_NOT_MATCHES,
            PROBER_DNS_FAIL_IF_NONE_MATCHES,
        ];
        for (n, c) in (0..).zip(checks) {
            assert_eq!(prober_dns_rr_check::from_code(n), Some(c));
        }
        assert_eq!(prober_dns_rr_check::from_code(4), None);
    }
}
