//go:build prober_testpanic

// Fault isolation through the Go binding. Needs libprober built with the test-panic feature
// (ci/go-tests.sh does this and runs these tests with -tags prober_testpanic): an exec probe whose
// argv[0] is "prober-test-panic" then panics inside the library, at the named call, while a real
// command runs.

package prober_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

func isInternal(o prober.Outcome) bool {
	return o.Result == prober.Unknown && o.Reason == prober.ReasonInternal &&
		strings.Contains(o.Message, "the probe panicked: deliberate test panic")
}

// A panicking probe ends its run as Unknown/internal; the engine, other targets and one-shot
// checks go on.
func TestPanickingProbeIsIsolated(t *testing.T) {
	e, err := prober.NewEngine(prober.WithEveryRun())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	healthy, _ := e.AddTarget()
	hostile, _ := e.AddTarget()
	good := prober.TCP("127.0.0.1", targetPort)
	good.Period = 20 * time.Millisecond
	if err := e.SetProbe(healthy, prober.Readiness, good); err != nil {
		t.Fatal(err)
	}
	bad := prober.Exec("prober-test-panic", "ready", "/bin/sh", "-c", "echo hi; exec sleep 30")
	bad.Timeout, bad.Period = time.Minute, time.Minute
	if err := e.SetProbe(hostile, prober.Liveness, bad); err != nil {
		t.Fatal(err)
	}
	next(t, e, 30*time.Second, func(ev prober.Event) bool {
		return ev.Kind == prober.EventRun && ev.Target == hostile && isInternal(ev.Outcome)
	})
	for i := 0; i < 5; i++ {
		ev := next(t, e, 30*time.Second, func(ev prober.Event) bool {
			return ev.Kind == prober.EventRun && ev.Target == healthy
		})
		if ev.Result != prober.Success {
			t.Fatalf("healthy target after the panic: %+v", ev)
		}
	}
	if err := e.Submit(context.Background(), bad, 7); err != nil {
		t.Fatal(err)
	}
	ev := next(t, e, 30*time.Second, func(ev prober.Event) bool { return ev.Kind == prober.EventCheck && ev.Tag == 7 })
	if !isInternal(ev.Outcome) {
		t.Fatalf("panicking submit: %+v", ev)
	}
	if err := e.Err(); err != nil {
		t.Fatalf("engine error after a probe panicked: %v", err)
	}

	o, err := prober.Check(context.Background(), bad)
	if err != nil || !isInternal(o) {
		t.Fatalf("Check of a panicking probe: %+v, %v", o, err)
	}
}
