package prober

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"strings"
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

// Status is a libprober status code (prober_status): one constant per PROBER_OK and
// PROBER_E_* value of include/prober.h, numbers never reused. Codes are grouped by kind:
//
//   - 0: success (StatusOK).
//   - 1xx: the caller's input is wrong (a missing or invalid argument, an unknown target or
//     role); the call did nothing, and retrying with the same input fails the same way.
//   - 2xx: the operating system refused (StatusIO: descriptors, memory, threads, ...); the
//     input may be fine and a later call may succeed.
//   - 3xx: the engine was used by two calls at once (StatusBusy); the call did nothing. An
//     Engine makes one call at a time on its C engine, so this package does not expect it.
//   - 9xx: the library failed internally (StatusPanic); the engine involved is unusable.
type Status uint32

// Status codes; see include/prober.h.
const (
	// StatusOK: the call succeeded.
	StatusOK Status = C.PROBER_OK
	// StatusNull: a required argument was missing (NULL at the C boundary).
	StatusNull Status = C.PROBER_E_NULL
	// StatusInvalid: an argument is out of range or otherwise invalid.
	StatusInvalid Status = C.PROBER_E_INVALID
	// StatusInvalidUTF8: a string argument is not valid UTF-8.
	StatusInvalidUTF8 Status = C.PROBER_E_INVALID_UTF8
	// StatusInvalidURL: a URL could not be parsed or has an unsupported scheme.
	StatusInvalidURL Status = C.PROBER_E_INVALID_URL
	// StatusInvalidHost: a host name or address is invalid.
	StatusInvalidHost Status = C.PROBER_E_INVALID_HOST
	// StatusInvalidPort: a port is outside 1..65535.
	StatusInvalidPort Status = C.PROBER_E_INVALID_PORT
	// StatusInvalidHeader: a header name or value is invalid (CR, LF, NUL, or a name that is not a
	// token).
	StatusInvalidHeader Status = C.PROBER_E_INVALID_HEADER
	// StatusInvalidArgv: an exec argv is empty or holds a NUL byte.
	StatusInvalidArgv Status = C.PROBER_E_INVALID_ARGV
	// StatusInvalidEnv: an environment variable name or value is invalid.
	StatusInvalidEnv Status = C.PROBER_E_INVALID_ENV
	// StatusInvalidDuration: a timeout, period or delay is out of range.
	StatusInvalidDuration Status = C.PROBER_E_INVALID_DURATION
	// StatusInvalidThreshold: a threshold is out of range (zero, or a success threshold other than
	// 1 for liveness or startup).
	StatusInvalidThreshold Status = C.PROBER_E_INVALID_THRESHOLD
	// StatusWrongKind: the setting does not apply to the spec's Kind.
	StatusWrongKind Status = C.PROBER_E_WRONG_KIND
	// StatusUnknownTarget: no target with this id in this engine.
	StatusUnknownTarget Status = C.PROBER_E_UNKNOWN_TARGET
	// StatusNoProbe: the target has no probe for this role.
	StatusNoProbe Status = C.PROBER_E_NO_PROBE
	// StatusInvalidEnum: a role, policy or other enumerated value is not one of the defined
	// constants.
	StatusInvalidEnum Status = C.PROBER_E_INVALID_ENUM
	// StatusInvalidTLS: a TLS option is invalid (server name, file path, version).
	StatusInvalidTLS Status = C.PROBER_E_INVALID_TLS
	// StatusRunEnded: a host run was completed after it ended (timed out, cancelled, or
	// completed already); the completion was ignored and counted (HostRunStats.Late).
	StatusRunEnded Status = C.PROBER_E_RUN_ENDED
	// StatusUnknownRun: no host run had the id given; the completion was ignored and counted.
	StatusUnknownRun Status = C.PROBER_E_UNKNOWN_RUN
	// StatusIO: an operating-system call failed.
	StatusIO Status = C.PROBER_E_IO
	// StatusBusy: another call on the same engine was running (the C API's one-thread-at-a-time
	// rule, detected); nothing was done. Serialise the calls rather than retry.
	StatusBusy Status = C.PROBER_E_BUSY
	// StatusPanic: a panic inside the library was caught; the engine involved is unusable from now
	// on.
	StatusPanic Status = C.PROBER_E_PANIC
)

// String is the library's description of the code (prober_status_str), e.g. "invalid port".
func (s Status) String() string { return C.GoString(C.prober_status_str(C.uint32_t(s))) }

