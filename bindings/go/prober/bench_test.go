package prober_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// Check of a TCP probe against the prober-target server (the package's shared engine, RST
// close).
func BenchmarkCheckTCP(b *testing.B) {
	ctx := context.Background()
	spec := prober.TCP("127.0.0.1", targetPort)
	for b.Loop() {
		o, err := prober.Check(ctx, spec)
		if err != nil || o.Result != prober.Success {
			b.Fatalf("%+v %v", o, err)
		}
	}
}

// The plain Go baseline: what a Go agent would write (net.DialTimeout, then Close).
func BenchmarkNetDialTCP(b *testing.B) {
	addr := fmt.Sprintf("127.0.0.1:%d", targetPort)
	for b.Loop() {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Close()
	}
}

// CheckBlocking (prober_check on the calling thread), for comparison.
func BenchmarkCheckBlockingTCP(b *testing.B) {
	spec := prober.TCP("127.0.0.1", targetPort)
	for b.Loop() {
		o, err := prober.CheckBlocking(spec)
		if err != nil || o.Result != prober.Success {
			b.Fatalf("%+v %v", o, err)
		}
	}
}

// One Submit at a time through a long-lived Engine: the event path's round trip.
func BenchmarkEngineSubmitTCP(b *testing.B) {
	e, err := prober.NewEngine()
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	spec := prober.TCP("127.0.0.1", targetPort)
	tag := uint64(0)
	for b.Loop() {
		tag++
		if err := e.Submit(context.Background(), spec, tag); err != nil {
			b.Fatal(err)
		}
		for ev := range e.Events() {
			if ev.Kind == prober.EventCheck && ev.Tag == tag {
				if ev.Result != prober.Success {
					b.Fatalf("%+v", ev)
				}
				break
			}
		}
	}
}

// Submits in batches of 100 through one Engine: the per-probe cost when the engine's
// goroutine drains many outcomes per cgo call.
func BenchmarkEngineSubmitTCPBatch100(b *testing.B) {
	e, err := prober.NewEngine()
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	spec := prober.TCP("127.0.0.1", targetPort)
	tag := uint64(0)
	flush := func(n int) {
		for got := 0; got < n; {
			ev := <-e.Events()
			if ev.Kind == prober.EventCheck {
				if ev.Result != prober.Success {
					b.Fatalf("%+v", ev)
				}
				got++
			}
		}
	}
	pending := 0
	for b.Loop() {
		tag++
		if err := e.Submit(context.Background(), spec, tag); err != nil {
			b.Fatal(err)
		}
		if pending++; pending == 100 {
			flush(pending)
			pending = 0
		}
	}
	flush(pending)
}
