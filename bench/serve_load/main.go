// serve_load: the /probe load of ci/bench.sh's serve_probe scenario. Several keep-alive
// clients send N /probe requests in all to an exporter (prober serve or blackbox_exporter)
// and check that every answer says probe_success 1; the figure is the exporter process's own
// CPU (user+sys from /proc/PID/stat, every thread, over the measured requests only) per
// request, so the load generator's CPU never counts.
//
//	serve_load -url 'http://127.0.0.1:9115/probe?module=http_2xx&target=...' -pid PID
//	           -n 20000 -conc 8 -warmup 500 -label serve_probe -impl prober [-rate R]
//
// Prints one line: BENCH scenario=LABEL impl=IMPL n=N rate_per_s=... cpu_us_per_probe=...
// cpu_millicores=... (CPU over the wall time) rss_kb=... (the exporter's VmHWM) p50_ms=...
// p99_ms=... (latency of a /probe). -rate R paces the requests at R a second in all (a
// steady load, for sizing resource requests) instead of as fast as the clients go.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

func main() {
	url := flag.String("url", "", "the /probe URL, with module and target")
	pid := flag.Int("pid", 0, "the exporter's process id")
	n := flag.Int("n", 20000, "requests measured")
	conc := flag.Int("conc", 8, "keep-alive clients")
	warmup := flag.Int("warmup", 500, "requests before measuring")
	label := flag.String("label", "serve_probe", "scenario name")
	impl := flag.String("impl", "prober", "implementation name")
	rate := flag.Float64("rate", 0, "requests a second in all (0: as fast as possible)")
	flag.Parse()
	if *url == "" || *pid == 0 {
		fmt.Fprintln(os.Stderr, "serve_load: -url and -pid are required")
		os.Exit(64)
	}
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: *conc,
		DisableCompression:  true,
	}}
	if err := run(client, *url, *warmup, *conc, 0, nil); err != nil {
		fmt.Fprintln(os.Stderr, "serve_load: warm-up:", err)
		os.Exit(1)
	}
	lat := make([]time.Duration, *n)
	cpu0, err := cpuTicks(*pid)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve_load:", err)
		os.Exit(1)
	}
	start := time.Now()
	if err := run(client, *url, *n, *conc, *rate, lat); err != nil {
		fmt.Fprintln(os.Stderr, "serve_load:", err)
		os.Exit(1)
	}
	wall := time.Since(start)
	cpu1, err := cpuTicks(*pid)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve_load:", err)
		os.Exit(1)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	cpuUs := float64(cpu1-cpu0) * 1e6 / clockTicks
	fmt.Printf("BENCH scenario=%s impl=%s n=%d conc=%d rate_per_s=%.1f cpu_us_per_probe=%.2f cpu_millicores=%.1f rss_kb=%d p50_ms=%.3f p99_ms=%.3f\n",
		*label, *impl, *n, *conc, float64(*n)/wall.Seconds(), cpuUs/float64(*n),
		cpuUs/1e3/wall.Seconds(), hwmKB(*pid),
		ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]))
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// run sends n requests over conc clients, at rate a second in all when rate > 0; lat (if not
// nil) receives each one's latency.
func run(client *http.Client, url string, n, conc int, rate float64, lat []time.Duration) error {
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	for c := 0; c < conc; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if rate > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * 1e9))))
				}
				t := time.Now()
				if err := probe(client, url); err != nil {
					errs <- err
					next.Store(int64(n)) // stop the others
					return
				}
				if lat != nil {
					lat[i] = time.Since(t)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func probe(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("\nprobe_success 1\n")) {
		return fmt.Errorf("GET %s: %s: %.300s", url, resp.Status, body)
	}
	return nil
}

// cpuTicks is utime+stime of process pid (all its threads, live and ended), in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: cannot parse %q", pid, b)
	}
	return u + s, nil
}

// hwmKB is the process's peak resident set size (VmHWM), 0 when unknown.
func hwmKB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}
