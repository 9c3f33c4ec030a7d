package parity

// HTTP/2: HTTPS against Go's net/http server, which offers h2 by ALPN (the kubelet's transport
// takes it), and httpGet.protocol: HTTP2 (h2c with prior knowledge, KEP-5999) against servers
// that speak h2c only, as the kubelet's own TestProbeH2C_* tests start them.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// h2Handler answers the paths the HTTP/2 cases probe, the same on every protocol.
func h2Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/proto", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		var lines []string
		for name, values := range r.Header {
			for _, v := range values {
				lines = append(lines, strings.ToLower(name)+": "+v)
			}
		}
		sort.Strings(lines)
		fmt.Fprintf(w, "%s %s %s %s\n%s", r.Proto, r.Method, r.Host, r.URL.Path, strings.Join(lines, "\n"))
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/status/"), &n)
		w.WriteHeader(n)
		fmt.Fprintf(w, "status %d over %s", n, r.Proto)
	})
	mux.HandleFunc("/to-status-200", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/status/200", http.StatusFound)
	})
	mux.HandleFunc("/to-other-host", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://other.invalid/", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("b", 200000))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler) // RST_STREAM on HTTP/2
	})
	mux.HandleFunc("/half-body", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	return mux
}

// h2cOnlyServer serves HTTP/2 in clear text and nothing else: the kubelet's startH2CServer
// (pkg/probe/http/http_test.go), which hands every connection to http2.Server.ServeConn.
func h2cOnlyServer(t *testing.T, h http.Handler) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	h2s := &http2.Server{}
	base := &http.Server{Handler: h, ErrorLog: quietLog}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go h2s.ServeConn(c, &http2.ServeConnOpts{Handler: h, BaseConfig: base})
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func init() {
	// --- HTTPS: h2 by ALPN
	https := func(name, path string, headers [][2]string, timeout time.Duration) {
		add(name, func(t *testing.T) *target {
			_, port := goServer(t, true, true, h2Handler())
			return &target{kind: kindHTTP, scheme: "https", host: "127.0.0.1", port: port, path: path, headers: headers, timeout: timeout}
		})
	}
	https("https-h2-proto", "/proto", nil, quick)
	https("https-h2-echo", "/echo", nil, quick)
	https("https-h2-echo-host-header", "/echo", [][2]string{{"Host", "virtual.example"}, {"X-Extra", "1"}}, quick)
	https("https-h2-echo-empty-user-agent", "/echo", [][2]string{{"User-Agent", ""}, {"Accept", "text/plain"}}, quick)
	https("https-h2-echo-connection-header", "/echo", [][2]string{{"Connection", "keep-alive"}}, quick)
	https("https-h2-204", "/status/204", nil, quick)
	https("https-h2-503", "/status/503", nil, quick)
	https("https-h2-302-followed", "/to-status-200", nil, quick)
	https("https-h2-302-other-host", "/to-other-host", nil, quick)
	https("https-h2-redirect-loop", "/loop", nil, quick)
	https("https-h2-big-body", "/big", nil, quick)
	https("https-h2-slow", "/slow", nil, stall)
	https("https-h2-rst-stream", "/reset", nil, quick)
	https("https-h2-reset-mid-body", "/half-body", nil, quick)
	// A server that offers HTTP/1.1 only by ALPN: both sides fall back to it.
	add("https-h1-only-server-proto", func(t *testing.T) *target {
		_, port := goServer(t, true, false, h2Handler())
		return &target{kind: kindHTTP, scheme: "https", host: "127.0.0.1", port: port, path: "/proto", timeout: quick}
	})

	// --- httpGet.protocol: HTTP2 (h2c with prior knowledge), against an h2c-only server
	h2c := func(name string, h http.Handler, path string, headers [][2]string, timeout time.Duration) {
		add(name, func(t *testing.T) *target {
			port := h2cOnlyServer(t, h)
			return &target{kind: kindHTTP, scheme: "http", host: "127.0.0.1", port: port, path: path, headers: headers, timeout: timeout, h2c: true}
		})
	}
	// The kubelet's TestProbeH2C_H2C_Success, _Failure and _Timeout (v1.37.2).
	h2c("httpget-h2c-success", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("h2c ok"))
	}), "/health", nil, quick)
	h2c("httpget-h2c-failure", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("h2c error"))
	}), "/health", nil, quick)
	h2c("httpget-h2c-timeout", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}), "/health", nil, time.Second)
	h2c("httpget-h2c-proto", h2Handler(), "/proto", nil, quick)
	h2c("httpget-h2c-echo", h2Handler(), "/echo", nil, quick)
	h2c("httpget-h2c-echo-host-header", h2Handler(), "/echo", [][2]string{{"Host", "virtual.example"}}, quick)
	h2c("httpget-h2c-302-followed", h2Handler(), "/to-status-200", nil, quick)
	h2c("httpget-h2c-302-other-host", h2Handler(), "/to-other-host", nil, quick)
	h2c("httpget-h2c-redirect-loop", h2Handler(), "/loop", nil, quick)
	h2c("httpget-h2c-big-body", h2Handler(), "/big", nil, quick)
	h2c("httpget-h2c-rst-stream", h2Handler(), "/reset", nil, quick)
	// Go's server with HTTP/1.1 and h2c both: prior knowledge picks HTTP/2.
	add("httpget-h2c-dual-server-proto", func(t *testing.T) *target {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h2Handler(), ErrorLog: quietLog, Protocols: new(http.Protocols)}
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
		go func() { _ = srv.Serve(l) }()
		t.Cleanup(func() { _ = srv.Close() })
		return &target{kind: kindHTTP, scheme: "http", host: "127.0.0.1", port: l.Addr().(*net.TCPAddr).Port, path: "/proto", timeout: quick, h2c: true}
	})
	// An HTTP/1.1-only server: the preface is not HTTP/1.1, the server answers 400 and closes.
	add("httpget-h2c-http1-server", func(t *testing.T) *target {
		_, port := goServer(t, false, false, h2Handler())
		return &target{kind: kindHTTP, scheme: "http", host: "127.0.0.1", port: port, path: "/proto", timeout: quick, h2c: true}
	})
	// A closed port.
	add("httpget-h2c-refused", func(t *testing.T) *target {
		return &target{kind: kindHTTP, scheme: "http", host: "127.0.0.1", port: closedPort(t), path: "/", timeout: quick, h2c: true}
	})
}
