package prober

// #include "shim.h"
// static inline prober_status gp_spec_set_max_redirects(prober_spec *s, uint32_t n, gp_err *err) {
//   return gp_fail(prober_spec_set_max_redirects(s, n), err);
// }
// static inline prober_status gp_spec_set_cookies(prober_spec *s, bool on, gp_err *err) {
//   return gp_fail(prober_spec_set_cookies(s, on), err);
// }
// /* The helpers neither keep the pointers they are given nor call back into Go. */
// #cgo noescape gp_spec_set_max_redirects
// #cgo nocallback gp_spec_set_max_redirects
// #cgo noescape gp_spec_set_cookies
// #cgo nocallback gp_spec_set_cookies
import "C"

import "fmt"

// configureHTTPClient sets Spec.MaxRedirects and Spec.Cookies on the C spec.
func (b *cbuild) configureHTTPClient(s *Spec, cs *C.prober_spec) error {
	if s.MaxRedirects < 0 || s.MaxRedirects > 64 {
		return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("MaxRedirects %d is not 1 to 64 (0: the default, 9)", s.MaxRedirects)}
	}
	if s.MaxRedirects != 0 {
		if err := b.check(C.gp_spec_set_max_redirects(cs, C.uint32_t(s.MaxRedirects), &b.err)); err != nil {
			return err
		}
	}
	if s.Cookies {
		if err := b.check(C.gp_spec_set_cookies(cs, true, &b.err)); err != nil {
			return err
		}
	}
	return nil
}
