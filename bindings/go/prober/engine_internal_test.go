package prober

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A queued spec that the engine refuses (here a NULL spec, which Submit never queues) comes
// back as the EventCheck of its tag with Result Unknown and Err set, and the engine goes on.
func TestEngineRefusedSubmit(t *testing.T) {
	e, err := NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.queue(context.Background(), nil, 7, nil); err != nil {
		t.Fatal(err)
	}
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case ev := <-e.Events():
		var pe *Error
		if ev.Kind != EventCheck || ev.Tag != 7 || ev.Result != Unknown || !ev.HasOutcome ||
			!errors.As(ev.Err, &pe) || pe.Code != StatusNull || pe.Msg == "" ||
			ev.Outcome.Result != Unknown || ev.Outcome.Message != pe.Error() {
			t.Fatalf("refused submit: %+v", ev)
		}
	case <-timer.C:
		t.Fatal("no event for the refused submit")
	}
	if e.Err() != nil {
		t.Fatalf("engine failed: %v", e.Err())
	}
	if err := e.Submit(context.Background(), Exec("true"), 8); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-e.Events():
		if ev.Kind != EventCheck || ev.Tag != 8 || ev.Result != Success || ev.Err != nil {
			t.Fatalf("after the refusal: %+v", ev)
		}
	case <-timer.C:
		t.Fatal("no event after the refusal")
	}
}
