package prober_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// DNS probes (issue 36) against a real server: Debian's nsd, started by the test on a loopback
// port with a zone it writes (ci/go-tests.sh installs it). A missing nsd fails the test.

const testZone = `$ORIGIN probe.test.
$TTL 3600
@ IN SOA ns1.probe.test. hostmaster.probe.test. 2026112901 7200 3600 1209600 300
@ IN NS ns1
ns1 IN A 127.0.0.1
a IN A 192.0.2.1
a IN AAAA 2001:db8::1
`

// startNSD runs nsd serving probe.test (testZone, and 12 TXT records of big.probe.test: more
// than 512 bytes) on a loopback port, stopped at the test's end; it returns the port.
func startNSD(t *testing.T) int {
	t.Helper()
	bin, err := exec.LookPath("nsd")
	if err != nil {
		bin = "/usr/sbin/nsd"
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("nsd (the DNS server this test runs) is not installed: run ci/go-tests.sh, which installs Debian's nsd")
		}
	}
	dir := t.TempDir()
	zone := testZone
	for i := range 12 {
		zone += fmt.Sprintf("big IN TXT \"%s-%d\"\n", strings.Repeat("x", 60), i)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.test.zone"), []byte(zone), 0o644); err != nil {
		t.Fatal(err)
	}
	// A few tries: the port is free when chosen, another process may take it before nsd.
	for range 5 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		conf := fmt.Sprintf("server:\n  ip-address: 127.0.0.1@%[1]d\n  port: %[1]d\n  username: \"\"\n"+
			"  chroot: \"\"\n  zonesdir: %[2]q\n  database: \"\"\n  pidfile: \"%[2]s/nsd.pid\"\n"+
			"  xfrdfile: \"%[2]s/xfrd.state\"\n  zonelistfile: \"%[2]s/zone.list\"\n  xfrdir: %[2]q\n"+
			"  logfile: \"%[2]s/nsd.log\"\n  server-count: 1\n  do-ip6: no\n  verbosity: 1\n"+
			"remote-control:\n  control-enable: no\n"+
			"zone:\n  name: probe.test\n  zonefile: \"probe.test.zone\"\n", port, dir)
		confPath := filepath.Join(dir, "nsd.conf")
		if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-d", "-c", confPath)
		if err := cmd.Start(); err != nil {
			t.Fatalf("start nsd: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			// SIGTERM: nsd's main process then stops its server and xfrd children.
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-exited
		}
		// Ready when it answers the SOA (a probe of at most 200 ms; refused at once before nsd
		// binds, so 10 ms apart then), within 20 s or until it exits.
		ready := prober.DNS("127.0.0.1", port, "probe.test")
		ready.DNS.Type = 6
		ready.Timeout = 200 * time.Millisecond
		limit := time.After(20 * time.Second)
	wait:
		for {
			select {
			case <-exited:
				break wait
			case <-limit:
				break wait
			default:
			}
			if o, err := prober.Check(context.Background(), ready); err == nil && o.Result == prober.Success {
				t.Cleanup(stop)
				return port
			}
			time.Sleep(10 * time.Millisecond)
		}
		stop()
	}
	log, _ := os.ReadFile(filepath.Join(dir, "nsd.log"))
	t.Fatalf("nsd did not answer on a loopback port after 5 tries; its log:\n%s", log)
	return 0
}

func TestDNSSpecErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		spec prober.Spec
		code prober.Status
		msg  string
	}{
		{"bad name", prober.DNS("127.0.0.1", 53, "a..test"), prober.StatusInvalid, "DNS query name"},
		{"bad server", prober.DNS("a b", 53, "a.test"), prober.StatusInvalidHost, ""},
		{"bad port", prober.DNS("127.0.0.1", 70000, "a.test"), prober.StatusInvalidPort, ""},
		{"no options", prober.Spec{Kind: prober.KindDNS, Host: "127.0.0.1"}, prober.StatusInvalid, "Spec.DNS"},
		{"bad transport", prober.Spec{Kind: prober.KindDNS, Host: "127.0.0.1", DNS: &prober.DNSOptions{Name: "a.test", Transport: 9}}, prober.StatusInvalidEnum, "DNS Transport 9"},
		{"empty check", func() prober.Spec {
			s := prober.DNS("127.0.0.1", 53, "a.test")
			s.DNS.Answer.FailIfMatches = []string{""}
			return s
		}(), prober.StatusInvalid, "empty regular expression"},
		{"rcode over 4095", func() prober.Spec {
			s := prober.DNS("127.0.0.1", 53, "a.test")
			s.DNS.ValidRcodes = []uint16{4096}
			return s
		}(), prober.StatusInvalid, "rcode 4096"},
		{"DNS options on a TCP probe", prober.Spec{Kind: prober.KindTCP, Host: "127.0.0.1", Port: 1, DNS: &prober.DNSOptions{}}, prober.StatusWrongKind, "DNS does not apply"},
		{"Service on a DNS probe", func() prober.Spec {
			s := prober.DNS("127.0.0.1", 53, "a.test")
			s.Service = "x"
			return s
		}(), prober.StatusWrongKind, "Service does not apply"},
	} {
		_, err := prober.Check(ctx, c.spec)
		var pe *prober.Error
		if !errors.As(err, &pe) || pe.Code != c.code || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%s: %v, want status %v with %q", c.name, err, c.code, c.msg)
		}
	}
}

