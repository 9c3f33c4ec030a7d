package prober_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// Spec.ExecCgroup (red-team finding 9): a process that leaves the command's process group
// with setsid outlives the run unless the run has a cgroup of its own. These tests need root
// and a cgroup v2 hierarchy (CI runs them as root); without them they fail rather than skip.

// testCgroup makes a cgroup v2 directory under this process's own cgroup for the runs'
// cgroups; it is removed when the test ends (once the runs' cgroups are gone).
func testCgroup(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the cgroup tests need root (CI runs them as root); they do not skip")
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mount := ""
	for _, line := range strings.Split(string(mountinfo), "\n") {
		if _, rest, ok := strings.Cut(line, " - "); ok && strings.HasPrefix(rest, "cgroup2 ") {
			mount = strings.Fields(line)[4]
			break
		}
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil || mount == "" {
		t.Fatalf("a cgroup v2 hierarchy is needed (mount %q, %v); the test does not skip", mount, err)
	}
	path := ""
	for _, line := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	dir := filepath.Join(mount, path, fmt.Sprintf("prober-go-test-%d", os.Getpid()))
	_ = os.Remove(dir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("cannot make cgroup %s: %v; the test does not skip", dir, err)
	}
	t.Cleanup(func() {
		for i := 0; i < 500 && os.Remove(dir) != nil; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	})
	return dir
}

// alive: a process that exists and is not a zombie (the container's init may not reap).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

func TestExecCgroupKillsWhatLeftTheGroup(t *testing.T) {
	dir := testCgroup(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	// The escaped process writes its pid and becomes sleep; the command waits until it runs
	// sleep (bounded), then exits 0. $$ is written $$$$ (the kubelet's $(VAR) expansion).
	script := `setsid sh -c 'echo $$$$ > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE"; exec sleep 1000' &
i=0; until grep -qs sleep "/proc/` + "`cat \"$PIDFILE\" 2>/dev/null`" + `/cmdline" || [ $i -ge 1000 ]; do sleep 0.01; i=$((i+1)); done; echo done`
	spec := prober.Exec("sh", "-c", script)
	spec.Env = []prober.EnvVar{{Name: "PIDFILE", Value: pidfile}}
	spec.ExecCgroup = dir
	spec.Timeout = 10 * time.Second
	o, err := prober.Check(context.Background(), spec)
	if err != nil || o.Result != prober.Success || string(o.Output) != "done\n" {
		t.Fatalf("%+v %v", o, err)
	}
	text, err := os.ReadFile(pidfile)
	pid, convErr := strconv.Atoi(strings.TrimSpace(string(text)))
	if err != nil || convErr != nil {
		t.Fatalf("the escaped process wrote no pid: %q %v", text, err)
	}
	// Bounded by the probe's timeout.
	for end := time.Now().Add(spec.Timeout); alive(pid) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatalf("setsid process %d outlived the run", pid)
	}
}

func TestExecCgroupBadInput(t *testing.T) {
	notCgroup := t.TempDir()
	marker := filepath.Join(notCgroup, "ran")
	spec := prober.Exec("touch", marker)
	spec.ExecCgroup = notCgroup
	o, err := prober.Check(context.Background(), spec)
	if err != nil || o.Result != prober.Unknown || o.Reason != prober.ReasonSpawn ||
		!strings.HasPrefix(o.Message, "could not create a cgroup for the command in "+notCgroup+": ") {
		t.Fatalf("not a cgroup: %+v %v", o, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran uncontained")
	}
	spec.ExecCgroup = "relative/dir"
	if _, err := prober.Check(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "invalid cgroup directory") {
		t.Fatalf("relative: %v", err)
	}
	tcp := prober.TCP("127.0.0.1", 1)
	tcp.ExecCgroup = "/sys/fs/cgroup"
	if _, err := prober.Check(context.Background(), tcp); err == nil || !strings.Contains(err.Error(), "exec probes only") {
		t.Fatalf("tcp: %v", err)
	}
}
