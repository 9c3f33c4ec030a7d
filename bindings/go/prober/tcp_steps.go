package prober

// #include "shim.h"
// /* The step helper neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_add_tcp_step
// #cgo nocallback gp_spec_add_tcp_step
import "C"

import "unsafe"

// TCPStep is one step of a multi-step TCP exchange (Spec.TCPSteps; blackbox_exporter's
// query_response). In order, the step: with Expect, reads lines of the reply until one
// matches (a line ends at "\n"; it and a "\r" before it are not part of the line; an
// unterminated last line before the peer closes counts); then writes Send as it is (no line
// end is added); then, with StartTLS, shakes hands with TLS on the connection (Spec.TLS,
// default options when nil), the following steps going through TLS.
//
// The steps share the probe's timeout and read at most 10240 bytes in all; the reply is the
// outcome's Output. An Expect that sees the peer close (or the limit) first is a Failure with
// ReasonBody whose message names the step ("step 3 of 9: no line matched ...").
type TCPStep struct {
	// Expect: a regular expression (Rust regex syntax, unanchored) a line must match before
	// the step sends; empty: nothing is read.
	Expect string
	// Send: bytes written once Expect matched (at most 10240); nil or empty: nothing.
	Send []byte
	// Expand makes Send a template of Expect's match: $1, ${1}, ${name} are replaced with its
	// groups and $$ with $, as blackbox_exporter's send (Go's Regexp.Expand). Off, a "$" in
	// Send is sent as it is. Needs Expect.
	Expand bool
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
		rc := C.gp_spec_add_tcp_step(cs, re, (*C.uint8_t)(data), C.size_t(len(step.Send)), C.bool(step.Expand), C.bool(step.StartTLS), &b.err)
		C.free(data)
		if err := b.check(rc); err != nil {
			return err
		}
	}
	return nil
}
