package prober_test

import (
	"bytes"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// Compression: the body decoded with the coding named, bounded by OutputLimit; none by
// default.
func TestCompression(t *testing.T) {
	s := prober.HTTP(targetURL("/encoded/gzip/3000"))
	if o := check(t, s); o.Result != prober.Success || !bytes.HasPrefix(o.Output, []byte{0x1f, 0x8b}) {
		t.Fatalf("default, the coded bytes: %+v", o)
	}
	for _, c := range []prober.Compression{prober.CompressionGzip, prober.CompressionDeflate, prober.CompressionBr} {
		s := prober.HTTP(targetURL("/encoded/" + c.String() + "/3000"))
		s.Compression = c
		s.OutputLimit = 4096
		if o := check(t, s); o.Result != prober.Success || string(o.Output) != string(bytes.Repeat([]byte("a"), 3000)) {
			t.Fatalf("%s: %+v", c, o)
		}
	}
	// A bomb: 1 GiB of gzip members, decoded up to the limit.
	bomb := prober.HTTP(targetURL("/encoded/gzip/1073741824"))
	bomb.Compression = prober.CompressionGzip
	if o := check(t, bomb); o.Result != prober.Success || len(o.Output) != 10240 || !o.Truncated {
		t.Fatalf("bomb: %v %d %v", o.Result, len(o.Output), o.Truncated)
	}
	wrong := prober.HTTP(targetURL("/encoded/gzip/3000"))
	wrong.Compression = prober.CompressionDeflate
	if o := check(t, wrong); o.Result != prober.Failure || o.Reason != prober.ReasonBrokenBody {
		t.Fatalf("gzip read as deflate: %+v", o)
	}
	bad := prober.HTTP(targetURL("/"))
	bad.Compression = prober.CompressionBr + 1
	if _, err := prober.Check(t.Context(), bad); err == nil {
		t.Fatal("an unknown Compression accepted")
	}
	tcp := prober.TCP("127.0.0.1", targetPort)
	tcp.Compression = prober.CompressionGzip
	if _, err := prober.Check(t.Context(), tcp); err == nil {
		t.Fatal("Compression on a TCP probe accepted")
	}
}
