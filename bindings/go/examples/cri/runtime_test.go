package cri_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntime is a CRI runtime service with one container, "app", whose ExecSync runs the
// command on this machine with os/exec, the way a real runtime runs it inside the container.
// Every other method is unimplemented.
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer

	mu    sync.Mutex
	calls []string // "container: cmd" of every ExecSync
}

func (f *fakeRuntime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	f.mu.Lock()
	f.calls = append(f.calls, req.ContainerId+": "+joinCmd(req.Cmd))
	f.mu.Unlock()
	if req.ContainerId != "app" {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	if len(req.Cmd) == 0 {
		return nil, status.Error(codes.InvalidArgument, "no command")
	}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.Timeout)*time.Second)
		defer cancel()
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, req.Cmd[0], req.Cmd[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, status.Errorf(codes.DeadlineExceeded, "command %q timed out", joinCmd(req.Cmd))
	}
	var exitErr *exec.ExitError
	code := int32(0)
	switch {
	case errors.As(err, &exitErr):
		code = int32(exitErr.ExitCode())
	case err != nil:
		return nil, status.Errorf(codes.Unknown, "exec failed: %v", err)
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: code}, nil
}

func (f *fakeRuntime) callsSeen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func joinCmd(cmd []string) string {
	var b bytes.Buffer
	for i, c := range cmd {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c)
	}
	return b.String()
}

// startRuntime serves a fakeRuntime over gRPC on a Unix socket in dir (as containerd and
// CRI-O serve theirs) and returns it with a connected client and a function that stops both.
func startRuntime(dir string) (*fakeRuntime, runtimeapi.RuntimeServiceClient, func(), error) {
	sock := filepath.Join(dir, "cri.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, nil, nil, err
	}
	rt := &fakeRuntime{}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, rt)
	go func() { _ = srv.Serve(ln) }()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		srv.Stop()
		return nil, nil, nil, err
	}
	stop := func() {
		_ = conn.Close()
		srv.Stop()
		_ = os.Remove(sock)
	}
	return rt, runtimeapi.NewRuntimeServiceClient(conn), stop, nil
}

// fakeRuntimeHandle is a running fake runtime and a client of it.
type fakeRuntimeHandle struct {
	rt     *fakeRuntime
	client runtimeapi.RuntimeServiceClient
}
