package main

// The cases of blackbox_exporter's prober/http_test.go, table row by table row.

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
)

// httpModule is the upstream tests' module (Timeout 1 s, IPProtocolFallback) with extra lines
// under `http:`; the timeout is 2 s here, for a shared machine.
func httpModule(extra ...string) string {
	m := "prober: http\ntimeout: 2s\nhttp:\n  ip_protocol_fallback: true\n"
	for _, e := range extra {
		for _, line := range strings.Split(e, "\n") {
			m += "  " + line + "\n"
		}
	}
	return m
}

func serveHTTP(h http.HandlerFunc) func(env *caseEnv) string {
	return func(env *caseEnv) string {
		ts := httptest.NewServer(h)
		env.onClose(ts.Close)
		return ts.URL
	}
}

func serveTLS(h http.HandlerFunc) func(env *caseEnv) string {
	return func(env *caseEnv) string {
		ts := httptest.NewUnstartedServer(h)
		// A client that refuses the certificate is the point of some cases: not worth a line.
		ts.Config.ErrorLog = log.New(io.Discard, "", 0)
		ts.StartTLS()
		env.onClose(ts.Close)
		return ts.URL
	}
}

func compress(kind string, msg []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch kind {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w, _ = flate.NewWriter(&buf, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriter(&buf)
	}
	w.Write(msg)
	w.Close()
	return buf.Bytes()
}

func writeEncoded(encoding string, body []byte, status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if encoding != "" {
			w.Header().Add("Content-Encoding", encoding)
		}
		w.WriteHeader(status)
		w.Write(body)
	}
}

func yamlList(key string, items ...string) string {
	s := key + ":"
	for _, it := range items {
		s += "\n  - " + strconv.Quote(it)
	}
	return s
}

var lengths = []string{"probe_http_content_length", "probe_http_uncompressed_body_length"}

