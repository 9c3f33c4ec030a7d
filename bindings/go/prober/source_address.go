package prober

// #include "shim.h"
// /* prober_spec_set_source_address neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_set_source_address
// #cgo nocallback gp_spec_set_source_address
// static inline prober_status gp_spec_set_source_address(prober_spec *s, const char *a, gp_err *err) {
//   return gp_fail(prober_spec_set_source_address(s, a), err);
// }
import "C"

// configureSourceAddress sets Spec.SourceAddress (issue 34) on the C spec.
func (b *cbuild) configureSourceAddress(s *Spec, cs *C.prober_spec) error {
	if !s.SourceAddress.IsValid() {
		return nil
	}
	addr, err := b.str(s.SourceAddress.String(), StatusInvalid, "source address")
	if err != nil {
		return err
	}
	return b.check(C.gp_spec_set_source_address(cs, addr, &b.err))
}
