package parity

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func redirect(code int, loc string) string {
	return "HTTP/1.1 " + strconv.Itoa(code) + " Redirect\r\nLocation: " + loc + "\r\nContent-Length: 5\r\n\r\nmoved"
}

func init() {
	// --- redirects (the kubelet's RedirectChecker: same host name, 10 redirects at most)
	redir := func(name, from, loc string, extra map[string]reply) {
		add(name, func(t *testing.T) *target {
			routes := map[string]reply{"/": {redirect(302, loc), endClose}, "*": {ok("landed"), endClose}}
			for k, v := range extra {
				routes[k] = v
			}
			s := rawRoutes(t, routes)
			tg := s.target("/", quick)
			if from != "" {
				tg.host = from
			}
			return tg
		})
	}
	notFound := map[string]reply{"*": {"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", endClose}}
	redir("redirect-relative", "", "/ok", nil)
	redir("redirect-absolute-same-host", "", "http://127.0.0.1:{port}/ok", nil)
	redir("redirect-scheme-relative", "", "//127.0.0.1:{port}/ok", nil)
	redir("redirect-to-localhost", "", "http://localhost:{port}/ok", nil)
	redir("redirect-localhost-to-uppercase", "localhost", "http://LOCALHOST:{port}/ok", nil)
	redir("redirect-with-query", "", "/ok?x=1", map[string]reply{"/ok?x=1": {ok("query kept"), endClose}})
	redir("redirect-query-only", "", "?q=1", map[string]reply{"/?q=1": {ok("query only"), endClose}})
	redir("redirect-with-fragment", "", "/ok#frag", nil)
	redir("redirect-to-404", "", "/missing", map[string]reply{"/missing": {"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", endClose}})
	redir("redirect-to-503", "", "/down", map[string]reply{"/down": {"HTTP/1.1 503 Down\r\nContent-Length: 4\r\n\r\ndown", endClose}})
	redir("redirect-location-space", "", "/a b", map[string]reply{"/a%20b": {ok("escaped"), endClose}, "*": notFound["*"]})
	redir("redirect-location-non-ascii", "", "/caf\xc3\xa9", map[string]reply{"/caf%C3%A9": {ok("escaped"), endClose}, "*": notFound["*"]})
	redir("redirect-location-bad-escape", "", "/ok%zz", nil)
	redir("redirect-location-colon-in-first-segment", "", "1a:b/ok", nil)
	redir("redirect-location-bad-scheme-with-escape", "", "HpTp%S://x", nil)
	redir("redirect-location-good-escape", "", "/a%20b", map[string]reply{"/a%20b": {ok("kept"), endClose}})
	redir("redirect-userinfo", "", "http://u:p@127.0.0.1:{port}/ok", nil)
	redir("redirect-trailing-dot-ip", "", "http://127.0.0.1.:{port}/ok", nil)
	redir("redirect-trailing-dot-localhost", "localhost", "http://localhost.:{port}/ok", nil)
	redir("redirect-leading-zero-port", "", "http://127.0.0.1:0{port}/ok", nil)
	redir("redirect-to-ftp", "", "ftp://127.0.0.1/x", nil)
	redir("redirect-to-closed-port-80", "", "http://127.0.0.1/ok", nil)
	redir("redirect-empty-location", "", "", nil)
	redir("redirect-location-padded", "", "  /ok  ", nil)
	redir("redirect-dot-segments", "", "/a/../ok", map[string]reply{"/ok": {ok("clean"), endClose}, "*": notFound["*"]})
	for _, code := range []int{301, 303, 307, 308} {
		c := code
		add("redirect-"+strconv.Itoa(c), func(t *testing.T) *target {
			return rawRoutes(t, map[string]reply{"/": {redirect(c, "/ok"), endClose}, "*": {ok("landed"), endClose}}).target("/", quick)
		})
	}
	add("redirect-ipv6-expanded", func(t *testing.T) *target {
		return startRaw(t, "tcp6", map[string]reply{"/": {redirect(302, "http://[0:0:0:0:0:0:0:1]:{port}/ok"), endClose}, "*": {ok("landed"), endClose}}).target("/", quick)
	})
	add("redirect-ipv6-same", func(t *testing.T) *target {
		return startRaw(t, "tcp6", map[string]reply{"/": {redirect(302, "http://[::1]:{port}/ok"), endClose}, "*": {ok("landed"), endClose}}).target("/", quick)
	})
	add("redirect-ipv6-zone", func(t *testing.T) *target {
		return startRaw(t, "tcp6", map[string]reply{"/": {redirect(302, "http://[::1%25lo]:{port}/ok"), endClose}, "*": {ok("landed"), endClose}}).target("/", quick)
	})
	chain := func(name string, hops int) {
		add(name, func(t *testing.T) *target {
			routes := map[string]reply{"*": {ok("end of chain"), endClose}}
			for i := 0; i < hops; i++ {
				from := "/r" + strconv.Itoa(i)
				if i == 0 {
					from = "/"
				}
				routes[from] = reply{redirect(302, "/r"+strconv.Itoa(i+1)), endClose}
			}
			return rawRoutes(t, routes).target("/", quick)
		})
	}
	chain("redirect-chain-9", 9)
	chain("redirect-chain-10", 10)
	chain("redirect-chain-11", 11)
	add("redirect-loop", func(t *testing.T) *target {
		return raw1(t, redirect(302, "/"), endClose).target("/", quick)
	})
	add("redirect-body-stall", func(t *testing.T) *target {
		return rawRoutes(t, map[string]reply{
			"/": {"HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 100\r\n\r\npartial", endStall},
			"*": {ok("landed"), endClose}}).target("/", stall)
	})
	add("redirect-body-large-close-delimited", func(t *testing.T) *target {
		return rawRoutes(t, map[string]reply{
			"/": {"HTTP/1.1 302 Found\r\nLocation: /ok\r\n\r\n" + strings.Repeat("r", 10000), endClose},
			"*": {ok("landed"), endClose}}).target("/", quick)
	})
	add("redirect-other-port-same-host", func(t *testing.T) *target {
		s2 := raw1(t, ok("second server"), endClose)
		s1 := rawRoutes(t, map[string]reply{"*": {redirect(302, "http://127.0.0.1:{port2}/ok"), endClose}})
		s1.vars["{port2}"] = strconv.Itoa(s2.port)
		return s1.target("/", quick)
	})
	add("redirect-http-to-https", func(t *testing.T) *target {
		_, tp := goServer(t, true, false, okHandler(200, "secure"))
		s1 := rawRoutes(t, map[string]reply{"*": {redirect(302, "https://127.0.0.1:{port2}/ok"), endClose}})
		s1.vars["{port2}"] = strconv.Itoa(tp)
		return s1.target("/", quick)
	})
	add("redirect-https-to-http", func(t *testing.T) *target {
		s2 := raw1(t, ok("plain again"), endClose)
		_, tp := goServer(t, true, false, http.RedirectHandler("http://127.0.0.1:"+strconv.Itoa(s2.port)+"/ok", 302))
		return &target{kind: kindHTTP, scheme: "https", host: "127.0.0.1", port: tp, path: "/", timeout: quick}
	})
	add("redirect-two-locations", func(t *testing.T) *target {
		return rawRoutes(t, map[string]reply{
			"/": {"HTTP/1.1 302 Found\r\nLocation: /first\r\nLocation: /second\r\nContent-Length: 0\r\n\r\n", endClose},
			"*": {"{echo}", endClose}}).target("/", quick)
	})
	redirEcho := func(name, loc string, headers [][2]string) {
		add(name, func(t *testing.T) *target {
			tg := rawRoutes(t, map[string]reply{"/": {redirect(302, loc), endClose}, "*": {"{echo}", endClose}}).target("/", quick)
			tg.headers = headers
			return tg
		})
	}
	redirEcho("redirect-keeps-custom-header", "/ok", [][2]string{{"X-Probe", "1"}})
	redirEcho("redirect-relative-keeps-host-header", "/ok", [][2]string{{"Host", "api.example.com"}})
	redirEcho("redirect-absolute-host-header", "http://127.0.0.1:{port}/ok", [][2]string{{"Host", "api.example.com"}})

	// --- TLS verification (an extension: the oracle is Go's crypto/tls with RootCAs set)
	verify := func(name string, self bool, caFile func(*certSet) string, pool func(*certSet) *x509.CertPool, serverName string) {
		add(name, func(t *testing.T) *target {
			cs := certs(t)
			cert := cs.leaf
			if self {
				cert = cs.self
			}
			port := goTLSServer(t, cert, okHandler(200, "verified"))
			cfg := &tls.Config{ServerName: serverName, RootCAs: pool(cs)}
			tg := &target{kind: kindHTTP, scheme: "https", host: "127.0.0.1", port: port, path: "/", timeout: quick, verifyTLS: cfg}
			tg.cliArgs = []string{"--tls-ca", caFile(cs)}
			if serverName != "" {
				tg.cliArgs = append(tg.cliArgs, "--tls-server-name", serverName)
			}
			return tg
		})
	}
	ca := func(cs *certSet) string { return cs.caFile }
	selfF := func(cs *certSet) string { return cs.selfFile }
	caP := func(cs *certSet) *x509.CertPool { return cs.caPool }
	selfP := func(cs *certSet) *x509.CertPool { return cs.selfPool }
	verify("tls-ca-leaf-ok", false, ca, caP, "")
	verify("tls-ca-leaf-server-name-localhost", false, ca, caP, "localhost")
	verify("tls-ca-leaf-wrong-name", false, ca, caP, "other.example")
	verify("tls-ca-unknown-issuer", false, selfF, selfP, "")
	verify("tls-ca-self-signed-ca-true", true, selfF, selfP, "")
	verify("tls-ca-self-signed-wrong-ca", true, ca, caP, "")
	add("tls-client-cert-required", func(t *testing.T) *target {
		s := tlsClientAuthServer(t)
		return &target{kind: kindHTTP, scheme: "https", host: "127.0.0.1", port: s, path: "/", timeout: quick}
	})

	// --- TCP
	tcp := func(name string, mk func(t *testing.T) (string, int), timeout time.Duration) {
		add(name, func(t *testing.T) *target {
			h, p := mk(t)
			return &target{kind: kindTCP, host: h, port: p, timeout: timeout}
		})
	}
	listen := func(network, addr string) func(t *testing.T) (string, int) {
		return func(t *testing.T) (string, int) {
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			h, _, _ := net.SplitHostPort(ln.Addr().String())
			return h, ln.Addr().(*net.TCPAddr).Port
		}
	}
	tcp("tcp-open", listen("tcp4", "127.0.0.1:0"), quick)
	tcp("tcp-ipv6-open", listen("tcp6", "[::1]:0"), quick)
	tcp("tcp-refused", func(t *testing.T) (string, int) { return "127.0.0.1", closedPort(t) }, quick)
	tcp("tcp-ipv6-refused", func(t *testing.T) (string, int) {
		ln, err := net.Listen("tcp6", "[::1]:0")
		if err != nil {
			t.Fatal(err)
		}
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		return "::1", p
	}, quick)
	tcp("tcp-localhost-name", func(t *testing.T) (string, int) {
		_, p := listen("tcp4", "127.0.0.1:0")(t)
		return "localhost", p
	}, quick)
	tcp("tcp-localhost-name-v6-only", func(t *testing.T) (string, int) {
		_, p := listen("tcp6", "[::1]:0")(t)
		return "localhost", p
	}, quick)
	tcp("tcp-localhost-name-refused", func(t *testing.T) (string, int) { return "localhost", closedPort(t) }, quick)
	tcp("tcp-any-address", func(t *testing.T) (string, int) {
		_, p := listen("tcp4", "127.0.0.1:0")(t)
		return "0.0.0.0", p
	}, quick)
	tcp("tcp-accept-then-rst", func(t *testing.T) (string, int) {
		s := raw1(t, "", endRST)
		return "127.0.0.1", s.port
	}, quick)
	tcp("tcp-port-0", func(t *testing.T) (string, int) { return "127.0.0.1", 0 }, quick)
	tcp("tcp-unresolvable-name", func(t *testing.T) (string, int) { return "no-such-host.invalid", 80 }, quick)
	tcp("tcp-blackhole-test-net", func(t *testing.T) (string, int) { return "192.0.2.1", 80 }, stall)

	// --- exec
	ex := func(name string, timeout time.Duration, env []string, argv ...string) {
		add(name, func(t *testing.T) *target {
			return &target{kind: kindExec, argv: argv, env: env, timeout: timeout}
		})
	}
	ex("exec-true", quick, nil, "true")
	ex("exec-false", quick, nil, "false")
	ex("exec-exit-3-with-output", quick, nil, "sh", "-c", "echo not ready; exit 3")
	ex("exec-exit-255", quick, nil, "sh", "-c", "exit 255")
	ex("exec-exit-126", quick, nil, "sh", "-c", "exit 126")
	ex("exec-stdout", quick, nil, "echo", "hello")
	ex("exec-stderr", quick, nil, "sh", "-c", "echo oops >&2")
	ex("exec-stdout-then-stderr", quick, nil, "sh", "-c", "echo out; echo err >&2")
	ex("exec-interleaved", quick, nil, "sh", "-c", "echo a; echo b >&2; echo c")
	ex("exec-timeout", stall, nil, "sleep", "5")
	ex("exec-timeout-with-output", stall, nil, "sh", "-c", "echo partial; sleep 5")
	ex("exec-no-such-binary", quick, nil, "/no/such/binary")
	ex("exec-not-executable", quick, nil, "/etc/passwd")
	ex("exec-path-lookup", quick, nil, "sh", "-c", "exit 0")
	ex("exec-output-20000", quick, nil, "sh", "-c", "head -c 20000 /dev/zero | tr '\\0' x")
	ex("exec-output-10240", quick, nil, "sh", "-c", "head -c 10240 /dev/zero | tr '\\0' x")
	ex("exec-output-non-utf8", quick, nil, "printf", "\\377\\376ok")
	ex("exec-killed-by-signal", quick, nil, "sh", "-c", "kill -9 $$$$") // $$ is an escaped $ in a probe command
	ex("exec-env-expansion", quick, []string{"WANT=ready"}, "echo", "$(WANT)")
	ex("exec-env-unknown-ref", quick, nil, "echo", "$(NOPE)")
	ex("exec-env-escaped-dollar", quick, []string{"WANT=ready"}, "echo", "$$(WANT)")
	ex("exec-env-in-child", quick, []string{"WANT=ready"}, "sh", "-c", "echo $WANT")
	ex("exec-env-partial-ref", quick, []string{"WANT=ready"}, "echo", "$(WANT")

	// --- gRPC: grpc-go's own health server
	g := func(name, service string, withHealth bool) {
		add(name, func(t *testing.T) *target { return grpcTarget(grpcHealthServer(t, withHealth), service, quick) })
	}
	g("grpc-serving-server", "", true)
	g("grpc-serving-service", "up", true)
	g("grpc-not-serving", "down", true)
	g("grpc-service-unknown-status", "unknown", true)
	g("grpc-unknown-service-notfound", "nosuch", true)
	g("grpc-service-with-slash", "a/b", true)
	g("grpc-no-health-service", "", false)
	// An empty host: the kubelet's code dials ":PORT" (the local machine, grpc-go's
	// authority localhost:PORT); libprober's empty host does the same.
	add("grpc-empty-host", func(t *testing.T) *target {
		tg := grpcTarget(grpcHealthServerOn(t, "tcp", ":0", true), "", quick)
		tg.host = ""
		return tg
	})
	add("grpc-refused", func(t *testing.T) *target { return grpcTarget(closedPort(t), "", stall) })
	add("grpc-http1-server", func(t *testing.T) *target {
		return grpcTarget(raw1(t, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", endClose).port, "", stall)
	})
	add("grpc-silent-server", func(t *testing.T) *target { return grpcTarget(raw1(t, "", endStall).port, "", stall) })
	// --- gRPC: hand-made HTTP/2 frames (h2c)
	h2 := func(name string, timeout time.Duration, steps ...h2Step) {
		add(name, func(t *testing.T) *target { return grpcTarget(h2cServer(t, steps), "", timeout) })
	}
	h2("h2c-serving", quick, h2Step{headers: grpcOKHead}, h2Step{data: grpcMsg(healthpb.HealthCheckResponse_SERVING)}, grpcTrailers("0", ""))
	h2("h2c-not-serving", quick, h2Step{headers: grpcOKHead}, h2Step{data: grpcMsg(healthpb.HealthCheckResponse_NOT_SERVING)}, grpcTrailers("0", ""))
	h2("h2c-status-unknown-enum-7", quick, h2Step{headers: grpcOKHead}, h2Step{data: grpcMsg(7)}, grpcTrailers("0", ""))
	h2("h2c-trailers-only-unimplemented", quick, h2Step{headers: append(append([]string{}, grpcOKHead...), "grpc-status", "12", "grpc-message", "no health here"), endStrm: true})
	h2("h2c-trailers-only-notfound", quick, h2Step{headers: append(append([]string{}, grpcOKHead...), "grpc-status", "5", "grpc-message", "unknown service"), endStrm: true})
	h2("h2c-deadline-exceeded-status", quick, h2Step{headers: append(append([]string{}, grpcOKHead...), "grpc-status", "4"), endStrm: true})
	h2("h2c-unavailable-status", quick, h2Step{headers: append(append([]string{}, grpcOKHead...), "grpc-status", "14", "grpc-message", "draining"), endStrm: true})
	h2("h2c-http-503", quick, h2Step{headers: []string{":status", "503"}, endStrm: true})
	h2("h2c-http-404", quick, h2Step{headers: []string{":status", "404"}, endStrm: true})
	h2("h2c-wrong-content-type", quick, h2Step{headers: []string{":status", "200", "content-type", "text/html"}, endStrm: true})
	h2("h2c-rst-stream", quick, h2Step{rst: http2.ErrCodeRefusedStream})
	h2("h2c-goaway", quick, h2Step{goaway: true})
	h2("h2c-stall-after-headers", stall, h2Step{headers: grpcOKHead}, h2Step{stall: true})
	h2("h2c-stall-before-response", stall, h2Step{stall: true})
	h2("h2c-no-trailers-eos-on-data", quick, h2Step{headers: grpcOKHead}, h2Step{data: grpcMsg(healthpb.HealthCheckResponse_SERVING), endStrm: true})
	h2("h2c-compressed-flag", quick, h2Step{headers: grpcOKHead}, h2Step{data: grpcFrame(1, []byte{8, 1})}, grpcTrailers("0", ""))
	h2("h2c-truncated-message", quick, h2Step{headers: grpcOKHead}, h2Step{data: grpcMsg(healthpb.HealthCheckResponse_SERVING)[:3]}, grpcTrailers("0", ""))
	h2("h2c-bad-protobuf", quick, h2Step{headers: grpcOKHead}, h2Step{data: grpcFrame(0, []byte{0xff, 0xff})}, grpcTrailers("0", ""))
	h2("h2c-no-settings", stall, h2Step{noHeader: true, stall: true})
}
