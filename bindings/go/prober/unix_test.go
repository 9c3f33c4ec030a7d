package prober_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// Unix sockets (issue 25): a connect check, and HTTP over a Unix socket against net/http.

func TestUnixConnectCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, socket := range []string{path, "unix://" + path} {
		o, err := prober.Check(context.Background(), prober.Unix(socket))
		if err != nil || o.Result != prober.Success {
			t.Fatalf("%s: %+v %v", socket, o, err)
		}
	}
	gone := filepath.Join(t.TempDir(), "gone.sock")
	o, err := prober.Check(context.Background(), prober.Unix(gone))
	if err != nil || o.Result != prober.Failure || o.Reason != prober.ReasonRefused ||
		o.Message != "dial unix "+gone+": connect: no such file or directory" {
		t.Fatalf("missing socket: %+v %v", o, err)
	}
	if _, err := prober.Check(context.Background(), prober.Unix("unix://host/x")); err == nil {
		t.Fatal("unix://host/x accepted")
	}
}

func TestHTTPOverUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Method+" "+r.Host+" "+r.URL.Path)
	})}
	go srv.Serve(l)
	defer srv.Close()
	s := prober.HTTP("http://localhost/healthz")
	s.UnixSocket = path
	o, err := prober.Check(context.Background(), s)
	if err != nil || o.Result != prober.Success || string(o.Output) != "GET localhost /healthz" {
		t.Fatalf("HTTP over %s: %+v %q %v", path, o, o.Output, err)
	}
	s = prober.Exec("true")
	s.UnixSocket = path
	if _, err := prober.Check(context.Background(), s); err == nil || !strings.Contains(err.Error(), "Unix socket") {
		t.Fatalf("exec with a socket: %v", err)
	}
}
