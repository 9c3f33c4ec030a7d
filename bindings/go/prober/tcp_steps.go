package prober

// #include "shim.h"
// /* The step helper neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_add_tcp_step_with_flags
// #cgo nocallback gp_spec_add_tcp_step_with_flags
// #cgo noescape gp_spec_add_tcp_step_expect_bytes
// #cgo nocallback gp_spec_add_tcp_step_expect_bytes
import "C"

import (
	"fmt"
	"unsafe"
)

// TCPStep is one step of a multi-step TCP exchange (Spec.TCPSteps; blackbox_exporter's
// query_response). In order, the step: with Expect, reads lines of the reply until one
// matches (a line ends at "\n"; it and a "\r" before it are not part of the line; an
// unterminated last line before the peer closes counts); then writes Send as it is (no line
// end is added unless Line); then, with StartTLS, shakes hands with TLS on the connection
// (Spec.TLS, default options when nil), the following steps going through TLS.
//
// The steps share the probe's timeout. Lines are dropped once scanned (a chatty server's
// MOTD or capability list is read line after line); a line is at most 65536 bytes with its
// end and the steps read at most 1 MiB in all. The outcome's Output is the first 10240 bytes
// read (whatever Spec.OutputLimit), OutputTotal counts them all. An Expect that sees the peer
// close (or the 1 MiB) first is a Failure with ReasonBody whose message names the step
// ("step 3 of 9: no line matched ..."); a longer line, or an expansion past 10240 bytes, is a
// Failure with ReasonProtocol, named the same way.
type TCPStep struct {
	// Expect: a regular expression (Rust regex syntax, unanchored) a line must match before
	// the step sends; empty: nothing is read.
	Expect string
	// ExpectBytes: bytes, not a line (blackbox_exporter's expect_bytes): exactly
	// len(ExpectBytes) bytes of the reply are read (those a step before left first) and must
	// be these before the step sends; other bytes fail with ReasonBody ("step N of M: the
	// bytes read differ from those expected ..."), and so does the peer closing first. Not
	// with Expect; at most 65536 bytes.
	ExpectBytes []byte
	// Send: bytes written once Expect matched (at most 10240); nil or empty: nothing.
	Send []byte
	// Expand makes Send a template of Expect's match: $1, ${1}, ${name} are replaced with its
	// groups and $$ with $, as blackbox_exporter's send (Go's Regexp.Expand). Off, a "$" in
	// Send is sent as it is. Needs Expect.
	Expand bool
	// Line makes Send a line: "\n" is written after it, and nothing at all when it is empty
	// once expanded (blackbox_exporter's send: "${1}" with an empty group writes nothing).
	Line bool
	// StartTLS upgrades the connection to TLS after this step (at most one step).
	StartTLS bool
}

// configureTCPSteps appends the spec's TCP steps, in order.
func (b *cbuild) configureTCPSteps(s *Spec, cs *C.prober_spec) error {
	for i := range s.TCPSteps {
		step := &s.TCPSteps[i]
		var re *C.char
		if step.Expect != "" {
			var err error
			if re, err = b.str(step.Expect, StatusInvalid, "expected line"); err != nil {
				return err
			}
		}
		var data unsafe.Pointer
		if len(step.Send) > 0 {
			// Copied to C memory: C copies it again and keeps no pointer to it.
			data = C.CBytes(step.Send)
		}
		var flags C.uint32_t
		if step.Expand {
			flags |= C.PROBER_TCP_STEP_EXPAND
		}
		if step.StartTLS {
			flags |= C.PROBER_TCP_STEP_STARTTLS
		}
		if step.Line {
			flags |= C.PROBER_TCP_STEP_LINE
		}
		var rc C.prober_status
		if len(step.ExpectBytes) > 0 {
			if step.Expect != "" {
				C.free(data)
				return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("TCP step %d: Expect and ExpectBytes are mutually exclusive", i+1)}
			}
			want := C.CBytes(step.ExpectBytes)
			rc = C.gp_spec_add_tcp_step_expect_bytes(cs, (*C.uint8_t)(want), C.size_t(len(step.ExpectBytes)),
				(*C.uint8_t)(data), C.size_t(len(step.Send)), flags, &b.err)
			C.free(want)
		} else {
			rc = C.gp_spec_add_tcp_step_with_flags(cs, re, (*C.uint8_t)(data), C.size_t(len(step.Send)), flags, &b.err)
		}
		C.free(data)
		if err := b.check(rc); err != nil {
			return err
		}
	}
	return nil
}
