package prober_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

func check(t *testing.T, s prober.Spec) prober.Outcome {
	t.Helper()
	o, err := prober.Check(context.Background(), s)
	if err != nil {
		t.Fatalf("Check(%+v): %v", s, err)
	}
	return o
}

func TestCheckTCP(t *testing.T) {
	o := check(t, prober.TCP("127.0.0.1", targetPort))
	if o.Result != prober.Success || o.Reason != prober.ReasonNone || o.Message != "" {
		t.Fatalf("tcp to the server: %+v", o)
	}
	if o.Duration <= 0 || o.Timings.Total != o.Duration || o.ExitCode != -1 || o.HTTPStatus != 0 {
		t.Fatalf("tcp outcome fields: %+v", o)
	}

	o = check(t, prober.TCP("127.0.0.1", 1))
	if o.Result != prober.Failure || o.Reason != prober.ReasonRefused {
		t.Fatalf("tcp to a closed port: %+v", o)
	}
	if want := "dial tcp 127.0.0.1:1: connect: connection refused"; o.Message != want {
		t.Fatalf("message %q, want %q", o.Message, want)
	}

	// IPv6 literal, with a spec built as a plain struct.
	s := prober.Spec{Kind: prober.KindTCP, Host: "::1", Port: 1, Timeout: 500 * time.Millisecond, Close: prober.CloseFIN}
	if o := check(t, s); o.Result != prober.Failure {
		t.Fatalf("tcp to [::1]:1: %+v", o)
	}
}

func TestCheckHTTP(t *testing.T) {
	o := check(t, prober.HTTP(targetURL("/status/200?body=hello")))
	if o.Result != prober.Success || string(o.Output) != "hello" || o.HTTPStatus != 200 || o.Truncated {
		t.Fatalf("200: %+v", o)
	}

	o = check(t, prober.HTTP(targetURL("/no-location/302?body=moved")))
	if o.Result != prober.Warning || o.Reason != prober.ReasonRedirect || !o.Result.OK() {
		t.Fatalf("302: %+v", o)
	}
	if want := "Probe terminated redirects, Response body: moved"; o.Message != want {
		t.Fatalf("302 message %q, want %q", o.Message, want)
	}

	o = check(t, prober.HTTP(targetURL("/status/503?body=secret")))
	if o.Result != prober.Failure || o.Reason != prober.ReasonStatus || o.HTTPStatus != 503 {
		t.Fatalf("503: %+v", o)
	}
	if want := "HTTP probe failed with statuscode: 503"; o.Message != want {
		t.Fatalf("503 message %q, want %q", o.Message, want)
	}

	// Redirects: the chain is followed by default, not with RedirectNone.
	if o := check(t, prober.HTTP(targetURL("/redirect-chain/3"))); o.Result != prober.Success || string(o.Output) != "chain end" {
		t.Fatalf("redirect chain: %+v", o)
	}
	s := prober.HTTP(targetURL("/redirect-chain/3"))
	s.Redirects = prober.RedirectNone
	if o := check(t, s); o.Result != prober.Warning || o.HTTPStatus != 302 {
		t.Fatalf("redirect chain, policy none: %+v", o)
	}

	// Timeout: one deadline for the whole exchange.
	s = prober.HTTP(targetURL("/slow-headers/3000"))
	s.Timeout = 200 * time.Millisecond
	start := time.Now()
	o = check(t, s)
	if o.Result != prober.Failure || o.Reason != prober.ReasonTimeout {
		t.Fatalf("slow headers: %+v", o)
	}
	if el := time.Since(start); el < 150*time.Millisecond || el > 2*time.Second {
		t.Fatalf("slow headers took %v with a 200ms timeout", el)
	}

	// Truncation: 10240 bytes kept by default, or the spec's limit.
	o = check(t, prober.HTTP(targetURL("/body/20000")))
	if o.Result != prober.Success || len(o.Output) != 10240 || !o.Truncated || o.OutputTotal < 10240 {
		t.Fatalf("big body: result %v, %d bytes kept, truncated %v, total %d", o.Result, len(o.Output), o.Truncated, o.OutputTotal)
	}
	if !bytes.Equal(o.Output, bytes.Repeat([]byte("a"), 10240)) {
		t.Fatal("big body: kept bytes are not the body's")
	}
	s = prober.HTTP(targetURL("/body/5000"))
	s.OutputLimit = 100
	if o := check(t, s); len(o.Output) != 100 || !o.Truncated {
		t.Fatalf("output limit 100: %d bytes, truncated %v", len(o.Output), o.Truncated)
	}
}

