package prober

// #include "shim.h"
// /* prober_spec_set_netns neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_set_netns
// #cgo nocallback gp_spec_set_netns
// static inline prober_status gp_spec_set_netns(prober_spec *s, const char *path, gp_err *err) {
//   return gp_fail(prober_spec_set_netns(s, path), err);
// }
import "C"

// configureNetns applies Spec.Netns (issue 29): the probe's sockets are made in that network
// namespace by a library thread; no goroutine's thread ever enters it.
func (b *cbuild) configureNetns(s *Spec, cs *C.prober_spec) error {
	if s.Netns == "" {
		return nil
	}
	path, err := b.str(s.Netns, StatusInvalid, "network namespace path")
	if err != nil {
		return err
	}
	return b.check(C.gp_spec_set_netns(cs, path, &b.err))
}
