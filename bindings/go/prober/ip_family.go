package prober

// #include "shim.h"
// static inline prober_status gp_spec_set_ip_family(prober_spec *s, uint32_t f, gp_err *err) {
//   return gp_fail(prober_spec_set_ip_family(s, f), err);
// }
// /* The helper neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_set_ip_family
// #cgo nocallback gp_spec_set_ip_family
import "C"

import "fmt"

// IPFamily says which addresses of its host a TCP, HTTP(S) or gRPC probe connects to
// (Spec.IPFamily).
type IPFamily uint32

const (
	// IPAny connects to every address the host resolves to, raced as Go's dialer races them
	// (Happy Eyeballs): the default.
	IPAny IPFamily = C.PROBER_IP_FAMILY_ANY
	// IPv4 connects to IPv4 addresses only (curl's -4); a name without one, or an IPv6
	// literal, fails with ReasonDNS.
	IPv4 IPFamily = C.PROBER_IP_FAMILY_V4
	// IPv6 connects to IPv6 addresses only (curl's -6); a name without one, or an IPv4
	// literal, fails with ReasonDNS.
	IPv6 IPFamily = C.PROBER_IP_FAMILY_V6
	// PreferIPv4 connects to the host's IPv4 addresses if it has any, else to its IPv6 ones
	// (blackbox_exporter's preferred_ip_protocol: ip4 with ip_protocol_fallback).
	PreferIPv4 IPFamily = C.PROBER_IP_FAMILY_PREFER_V4
	// PreferIPv6 connects to the host's IPv6 addresses if it has any, else to its IPv4 ones
	// (blackbox_exporter's default).
	PreferIPv6 IPFamily = C.PROBER_IP_FAMILY_PREFER_V6
)

// String returns the name used in watch files and messages: "any", "ipv4", "ipv6",
// "prefer-ipv4" or "prefer-ipv6".
func (f IPFamily) String() string {
	switch f {
	case IPAny:
		return "any"
	case IPv4:
		return "ipv4"
	case IPv6:
		return "ipv6"
	case PreferIPv4:
		return "prefer-ipv4"
	case PreferIPv6:
		return "prefer-ipv6"
	}
	return fmt.Sprintf("IPFamily(%d)", uint32(f))
}

// configureIPFamily sets Spec.IPFamily on the C spec.
func (b *cbuild) configureIPFamily(s *Spec, cs *C.prober_spec) error {
	if s.IPFamily == IPAny {
		return nil
	}
	if s.IPFamily > PreferIPv6 {
		return &Error{Code: StatusInvalidEnum, Msg: fmt.Sprintf("IPFamily %d is not IPAny, IPv4, IPv6, PreferIPv4 or PreferIPv6", uint32(s.IPFamily))}
	}
	return b.check(C.gp_spec_set_ip_family(cs, C.uint32_t(s.IPFamily), &b.err))
}
