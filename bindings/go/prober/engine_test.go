package prober_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// next receives the next event matching keep, failing after d.
func next(t *testing.T, e *prober.Engine, d time.Duration, keep func(prober.Event) bool) prober.Event {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-e.Events():
			if !ok {
				t.Fatalf("events channel closed (engine error: %v)", e.Err())
			}
			if keep(ev) {
				return ev
			}
		case <-timer.C:
			t.Fatalf("no matching event within %v", d)
		}
	}
}

func stateOf(target prober.TargetID) func(prober.Event) bool {
	return func(ev prober.Event) bool { return ev.Kind == prober.EventState && ev.Target == target }
}

// The readiness of a target whose health flips: initial value, Success, Failure, Success,
// then Restart back to the initial value.
func TestEngineStateEvents(t *testing.T) {
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	control(t, "/control/healthy")
	defer control(t, "/control/healthy")

	target, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	s := prober.HTTP(targetURL("/health"))
	s.Period = 20 * time.Millisecond
	s.SuccessThreshold, s.FailureThreshold = 1, 1
	if err := e.SetProbe(target, prober.Readiness, s); err != nil {
		t.Fatal(err)
	}

	ev := next(t, e, 10*time.Second, stateOf(target))
	if ev.Result != prober.Failure || ev.HasOutcome || ev.Role != prober.Readiness {
		t.Fatalf("initial event: %+v", ev)
	}
	ev = next(t, e, 10*time.Second, stateOf(target))
	if ev.Result != prober.Success || !ev.HasOutcome || ev.Outcome.HTTPStatus != 200 || string(ev.Outcome.Output) != "ok" {
		t.Fatalf("healthy: %+v", ev)
	}
	if r, err := e.Published(target, prober.Readiness); err != nil || r != prober.Success {
		t.Fatalf("Published = %v, %v", r, err)
	}

	control(t, "/control/unhealthy")
	ev = next(t, e, 10*time.Second, stateOf(target))
	if ev.Result != prober.Failure || ev.Outcome.Reason != prober.ReasonStatus ||
		ev.Outcome.Message != "HTTP probe failed with statuscode: 503" || ev.Outcome.Duration <= 0 {
		t.Fatalf("unhealthy: %+v", ev)
	}
	control(t, "/control/healthy")
	ev = next(t, e, 10*time.Second, stateOf(target))
	if ev.Result != prober.Success {
		t.Fatalf("healthy again: %+v", ev)
	}

	if err := e.Restart(target); err != nil {
		t.Fatal(err)
	}
	ev = next(t, e, 10*time.Second, func(ev prober.Event) bool { return stateOf(target)(ev) && !ev.HasOutcome })
	if ev.Result != prober.Failure {
		t.Fatalf("after restart: %+v", ev)
	}
	if ev = next(t, e, 10*time.Second, stateOf(target)); ev.Result != prober.Success {
		t.Fatalf("after restart, then: %+v", ev)
	}

	// Remove: no event about the target is received afterwards (the channel is empty here, so
	// nothing was buffered before the call either), and the engine no longer knows it.
	if err := e.Remove(target); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Published(target, prober.Readiness); !errors.Is(err, &prober.Error{Code: prober.StatusUnknownTarget}) {
		t.Fatalf("Published after Remove: %v, want StatusUnknownTarget", err)
	}
	// The engine takes calls in order and the driving goroutine delivers events in the order
	// it drains them: this Submit, queued after Remove returned, is started by a later turn
	// than any event the engine held about the target, so its EventCheck comes after all of
	// them. Every event before it is checked.
	if err := e.Submit(context.Background(), prober.TCP("127.0.0.1", targetPort), 77); err != nil {
		t.Fatal(err)
	}
	ev = next(t, e, 10*time.Second, func(ev prober.Event) bool {
		if ev.Kind != prober.EventCheck && ev.Target == target {
			t.Fatalf("event after Remove: %+v", ev)
		}
		return ev.Kind == prober.EventCheck && ev.Tag == 77
	})
	if ev.Result != prober.Success {
		t.Fatalf("check 77: %+v", ev)
	}
}