func init() {
	// TestHTTPStatusCodes
	for i, tc := range []struct {
		status int
		valid  []int
	}{
		{200, nil}, {201, nil}, {299, nil}, {300, nil}, {404, nil},
		{404, []int{200, 404}}, {200, []int{200, 404}}, {201, []int{200, 404}}, {404, []int{404}}, {200, []int{404}},
	} {
		status := tc.status
		var extra []string
		if tc.valid != nil {
			s := "valid_status_codes: ["
			for j, c := range tc.valid {
				if j > 0 {
					s += ", "
				}
				s += strconv.Itoa(c)
			}
			extra = append(extra, s+"]")
		}
		add(tcase{
			name:    fmt.Sprintf("http/TestHTTPStatusCodes/%d-%d-valid%v", i, tc.status, strings.Join(strings.Fields(fmt.Sprint(tc.valid)), ",")),
			module:  httpModule(extra...),
			setup:   serveHTTP(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }),
			metrics: []string{"probe_http_status_code"},
		})
	}

	// TestValidHTTPVersion
	for i, versions := range [][]string{
		{}, {"HTTP/1.1"}, {"HTTP/1.1", "HTTP/2.0"}, {"HTTP/1.1", "HTTP/2.0", "HTTP/3.0"}, {"HTTP/2.0"}, {"HTTP/3.0"},
	} {
		var extra []string
		if len(versions) > 0 {
			extra = append(extra, yamlList("valid_http_versions", versions...))
		}
		add(tcase{
			name:    fmt.Sprintf("http/TestValidHTTPVersion/%d-%s", i, strings.Join(versions, ",")),
			module:  httpModule(extra...),
			setup:   serveHTTP(func(w http.ResponseWriter, r *http.Request) {}),
			metrics: []string{"probe_http_version"},
		})
	}

	// TestContentLength: a compressed body without `compression` is not decompressed.
	testmsg := []byte(strings.Repeat("hello world", 10))
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"identity", writeEncoded("identity", testmsg, 200)},
		{"no-content-encoding", writeEncoded("", testmsg, 200)},
		{"unknown-content-encoding", writeEncoded("xxx", bytes.Repeat([]byte{'x'}, len(testmsg)), 200)},
		{"401", writeEncoded("", []byte("not found"), 404)},
		{"brotli", writeEncoded("br", compress("br", testmsg), 200)},
		{"deflate", writeEncoded("deflate", compress("deflate", testmsg), 200)},
		{"gzip", writeEncoded("gzip", compress("gzip", testmsg), 200)},
	} {
		add(tcase{name: "http/TestContentLength/" + tc.name, module: httpModule(), setup: serveHTTP(tc.handler), metrics: lengths})
	}

	// TestHandlingOfCompressionSetting
	gz := compress("gzip", testmsg)
	for _, tc := range []struct {
		name, compression string
		headers           string
		handler           http.HandlerFunc
	}{
		{"gzip", "gzip", "", writeEncoded("gzip", gz, 200)},
		{"brotli", "br", "", writeEncoded("br", compress("br", testmsg), 200)},
		{"deflate", "deflate", "", writeEncoded("deflate", compress("deflate", testmsg), 200)},
		{"identity", "identity", "", writeEncoded("identity", testmsg, 200)},
		{"compression-encoding-mismatch", "deflate", "", writeEncoded("gzip", gz, 200)},
		{"accept-gzip", "gzip", "gzip", writeEncoded("gzip", gz, 200)},
		{"accept-br-gzip", "gzip", "br, gzip", writeEncoded("gzip", gz, 200)},
		{"accept-anything", "gzip", "*", writeEncoded("gzip", gz, 200)},
		{"compressed-content-without-compression-setting", "", "", writeEncoded("gzip", gz, 200)},
	} {
		var extra []string
		if tc.compression != "" {
			extra = append(extra, "compression: "+tc.compression)
		}
		if tc.headers != "" {
			extra = append(extra, "headers:\n  Accept-Encoding: "+strconv.Quote(tc.headers))
		}
		add(tcase{name: "http/TestHandlingOfCompressionSetting/" + tc.name, module: httpModule(extra...), setup: serveHTTP(tc.handler), metrics: lengths})
	}

	// TestMaxResponseLength: body_size_limit 128.
	const max = 128
	shortGz := compress("gzip", bytes.Repeat([]byte{'A'}, max-1))
	longGz := compress("gzip", bytes.Repeat([]byte{'A'}, max+1))
	for _, tc := range []struct {
		name, path, compression string
		metrics                 []string
	}{
		{"short", "/short", "", lengths},
		{"long", "/long", "", []string{"probe_http_content_length"}},
		{"short-compressed", "/short-compressed", "gzip", lengths},
		{"long-compressed", "/long-compressed", "gzip", lengths},
	} {
		extra := []string{"body_size_limit: 128B"}
		if tc.compression != "" {
			extra = append(extra, "compression: "+tc.compression)
		}
		path := tc.path
		add(tcase{
			name:   "http/TestMaxResponseLength/" + tc.name,
			module: httpModule(extra...),
			setup: func(env *caseEnv) string {
				return serveHTTP(func(w http.ResponseWriter, r *http.Request) {
					var resp []byte
					switch r.URL.Path {
					case "/short-compressed":
						resp = shortGz
						w.Header().Add("Content-Encoding", "gzip")
					case "/long-compressed":
						resp = longGz
						w.Header().Add("Content-Encoding", "gzip")
					case "/long":
						resp = bytes.Repeat([]byte{'A'}, max+1)
					case "/short":
						resp = bytes.Repeat([]byte{'A'}, max-1)
					default:
						w.WriteHeader(http.StatusBadRequest)
						return
					}
					w.Header().Set("Content-Length", strconv.Itoa(len(resp)))
					w.WriteHeader(http.StatusOK)
					w.Write(resp)
				})(env) + path
			},
			metrics: tc.metrics,
		})
	}

	add(tcase{
		name:   "http/TestRedirectFollowed",
		module: httpModule(),
		setup: serveHTTP(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				http.Redirect(w, r, "/noredirect", http.StatusFound)
			}
		}),
		metrics: []string{"probe_http_redirects"},
	})
	add(tcase{
		name:    "http/TestRedirectNotFollowed",
		module:  httpModule("follow_redirects: false", "valid_status_codes: [302]"),
		setup:   serveHTTP(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/noredirect", http.StatusFound) }),
		metrics: []string{"probe_http_status_code"},
	})
	add(tcase{
		name:   "http/TestRedirectionLimit",
		module: httpModule(),
		setup: func(env *caseEnv) string {
			const limit = 11
			return serveHTTP(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == fmt.Sprintf("/redirect-%d", limit+1):
					env.note("followed too many redirects")
					w.WriteHeader(http.StatusTooManyRequests)
				case strings.HasPrefix(r.URL.Path, "/redirect-"):
					n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/redirect-"))
					http.Redirect(w, r, fmt.Sprintf("/redirect-%d", n+1), http.StatusFound)
				default:
					env.note("first request")
					http.Redirect(w, r, "/redirect-1", http.StatusFound)
				}
			})(env)
		},
		metrics: []string{"probe_http_redirects", "probe_http_status_code"},
	})
	add(tcase{
		name:   "http/TestPost",
		module: httpModule("method: POST"),
		setup: func(env *caseEnv) string {
			return serveHTTP(func(w http.ResponseWriter, r *http.Request) {
				env.note("method %s", r.Method)
				if r.Method != "POST" {
					w.WriteHeader(http.StatusBadRequest)
				}
			})(env)
		},
	})
	add(tcase{
		name:   "http/TestBasicAuth",
		module: httpModule("tls_config:\n  insecure_skip_verify: false", "basic_auth:\n  username: username\n  password: password"),
		setup:  serveHTTP(func(w http.ResponseWriter, r *http.Request) {}),
	})
	add(tcase{
		name:   "http/TestBearerToken",
		module: httpModule("bearer_token: mysecret"),
		setup:  serveHTTP(func(w http.ResponseWriter, r *http.Request) {}),
	})
	add(tcase{
		name:    "http/TestFailIfNotSSL",
		module:  httpModule("fail_if_not_ssl: true"),
		setup:   serveHTTP(func(w http.ResponseWriter, r *http.Request) {}),
		metrics: []string{"probe_http_ssl"},
	})

	// TestFailIfNotSSLLogMsg: the log line is blackbox's own; what both show is the result
	// (and, on the debug page, whether the final request was over SSL: not compared).
	closeAtOnce := func(env *caseEnv) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		env.onClose(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return "http://" + ln.Addr().String() + "/"
	}
	ok := serveHTTP(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	add(tcase{name: "http/TestFailIfNotSSLLogMsg/ssl-expected-message", module: httpModule("fail_if_not_ssl: true"), setup: ok, metrics: []string{"probe_http_ssl"}})
	add(tcase{name: "http/TestFailIfNotSSLLogMsg/no-ssl-expected-no-message", module: httpModule("fail_if_not_ssl: false"), setup: ok, metrics: []string{"probe_http_ssl"}})
	add(tcase{name: "http/TestFailIfNotSSLLogMsg/ssl-expected-no-message", module: httpModule("fail_if_not_ssl: true"), setup: closeAtOnce, metrics: []string{"probe_http_ssl"}})

	addCELCases()
	addRegexpCases()
	addTLSAndMiscCases()
}

