package prober_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// gRPC metadata, user agent, authority and Unix sockets (issue 25) against grpc-go's own
// health server: the testkit's grpc-health-server module, built here with go build.

var (
	healthServerOnce sync.Once
	healthServerBin  string
	healthServerErr  error
)

func healthServerBinary(t *testing.T) string {
	t.Helper()
	healthServerOnce.Do(func() {
		if p := os.Getenv("PROBER_GRPC_HEALTH_SERVER"); p != "" {
			healthServerBin = p
			return
		}
		dir, err := os.MkdirTemp("", "prober-go-health")
		if err != nil {
			healthServerErr = err
			return
		}
		healthServerBin = filepath.Join(dir, "grpc-health-server")
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", healthServerBin, ".")
		cmd.Dir = filepath.Join("..", "..", "..", "crates", "prober-testkit", "grpc-health-server")
		if out, err := cmd.CombinedOutput(); err != nil {
			healthServerErr = err
			healthServerBin = string(out)
		}
	})
	if healthServerErr != nil {
		t.Fatalf("building grpc-go's health server: %v: %s", healthServerErr, healthServerBin)
	}
	return healthServerBin
}

// startHealthServer runs the server with args and returns its port (0 on a Unix socket).
func startHealthServer(t *testing.T, args ...string) int {
	return startHealthServerCmd(t, args...).port
}

// healthServer is a running grpc-health-server that takes commands (conns, checks, goaway,
// hang, answer, reset: one a line on its stdin, each answered by one line on its stdout).
type healthServer struct {
	port int
	in   io.Writer
	out  *bufio.Reader
}

// command sends cmd and returns the server's answer.
func (h *healthServer) command(t *testing.T, cmd string) string {
	t.Helper()
	if _, err := io.WriteString(h.in, cmd+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := h.out.ReadString('\n')
	if err != nil {
		t.Fatalf("health server command %q: %v", cmd, err)
	}
	return strings.TrimSpace(line)
}

func startHealthServerCmd(t *testing.T, args ...string) *healthServer {
	cmd := exec.Command(healthServerBinary(t), args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("health server %v: %v", args, err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("health server %v printed %q", args, line)
	}
	return &healthServer{port: port, in: stdin, out: out}
}

func TestGRPCMetadataUserAgentAuthority(t *testing.T) {
	port := startHealthServer(t, "-require-metadata", "authorization=Bearer t0ken",
		"-require-user-agent", "grpc_health_probe", "-require-authority", "health.internal")
	s := prober.GRPC("127.0.0.1", port, "")
	s.UserAgent = "grpc_health_probe"
	s.Authority = "health.internal"
	o, err := prober.Check(context.Background(), s)
	if err != nil || o.Result != prober.Failure || o.Reason != prober.ReasonStatus ||
		o.Message != "error: health rpc probe failed: rpc error: code = Unauthenticated desc = missing metadata authorization: 100% denied" {
		t.Fatalf("without metadata: %+v %v", o, err)
	}
	s.Metadata = []prober.Header{{Name: "Authorization", Value: "Bearer t0ken"}}
	if o, err := prober.Check(context.Background(), s); err != nil || o.Result != prober.Success {
		t.Fatalf("with metadata: %+v %v", o, err)
	}
	s.Metadata = []prober.Header{{Name: "k-bin", Value: "not base64!"}}
	if _, err := prober.Check(context.Background(), s); err == nil || !strings.Contains(err.Error(), "base64") {
		t.Fatalf("bad -bin value: %v", err)
	}
}

func TestGRPCOverUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.sock")
	startHealthServer(t, "-unix", path, "-require-authority", "localhost")
	s := prober.Spec{Kind: prober.KindGRPC, UnixSocket: "unix://" + path}
	if o, err := prober.Check(context.Background(), s); err != nil || o.Result != prober.Success {
		t.Fatalf("gRPC over %s: %+v %v", path, o, err)
	}
}