// Trigger runs a probe with a ten-minute period at once. The engine reports every run, so the
// test sees the first scheduled run fail before it makes the command pass and triggers; with a
// ten-minute period, the next run and the Success it publishes can only be the trigger's.
func TestEngineTrigger(t *testing.T) {
	e, err := prober.NewEngine(prober.WithEveryRun())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	target, _ := e.AddTarget()
	s := prober.Exec("/bin/sh", "-c", "test -e \"$F\"")
	flag := t.TempDir() + "/flag"
	s.Env = []prober.EnvVar{{Name: "F", Value: flag}}
	s.Period = 10 * time.Minute
	s.SuccessThreshold, s.FailureThreshold = 1, 1
	if err := e.SetProbe(target, prober.Readiness, s); err != nil {
		t.Fatal(err)
	}
	runOf := func(ev prober.Event) bool { return ev.Kind == prober.EventRun && ev.Target == target }
	// The initial value (Failure, no outcome) comes first; the first run fails, publishing no
	// change.
	if ev := next(t, e, 10*time.Second, stateOf(target)); ev.HasOutcome {
		t.Fatalf("first event: %+v", ev)
	}
	if ev := next(t, e, 10*time.Second, runOf); ev.Result != prober.Failure || ev.Outcome.ExitCode != 1 {
		t.Fatalf("first run: %+v", ev)
	}
	if err := writeFile(flag); err != nil {
		t.Fatal(err)
	}
	if err := e.Trigger(target, prober.Readiness); err != nil {
		t.Fatal(err)
	}
	// The triggered run and the state it publishes, in whichever order they are delivered.
	var run, state *prober.Event
	for run == nil || state == nil {
		ev := next(t, e, 10*time.Second, func(ev prober.Event) bool { return runOf(ev) || stateOf(target)(ev) })
		switch {
		case ev.Kind == prober.EventRun && run == nil:
			run = &ev
		case ev.Kind == prober.EventState && state == nil:
			state = &ev
		default:
			t.Fatalf("a second %v event after the trigger: %+v", ev.Kind, ev)
		}
	}
	if run.Result != prober.Success || run.Outcome.ExitCode != 0 {
		t.Fatalf("triggered run: %+v", *run)
	}
	if state.Result != prober.Success || !state.HasOutcome || state.Outcome.ExitCode != 0 {
		t.Fatalf("state after the trigger: %+v", *state)
	}
}

// One-shot submits carry their tags; more than one drain batch (256) at a time.
func TestEngineSubmit(t *testing.T) {
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const n = 600
	for tag := uint64(1); tag <= n; tag++ {
		if err := e.Submit(context.Background(), prober.TCP("127.0.0.1", targetPort), tag); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[uint64]int{}
	for len(seen) < n {
		ev := next(t, e, 30*time.Second, func(ev prober.Event) bool { return ev.Kind == prober.EventCheck })
		if ev.Result != prober.Success || !ev.HasOutcome || ev.Tag < 1 || ev.Tag > n {
			t.Fatalf("check event: %+v", ev)
		}
		seen[ev.Tag]++
		if seen[ev.Tag] > 1 {
			t.Fatalf("tag %d twice", ev.Tag)
		}
	}

	s := prober.Exec("/bin/sh", "-c", "echo out; exit 4")
	if err := e.Submit(context.Background(), s, 1000); err != nil {
		t.Fatal(err)
	}
	ev := next(t, e, 10*time.Second, func(ev prober.Event) bool { return ev.Tag == 1000 })
	if ev.Result != prober.Failure || ev.Outcome.ExitCode != 4 || string(ev.Outcome.Output) != "out\n" {
		t.Fatalf("exec submit: %+v", ev)
	}
}

func TestEngineEveryRun(t *testing.T) {
	e, err := prober.NewEngine(prober.WithEveryRun(), prober.WithEventBuffer(16))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	target, _ := e.AddTarget()
	s := prober.TCP("127.0.0.1", targetPort)
	s.Period = 10 * time.Millisecond
	if err := e.SetProbe(target, prober.Liveness, s); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		ev := next(t, e, 10*time.Second, func(ev prober.Event) bool { return ev.Kind == prober.EventRun })
		if ev.Target != target || ev.Role != prober.Liveness || ev.Result != prober.Success || ev.Late < 0 {
			t.Fatalf("run event: %+v", ev)
		}
	}
}

