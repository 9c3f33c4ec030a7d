package prober

// #include "shim.h"
import "C"

import (
	"crypto/tls"
	"time"
	"unsafe"
)

// Outcome is the full result of one probe run.
type Outcome struct {
	// Result is the run's result.
	Result Result
	// Reason is the machine-readable cause (ReasonNone on a plain success).
	Reason Reason
	// Message is the kubelet's wording ("HTTP probe failed with statuscode: 503", ...).
	Message string
	// Output is the captured HTTP body or command output (stdout and stderr interleaved), at
	// most the spec's output limit.
	Output []byte
	// Truncated is true when more output was seen than kept.
	Truncated bool
	// OutputTotal counts the output bytes seen in all, kept or not.
	OutputTotal int64
	// HTTPStatus is the final HTTP status, or 0.
	HTTPStatus int
	// ExitCode is the command's exit code, or -1 when it did not exit normally (or was not a
	// command).
	ExitCode int
	// Duration of the whole run.
	Duration time.Duration
	// Timings of the run's phases.
	Timings Timings
	// CertNotAfter is the expiry of the peer's leaf certificate; the zero Time when the run
	// saw no certificate.
	CertNotAfter time.Time
	// TLSVersion is the version of the run's last completed TLS handshake,
	// tls.VersionTLS12 or tls.VersionTLS13; 0 without one.
	TLSVersion uint16
	// Proto is the final HTTP response's version as http.Response.Proto writes it:
	// "HTTP/1.0", "HTTP/1.1" or "HTTP/2.0"; "" without a response.
	Proto string
	// GRPCStatus is the gRPC status code of the health RPC as grpc-go reports it (a
	// codes.Code: 0 OK once the server answered, 14 Unavailable when the connection failed,
	// 4 DeadlineExceeded at the deadline); -1 when the run reached no RPC or was not gRPC.
	GRPCStatus int
	// GRPCServingStatus is the health response's serving status (1 SERVING, 2 NOT_SERVING,
	// 3 SERVICE_UNKNOWN, 0 UNKNOWN); -1 without a decoded response.
	GRPCServingStatus int
	// DNS is what a DNS probe's run found out (rcode, record counts, serial, truncation,
	// phases); nil for other probes.
	DNS *DNSFacts
	// ICMP is what an ICMP probe's run measured (counts, loss, round-trip times, the reply's
	// hop limit); nil for other probes.
	ICMP *ICMPFacts
}

// protoOf is Proto for the C ABI's HTTP version code.
func protoOf(v C.uint32_t) string {
	switch v {
	case 10:
		return "HTTP/1.0"
	case 11:
		return "HTTP/1.1"
	case 20:
		return "HTTP/2.0"
	}
	return ""
}

func tlsVersionOf(v C.uint32_t) uint16 {
	switch v {
	case 12:
		return tls.VersionTLS12
	case 13:
		return tls.VersionTLS13
	}
	return 0
}

// Timings says where the time of one run went. Each phase is the time from the start of the
// run to the moment it ended (curl's -w convention: Connect <= TLS <= FirstByte <= Total);
// Resolve is how long the name lookup took. A negative value (-1) means the phase did not
// happen.
type Timings struct {
	// Resolve is how long the host name lookup took (-1 for IP literals, exec probes and
	// runs on a kept connection).
	Resolve time.Duration
	// Connect is from the start of the run to the established connection (-1 for exec
	// probes, and for an HTTP run on a connection kept from an earlier run: Spec.KeepAlive).
	Connect time.Duration
	// TLS is from the start of the run to the end of the TLS handshake (-1 without TLS, and
	// on a kept connection).
	TLS time.Duration
	// FirstByte is from the start of the run to the first byte of the response (HTTP,
	// gRPC), of the reply (TCP send/expect) or of the output (exec).
	FirstByte time.Duration
	// Total is the whole run.
	Total time.Duration
}

func micros(us C.int64_t) time.Duration {
	if us < 0 {
		return -1
	}
	return time.Duration(us) * time.Microsecond
}

func unreported(total time.Duration) Timings {
	return Timings{Resolve: -1, Connect: -1, TLS: -1, FirstByte: -1, Total: total}
}

