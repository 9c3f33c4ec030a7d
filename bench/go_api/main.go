// go_api: tcp_oneshot's work through the Go binding's Engine, for ci/bench.sh.
//
//	go_api -target HOST:PORT [-n 40000] [-conc 64] [-label go_api]
//
// N TCP probes with CONC in flight on one prober.Engine, driven the way a Go host would:
// Submit CONC specs, then receive from Events and Submit one more per EventCheck until N have
// finished (the events already queued in the channel are taken before submitting again, so
// that a burst of outcomes is answered with a burst of Submits, which the engine's goroutine
// starts in one turn).
//
// Prints: BENCH scenario=go_api impl=prober n=... rate_per_s=... cpu_us_per_probe=... (CPU of
// the whole process, Go runtime and engine goroutine included, from getrusage RUSAGE_SELF).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

func tvUs(tv syscall.Timeval) int64 { return tv.Sec*1_000_000 + tv.Usec }

func main() {
	target := flag.String("target", "", "HOST:PORT")
	n := flag.Int("n", 40000, "probes")
	conc := flag.Int("conc", 64, "in flight")
	label := flag.String("label", "go_api", "scenario name printed")
	flag.Parse()
	host, portText, err := net.SplitHostPort(*target)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go_api: -target %q: %v\n", *target, err)
		os.Exit(64)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		fmt.Fprintf(os.Stderr, "go_api: bad port %q\n", portText)
		os.Exit(64)
	}
	e, err := prober.NewEngine(prober.WithEventBuffer(1024))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go_api: %v\n", err)
		os.Exit(1)
	}
	spec := prober.TCP(host, port)
	ctx := context.Background()

	var r0, r1 syscall.Rusage
	t0 := time.Now()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	submitted, done, ok := 0, 0, 0
	firstFailure := ""
	submit := func() {
		if err := e.Submit(ctx, spec, uint64(submitted)); err != nil {
			fmt.Fprintf(os.Stderr, "go_api: Submit: %v\n", err)
			os.Exit(1)
		}
		submitted++
	}
	for submitted < *n && submitted < *conc {
		submit()
	}
	handle := func(ev prober.Event) int {
		if ev.Kind != prober.EventCheck {
			return 0
		}
		done++
		if ev.Result == prober.Success {
			ok++
		} else if firstFailure == "" {
			firstFailure = ev.Outcome.Message
		}
		return 1
	}
	for done < *n {
		ev, open := <-e.Events()
		if !open {
			fmt.Fprintf(os.Stderr, "go_api: engine stopped: %v\n", e.Err())
			os.Exit(1)
		}
		more := handle(ev)
	batch:
		for {
			select {
			case ev := <-e.Events():
				more += handle(ev)
			default:
				break batch
			}
		}
		for ; more > 0 && submitted < *n; more-- {
			submit()
		}
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	wall := time.Since(t0).Seconds()
	_ = e.Close()
	user := float64(tvUs(r1.Utime) - tvUs(r0.Utime))
	sys := float64(tvUs(r1.Stime) - tvUs(r0.Stime))
	if firstFailure != "" {
		fmt.Fprintf(os.Stderr, "go_api: %d of %d probes failed; first: %s\n", *n-ok, *n, firstFailure)
	}
	fn := float64(*n)
	fmt.Printf("BENCH scenario=%s impl=prober n=%d ok=%d fail=%d wall_s=%.3f rate_per_s=%.1f "+
		"cpu_us_per_probe=%.2f user_us_per_probe=%.2f sys_us_per_probe=%.2f cpu_pct=%.1f rss_kb=%d conc=%d\n",
		*label, *n, ok, *n-ok, wall, fn/wall, (user+sys)/fn, user/fn, sys/fn, (user+sys)/1e4/wall, r1.Maxrss, *conc)
}
