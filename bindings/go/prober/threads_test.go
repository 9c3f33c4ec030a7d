package prober_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// WithThreads(2): targets spread over both engine threads all report, one-shot checks (Check
// and Submit) on both complete, a context's cancel reaches its check, and Stats sums the
// engines.
func TestEngineWithThreads(t *testing.T) {
	var ports []int
	for i := 0; i < 2; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	e := prober.NewTestEngine(t, prober.WithThreads(2))
	if n := engineThreads(t); n < 2 {
		t.Fatalf("%d engine threads in the process, want 2 or more", n)
	}

	const n = 8
	targets := map[prober.TargetID]bool{}
	for i := 0; i < n; i++ {
		target, err := e.AddTarget()
		if err != nil {
			t.Fatal(err)
		}
		s := prober.TCP("127.0.0.1", ports[i%2])
		s.Period = time.Minute
		if err := e.SetProbe(target, prober.Readiness, s); err != nil {
			t.Fatal(err)
		}
		targets[target] = false
	}
	if len(targets) != n {
		t.Fatalf("target ids repeat: %v", targets)
	}
	for left := n; left > 0; {
		ev := next(t, e, 30*time.Second, func(ev prober.Event) bool {
			return ev.Kind == prober.EventState && ev.HasOutcome
		})
		if ev.Result != prober.Success {
			t.Fatalf("state event: %+v", ev)
		}
		if done, ok := targets[ev.Target]; !ok || done {
			t.Fatalf("unexpected state event: %+v", ev)
		}
		targets[ev.Target] = true
		left--
	}
	st, err := e.Stats()
	if err != nil || st.Targets != n {
		t.Fatalf("Stats = %+v, %v", st, err)
	}

	for tag := uint64(1); tag <= 4; tag++ {
		if err := e.Submit(context.Background(), prober.TCP("127.0.0.1", ports[tag%2]), tag); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[uint64]bool{}
	for len(seen) < 4 {
		ev := next(t, e, 30*time.Second, func(ev prober.Event) bool { return ev.Kind == prober.EventCheck })
		if ev.Result != prober.Success || seen[ev.Tag] {
			t.Fatalf("check event: %+v", ev)
		}
		seen[ev.Tag] = true
	}
	for i := 0; i < 2; i++ {
		out, err := e.Check(context.Background(), prober.TCP("127.0.0.1", ports[i]))
		if err != nil || out.Result != prober.Success {
			t.Fatalf("Check = %+v, %v", out, err)
		}
	}

	// A context's end cancels its check, on whichever engine runs it.
	ctx, cancel := context.WithCancel(context.Background())
	slow := prober.Exec("sleep", "30")
	slow.Timeout = 20 * time.Second
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			_, err := e.Check(ctx, slow)
			errs <- err
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err := e.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.InFlight == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two checks did not start: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	for i := 0; i < 2; i++ {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Check: %v", err)
		}
	}
}

func TestEngineWithThreadsOutOfRange(t *testing.T) {
	for _, n := range []int{0, -1, 257} {
		e, err := prober.NewEngine(prober.WithThreads(n))
		var pe *prober.Error
		if err == nil || !errors.As(err, &pe) || pe.Code != prober.StatusInvalid ||
			!strings.Contains(pe.Msg, "engine threads") {
			if e != nil {
				e.Close()
			}
			t.Fatalf("WithThreads(%d): %v", n, err)
		}
	}
}

// engineThreads counts the threads of this process that the library named as engine threads
// of a group (prober-engine0, prober-engine1, ...).
func engineThreads(t *testing.T) int {
	tasks, err := filepath.Glob("/proc/self/task/*/comm")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range tasks {
		comm, err := os.ReadFile(p)
		if err == nil && strings.HasPrefix(string(comm), "prober-engine") && len(comm) > len("prober-engine\n") {
			n++
		}
	}
	return n
}
