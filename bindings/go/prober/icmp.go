package prober

// #include "shim.h"
// static inline prober_status gp_spec_new_icmp(const char *host, prober_spec **out, gp_err *err) {
//   return gp_fail(prober_spec_new_icmp(host, out), err);
// }
// static inline prober_status gp_spec_set_icmp_payload_size(prober_spec *s, size_t n, gp_err *err) {
//   return gp_fail(prober_spec_set_icmp_payload_size(s, n), err);
// }
// static inline prober_status gp_spec_set_icmp_dont_fragment(prober_spec *s, bool on, gp_err *err) {
//   return gp_fail(prober_spec_set_icmp_dont_fragment(s, on), err);
// }
// static inline prober_status gp_spec_set_icmp_ttl(prober_spec *s, uint32_t ttl, gp_err *err) {
//   return gp_fail(prober_spec_set_icmp_ttl(s, ttl), err);
// }
// static inline prober_status gp_spec_set_icmp_packets(prober_spec *s, uint32_t n, uint32_t ms, gp_err *err) {
//   return gp_fail(prober_spec_set_icmp_packets(s, n, ms), err);
// }
// static inline prober_status gp_spec_set_icmp_max_loss_percent(prober_spec *s, uint32_t p, gp_err *err) {
//   return gp_fail(prober_spec_set_icmp_max_loss_percent(s, p), err);
// }
// static inline prober_status gp_spec_set_icmp_socket(prober_spec *s, uint32_t k, gp_err *err) {
//   return gp_fail(prober_spec_set_icmp_socket(s, k), err);
// }
// /* The helpers neither keep the pointers they are given nor call back into Go. */
// #cgo noescape gp_spec_new_icmp
// #cgo nocallback gp_spec_new_icmp
// #cgo noescape gp_spec_set_icmp_payload_size
// #cgo nocallback gp_spec_set_icmp_payload_size
// #cgo noescape gp_spec_set_icmp_dont_fragment
// #cgo nocallback gp_spec_set_icmp_dont_fragment
// #cgo noescape gp_spec_set_icmp_ttl
// #cgo nocallback gp_spec_set_icmp_ttl
// #cgo noescape gp_spec_set_icmp_packets
// #cgo nocallback gp_spec_set_icmp_packets
// #cgo noescape gp_spec_set_icmp_max_loss_percent
// #cgo nocallback gp_spec_set_icmp_max_loss_percent
// #cgo noescape gp_spec_set_icmp_socket
// #cgo nocallback gp_spec_set_icmp_socket
import "C"

import (
	"fmt"
	"math"
	"net/netip"
	"time"
)

// ICMPSocket says which kind of ICMP socket an ICMP probe may use (ICMPOptions.Socket), or
// which one a run used (ICMPFacts.Socket).
type ICMPSocket uint32

const (
	// ICMPSocketAuto: an unprivileged ICMP socket where net.ipv4.ping_group_range admits the
	// process, else a raw one (blackbox_exporter's order); the default. In ICMPFacts: no
	// socket was opened.
	ICMPSocketAuto ICMPSocket = C.PROBER_ICMP_SOCKET_AUTO
	// ICMPSocketUnprivileged: only an unprivileged ICMP socket (SOCK_DGRAM).
	ICMPSocketUnprivileged ICMPSocket = C.PROBER_ICMP_SOCKET_UNPRIVILEGED
	// ICMPSocketRaw: only a raw socket (needs CAP_NET_RAW).
	ICMPSocketRaw ICMPSocket = C.PROBER_ICMP_SOCKET_RAW
)

// ICMPAnyLossFails is the ICMPOptions.MaxLossPercent that fails a run when any request got no
// reply (a threshold of 0%, which the field's zero value cannot say).
const ICMPAnyLossFails = -1

