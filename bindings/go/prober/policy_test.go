package prober_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// maxRunEvents is how many run events an engine keeps for a receiver that is behind.
const maxRunEvents = 1024

// waitFor polls cond (with the engine's own calls) until it holds, failing after d; every
// poll also checks that the engine keeps what it holds for the receiver bounded.
func waitFor(t *testing.T, e *prober.Engine, what string, d time.Duration, targets int, cond func() bool) {
	t.Helper()
	limit := time.Now().Add(d)
	for !cond() {
		st, err := e.Stats()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		// One state event per worker, the run events kept and those of one turn (at most one
		// per worker here; twice that as a margin).
		if st.PendingEvents > 3*targets+maxRunEvents {
			t.Fatalf("%s: %d events pending for %d targets", what, st.PendingEvents, targets)
		}
		if time.Now().After(limit) {
			t.Fatalf("%s: not reached in %v (stats %+v)", what, d, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Nobody receives from Events (a buffer of 2, never read): probes keep running, Published
// follows the probed command, what the engine keeps stays bounded (run events dropped and
// counted), and receiving afterwards gives each worker's latest state.
func TestEventsNeverStallProbing(t *testing.T) {
	const targets = 5
	flag := filepath.Join(t.TempDir(), "ready")
	e := prober.NewTestEngine(t, prober.WithEveryRun(), prober.WithEventBuffer(2))
	spec := prober.Exec("test", "-e", flag)
	spec.Period, spec.FailureThreshold = 10*time.Millisecond, 1
	var ids []prober.TargetID
	for range targets {
		id, err := e.AddTarget()
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetProbe(id, prober.Readiness, spec); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	all := func(want prober.Result) func() bool {
		return func() bool {
			for _, id := range ids {
				if r, err := e.Published(id, prober.Readiness); err != nil || r != want {
					return false
				}
			}
			return true
		}
	}
	dropped := func() bool { st, _ := e.Stats(); return st.DroppedEvents > 0 }
	waitFor(t, e, "run events dropped", 60*time.Second, targets, dropped)
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e, "all ready", 30*time.Second, targets, all(prober.Success))
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	waitFor(t, e, "all unready", 30*time.Second, targets, all(prober.Failure))

	// Catch up: the last state event of each worker is its latest value, from a run.
	last := map[prober.TargetID]prober.Event{}
	states := map[prober.TargetID]int{}
	limit := time.After(30 * time.Second)
	for len(last) < targets || !allFailed(last) {
		select {
		case ev := <-e.Events():
			if ev.Kind == prober.EventState {
				last[ev.Target] = ev
				states[ev.Target]++
			}
		case <-limit:
			t.Fatalf("latest states not received: %v", last)
		}
	}
	for id, n := range states {
		// At most the initial value (already in the channel's buffer or handed over before
		// the receiver fell behind) and the coalesced latest one.
		if n > 2 {
			t.Errorf("target %d: %d state events after catching up", id, n)
		}
	}
}

func allFailed(last map[prober.TargetID]prober.Event) bool {
	for _, ev := range last {
		if ev.Result != prober.Failure || !ev.HasOutcome {
			return false
		}
	}
	return true
}

// threads is the process's OS thread count.
func threads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line")
	return 0
}

// 400 goroutines Check an endpoint that never answers: the package's shared engine runs them
// all on a handful of OS threads, and cancelling their context ends them all at once.
func TestCheckSharesOneEngine(t *testing.T) {
	if _, err := prober.Check(context.Background(), prober.Exec("true")); err != nil {
		t.Fatal(err)
	}
	sink := newSink(t)
	defer sink.stop()
	before := threads(t)
	const n = 400
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := prober.HTTP("http://127.0.0.1:" + strconv.Itoa(sink.port()) + "/")
	spec.Timeout = time.Minute
	errs := make(chan error, n)
	var started sync.WaitGroup
	for range n {
		started.Add(1)
		go func() {
			started.Done()
			_, err := prober.Check(ctx, spec)
			errs <- err
		}()
	}
	started.Wait()
	limit := time.Now().Add(30 * time.Second)
	for prober.SharedInFlight() < n {
		if time.Now().After(limit) {
			t.Fatalf("%d checks in flight", prober.SharedInFlight())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := threads(t); got > before+8 {
		t.Fatalf("%d OS threads with %d checks in flight (%d before)", got, n, before)
	}
	cancel()
	for range n {
		if err := <-errs; !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "prober: ") {
			t.Fatalf("cancelled check: %v", err)
		}
	}
	limit = time.Now().Add(10 * time.Second)
	for prober.SharedInFlight() != 0 {
		if time.Now().After(limit) {
			t.Fatalf("%d checks still in flight after the cancel", prober.SharedInFlight())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Engine.Check runs on the engine (full timings), and a cancelled context kills the command at
// once; Submit's context does the same and its EventCheck says so.
func TestEngineCheckAndCancellableSubmit(t *testing.T) {
	waitNoChildren(t, 5*time.Second)
	e := prober.NewTestEngine(t)
	var c prober.Checker = e
	o, err := c.Check(context.Background(), prober.TCP("127.0.0.1", targetPort))
	if err != nil || o.Result != prober.Success || o.Timings.Connect < 0 {
		t.Fatalf("Engine.Check: %+v %v", o, err)
	}
	if _, err := e.Check(context.Background(), prober.TCP("127.0.0.1", 0)); !errors.Is(err, prober.ErrInvalidSpec) {
		t.Fatalf("invalid spec: %v", err)
	}

	slow := prober.Exec("sleep", "30")
	slow.Timeout = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		limit := time.Now().Add(10 * time.Second)
		for len(children(t)) == 0 && time.Now().Before(limit) {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	if _, err := e.Check(ctx, slow); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Engine.Check: %v", err)
	}
	waitNoChildren(t, 5*time.Second)

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	if err := e.Submit(ctx, slow, 41); err != nil {
		t.Fatal(err)
	}
	if err := e.Submit(context.Background(), prober.Exec("true"), 42); err != nil {
		t.Fatal(err)
	}
	limit := time.Now().Add(10 * time.Second)
	for len(children(t)) == 0 {
		if time.Now().After(limit) {
			t.Fatal("the command did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	got := map[uint64]prober.Event{}
	for len(got) < 2 {
		ev := next(t, e, 10*time.Second, func(ev prober.Event) bool { return ev.Kind == prober.EventCheck })
		if _, dup := got[ev.Tag]; dup {
			t.Fatalf("two events for tag %d", ev.Tag)
		}
		got[ev.Tag] = ev
	}
	if ev := got[41]; ev.Result != prober.Unknown || ev.Outcome.Reason != prober.ReasonCancelled ||
		!errors.Is(ev.Err, context.Canceled) {
		t.Fatalf("cancelled submit: %+v", ev)
	}
	if ev := got[42]; ev.Result != prober.Success || ev.Err != nil {
		t.Fatalf("the other submit: %+v", ev)
	}
	waitNoChildren(t, 5*time.Second)
	if err := e.Submit(ctx, slow, 43); !errors.Is(err, context.Canceled) {
		t.Fatalf("Submit with a done context: %v", err)
	}
}

// A nil *Engine gives errors (ErrClosed), not a panic; a closed one too, from every method.
func TestNilAndClosedEngine(t *testing.T) {
	var e *prober.Engine
	ctx := context.Background()
	closed := prober.NewTestEngine(t)
	id, err := closed.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*prober.Engine{e, closed} {
		errs := []error{e.Submit(ctx, prober.Exec("true"), 1), e.SetProbe(id, prober.Readiness, prober.Exec("true")),
			e.ClearProbe(id, prober.Readiness), e.Restart(id), e.Remove(id), e.Trigger(id, prober.Readiness)}
		_, err := e.AddTarget()
		errs = append(errs, err)
		_, err = e.Published(id, prober.Readiness)
		errs = append(errs, err)
		_, err = e.Stats()
		errs = append(errs, err)
		_, err = e.Check(ctx, prober.Exec("true"))
		errs = append(errs, err)
		for i, err := range errs {
			if !errors.Is(err, prober.ErrClosed) {
				t.Errorf("engine %v, call %d: %v", e == nil, i, err)
			}
		}
		if _, ok := <-e.Events(); ok {
			t.Error("an event from a nil or closed engine")
		}
	}
	if err := e.Close(); err == nil || e.Err() == nil {
		t.Fatalf("nil engine: Close %v, Err %v", e.Close(), e.Err())
	}
}

// Errors read once, without C names, and the sentinels match.
func TestErrorConventions(t *testing.T) {
	e := prober.NewTestEngine(t)
	_, err := e.Published(42, prober.Readiness)
	if !errors.Is(err, prober.ErrUnknownTarget) || err.Error() != "prober: unknown target 42" {
		t.Fatalf("unknown target: %q", err)
	}
	id, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Published(id, prober.Liveness); !errors.Is(err, prober.ErrNoProbe) || errors.Is(err, prober.ErrUnknownTarget) {
		t.Fatalf("no probe: %v", err)
	}
	for _, err := range []error{
		e.SetProbe(id, prober.Role(7), prober.Exec("true")),
		e.Trigger(id, prober.Role(7)),
		func() error {
			s := prober.HTTP("http://127.0.0.1:1/")
			s.Redirects = 9
			_, err := e.Check(context.Background(), s)
			return err
		}(),
		func() error {
			s := prober.HTTP("http://127.0.0.1:1/")
			s.Close = 9
			_, err := e.Check(context.Background(), s)
			return err
		}(),
	} {
		if !errors.Is(err, &prober.Error{Code: prober.StatusInvalidEnum}) || strings.Contains(err.Error(), "PROBER_") {
			t.Errorf("enum out of range: %v", err)
		}
	}
}

// TLS options read as crypto/tls's: none is the kubelet's (no verification), the zero value
// verifies, InsecureSkipVerify does not.
func TestTLSOptionsZeroValueVerifies(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	for _, tc := range []struct {
		name string
		tls  *prober.TLSOptions
		want prober.Result
	}{
		{"nil (kubelet)", nil, prober.Success},
		{"zero value", &prober.TLSOptions{}, prober.Failure},
		{"InsecureSkipVerify", &prober.TLSOptions{InsecureSkipVerify: true}, prober.Success},
	} {
		s := prober.HTTP(srv.URL + "/")
		s.TLS = tc.tls
		o, err := prober.Check(context.Background(), s)
		if err != nil || o.Result != tc.want {
			t.Errorf("%s: %v %v (%s)", tc.name, o.Result, err, o.Message)
		}
		if tc.want == prober.Failure && o.Reason != prober.ReasonTLS {
			t.Errorf("%s: reason %v", tc.name, o.Reason)
		}
	}
	s := prober.HTTP(srv.URL + "/")
	s.TLS = &prober.TLSOptions{InsecureSkipVerify: true, CAFile: "/ca.pem"}
	if _, err := prober.Check(context.Background(), s); !errors.Is(err, prober.ErrInvalidSpec) {
		t.Fatalf("InsecureSkipVerify with CAFile: %v", err)
	}
}

func TestLogValues(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}))
	o, err := prober.Check(context.Background(), prober.Exec("sh", "-c", "echo no; exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("probe", "outcome", o)
	logger.Info("event", "event", prober.Event{Kind: prober.EventState, Target: 3, Role: prober.Liveness, Result: prober.Failure, HasOutcome: true, Outcome: o})
	want := `level=INFO msg=probe outcome.result=failure outcome.reason=exit_code outcome.message="command terminated with exit code 3" outcome.exit_code=3 outcome.output_bytes=3
level=INFO msg=event event.kind=state event.target=3 event.role=liveness event.result=failure event.outcome.result=failure event.outcome.reason=exit_code event.outcome.message="command terminated with exit code 3" event.outcome.exit_code=3 event.outcome.output_bytes=3
`
	if buf.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// A Checker can be faked; NewTestEngine's engine is closed when the test ends.
func TestCheckerAndTestEngine(t *testing.T) {
	fake := prober.CheckerFunc(func(context.Context, prober.Spec) (prober.Outcome, error) {
		return prober.Outcome{Result: prober.Failure, Message: "fake"}, nil
	})
	for _, c := range []prober.Checker{fake, prober.CheckerFunc(prober.Check)} {
		if _, err := c.Check(context.Background(), prober.Exec("true")); err != nil {
			t.Fatal(err)
		}
	}
	var e *prober.Engine
	t.Run("sub", func(t *testing.T) {
		e = prober.NewTestEngine(t)
		if _, err := e.AddTarget(); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := e.AddTarget(); !errors.Is(err, prober.ErrClosed) {
		t.Fatalf("after the subtest: %v", err)
	}
}
