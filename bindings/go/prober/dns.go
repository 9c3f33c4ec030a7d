package prober

// #include "shim.h"
// static inline prober_status gp_spec_new_dns(const char *server, int32_t port, const char *name,
//                                             prober_spec **out, gp_err *err) {
//   return gp_fail(prober_spec_new_dns(server, port, name, out), err);
// }
// static inline prober_status gp_spec_set_dns_transport(prober_spec *s, uint32_t t, gp_err *err) {
//   return gp_fail(prober_spec_set_dns_transport(s, t), err);
// }
// static inline prober_status gp_spec_set_dns_query(prober_spec *s, uint32_t type, uint32_t class,
//                                                   gp_err *err) {
//   return gp_fail(prober_spec_set_dns_query(s, type, class), err);
// }
// static inline prober_status gp_spec_set_dns_recursion_desired(prober_spec *s, bool on, gp_err *err) {
//   return gp_fail(prober_spec_set_dns_recursion_desired(s, on), err);
// }
// static inline prober_status gp_spec_set_dns_edns_udp_size(prober_spec *s, uint32_t n, gp_err *err) {
//   return gp_fail(prober_spec_set_dns_edns_udp_size(s, n), err);
// }
// static inline prober_status gp_spec_set_dns_tcp_on_truncation(prober_spec *s, bool on, gp_err *err) {
//   return gp_fail(prober_spec_set_dns_tcp_on_truncation(s, on), err);
// }
// static inline prober_status gp_spec_set_dns_valid_rcodes(prober_spec *s, const uint16_t *c, size_t n,
//                                                          gp_err *err) {
//   return gp_fail(prober_spec_set_dns_valid_rcodes(s, c, n), err);
// }
// static inline prober_status gp_spec_add_dns_rr_check(prober_spec *s, uint32_t section, uint32_t check,
//                                                      const char *re, gp_err *err) {
//   return gp_fail(prober_spec_add_dns_rr_check(s, section, check, re), err);
// }
// /* The helpers neither keep the pointers they are given nor call back into Go. */
// #cgo noescape gp_spec_new_dns
// #cgo nocallback gp_spec_new_dns
// #cgo noescape gp_spec_set_dns_transport
// #cgo nocallback gp_spec_set_dns_transport
// #cgo noescape gp_spec_set_dns_query
// #cgo nocallback gp_spec_set_dns_query
// #cgo noescape gp_spec_set_dns_recursion_desired
// #cgo nocallback gp_spec_set_dns_recursion_desired
// #cgo noescape gp_spec_set_dns_edns_udp_size
// #cgo nocallback gp_spec_set_dns_edns_udp_size
// #cgo noescape gp_spec_set_dns_tcp_on_truncation
// #cgo nocallback gp_spec_set_dns_tcp_on_truncation
// #cgo noescape gp_spec_set_dns_valid_rcodes
// #cgo nocallback gp_spec_set_dns_valid_rcodes
// #cgo noescape gp_spec_add_dns_rr_check
// #cgo nocallback gp_spec_add_dns_rr_check
import "C"

import (
	"fmt"
	"time"
)

// DNSTransport says how a DNS probe carries its query.
type DNSTransport uint32

const (
	// DNSUDP: one datagram each way (blackbox_exporter's default, and the default here).
	DNSUDP DNSTransport = C.PROBER_DNS_TRANSPORT_UDP
	// DNSTCP: a TCP connection with two-byte length prefixes (RFC 7766).
	DNSTCP DNSTransport = C.PROBER_DNS_TRANSPORT_TCP
	// DNSTLS: DNS over TLS (RFC 7858) to the port given (853 is not assumed), the certificate
	// verified against the system's roots unless Spec.TLS says otherwise. A non-nil Spec.TLS
	// on a DNS spec selects it too.
	DNSTLS DNSTransport = C.PROBER_DNS_TRANSPORT_TLS
)

