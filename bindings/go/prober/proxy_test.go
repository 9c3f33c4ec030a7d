package prober_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// goProxy is a real HTTP proxy on loopback built on net/http: absolute-form requests are
// forwarded with http.Transport, CONNECT opens a tunnel by hijacking the connection (403 when
// the request lacks X-Tenant: blue). It records what it was asked.
type goProxy struct {
	mu   sync.Mutex
	seen []string
	srv  *httptest.Server
}

func startGoProxy(t *testing.T) *goProxy {
	p := &goProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Method+" "+r.RequestURI+" auth="+r.Header.Get("Proxy-Authorization"))
		p.mu.Unlock()
		if r.Method == http.MethodConnect {
			if r.Header.Get("X-Tenant") != "blue" {
				http.Error(w, "no tenant", http.StatusForbidden)
				return
			}
			target, err := net.Dial("tcp", r.Host)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				target.Close()
				return
			}
			_, _ = rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
			_ = rw.Flush()
			go func() { _, _ = io.Copy(target, conn); target.Close() }()
			_, _ = io.Copy(conn, target)
			conn.Close()
			return
		}
		r.RequestURI = ""
		r.Header.Del("Proxy-Authorization")
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Via", "1.1 goproxy")
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *goProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// Proxy, NoProxy and ProxyConnectHeaders against a real proxy on loopback.
func TestProxy(t *testing.T) {
	p := startGoProxy(t)
	proxyAddr := strings.TrimPrefix(p.srv.URL, "http://")
	s := prober.HTTP(targetURL("/ok"))
	s.Proxy = "http://u:pw@" + proxyAddr
	if o := check(t, s); o.Result != prober.Success || string(o.Output) != "ok" {
		t.Fatalf("through the proxy: %+v", o)
	}
	want := "GET " + targetURL("/ok") + " auth=Basic dTpwdw=="
	if got := p.requests(); len(got) != 1 || got[0] != want {
		t.Fatalf("the proxy saw %q, want %q", got, want)
	}
	// Loopback is never proxied with a no-proxy list.
	s.NoProxy = "example.com"
	if o := check(t, s); o.Result != prober.Success || len(p.requests()) != 1 {
		t.Fatalf("no-proxy: %+v %q", o, p.requests())
	}
	// https through CONNECT: refused without the tenant header, a tunnel with it.
	tlsTarget := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "tls ok")
	}))
	defer tlsTarget.Close()
	s = prober.HTTP(tlsTarget.URL + "/")
	s.Proxy = p.srv.URL
	o := check(t, s)
	if o.Result != prober.Failure || o.Reason != prober.ReasonStatus ||
		!strings.HasSuffix(o.Message, "proxy "+proxyAddr+" answered CONNECT with status 403") {
		t.Fatalf("refused CONNECT: %+v", o)
	}
	s.ProxyConnectHeaders = []prober.Header{{Name: "X-Tenant", Value: "blue"}}
	if o := check(t, s); o.Result != prober.Success || string(o.Output) != "tls ok" || o.TLSVersion == 0 {
		t.Fatalf("through the tunnel: %+v", o)
	}
	if got := p.requests(); !strings.HasPrefix(got[len(got)-1], "CONNECT "+strings.TrimPrefix(tlsTarget.URL, "https://")) {
		t.Fatalf("the proxy saw %q", got)
	}
	bad := prober.HTTP(targetURL("/"))
	bad.NoProxy = "x"
	if _, err := prober.Check(t.Context(), bad); err == nil {
		t.Fatal("NoProxy without Proxy accepted")
	}
	bad.NoProxy, bad.Proxy = "", "socks5://u:secret@h:1"
	if _, err := prober.Check(t.Context(), bad); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a socks5 proxy: %v", err)
	}
}
