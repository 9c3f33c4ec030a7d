package prober_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// wantError fails unless err is an *Error with code (and, when msg is not empty, a message
// containing msg).
func wantError(t *testing.T, what string, err error, code prober.Status, msg string) {
	t.Helper()
	var pe *prober.Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s: error %v (%T), want an *prober.Error with code %d", what, err, err, code)
	}
	if pe.Code != code {
		t.Fatalf("%s: code %d (%v), want %d (%v); message %q", what, pe.Code, pe.Code, code, code, pe.Msg)
	}
	if msg != "" && !strings.Contains(pe.Msg, msg) {
		t.Fatalf("%s: message %q does not contain %q", what, pe.Msg, msg)
	}
	if !errors.Is(err, &prober.Error{Code: code}) || errors.Is(err, &prober.Error{Code: code + 1000}) {
		t.Fatalf("%s: errors.Is does not match on the code", what)
	}
}

func TestSpecErrors(t *testing.T) {
	ctx := context.Background()
	check := func(s prober.Spec) error { _, err := prober.Check(ctx, s); return err }

	wantError(t, "port 0", check(prober.TCP("127.0.0.1", 0)), prober.StatusInvalidPort, "")
	wantError(t, "port 65536", check(prober.TCP("127.0.0.1", 65536)), prober.StatusInvalidPort, "")
	wantError(t, "port 1<<40", check(prober.TCP("127.0.0.1", 1<<40)), prober.StatusInvalidPort, "")
	wantError(t, "bad scheme", check(prober.HTTP("ftp://x/")), prober.StatusInvalidURL, "unsupported URL scheme")
	wantError(t, "not a URL", check(prober.HTTP("not a url")), prober.StatusInvalidURL, "")
	wantError(t, "empty argv", check(prober.Exec()), prober.StatusInvalidArgv, "")
	wantError(t, "NUL in argv", check(prober.Exec("echo", "a\x00b")), prober.StatusInvalidArgv, "NUL")
	wantError(t, "no kind", check(prober.Spec{Host: "127.0.0.1", Port: 80}), prober.StatusInvalidEnum, "")

	s := prober.TCP("127.0.0.1", 80)
	s.URL = "http://127.0.0.1/"
	wantError(t, "URL on TCP", check(s), prober.StatusWrongKind, "URL does not apply to tcp probes")
	s = prober.Exec("true")
	s.Port = 80
	wantError(t, "Port on exec", check(s), prober.StatusWrongKind, "Port")

	s = prober.TCP("127.0.0.1", 80)
	s.Headers = []prober.Header{{Name: "A", Value: "b"}}
	wantError(t, "header on TCP", check(s), prober.StatusWrongKind, "")

	s = prober.HTTP(targetURL("/ok"))
	s.Headers = []prober.Header{{Name: "X-Bad", Value: "a\r\nInjected: 1"}}
	wantError(t, "CRLF in a header", check(s), prober.StatusInvalidHeader, "")

	s = prober.HTTP(targetURL("/ok"))
	s.Env = []prober.EnvVar{{Name: "A", Value: "b"}}
	wantError(t, "env on HTTP", check(s), prober.StatusWrongKind, "")

	s = prober.Exec("true")
	s.Env = []prober.EnvVar{{Name: "BAD=NAME", Value: "x"}}
	wantError(t, "bad env name", check(s), prober.StatusInvalidEnv, "")

	s = prober.TCP("127.0.0.1", 80)
	s.Timeout = -time.Second
	wantError(t, "negative timeout", check(s), prober.StatusInvalidDuration, "")
	s.Timeout = 25 * time.Hour
	wantError(t, "timeout over 24h", check(s), prober.StatusInvalidDuration, "")

	s = prober.TCP("127.0.0.1", 80)
	s.OutputLimit = -1
	wantError(t, "negative output limit", check(s), prober.StatusInvalid, "")

	s = prober.HTTP(targetURL("/ok"))
	s.Redirects = 7
	wantError(t, "bad redirect policy", check(s), prober.StatusInvalidEnum, "")

	// TCP takes TLS since issue 25 (tcp_tls_test.go); exec never does.
	s = prober.Exec("true")
	s.TLS = &prober.TLSOptions{}
	wantError(t, "TLS on exec", check(s), prober.StatusWrongKind, "")

	s = prober.GRPC("127.0.0.1", 80, "")
	s.TLS = &prober.TLSOptions{MinVersion: tls.VersionTLS11}
	wantError(t, "TLS 1.1", check(s), prober.StatusInvalidTLS, "")

	// The text reads well.
	err := check(prober.TCP("127.0.0.1", 0))
	if got := err.Error(); got != "prober: invalid port 0 (expected 1 to 65535)" {
		t.Fatalf("Error() = %q", got)
	}
	if !errors.Is(err, prober.ErrInvalidSpec) || errors.Is(err, prober.ErrUnknownTarget) {
		t.Fatalf("%v: ErrInvalidSpec %v", err, errors.Is(err, prober.ErrInvalidSpec))
	}
}

