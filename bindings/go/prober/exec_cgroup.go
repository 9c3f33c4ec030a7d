package prober

// #include "shim.h"
// /* prober_spec_set_exec_cgroup neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_set_exec_cgroup
// #cgo nocallback gp_spec_set_exec_cgroup
// static inline prober_status gp_spec_set_exec_cgroup(prober_spec *s, const char *dir, gp_err *err) {
//   return gp_fail(prober_spec_set_exec_cgroup(s, dir), err);
// }
import "C"

// configureExecCgroup applies Spec.ExecCgroup (red-team finding 9): each run of an exec probe
// in a cgroup of its own, killed whole at the end of the run. The library's own child makes
// the move between fork and exec; no goroutine's thread changes cgroup.
func (b *cbuild) configureExecCgroup(s *Spec, cs *C.prober_spec) error {
	if s.ExecCgroup == "" {
		return nil
	}
	dir, err := b.str(s.ExecCgroup, StatusInvalid, "cgroup directory")
	if err != nil {
		return err
	}
	return b.check(C.gp_spec_set_exec_cgroup(cs, dir, &b.err))
}
