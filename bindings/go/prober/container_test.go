//go:build prober_container

package prober_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// A real container's network namespace (issue 29): ci/namespaces.sh starts the runc container
// of ci/runc-container.sh and runs this test (go test -tags prober_container) with
//
//	PROBER_CONTAINER_NETNS  the container's /proc/PID/ns/net
//	PROBER_CONTAINER_URL    a server on the container's own 127.0.0.1
//	PROBER_CONTAINER_BODY   what its body contains
//
// Built only with the tag, so the ordinary suite does not see it; with the tag, a missing
// variable fails the test: it never skips.
func containerEnv(t *testing.T) (netns, url, body string) {
	t.Helper()
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			t.Fatalf("%s is not set (ci/namespaces.sh sets it; this test does not skip)", name)
		}
		return v
	}
	return get("PROBER_CONTAINER_NETNS"), get("PROBER_CONTAINER_URL"), get("PROBER_CONTAINER_BODY")
}

func TestContainerNetns(t *testing.T) {
	netns, url, body := containerEnv(t)
	ctx := context.Background()
	inside := prober.HTTP(url)
	inside.Netns = netns

	o, err := prober.Check(ctx, inside)
	if err != nil || o.Result != prober.Success || o.HTTPStatus != 200 || !strings.Contains(string(o.Output), body) {
		t.Fatalf("Check inside: %+v %v", o, err)
	}

	// Through an engine, as a target's readiness probe would run it.
	e := prober.NewTestEngine(t)
	o, err = e.Check(ctx, inside)
	if err != nil || o.Result != prober.Success || !strings.Contains(string(o.Output), body) {
		t.Fatalf("Engine.Check inside: %+v %v", o, err)
	}

	// The same URL from the host does not reach the container's server.
	o, err = prober.Check(ctx, prober.HTTP(url))
	if err != nil || strings.Contains(string(o.Output), body) || (o.Result == prober.Success && o.HTTPStatus == 200) {
		t.Fatalf("the host reached the container's server: %+v %v", o, err)
	}
}
