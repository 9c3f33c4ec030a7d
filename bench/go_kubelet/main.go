// go_kubelet: the Go baseline of ci/bench.sh, doing what the kubelet's prober does.
//
//	go_kubelet SCENARIO [-target HOST:PORT] [-path /] [-n N] [-conc N] [-targets N]
//	           [-period 1s] [-duration 30s] [-argv /bin/true] [-label NAME] [-impl NAME]
//
// The probes are the kubelet's own code paths (k8s.io/kubernetes/pkg/probe), rewritten with
// the standard library only:
//
//   - TCP (probe/tcp): a net.Dialer whose Control sets SO_LINGER {on, 1 s} (probe.ProbeDialer),
//     Dial with the probe's timeout, then Close.
//   - HTTP (probe/http): one shared http.Transport with DisableKeepAlives, no proxy,
//     DisableCompression and the same dialer; per probe a new request (User-Agent
//     kube-probe/1.37, Accept */*), an http.Client with the timeout, client.Do, then at most
//     10 KiB of the body read (utilio.ReadAtMost) and Body.Close.
//   - exec: os/exec with stdout and stderr into one bounded buffer (10 KiB kept) and the
//     probe's timeout as a context.
//
// Not the kubelet, for the keep-alive scenarios (http_keepalive, https_keepalive; printed as
// impl=go_net_http unless -impl says otherwise): a plain net/http client with keep-alive, as a
// Go program probing its own services would write it: one shared http.Transport (no proxy, no
// compression, MaxIdleConns and MaxIdleConnsPerHost = CONC so that every goroutine keeps its
// connection; over TLS InsecureSkipVerify) and one http.Client with the timeout; per probe a
// request with the same headers, client.Do, the whole body read (a body read to EOF and closed
// returns its connection for reuse) and Body.Close.
//
// One-shot scenarios run CONC goroutines taking probes from a shared counter. Periodic
// scenarios run one goroutine and one time.Ticker per worker, as the kubelet's probe workers
// do, after a random sleep in [0, period) (the kubelet's start-up jitter); lateness is how long
// after the tick's scheduled time the probe started.
//
// Prints one BENCH line with the same fields as prober-bench (CPU from getrusage RUSAGE_SELF
// around the measured part; rss_kb is ru_maxrss).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const maxRespBodyLength = 10 * 1 << 10

var (
	target   = flag.String("target", "", "HOST:PORT")
	path     = flag.String("path", "/", "HTTP path")
	nFlag    = flag.Int("n", 0, "probes (one-shot)")
	concFlag = flag.Int("conc", 0, "in flight (one-shot)")
	targets  = flag.Int("targets", 0, "workers (periodic)")
	period   = flag.Duration("period", 0, "period (periodic)")
	duration = flag.Duration("duration", 0, "measured time (periodic)")
	argv     = flag.String("argv", "/bin/true", "exec argv, comma-separated")
	label    = flag.String("label", "", "scenario name printed")
	implName = flag.String("impl", "", "impl name printed (default go_kubelet; go_net_http for the keep-alive scenarios)")
	timeout  = flag.Duration("timeout", time.Second, "probe timeout")
)

// probeDialer is the kubelet's probe.ProbeDialer: SO_LINGER {1, 1}.
func probeDialer() *net.Dialer {
	return &net.Dialer{
		Control: func(network, address string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) {
				_ = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
			})
		},
	}
}

