package parity

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	kindHTTP = "http"
	kindTCP  = "tcp"
	kindGRPC = "grpc"
	kindExec = "exec"
)

// target is one probe, described the way a Pod spec describes it.
type target struct {
	kind    string
	timeout time.Duration
	// http, tcp, grpc
	scheme  string // http: "http" or "https"
	host    string
	port    int
	path    string      // http: httpGet.path, verbatim
	headers [][2]string // http: httpGet.httpHeaders
	service string      // grpc
	// exec
	argv []string
	env  []string // NAME=VALUE
	// cliTarget replaces the target given to `prober check` (default: the URL the kubelet's
	// request builder makes from scheme, host, port and path).
	cliTarget string
	cliArgs   []string // extra options for `prober check`
	// verifyTLS: the case is about certificate verification; the oracle uses this config.
	verifyTLS *tls.Config
	// watch: libprober runs the probe from a watch file (`prober watch`), as a readiness
	// probe; both sides are compared on readiness and on the request target the server saw
	// first (seen).
	watch bool
	seen  func() string
	// h2c: httpGet.protocol: HTTP2 (KEP-5999): the kubelet's ProbeH2C, and
	// `prober check --http2-prior-knowledge`.
	h2c bool
}

func (tg *target) envMap() map[string]string {
	m := map[string]string{}
	for _, kv := range tg.env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// formatURL is the URL the kubelet's request builder makes (pkg/probe/http formatURL), taken
// from its request so that both sides probe the same thing.
func (tg *target) kubeletURL() string {
	u, err := url.Parse(tg.path)
	if err != nil {
		u = &url.URL{Path: tg.path}
	}
	u.Scheme = tg.scheme
	u.Host = net.JoinHostPort(tg.host, strconv.Itoa(tg.port))
	return u.String()
}

type tcase struct {
	name  string
	setup func(t *testing.T) *target
}

var cases []tcase

func add(name string, setup func(t *testing.T) *target) {
	cases = append(cases, tcase{name, setup})
}

// proberBin is the `prober` command under test (PROBER_BIN, else the workspace's debug build).
func proberBin(t *testing.T) string {
	if p := os.Getenv("PROBER_BIN"); p != "" {
		return p
	}
	p := "../../target/debug/prober"
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("prober binary not found at %s (build it with `cargo build -p prober-cli` or set PROBER_BIN): %v", p, err)
	}
	return p
}

type cliOutcome struct {
	Result  string `json:"result"`
	Message string `json:"message"`
	Output  string `json:"output"`
	Reason  string `json:"reason"`
}

// runProber probes tg with `prober check --json` and says what the kubelet would show for that
// outcome: the message for a failure, a warning or an unknown; the output (the HTTP body, the
// command's output, gRPC's "service healthy") for a success; and for a command that exited
// non-zero its output, which is what the kubelet's exec probe reports.
func runProber(t *testing.T, bin string, tg *target) verdict {
	args := []string{"check", "--json", "--timeout", tg.timeout.String()}
	args = append(args, tg.cliArgs...)
	if tg.h2c {
		args = append(args, "--http2-prior-knowledge")
	}
	for _, h := range tg.headers {
		args = append(args, "-H", h[0]+": "+h[1])
	}
	for _, kv := range tg.env {
		args = append(args, "--env", kv)
	}
	switch tg.kind {
	case kindHTTP:
		tgt := tg.cliTarget
		if tgt == "" {
			tgt = tg.kubeletURL()
		}
		args = append(args, tgt)
	case kindTCP:
		args = append(args, "tcp://"+net.JoinHostPort(tg.host, strconv.Itoa(tg.port)))
	case kindGRPC:
		args = append(args, "grpc://"+net.JoinHostPort(tg.host, strconv.Itoa(tg.port))+"/"+tg.service)
	case kindExec:
		args = append(args, "--")
		args = append(args, tg.argv...)
	}
	// Bounded: the probe's own deadline plus a generous margin.
	ctx, cancel := context.WithTimeout(context.Background(), tg.timeout+20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running prober: %v", err)
	}
	code := cmd.ProcessState.ExitCode()
	if code == 64 || code == 70 {
		return verdict{"usage", strings.TrimSpace(stderr.String())}
	}
	var o cliOutcome
	if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
		t.Fatalf("prober %q: exit %d, bad JSON %q (stderr %q): %v", args, code, stdout.String(), stderr.String(), err)
	}
	text := o.Message
	switch {
	case o.Result == "success":
		text = o.Output
	case tg.kind == kindExec && (o.Reason == "exit_code" || o.Reason == "signal"):
		text = o.Output
	}
	return verdict{o.Result, text}
}

var portRE = regexp.MustCompile(`([0-9a-zA-Z.\]]):[0-9]{1,6}\b`)

// goTimeoutRace: Go's transport reports one and the same client timeout while awaiting
// headers either way, depending on which of its goroutines sees the deadline first.
// A TLS handshake that never ends gives a third and a fourth spelling: the bare context error,
// or "request canceled while waiting for connection".
var goTimeoutRace = strings.NewReplacer(
	"net/http: request canceled (Client.Timeout exceeded while awaiting headers)",
	"context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
	"net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)",
	"context deadline exceeded (Client.Timeout exceeded while awaiting headers)")

var bareDeadline = regexp.MustCompile(`: context deadline exceeded$`)

