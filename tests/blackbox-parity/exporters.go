package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// exporter is one running exporter process (blackbox_exporter or `prober serve`) with a module
// file, on a loopback port it chose itself.
type exporter struct {
	cmd  *exec.Cmd
	addr string
	// refused: the process ended before it listened (a module file it would not load); its
	// first line of complaint.
	refused string
	mu      sync.Mutex
	log     strings.Builder
	client  *http.Client // nil: http.DefaultClient
	done    chan struct{}
}

// The line each prints once it accepts connections, with the address it bound.
var listenLine = regexp.MustCompile(`(?:msg="Listening on" address=|listening on http://)(127\.0\.0\.1:[0-9]+)`)

// startExporter runs argv with env added and waits (at most 30 s) until it says where it
// listens, or until it exits.
func startExporter(argv []string, env []string) (*exporter, error) {
	e := &exporter{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	e.cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	e.cmd.Stdout, e.cmd.Stderr = pw, pw
	if err := e.cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			e.mu.Lock()
			if e.log.Len() < 64<<10 {
				e.log.WriteString(line + "\n")
			}
			e.mu.Unlock()
			if m := listenLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		e.cmd.Wait()
		pw.Close()
		<-scanned // all it printed is in the log before done says it ended
		close(e.done)
	}()
	select {
	case e.addr = <-found:
		return e, nil
	case <-e.done:
		e.refused = e.complaint()
		return e, nil
	case <-time.After(30 * time.Second):
		e.stop()
		return nil, fmt.Errorf("%s did not start within 30 s:\n%s", argv[0], e.output())
	}
}

func (e *exporter) output() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.String()
}

var timeField = regexp.MustCompile(`^time=\S+ level=\S+ source=\S+ `)

// complaint is the error line of a process that refused its module file, without the log
// line's time and source.
func (e *exporter) complaint() string {
	for _, line := range strings.Split(e.output(), "\n") {
		if strings.Contains(line, "level=ERROR") || strings.HasPrefix(line, "prober serve:") || strings.Contains(line, "rror") {
			return timeField.ReplaceAllString(strings.TrimSpace(line), "")
		}
	}
	return strings.TrimSpace(e.output())
}

func (e *exporter) stop() {
	if e.cmd.Process != nil {
		e.cmd.Process.Kill()
	}
	select {
	case <-e.done:
	case <-time.After(10 * time.Second):
	}
}

// sample is one scraped series: its labels and value.
type sample struct {
	labels map[string]string
	value  string
}

var seriesLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// get asks the exporter's /probe for module m and target, with extra parameters and request
// headers, and returns the answer's status and body.
func (e *exporter) get(target string, extra url.Values, header map[string]string) (int, string, error) {
	q := url.Values{"module": {"m"}, "target": {target}}
	for k, v := range extra {
		q[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+e.addr+"/probe?"+q.Encode(), nil)
	if err != nil {
		return 0, "", err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := http.DefaultClient
	if e.client != nil {
		client = e.client
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body), err
}

// probe asks the exporter's /probe for module m and target, and returns the series by name,
// or the HTTP answer when it is not 200.
func (e *exporter) probe(target string, extra url.Values, header map[string]string) (map[string][]sample, string, error) {
	status, body, err := e.get(target, extra, header)
	if err != nil {
		return nil, "", err
	}
	if status != 200 {
		return nil, fmt.Sprintf("HTTP %d %q", status, strings.TrimSpace(body)), nil
	}
	return parseMetrics(body)
}

// parseMetrics reads the text exposition format into series by name.
func parseMetrics(body string) (map[string][]sample, string, error) {
	out := map[string][]sample{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := seriesLine.FindStringSubmatch(line)
		if m == nil {
			return nil, "", errors.New("unparsable metrics line " + strconv.Quote(line))
		}
		s := sample{labels: map[string]string{}, value: m[3]}
		// One spelling per number: Go writes 1.796015772e+09 where Rust writes 1796015772.
		if f, err := strconv.ParseFloat(m[3], 64); err == nil {
			s.value = strconv.FormatFloat(f, 'f', -1, 64)
		}
		for _, lp := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.labels[lp[1]] = lp[2]
		}
		out[m[1]] = append(out[m[1]], s)
	}
	return out, "", nil
}

// describe renders what a case compares: "name=value" for a metric (absent when the exporter
// did not answer it), "name{label}=[v1 v2]" for the label values present.
func describe(series map[string][]sample, wanted []string) string {
	var parts []string
	for _, w := range wanted {
		name, label, hasLabel := strings.Cut(strings.TrimSuffix(w, "}"), "{")
		ss := series[name]
		if hasLabel {
			var vals []string
			for _, s := range ss {
				vals = append(vals, s.labels[label])
			}
			sort.Strings(vals)
			parts = append(parts, fmt.Sprintf("%s=%v", w, vals))
			continue
		}
		switch len(ss) {
		case 0:
			parts = append(parts, name+"=absent")
		case 1:
			parts = append(parts, name+"="+ss[0].value)
		default:
			var vals []string
			for _, s := range ss {
				vals = append(vals, s.value)
			}
			parts = append(parts, fmt.Sprintf("%s=%v", name, vals))
		}
	}
	return strings.Join(parts, " ")
}
