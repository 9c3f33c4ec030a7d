package prober_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// Keep-alive HTTP probes against Go's net/http server, which keeps connections alive and
// reports every new one through ConnState.

type connCounter struct {
	conns         atomic.Int64
	closeRequests atomic.Int64
}

func keepAliveServer(t *testing.T) (*httptest.Server, *connCounter) {
	t.Helper()
	c := &connCounter{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Close {
			c.closeRequests.Add(1)
		}
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, c
}

// runs sets s on a new target of e and waits for n successful runs.
func runs(t *testing.T, e *prober.Engine, s prober.Spec, n int) {
	t.Helper()
	target, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	s.Period = 20 * time.Millisecond
	if err := e.SetProbe(target, prober.Readiness, s); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		ev := next(t, e, 10*time.Second, func(ev prober.Event) bool {
			return ev.Kind == prober.EventRun && ev.Target == target
		})
		if ev.Result != prober.Success {
			t.Fatalf("run %d: %+v", i, ev)
		}
	}
	if err := e.Remove(target); err != nil {
		t.Fatal(err)
	}
}

func TestKeepAlive(t *testing.T) {
	srv, c := keepAliveServer(t)
	e, err := prober.NewEngine(prober.WithEveryRun(), prober.WithEventBuffer(64))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	s := prober.HTTP(srv.URL + "/")
	s.KeepAlive = true
	runs(t, e, s, 6)
	if n := c.conns.Load(); n != 1 {
		t.Fatalf("keep-alive: %d connections for 6 runs, want 1", n)
	}
	if n := c.closeRequests.Load(); n != 0 {
		t.Fatalf("keep-alive: %d requests asked to close", n)
	}

	// Off by default: a connection per run, each request asking to close.
	before := c.conns.Load()
	runs(t, e, prober.HTTP(srv.URL+"/"), 4)
	if n := c.conns.Load() - before; n < 4 {
		t.Fatalf("default: %d connections for 4 runs", n)
	}
	if n := c.closeRequests.Load(); n < 4 {
		t.Fatalf("default: %d requests asked to close, want every one", n)
	}
}

// gRPC keep-alive: the checks of one target share one HTTP/2 connection, counted by grpc-go's
// health server; without it every check dials.
func TestKeepAliveGRPC(t *testing.T) {
	h := startHealthServerCmd(t)
	e, err := prober.NewEngine(prober.WithEveryRun(), prober.WithEventBuffer(64))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	s := prober.GRPC("127.0.0.1", h.port, "")
	s.KeepAlive = true
	runs(t, e, s, 6)
	if n := h.command(t, "conns"); n != "1" {
		t.Fatalf("keep-alive: %s connections for 6 checks, want 1", n)
	}
	runs(t, e, prober.GRPC("127.0.0.1", h.port, ""), 3)
	if n := h.command(t, "conns"); n != "4" {
		t.Fatalf("default: %s connections in all after 3 more checks, want 4", n)
	}
}

func TestKeepAliveOnTCPIsRefused(t *testing.T) {
	s := prober.TCP("127.0.0.1", targetPort)
	s.KeepAlive = true
	_, err := prober.Check(context.Background(), s)
	wantError(t, "keep-alive on TCP", err, prober.StatusWrongKind, "HTTP and gRPC probes only")
}