func TestCheckHTTPHeaders(t *testing.T) {
	s := prober.HTTP(targetURL("/echo/headers"))
	s.Headers = []prober.Header{{Name: "User-Agent", Value: ""}, {Name: "X-Test", Value: "go-suite"}}
	o := check(t, s)
	out := string(o.Output)
	if strings.Contains(out, "User-Agent") {
		t.Fatalf("an empty User-Agent must remove the header; server saw:\n%s", out)
	}
	if !strings.Contains(out, "X-Test: go-suite\n") || !strings.Contains(out, "Accept: */*\n") {
		t.Fatalf("headers seen by the server:\n%s", out)
	}

	// The default User-Agent, and Host as the virtual host.
	o = check(t, prober.HTTP(targetURL("/echo/headers")))
	if !strings.Contains(string(o.Output), "User-Agent: kube-probe/") {
		t.Fatalf("default headers:\n%s", o.Output)
	}
	s = prober.HTTP(targetURL("/echo/host"))
	s.Headers = []prober.Header{{Name: "Host", Value: "example.test"}}
	if o := check(t, s); string(o.Output) != "example.test" {
		t.Fatalf("Host header: server saw %q", o.Output)
	}
}

func TestCheckExec(t *testing.T) {
	o := check(t, prober.Exec("/bin/sh", "-c", "printf ok"))
	if o.Result != prober.Success || string(o.Output) != "ok" || o.ExitCode != 0 {
		t.Fatalf("printf ok: %+v", o)
	}

	o = check(t, prober.Exec("/bin/sh", "-c", "echo Fail; echo err >&2; exit 3"))
	if o.Result != prober.Failure || o.Reason != prober.ReasonExitCode || o.ExitCode != 3 {
		t.Fatalf("exit 3: %+v", o)
	}
	if o.Message != "command terminated with exit code 3" || string(o.Output) != "Fail\nerr\n" {
		t.Fatalf("exit 3: message %q output %q", o.Message, o.Output)
	}

	s := prober.Exec("/bin/sh", "-c", "exec sleep 10")
	s.Timeout = 150 * time.Millisecond
	start := time.Now()
	o = check(t, s)
	if o.Result != prober.Failure || o.Reason != prober.ReasonTimeout || o.Message != `command timed out: "/bin/sh -c exec sleep 10" timed out after 150ms` {
		t.Fatalf("timeout: %+v", o)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("timeout took %v", el)
	}

	o = check(t, prober.Exec("head", "-c", "50000", "/dev/zero"))
	if len(o.Output) != 10240 || !o.Truncated || o.OutputTotal != 50000 {
		t.Fatalf("truncation: %d bytes kept, truncated %v, total %d", len(o.Output), o.Truncated, o.OutputTotal)
	}

	o = check(t, prober.Exec("/no/such/binary"))
	if o.Result != prober.Unknown || o.Reason != prober.ReasonSpawn || !strings.Contains(o.Message, "no such file or directory") {
		t.Fatalf("missing binary: %+v", o)
	}

	// $(VAR) expansion from the spec's env (a name set twice takes the last value); unknown
	// references are kept as written.
	s = prober.Exec("/bin/echo", "$(GREETING)", "$(NOT_SET)", "x$(GREETING)y")
	s.Env = []prober.EnvVar{{Name: "GREETING", Value: "hello"}, {Name: "GREETING", Value: "hi"}}
	if o := check(t, s); string(o.Output) != "hi $(NOT_SET) xhiy\n" {
		t.Fatalf("env expansion: %q", o.Output)
	}
	// The variable is in the command's environment too.
	s = prober.Exec("/bin/sh", "-c", `echo "$GREETING"`)
	s.Env = []prober.EnvVar{{Name: "GREETING", Value: "hi there"}}
	if o := check(t, s); string(o.Output) != "hi there\n" {
		t.Fatalf("env in the environment: %q", o.Output)
	}
	// There, as in a container, each value is expanded against the variables before it ($$ is
	// a literal $); the command line keeps the values as written.
	s = prober.Exec("/bin/sh", "-c", `printf '%s|%s|%s' "$A" "$C" '$(A)'`)
	s.Env = []prober.EnvVar{{Name: "B", Value: "x"}, {Name: "A", Value: "$(B)y"}, {Name: "C", Value: "$$(B)"}}
	if o := check(t, s); string(o.Output) != "xy|$(B)|$(B)y" {
		t.Fatalf("env values expanded as the kubelet does: %q", o.Output)
	}

	s = prober.Exec("pwd")
	s.Workdir = "/tmp"
	if o := check(t, s); string(o.Output) != "/tmp\n" {
		t.Fatalf("workdir: %q", o.Output)
	}
}