// normalise replaces port numbers (ephemeral on both sides) so that messages compare, and
// folds Go's racy spellings of one timeout into one.
func normalise(s string) string {
	s = goTimeoutRace.Replace(portRE.ReplaceAllString(s, "$1:PORT"))
	// protobuf-go puts a space or, at random, a no-break space after "proto:" in its errors,
	// so that nobody matches them as text (google.golang.org/protobuf/internal/errors).
	s = strings.ReplaceAll(s, "proto:\u00a0", "proto: ")
	// Go's HTTP/2 client, given an HTTP/1 answer to its preface (h2c against an HTTP/1.1-only
	// server), reports the framer's error or, when its connection setup loses the race, only
	// that the connection could not be established.
	s = strings.ReplaceAll(s, "http2: client conn could not be established",
		"http2: failed reading the frame payload: http2: frame too large, note that the frame header looked like an HTTP/1.1 header")
	return bareDeadline.ReplaceAllString(s, ": context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
}

type knownDiff struct {
	name, reason string
	line         int
}

func readKnown(t *testing.T) map[string]knownDiff {
	f, err := os.Open("known-differences.txt")
	if err != nil {
		t.Fatalf("reading known-differences.txt: %v", err)
	}
	defer f.Close()
	known := map[string]knownDiff{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		if reason == "" {
			t.Errorf("known-differences.txt:%d: %q has no reason", n, name)
		}
		if _, dup := known[name]; dup {
			t.Errorf("known-differences.txt:%d: %q listed twice", n, name)
		}
		known[name] = knownDiff{name, reason, n}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return known
}

func TestParity(t *testing.T) {
	if v, ok := kubeletVersionOK(); !ok {
		t.Fatalf("the kubelet's code reports version %q, not 1.%s: build as ci/parity.sh does (-ldflags -X k8s.io/component-base/version.gitMajor=1 -X ...gitMinor=%s)", v, kubeletMinor, kubeletMinor)
	}
	bin := proberBin(t)
	known := readKnown(t)
	names := map[string]bool{}
	var same, listed, unlisted, stale int
	for _, c := range cases {
		if names[c.name] {
			t.Fatalf("case %q defined twice", c.name)
		}
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			tg := c.setup(t)
			k := kubeletVerdict2(tg)
			var p verdict
			if tg.watch {
				k = verdict{readiness(k.class), "request target " + tg.seen()}
				p = runWatch(t, bin, tg)
				p.text = strings.TrimSpace(p.text + " request target " + tg.seen())
			} else {
				p = runProber(t, bin, tg)
			}
			k.text, p.text = normalise(k.text), normalise(p.text)
			kd, isKnown := known[c.name]
			differs := k != p
			switch {
			case differs && isKnown:
				listed++
				t.Logf("known difference (%s)\n kubelet:  %s %q\n libprober: %s %q", kd.reason, k.class, k.text, p.class, p.text)
			case differs:
				unlisted++
				t.Errorf("differs from the kubelet (not in known-differences.txt)\n kubelet:  %s %q\n libprober: %s %q", k.class, k.text, p.class, p.text)
			case isKnown:
				stale++
				t.Errorf("listed in known-differences.txt:%d (%s) but agrees with the kubelet now: %s %q; remove the line", kd.line, kd.reason, k.class, k.text)
			default:
				same++
				t.Logf("agrees: %s %q", k.class, k.text)
			}
		})
	}
	var extra []string
	for n := range known {
		if !names[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	for _, n := range extra {
		t.Errorf("known-differences.txt:%d names %q, which is not a case", known[n].line, n)
	}
	if len(cases) < 150 {
		t.Errorf("only %d cases; the harness must keep at least 150", len(cases))
	}
	fmt.Printf("parity: %d cases: %d agree, %d listed differences, %d unlisted differences, %d stale list entries\n",
		len(cases), same, listed, unlisted, stale)
}

// kubeletVerdict2 runs the kubelet's probe within a bound, so that a hung oracle fails the case
// instead of the whole run.
func kubeletVerdict2(tg *target) verdict {
	ch := make(chan verdict, 1)
	go func() { ch <- runKubelet(tg) }()
	select {
	case v := <-ch:
		return v
	case <-time.After(tg.timeout + 20*time.Second):
		return verdict{"harness", "the kubelet's probe did not return"}
	}
}

// readiness is what a readiness probe publishes for a kubelet result: Success and Warning make
// the target ready; a Failure, or an error after the kubelet's retries, do not.
func readiness(class string) string {
	if class == "success" || class == "warning" {
		return "ready"
	}
	return "not-ready"
}

// runWatch runs tg as the readiness probe of a watch file (JSON) with `prober watch
// --until-ready`: ready when it exits 0; not ready when --for ends first (exit 1).
func runWatch(t *testing.T, bin string, tg *target) verdict {
	get := map[string]any{"host": tg.host, "port": tg.port, "path": tg.path}
	if tg.scheme == "https" {
		get["scheme"] = "HTTPS"
	}
	var hs []map[string]string
	for _, h := range tg.headers {
		hs = append(hs, map[string]string{"name": h[0], "value": h[1]})
	}
	if hs != nil {
		get["httpHeaders"] = hs
	}
	file := map[string]any{"targets": []any{map[string]any{
		"name": "parity",
		"readinessProbe": map[string]any{
			"httpGet":             get,
			"timeoutMilliseconds": tg.timeout.Milliseconds(),
			"periodMilliseconds":  200,
			"failureThreshold":    1,
		},
	}}}
	b, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/watch.json"
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "watch", "--until-ready", "--for", "2s", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running prober watch: %v", err)
	}
	switch code := cmd.ProcessState.ExitCode(); code {
	case 0:
		return verdict{"ready", ""}
	case 1:
		return verdict{"not-ready", ""}
	default:
		return verdict{"usage", strings.TrimSpace(stderr.String())}
	}
}
