package parity

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	quick = time.Second            // cases that end by themselves
	stall = 300 * time.Millisecond // cases that end by the deadline
)

func ok(body string) string {
	return "HTTP/1.1 200 OK\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
}

func itoa(n int) string { return strconv.Itoa(n) }

// rawCase: one raw reply to every request, probed at "/".
func rawCase(name, data, end string, timeout time.Duration) {
	add(name, func(t *testing.T) *target { return raw1(t, data, end).target("/", timeout) })
}

func init() {
	// --- status lines
	for _, c := range []struct{ name, line string }{
		{"status-200", "HTTP/1.1 200 OK"},
		{"status-201", "HTTP/1.1 201 Created"},
		{"status-204-with-length-0", "HTTP/1.1 204 No Content"},
		{"status-299", "HTTP/1.1 299 Whatever"},
		{"status-300-no-location", "HTTP/1.1 300 Multiple Choices"},
		{"status-301-no-location", "HTTP/1.1 301 Moved Permanently"},
		{"status-304", "HTTP/1.1 304 Not Modified"},
		{"status-399", "HTTP/1.1 399 Odd"},
		{"status-400", "HTTP/1.1 400 Bad Request"},
		{"status-404", "HTTP/1.1 404 Not Found"},
		{"status-418", "HTTP/1.1 418 I'm a teapot"},
		{"status-500", "HTTP/1.1 500 Internal Server Error"},
		{"status-503", "HTTP/1.1 503 Service Unavailable"},
		{"status-599", "HTTP/1.1 599 Odd"},
		{"status-600", "HTTP/1.1 600 Beyond"},
		{"status-999", "HTTP/1.1 999 Beyond"},
		{"status-no-reason", "HTTP/1.1 200"},
		{"status-no-reason-trailing-space", "HTTP/1.1 200 "},
		{"status-long-reason", "HTTP/1.1 200 All Good Here And More Words"},
		{"status-http10", "HTTP/1.0 200 OK"},
		{"status-extra-spaces", "HTTP/1.1  200 OK"},
		{"status-http12", "HTTP/1.2 200 OK"},
		{"status-http20-text", "HTTP/2.0 200 OK"},
		{"status-http09", "HTTP/0.9 200 OK"},
		{"status-http30", "HTTP/3.0 200 OK"},
		{"status-lowercase-http", "http/1.1 200 OK"},
		{"status-icy", "ICY 200 OK"},
		{"status-two-digit", "HTTP/1.1 20 OK"},
		{"status-four-digit", "HTTP/1.1 2000 OK"},
		{"status-letters", "HTTP/1.1 abc OK"},
		{"status-negative", "HTTP/1.1 -200 OK"},
		{"status-099", "HTTP/1.1 099 Low"},
		{"status-101-final", "HTTP/1.1 101 Switching Protocols"},
		{"status-leading-space", " HTTP/1.1 200 OK"},
		{"status-tab-separator", "HTTP/1.1\t200 OK"},
		{"status-version-no-minor", "HTTP/1 200 OK"},
	} {
		rawCase(c.name, c.line+"\r\nContent-Length: 2\r\n\r\nok", endClose, quick)
	}
	rawCase("status-bare-lf", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", endClose, quick)
	rawCase("status-503-with-body", "HTTP/1.1 503 Down\r\nContent-Length: 9\r\n\r\nnot ready", endClose, quick)
	rawCase("status-garbage", "hello there\r\n\r\n", endClose, quick)
	rawCase("status-binary-garbage", "\x00\x01\x02\xff\xfe\r\n\r\n", endClose, quick)
	rawCase("status-empty-reply", "", endClose, quick)
	rawCase("status-empty-reply-rst", "", endRST, quick)

	// --- interim (1xx) responses
	interim := func(n int, code string) string {
		return strings.Repeat("HTTP/1.1 "+code+"\r\n\r\n", n)
	}
	rawCase("interim-100-then-200", interim(1, "100 Continue")+ok("ok"), endClose, quick)
	rawCase("interim-103-then-200", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"+ok("ok"), endClose, quick)
	rawCase("interim-5x100-then-200", interim(5, "100 Continue")+ok("ok"), endClose, quick)
	rawCase("interim-6x100-then-200", interim(6, "100 Continue")+ok("ok"), endClose, quick)
	rawCase("interim-20x103-then-200", interim(20, "103 Early Hints")+ok("ok"), endClose, quick)
	rawCase("interim-100-then-503", interim(1, "100 Continue")+"HTTP/1.1 503 Down\r\nContent-Length: 0\r\n\r\n", endClose, quick)
	rawCase("interim-100-then-eof", interim(1, "100 Continue"), endClose, quick)
	rawCase("interim-100-then-stall", interim(1, "100 Continue"), endStall, stall)

	// --- headers
	for _, c := range []struct{ name, hdrs string }{
		{"header-space-before-colon", "X-Foo : bar\r\n"},
		{"header-obs-fold", "X-Foo: bar\r\n  continued\r\n"},
		{"header-obs-fold-tab", "X-Foo: bar\r\n\tcontinued\r\n"},
		{"header-no-colon", "JustAName\r\n"},
		{"header-space-in-name", "X Foo: bar\r\n"},
		{"header-empty-name", ": bar\r\n"},
		{"header-empty-value", "X-Foo:\r\n"},
		{"header-non-ascii-value", "X-Foo: caf\xc3\xa9\r\n"},
		{"header-nul-in-value", "X-Foo: a\x00b\r\n"},
		{"header-many", strings.Repeat("X-Many: v\r\n", 500)},
		{"header-long-value-64k", "X-Long: " + strings.Repeat("a", 64<<10) + "\r\n"},
		{"header-duplicate-content-type", "Content-Type: text/plain\r\nContent-Type: text/html\r\n"},
		{"header-leading-whitespace-first", " X-Foo: bar\r\n"},
	} {
		rawCase(c.name, "HTTP/1.1 200 OK\r\n"+c.hdrs+"Content-Length: 2\r\n\r\nok", endClose, quick)
	}
	rawCase("header-oversized-2m", "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("a", 2<<20)+"\r\nContent-Length: 2\r\n\r\nok", endClose, quick)

	// --- framing
	cl := func(v, body string) string { return "HTTP/1.1 200 OK\r\nContent-Length: " + v + "\r\n\r\n" + body }
	rawCase("framing-cl-exact", cl("5", "hello"), endClose, quick)
	rawCase("framing-cl-zero", cl("0", ""), endClose, quick)
	rawCase("framing-cl-short-body-eof", cl("10", "hello"), endClose, quick)
	rawCase("framing-cl-short-body-rst", cl("10", "hello"), endRST, quick)
	rawCase("framing-cl-short-body-stall", cl("10", "hello"), endStall, stall)
	rawCase("framing-cl-extra-bytes", cl("2", "okEXTRA"), endClose, quick)
	rawCase("framing-cl-extra-bytes-stall", cl("2", "okEXTRA"), endStall, quick)
	rawCase("framing-cl-duplicate-same", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", endClose, quick)
	rawCase("framing-cl-duplicate-conflict", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!", endClose, quick)
	rawCase("framing-cl-list-same", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok", endClose, quick)
	rawCase("framing-cl-negative", cl("-1", "ok"), endClose, quick)
	rawCase("framing-cl-plus", cl("+2", "ok"), endClose, quick)
	rawCase("framing-cl-hex", cl("0x2", "ok"), endClose, quick)
	rawCase("framing-cl-huge", cl("99999999999999999999999", "ok"), endClose, quick)
	rawCase("framing-cl-large-truncated", cl("1048576", strings.Repeat("x", 1<<20)), endClose, quick)
	rawCase("framing-cl-10240", cl("10240", strings.Repeat("y", 10240)), endClose, quick)
	rawCase("framing-cl-10241", cl("10241", strings.Repeat("y", 10241)), endClose, quick)
	rawCase("framing-close-delimited", "HTTP/1.1 200 OK\r\n\r\nuntil close", endClose, quick)
	rawCase("framing-close-delimited-http10", "HTTP/1.0 200 OK\r\n\r\nuntil close", endClose, quick)
	rawCase("framing-close-delimited-stall", "HTTP/1.1 200 OK\r\n\r\npartial", endStall, stall)
	rawCase("framing-close-delimited-20k", "HTTP/1.1 200 OK\r\n\r\n"+strings.Repeat("z", 20000), endClose, quick)
	rawCase("framing-close-delimited-503", "HTTP/1.1 503 Down\r\n\r\ndown", endClose, quick)
	rawCase("framing-body-non-utf8", cl("4", "\xff\xfeok"), endClose, quick)
	rawCase("framing-body-nul", cl("4", "a\x00bc"), endClose, quick)
	ch := func(body string) string { return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body }
	rawCase("chunked-ok", ch("2\r\nok\r\n0\r\n\r\n"), endClose, quick)
	rawCase("chunked-multi", ch("2\r\nok\r\n3\r\n!!!\r\n0\r\n\r\n"), endClose, quick)
	rawCase("chunked-extension", ch("2;name=value\r\nok\r\n0\r\n\r\n"), endClose, quick)
	rawCase("chunked-trailers", ch("2\r\nok\r\n0\r\nX-Trailer: t\r\n\r\n"), endClose, quick)
	rawCase("chunked-uppercase-hex", ch("A\r\n0123456789\r\n0\r\n\r\n"), endClose, quick)
	rawCase("chunked-truncated-eof", ch("a\r\nok"), endClose, quick)
	rawCase("chunked-no-last-chunk-eof", ch("2\r\nok\r\n"), endClose, quick)
	rawCase("chunked-no-last-chunk-stall", ch("2\r\nok\r\n"), endStall, stall)
	rawCase("chunked-bad-hex", ch("zz\r\nok\r\n0\r\n\r\n"), endClose, quick)
	rawCase("chunked-size-overflow", ch("ffffffffffffffffff\r\nok\r\n0\r\n\r\n"), endClose, quick)
	rawCase("chunked-missing-crlf", ch("2\r\nokX0\r\n\r\n"), endClose, quick)
	rawCase("chunked-503", "HTTP/1.1 503 Down\r\nTransfer-Encoding: chunked\r\n\r\n4\r\ndown\r\n0\r\n\r\n", endClose, quick)
	rawCase("chunked-over-10k", ch("3000\r\n"+strings.Repeat("c", 0x3000)+"\r\n0\r\n\r\n"), endClose, quick)
	rawCase("chunked-with-content-length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", endClose, quick)
	rawCase("te-gzip-chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", endClose, quick)
	rawCase("te-identity", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok", endClose, quick)
	rawCase("te-chunked-http10", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", endClose, quick)

	// --- stalls, resets, closes
	rawCase("stall-before-status", "", endStall, stall)
	rawCase("stall-mid-status-line", "HTTP/1.1 20", endStall, stall)
	rawCase("stall-mid-headers", "HTTP/1.1 200 OK\r\nContent-Le", endStall, stall)
	rawCase("stall-after-headers-cl", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", endStall, stall)
	rawCase("stall-body-503", "HTTP/1.1 503 Down\r\nContent-Length: 10\r\n\r\nx", endStall, stall)
	rawCase("eof-mid-headers", "HTTP/1.1 200 OK\r\nContent-Le", endClose, quick)
	rawCase("eof-mid-status-line", "HTTP/1.1 2", endClose, quick)

	// --- the request the kubelet sends (the server echoes its request line and headers)
	echo := func(name, path string, headers [][2]string) {
		add(name, func(t *testing.T) *target {
			tg := rawRoutes(t, map[string]reply{"*": {"{echo}", endClose}}).target(path, quick)
			tg.headers = headers
			return tg
		})
	}
	echo("request-default-headers", "/healthz", nil)
	echo("request-custom-header", "/", [][2]string{{"X-Probe", "yes"}})
	echo("request-host-header", "/", [][2]string{{"Host", "api.example.com"}})
	echo("request-empty-user-agent", "/", [][2]string{{"User-Agent", ""}})
	echo("request-custom-user-agent", "/", [][2]string{{"User-Agent", "mine/1"}})
	echo("request-empty-accept", "/", [][2]string{{"Accept", ""}})
	echo("request-custom-accept", "/", [][2]string{{"Accept", "application/json"}})
	echo("request-empty-custom-header", "/", [][2]string{{"X-Empty", ""}})
	echo("request-repeated-header", "/", [][2]string{{"X-Rep", "a"}, {"X-Rep", "b"}})
	echo("request-lowercase-header-name", "/", [][2]string{{"x-lower", "v"}})
	echo("request-path-query", "/ready?verbose=1&x=y", nil)
	echo("request-path-fragment", "/ready#frag", nil)
	echo("request-path-empty", "", nil)
	echo("request-path-no-slash", "ready", nil)
	echo("request-path-space", "/health check", nil)
	echo("request-path-non-ascii", "/sant\xc3\xa9", nil)
	echo("request-path-double-slash", "//x", nil)
	echo("request-path-bad-escape", "/x%zz", nil)
	echo("request-path-good-escape", "/a%20b", nil)
	echo("request-path-dot-segments", "/a/../b", nil)
	echo("request-path-pipe-and-braces", "/a|b{c}^d", nil)
	// The path in a watch file: `prober watch` must send what the kubelet sends.
	watchPath := func(name, path string) {
		add(name, func(t *testing.T) *target {
			s := rawRoutes(t, map[string]reply{"*": {"{echo}", endClose}})
			tg := s.target(path, quick)
			tg.watch, tg.seen = true, s.firstSeen
			return tg
		})
	}
	watchPath("watch-path-plain", "/healthz")
	watchPath("watch-path-space", "/health check")
	watchPath("watch-path-non-ascii", "/sant\xc3\xa9")
	watchPath("watch-path-double-slash", "//x")
	watchPath("watch-path-bad-escape", "/x%zz")
	watchPath("watch-path-good-escape", "/a%20b")
	watchPath("watch-path-query", "/ready?x=1")
	watchPath("watch-path-fragment", "/ready#frag")
	watchPath("watch-path-empty", "")
	watchPath("watch-path-no-slash", "ready")

	// --- Go's net/http server, plain and TLS
	goCase := func(name string, tlsOn, h2 bool, status int, body string, timeout time.Duration) {
		add(name, func(t *testing.T) *target {
			_, port := goServer(t, tlsOn, h2, okHandler(status, body))
			scheme := "http"
			if tlsOn {
				scheme = "https"
			}
			return &target{kind: kindHTTP, scheme: scheme, host: "127.0.0.1", port: port, path: "/", timeout: timeout}
		})
	}
	goCase("go-http-200", false, false, 200, "fine", quick)
	goCase("go-http-500", false, false, 500, "bad", quick)
	goCase("go-https-200", true, false, 200, "fine", quick)
	goCase("go-https-503", true, false, 503, "down", quick)
	goCase("go-https-h2-200", true, true, 200, "fine", quick)
	goCase("go-https-302-no-location", true, false, 302, "moved", quick)
	goCase("go-https-200-timeout-30ms", true, false, 200, "fast", 30*time.Millisecond)
	goCase("go-https-200-timeout-100ms", true, false, 200, "fast", 100*time.Millisecond)
	add("go-https-big-body", func(t *testing.T) *target {
		_, port := goServer(t, true, false, okHandler(200, strings.Repeat("b", 50000)))
		return &target{kind: kindHTTP, scheme: "https", host: "127.0.0.1", port: port, path: "/", timeout: quick}
	})
	add("https-to-plain-http-server", func(t *testing.T) *target {
		// The server speaks first: a plain server that waited for a request head would answer
		// only when the random bytes of the ClientHello happened to hold a blank line, so each
		// side would see an HTTP answer or a timeout by chance.
		return &target{kind: kindHTTP, scheme: "https", host: "127.0.0.1", port: speakFirst(t, ok("plain")), path: "/", timeout: quick}
	})
	add("http-to-tls-server", func(t *testing.T) *target {
		_, port := goServer(t, true, false, okHandler(200, "tls"))
		return &target{kind: kindHTTP, scheme: "http", host: "127.0.0.1", port: port, path: "/", timeout: quick}
	})
	add("https-raw-tls-200", func(t *testing.T) *target {
		s := raw1(t, ok("over tls"), endClose)
		s.tls = serverTLS(t)
		tg := s.target("/", quick)
		return tg
	})
	add("https-raw-tls-stall", func(t *testing.T) *target {
		s := raw1(t, "", endStall)
		s.tls = serverTLS(t)
		return s.target("/", stall)
	})
	add("https-handshake-stall", func(t *testing.T) *target {
		s := raw1(t, "", endStall)
		tg := s.target("/", stall)
		// A plain server that never answers the ClientHello.
		tg.scheme = "https"
		return tg
	})
	add("http-refused", func(t *testing.T) *target {
		return &target{kind: kindHTTP, scheme: "http", host: "127.0.0.1", port: closedPort(t), path: "/", timeout: quick}
	})
	add("http-localhost-name", func(t *testing.T) *target {
		tg := raw1(t, ok("by name"), endClose).target("/", quick)
		tg.host = "localhost"
		return tg
	})
	add("http-ipv6-literal", func(t *testing.T) *target {
		return startRaw(t, "tcp6", map[string]reply{"*": {ok("v6"), endClose}}).target("/", quick)
	})
	add("http-trailing-dot-target", func(t *testing.T) *target {
		tg := raw1(t, ok("dot"), endClose).target("/", quick)
		tg.host = "localhost."
		return tg
	})
}
