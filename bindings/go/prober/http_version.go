package prober

// #include "shim.h"
// static inline prober_status gp_spec_set_http_version(prober_spec *s, uint32_t v, gp_err *err) {
//   return gp_fail(prober_spec_set_http_version(s, v), err);
// }
// /* The helper neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_set_http_version
// #cgo nocallback gp_spec_set_http_version
import "C"

import "fmt"

// HTTPVersion says which HTTP version an HTTP probe speaks (Spec.HTTPVersion).
type HTTPVersion uint32

const (
	// HTTPAuto is the kubelet's: HTTP/1.1 on http://; on https:// TLS offers ALPN "h2" and
	// "http/1.1" and the probe speaks whichever the server picks, as Go's transport does for
	// the kubelet.
	HTTPAuto HTTPVersion = C.PROBER_HTTP_VERSION_AUTO
	// HTTP1 speaks HTTP/1.1 only: ALPN offers "http/1.1" alone (the kubelet run with
	// DISABLE_HTTP2).
	HTTP1 HTTPVersion = C.PROBER_HTTP_VERSION_HTTP1
	// H2C speaks HTTP/2 over cleartext with prior knowledge on http:// URLs: the kubelet's
	// httpGet.protocol: HTTP2 (KEP-5999). Refused on https:// URLs.
	H2C HTTPVersion = C.PROBER_HTTP_VERSION_H2C
)

// String returns the name used in watch files and messages: "auto", "http1" or "h2c".
func (v HTTPVersion) String() string {
	switch v {
	case HTTPAuto:
		return "auto"
	case HTTP1:
		return "http1"
	case H2C:
		return "h2c"
	}
	return fmt.Sprintf("HTTPVersion(%d)", uint32(v))
}

// configureHTTPVersion sets Spec.HTTPVersion on the C spec.
func (b *cbuild) configureHTTPVersion(s *Spec, cs *C.prober_spec) error {
	if s.HTTPVersion == HTTPAuto {
		return nil
	}
	if s.HTTPVersion > H2C {
		return &Error{Code: StatusInvalidEnum, Msg: fmt.Sprintf("HTTPVersion %d is not HTTPAuto, HTTP1 or H2C", uint32(s.HTTPVersion))}
	}
	return b.check(C.gp_spec_set_http_version(cs, C.uint32_t(s.HTTPVersion), &b.err))
}
