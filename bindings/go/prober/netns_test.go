package prober_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// Network namespaces (issue 29), real ones made with `ip netns` (root: CI runs as root; without
// it the test fails, saying so, it never skips).

var netnsSeq atomic.Int32

// netnsWithTarget makes a namespace (deleted when the test ends, failed or not) and runs
// prober-target inside it on port (0: any), returning the namespace's path and the port.
func netnsWithTarget(t *testing.T, port int) (string, int) {
	t.Helper()
	name := fmt.Sprintf("prober-go-%d-%d", os.Getpid(), netnsSeq.Add(1))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("cannot create network namespace %s (namespace tests need root; CI runs them as root): %v %s", name, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	bin, err := targetBin()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", name, bin, "--port", strconv.Itoa(port))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("prober-target inside: %v", err)
	}
	got, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("prober-target inside printed %q", line)
	}
	return "/run/netns/" + name, got
}

func TestNetnsProbesReachTheNamespace(t *testing.T) {
	// The same port as the host's server: the one inside is made unhealthy through a probe
	// that goes inside; the host's is not touched.
	path, _ := netnsWithTarget(t, targetPort)
	ctx := context.Background()
	inside := func(url string) prober.Spec {
		s := prober.HTTP(url)
		s.Netns = path
		return s
	}
	if o, err := prober.Check(ctx, inside(targetURL("/control/unhealthy"))); err != nil || o.Result != prober.Success {
		t.Fatalf("%+v %v", o, err)
	}
	o, err := prober.Check(ctx, inside(targetURL("/health")))
	if err != nil || o.Result != prober.Failure || o.HTTPStatus != 503 {
		t.Fatalf("inside: %+v %v", o, err)
	}
	o, err = prober.Check(ctx, prober.HTTP(targetURL("/health")))
	if err != nil || o.HTTPStatus == 503 {
		t.Fatalf("the host's server was reached inside: %+v %v", o, err)
	}

	// A port that listens only inside another namespace.
	only, onlyPort := netnsWithTarget(t, 0)
	s := prober.TCP("127.0.0.1", onlyPort)
	s.Netns = only
	if o, err := prober.Check(ctx, s); err != nil || o.Result != prober.Success {
		t.Fatalf("tcp inside: %+v %v", o, err)
	}

	// A path that is not a namespace: Unknown, ReasonNamespace, naming it.
	s.Netns = "/run/netns/prober-go-no-such-namespace"
	o, err = prober.Check(ctx, s)
	want := `cannot use network namespace "/run/netns/prober-go-no-such-namespace": no such file or directory`
	if err != nil || o.Result != prober.Unknown || o.Reason != prober.ReasonNamespace || o.Message != want {
		t.Fatalf("%+v %v", o, err)
	}
	if o.Reason.String() != "namespace" {
		t.Fatal(o.Reason.String())
	}
	// Refused where it can be seen.
	s.Netns = "netns/relative"
	if _, err := prober.Check(ctx, s); err == nil || !strings.Contains(err.Error(), "must be absolute") {
		t.Fatal(err)
	}
}