// goBytes copies a view into a new Go slice (nil when empty).
func goBytes(s C.prober_str) []byte {
	if s.len == 0 {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(s.ptr), C.int(s.len))
}

func goString(s C.prober_str) string {
	if s.len == 0 {
		return ""
	}
	return C.GoStringN(s.ptr, C.int(s.len))
}

// outcomeOf copies a C outcome (all of it, timings and certificate included).
func outcomeOf(o *C.prober_outcome) Outcome {
	out := Outcome{
		Result:      Result(C.prober_outcome_result(o)),
		Reason:      Reason(C.prober_outcome_reason(o)),
		Message:     goString(C.prober_outcome_message(o)),
		Output:      goBytes(C.prober_outcome_output(o)),
		Truncated:   bool(C.prober_outcome_truncated(o)),
		OutputTotal: int64(C.prober_outcome_output_total(o)),
		HTTPStatus:  int(C.prober_outcome_http_status(o)),
		ExitCode:    int(C.prober_outcome_exit_code(o)),
		Duration:    time.Duration(C.prober_outcome_duration_us(o)) * time.Microsecond,

		TLSVersion:        tlsVersionOf(C.prober_outcome_tls_version(o)),
		Proto:             protoOf(C.prober_outcome_http_version(o)),
		GRPCStatus:        int(C.prober_outcome_grpc_status(o)),
		GRPCServingStatus: int(C.prober_outcome_grpc_serving_status(o)),

		DNS:  dnsFactsOf(o),
		ICMP: icmpFactsOf(o),
	}
	var t C.prober_timings
	if C.prober_outcome_timings(o, &t) == C.PROBER_OK {
		out.Timings = Timings{
			Resolve:   micros(t.resolve_us),
			Connect:   micros(t.connect_us),
			TLS:       micros(t.tls_us),
			FirstByte: micros(t.first_byte_us),
			Total:     micros(t.total_us),
		}
	} else {
		out.Timings = unreported(out.Duration)
	}
	var notAfter C.int64_t
	if C.prober_outcome_cert_not_after(o, &notAfter) {
		out.CertNotAfter = time.Unix(int64(notAfter), 0)
	}
	return out
}

// outcomeOfEvent copies the outcome part of a drained event. It must run before the next
// drain, step or wait on the engine, which invalidate the event's views.
func outcomeOfEvent(ev *C.prober_event) Outcome {
	d := time.Duration(ev.duration_us) * time.Microsecond
	o := Outcome{
		Result:      Result(ev.result),
		Reason:      Reason(ev.reason),
		Message:     goString(ev.message),
		Output:      goBytes(ev.output),
		Truncated:   bool(ev.truncated),
		OutputTotal: int64(ev.output_total),
		HTTPStatus:  int(ev.http_status),
		ExitCode:    int(ev.exit_code),
		Duration:    d,

		TLSVersion:        tlsVersionOf(ev.tls_version),
		Proto:             protoOf(ev.http_version),
		GRPCStatus:        int(ev.grpc_status),
		GRPCServingStatus: int(ev.grpc_serving_status),
		Timings: Timings{
			Resolve:   micros(ev.timings.resolve_us),
			Connect:   micros(ev.timings.connect_us),
			TLS:       micros(ev.timings.tls_us),
			FirstByte: micros(ev.timings.first_byte_us),
			Total:     d,
		},
	}
	if ev.has_cert_not_after {
		o.CertNotAfter = time.Unix(int64(ev.cert_not_after), 0)
	}
	return o
}

// eventWithFacts is eventOf for the i-th event of the loop's last turn, with the DNS or ICMP
// facts that gp_loop_turn read for its run.
func eventWithFacts(l *C.gp_loop, i int) Event {
	ev := eventOf(&l.ev[i])
	// The slot is a C union of the two structs, which cgo gives Go as a byte array in C
	// memory, aligned for both.
	slot := unsafe.Pointer(&l.fx[i])
	switch l.facts[i] {
	case C.GP_FACTS_DNS:
		ev.Outcome.DNS = dnsFacts((*C.prober_dns_facts)(slot))
	case C.GP_FACTS_ICMP:
		ev.Outcome.ICMP = icmpFacts((*C.prober_icmp_facts)(slot))
	}
	return ev
}