// ICMPOptions are an ICMP probe's echo requests; zero fields take the defaults: one request
// with 28 bytes of data, the system's TTL, either socket kind.
type ICMPOptions struct {
	// PayloadSize is the bytes of data after each echo header (1 to 65527; 0: 28, as
	// blackbox_exporter sends). The data begins with a random cookie of 8 bytes that tells
	// our replies from others'.
	PayloadSize int
	// DontFragment sets don't-fragment on IPv4 requests: one larger than the path's MTU then
	// fails instead of being fragmented.
	DontFragment bool
	// TTL is the TTL (IPv4) or hop limit (IPv6) of the requests, 1 to 255; 0: the system's.
	TTL int
	// Packets is how many echo requests a run sends (1 to 10000; 0: 1), Interval apart (at
	// least 2ms; 0: 1s), as ping -c Packets -i Interval. All of them go out within the
	// spec's Timeout, the last with time to be answered: a spec whose Packets-1 intervals
	// take the Timeout or more is refused.
	Packets  int
	Interval time.Duration
	// MaxLossPercent fails a run when more than this share of its requests got no reply (1 to
	// 100; 0: 100, so only a run with no reply at all fails; ICMPAnyLossFails: any loss fails).
	MaxLossPercent int
	// Socket is ICMPSocketAuto (the default), ICMPSocketUnprivileged or ICMPSocketRaw. A kind
	// the system does not allow makes each run Unknown, the message saying why.
	Socket ICMPSocket
}

// ICMPFacts is what an ICMP run measured: ping -c's summary and blackbox_exporter's
// probe_icmp_* figures (Outcome.ICMP). Round-trip times are negative (-1) when no reply came.
type ICMPFacts struct {
	// Sent and Received count the requests and their replies (each answered at most once).
	Sent, Received int
	// Loss is the share of requests that got no reply, 0 to 1 (1 when none was sent).
	Loss float64
	// RTTMin, RTTAvg and RTTMax are the shortest, mean and longest round-trip times.
	RTTMin, RTTAvg, RTTMax time.Duration
	// RTTStddev is the population standard deviation of the round-trip times: ping's mdev,
	// the jitter smokeping plots.
	RTTStddev time.Duration
	// FirstRTT is the first answered request's round-trip time
	// (probe_icmp_duration_seconds{phase="rtt"}).
	FirstRTT time.Duration
	// Resolve and Setup are the phases "resolve" (0 for an IP literal) and "setup" (opening
	// and setting up the socket).
	Resolve, Setup time.Duration
	// ReplyHopLimit is the last reply's TTL or hop limit (probe_icmp_reply_hop_limit); -1
	// without a reply.
	ReplyHopLimit int
	// Socket is the kind of socket used: ICMPSocketUnprivileged or ICMPSocketRaw;
	// ICMPSocketAuto when none was opened.
	Socket ICMPSocket
	// ID is the echo identifier the requests carried (on an unprivileged socket, the kernel's).
	ID uint16
	// Error is the last ICMP error that came back for one of the requests (destination
	// unreachable, time exceeded, ...); nil without one.
	Error *ICMPError
}

// ICMPError is an ICMP error about one of a run's echo requests.
type ICMPError struct {
	// Type and Code are the message's, numbered as ICMP (From an IPv4 address) or ICMPv6
	// (From an IPv6 address) numbers them: type 3 or 11 for ICMP, 1, 2 or 3 for ICMPv6.
	Type, Code int
	// From is who sent it: a router on the way, or the target itself.
	From netip.Addr
}

// ICMP is an ICMP echo probe of host (a name or an IP literal): one echo request, passing when
// its reply comes back within the timeout. Set the other options on its ICMP field.
func ICMP(host string) Spec { return Spec{Kind: KindICMP, Host: host} }

// createICMP makes the C spec of an ICMP probe.
func (b *cbuild) createICMP(s *Spec, out **C.prober_spec) error {
	host, err := b.str(s.Host, StatusInvalidHost, "host")
	if err != nil {
		return err
	}
	return b.check(C.gp_spec_new_icmp(host, out, &b.err))
}

