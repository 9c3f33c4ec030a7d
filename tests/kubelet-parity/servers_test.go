package parity

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// connBound is how long any server connection may live: every server is bounded.
const connBound = 30 * time.Second

// How a raw reply ends once its bytes are written.
const (
	endClose = ""      // orderly close (FIN)
	endStall = "stall" // keep the connection open, send nothing more, until the client closes it
	endRST   = "rst"   // close with RST (SO_LINGER 0)
)

// reply is the exact bytes a raw server writes for one request. "{port}" in data becomes the
// server's own port, "{port2}" the port of the case's second server, and data "{echo}" a 200
// whose body is the request line and the sorted request headers.
type reply struct {
	data string
	end  string
}

type rawServer struct {
	ln     net.Listener
	port   int
	routes map[string]reply // by request target; "*" for any other
	vars   map[string]string
	tls    *tls.Config
	seen   chan string // request targets, in order of arrival
}

// startRaw starts a raw HTTP/1 server on network ("tcp4" or "tcp6") loopback. routes maps the
// request target ("/ok", "/a?b") to a reply; "*" matches the rest.
func startRaw(t *testing.T, network string, routes map[string]reply) *rawServer {
	addr := "127.0.0.1:0"
	if network == "tcp6" {
		addr = "[::1]:0"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s := &rawServer{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, routes: routes, vars: map[string]string{}, seen: make(chan string, 64)}
	s.vars["{port}"] = strconv.Itoa(s.port)
	t.Cleanup(func() { ln.Close() })
	go s.serve()
	return s
}

func rawRoutes(t *testing.T, routes map[string]reply) *rawServer {
	return startRaw(t, "tcp4", routes)
}

// acceptEach listens on a loopback port of network ("tcp" or "tcp4") and hands every
// connection to handle on its own goroutine, until the test ends.
func acceptEach(t *testing.T, network string, handle func(net.Conn)) int {
	ln, err := net.Listen(network, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// speakFirst listens on a loopback port whose connections are sent data at once, before
// anything is read; what the client sends is read and dropped until it closes.
func speakFirst(t *testing.T, data string) int {
	return acceptEach(t, "tcp", func(c net.Conn) {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(connBound))
		_, _ = c.Write([]byte(data))
		_, _ = io.Copy(io.Discard, c)
	})
}

// raw1 is a raw server answering every request with the same bytes.
func raw1(t *testing.T, data, end string) *rawServer {
	return rawRoutes(t, map[string]reply{"*": {data, end}})
}

func (s *rawServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.handle(c)
	}
}

func (s *rawServer) handle(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(connBound))
	if s.tls != nil {
		tc := tls.Server(c, s.tls)
		if err := tc.Handshake(); err != nil {
			return
		}
		c = tc
	}
	br := bufio.NewReader(c)
	var head []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		head = append(head, line)
	}
	if len(head) == 0 {
		return
	}
	parts := strings.Fields(head[0])
	path := ""
	if len(parts) > 1 {
		path = parts[1]
	}
	select {
	case s.seen <- path:
	default:
	}
	r, ok := s.routes[path]
	if !ok {
		r = s.routes["*"]
	}
	data := r.data
	if data == "{echo}" {
		hdrs := append([]string(nil), head[1:]...)
		sort.Strings(hdrs)
		body := head[0] + "\n" + strings.Join(hdrs, "\n")
		data = "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	for k, v := range s.vars {
		data = strings.ReplaceAll(data, k, v)
	}
	if data != "" {
		if _, err := c.Write([]byte(data)); err != nil {
			return
		}
	}
	switch r.end {
	case endStall:
		// Wait for the client to give up (it closes), bounded by the deadline.
		buf := make([]byte, 512)
		for {
			if _, err := br.Read(buf); err != nil {
				return
			}
		}
	case endRST:
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
}

// httpTarget is an HTTP probe of s at path.
func (s *rawServer) target(path string, timeout time.Duration) *target {
	host := "127.0.0.1"
	if strings.HasPrefix(s.ln.Addr().String(), "[") {
		host = "::1"
	}
	scheme := "http"
	if s.tls != nil {
		scheme = "https"
	}
	return &target{kind: kindHTTP, scheme: scheme, host: host, port: s.port, path: path, timeout: timeout}
}

