package prober_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// Address families (issue 28) with IP literals against real listeners on one family each:
// the probe connects to the family asked for, redirect hops included, and a literal of the
// other family fails before anything is connected to.

// serveOn starts an HTTP server on addr ("127.0.0.1:0", "[::1]:0") whose answer names the
// listener's family; redirect (when set) answers /hop with a 302 to it.
func serveOn(t *testing.T, network, addr, redirect string) string {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" && redirect != "" {
			http.Redirect(w, r, redirect, http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, network)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

func TestIPFamily(t *testing.T) {
	v6 := serveOn(t, "tcp6", "[::1]:0", "")
	v4 := serveOn(t, "tcp4", "127.0.0.1:0", "http://"+v6+"/")
	ctx := context.Background()

	for _, c := range []struct {
		family prober.IPFamily
		want   string // "tcp4": success from the IPv4 listener; "": refused, ReasonDNS
	}{
		{prober.IPAny, "tcp4"},
		{prober.IPv4, "tcp4"},
		{prober.PreferIPv6, "tcp4"}, // a literal is its own only address
		{prober.IPv6, ""},
	} {
		s := prober.HTTP("http://" + v4 + "/")
		s.IPFamily = c.family
		o, err := prober.Check(ctx, s)
		if err != nil {
			t.Fatalf("%v: %v", c.family, err)
		}
		if c.want != "" && (o.Result != prober.Success || string(o.Output) != c.want) {
			t.Fatalf("%v: %v %q (%s), want success from %s", c.family, o.Result, o.Output, o.Message, c.want)
		}
		if c.want == "" && (o.Result != prober.Failure || o.Reason != prober.ReasonDNS ||
			!strings.Contains(o.Message, "127.0.0.1 is an IPv4 address (only IPv6 was asked for)")) {
			t.Fatalf("%v: %v %v %q, want failure (dns) naming the family", c.family, o.Result, o.Reason, o.Message)
		}
	}

	// A redirect hop to an IPv6 literal: followed unrestricted, refused under IPv4.
	s := prober.HTTP("http://" + v4 + "/hop")
	s.Redirects = prober.RedirectAnyHost
	o, err := prober.Check(ctx, s)
	if err != nil || o.Result != prober.Success || string(o.Output) != "tcp6" {
		t.Fatalf("redirect: %v %v %q (%s)", err, o.Result, o.Output, o.Message)
	}
	s.IPFamily = prober.IPv4
	o, err = prober.Check(ctx, s)
	if err != nil || o.Reason != prober.ReasonDNS || !strings.Contains(o.Message, "::1 is an IPv6 address (only IPv4 was asked for)") {
		t.Fatalf("redirect under IPv4: %v %v %v %q", err, o.Result, o.Reason, o.Message)
	}

	s = prober.HTTP("http://" + v4 + "/")
	s.IPFamily = 9
	_, err = prober.Check(ctx, s)
	wantError(t, "IPFamily 9", err, prober.StatusInvalidEnum, "IPFamily 9 is not IPAny, IPv4, IPv6, PreferIPv4 or PreferIPv6")
	s = prober.Exec("true")
	s.IPFamily = prober.IPv4
	_, err = prober.Check(ctx, s)
	wantError(t, "IPFamily on exec", err, prober.StatusWrongKind, "TCP, HTTP, gRPC, DNS and ICMP probes only")
	if got := prober.PreferIPv6.String(); got != "prefer-ipv6" {
		t.Fatalf("String: %q", got)
	}
}