func TestCheckGRPCRefused(t *testing.T) {
	o := check(t, prober.GRPC("127.0.0.1", 1, ""))
	if o.Result != prober.Failure || o.Reason != prober.ReasonRefused {
		t.Fatalf("grpc to a closed port: %+v", o)
	}
}

// Every TLS option is accepted by the library; the files are read when the probe runs, so a
// missing CA file makes the run Unknown with reason tls.
func TestCheckTLSOptions(t *testing.T) {
	opts := &prober.TLSOptions{
		CAFile: "/nonexistent/ca.pem", ServerName: "api.internal",
		ClientCert: "/nonexistent/cert.pem", ClientKey: "/nonexistent/key.pem", MinVersion: tls.VersionTLS13,
	}
	for _, s := range []prober.Spec{prober.HTTP("https://127.0.0.1:1/"), prober.GRPC("127.0.0.1", 1, "svc")} {
		s.TLS = opts
		if o := check(t, s); o.Result != prober.Unknown || o.Reason != prober.ReasonTLS || !strings.Contains(o.Message, "/nonexistent/ca.pem") {
			t.Fatalf("%v with a missing CA file: %+v", s.Kind, o)
		}
	}
	s := prober.HTTP("https://127.0.0.1:1/")
	s.TLS = &prober.TLSOptions{ClientCert: "/x.pem"}
	if _, err := prober.Check(context.Background(), s); !errors.Is(err, &prober.Error{Code: prober.StatusInvalidTLS}) {
		t.Fatalf("client certificate without key: %v", err)
	}
	s.TLS = &prober.TLSOptions{MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS12}
	_, err := prober.Check(context.Background(), s)
	if !errors.Is(err, &prober.Error{Code: prober.StatusInvalidTLS}) || !strings.Contains(err.Error(), "minimum TLS version 1.3 is above the maximum 1.2") {
		t.Fatalf("minimum above maximum: %v", err)
	}
	s.TLS = &prober.TLSOptions{MaxVersion: tls.VersionTLS11}
	if _, err := prober.Check(context.Background(), s); !errors.Is(err, &prober.Error{Code: prober.StatusInvalidTLS}) {
		t.Fatalf("maximum TLS 1.1: %v", err)
	}
}

// Outcomes that travel through an engine event (Check uses one) carry the phase timings too.
func TestCheckReportsPhaseTimings(t *testing.T) {
	ctx := context.Background()
	o, err := prober.Check(ctx, prober.TCP("127.0.0.1", targetPort))
	if err != nil || o.Result != prober.Success {
		t.Fatalf("tcp: %+v %v", o, err)
	}
	if tm := o.Timings; tm.Resolve != -1 || tm.Connect < 0 || tm.TLS != -1 || tm.Total < tm.Connect {
		t.Fatalf("timings of a TCP probe to an IP: %+v", tm)
	}
	o, err = prober.Check(ctx, prober.HTTP(targetURL("/ok")))
	if err != nil || o.Timings.FirstByte < 0 || o.Timings.Connect < 0 || !o.CertNotAfter.IsZero() {
		t.Fatalf("http: %+v %v", o, err)
	}
	// The facts travel in the event too.
	if o.Proto != "HTTP/1.1" || o.TLSVersion != 0 || o.GRPCStatus != -1 || o.GRPCServingStatus != -1 {
		t.Fatalf("http's facts through an event: %+v", o)
	}
	if g, err := prober.Check(ctx, prober.GRPC("127.0.0.1", 1, "")); err != nil || g.GRPCStatus != 14 || g.Proto != "" {
		t.Fatalf("grpc to a closed port through an event: %+v %v", g, err)
	}
	o, err = prober.Check(ctx, prober.TCP("localhost", targetPort))
	if err != nil || o.Timings.Resolve < 0 {
		t.Fatalf("a host name is resolved and timed: %+v %v", o, err)
	}
}