// DNSOptions are a DNS probe's question and the checks of its answer, as blackbox_exporter's
// dns module writes them. Zero fields take the defaults: type A, class IN, recursion desired,
// UDP, no EDNS0, NOERROR the only valid rcode.
type DNSOptions struct {
	// Name is the name asked about ("www.example.com"; a trailing dot is optional). Required.
	Name string
	// Type is the question's type by number: 1 A (when 0), 28 AAAA, 5 CNAME, 15 MX, 2 NS, 12
	// PTR, 6 SOA, 33 SRV, 16 TXT, 257 CAA, 255 ANY, ... (miekg/dns's dns.TypeAAAA and the
	// others are these numbers).
	Type uint16
	// Class is the question's class by number: 1 IN (when 0), 3 CH, 255 ANY, ...
	Class uint16
	// Transport is DNSUDP (the default), DNSTCP or DNSTLS.
	Transport DNSTransport
	// NoRecursion clears the RD (recursion desired) bit, which is set by default.
	NoRecursion bool
	// EDNSUDPSize adds EDNS0 to the query: an OPT record advertising this UDP payload size
	// (blackbox_exporter's modules often say 4096). 0: no EDNS0.
	EDNSUDPSize uint16
	// TCPOnTruncation asks again over TCP when the UDP answer is truncated (the TC bit), as a
	// resolver does; off: the truncated answer is checked as it is, as blackbox_exporter does.
	TCPOnTruncation bool
	// ValidRcodes are the rcodes that pass (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, ...; at most 64,
	// each up to 4095); empty: NOERROR only. Any other rcode is a Failure with ReasonStatus.
	ValidRcodes []uint16
	// Answer, Authority and Additional check the records of each section of the answer
	// (validate_answer_rrs, validate_authority_rrs, validate_additional_rrs). A failed check is
	// a Failure with ReasonBody, the message naming the expression and the record.
	Answer, Authority, Additional DNSRecordChecks
}

// DNSRecordChecks are blackbox_exporter's four checks of the records of one section: regular
// expressions (Rust's regex syntax, as every expectation of libprober; linear time) matched
// anywhere in each record's text as miekg/dns prints it ("a.example.\t300\tIN\tA\t192.0.2.1").
// At most 64 expressions per list; an empty expression is refused.
type DNSRecordChecks struct {
	// FailIfMatches: fail if any record matches any of these (fail_if_matches_regexp).
	FailIfMatches []string
	// FailIfAllMatch: fail if every record matches one of these (fail_if_all_match_regexp).
	FailIfAllMatch []string
	// FailIfNotMatches: fail if any record does not match one of these, or there is none
	// (fail_if_not_matches_regexp).
	FailIfNotMatches []string
	// FailIfNoneMatches: fail unless some record matches one of these, or there is none
	// (fail_if_none_matches_regexp).
	FailIfNoneMatches []string
}

// DNSFacts is what a DNS run found out: blackbox_exporter's probe_dns_* figures and more
// (Outcome.DNS).
type DNSFacts struct {
	// QuerySucceeded: an answer to the query arrived, whatever its rcode
	// (probe_dns_query_succeeded).
	QuerySucceeded bool
	// Rcode is the answer's rcode, extended by EDNS0 (0 NOERROR, 3 NXDOMAIN, ...); -1 without
	// an answer.
	Rcode int
	// AnswerRRs, AuthorityRRs and AdditionalRRs count the records of each section (an OPT
	// record among the additional ones): probe_dns_answer_rrs and the others.
	AnswerRRs, AuthorityRRs, AdditionalRRs int
	// Serial is the serial of the answer's SOA record for an SOA query (probe_dns_serial);
	// -1 without one.
	Serial int64
	// Truncated: the UDP answer had the TC bit.
	Truncated bool
	// RetriedOverTCP: the query was asked again over TCP after a truncated UDP answer.
	RetriedOverTCP bool
	// Ignored counts replies that were not the answer (wrong id or question, not a response,
	// unreadable, larger than asked for).
	Ignored int
	// Resolve, Connect and Request are the phases of probe_dns_duration_seconds: resolving
	// the server's name (0 for an address), setting up the socket or connecting, and the
	// query out to the answer in.
	Resolve, Connect, Request time.Duration
}

// DNS is a DNS probe: a query of name (type A, class IN, recursion desired) over UDP to the
// server at server:port (port 0 is 53), passing on NOERROR. Set the other options on its
// DNS field.
func DNS(server string, port int, name string) Spec {
	return Spec{Kind: KindDNS, Host: server, Port: port, DNS: &DNSOptions{Name: name}}
}

// createDNS makes the C spec of a DNS probe.
func (b *cbuild) createDNS(s *Spec, out **C.prober_spec) error {
	if s.DNS == nil {
		return &Error{Code: StatusInvalid, Msg: "DNS probes need Spec.DNS with the Name to ask about"}
	}
	host, err := b.str(s.Host, StatusInvalidHost, "server")
	if err != nil {
		return err
	}
	name, err := b.str(s.DNS.Name, StatusInvalid, "DNS name")
	if err != nil {
		return err
	}
	port := s.Port
	if port == 0 {
		port = 53
	}
	return b.check(C.gp_spec_new_dns(host, cport(port), name, out, &b.err))
}

