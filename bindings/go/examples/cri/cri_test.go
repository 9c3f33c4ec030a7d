package cri_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/examples/cri"
	"github.com/libprober/prober/bindings/go/prober"
)

// next receives the next event that keep accepts, failing after a bound that only catches
// hangs.
func next(t *testing.T, e *prober.Engine, keep func(prober.Event) bool) prober.Event {
	t.Helper()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-e.Events():
			if !ok {
				t.Fatalf("events closed: %v", e.Err())
			}
			if keep(ev) {
				return ev
			}
		case <-timer.C:
			t.Fatal("no matching event within 30s")
		}
	}
}

func published(target prober.TargetID, role prober.Role) func(prober.Event) bool {
	return func(ev prober.Event) bool {
		return ev.Kind == prober.EventState && ev.Target == target && ev.Role == role && ev.HasOutcome
	}
}

func runtimeFor(t *testing.T) (*fakeRuntimeHandle, string) {
	t.Helper()
	dir := t.TempDir()
	rt, client, stop, err := startRuntime(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return &fakeRuntimeHandle{rt: rt, client: client}, dir
}

// A liveness and readiness pair of exec probes, run through the runtime's ExecSync: each
// publishes what the command in the container says, with its output.
func TestExecProbesThroughCRI(t *testing.T) {
	h, dir := runtimeFor(t)
	ready := filepath.Join(dir, "ready")
	alive := filepath.Join(dir, "alive")
	for _, f := range []string{ready, alive} {
		if err := os.WriteFile(f, []byte("ok\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := prober.NewTestEngine(t)
	app, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	readiness := cri.ExecSync(h.client, "app", "cat", ready)
	readiness.Period = 20 * time.Millisecond
	readiness.Timeout = 10 * time.Second
	readiness.FailureThreshold = 1
	liveness := cri.ExecSync(h.client, "app", "test", "-e", alive)
	liveness.Period = 20 * time.Millisecond
	liveness.Timeout = 10 * time.Second
	liveness.FailureThreshold = 2
	if err := e.SetProbe(app, prober.Readiness, readiness); err != nil {
		t.Fatal(err)
	}
	if err := e.SetProbe(app, prober.Liveness, liveness); err != nil {
		t.Fatal(err)
	}

	ev := next(t, e, published(app, prober.Readiness))
	if ev.Result != prober.Success || string(ev.Outcome.Output) != "ok\n" {
		t.Fatalf("readiness: %v %q %q", ev.Result, ev.Outcome.Message, ev.Outcome.Output)
	}
	// The readiness file goes: cat fails in the container, with its error as output.
	if err := os.Remove(ready); err != nil {
		t.Fatal(err)
	}
	ev = next(t, e, published(app, prober.Readiness))
	if ev.Result != prober.Failure || ev.Outcome.Message != `host run "cat `+ready+`" failed` ||
		!strings.Contains(string(ev.Outcome.Output), "No such file or directory") {
		t.Fatalf("readiness after removal: %v %q %q", ev.Result, ev.Outcome.Message, ev.Outcome.Output)
	}
	// Liveness fails after its threshold of two failed runs.
	if err := os.Remove(alive); err != nil {
		t.Fatal(err)
	}
	ev = next(t, e, published(app, prober.Liveness))
	if ev.Result != prober.Failure || ev.Outcome.Message != `host run "test -e `+alive+`" failed` {
		t.Fatalf("liveness: %v %q", ev.Result, ev.Outcome.Message)
	}
	calls := h.rt.callsSeen()
	for _, want := range []string{"app: cat " + ready, "app: test -e " + alive} {
		if !slices.Contains(calls, want) {
			t.Errorf("the runtime never ran %q; it ran %q", want, calls)
		}
	}
}

// A command that outlives the probe's timeout: the run is a timeout, worded as exec's, and
// the runtime's call is cancelled (its command killed).
func TestExecSyncTimeout(t *testing.T) {
	h, _ := runtimeFor(t)
	e := prober.NewTestEngine(t)
	app, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	liveness := cri.ExecSync(h.client, "app", "sleep", "30")
	liveness.Timeout = 300 * time.Millisecond
	liveness.Period = time.Hour
	liveness.FailureThreshold = 1
	if err := e.SetProbe(app, prober.Liveness, liveness); err != nil {
		t.Fatal(err)
	}
	ev := next(t, e, published(app, prober.Liveness))
	if ev.Result != prober.Failure || ev.Outcome.Reason != prober.ReasonTimeout ||
		ev.Outcome.Message != `host run timed out: "sleep 30" timed out after 300ms` {
		t.Fatalf("liveness: %v %v %q", ev.Result, ev.Outcome.Reason, ev.Outcome.Message)
	}
}

// A container the runtime does not know: the call fails, so the run could not be performed
// (Unknown, with the runtime's error as output), and readiness keeps its initial value.
func TestExecSyncUnknownContainer(t *testing.T) {
	h, _ := runtimeFor(t)
	e := prober.NewTestEngine(t, prober.WithEveryRun())
	gone, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	readiness := cri.ExecSync(h.client, "gone", "true")
	readiness.Period = 20 * time.Millisecond
	if err := e.SetProbe(gone, prober.Readiness, readiness); err != nil {
		t.Fatal(err)
	}
	ev := next(t, e, func(ev prober.Event) bool { return ev.Kind == prober.EventRun && ev.Target == gone })
	if ev.Result != prober.Unknown || !strings.Contains(string(ev.Outcome.Output), `container \"gone\" not found`) &&
		!strings.Contains(string(ev.Outcome.Output), `container "gone" not found`) {
		t.Fatalf("run: %v %q %q", ev.Result, ev.Outcome.Message, ev.Outcome.Output)
	}
	if r, err := e.Published(gone, prober.Readiness); err != nil || r != prober.Failure {
		t.Fatalf("published %v, %v", r, err)
	}
}
