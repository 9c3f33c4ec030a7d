package prober_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// The prober-target server (crates/prober-testkit), started once for the whole test binary.
var (
	targetPort int
	targetPID  int
)

// targetBin is the prober-target binary: $PROBER_TARGET_BIN, or the workspace's debug build.
// A missing server fails the tests (it never skips them).
func targetBin() (string, error) {
	if p := os.Getenv("PROBER_TARGET_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("PROBER_TARGET_BIN=%s: %v", p, err)
		}
		return p, nil
	}
	p, err := filepath.Abs("../../../target/debug/prober-target")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("prober-target not found: set PROBER_TARGET_BIN or run "+
			"`cargo build -p prober-testkit --bin prober-target` (%v)", err)
	}
	return p, nil
}

func TestMain(m *testing.M) {
	bin, err := targetBin()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: starting prober-target:", err)
		os.Exit(1)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err == nil {
		targetPort, err = strconv.Atoi(strings.TrimSpace(line))
	}
	if err != nil || targetPort <= 0 {
		fmt.Fprintf(os.Stderr, "FAIL: prober-target printed %q: %v\n", line, err)
		_ = cmd.Process.Kill()
		os.Exit(1)
	}
	targetPID = cmd.Process.Pid
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	code := m.Run()
	// Debug builds keep a list of the engines not closed yet: a test that forgets Close fails
	// the run here.
	if open := prober.OpenEngines(); len(open) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d engines not closed; made by:\n%s", len(open), strings.Join(open, "\n"))
		code = 1
	}

	_ = stdin.Close() // the server exits when its stdin closes
	_ = cmd.Wait()
	os.Exit(code)
}

func targetURL(path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", targetPort, path) }

// control flips the server's health (/control/healthy, /control/unhealthy).
func control(t testing.TB, path string) {
	t.Helper()
	o, err := prober.CheckBlocking(prober.HTTP(targetURL(path)))
	if err != nil || o.Result != prober.Success {
		t.Fatalf("control %s: %+v %v", path, o, err)
	}
}

// children lists the processes whose parent is this test process, the server excepted, with
// their state letter (Z for a zombie).
func children(t testing.TB) map[int]string {
	t.Helper()
	me := os.Getpid()
	out := map[int]string{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == targetPID {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		rp := strings.LastIndexByte(s, ')')
		if rp < 0 || rp+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[rp+2:])
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			out[pid] = f[0] + " " + s[strings.IndexByte(s, '(')+1:rp]
		}
	}
	return out
}

// waitNoChildren fails unless every child (the server excepted) is gone within d.
func waitNoChildren(t testing.TB, d time.Duration) {
	t.Helper()
	limit := time.Now().Add(d)
	for {
		c := children(t)
		if len(c) == 0 {
			return
		}
		if time.Now().After(limit) {
			t.Fatalf("children left behind: %v", c)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func countFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// stableGoroutines is the goroutine count once it has stopped falling.
func stableGoroutines() int {
	last := runtime.NumGoroutine()
	for i := 0; i < 100; i++ {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n >= last {
			return n
		}
		last = n
	}
	return last
}

// inGroups lists the live processes (any parent) whose process group is one of groups.
// Zombies are dead: orphans among them wait for init (or a subreaper) to reap them.
func inGroups(t testing.TB, groups map[int]bool) []string {
	t.Helper()
	var out []string
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		rp := strings.LastIndexByte(s, ')')
		if rp < 0 || rp+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[rp+2:]) // state ppid pgrp ...
		if len(f) < 3 {
			continue
		}
		if pgrp, _ := strconv.Atoi(f[2]); groups[pgrp] && f[0] != "Z" && f[0] != "X" {
			out = append(out, e.Name()+" "+f[0]+" "+s[strings.IndexByte(s, '(')+1:rp])
		}
	}
	return out
}

// settle waits until f() <= want (retrying, with garbage collections), and returns the last
// value seen.
func settle(want int, d time.Duration, f func() int) int {
	limit := time.Now().Add(d)
	for {
		got := f()
		if got <= want || time.Now().After(limit) {
			return got
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// inFlight is e's Stats().InFlight (0 when Stats fails).
func inFlight(e *prober.Engine) int {
	st, _ := e.Stats()
	return st.InFlight
}