func TestDNSAgainstNSD(t *testing.T) {
	port := startNSD(t)
	ctx := context.Background()
	check := func(s prober.Spec) prober.Outcome {
		t.Helper()
		s.Timeout = 5 * time.Second
		o, err := prober.Check(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if o.DNS == nil {
			t.Fatalf("no DNS facts: %+v", o)
		}
		return o
	}

	o := check(prober.DNS("127.0.0.1", port, "a.probe.test"))
	if o.Result != prober.Success || o.DNS.Rcode != 0 || o.DNS.AnswerRRs != 1 || !o.DNS.QuerySucceeded || o.DNS.Serial != -1 {
		t.Fatalf("A: %v %q %+v", o.Result, o.Message, *o.DNS)
	}
	if o.ICMP != nil {
		t.Fatalf("ICMP facts on a DNS run: %+v", *o.ICMP)
	}

	s := prober.DNS("127.0.0.1", port, "a.probe.test.")
	s.DNS.Type, s.DNS.Transport = 28, prober.DNSTCP
	s.DNS.Answer.FailIfNotMatches = []string{`\tAAAA\t2001:db8::1$`}
	if o := check(s); o.Result != prober.Success || o.DNS.AnswerRRs != 1 {
		t.Fatalf("AAAA over TCP: %v %q %+v", o.Result, o.Message, *o.DNS)
	}

	// DNS over TLS to nsd's plain port, which does not speak TLS: a failed probe with no
	// answer, whether asked for by Transport or by Spec.TLS.
	s = prober.DNS("127.0.0.1", port, "a.probe.test")
	s.DNS.Transport = prober.DNSTLS
	if o := check(s); o.Result != prober.Failure || o.DNS.QuerySucceeded {
		t.Fatalf("DNS over TLS to a plain server: %v %q %+v", o.Result, o.Message, *o.DNS)
	}
	s = prober.DNS("127.0.0.1", port, "a.probe.test")
	s.TLS = &prober.TLSOptions{InsecureSkipVerify: true}
	if o := check(s); o.Result != prober.Failure || o.DNS.QuerySucceeded {
		t.Fatalf("Spec.TLS on DNS to a plain server: %v %q %+v", o.Result, o.Message, *o.DNS)
	}

	s = prober.DNS("127.0.0.1", port, "probe.test")
	s.DNS.Type = 6
	if o := check(s); o.Result != prober.Success || o.DNS.Serial != 2026112901 {
		t.Fatalf("SOA: %v %q %+v", o.Result, o.Message, *o.DNS)
	}

	s = prober.DNS("127.0.0.1", port, "a.probe.test")
	s.DNS.Answer.FailIfMatches = []string{`192\.0\.2\.1`}
	if o := check(s); o.Result != prober.Failure || o.Reason != prober.ReasonBody || !strings.Contains(o.Message, "192.0.2.1") {
		t.Fatalf("failing check: %v %v %q", o.Result, o.Reason, o.Message)
	}

	s = prober.DNS("127.0.0.1", port, "nothing.probe.test")
	if o := check(s); o.Result != prober.Failure || o.Reason != prober.ReasonStatus || o.DNS.Rcode != 3 || o.DNS.AuthorityRRs != 1 {
		t.Fatalf("NXDOMAIN: %v %v %q %+v", o.Result, o.Reason, o.Message, *o.DNS)
	}
	s.DNS.ValidRcodes = []uint16{0, 3}
	if o := check(s); o.Result != prober.Success {
		t.Fatalf("NXDOMAIN valid: %v %q", o.Result, o.Message)
	}

	s = prober.DNS("127.0.0.1", port, "big.probe.test")
	s.DNS.Type = 16
	if o := check(s); !o.DNS.Truncated || o.DNS.RetriedOverTCP || o.DNS.AnswerRRs >= 12 {
		t.Fatalf("truncated: %+v", *o.DNS)
	}
	s.DNS.TCPOnTruncation = true
	if o := check(s); o.Result != prober.Success || !o.DNS.RetriedOverTCP || o.DNS.AnswerRRs != 12 {
		t.Fatalf("retried over TCP: %v %q %+v", o.Result, o.Message, *o.DNS)
	}

	s = prober.DNS("127.0.0.1", port, "a.probe.test")
	s.IPFamily = prober.IPv6
	if o := check(s); o.Result != prober.Failure || o.Reason != prober.ReasonDNS {
		t.Fatalf("IPv6 only to an IPv4 server: %v %v %q", o.Result, o.Reason, o.Message)
	}

	// CheckBlocking reads the facts from the outcome rather than the engine's event.
	o, err := prober.CheckBlocking(prober.DNS("127.0.0.1", port, "a.probe.test"))
	if err != nil || o.DNS == nil || o.DNS.AnswerRRs != 1 {
		t.Fatalf("CheckBlocking: %v %+v", err, o)
	}
}
