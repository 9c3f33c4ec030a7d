package prober

// #include "shim.h"
// /* The request helpers neither keep the pointers they are given nor call back into Go. */
// #cgo noescape gp_spec_set_method
// #cgo nocallback gp_spec_set_method
// #cgo noescape gp_spec_set_body
// #cgo nocallback gp_spec_set_body
import "C"

// configureRequest applies the request options beyond the kubelet (issue 25): Method and
// Body of HTTP probes.
func (b *cbuild) configureRequest(s *Spec, cs *C.prober_spec) error {
	if s.Method != "" {
		m, err := b.str(s.Method, StatusInvalid, "method")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_method(cs, m, &b.err)); err != nil {
			return err
		}
	}
	if len(s.Body) > 0 {
		// Copied to C memory: C copies it again and keeps no pointer to it.
		data := C.CBytes(s.Body)
		defer C.free(data)
		if err := b.check(C.gp_spec_set_body(cs, (*C.uint8_t)(data), C.size_t(len(s.Body)), &b.err)); err != nil {
			return err
		}
	}
	return nil
}
