package prober_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// Beyond the kubelet: expected statuses, body expressions, per-state periods and jitter.

func TestExpectStatusAndBody(t *testing.T) {
	s := prober.HTTP(targetURL("/status/418"))
	s.ExpectStatus = "200-299,418"
	if o := check(t, s); o.Result != prober.Success || o.HTTPStatus != 418 {
		t.Fatalf("418 in the set: %+v", o)
	}
	s.ExpectStatus = "204"
	o := check(t, s)
	if o.Result != prober.Failure || o.Reason != prober.ReasonStatus || o.Message != "HTTP probe failed with statuscode: 418" {
		t.Fatalf("418 outside the set: %+v", o)
	}

	s = prober.HTTP(targetURL("/status/200?body=starting"))
	s.ExpectBody = "^ready$"
	o = check(t, s)
	if o.Result != prober.Failure || o.Reason != prober.ReasonBody || !strings.Contains(o.Message, "body did not match") {
		t.Fatalf("body mismatch: %+v", o)
	}
	if o.Reason.String() != "body" {
		t.Fatalf("reason name %q", o.Reason.String())
	}
	s.ExpectBody = "^start"
	if o := check(t, s); o.Result != prober.Success {
		t.Fatalf("body match: %+v", o)
	}
}

func TestBodyCEL(t *testing.T) {
	// {"up":true}, percent-encoded for the target's body parameter.
	s := prober.HTTP(targetURL("/status/200?body=%7B%22up%22%3Atrue%7D"))
	s.ExpectBodyCEL = "body.up == true"
	if o := check(t, s); o.Result != prober.Success {
		t.Fatalf("expression true: %+v", o)
	}
	s.ExpectBodyCEL = ""
	s.FailIfBodyCEL = "body.up"
	o := check(t, s)
	if o.Result != prober.Failure || o.Reason != prober.ReasonBody || !strings.Contains(o.Message, "body matched CEL expression") {
		t.Fatalf("fail-if expression true: %+v", o)
	}
	// A body that is not JSON fails either way.
	s = prober.HTTP(targetURL("/status/200?body=ready"))
	s.FailIfBodyCEL = "false"
	if o := check(t, s); o.Result != prober.Failure || o.Reason != prober.ReasonBody || !strings.Contains(o.Message, "JSON") {
		t.Fatalf("not JSON: %+v", o)
	}
}

func TestExtensionErrors(t *testing.T) {
	cases := []struct {
		what string
		spec prober.Spec
		code prober.Status
		msg  string
	}{
		{"bad set", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), ExpectStatus: "200-"}, prober.StatusInvalid, "invalid status set"},
		{"bad regex", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), ExpectBody: "a(b"}, prober.StatusInvalid, "invalid regular expression"},
		{"set on TCP", prober.Spec{Kind: prober.KindTCP, Host: "127.0.0.1", Port: targetPort, ExpectStatus: "200"}, prober.StatusWrongKind, "HTTP probes only"},
		{"bad CEL", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), ExpectBodyCEL: "body.up =="}, prober.StatusInvalid, "line 1, column"},
		{"CEL on TCP", prober.Spec{Kind: prober.KindTCP, Host: "127.0.0.1", Port: targetPort, FailIfBodyCEL: "true"}, prober.StatusWrongKind, "HTTP probes only"},
		{"regex on TCP", prober.Spec{Kind: prober.KindTCP, Host: "127.0.0.1", Port: targetPort, ExpectBody: "x"}, prober.StatusWrongKind, ""},
		{"negative period", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), UnhealthyPeriod: -time.Second}, prober.StatusInvalidDuration, "negative"},
		{"huge period", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), TransitionPeriod: 8 * 24 * time.Hour}, prober.StatusInvalidDuration, "transition period"},
		{"jitter", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), JitterPercent: 51}, prober.StatusInvalid, "jitter"},
		{"send on HTTP", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), Send: []byte("x")}, prober.StatusWrongKind, "TCP probes only"},
		{"expect on HTTP", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), Expect: "x"}, prober.StatusWrongKind, ""},
		{"bad reply regex", prober.Spec{Kind: prober.KindTCP, Host: "127.0.0.1", Port: targetPort, Expect: "a(b"}, prober.StatusInvalid, "invalid regular expression"},
		{"too much to send", prober.Spec{Kind: prober.KindTCP, Host: "127.0.0.1", Port: targetPort, Send: make([]byte, 10241)}, prober.StatusInvalid, "at most 10240"},
		{"negative jitter", prober.Spec{Kind: prober.KindHTTP, URL: targetURL("/"), JitterPercent: -1}, prober.StatusInvalid, "jitter"},
	}
	e, err := prober.NewEngine()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	target, _ := e.AddTarget()
	for _, c := range cases {
		wantError(t, c.what, e.SetProbe(target, prober.Readiness, c.spec), c.code, c.msg)
	}
}

// A target that always answers 503 stays published Failure: with a minute's period and a
// 20 ms unhealthy period, runs keep coming. The bound only catches a hang.
func TestUnhealthyPeriod(t *testing.T) {
	e, err := prober.NewEngine(prober.WithEveryRun(), prober.WithEventBuffer(64))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	target, _ := e.AddTarget()
	s := prober.HTTP(targetURL("/status/503"))
	s.Period = time.Minute
	s.FailureThreshold = 1
	s.UnhealthyPeriod = 20 * time.Millisecond
	s.TransitionPeriod = 20 * time.Millisecond
	s.JitterPercent = 20
	if err := e.SetProbe(target, prober.Readiness, s); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		ev := next(t, e, 30*time.Second, func(ev prober.Event) bool { return ev.Kind == prober.EventRun })
		if ev.Result != prober.Failure || ev.Outcome.Reason != prober.ReasonStatus {
			t.Fatalf("run %d: %+v", i, ev)
		}
	}
}

// A Redis-style PING / +PONG exchange with a listener in this process, and a banner that
// does not match.
func TestTCPSendExpect(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil && line == "PING\r\n" {
					_, _ = c.Write([]byte("+PONG\r\n"))
				} else {
					_, _ = c.Write([]byte("-ERR\r\n"))
				}
			}()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	s := prober.TCP("127.0.0.1", port)
	s.Send = []byte("PING\r\n")
	s.Expect = `^\+PONG\r\n`
	if o := check(t, s); o.Result != prober.Success || string(o.Output) != "+PONG\r\n" {
		t.Fatalf("PING/PONG: %+v", o)
	}
	s.Send = []byte("HELLO\r\n")
	o := check(t, s)
	if o.Result != prober.Failure || o.Reason != prober.ReasonBody || !strings.Contains(o.Message, `received: "-ERR\r\n"`) {
		t.Fatalf("wrong reply: %+v", o)
	}
}
