package main

// The -http mode: Go's own net/http server, for the HTTP/2 suites of prober-http and the
// command (HTTPS over h2 by ALPN, h2c with prior knowledge), in its own file so that the gRPC
// server above stays as it is.

import (
	"compress/gzip"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

var httpMode = flag.Bool("http", false, "serve Go's net/http: HTTP/1.1 and h2c (prior knowledge) "+
	"in plain text, or with -tls-cert/-tls-key HTTP/1.1 and h2 by ALPN")

// httpHandler answers, on every protocol:
//
//	/status/N      status N, body "status N over PROTO"
//	/proto         200, body r.Proto (HTTP/1.1 or HTTP/2.0)
//	/echo          200, body "PROTO METHOD HOST PATH", then "name: value" lines of the request
//	               headers, sorted, lower-case names
//	/redirect?to=U 302 to U
//	/big?n=N       200, N bytes of 'a'
//	/gzip?n=N      200, N bytes of 'a' compressed on the fly by compress/gzip, with
//	               Content-Encoding: gzip (streamed: a 1 GiB body is a few MiB of frames)
//	/slow?d=DUR    sleeps DUR before answering 200
//	/close         200 "closing" with Connection: close (on HTTP/2: GOAWAY after it)
//	/conns         200, the number of connections accepted so far
func httpHandler(conns *atomic.Int64) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "closing")
	})
	mux.HandleFunc("/conns", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, conns.Load())
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		if err != nil {
			n = 400
		}
		w.WriteHeader(n)
		fmt.Fprintf(w, "status %d over %s", n, r.Proto)
	})
	mux.HandleFunc("/proto", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
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
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		io.WriteString(w, strings.Repeat("a", n))
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Encoding", "gzip")
		z, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
		chunk := []byte(strings.Repeat("a", 64*1024))
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := z.Write(chunk[:k]); err != nil {
				return // the client went away (past its limit)
			}
			n -= k
		}
		z.Close()
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		d, _ := time.ParseDuration(r.URL.Query().Get("d"))
		select {
		case <-time.After(d):
		case <-r.Context().Done():
		}
		io.WriteString(w, "late")
	})
	return mux
}

// httpServe returns the serving loop of the -http mode on lis.
func httpServe(lis net.Listener, certFile, keyFile string) func() {
	var conns atomic.Int64
	srv := &http.Server{Handler: httpHandler(&conns), ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	if certFile == "" {
		srv.Protocols.SetUnencryptedHTTP2(true)
		return func() { _ = srv.Serve(lis) }
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		fail("TLS key pair: %v", err)
	}
	srv.Protocols.SetHTTP2(true)
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	return func() { _ = srv.ServeTLS(lis, "", "") }
}
