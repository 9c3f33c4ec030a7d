package prober_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// Multi-step TCP exchanges (issue 28, blackbox_exporter's query_response) against an
// SMTP-like server written with Go's net and crypto/tls.

// smtpServer plays one SMTP STARTTLS conversation per connection and sends every line it
// reads on heard.
func smtpServer(t *testing.T, cert tls.Certificate, heard chan<- string) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				r := bufio.NewReader(c)
				say := func(w net.Conn, s string) { w.Write([]byte(s)) }
				hear := func(r *bufio.Reader) string {
					line, _ := r.ReadString('\n')
					heard <- line
					return strings.TrimRight(line, "\r\n")
				}
				say(c, "220 mail.test ESMTP Go\r\n")
				if hear(r) != "EHLO prober" {
					return
				}
				say(c, "250-mail.test\r\n250-STARTTLS\r\n250 SIZE 1000\r\n")
				if hear(r) != "STARTTLS" {
					return
				}
				say(c, "220 go ahead\r\n")
				s := tls.Server(c, cfg)
				tr := bufio.NewReader(s)
				if hear(tr) != "EHLO prober" {
					return
				}
				say(s, "250-mail.test\r\n250-AUTH PLAIN\r\n250 SIZE 1000\r\n")
				hear(tr)
			}(c)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func smtpSteps() []prober.TCPStep {
	return []prober.TCPStep{
		{Expect: `^220 ([^ ]+) ESMTP (.+)$`},
		{Send: []byte("EHLO prober\r\n")},
		{Expect: `^250-STARTTLS`},
		{Send: []byte("STARTTLS\r\n")},
		{Expect: `^220`},
		{StartTLS: true},
		{Send: []byte("EHLO prober\r\n")},
		{Expect: `^250-AUTH`, Send: []byte("QUIT ${1}\r\n")},
	}
}

func TestTCPStepsSMTPStartTLS(t *testing.T) {
	cert, caFile := selfSigned(t, "mail.test")
	heard := make(chan string, 8)
	port := smtpServer(t, cert, heard)
	s := prober.TCP("127.0.0.1", port)
	s.Timeout = 10 * time.Second
	s.TLS = &prober.TLSOptions{CAFile: caFile, ServerName: "mail.test"}
	s.TCPSteps = smtpSteps()
	o, err := prober.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if o.Result != prober.Success {
		t.Fatalf("%v %v: %s", o.Result, o.Reason, o.Message)
	}
	// The last send has no Expand: its "${1}" goes as written.
	for _, want := range []string{"EHLO prober\r\n", "STARTTLS\r\n", "EHLO prober\r\n", "QUIT ${1}\r\n"} {
		if got := <-heard; got != want {
			t.Fatalf("server heard %q, want %q", got, want)
		}
	}
	if !strings.HasSuffix(string(o.Output), "250-AUTH PLAIN\r\n250 SIZE 1000\r\n") {
		t.Fatalf("output %q", o.Output)
	}

	// Expand: the greeting's host name in the EHLO (in plain text: without a StartTLS step,
	// TLS options would mean TLS from the first byte).
	s.TLS = nil
	s.TCPSteps = []prober.TCPStep{
		{Expect: `^220 ([^ ]+) ESMTP`, Send: []byte("EHLO ${1}\r\n"), Expand: true},
		{Expect: `^250-NEVER`},
	}
	o, err = prober.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := <-heard; got != "EHLO mail.test\r\n" {
		t.Fatalf("server heard %q", got)
	}
	if o.Result != prober.Failure || o.Reason != prober.ReasonBody || !strings.HasPrefix(o.Message, `step 2 of 2: no line matched "^250-NEVER": the peer closed the connection`) {
		t.Fatalf("%v %v: %s", o.Result, o.Reason, o.Message)
	}
}

func TestTCPStepsRefusals(t *testing.T) {
	s := prober.TCP("127.0.0.1", 25)
	s.Send = []byte("HELO\r\n")
	s.TCPSteps = []prober.TCPStep{{Expect: "^220"}}
	_, err := prober.Check(context.Background(), s)
	var pe *prober.Error
	if !errors.As(err, &pe) || pe.Code != prober.StatusInvalid || !strings.Contains(pe.Msg, "TCP steps replace the single send, expect and STARTTLS") {
		t.Fatalf("%v", err)
	}
	s = prober.TCP("127.0.0.1", 25)
	s.TCPSteps = []prober.TCPStep{{Send: []byte("$1"), Expand: true}}
	if _, err := prober.Check(context.Background(), s); !errors.As(err, &pe) || !strings.Contains(pe.Msg, "TCP step 1: a send template needs an expect") {
		t.Fatalf("%v", err)
	}
}

// TestTCPStepsLine: a Line step writes its expansion with "\n", and nothing at all when the
// expansion is empty (blackbox_exporter's send), so the server's first line is the QUIT.
func TestTCPStepsLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	heard := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte("220\r\nready\r\n"))
		line, _ := bufio.NewReader(c).ReadString('\n')
		heard <- line
	}()
	s := prober.TCP("127.0.0.1", l.Addr().(*net.TCPAddr).Port)
	s.Timeout = 10 * time.Second
	s.TCPSteps = []prober.TCPStep{
		{Expect: `^220 ?(.*)$`, Send: []byte("${1}"), Expand: true, Line: true},
		{Expect: `^ready`, Send: []byte("QUIT"), Line: true},
	}
	o, err := prober.Check(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if o.Result != prober.Success {
		t.Fatalf("%v %v: %s", o.Result, o.Reason, o.Message)
	}
	if got := <-heard; got != "QUIT\n" {
		t.Fatalf("server heard %q first, want \"QUIT\\n\"", got)
	}
}

// ExpectBytes reads bytes, not lines: a binary greeting with a "\n" inside lets the step send;
// other bytes fail it with ReasonBody, the server hearing nothing.
func TestTCPStepsExpectBytes(t *testing.T) {
	run := func(greeting string) (prober.Outcome, string) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		heard := make(chan string, 1)
		go func() {
			c, err := l.Accept()
			if err != nil {
				heard <- ""
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			c.Write([]byte(greeting))
			line, _ := bufio.NewReader(c).ReadString('\n')
			heard <- line
		}()
		s := prober.TCP("127.0.0.1", l.Addr().(*net.TCPAddr).Port)
		s.Timeout = 10 * time.Second
		s.TCPSteps = []prober.TCPStep{{ExpectBytes: []byte("\x00\x01\nOK"), Send: []byte("HELLO"), Line: true}}
		o, err := prober.Check(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return o, <-heard
	}
	o, heard := run("\x00\x01\nOK")
	if o.Result != prober.Success || heard != "HELLO\n" {
		t.Fatalf("%v %v: %s; server heard %q", o.Result, o.Reason, o.Message, heard)
	}
	o, heard = run("\x00\x02\nOK")
	if o.Result != prober.Failure || o.Reason != prober.ReasonBody || heard != "" ||
		!strings.Contains(o.Message, "step 1 of 1: the bytes read differ from those expected") {
		t.Fatalf("%v %v: %s; server heard %q", o.Result, o.Reason, o.Message, heard)
	}
	s := prober.TCP("127.0.0.1", 25)
	s.TCPSteps = []prober.TCPStep{{Expect: "x", ExpectBytes: []byte("x")}}
	var pe *prober.Error
	if _, err := prober.Check(context.Background(), s); !errors.As(err, &pe) || !strings.Contains(pe.Msg, "mutually exclusive") {
		t.Fatalf("%v", err)
	}
}
