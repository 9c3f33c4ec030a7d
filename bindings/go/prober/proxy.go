package prober

// #include "shim.h"
// static inline prober_status gp_spec_set_proxy(prober_spec *s, const char *url, gp_err *err) {
//   return gp_fail(prober_spec_set_proxy(s, url), err);
// }
// static inline prober_status gp_spec_set_no_proxy(prober_spec *s, const char *list, gp_err *err) {
//   return gp_fail(prober_spec_set_no_proxy(s, list), err);
// }
// static inline prober_status gp_spec_add_proxy_connect_header(prober_spec *s, const char *n, const char *v, gp_err *err) {
//   return gp_fail(prober_spec_add_proxy_connect_header(s, n, v), err);
// }
// /* The helpers neither keep the pointers they are given nor call back into Go. */
// #cgo noescape gp_spec_set_proxy
// #cgo nocallback gp_spec_set_proxy
// #cgo noescape gp_spec_set_no_proxy
// #cgo nocallback gp_spec_set_no_proxy
// #cgo noescape gp_spec_add_proxy_connect_header
// #cgo nocallback gp_spec_add_proxy_connect_header
import "C"

// configureProxy sets Spec.Proxy, Spec.NoProxy and Spec.ProxyConnectHeaders on the C spec.
func (b *cbuild) configureProxy(s *Spec, cs *C.prober_spec) error {
	if s.Proxy == "" {
		if s.NoProxy != "" || len(s.ProxyConnectHeaders) > 0 {
			return &Error{Code: StatusInvalid, Msg: "NoProxy and ProxyConnectHeaders need Proxy"}
		}
		return nil
	}
	url, err := b.str(s.Proxy, StatusInvalid, "proxy URL")
	if err != nil {
		return err
	}
	if err := b.check(C.gp_spec_set_proxy(cs, url, &b.err)); err != nil {
		return err
	}
	if s.NoProxy != "" {
		list, err := b.str(s.NoProxy, StatusInvalid, "no-proxy list")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_no_proxy(cs, list, &b.err)); err != nil {
			return err
		}
	}
	for _, h := range s.ProxyConnectHeaders {
		name, err := b.str(h.Name, StatusInvalidHeader, "CONNECT header name")
		if err != nil {
			return err
		}
		value, err := b.str(h.Value, StatusInvalidHeader, "CONNECT header value")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_add_proxy_connect_header(cs, name, value, &b.err)); err != nil {
			return err
		}
	}
	return nil
}
