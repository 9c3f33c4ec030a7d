package prober_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// ICMP echo probes (issue 36) to the loopback addresses: raw sockets need root or CAP_NET_RAW
// (ci/go-tests.sh runs as root); unprivileged ones need net.ipv4.ping_group_range to admit our
// group, which the test reads and asserts either way.

// pingGroupAdmitsUs says whether net.ipv4.ping_group_range admits our group id.
func pingGroupAdmitsUs(t *testing.T) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/ping_group_range")
	if err != nil {
		t.Fatal(err)
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(b), &lo, &hi); err != nil {
		t.Fatalf("ping_group_range %q: %v", b, err)
	}
	return lo <= os.Getgid() && os.Getgid() <= hi
}

func TestICMPSpecErrors(t *testing.T) {
	ctx := context.Background()
	with := func(o prober.ICMPOptions) prober.Spec {
		s := prober.ICMP("127.0.0.1")
		s.ICMP = &o
		return s
	}
	for _, c := range []struct {
		name string
		spec prober.Spec
		code prober.Status
		msg  string
	}{
		{"bad host", prober.ICMP("a b"), prober.StatusInvalidHost, ""},
		{"payload", with(prober.ICMPOptions{PayloadSize: 65528}), prober.StatusInvalid, "65527"},
		{"ttl", with(prober.ICMPOptions{TTL: 256}), prober.StatusInvalid, "TTL 256"},
		{"packets", with(prober.ICMPOptions{Packets: 10001}), prober.StatusInvalid, "packets must be 1 to 10000"},
		{"interval", with(prober.ICMPOptions{Packets: 2, Interval: time.Millisecond}), prober.StatusInvalid, "at least 2ms"},
		{"loss", with(prober.ICMPOptions{MaxLossPercent: 101}), prober.StatusInvalid, "MaxLossPercent 101"},
		{"socket", with(prober.ICMPOptions{Socket: 3}), prober.StatusInvalidEnum, "ICMP Socket 3"},
		{"netns", func() prober.Spec {
			s := prober.ICMP("127.0.0.1")
			s.Netns = "netns/relative"
			return s
		}(), prober.StatusInvalid, "must be absolute"},
		{"port", prober.Spec{Kind: prober.KindICMP, Host: "127.0.0.1", Port: 1}, prober.StatusWrongKind, "Port does not apply"},
		{"ICMP options on a DNS probe", func() prober.Spec {
			s := prober.DNS("127.0.0.1", 53, "a.test")
			s.ICMP = &prober.ICMPOptions{}
			return s
		}(), prober.StatusWrongKind, "ICMP does not apply"},
	} {
		_, err := prober.Check(ctx, c.spec)
		var pe *prober.Error
		if !errors.As(err, &pe) || pe.Code != c.code || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%s: %v, want status %v with %q", c.name, err, c.code, c.msg)
		}
	}
	// More requests than fit in the timeout: refused, never a partial count.
	_, err := prober.Check(ctx, with(prober.ICMPOptions{Packets: 5}))
	if err == nil || !strings.Contains(err.Error(), "5 packets") {
		t.Errorf("5 packets a second apart in 1s: %v", err)
	}
}

func TestICMPLoopback(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		host   string
		socket prober.ICMPSocket
		want   prober.ICMPSocket
	}{
		{"127.0.0.1", prober.ICMPSocketRaw, prober.ICMPSocketRaw},
		{"::1", prober.ICMPSocketRaw, prober.ICMPSocketRaw},
		{"127.0.0.1", prober.ICMPSocketAuto, map[bool]prober.ICMPSocket{true: prober.ICMPSocketUnprivileged, false: prober.ICMPSocketRaw}[pingGroupAdmitsUs(t)]},
	} {
		s := prober.ICMP(c.host)
		s.Timeout = 5 * time.Second
		s.ICMP = &prober.ICMPOptions{Packets: 3, Interval: 10 * time.Millisecond, Socket: c.socket, MaxLossPercent: prober.ICMPAnyLossFails}
		o, err := prober.Check(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		f := o.ICMP
		if o.Result != prober.Success || f == nil {
			t.Fatalf("%s %v: %v %q %+v", c.host, c.socket, o.Result, o.Message, f)
		}
		if f.Sent != 3 || f.Received != 3 || f.Loss != 0 || f.Socket != c.want || f.Error != nil {
			t.Fatalf("%s %v: %+v", c.host, c.socket, *f)
		}
		if !(0 <= f.RTTMin && f.RTTMin <= f.RTTAvg && f.RTTAvg <= f.RTTMax && f.RTTStddev >= 0) {
			t.Fatalf("%s: round-trip times out of order: %+v", c.host, *f)
		}
		if f.ReplyHopLimit <= 0 || f.ReplyHopLimit > 255 || f.Resolve != 0 {
			t.Fatalf("%s: %+v", c.host, *f)
		}
		if o.DNS != nil {
			t.Fatalf("DNS facts on an ICMP run: %+v", *o.DNS)
		}
	}

	// Unprivileged only: works where the sysctl admits us, else Unknown naming the sysctl.
	s := prober.ICMP("127.0.0.1")
	s.ICMP = &prober.ICMPOptions{Socket: prober.ICMPSocketUnprivileged}
	o, err := prober.CheckBlocking(s)
	if err != nil {
		t.Fatal(err)
	}
	if pingGroupAdmitsUs(t) {
		if o.Result != prober.Success || o.ICMP == nil || o.ICMP.Socket != prober.ICMPSocketUnprivileged {
			t.Fatalf("unprivileged: %v %q %+v", o.Result, o.Message, o.ICMP)
		}
	} else if o.Result != prober.Unknown || !strings.Contains(o.Message, "ping_group_range") {
		t.Fatalf("unprivileged without the sysctl: %v %q", o.Result, o.Message)
	}
}

// An engine's periodic ICMP probe: its events carry the facts of their runs.
func TestICMPEngineEvents(t *testing.T) {
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := prober.ICMP("127.0.0.1")
	s.Period = 20 * time.Millisecond
	s.Timeout = 5 * time.Second
	s.ICMP = &prober.ICMPOptions{Packets: 2, Interval: 5 * time.Millisecond, Socket: prober.ICMPSocketRaw}
	target, err := e.AddTarget()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetProbe(target, prober.Readiness, s); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second) // a hang, not a timing claim
	for {
		select {
		case ev := <-e.Events():
			if !ev.HasOutcome {
				continue
			}
			f := ev.Outcome.ICMP
			if f == nil || f.Sent != 2 || f.Received != 2 || f.Socket != prober.ICMPSocketRaw {
				t.Fatalf("event %+v: ICMP facts %+v", ev, f)
			}
			return
		case <-deadline:
			t.Fatal("no event with an outcome in 30s")
		}
	}
}
