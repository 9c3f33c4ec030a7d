package prober

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// Keeping only Events (the *Engine unreachable), the engine keeps running through garbage
// collections: its goroutine owns it until Close.
func TestUnreachableEngineKeepsRunning(t *testing.T) {
	var c *engineCore
	events := func() <-chan Event {
		e, err := NewEngine(WithEveryRun(), WithEventBuffer(2))
		if err != nil {
			t.Fatal(err)
		}
		c = e.c
		c.qmu.Lock()
		c.leakCheck = false // dropped on purpose
		c.qmu.Unlock()
		target, err := e.AddTarget()
		if err != nil {
			t.Fatal(err)
		}
		s := Exec("true")
		s.Period = 20 * time.Millisecond
		if err := e.SetProbe(target, Readiness, s); err != nil {
			t.Fatal(err)
		}
		return e.Events()
	}()
	defer c.close()
	timeout := time.After(30 * time.Second)
	for n := 0; n < 20; n++ {
		runtime.GC()
		select {
		case _, ok := <-events:
			if !ok {
				t.Fatalf("Events closed after %d events (Err %v)", n, c.err.Load())
			}
		case <-timeout:
			t.Fatalf("%d events", n)
		}
	}
	if err := c.err.Load(); err != nil {
		t.Fatal(err)
	}
}

// An engine that failed refuses every call with an error that is ErrClosed and carries the
// library's *Error.
func TestFailedEngineRefusesCalls(t *testing.T) {
	e := NewTestEngine(t)
	id, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	e.c.err.Store(&failedError{cause: &Error{Code: StatusIO, Msg: "poll failed"}})
	_, err = e.AddTarget()
	var pe *Error
	if !errors.Is(err, ErrClosed) || !errors.As(err, &pe) || pe.Code != StatusIO ||
		err.Error() != "prober: engine failed: operating system error: poll failed" {
		t.Fatalf("after a failure: %v", err)
	}
	if err := e.Remove(id); !errors.Is(err, ErrClosed) {
		t.Fatalf("Remove: %v", err)
	}
	if err := e.Err(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Err: %v", err)
	}
}
