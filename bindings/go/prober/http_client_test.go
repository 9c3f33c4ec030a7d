package prober_test

import (
	"bytes"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// MaxRedirects and Cookies: the kubelet's 9 redirects and no cookie jar by default,
// blackbox_exporter's 10 and a jar per run when asked.
func TestMaxRedirectsAndCookies(t *testing.T) {
	chain := prober.HTTP(targetURL("/redirect-chain/10"))
	if o := check(t, chain); o.Reason != prober.ReasonTooManyRedirects {
		t.Fatalf("default: %+v", o)
	}
	chain.MaxRedirects = 10
	if o := check(t, chain); o.Result != prober.Success || string(o.Output) != "chain end" {
		t.Fatalf("MaxRedirects 10: %+v", o)
	}
	chain.MaxRedirects = 65
	if _, err := prober.Check(t.Context(), chain); err == nil {
		t.Fatal("MaxRedirects 65 accepted")
	}

	login := prober.HTTP(targetURL("/bytes?status=302&header=Set-Cookie:session%3Dabc%3B%20Path%3D/&header=Location:/echo/headers"))
	if o := check(t, login); bytes.Contains(o.Output, []byte("\nCookie:")) {
		t.Fatalf("no jar: %q", o.Output)
	}
	login.Cookies = true
	if o := check(t, login); !bytes.Contains(o.Output, []byte("\nCookie: session=abc\n")) {
		t.Fatalf("jar: %q", o.Output)
	}
	tcp := prober.TCP("127.0.0.1", targetPort)
	tcp.Cookies = true
	if _, err := prober.Check(t.Context(), tcp); err == nil {
		t.Fatal("Cookies on a TCP probe accepted")
	}
}
