package prober_test

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// Source addresses (issue 34) against a real listener on 127.0.0.1 that reports the peer it
// accepted: all of 127.0.0.0/8 is this host's on Linux, so a probe bound to 127.0.0.2 is seen
// from 127.0.0.2. An address the host does not have, and one of the other family, fail
// naming it.

// acceptPeers listens on 127.0.0.1 and sends the peer address of every connection it accepts.
func acceptPeers(t *testing.T) (int, <-chan netip.Addr) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	peers := make(chan netip.Addr, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			peers <- c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
			_ = c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, peers
}

func TestSourceAddress(t *testing.T) {
	port, peers := acceptPeers(t)
	ctx := context.Background()

	s := prober.TCP("127.0.0.1", port)
	s.SourceAddress = netip.MustParseAddr("127.0.0.2")
	o, err := prober.Check(ctx, s)
	if err != nil || o.Result != prober.Success {
		t.Fatalf("from 127.0.0.2: %v %v (%s)", err, o.Result, o.Message)
	}
	if got := <-peers; got != s.SourceAddress {
		t.Fatalf("the listener saw %v, want %v", got, s.SourceAddress)
	}

	// An HTTP probe too (the listener closes at once: the run fails, the peer is the point).
	h := prober.HTTP("http://127.0.0.1:" + strconv.Itoa(port) + "/")
	h.SourceAddress = netip.MustParseAddr("127.0.0.3")
	if _, err := prober.Check(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got := <-peers; got != h.SourceAddress {
		t.Fatalf("the listener saw %v, want %v", got, h.SourceAddress)
	}

	s.SourceAddress = netip.MustParseAddr("192.0.2.1")
	o, err = prober.Check(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if o.Result != prober.Failure || o.Reason != prober.ReasonUnreachable ||
		!strings.Contains(o.Message, "dial tcp 192.0.2.1:0->127.0.0.1:") ||
		!strings.Contains(o.Message, "bind: cannot assign requested address") {
		t.Fatalf("not on this host: %v %v %q", o.Result, o.Reason, o.Message)
	}

	s.SourceAddress = netip.MustParseAddr("::1")
	o, err = prober.Check(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if o.Result != prober.Failure || o.Reason != prober.ReasonDNS ||
		!strings.Contains(o.Message, "the source address ::1 is IPv6 and 127.0.0.1 is IPv4") {
		t.Fatalf("other family: %v %v %q", o.Result, o.Reason, o.Message)
	}

	// A zone cannot be bound to an IP literal spec: refused when the spec is built.
	s.SourceAddress = netip.MustParseAddr("fe80::1%lo")
	if _, err := prober.Check(ctx, s); err == nil || !strings.Contains(err.Error(), "is not an IP address") {
		t.Fatalf("a zone: %v", err)
	}
	e := prober.Exec("true")
	e.SourceAddress = netip.MustParseAddr("127.0.0.2")
	if _, err := prober.Check(ctx, e); err == nil || !strings.Contains(err.Error(), "TCP, HTTP, gRPC, DNS and ICMP probes only") {
		t.Fatalf("exec: %v", err)
	}
}

// A DNS query (UDP) from 127.0.0.3 to a socket on 127.0.0.1 that never answers (the run ends
// at its deadline): the query queued there comes from 127.0.0.3.
func TestDNSSourceAddress(t *testing.T) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s := prober.DNS("127.0.0.1", conn.LocalAddr().(*net.UDPAddr).Port, "probe.test")
	s.Timeout = 500 * time.Millisecond
	s.SourceAddress = netip.MustParseAddr("127.0.0.3")
	o, err := prober.Check(context.Background(), s)
	if err != nil || o.Result != prober.Failure {
		t.Fatalf("%v %v (%s)", err, o.Result, o.Message)
	}
	// The query is queued already; the deadline bounds a hang only.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 512)
	n, from, err := conn.ReadFromUDPAddrPort(buf)
	if err != nil || n <= 12 {
		t.Fatalf("no query: %v", err)
	}
	if got := from.Addr().Unmap(); got != s.SourceAddress {
		t.Fatalf("the query came from %v, want %v", got, s.SourceAddress)
	}
}