func serveBody(body string) func(env *caseEnv) string {
	return serveHTTP(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
}

func addCELCases() {
	type row struct{ name, body, expr string }
	matches := []row{
		{"celExpression-matches", `{"foo": {"bar": "baz"}}`, "body.foo.bar == 'baz'"},
		{"celExpression-does-not-match", `{"foo": {"bar": "baz"}}`, "body.foo.bar == 'qux'"},
		{"celExpression-does-not-match-with-empty-body", `{}`, "body.foo.bar == 'qux'"},
		{"celExpression-result-not-boolean", `{"foo": {"bar": "baz"}}`, "body.foo.bar"},
		{"body-is-not-json", "hello world", "body.foo.bar == 'baz'"},
		{"body-is-empty-json-object", "{}", "body.foo.bar == 'baz'"},
		{"body-is-json-string", `"foo"`, "body == 'foo'"},
		{"body-is-json-list", `["foo","bar","baz"]`, "body[2] == 'baz'"},
		{"body-is-json-boolean", `true`, "body"},
		{"body-is-empty", "", "body.foo.bar == 'baz'"},
		{"body-returns-emoji", "🤠🤠🤠", "body.foo.bar == 'baz'"},
		{"body-returns-json-with-emojis", `{"foo": {"bar": "🤠🤠🤠"}}`, "body.foo.bar == '😿😿😿'"},
	}
	for _, r := range matches {
		add(tcase{
			name:    "http/TestFailIfBodyMatchesCEL/" + r.name,
			module:  httpModule("fail_if_body_json_matches_cel: " + strconv.Quote(r.expr)),
			setup:   serveBody(r.body),
			metrics: append([]string{"probe_failed_due_to_cel"}, lengths...),
		})
	}
	notMatches := []row{
		{"cel-matches", `{"foo": {"bar": "baz"}}`, "body.foo.bar == 'baz'"},
		{"cel-does-not-match", `{"foo": {"bar": "baz"}}`, "body.foo.bar == 'qux'"},
		{"cel-does-not-match-with-empty-body", `{}`, "body.foo.bar == 'qux'"},
		{"cel-result-not-boolean", `{"foo": {"bar": "baz"}}`, "body.foo.bar"},
		{"body-is-not-json", "hello world", "body.foo.bar == 'baz'"},
		{"body-is-empty-json-object", "{}", "!has(body.foo)"},
		{"body-is-json-string", `"foo"`, "body == 'foo'"},
		{"body-is-json-list", `["foo","bar","baz"]`, "body[2] == 'baz'"},
		{"body-is-json-boolean", `true`, "body"},
		{"body-is-empty", "", "body.foo.bar == 'baz'"},
		{"body-returns-emoji", "🤠🤠🤠", "body.foo.bar == 'baz'"},
		{"body-returns-json-with-emojis", `{"foo": {"bar": "🤠🤠🤠"}}`, "body.foo.bar == '🤠🤠🤠'"},
	}
	for _, r := range notMatches {
		add(tcase{
			name:    "http/TestFailIfBodyNotMatchesCEL/" + r.name,
			module:  httpModule("fail_if_body_json_not_matches_cel: " + strconv.Quote(r.expr)),
			setup:   serveBody(r.body),
			metrics: []string{"probe_failed_due_to_cel"},
		})
	}
}

func addRegexpCases() {
	for _, r := range []struct {
		name, body string
		res        []string
	}{
		{"one-regex-match", "Bad news: could not connect to database server", []string{"could not connect to database"}},
		{"one-regex-no-match", "Download the latest version here", []string{"could not connect to database"}},
		{"multiple-regexes-match", "internal error", []string{"could not connect to database", "internal error"}},
		{"multiple-regexes-no-match", "hello world", []string{"could not connect to database", "internal error"}},
	} {
		add(tcase{
			name:    "http/TestFailIfBodyMatchesRegexp/" + r.name,
			module:  httpModule(yamlList("fail_if_body_matches_regexp", r.res...)),
			setup:   serveBody(r.body),
			metrics: append([]string{"probe_failed_due_to_regex"}, lengths...),
		})
	}
	for i, r := range []struct {
		body string
		res  []string
	}{
		{"Bad news: could not connect to database server", []string{"Download the latest version here"}},
		{"Download the latest version here", []string{"Download the latest version here"}},
		{"Download the latest version here", []string{"Download the latest version here", "Copyright 2015"}},
		{"Download the latest version here. Copyright 2015 Test Inc.", []string{"Download the latest version here", "Copyright 2015"}},
	} {
		add(tcase{
			name:    fmt.Sprintf("http/TestFailIfBodyNotMatchesRegexp/%d", i),
			module:  httpModule(yamlList("fail_if_body_not_matches_regexp", r.res...)),
			setup:   serveBody(r.body),
			metrics: []string{"probe_failed_due_to_regex"},
		})
	}
	type hrow struct {
		header, re   string
		allowMissing bool
		values       []string
	}
	cookieA := "zz=4; expires=Mon, 01-Jan-1990 00:00:00 GMT; Domain=www.example.com; Path=/"
	cookieB := "gid=1; Expires=Tue, 19-Mar-2019 20:08:29 GMT; Domain=.example.com; Path=/"
	headerCases := func(test, key string, rows []hrow) {
		for i, r := range rows {
			values := r.values
			header := r.header
			rule := fmt.Sprintf("%s:\n  - header: %s\n    regexp: %s\n    allow_missing: %t", key, header, strconv.Quote(r.re), r.allowMissing)
			add(tcase{
				name:   fmt.Sprintf("http/%s/%d", test, i),
				module: httpModule(rule),
				setup: serveHTTP(func(w http.ResponseWriter, r *http.Request) {
					for _, v := range values {
						w.Header().Add(header, v)
					}
				}),
				metrics: []string{"probe_failed_due_to_regex"},
			})
		}
	}
	headerCases("TestFailIfHeaderMatchesRegexp", "fail_if_header_matches", []hrow{
		{"Content-Type", "text/javascript", false, []string{"text/javascript"}},
		{"Content-Type", "text/javascript", false, []string{"application/octet-stream"}},
		{"content-type", "text/javascript", false, []string{"application/octet-stream"}},
		{"Content-Type", ".*", false, []string{""}},
		{"Content-Type", ".*", false, []string{}},
		{"Content-Type", ".*", true, []string{""}},
		{"Content-Type", ".*", true, []string{}},
		{"Set-Cookie", ".*Domain=\\.example\\.com.*", false, []string{cookieB}},
		{"Set-Cookie", ".*Domain=\\.example\\.com.*", false, []string{cookieA, cookieB}},
	})
	headerCases("TestFailIfHeaderNotMatchesRegexp", "fail_if_header_not_matches", []hrow{
		{"Content-Type", "text/javascript", false, []string{"text/javascript"}},
		{"content-type", "text/javascript", false, []string{"text/javascript"}},
		{"Content-Type", "text/javascript", false, []string{"application/octet-stream"}},
		{"Content-Type", ".*", false, []string{""}},
		{"Content-Type", ".*", false, []string{}},
		{"Content-Type", ".*", true, []string{}},
		{"Set-Cookie", ".*Domain=\\.example\\.com.*", false, []string{cookieA}},
		{"Set-Cookie", ".*Domain=\\.example\\.com.*", false, []string{cookieA, cookieB}},
	})
}

// selfSignedCA makes a CA certificate for localhost and 127.0.0.1 valid for a day, as the
// upstream generateCertificateTemplate does, and its key pair.
func selfSignedCA() ([]byte, tls.Certificate) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "example.com", Organization: []string{"Example Org"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(0, 0, 1),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		panic(err)
	}
	return certPEM, pair
}