// configureICMP sets Spec.ICMP's options on the C spec.
func (b *cbuild) configureICMP(s *Spec, cs *C.prober_spec) error {
	o := s.ICMP
	if o == nil || s.Kind != KindICMP {
		return nil
	}
	if o.PayloadSize != 0 {
		if o.PayloadSize < 0 {
			return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("ICMP payload size %d is negative", o.PayloadSize)}
		}
		if err := b.check(C.gp_spec_set_icmp_payload_size(cs, C.size_t(o.PayloadSize), &b.err)); err != nil {
			return err
		}
	}
	if o.DontFragment {
		if err := b.check(C.gp_spec_set_icmp_dont_fragment(cs, true, &b.err)); err != nil {
			return err
		}
	}
	if o.TTL != 0 {
		if o.TTL < 0 || o.TTL > 255 {
			return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("ICMP TTL %d is out of range (1 to 255)", o.TTL)}
		}
		if err := b.check(C.gp_spec_set_icmp_ttl(cs, C.uint32_t(o.TTL), &b.err)); err != nil {
			return err
		}
	}
	if o.Packets != 0 || o.Interval != 0 {
		packets, interval := o.Packets, o.Interval
		if packets == 0 {
			packets = 1
		}
		if interval == 0 {
			interval = time.Second
		}
		if packets < 0 || packets > math.MaxUint32 {
			return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("ICMP packets %d is out of range (1 to 10000)", packets)}
		}
		ms, err := millis(interval, "ICMP interval")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_icmp_packets(cs, C.uint32_t(packets), ms, &b.err)); err != nil {
			return err
		}
	}
	if o.MaxLossPercent != 0 {
		percent := o.MaxLossPercent
		if percent == ICMPAnyLossFails {
			percent = 0
		} else if percent < 0 || percent > 100 {
			return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("ICMP MaxLossPercent %d is out of range (1 to 100, or ICMPAnyLossFails)", percent)}
		}
		if err := b.check(C.gp_spec_set_icmp_max_loss_percent(cs, C.uint32_t(percent), &b.err)); err != nil {
			return err
		}
	}
	if o.Socket != ICMPSocketAuto {
		if o.Socket > ICMPSocketRaw {
			return &Error{Code: StatusInvalidEnum, Msg: fmt.Sprintf("ICMP Socket %d is not ICMPSocketAuto, ICMPSocketUnprivileged or ICMPSocketRaw", uint32(o.Socket))}
		}
		if err := b.check(C.gp_spec_set_icmp_socket(cs, C.uint32_t(o.Socket), &b.err)); err != nil {
			return err
		}
	}
	return nil
}

// icmpFactsOf copies a C outcome's ICMP facts; nil for a run that was not an ICMP probe's.
func icmpFactsOf(o *C.prober_outcome) *ICMPFacts {
	var f C.prober_icmp_facts
	if !C.prober_outcome_icmp(o, &f) {
		return nil
	}
	return icmpFacts(&f)
}

// icmpFacts is the Go form of C's ICMP facts.
func icmpFacts(f *C.prober_icmp_facts) *ICMPFacts {
	facts := &ICMPFacts{
		Sent:          int(f.sent),
		Received:      int(f.received),
		Loss:          float64(f.loss),
		RTTMin:        micros(f.rtt_min_us),
		RTTAvg:        micros(f.rtt_avg_us),
		RTTMax:        micros(f.rtt_max_us),
		RTTStddev:     micros(f.rtt_stddev_us),
		FirstRTT:      micros(f.first_rtt_us),
		Resolve:       micros(f.resolve_us),
		Setup:         micros(f.setup_us),
		ReplyHopLimit: int(f.reply_hop_limit),
		Socket:        ICMPSocket(f.socket),
		ID:            uint16(f.id),
	}
	var from [16]byte
	for i := range from {
		from[i] = byte(f.error_from[i])
	}
	switch f.error_family {
	case 4:
		facts.Error = &ICMPError{Type: int(f.error_type), Code: int(f.error_code), From: netip.AddrFrom4([4]byte(from[:4]))}
	case 6:
		facts.Error = &ICMPError{Type: int(f.error_type), Code: int(f.error_code), From: netip.AddrFrom16(from)}
	}
	return facts
}
