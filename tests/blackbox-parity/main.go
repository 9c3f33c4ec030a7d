// Command blackbox-parity runs blackbox_exporter's own unit-test cases (prober/*_test.go of
// the version ci/go-tools.sh builds) against a real blackbox_exporter and a real `prober
// serve`, each given the case's module file, probing the case's loopback servers through
// /probe, and compares what the upstream test asserts: probe_success, the metrics it checks,
// what its server saw. See README.md.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// tcase is one row of an upstream test table.
type tcase struct {
	name string // FILE/TestName/row
	// module is the module's YAML (prober, timeout, http: ...), {{DIR}} standing for the
	// case's scratch directory and {{NAME}} for what setup set (caseEnv.set).
	module string
	files  map[string]string // written into the scratch directory first
	// setup starts the case's servers (stopped with env.close) and returns the target.
	setup   func(env *caseEnv) string
	metrics []string   // compared besides probe_success
	params  url.Values // extra /probe parameters
	env     []string   // the exporters' environment (HTTP_PROXY=...)
	// configFile: a config test. This file of the upstream module is the module file as it
	// is, and what is compared is whether each exporter loads it (setup is nil).
	configFile string
	// header: request headers of the /probe request (X-Prometheus-Scrape-Timeout-Seconds).
	header map[string]string
	// inspect, when set, makes the answer what it says of the /probe answer's status and body
	// (for the handler cases, which look at the debug page or the status).
	inspect func(status int, body string) string
	// notes: how many notes a server makes per probe after the exporter may have answered
	// (a TCP server reading the probe's last line): waited for, at most 5 s, before the
	// comparison, so that a note never lands in the next exporter's run.
	notes int
	// netns: the case runs in a network namespace the harness makes (env.netns, which setup
	// may wire further), both exporters in it.
	netns bool
}

// caseEnv is what a case's servers share with the runner.
type caseEnv struct {
	dir     string
	closers []func()
	mu      sync.Mutex
	seen    []string // what the servers noted, per exporter run
	noted   bool     // the case compares seen
	netns   string   // the namespace the exporters run in (tcase.netns), else ""
	wrap    []string // a command the exporters run under in it (setpriv ...), set by setup
	// vars: what setup learnt that the module names (a server's URL), as {{NAME}} in it.
	vars map[string]string
}

func (e *caseEnv) onClose(f func()) { e.closers = append(e.closers, f) }

// set makes {{name}} in the case's module stand for value (setup runs before the module file
// is written).
func (e *caseEnv) set(name, value string) {
	if e.vars == nil {
		e.vars = map[string]string{}
	}
	e.vars[name] = value
}

// note records what a server saw (a header, a body, a path); the case then compares it.
func (e *caseEnv) note(format string, a ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.noted = true
	e.seen = append(e.seen, fmt.Sprintf(format, a...))
}

// waitNotes waits until n notes were made in this run, or until the deadline.
func (e *caseEnv) waitNotes(n int, within time.Duration) {
	end := time.Now().Add(within)
	for time.Now().Before(end) {
		e.mu.Lock()
		got := len(e.seen)
		e.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *caseEnv) takeSeen() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := strings.Join(e.seen, "; ")
	e.seen = nil
	return s
}

var cases []tcase

func add(c tcase) { cases = append(cases, c) }

// known is one line of known-differences.txt: CASE ID [comment]; ID is a row of the table in
// docs/cli.md.
type known struct {
	id   string
	line int
}

func readKnown(path string) (map[string]known, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]known{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return nil, fmt.Errorf("%s:%d: %q has no reason id", path, n, line)
		}
		if _, dup := out[fields[0]]; dup {
			return nil, fmt.Errorf("%s:%d: %q listed twice", path, n, fields[0])
		}
		out[fields[0]] = known{fields[1], n}
	}
	return out, sc.Err()
}

// The rows of docs/cli.md's table of differences from blackbox_exporter: "| B3 | ...".
var docRow = regexp.MustCompile(`^\| (B[0-9]+) \|`)

func readDocIDs(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := docRow.FindStringSubmatch(line); m != nil {
			ids[m[1]] = true
		}
	}
	return ids, nil
}

