package main

// The cases of blackbox_exporter's prober/handler_test.go, through /probe itself.

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"time"
)

var successLine = regexp.MustCompile(`(?m)^probe_success [0-9.]+$`)

// statusAndSuccess is what the handler tests look at: the status and the probe_success line.
func statusAndSuccess(status int, body string) string {
	return fmt.Sprintf("HTTP %d %s", status, successLine.FindString(body))
}

// slowHandler answers after 2 s (upstream's time.Sleep) or when the client goes.
func slowHandler(w http.ResponseWriter, r *http.Request) {
	select {
	case <-time.After(2 * time.Second):
	case <-r.Context().Done():
	}
}

func init() {
	// Upstream's module for these: http_2xx, timeout 10 s, bearer_token mysecret.
	secretModule := "prober: http\ntimeout: 10s\nhttp:\n  bearer_token: mysecret\n"
	add(tcase{
		name:    "handler/TestPrometheusTimeoutHTTP",
		module:  secretModule,
		setup:   serveHTTP(slowHandler),
		header:  map[string]string{"X-Prometheus-Scrape-Timeout-Seconds": "1"},
		inspect: statusAndSuccess,
	})
	secrets := func(status int, body string) string {
		return fmt.Sprintf("HTTP %d shows mysecret=%t shows <secret>=%t", status, strings.Contains(body, "mysecret"), strings.Contains(body, "<secret>"))
	}
	add(tcase{
		name:    "handler/TestPrometheusConfigSecretsHidden",
		module:  secretModule,
		setup:   serveHTTP(slowHandler),
		params:  url.Values{"debug": {"true"}},
		inspect: secrets,
	})
	// TestDebugOutputSecretsHidden calls DebugOutput directly: the same page, a quick server.
	add(tcase{
		name:    "handler/TestDebugOutputSecretsHidden",
		module:  secretModule,
		setup:   serveHTTP(func(w http.ResponseWriter, r *http.Request) {}),
		params:  url.Values{"debug": {"true"}},
		inspect: secrets,
	})

	const hostname = "foo.example.com"
	hostServer := func(env *caseEnv) string {
		return serveHTTP(func(w http.ResponseWriter, r *http.Request) {
			env.note("Host %q", r.Host)
			w.WriteHeader(http.StatusOK)
		})(env)
	}
	add(tcase{
		name:   "handler/TestHostnameParam/hostname-is-host",
		module: "prober: http\ntimeout: 10s\nhttp:\n  ip_protocol_fallback: true\n",
		setup:  hostServer,
		params: url.Values{"debug": {"true"}, "hostname": {hostname}},
		inspect: func(status int, body string) string {
			return fmt.Sprintf("HTTP %d probe_success 1 shown=%t", status, strings.Contains(body, "probe_success 1"))
		},
	})
	add(tcase{
		name:    "handler/TestHostnameParam/host-header-and-hostname",
		module:  "prober: http\ntimeout: 10s\nhttp:\n  ip_protocol_fallback: true\n  headers:\n    Host: " + hostname + ".something\n",
		setup:   hostServer,
		params:  url.Values{"debug": {"true"}, "hostname": {hostname}},
		inspect: func(status int, body string) string { return fmt.Sprintf("HTTP %d", status) },
	})
	add(tcase{
		name:   "handler/TestTCPHostnameParam",
		module: "prober: tcp\ntimeout: 10s\ntcp:\n  tls: true\n  preferred_ip_protocol: ip4\n  tls_config:\n    insecure_skip_verify: true\n",
		// Besides upstream's look at the debug page, the server name the TLS server was sent.
		setup: func(env *caseEnv) string {
			ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			ts.Config.ErrorLog = log.New(io.Discard, "", 0)
			ts.TLS = &tls.Config{GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
				env.note("server name %q", hello.ServerName)
				return nil, nil
			}}
			ts.StartTLS()
			env.onClose(ts.Close)
			return strings.TrimPrefix(ts.URL, "https://")
		},
		params: url.Values{"debug": {"true"}, "hostname": {hostname}},
		inspect: func(status int, body string) string {
			return fmt.Sprintf("HTTP %d shows server_name: %s=%t", status, hostname, strings.Contains(body, "server_name: "+hostname))
		},
	})
}