// goServer is Go's own net/http server (TLS when tlsOn, HTTP/2 allowed when h2).
func goServer(t *testing.T, tlsOn, h2 bool, h http.Handler) (*httptest.Server, int) {
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = quietLog
	s.EnableHTTP2 = h2
	if tlsOn {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, s.Listener.Addr().(*net.TCPAddr).Port
}

// certs: a CA and a leaf it signed (CA:FALSE, for 127.0.0.1 and localhost), and a self-signed
// CA:TRUE certificate used as a server certificate, as `openssl req -x509` makes.
type certSet struct {
	caPEM, leafPEM, leafKeyPEM, selfPEM, selfKeyPEM []byte
	leaf, self                                      tls.Certificate
	caFile, selfFile                                string
	caPool, selfPool                                *x509.CertPool
}

var theCerts *certSet

// certs returns the certificates (made once) with their PEM files written to this case's
// temporary directory.
func certs(t *testing.T) *certSet {
	if theCerts == nil {
		theCerts = makeCerts(t)
	}
	cs := *theCerts
	dir := t.TempDir()
	cs.caFile, cs.selfFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "self.pem")
	for f, b := range map[string][]byte{cs.caFile: cs.caPEM, cs.selfFile: cs.selfPEM} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &cs
}

func makeCerts(t *testing.T) *certSet {
	mk := func(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) ([]byte, []byte, *ecdsa.PrivateKey, *x509.Certificate) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(der)
		kder, _ := x509.MarshalECPrivateKey(key)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), key, cert
	}
	now := time.Now()
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "parity CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caPEM, _, caKey, caCert := mk(caT, nil, nil)
	leafT := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}}
	leafPEM, leafKey, _, _ := mk(leafT, caCert, caKey)
	selfT := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	selfPEM, selfKey, _, _ := mk(selfT, nil, nil)
	cs := &certSet{caPEM: caPEM, leafPEM: leafPEM, leafKeyPEM: leafKey, selfPEM: selfPEM, selfKeyPEM: selfKey}
	var err error
	if cs.leaf, err = tls.X509KeyPair(leafPEM, leafKey); err != nil {
		t.Fatal(err)
	}
	if cs.self, err = tls.X509KeyPair(selfPEM, selfKey); err != nil {
		t.Fatal(err)
	}
	cs.caPool, cs.selfPool = x509.NewCertPool(), x509.NewCertPool()
	cs.caPool.AppendCertsFromPEM(caPEM)
	cs.selfPool.AppendCertsFromPEM(selfPEM)
	return cs
}

// goTLSServer is Go's net/http TLS server with the given certificate.
func goTLSServer(t *testing.T, cert tls.Certificate, h http.Handler) int {
	s := httptest.NewUnstartedServer(h)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.Config.ErrorLog = quietLog
	s.StartTLS()
	t.Cleanup(s.Close)
	return s.Listener.Addr().(*net.TCPAddr).Port
}

func okHandler(status int, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
}

// closedPort is a loopback port with nothing listening.
func closedPort(t *testing.T) int {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return p
}

// serverTLS is a server configuration with the CA-signed leaf certificate.
func serverTLS(t *testing.T) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{certs(t).leaf}}
}

// tlsClientAuthServer is Go's TLS server requiring a client certificate.
func tlsClientAuthServer(t *testing.T) int {
	s := httptest.NewUnstartedServer(okHandler(200, "mtls"))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{certs(t).leaf}, ClientAuth: tls.RequireAnyClientCert}
	s.Config.ErrorLog = quietLog
	s.StartTLS()
	t.Cleanup(s.Close)
	return s.Listener.Addr().(*net.TCPAddr).Port
}

// quietLog keeps Go's servers from logging the handshakes the cases break on purpose.
var quietLog = log.New(io.Discard, "", 0)

// firstSeen returns the first request target the server received since the last call, and
// forgets the others.
func (s *rawServer) firstSeen() string {
	first := "(no request)"
	select {
	case first = <-s.seen:
	default:
	}
	for {
		select {
		case <-s.seen:
		default:
			return first
		}
	}
}
