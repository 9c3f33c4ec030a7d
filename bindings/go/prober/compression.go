package prober

// #include "shim.h"
// static inline prober_status gp_spec_set_compression(prober_spec *s, uint32_t c, gp_err *err) {
//   return gp_fail(prober_spec_set_compression(s, c), err);
// }
// /* The helper neither keeps the pointers it is given nor calls back into Go. */
// #cgo noescape gp_spec_set_compression
// #cgo nocallback gp_spec_set_compression
import "C"

import "fmt"

// Compression is the content coding an HTTP probe decodes its body with (Spec.Compression),
// as blackbox_exporter's compression: the coding named decides, whatever the response's
// Content-Encoding says, and a body that does not decode is a Failure with
// ReasonBrokenBody. OutputLimit bounds the decoded bytes. No Accept-Encoding is added: set
// one in Headers to ask the server for the coding.
type Compression uint32

const (
	// CompressionNone decodes nothing: the body as it arrives (the default, the kubelet's).
	CompressionNone Compression = C.PROBER_COMPRESSION_NONE
	// CompressionIdentity is blackbox_exporter's identity: the body as it arrives.
	CompressionIdentity Compression = C.PROBER_COMPRESSION_IDENTITY
	// CompressionGzip decodes gzip (RFC 1952), members one after another.
	CompressionGzip Compression = C.PROBER_COMPRESSION_GZIP
	// CompressionDeflate decodes raw DEFLATE (RFC 1951), as Go's compress/flate.
	CompressionDeflate Compression = C.PROBER_COMPRESSION_DEFLATE
	// CompressionBr decodes brotli (RFC 7932).
	CompressionBr Compression = C.PROBER_COMPRESSION_BR
)

// String returns the name used in watch files and on the command line: "" for
// CompressionNone, else "identity", "gzip", "deflate" or "br".
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return ""
	case CompressionIdentity:
		return "identity"
	case CompressionGzip:
		return "gzip"
	case CompressionDeflate:
		return "deflate"
	case CompressionBr:
		return "br"
	}
	return fmt.Sprintf("Compression(%d)", uint32(c))
}

// configureCompression sets Spec.Compression on the C spec.
func (b *cbuild) configureCompression(s *Spec, cs *C.prober_spec) error {
	if s.Compression == CompressionNone {
		return nil
	}
	if s.Compression > CompressionBr {
		return &Error{Code: StatusInvalidEnum, Msg: fmt.Sprintf("Compression %d is not a Compression value", uint32(s.Compression))}
	}
	return b.check(C.gp_spec_set_compression(cs, C.uint32_t(s.Compression), &b.err))
}