// tcpProbe is probe/tcp.DoTCPProbe.
func tcpProbe(addr string) error {
	d := probeDialer()
	d.Timeout = *timeout
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

type httpProber struct{ transport *http.Transport }

func newHTTPProber() httpProber {
	return httpProber{&http.Transport{
		DisableKeepAlives:   true,
		Proxy:               http.ProxyURL(nil),
		DisableCompression:  true,
		DialContext:         probeDialer().DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// probe is probe/http: NewRequestForHTTPGetAction, httpProber.Probe and DoHTTPProbe.
func (pr httpProber) probe(url string) error {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	req.Header.Set("Accept", "*/*")
	client := &http.Client{Timeout: *timeout, Transport: pr.transport}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := readAtMost(res.Body, maxRespBodyLength)
	if err != nil && !errors.Is(err, errLimit) {
		return err
	}
	_ = string(b)
	if res.StatusCode >= 200 && res.StatusCode < 400 {
		return nil
	}
	return fmt.Errorf("HTTP probe failed with statuscode: %d", res.StatusCode)
}

type keepAliveProber struct{ client *http.Client }

// newKeepAliveProber is a net/http client that keeps conc connections alive and reuses them.
func newKeepAliveProber(conc int, tlsConfig *tls.Config) keepAliveProber {
	transport := &http.Transport{
		Proxy:               http.ProxyURL(nil),
		DisableCompression:  true,
		MaxIdleConns:        conc,
		MaxIdleConnsPerHost: conc,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
	}
	return keepAliveProber{&http.Client{Timeout: *timeout, Transport: transport}}
}

func (pr keepAliveProber) probe(url string) error {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	req.Header.Set("Accept", "*/*")
	res, err := pr.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode >= 200 && res.StatusCode < 400 {
		return nil
	}
	return fmt.Errorf("HTTP probe failed with statuscode: %d", res.StatusCode)
}

var errLimit = errors.New("the read limit is reached")

// readAtMost is k8s.io/utils/io.ReadAtMost.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	limitedReader := &io.LimitedReader{R: r, N: limit}
	data, err := io.ReadAll(limitedReader)
	if err != nil {
		return data, err
	}
	if limitedReader.N <= 0 {
		return data, errLimit
	}
	return data, nil
}

// boundedBuffer keeps the first max bytes written and counts the rest.
type boundedBuffer struct {
	mu    sync.Mutex
	buf   []byte
	max   int
	total int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += len(p)
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func execProbe(args []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	out := &boundedBuffer{max: maxRespBodyLength}
	cmd.Stdout = out
	cmd.Stderr = out
	return cmd.Run()
}

type usage struct {
	wall        time.Time
	user, sys   int64
	childrenCPU int64
}

func tvUs(tv syscall.Timeval) int64 { return tv.Sec*1_000_000 + tv.Usec }

func now() usage {
	var ru, rc syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &rc)
	return usage{time.Now(), tvUs(ru.Utime), tvUs(ru.Stime), tvUs(rc.Utime) + tvUs(rc.Stime)}
}

func maxRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss
}

// runqWaitNs is the time the threads of this process spent runnable but waiting for a CPU
// (the sum of the second field of /proc/self/task/*/schedstat).
func runqWaitNs() int64 {
	tasks, _ := os.ReadDir("/proc/self/task")
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			sum += v
		}
	}
	return sum
}

func involuntarySwitches() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Nivcsw
}

func currentRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

type line struct{ b strings.Builder }

func newLine(scenario string) *line {
	l := &line{}
	impl := *implName
	if impl == "" {
		impl = "go_kubelet"
	}
	fmt.Fprintf(&l.b, "BENCH scenario=%s impl=%s", scenario, impl)
	return l
}

func (l *line) kv(k string, v any) *line { fmt.Fprintf(&l.b, " %s=%v", k, v); return l }
func (l *line) f(k string, v float64, d int) *line {
	fmt.Fprintf(&l.b, " %s=%.*f", k, d, v)
	return l
}

func (l *line) common(n, ok int64, a, b usage) *line {
	wall := b.wall.Sub(a.wall).Seconds()
	user, sys := float64(b.user-a.user), float64(b.sys-a.sys)
	per := func(x float64) float64 {
		if n == 0 {
			return 0
		}
		return x / float64(n)
	}
	l.kv("n", n).kv("ok", ok).kv("fail", n-ok)
	l.f("wall_s", wall, 3).f("rate_per_s", float64(n)/wall, 1)
	l.f("cpu_us_per_probe", per(user+sys), 2).f("user_us_per_probe", per(user), 2).f("sys_us_per_probe", per(sys), 2)
	l.f("cpu_pct", (user+sys)/1e4/wall, 1)
	return l.kv("rss_kb", maxRSS())
}

func percentileMs(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100 + 0.999999999)
	rank = max(1, min(rank, len(sorted)))
	return float64(sorted[rank-1]) / 1000
}

func (l *line) lateness(sorted []int64) *line {
	l.f("lateness_p50_ms", percentileMs(sorted, 50), 3)
	l.f("lateness_p99_ms", percentileMs(sorted, 99), 3)
	var m int64
	if len(sorted) > 0 {
		m = sorted[len(sorted)-1]
	}
	return l.f("lateness_max_ms", float64(m)/1000, 3)
}

func (l *line) print() { fmt.Println(l.b.String()) }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go_kubelet: "+format+"\n", args...)
	os.Exit(1)
}