// Error is a failed libprober call or an invalid argument: the status code and the
// library's explanation (prober_last_error, read on the thread of the failing call).
//
// Branch on what went wrong with errors.Is and the sentinels (ErrInvalidSpec,
// ErrUnknownTarget, ErrNoProbe), or on the exact code with errors.As:
//
//	if errors.Is(err, prober.ErrInvalidSpec) { ... }
//	var pe *prober.Error
//	if errors.As(err, &pe) && pe.Code == prober.StatusInvalidPort { ... }
//
// errors.Is also matches an *Error that has only a Code:
// errors.Is(err, &prober.Error{Code: prober.StatusInvalidPort}).
type Error struct {
	// Code is the status the call returned.
	Code Status
	// Msg is what was wrong, in words (empty when the library said nothing more).
	Msg string

	// spec: a spec was refused (ErrInvalidSpec).
	spec bool
}

// Error gives the code's description and the message ("prober: invalid port: port 0 is
// outside 1..65535"), or the message alone when it already starts with the description
// ("prober: unknown target 42").
func (e *Error) Error() string { return "prober: " + e.text() }

// text is Error without the package prefix.
func (e *Error) text() string {
	code := e.Code.String()
	switch {
	case e.Msg == "":
		return code
	case strings.HasPrefix(e.Msg, code):
		return e.Msg
	}
	return code + ": " + e.Msg
}

// Is reports whether target is an *Error with the same Code and either no Msg or the same
// Msg, or the sentinel of e's code: ErrInvalidSpec for the codes of an invalid spec,
// ErrUnknownTarget, ErrNoProbe.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalidSpec:
		return e.spec
	case ErrUnknownTarget:
		return e.Code == StatusUnknownTarget
	case ErrNoProbe:
		return e.Code == StatusNoProbe
	}
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Msg == "" || t.Msg == e.Msg)
}

var (
	// ErrClosed is returned by the methods of an Engine after Close, and (wrapped, with the
	// library's *Error) after the engine failed: see Engine.Err.
	ErrClosed = errors.New("prober: engine is closed")
	// ErrInvalidSpec matches the *Error of a spec that was refused before anything ran (a
	// bad URL, port, header, duration, threshold, policy, TLS option, field of another kind,
	// ...): from Check, Submit, SetProbe and CheckBlocking.
	ErrInvalidSpec = errors.New("prober: invalid spec")
	// ErrUnknownTarget matches the *Error of a call about a target the engine does not have
	// (never added, or removed).
	ErrUnknownTarget = errors.New("prober: unknown target")
	// ErrNoProbe matches the *Error of a call about a role the target has no probe for.
	ErrNoProbe = errors.New("prober: no probe for this role")
)

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
	// Success: the target answered as healthy.
	Success Result = C.PROBER_RESULT_SUCCESS
	// Warning is logically a success: an HTTP 3xx that was not followed.
	Warning Result = C.PROBER_RESULT_WARNING
	// Failure: the target answered as unhealthy, or not in time (the Reason says how).
	Failure Result = C.PROBER_RESULT_FAILURE
	// Unknown: the probe could not be run (see the message).
	Unknown Result = C.PROBER_RESULT_UNKNOWN
)

// resultNames are the library's names (prober_result_name), indexed by value; the package's
// tests check them against the library so that every surface prints the same name.
var resultNames = [...]string{"success", "warning", "failure", "unknown"}

