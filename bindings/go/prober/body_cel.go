package prober

// #include "shim.h"
// static inline prober_status gp_spec_set_expect_body_cel(prober_spec *s, uint32_t mode, const char *expr, gp_err *err) {
//   return gp_fail(prober_spec_set_expect_body_cel(s, mode, expr), err);
// }
// /* The helper neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_set_expect_body_cel
// #cgo nocallback gp_spec_set_expect_body_cel
import "C"

// configureBodyCEL sets Spec.FailIfBodyCEL and Spec.ExpectBodyCEL on the C spec: CEL
// expressions over the kept body parsed as JSON (blackbox_exporter's
// fail_if_body_json_matches_cel and fail_if_body_json_not_matches_cel).
func (b *cbuild) configureBodyCEL(s *Spec, cs *C.prober_spec) error {
	for _, c := range []struct {
		expr string
		mode C.uint32_t
	}{
		{s.FailIfBodyCEL, C.PROBER_CEL_FAIL_IF_MATCHES},
		{s.ExpectBodyCEL, C.PROBER_CEL_FAIL_IF_NOT_MATCHES},
	} {
		if c.expr == "" {
			continue
		}
		expr, err := b.str(c.expr, StatusInvalid, "CEL expression")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_expect_body_cel(cs, c.mode, expr, &b.err)); err != nil {
			return err
		}
	}
	return nil
}