func TestCheckBlockingTimings(t *testing.T) {
	o, err := prober.CheckBlocking(prober.TCP("127.0.0.1", targetPort))
	if err != nil {
		t.Fatal(err)
	}
	tm := o.Timings
	if o.Result != prober.Success || tm.Resolve != -1 || tm.Connect < 0 || tm.Total < tm.Connect || tm.TLS != -1 {
		t.Fatalf("timings of a TCP probe to an IP: %+v", tm)
	}
	if !o.CertNotAfter.IsZero() {
		t.Fatalf("no TLS, yet a certificate expiry: %v", o.CertNotAfter)
	}
	o, err = prober.CheckBlocking(prober.HTTP(targetURL("/ok")))
	if err != nil || o.Result != prober.Success || o.Timings.FirstByte < 0 || string(o.Output) != "ok" {
		t.Fatalf("blocking HTTP: %+v %v", o, err)
	}
	if o.Proto != "HTTP/1.1" || o.TLSVersion != 0 || o.GRPCStatus != -1 || o.GRPCServingStatus != -1 {
		t.Fatalf("blocking HTTP's facts: %+v", o)
	}
	if _, err := prober.CheckBlocking(prober.TCP("127.0.0.1", 0)); !errors.Is(err, &prober.Error{Code: prober.StatusInvalidPort}) {
		t.Fatalf("blocking with port 0: %v", err)
	}
	// gRPC to a closed port: grpc-go's Unavailable, no health response.
	o, err = prober.CheckBlocking(prober.GRPC("127.0.0.1", 1, ""))
	if err != nil || o.Result != prober.Failure || o.GRPCStatus != 14 || o.GRPCServingStatus != -1 || o.Proto != "" {
		t.Fatalf("blocking gRPC to a closed port: %+v %v", o, err)
	}
}

// A context that ends mid-probe returns ctx.Err() promptly and cancels the probe: the
// command is killed and reaped, no child is left behind.
func TestCheckContextCancel(t *testing.T) {
	waitNoChildren(t, 5*time.Second)
	// The package's shared engine exists (and holds its descriptors) from the first Check on.
	if _, err := prober.Check(context.Background(), prober.Exec("true")); err != nil {
		t.Fatal(err)
	}
	// Sockets the shared engine keeps for reuse are descriptors too, and not leaks.
	fds := countFDs(t) - prober.SharedStats().PooledSockets

	s := prober.Exec("sleep", "30")
	s.Timeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	o, err := prober.Check(ctx, s)
	el := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Check = %+v, %v; want context.DeadlineExceeded", o, err)
	}
	if el < 190*time.Millisecond || el > time.Second {
		t.Fatalf("Check returned after %v with a 200ms deadline", el)
	}
	waitNoChildren(t, 2*time.Second)

	// Cancel (not a deadline), on an HTTP request the server never answers.
	s = prober.HTTP(targetURL("/never-answer"))
	s.Timeout = time.Minute
	ctx, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel2)
	start = time.Now()
	if _, err := prober.Check(ctx, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled HTTP check: %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("cancelled HTTP check returned after %v", el)
	}

	// Already done: no probe at all.
	if _, err := prober.Check(ctx, prober.Exec("true")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Check with a done context: %v", err)
	}

	if got := settle(fds, 2*time.Second, func() int { return countFDs(t) - prober.SharedStats().PooledSockets }); got != fds {
		t.Fatalf("descriptors: %d before, %d after", fds, got)
	}
}

// Exec probes from 100 goroutines at once while other goroutines keep the Go runtime busy
// allocating (and collecting): spawning from a Go process must be safe and every probe must
// see its own output.
func TestCheckExecConcurrentBusyRuntime(t *testing.T) {
	waitNoChildren(t, 5*time.Second)
	fds := countFDs(t) - prober.SharedStats().PooledSockets

	stop := make(chan struct{})
	var busy sync.WaitGroup
	var sink atomic.Int64
	for i := 0; i < runtime.GOMAXPROCS(0)+2; i++ {
		busy.Add(1)
		go func() {
			defer busy.Done()
			var keep [][]byte
			for n := 0; ; n++ {
				select {
				case <-stop:
					sink.Add(int64(len(keep)))
					return
				default:
				}
				b := make([]byte, 32<<10)
				b[n%len(b)] = byte(n)
				keep = append(keep, b)
				if len(keep) > 64 {
					keep = keep[:0]
				}
			}
		}()
	}

	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := prober.Exec("/bin/sh", "-c", "echo $(ID) $0", fmt.Sprint(i))
			s.Env = []prober.EnvVar{{Name: "ID", Value: fmt.Sprint(i * 7)}}
			s.Timeout = 30 * time.Second
			o, err := prober.Check(context.Background(), s)
			if err != nil {
				errs <- err
				return
			}
			if want := fmt.Sprintf("%d %d\n", i*7, i); o.Result != prober.Success || string(o.Output) != want {
				errs <- fmt.Errorf("probe %d: %v %q (want %q) %s", i, o.Result, o.Output, want, o.Message)
			}
		}(i)
	}
	wg.Wait()
	close(stop)
	busy.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	waitNoChildren(t, 2*time.Second)
	if got := settle(fds, 2*time.Second, func() int { return countFDs(t) - prober.SharedStats().PooledSockets }); got != fds {
		t.Fatalf("descriptors: %d before, %d after", fds, got)
	}
}
