package prober_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// A readiness probe that the test performs: each run calls the function on a goroutine, and
// its answers are published by the kubelet's rules, with the output.
func TestHostRunResultsArePublished(t *testing.T) {
	e := prober.NewTestEngine(t)
	target, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	var healthy atomic.Bool
	healthy.Store(true)
	spec := prober.HostRun("check-db", func(ctx context.Context) (prober.Result, string) {
		if healthy.Load() {
			return prober.Success, "db ok"
		}
		return prober.Failure, "db down"
	})
	spec.Period = 20 * time.Millisecond
	spec.Timeout = 10 * time.Second
	spec.FailureThreshold = 1
	if err := e.SetProbe(target, prober.Readiness, spec); err != nil {
		t.Fatal(err)
	}
	ev := next(t, e, 30*time.Second, func(ev prober.Event) bool { return stateOf(target)(ev) && ev.HasOutcome })
	if ev.Result != prober.Success || string(ev.Outcome.Output) != "db ok" || ev.Outcome.Message != "" {
		t.Fatalf("first published value: %+v", ev)
	}
	healthy.Store(false)
	ev = next(t, e, 30*time.Second, func(ev prober.Event) bool { return stateOf(target)(ev) && ev.HasOutcome })
	if ev.Result != prober.Failure || string(ev.Outcome.Output) != "db down" ||
		ev.Outcome.Message != `host run "check-db" failed` {
		t.Fatalf("after the failure: %+v", ev)
	}
	st, err := e.HostRunStats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Completed < 2 || st.TimedOut != 0 || st.Unknown != 0 {
		t.Fatalf("stats: %+v", st)
	}
}

// A function that outlives the probe's timeout: its context ends at the timeout, the run is a
// Failure with reason timeout, and the answer it gives after is ignored and counted.
func TestHostRunTimeout(t *testing.T) {
	e := prober.NewTestEngine(t)
	target, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	ctxErr := make(chan error, 16)
	spec := prober.HostRun("slow", func(ctx context.Context) (prober.Result, string) {
		<-ctx.Done()
		ctxErr <- ctx.Err()
		return prober.Success, "too late"
	})
	spec.Timeout = 200 * time.Millisecond
	spec.Period = time.Hour
	spec.FailureThreshold = 1
	if err := e.SetProbe(target, prober.Liveness, spec); err != nil {
		t.Fatal(err)
	}
	ev := next(t, e, 30*time.Second, func(ev prober.Event) bool { return stateOf(target)(ev) && ev.HasOutcome })
	if ev.Result != prober.Failure || ev.Outcome.Reason != prober.ReasonTimeout ||
		ev.Outcome.Message != `host run timed out: "slow" timed out after 200ms` {
		t.Fatalf("timed-out run: %+v", ev)
	}
	if err := <-ctxErr; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the function's context ended with %v", err)
	}
	// The late answer reaches the engine after the function returns: wait for it to be counted.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := e.HostRunStats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Late == 1 {
			if st.TimedOut != 1 || st.Completed != 0 {
				t.Fatalf("stats: %+v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the late answer was never counted: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if r, _ := e.Published(target, prober.Liveness); r != prober.Failure {
		t.Fatalf("published %v after a late Success", r)
	}
}

// Removing a target cancels the context of its run in progress; other targets go on.
func TestHostRunRemoveCancels(t *testing.T) {
	e := prober.NewTestEngine(t)
	stuck, _ := e.AddTarget()
	started := make(chan struct{})
	cancelled := make(chan error, 1)
	spec := prober.HostRun("stuck", func(ctx context.Context) (prober.Result, string) {
		close(started)
		<-ctx.Done()
		cancelled <- ctx.Err()
		return prober.Success, ""
	})
	spec.Timeout = time.Hour
	spec.Period = time.Hour
	if err := e.SetProbe(stuck, prober.Liveness, spec); err != nil {
		t.Fatal(err)
	}
	busy, _ := e.AddTarget()
	var runs atomic.Int32
	quick := prober.HostRun("quick", func(ctx context.Context) (prober.Result, string) {
		runs.Add(1)
		return prober.Success, ""
	})
	quick.Period = 10 * time.Millisecond
	if err := e.SetProbe(busy, prober.Readiness, quick); err != nil {
		t.Fatal(err)
	}
	<-started
	// The stuck run blocks nobody: the other target's runs go on.
	next(t, e, 30*time.Second, func(ev prober.Event) bool { return stateOf(busy)(ev) && ev.Result == prober.Success })
	for runs.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	if err := e.Remove(stuck); err != nil {
		t.Fatal(err)
	}
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("the removed target's run ended with %v", err)
	}
}

// One-shot checks have no host to run them.
func TestHostRunOneShotRefused(t *testing.T) {
	e := prober.NewTestEngine(t)
	spec := prober.HostRun("x", func(context.Context) (prober.Result, string) { return prober.Success, "" })
	if _, err := e.Check(context.Background(), spec); !errors.Is(err, &prober.Error{Code: prober.StatusWrongKind}) {
		t.Fatalf("Engine.Check: %v", err)
	}
	if _, err := prober.Check(context.Background(), spec); !errors.Is(err, &prober.Error{Code: prober.StatusWrongKind}) {
		t.Fatalf("prober.Check: %v", err)
	}
	bad := prober.HostRun("x", nil)
	if err := e.SetProbe(1, prober.Readiness, bad); !errors.Is(err, &prober.Error{Code: prober.StatusInvalid}) {
		t.Fatalf("nil Run: %v", err)
	}
	misplaced := prober.TCP("127.0.0.1", 80)
	misplaced.Label = "x"
	if err := e.SetProbe(1, prober.Readiness, misplaced); !errors.Is(err, &prober.Error{Code: prober.StatusWrongKind}) {
		t.Fatalf("Label on a TCP spec: %v", err)
	}
}
