package prober_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// Exec probes inside another process's namespaces (issue 29): a process in new UTS, mount
// and PID namespaces made by unshare. These tests need root (CI runs them as root); without
// it they fail rather than skip.

// startNamespaced starts a sleep in new namespaces with host name `name` and returns its PID
// as this process sees it; it is killed when the test ends.
func startNamespaced(t *testing.T, name string) int {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the namespace tests need root (CI runs them as root); they do not skip")
	}
	// The shell prints its own PID as the host sees it (the host's /proc is still mounted
	// inside), then becomes the sleep that holds the namespaces.
	cmd := exec.Command("unshare", "--uts", "--mount", "--pid", "--fork", "sh", "-c",
		"hostname "+name+"; read pid rest < /proc/self/stat; echo $pid; exec sleep 1000000")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("the namespace tests need unshare (util-linux): %v; they do not skip", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, convErr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || convErr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("unshare could not make the namespaces (%q, %v); the test does not skip", line, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return pid
}

func TestExecInNamespacesOf(t *testing.T) {
	pid := startNamespaced(t, "go-inside")
	spec := prober.Exec("hostname")
	spec.NamespacesOf = pid
	o, err := prober.Check(context.Background(), spec)
	if err != nil || o.Result != prober.Success || string(o.Output) != "go-inside\n" {
		t.Fatalf("inside: %+v %v", o, err)
	}
	// The same spec in an engine, next to one on the host.
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	host, _ := os.Hostname()
	for _, c := range []struct {
		pid  int
		want string
	}{{pid, "go-inside\n"}, {0, host + "\n"}} {
		s := prober.Exec("hostname")
		s.NamespacesOf = c.pid
		o, err := e.Check(context.Background(), s)
		if err != nil || string(o.Output) != c.want {
			t.Fatalf("engine, NamespacesOf %d: %+v %v", c.pid, o, err)
		}
	}
}

func TestExecInNamespacesOfBadInput(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the namespace tests need root (CI runs them as root); they do not skip")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	spec := prober.Exec("true")
	spec.NamespacesOf = gone.Process.Pid
	o, err := prober.Check(context.Background(), spec)
	want := fmt.Sprintf("could not enter the namespaces of process %d: no such process", gone.Process.Pid)
	if err != nil || o.Result != prober.Unknown || o.Reason != prober.ReasonSpawn || o.Message != want {
		t.Fatalf("gone: %+v %v", o, err)
	}
	for _, bad := range []int{-1, 1<<22 + 1} {
		spec.NamespacesOf = bad
		if _, err := prober.Check(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "NamespacesOf") {
			t.Fatalf("NamespacesOf %d: %v", bad, err)
		}
	}
	tcp := prober.TCP("127.0.0.1", 1)
	tcp.NamespacesOf = 1
	if _, err := prober.Check(context.Background(), tcp); err == nil || !strings.Contains(err.Error(), "exec probes only") {
		t.Fatalf("tcp: %v", err)
	}
}
