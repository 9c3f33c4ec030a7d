package prober_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"strings"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// A one-shot exec probe.
func ExampleCheck() {
	o, err := prober.Check(context.Background(), prober.Exec("/bin/echo", "hello"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Result, o.ExitCode, strings.TrimSpace(string(o.Output)))
	// Output: success 0 hello
}

// The context bounds the call: when it ends first, the probe is cancelled (here the command
// is killed and reaped) and Check returns ctx.Err().
func ExampleCheck_context() {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	s := prober.Exec("sleep", "10")
	s.Timeout = time.Minute
	_, err := prober.Check(ctx, s)
	fmt.Println(err)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output:
	// prober: probe cancelled: context deadline exceeded
	// true
}

// A failing probe is not an error: the failure is in the outcome.
func ExampleCheck_failure() {
	o, err := prober.Check(context.Background(), prober.Exec("/bin/sh", "-c", "echo not ready; exit 1"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v (%v): %s; output %q\n", o.Result, o.Reason, o.Message, o.Output)
	// Output: failure (exit_code): command terminated with exit code 1; output "not ready\n"
}

// An HTTP probe with the kubelet's options, as a plain struct.
func ExampleCheck_http() {
	spec := prober.Spec{
		Kind:      prober.KindHTTP,
		URL:       "https://127.0.0.1:8443/healthz",
		Headers:   []prober.Header{{Name: "Host", Value: "api.internal"}, {Name: "User-Agent", Value: ""}},
		Redirects: prober.RedirectSameOrigin,
		TLS:       &prober.TLSOptions{ServerName: "api.internal"}, // verified against the system's roots
		Timeout:   2 * time.Second,
	}
	o, err := prober.Check(context.Background(), spec)
	if err != nil {
		log.Fatal(err) // an invalid spec
	}
	if !o.Result.OK() {
		log.Printf("unhealthy: %s (%v)", o.Message, o.Reason)
	}
}

// Invalid input gives an *Error carrying the library's status code and explanation.
func ExampleError() {
	_, err := prober.Check(context.Background(), prober.TCP("127.0.0.1", 0))
	var pe *prober.Error
	if errors.As(err, &pe) {
		fmt.Println(pe.Code == prober.StatusInvalidPort, int(pe.Code), pe.Code)
	}
	fmt.Println(errors.Is(err, &prober.Error{Code: prober.StatusInvalidPort}))
	// Output:
	// true 105 invalid port
	// true
}

// A periodic readiness probe: the worker publishes its initial value (Failure, without an
// outcome), then every change.
func ExampleEngine() {
	e, err := prober.NewEngine()
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	target, err := e.AddTarget()
	if err != nil {
		log.Fatal(err)
	}
	spec := prober.Exec("true")
	spec.Period = 50 * time.Millisecond
	if err := e.SetProbe(target, prober.Readiness, spec); err != nil {
		log.Fatal(err)
	}
	for ev := range e.Events() {
		if ev.Kind != prober.EventState {
			continue
		}
		fmt.Println(ev.Role, ev.Result, ev.HasOutcome)
		if ev.Result == prober.Success {
			break
		}
	}
	// Output:
	// readiness failure false
	// readiness success true
}

// One-shot probes on an engine: one goroutine drives them all, results arrive by tag.
func ExampleEngine_Submit() {
	e, err := prober.NewEngine()
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	commands := []string{"exit 0", "exit 3", "echo hi"}
	for i, c := range commands {
		if err := e.Submit(context.Background(), prober.Exec("/bin/sh", "-c", c), uint64(i)); err != nil {
			log.Fatal(err)
		}
	}
	var lines []string
	for ev := range e.Events() {
		if ev.Kind == prober.EventCheck {
			lines = append(lines, fmt.Sprintf("%q: %v, exit %d", commands[ev.Tag], ev.Result, ev.Outcome.ExitCode))
		}
		if len(lines) == len(commands) {
			break
		}
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// "echo hi": success, exit 0
	// "exit 0": success, exit 0
	// "exit 3": failure, exit 3
}

// Kubernetes-style probes for one container: startup gates the others (readiness runs as soon
// as startup succeeds), liveness would hold a failure until Restart.
func ExampleEngine_SetProbe() {
	e, err := prober.NewEngine()
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	container, err := e.AddTarget()
	if err != nil {
		log.Fatal(err)
	}
	startup := prober.Exec("true")
	startup.Period, startup.FailureThreshold = 50*time.Millisecond, 30
	liveness := prober.Exec("true")
	liveness.Period = time.Second
	readiness := prober.Exec("true")
	readiness.Period = 5 * time.Second

	for _, p := range []struct {
		role prober.Role
		spec prober.Spec
	}{{prober.Startup, startup}, {prober.Liveness, liveness}, {prober.Readiness, readiness}} {
		if err := e.SetProbe(container, p.role, p.spec); err != nil {
			log.Fatal(err)
		}
	}
	for ev := range e.Events() {
		// Each probe's initial value (startup unknown, liveness success, readiness failure)
		// arrives first with HasOutcome false; where it falls among the other probes' runs
		// depends on timing, so this example prints only the values that runs produced,
		// whose order startup's gate fixes.
		if ev.HasOutcome {
			fmt.Println(ev.Role, ev.Result)
		}
		switch {
		case ev.Role == prober.Liveness && ev.Result == prober.Failure:
			if err := e.Restart(container); err != nil {
				log.Fatal(err)
			}
		case ev.Role == prober.Readiness && ev.Result.OK():
			return
		}
	}
	// Output:
	// startup success
	// readiness success
}
