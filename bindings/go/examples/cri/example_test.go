package cri_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/libprober/prober/bindings/go/examples/cri"
	"github.com/libprober/prober/bindings/go/prober"
)

// A container's readiness, checked the kubelet's way through its runtime's CRI ExecSync (here
// a fake runtime on a Unix socket that runs the command locally), scheduled and judged by the
// engine.
func ExampleExecSync() {
	dir, err := os.MkdirTemp("", "cri-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	runtime, client, stop, err := startRuntime(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()

	e, err := prober.NewEngine()
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	app, err := e.AddTarget()
	if err != nil {
		log.Fatal(err)
	}
	readiness := cri.ExecSync(client, "app", "echo", "ready")
	readiness.Period = 50 * time.Millisecond
	readiness.Timeout = 10 * time.Second // generous: only the outcome is printed
	if err := e.SetProbe(app, prober.Readiness, readiness); err != nil {
		log.Fatal(err)
	}
	for ev := range e.Events() {
		if ev.Kind == prober.EventState && ev.HasOutcome {
			fmt.Printf("readiness: %v, output %q\n", ev.Result, ev.Outcome.Output)
			break
		}
	}
	fmt.Println("the runtime ran:", runtime.callsSeen()[0])
	// Output:
	// readiness: success, output "ready\n"
	// the runtime ran: app: echo ready
}
