package prober

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

func init() {
	if got, want := uint32(C.prober_abi_version()), uint32(C.PROBER_ABI_VERSION); got != want {
		panic(fmt.Sprintf("prober: libprober ABI version %d does not match the header's %d "+
			"(libprober %s linked; rebuild the library or the Go package so that they match)",
			got, want, C.GoString(C.prober_version())))
	}
}

// Version is the version of the linked libprober, e.g. "0.1.0".
func Version() string { return C.GoString(C.prober_version()) }

// ABIVersion is the ABI version of the linked libprober (checked against the header at init).
func ABIVersion() int { return int(C.prober_abi_version()) }

// Status is a libprober status code (prober_status). Codes are grouped by kind (1xx usage,
// 2xx operating system, 9xx internal) and never renumbered.
type Status uint32

// Status codes; see include/prober.h.
const (
	StatusOK               Status = C.PROBER_OK
	StatusNull             Status = C.PROBER_E_NULL
	StatusInvalid          Status = C.PROBER_E_INVALID
	StatusInvalidUTF8      Status = C.PROBER_E_INVALID_UTF8
	StatusInvalidURL       Status = C.PROBER_E_INVALID_URL
	StatusInvalidHost      Status = C.PROBER_E_INVALID_HOST
	StatusInvalidPort      Status = C.PROBER_E_INVALID_PORT
	StatusInvalidHeader    Status = C.PROBER_E_INVALID_HEADER
	StatusInvalidArgv      Status = C.PROBER_E_INVALID_ARGV
	StatusInvalidEnv       Status = C.PROBER_E_INVALID_ENV
	StatusInvalidDuration  Status = C.PROBER_E_INVALID_DURATION
	StatusInvalidThreshold Status = C.PROBER_E_INVALID_THRESHOLD
	StatusWrongKind        Status = C.PROBER_E_WRONG_KIND
	StatusUnknownTarget    Status = C.PROBER_E_UNKNOWN_TARGET
	StatusNoProbe          Status = C.PROBER_E_NO_PROBE
	StatusInvalidEnum      Status = C.PROBER_E_INVALID_ENUM
	StatusInvalidTLS       Status = C.PROBER_E_INVALID_TLS
	StatusIO               Status = C.PROBER_E_IO
	StatusPanic            Status = C.PROBER_E_PANIC
)

// String is the library's description of the code (prober_status_str), e.g. "invalid port".
func (s Status) String() string { return C.GoString(C.prober_status_str(C.uint32_t(s))) }

// Error is a failed libprober call: the status code and the library's explanation
// (prober_last_error, read on the thread of the failing call).
//
// Compare codes with errors.As, or with errors.Is against an *Error that has only a Code:
//
//	errors.Is(err, &prober.Error{Code: prober.StatusInvalidPort})
type Error struct {
	Code Status
	Msg  string
}

func (e *Error) Error() string {
	if e.Msg == "" {
		return "prober: " + e.Code.String()
	}
	return "prober: " + e.Code.String() + ": " + e.Msg
}

// Is reports whether target is an *Error with the same Code and either no Msg or the same Msg.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Msg == "" || t.Msg == e.Msg)
}

// ErrClosed is returned by the methods of an Engine after Close.
var ErrClosed = errors.New("prober: engine is closed")

// newError builds an *Error from a status and the error text copied by the C shim.
func newError(rc C.prober_status, e *C.gp_err) error {
	msg := ""
	if e != nil && e.len > 0 {
		// A plain copy (not C.GoStringN): e does not escape, so callers keep their gp_err
		// on the stack.
		msg = string(unsafe.Slice((*byte)(unsafe.Pointer(&e.msg[0])), int(e.len)))
	}
	return &Error{Code: Status(rc), Msg: msg}
}

// Result is the result of a probe run or the published value of a worker.
type Result uint32

// The kubelet's four results.
const (
	Success Result = C.PROBER_RESULT_SUCCESS
	// Warning is logically a success: an HTTP 3xx that was not followed.
	Warning Result = C.PROBER_RESULT_WARNING
	Failure Result = C.PROBER_RESULT_FAILURE
	// Unknown: the probe could not be run (see the message).
	Unknown Result = C.PROBER_RESULT_UNKNOWN
)

var resultNames = [...]string{"success", "warning", "failure", "unknown"}

func (r Result) String() string {
	if int(r) < len(resultNames) {
		return resultNames[r]
	}
	return fmt.Sprintf("Result(%d)", uint32(r))
}

// OK reports whether r counts as healthy (Success or Warning), as the kubelet does.
func (r Result) OK() bool { return r == Success || r == Warning }

// Reason is the machine-readable cause of an outcome.
type Reason uint32

// Reasons; numbers are never reused.
const (
	ReasonNone             Reason = C.PROBER_REASON_NONE
	ReasonRefused          Reason = C.PROBER_REASON_REFUSED
	ReasonTimeout          Reason = C.PROBER_REASON_TIMEOUT
	ReasonReset            Reason = C.PROBER_REASON_RESET
	ReasonUnreachable      Reason = C.PROBER_REASON_UNREACHABLE
	ReasonDNS              Reason = C.PROBER_REASON_DNS
	ReasonStatus           Reason = C.PROBER_REASON_STATUS
	ReasonRedirect         Reason = C.PROBER_REASON_REDIRECT
	ReasonTooManyRedirects Reason = C.PROBER_REASON_TOO_MANY_REDIRECTS
	ReasonProtocol         Reason = C.PROBER_REASON_PROTOCOL
	ReasonBrokenBody       Reason = C.PROBER_REASON_BROKEN_BODY
	ReasonExitCode         Reason = C.PROBER_REASON_EXIT_CODE
	ReasonSignal           Reason = C.PROBER_REASON_SIGNAL
	ReasonSpawn            Reason = C.PROBER_REASON_SPAWN
	ReasonUnsupported      Reason = C.PROBER_REASON_UNSUPPORTED
	ReasonIO               Reason = C.PROBER_REASON_IO
	ReasonCancelled        Reason = C.PROBER_REASON_CANCELLED
	ReasonTLS              Reason = C.PROBER_REASON_TLS
	ReasonInternal         Reason = C.PROBER_REASON_INTERNAL
	ReasonResource         Reason = C.PROBER_REASON_RESOURCE
	// ReasonBody: the HTTP body (Spec.ExpectBody) did not match.
	ReasonBody Reason = C.PROBER_REASON_BODY
)

var reasonNames = [...]string{
	"none", "refused", "timeout", "reset", "unreachable", "dns", "status", "redirect",
	"too-many-redirects", "protocol", "broken-body", "exit-code", "signal", "spawn",
	"unsupported", "io", "cancelled", "tls", "internal", "resource", "body",
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint32(r))
}

// Role is the role of a target's probe worker.
type Role uint32

// Probe roles, with the kubelet's initial values: startup Unknown, readiness Failure,
// liveness Success.
const (
	Startup   Role = C.PROBER_ROLE_STARTUP
	Readiness Role = C.PROBER_ROLE_READINESS
	Liveness  Role = C.PROBER_ROLE_LIVENESS
)

var roleNames = [...]string{"startup", "readiness", "liveness"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", uint32(r))
}