// Each failing call reports its own message, even with many goroutines failing at once on
// whatever threads they run: the shim reads prober_last_error inside the failing cgo call.
func TestErrorMessagePerCall(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				scheme := fmt.Sprintf("x%dy%d", g, i)
				_, err := prober.Check(context.Background(), prober.HTTP(scheme+"://host/"))
				var pe *prober.Error
				if !errors.As(err, &pe) || pe.Code != prober.StatusInvalidURL || !strings.Contains(pe.Msg, scheme) {
					errs <- fmt.Errorf("goroutine %d call %d: %v", g, i, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEngineErrors(t *testing.T) {
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	target, err := e.AddTarget()
	if err != nil || target == 0 {
		t.Fatalf("AddTarget = %d, %v", target, err)
	}

	s := prober.TCP("127.0.0.1", targetPort)
	s.SuccessThreshold = 2
	wantError(t, "liveness success threshold 2", e.SetProbe(target, prober.Liveness, s),
		prober.StatusInvalidThreshold, "success threshold must be 1 for liveness")
	wantError(t, "startup success threshold 2", e.SetProbe(target, prober.Startup, s),
		prober.StatusInvalidThreshold, "")
	if err := e.SetProbe(target, prober.Readiness, s); err != nil {
		t.Fatalf("readiness success threshold 2: %v", err)
	}
	s.SuccessThreshold, s.FailureThreshold = -1, 0
	wantError(t, "negative threshold", e.SetProbe(target, prober.Readiness, s), prober.StatusInvalidThreshold, "")

	good := prober.TCP("127.0.0.1", targetPort)
	wantError(t, "unknown target", e.SetProbe(target+999, prober.Readiness, good), prober.StatusUnknownTarget, "")
	wantError(t, "unknown target (remove)", e.Remove(target+999), prober.StatusUnknownTarget, "")
	wantError(t, "unknown target (trigger)", e.Trigger(target+999, prober.Readiness), prober.StatusUnknownTarget, "")
	wantError(t, "unknown target (restart)", e.Restart(target+999), prober.StatusUnknownTarget, "")
	if _, err := e.Published(target+999, prober.Readiness); err == nil {
		t.Fatal("Published of an unknown target succeeded")
	}
	wantError(t, "no startup probe", e.Trigger(target, prober.Startup), prober.StatusNoProbe, "")
	wantError(t, "bad role", e.SetProbe(target, prober.Role(9), good), prober.StatusInvalidEnum, "")
	wantError(t, "bad port in Submit", e.Submit(context.Background(), prober.TCP("127.0.0.1", 0), 1), prober.StatusInvalidPort, "")

	s = good
	s.Period = -time.Millisecond
	wantError(t, "negative period", e.SetProbe(target, prober.Readiness, s), prober.StatusInvalidDuration, "")

	if err := e.Remove(target); err != nil {
		t.Fatal(err)
	}
	wantError(t, "removed target", e.Remove(target), prober.StatusUnknownTarget, "")

	e.Close()
	if _, err := e.AddTarget(); !errors.Is(err, prober.ErrClosed) {
		t.Fatalf("AddTarget after Close: %v", err)
	}
	if err := e.SetProbe(target, prober.Readiness, good); !errors.Is(err, prober.ErrClosed) {
		t.Fatalf("SetProbe after Close: %v", err)
	}
	if _, err := e.Stats(); !errors.Is(err, prober.ErrClosed) {
		t.Fatalf("Stats after Close: %v", err)
	}
}

func TestVersion(t *testing.T) {
	if prober.ABIVersion() != 1 || prober.Version() == "" {
		t.Fatalf("version %q, ABI %d", prober.Version(), prober.ABIVersion())
	}
}