// String is the result's name as the C library (prober_result_name) and the prober command
// print it ("success", ...), or "Result(n)" for a number this package does not define.
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
	// ReasonNone: nothing went wrong (Success), or no more specific reason applies.
	ReasonNone Reason = C.PROBER_REASON_NONE
	// ReasonRefused: the connection was refused.
	ReasonRefused Reason = C.PROBER_REASON_REFUSED
	// ReasonTimeout: the probe's deadline passed (connect, headers, body, or command).
	ReasonTimeout Reason = C.PROBER_REASON_TIMEOUT
	// ReasonReset: the peer reset the connection after it was established.
	ReasonReset Reason = C.PROBER_REASON_RESET
	// ReasonUnreachable: network or host unreachable, or another connect error.
	ReasonUnreachable Reason = C.PROBER_REASON_UNREACHABLE
	// ReasonDNS: the host name could not be resolved.
	ReasonDNS Reason = C.PROBER_REASON_DNS
	// ReasonStatus: an HTTP status outside 200..399, or outside Spec.ExpectStatus.
	ReasonStatus Reason = C.PROBER_REASON_STATUS
	// ReasonRedirect: a 3xx response that was not followed (Warning).
	ReasonRedirect Reason = C.PROBER_REASON_REDIRECT
	// ReasonTooManyRedirects: more than 10 redirects.
	ReasonTooManyRedirects Reason = C.PROBER_REASON_TOO_MANY_REDIRECTS
	// ReasonProtocol: the peer did not speak the protocol correctly.
	ReasonProtocol Reason = C.PROBER_REASON_PROTOCOL
	// ReasonBrokenBody: the body ended before its declared end.
	ReasonBrokenBody Reason = C.PROBER_REASON_BROKEN_BODY
	// ReasonExitCode: the command exited with a non-zero status.
	ReasonExitCode Reason = C.PROBER_REASON_EXIT_CODE
	// ReasonSignal: the command was ended by a signal it did not get from the library.
	ReasonSignal Reason = C.PROBER_REASON_SIGNAL
	// ReasonSpawn: the command could not be started (no such file, permission denied, ...).
	ReasonSpawn Reason = C.PROBER_REASON_SPAWN
	// ReasonUnsupported: the probe needs a feature this build lacks.
	ReasonUnsupported Reason = C.PROBER_REASON_UNSUPPORTED
	// ReasonIO: another I/O error of the local system.
	ReasonIO Reason = C.PROBER_REASON_IO
	// ReasonCancelled: the probe was cancelled before it finished (target removed, engine closed).
	ReasonCancelled Reason = C.PROBER_REASON_CANCELLED
	// ReasonTLS: the TLS handshake or certificate verification failed, or TLS files were unusable.
	ReasonTLS Reason = C.PROBER_REASON_TLS
	// ReasonInternal: a probe's own code failed inside the library (a caught panic); the run is
	// Unknown.
	ReasonInternal Reason = C.PROBER_REASON_INTERNAL
	// ReasonResource: the node ran out of descriptors, buffer space, memory, threads or processes;
	// always Unknown, never counted against the target.
	ReasonResource Reason = C.PROBER_REASON_RESOURCE
	// ReasonBody: the HTTP body did not match (Spec.ExpectBody, Spec.ExpectBodyCEL, Spec.FailIfBodyCEL).
	ReasonBody Reason = C.PROBER_REASON_BODY
	// ReasonDenied: the destination was refused by an allow-list of addresses (set through the
	// Rust API); nothing was connected to.
	ReasonDenied Reason = C.PROBER_REASON_DENIED
	// ReasonNamespace: the probe's network namespace (Spec.Netns) could not be used: no such
	// path, not a network namespace, or no permission to enter it; always Unknown.
	ReasonNamespace Reason = C.PROBER_REASON_NAMESPACE
)

// reasonNames are the library's names (prober_reason_name), indexed by value; the package's
// tests check them against the library so that every surface prints the same name.
var reasonNames = [...]string{
	"none", "refused", "timeout", "reset", "unreachable", "dns", "status", "redirect",
	"too_many_redirects", "protocol", "broken_body", "exit_code", "signal", "spawn",
	"unsupported", "io", "cancelled", "tls", "internal", "resource", "body", "denied",
	"namespace",
}

// String is the reason's name as the C library (prober_reason_name) and the prober command
// print it ("refused", "too_many_redirects", ...), or "Reason(n)" for a number this package
// does not define.
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
	// Startup gates the other two: they do not run until it has succeeded once.
	Startup Role = C.PROBER_ROLE_STARTUP
	// Readiness says whether the target should receive traffic.
	Readiness Role = C.PROBER_ROLE_READINESS
	// Liveness says whether the target is alive (the kubelet restarts a container whose
	// liveness fails).
	Liveness Role = C.PROBER_ROLE_LIVENESS
)

var roleNames = [...]string{"startup", "readiness", "liveness"}

// check refuses a number that is not one of the three roles.
func (r Role) check() error {
	if int(r) < len(roleNames) {
		return nil
	}
	return &Error{Code: StatusInvalidEnum,
		Msg: fmt.Sprintf("role %d is not Startup, Readiness or Liveness", uint32(r))}
}

// String is the role's name ("startup", "readiness", "liveness"), or "Role(n)" for a number
// this package does not define.
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", uint32(r))
}