// Calls from other goroutines do not wait for the driving goroutine's sleep to end, and many
// goroutines may use one engine at once.
func TestEngineConcurrentCalls(t *testing.T) {
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	go func() {
		for range e.Events() {
		}
	}()
	// An idle engine: its goroutine sleeps, polling the engine's descriptor.
	var worst time.Duration
	for i := 0; i < 20; i++ {
		time.Sleep(5 * time.Millisecond)
		start := time.Now()
		if _, err := e.AddTarget(); err != nil {
			t.Fatal(err)
		}
		worst = max(worst, time.Since(start))
	}
	// An idle engine's goroutine sleeps without a deadline: a call that waited for the sleep to
	// end would never return. The bound only has to tell that from a slow machine (CI runs this
	// under qemu and beside other suites), so it is far above scheduling noise.
	if worst > 5*time.Second {
		t.Fatalf("AddTarget on an idle engine took up to %v", worst)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				target, err := e.AddTarget()
				if err != nil {
					errs <- err
					return
				}
				s := prober.TCP("127.0.0.1", targetPort)
				s.Period = 5 * time.Millisecond
				if err := e.SetProbe(target, prober.Readiness, s); err != nil {
					errs <- err
					return
				}
				if err := e.Trigger(target, prober.Readiness); err != nil {
					errs <- err
					return
				}
				_, _ = e.Stats()
				if err := e.Remove(target); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Close with probes in flight: commands killed and reaped, no goroutine, no descriptor, no
// child left, the Events channel closed; Close again is harmless.
func TestEngineCloseInFlight(t *testing.T) {
	// Warm up whatever the runtime and the library create once per process.
	warm, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Submit(context.Background(), prober.Exec("true"), 1); err != nil {
		t.Fatal(err)
	}
	next(t, warm, 10*time.Second, func(ev prober.Event) bool { return ev.Kind == prober.EventCheck })
	warm.Close()
	waitNoChildren(t, 5*time.Second)

	goroutines := stableGoroutines()
	fds := countFDs(t)

	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	sleeper := prober.Exec("/bin/sh", "-c", "sleep 30 & exec sleep 30")
	sleeper.Timeout = time.Minute
	for i := 0; i < 5; i++ {
		target, err := e.AddTarget()
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetProbe(target, prober.Liveness, sleeper); err != nil {
			t.Fatal(err)
		}
		if err := e.Submit(context.Background(), sleeper, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	hang := prober.HTTP(targetURL("/never-answer"))
	hang.Timeout = time.Minute
	for i := 0; i < 5; i++ {
		if err := e.Submit(context.Background(), hang, uint64(100+i)); err != nil {
			t.Fatal(err)
		}
	}
	limit := time.Now().Add(10 * time.Second)
	for inFlight(e) < 15 || len(children(t)) < 10 {
		if time.Now().After(limit) {
			t.Fatalf("in flight %d, children %d", inFlight(e), len(children(t)))
		}
		time.Sleep(5 * time.Millisecond)
	}
	events := e.Events()
	groups := map[int]bool{} // each command leads its own process group
	for pid := range children(t) {
		groups[pid] = true
	}

	start := time.Now()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Close took %v", el)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for range events { // drained and closed
	}

	waitNoChildren(t, 5*time.Second)
	limit = time.Now().Add(5 * time.Second)
	for left := inGroups(t, groups); len(left) > 0; left = inGroups(t, groups) {
		if time.Now().After(limit) {
			t.Fatalf("processes left in the commands' groups (background sleeps): %v", left)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := settle(goroutines, 5*time.Second, runtime.NumGoroutine); got > goroutines {
		t.Fatalf("goroutines: %d before, %d after Close", goroutines, got)
	}
	if got := settle(fds, 5*time.Second, func() int { return countFDs(t) }); got != fds {
		t.Fatalf("descriptors: %d before, %d after Close", fds, got)
	}
}

func writeFile(path string) error { return os.WriteFile(path, []byte("x"), 0o644) }

// recvCheck receives the EventCheck of tag, failing when ctx ends first.
func recvCheck(t *testing.T, ctx context.Context, e *prober.Engine, tag uint64) prober.Event {
	t.Helper()
	for {
		select {
		case ev, ok := <-e.Events():
			if !ok {
				t.Fatalf("events channel closed (engine error: %v)", e.Err())
			}
			if ev.Kind == prober.EventCheck && ev.Tag == tag {
				return ev
			}
		case <-ctx.Done():
			t.Fatalf("no EventCheck for tag %d: %v", tag, ctx.Err())
		}
	}
}

// No lost wake-up: the driving goroutine of an idle engine is woken by Submit, and by the
// methods that give it work, whether they come while it sleeps, just as it goes to sleep, or
// while it turns. The pauses between calls vary to hit those moments; some wait until the
// goroutine sleeps without a time limit (the probes' short timeout is over, no timer is left),
// where only a wake-up can start the next turn: a lost one shows as a missing event, caught by
// the context's deadline.
func TestEngineWakesIdleEngine(t *testing.T) {
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// asleep waits until the driving goroutine sleeps without a time limit.
	asleep := func() {
		t.Helper()
		for !prober.AsleepWithoutLimit(e) {
			if ctx.Err() != nil {
				t.Fatal("the idle engine's goroutine never slept without a time limit")
			}
			time.Sleep(time.Millisecond)
		}
	}
	spec := prober.TCP("127.0.0.1", targetPort)
	spec.Timeout = 50 * time.Millisecond
	const untilAsleep = -1
	pauses := []time.Duration{0, 0, time.Microsecond, 50 * time.Microsecond, time.Millisecond, 20 * time.Millisecond, untilAsleep}
	for i := uint64(1); i <= 60; i++ {
		if p := pauses[int(i)%len(pauses)]; p == untilAsleep {
			asleep()
		} else {
			time.Sleep(p)
		}
		if err := e.Submit(context.Background(), spec, i); err != nil {
			t.Fatal(err)
		}
		if ev := recvCheck(t, ctx, e, i); ev.Result != prober.Success || ev.Err != nil {
			t.Fatalf("check %d: %+v", i, ev)
		}
	}

	// A method that queues an event (SetProbe: the initial value) on an idle engine.
	asleep()
	target, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	s := prober.TCP("127.0.0.1", targetPort)
	s.Period = time.Hour
	s.InitialDelay = time.Hour
	if err := e.SetProbe(target, prober.Readiness, s); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case ev := <-e.Events():
			if ev.Kind == prober.EventState && ev.Target == target && !ev.HasOutcome {
				return
			}
		case <-ctx.Done():
			t.Fatal("no initial state event after SetProbe on an idle engine")
		}
	}
}

// Many goroutines Submit at once, alongside the other methods: every Submit that returned nil
// gets exactly one EventCheck.
func TestEngineConcurrentSubmits(t *testing.T) {
	e, err := prober.NewEngine(prober.WithEventBuffer(8))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const goroutines, each = 8, 150
	spec := prober.TCP("127.0.0.1", targetPort)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines+1)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := e.Submit(context.Background(), spec, uint64(g*each+i+1)); err != nil {
					errs <- err
					return
				}
				if i%50 == 0 {
					time.Sleep(time.Millisecond) // let the engine go idle now and then
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // targets come and go meanwhile
		defer wg.Done()
		for i := 0; i < 30; i++ {
			target, err := e.AddTarget()
			if err == nil {
				s := prober.TCP("127.0.0.1", targetPort)
				s.Period = 2 * time.Millisecond
				err = e.SetProbe(target, prober.Liveness, s)
			}
			if err == nil {
				_, _ = e.Stats()
				time.Sleep(time.Millisecond)
				err = e.Remove(target)
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	seen := make(map[uint64]int, goroutines*each)
	for len(seen) < goroutines*each {
		select {
		case ev, ok := <-e.Events():
			if !ok {
				t.Fatalf("events channel closed (engine error: %v)", e.Err())
			}
			if ev.Kind != prober.EventCheck {
				continue
			}
			if ev.Tag < 1 || ev.Tag > goroutines*each || ev.Result != prober.Success {
				t.Fatalf("check event: %+v", ev)
			}
			if seen[ev.Tag]++; seen[ev.Tag] > 1 {
				t.Fatalf("tag %d twice", ev.Tag)
			}
		case err := <-errs:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatalf("%d of %d checks received: %v", len(seen), goroutines*each, ctx.Err())
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Close while other goroutines Submit and Remove: they get nil or ErrClosed, never anything
// else, and ErrClosed from then on; the channel closes; nothing is left running.
func TestEngineCloseDuringSubmits(t *testing.T) {
	goroutines := stableGoroutines()
	for round := 0; round < 5; round++ {
		e, err := prober.NewEngine()
		if err != nil {
			t.Fatal(err)
		}
		// Thousands of connections per round: to a private listener, not the shared target
		// server, which would still be accepting them while the next test runs.
		sink := newSink(t)
		spec := prober.TCP("127.0.0.1", sink.port())
		slow := prober.HTTP(fmt.Sprintf("http://%s/never-answer", sink.ln.Addr()))
		slow.Timeout = time.Minute
		var wg sync.WaitGroup
		bad := make(chan error, 16)
		start := make(chan struct{})
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				closed := false
				for i := 0; i < 2000; i++ {
					s := spec
					if i%3 == 0 {
						s = slow
					}
					err := e.Submit(context.Background(), s, uint64(i))
					switch {
					case err == nil && closed:
						bad <- fmt.Errorf("Submit succeeded after returning ErrClosed")
						return
					case errors.Is(err, prober.ErrClosed):
						closed = true
					case err != nil:
						bad <- err
						return
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < 200; i++ {
				target, err := e.AddTarget()
				if errors.Is(err, prober.ErrClosed) {
					return
				}
				if err == nil {
					err = e.Remove(target)
				}
				if err != nil && !errors.Is(err, prober.ErrClosed) {
					bad <- err
					return
				}
			}
		}()
		go func() {
			for range e.Events() {
			}
		}()
		close(start)
		time.Sleep(time.Duration(round*3) * time.Millisecond)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if err := e.Submit(context.Background(), spec, 1); !errors.Is(err, prober.ErrClosed) {
			t.Fatalf("Submit after Close: %v", err)
		}
		wg.Wait()
		close(bad)
		for err := range bad {
			t.Error(err)
		}
		if _, err := e.Stats(); !errors.Is(err, prober.ErrClosed) {
			t.Fatalf("Stats after Close: %v", err)
		}
		sink.stop()
	}
	if got := settle(goroutines, 5*time.Second, runtime.NumGoroutine); got > goroutines {
		t.Fatalf("goroutines: %d before, %d after", goroutines, got)
	}
}

// sink is a private loopback listener that accepts every connection and holds it, unanswered,
// until the peer goes away: TCP probes to it succeed, HTTP probes wait for an answer that never
// comes. A test that opens thousands of connections uses one instead of the shared target
// server: the server's accept queue once overflowed that way, and the next test's connect lost
// its SYN and waited out its whole timeout for the retransmission.
type sink struct {
	ln       net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	stopOnce sync.Once
}

func newSink(t *testing.T) *sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{ln: ln, conns: map[net.Conn]struct{}{}}
	t.Cleanup(s.stop) // also when the test fails before its own stop
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by stop
			}
			s.mu.Lock()
			if s.conns == nil { // stopping
				s.mu.Unlock()
				c.Close()
				continue
			}
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				_, _ = io.Copy(io.Discard, c)
				s.mu.Lock()
				if s.conns != nil {
					delete(s.conns, c)
				}
				s.mu.Unlock()
				c.Close()
			}()
		}
	}()
	return s
}

func (s *sink) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// stop closes the listener and every connection it holds, and waits for its goroutines. Only
// the first call does anything.
func (s *sink) stop() {
	s.stopOnce.Do(func() {
		s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.conns = nil
		s.mu.Unlock()
		s.wg.Wait()
	})
}

// submitTCP runs n TCP Submits with at most conc in flight and fails the test unless all
// succeed.
func submitTCP(t *testing.T, e *prober.Engine, n, conc int) {
	t.Helper()
	submitted, done := 0, 0
	for done < n {
		for submitted < n && submitted-done < conc {
			if err := e.Submit(context.Background(), prober.TCP("127.0.0.1", targetPort), uint64(submitted)); err != nil {
				t.Fatal(err)
			}
			submitted++
		}
		ev := next(t, e, 30*time.Second, func(ev prober.Event) bool { return ev.Kind == prober.EventCheck })
		if ev.Result != prober.Success {
			t.Fatalf("check event: %+v", ev)
		}
		done++
	}
}

func TestEngineSocketReuse(t *testing.T) {
	base := countFDs(t)

	// By default the engine keeps the sockets of finished TCP probes for later ones: at most
	// as many as were ever in flight here, all closed by Close.
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	withEngine := countFDs(t)
	submitTCP(t, e, 300, 16)
	if kept := countFDs(t) - withEngine; kept < 1 || kept > 16 {
		t.Fatalf("descriptors kept for reuse after 300 probes, 16 in flight: %d", kept)
	}
	e.Close()
	if got := settle(base, 5*time.Second, func() int { return countFDs(t) }); got != base {
		t.Fatalf("descriptors after Close: %d, before the engine: %d", got, base)
	}

	// WithoutSocketReuse: every socket is closed after its probe.
	e, err = prober.NewEngine(prober.WithoutSocketReuse())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	withEngine = countFDs(t)
	submitTCP(t, e, 300, 16)
	if got := settle(withEngine, 5*time.Second, func() int { return countFDs(t) }); got != withEngine {
		t.Fatalf("descriptors after 300 probes without reuse: %d, with the idle engine: %d", got, withEngine)
	}
}