func main() {
	blackbox := flag.String("blackbox", "", "blackbox_exporter binary")
	prober := flag.String("prober", "", "prober binary")
	listPath := flag.String("list", "known-differences.txt", "the listed differences")
	docPath := flag.String("doc", "../../docs/cli.md", "the documentation whose table the list points to")
	flag.StringVar(&upstreamDir, "upstream", "", "blackbox_exporter's module directory (its config/testdata, for the config cases)")
	only := flag.String("run", "", "only the cases whose name matches this regular expression")
	show := flag.Bool("show", false, "print the answer both gave for the cases that agree")
	flag.Parse()
	if *blackbox == "" || *prober == "" {
		fmt.Fprintln(os.Stderr, "usage: blackbox-parity -blackbox BIN -prober BIN")
		os.Exit(2)
	}
	listed, err := readKnown(*listPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	docIDs, err := readDocIDs(*docPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	problems := 0
	names := map[string]bool{}
	used := map[string]bool{}
	for _, c := range cases {
		if names[c.name] || strings.ContainsAny(c.name, " \t") {
			fmt.Printf("harness: case name %q is repeated or has a space\n", c.name)
			problems++
		}
		names[c.name] = true
	}
	var ids []string
	for name, k := range listed {
		if !names[name] {
			fmt.Printf("harness: %s:%d names %q, which is not a case\n", *listPath, k.line, name)
			problems++
		}
		if !docIDs[k.id] {
			fmt.Printf("harness: %s:%d points to %s, which is not a row of the table in %s\n", *listPath, k.line, k.id, *docPath)
			problems++
		}
		used[k.id] = true
	}
	for id := range docIDs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !used[id] {
			fmt.Printf("harness: %s row %s is not pointed to by any line of %s\n", *docPath, id, *listPath)
			problems++
		}
	}
	var filter *regexp.Regexp
	if *only != "" {
		filter = regexp.MustCompile(*only)
	}
	perFile := map[string][2]int{}
	var passed, failed int
	for _, c := range cases {
		if filter != nil && !filter.MatchString(c.name) {
			continue
		}
		bb, pr, err := runCase(c, *blackbox, *prober)
		same := comparable(bb) == comparable(pr)
		file, _, _ := strings.Cut(c.name, "/")
		counts := perFile[file]
		k, isListed := listed[c.name]
		switch {
		case err != nil:
			fmt.Printf("differ %s: harness error: %v\n", c.name, err)
			failed++
			counts[1]++
		case same && isListed:
			fmt.Printf("agree %s (listed: remove from the list)\n", c.name)
			passed++
			counts[0]++
		case same && *show:
			fmt.Printf("agree %s: %s\n", c.name, bb)
			passed++
			counts[0]++
		case same:
			fmt.Printf("agree %s\n", c.name)
			passed++
			counts[0]++
		case isListed:
			fmt.Printf("differ %s (listed %s): blackbox=%s prober=%s\n", c.name, k.id, bb, pr)
			passed++
			counts[1]++
		default:
			fmt.Printf("differ %s: blackbox=%s prober=%s\n", c.name, bb, pr)
			failed++
			counts[1]++
		}
		perFile[file] = counts
	}
	var files []string
	for f := range perFile {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		fmt.Printf("file %s: %d agree, %d differ\n", f, perFile[f][0], perFile[f][1])
	}
	failed += problems
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

// runCase starts the case's servers, writes its module file, and probes through each
// exporter in turn; it returns what each answered.
func runCase(c tcase, blackbox, prober string) (string, string, error) {
	dir, err := os.MkdirTemp("", "blackbox-parity-")
	if err != nil {
		return "", "", err
	}
	env := &caseEnv{dir: dir}
	defer func() {
		for i := len(env.closers) - 1; i >= 0; i-- {
			env.closers[i]()
		}
		os.RemoveAll(dir)
	}()
	for name, text := range c.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, "{{DIR}}", dir)), 0o600); err != nil {
			return "", "", err
		}
	}
	target := ""
	if c.netns {
		env.netns = makeNetns(env, "case")
	}
	if c.setup != nil {
		target = c.setup(env)
	}
	env.takeSeen()
	module := c.module
	for name, value := range env.vars {
		module = strings.ReplaceAll(module, "{{"+name+"}}", value)
	}
	confPath := filepath.Join(dir, "blackbox.yml")
	if c.configFile != "" {
		if upstreamDir == "" {
			return "", "", fmt.Errorf("a config case needs -upstream (blackbox_exporter's module directory)")
		}
		text, err := os.ReadFile(filepath.Join(upstreamDir, c.configFile))
		if err != nil {
			return "", "", err
		}
		if err := os.WriteFile(confPath, text, 0o600); err != nil {
			return "", "", err
		}
	} else if err := writeModuleFile(confPath, module, dir); err != nil {
		return "", "", err
	}
	run := func(argv []string) (string, error) {
		if env.netns != "" {
			prefix := append([]string{"ip", "netns", "exec", env.netns}, env.wrap...)
			argv = append(prefix, argv...)
		}
		e, err := startExporter(argv, c.env)
		if err != nil {
			return "", err
		}
		if env.netns != "" {
			e.client = nsClient(env.netns)
		}
		defer e.stop()
		if e.refused != "" {
			return refusedPrefix + ": " + e.refused, nil
		}
		if c.setup == nil {
			return "module file loaded", nil
		}
		if c.inspect != nil {
			status, body, err := e.get(target, c.params, c.header)
			if err != nil {
				return "", err
			}
			out := c.inspect(status, body)
			if seen := env.takeSeen(); env.noted {
				out += " seen=[" + seen + "]"
			}
			return out, nil
		}
		series, answer, err := e.probe(target, c.params, c.header)
		if err != nil {
			return "", err
		}
		if c.notes > 0 && answer == "" {
			env.waitNotes(c.notes, 5*time.Second)
		}
		seen := env.takeSeen()
		if answer != "" {
			return answer, nil
		}
		out := describe(series, append([]string{"probe_success"}, c.metrics...))
		if env.noted {
			out += " seen=[" + seen + "]"
		}
		return out, nil
	}
	bb, err := run([]string{blackbox, "--config.file=" + confPath, "--web.listen-address=127.0.0.1:0"})
	if err != nil {
		return "", "", err
	}
	pr, err := run([]string{prober, "serve", "--config", confPath, "--listen", "127.0.0.1:0"})
	return bb, pr, err
}

// writeModuleFile writes a module file with one module, m, whose YAML is module ({{DIR}}
// standing for dir).
func writeModuleFile(path, module, dir string) error {
	module = strings.ReplaceAll(module, "{{DIR}}", dir)
	var conf strings.Builder
	conf.WriteString("modules:\n  m:\n")
	for _, line := range strings.Split(strings.TrimRight(module, "\n"), "\n") {
		conf.WriteString("    " + line + "\n")
	}
	return os.WriteFile(path, []byte(conf.String()), 0o600)
}

const refusedPrefix = "module file refused"

// comparable is what is compared of an answer: a refused module file is one answer whatever
// each exporter's wording.
func comparable(answer string) string {
	if strings.HasPrefix(answer, refusedPrefix) {
		return refusedPrefix
	}
	return answer
}