func intOr(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

func durOr(v, d time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return d
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: go_kubelet {tcp_oneshot|http_oneshot|https_oneshot|http_keepalive|https_keepalive|exec_oneshot|sched_10k|sched_100k_idle} [flags]")
	}
	scenario := os.Args[1]
	if err := flag.CommandLine.Parse(os.Args[2:]); err != nil {
		os.Exit(64)
	}
	name := *label
	if name == "" {
		name = scenario
	}
	needTarget := func() string {
		if *target == "" {
			fail("-target HOST:PORT is required")
		}
		return *target
	}
	switch scenario {
	case "tcp_oneshot":
		addr := needTarget()
		oneshot(name, intOr(*nFlag, 40000), intOr(*concFlag, 64), func() error { return tcpProbe(addr) })
	case "http_oneshot":
		pr := newHTTPProber()
		url := "http://" + needTarget() + *path
		oneshot(name, intOr(*nFlag, 40000), intOr(*concFlag, 64), func() error { return pr.probe(url) })
	case "https_oneshot":
		// As the kubelet's HTTPS probe: InsecureSkipVerify, keep-alives off, no session cache,
		// so every probe makes a new connection and a full handshake.
		pr := newHTTPProber()
		pr.transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		url := "https://" + needTarget() + *path
		oneshot(name, intOr(*nFlag, 40000), intOr(*concFlag, 64), func() error { return pr.probe(url) })
	case "http_keepalive", "https_keepalive":
		if *implName == "" {
			*implName = "go_net_http"
		}
		conc := intOr(*concFlag, 64)
		scheme, tlsConfig := "http", (*tls.Config)(nil)
		if scenario == "https_keepalive" {
			scheme, tlsConfig = "https", &tls.Config{InsecureSkipVerify: true}
		}
		pr := newKeepAliveProber(conc, tlsConfig)
		url := scheme + "://" + needTarget() + *path
		oneshot(name, intOr(*nFlag, 40000), conc, func() error { return pr.probe(url) })
	case "exec_oneshot":
		args := strings.Split(*argv, ",")
		oneshot(name, intOr(*nFlag, 3000), intOr(*concFlag, 16), func() error { return execProbe(args) })
	case "sched_10k":
		sched(name, needTarget(), intOr(*targets, 10000), durOr(*period, time.Second), durOr(*duration, 30*time.Second), false)
	case "sched_100k_idle":
		sched(name, needTarget(), intOr(*targets, 100000), durOr(*period, 60*time.Second), durOr(*duration, 10*time.Second), true)
	default:
		fail("unknown scenario %s", scenario)
	}
}

func oneshot(name string, n, conc int, probe func() error) {
	var next, ok atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	a := now()
	for range min(conc, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := probe(); err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	b := now()
	if e := firstErr.Load(); e != nil {
		fmt.Fprintf(os.Stderr, "go_kubelet: %d of %d probes failed; first: %s\n", int64(n)-ok.Load(), n, e)
	}
	l := newLine(name).common(int64(n), ok.Load(), a, b).kv("conc", conc)
	if name == "exec_oneshot" || strings.HasPrefix(name, "exec") {
		l.f("child_cpu_us_per_probe", float64(b.childrenCPU-a.childrenCPU)/float64(n), 2)
	}
	l.print()
}

type workerStats struct {
	late []int64 // µs
	ok   int64
}

func sched(name, addr string, targets int, period, duration time.Duration, idle bool) {
	var stop atomic.Bool
	stopCh := make(chan struct{})
	results := make([]workerStats, targets)
	var ready, done sync.WaitGroup
	var firstErr atomic.Value
	rssBefore := currentRSS()
	added := time.Now()
	for i := range targets {
		ready.Add(1)
		done.Add(1)
		go func(st *workerStats) {
			defer done.Done()
			jitter := time.Duration(rand.Int64N(int64(period)))
			due := time.Now().Add(jitter)
			ready.Done()
			run := func(scheduled time.Time) {
				if stop.Load() {
					return
				}
				st.late = append(st.late, time.Since(scheduled).Microseconds())
				if err := tcpProbe(addr); err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
				} else {
					st.ok++
				}
			}
			// The kubelet's worker: a random sleep after a restart, then probe, then tick.
			select {
			case <-time.After(time.Until(due)):
			case <-stopCh:
				return
			}
			run(due)
			ticker := time.NewTicker(period)
			defer ticker.Stop()
			for {
				select {
				case t := <-ticker.C:
					run(t)
				case <-stopCh:
					return
				}
			}
		}(&results[i])
	}
	ready.Wait()
	addS := time.Since(added).Seconds()
	rssAdded := currentRSS()
	runq0, invol0 := runqWaitNs(), involuntarySwitches()
	a := now()
	time.Sleep(time.Until(a.wall.Add(duration)))
	stop.Store(true)
	b := now()
	runqMs := float64(runqWaitNs()-runq0) / 1e6
	invol := involuntarySwitches() - invol0
	rssEnd := currentRSS()
	close(stopCh)
	done.Wait()
	var late []int64
	var ok int64
	for i := range results {
		late = append(late, results[i].late...)
		ok += results[i].ok
	}
	slices.Sort(late)
	if e := firstErr.Load(); e != nil {
		fmt.Fprintf(os.Stderr, "go_kubelet: %d of %d runs failed; first: %s\n", int64(len(late))-ok, len(late), e)
	}
	l := newLine(name).common(int64(len(late)), ok, a, b).lateness(late)
	l.f("runq_wait_ms", runqMs, 1).kv("invol_cs", invol)
	l.kv("targets", targets).kv("period_ms", period.Milliseconds()).f("add_s", addS, 3)
	l.kv("rss_per_target_b", (rssAdded-rssBefore)/int64(targets))
	if idle {
		l.kv("rss_per_target_end_b", (rssEnd-rssBefore)/int64(targets))
	}
	l.print()
}
