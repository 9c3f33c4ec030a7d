package prober_test

import (
	"context"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// A host that is not a host (a path, a query, a fragment, user information, a port, spaces,
// non-ASCII) is refused with StatusInvalidHost before anything is probed; it must not
// silently probe another port or resource.
func TestHostileHostsAreRefused(t *testing.T) {
	ctx := context.Background()
	for _, host := range []string{
		"127.0.0.1/x", "a?b", "a#b", "a b", "user@evil", "127.0.0.1:80", "[::1]:80", "café",
		"\u202eevil", "a..b",
	} {
		_, err := prober.Check(ctx, prober.TCP(host, targetPort))
		wantError(t, "TCP host "+host, err, prober.StatusInvalidHost, "invalid host")
		_, err = prober.Check(ctx, prober.GRPC(host, targetPort, ""))
		wantError(t, "gRPC host "+host, err, prober.StatusInvalidHost, "invalid host")

		e, err := prober.NewEngine()
		if err != nil {
			t.Fatal(err)
		}
		id, err := e.AddTarget()
		if err != nil {
			t.Fatal(err)
		}
		err = e.SetProbe(id, prober.Readiness, prober.TCP(host, targetPort))
		wantError(t, "SetProbe host "+host, err, prober.StatusInvalidHost, "invalid host")
		e.Close()
	}
}

// A Host header value must be host[:port]: anything else would go on the wire verbatim.
func TestHostileHostHeaderIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{"a b", "a\tb", "evil/x?y#z", "user@evil", "café.example", "h:0", "[::1"} {
		for _, name := range []string{"Host", "host"} {
			s := prober.HTTP(targetURL("/echo/host"))
			s.Headers = []prober.Header{{Name: name, Value: v}}
			_, err := prober.Check(ctx, s)
			wantError(t, name+": "+v, err, prober.StatusInvalidHeader, `for HTTP header "Host"`)
		}
	}
	// A valid virtual host still reaches the server as given.
	s := prober.HTTP(targetURL("/host-must-be/vhost.example/x"))
	s.Headers = []prober.Header{{Name: "Host", Value: "vhost.example:8080"}}
	o, err := prober.Check(ctx, s)
	if err != nil || o.Result != prober.Success {
		t.Fatalf("valid Host: %+v %v", o, err)
	}
}