func addTLSAndMiscCases() {
	headers := map[string]string{"Host": "my-secret-vhost.com", "User-Agent": "unsuspicious-user", "Accept-Language": "en-US"}
	add(tcase{
		name:   "http/TestHTTPHeaders",
		module: httpModule("headers:\n  Host: my-secret-vhost.com\n  User-Agent: unsuspicious-user\n  Accept-Language: en-US"),
		setup: func(env *caseEnv) string {
			return serveHTTP(func(w http.ResponseWriter, r *http.Request) {
				for _, k := range []string{"Host", "User-Agent", "Accept-Language"} {
					got := r.Header.Get(k)
					if k == "Host" {
						got = r.Host
					}
					if got != headers[k] {
						env.note("%s %q, not %q", k, got, headers[k])
					} else {
						env.note("%s as sent", k)
					}
				}
			})(env)
		},
	})
	add(tcase{name: "http/TestFailIfSelfSignedCA", module: httpModule("tls_config:\n  insecure_skip_verify: false"),
		setup: serveTLS(func(w http.ResponseWriter, r *http.Request) {}), metrics: []string{"probe_http_ssl"}})
	add(tcase{name: "http/TestSucceedIfSelfSignedCA", module: httpModule("tls_config:\n  insecure_skip_verify: true"),
		setup: serveTLS(func(w http.ResponseWriter, r *http.Request) {}), metrics: []string{"probe_http_ssl"}})
	add(tcase{name: "http/TestTLSConfigIsIgnoredForPlainHTTP", module: httpModule("tls_config:\n  insecure_skip_verify: false"),
		setup: serveHTTP(func(w http.ResponseWriter, r *http.Request) {}), metrics: []string{"probe_http_ssl"}})
	add(tcase{
		name:   "http/TestHTTPUsesTargetAsTLSServerName",
		module: "prober: http\ntimeout: 2s\nhttp:\n  preferred_ip_protocol: ip4\n  ip_protocol_fallback: true\n  tls_config:\n    ca_file: {{DIR}}/ca.pem\n",
		setup: func(env *caseEnv) string {
			caPEM, pair := selfSignedCA()
			if err := writeFile(env.dir+"/ca.pem", caPEM); err != nil {
				panic(err)
			}
			ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			ts.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
			ts.StartTLS()
			env.onClose(ts.Close)
			return strings.ReplaceAll(ts.URL, "127.0.0.1", "localhost")
		},
	})
	// TestRedirectToTLSHostWorks redirects to https://prometheus.io; here to a loopback TLS
	// server whose certificate the module trusts (insecure_skip_verify), to stay on loopback.
	add(tcase{
		name:   "http/TestRedirectToTLSHostWorks",
		module: httpModule("tls_config:\n  insecure_skip_verify: true"),
		setup: func(env *caseEnv) string {
			tlsURL := serveTLS(func(w http.ResponseWriter, r *http.Request) {})(env)
			return serveHTTP(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, tlsURL, http.StatusFound) })(env)
		},
		metrics: []string{"probe_http_ssl", "probe_http_redirects"},
	})
	add(tcase{name: "http/TestHTTPPhases", module: httpModule("tls_config:\n  insecure_skip_verify: true"),
		setup: serveTLS(func(w http.ResponseWriter, r *http.Request) {}), metrics: []string{"probe_http_duration_seconds{phase}"}})
	add(tcase{
		name:   "http/TestCookieJar",
		module: httpModule(),
		setup: func(env *caseEnv) string {
			return serveHTTP(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/" {
					http.SetCookie(w, &http.Cookie{Name: "somecookie", Value: "cookie", Expires: time.Now().Add(365 * 24 * time.Hour)})
					http.Redirect(w, r, "/noredirect", http.StatusFound)
				}
				if r.URL.Path == "/noredirect" {
					c, err := r.Cookie("somecookie")
					if err != nil {
						env.note("no cookie on the redirect")
					} else {
						env.note("cookie %s", c.String())
					}
				}
			})(env)
		},
	})

	// TestSkipResolvePhase. The proxy is a loopback port that refuses (the upstream test runs
	// none either); Go's environment proxy is never used for a loopback target.
	for _, r := range []struct {
		name                      string
		skip, fromEnv, fromConfig bool
	}{
		{"without-proxy-with-skipping-resolve", true, false, false},
		{"without-proxy-without-skipping-resolve", false, false, false},
		{"with-proxy-config-without-skipping-resolve", false, false, true},
		{"with-proxy-config-with-skipping-resolve", true, false, true},
		{"with-proxy-env-without-skipping-resolve", false, true, false},
		{"with-proxy-env-with-skipping-resolve", true, true, false},
	} {
		proxy := refusingPort()
		var extra []string // false is the default, as omitted (the upstream module's zero value)
		if r.skip {
			extra = append(extra, "skip_resolve_phase_with_proxy: true")
		}
		var env []string
		if r.fromConfig {
			extra = append(extra, "proxy_url: http://"+proxy)
		}
		if r.fromEnv {
			extra = append(extra, "proxy_from_environment: true")
			env = append(env, "HTTP_PROXY=http://"+proxy)
		}
		// With a proxy upstream does not assert the result (no proxy runs), only the phases.
		metrics := []string{"probe_http_duration_seconds{phase}"}
		add(tcase{
			name:    "http/TestSkipResolvePhase/" + r.name,
			module:  httpModule(extra...),
			setup:   serveHTTP(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }),
			metrics: metrics,
			env:     env,
		})
	}

	for i, extra := range []string{"body: Test Body", "body_file: {{DIR}}/body.txt"} {
		add(tcase{
			name:   fmt.Sprintf("http/TestBody/%d", i),
			module: httpModule(extra),
			files:  map[string]string{"body.txt": "Test Body"},
			setup: func(env *caseEnv) string {
				return serveHTTP(func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					env.note("body %q", b)
				})(env)
			},
		})
	}
}

// refusingPort is a loopback address nothing listens on (bound, then closed).
func refusingPort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o600) }