// configureDNS sets Spec.DNS's options (but its Name) on the C spec.
func (b *cbuild) configureDNS(s *Spec, cs *C.prober_spec) error {
	d := s.DNS
	if d == nil || s.Kind != KindDNS {
		return nil
	}
	if d.Transport > DNSTLS {
		return &Error{Code: StatusInvalidEnum, Msg: fmt.Sprintf("DNS Transport %d is not DNSUDP, DNSTCP or DNSTLS", uint32(d.Transport))}
	}
	if d.Transport != DNSUDP {
		if err := b.check(C.gp_spec_set_dns_transport(cs, C.uint32_t(d.Transport), &b.err)); err != nil {
			return err
		}
	}
	if d.Type != 0 || d.Class != 0 {
		t, c := d.Type, d.Class
		if t == 0 {
			t = 1
		}
		if c == 0 {
			c = 1
		}
		if err := b.check(C.gp_spec_set_dns_query(cs, C.uint32_t(t), C.uint32_t(c), &b.err)); err != nil {
			return err
		}
	}
	if d.NoRecursion {
		if err := b.check(C.gp_spec_set_dns_recursion_desired(cs, false, &b.err)); err != nil {
			return err
		}
	}
	if d.EDNSUDPSize != 0 {
		if err := b.check(C.gp_spec_set_dns_edns_udp_size(cs, C.uint32_t(d.EDNSUDPSize), &b.err)); err != nil {
			return err
		}
	}
	if d.TCPOnTruncation {
		if err := b.check(C.gp_spec_set_dns_tcp_on_truncation(cs, true, &b.err)); err != nil {
			return err
		}
	}
	if len(d.ValidRcodes) > 0 {
		// A Go slice of uint16 holds no Go pointers, and C only reads it during the call.
		codes := make([]C.uint16_t, len(d.ValidRcodes))
		for i, c := range d.ValidRcodes {
			codes[i] = C.uint16_t(c)
		}
		if err := b.check(C.gp_spec_set_dns_valid_rcodes(cs, &codes[0], C.size_t(len(codes)), &b.err)); err != nil {
			return err
		}
	}
	sections := []struct {
		section C.uint32_t
		checks  *DNSRecordChecks
	}{
		{C.PROBER_DNS_SECTION_ANSWER, &d.Answer},
		{C.PROBER_DNS_SECTION_AUTHORITY, &d.Authority},
		{C.PROBER_DNS_SECTION_ADDITIONAL, &d.Additional},
	}
	for _, sec := range sections {
		lists := []struct {
			check C.uint32_t
			res   []string
		}{
			{C.PROBER_DNS_FAIL_IF_MATCHES, sec.checks.FailIfMatches},
			{C.PROBER_DNS_FAIL_IF_ALL_MATCH, sec.checks.FailIfAllMatch},
			{C.PROBER_DNS_FAIL_IF_NOT_MATCHES, sec.checks.FailIfNotMatches},
			{C.PROBER_DNS_FAIL_IF_NONE_MATCHES, sec.checks.FailIfNoneMatches},
		}
		for _, l := range lists {
			for _, re := range l.res {
				p, err := b.str(re, StatusInvalid, "DNS record check")
				if err != nil {
					return err
				}
				if err := b.check(C.gp_spec_add_dns_rr_check(cs, sec.section, l.check, p, &b.err)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dnsFactsOf copies a C outcome's DNS facts; nil for a run that was not a DNS probe's.
func dnsFactsOf(o *C.prober_outcome) *DNSFacts {
	var f C.prober_dns_facts
	if !C.prober_outcome_dns(o, &f) {
		return nil
	}
	return dnsFacts(&f)
}

// dnsFacts is the Go form of C's DNS facts.
func dnsFacts(f *C.prober_dns_facts) *DNSFacts {
	us := func(v C.uint64_t) time.Duration { return time.Duration(v) * time.Microsecond }
	return &DNSFacts{
		QuerySucceeded: bool(f.query_succeeded),
		Rcode:          int(f.rcode),
		AnswerRRs:      int(f.answer_rrs),
		AuthorityRRs:   int(f.authority_rrs),
		AdditionalRRs:  int(f.additional_rrs),
		Serial:         int64(f.serial),
		Truncated:      bool(f.truncated),
		RetriedOverTCP: bool(f.retried_over_tcp),
		Ignored:        int(f.ignored),
		Resolve:        us(f.resolve_us),
		Connect:        us(f.connect_us),
		Request:        us(f.request_us),
	}
}
