package prober_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// TCP with TLS and STARTTLS (issue 25) against Go's crypto/tls.

// selfSigned returns a certificate for name and the path of its PEM file (the CA to trust).
func selfSigned(t *testing.T, name string) (tls.Certificate, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, path
}

// lineServer answers "PING" with "+PONG" over TLS; with starttls it first greets, waits for
// "STARTTLS" and says "220 go ahead" in plain text.
func lineServer(t *testing.T, cert tls.Certificate, starttls bool) int {
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
				if starttls {
					c.Write([]byte("220 ready\r\n"))
					line, err := bufio.NewReader(c).ReadString('\n')
					if err != nil || strings.TrimSpace(line) != "STARTTLS" {
						return
					}
					c.Write([]byte("220 go ahead\r\n"))
				}
				s := tls.Server(c, cfg)
				r := bufio.NewReader(s)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if strings.TrimSpace(line) == "PING" {
						s.Write([]byte("+PONG\r\n"))
					}
				}
			}(c)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func TestTCPWithTLS(t *testing.T) {
	cert, ca := selfSigned(t, "db.internal")
	port := lineServer(t, cert, false)
	s := prober.TCP("127.0.0.1", port)
	s.TLS = &prober.TLSOptions{CAFile: ca, ServerName: "db.internal"}
	s.Send = []byte("PING\r\n")
	s.Expect = `^\+PONG`
	o, err := prober.Check(context.Background(), s)
	if err != nil || o.Result != prober.Success || string(o.Output) != "+PONG\r\n" {
		t.Fatalf("TLS PING: %+v %v", o, err)
	}
	s.TLS.ServerName = "other.internal"
	if o, err := prober.Check(context.Background(), s); err != nil || o.Result != prober.Failure || o.Reason != prober.ReasonTLS {
		t.Fatalf("wrong name: %+v %v", o, err)
	}
}

func TestTCPStartTLS(t *testing.T) {
	cert, ca := selfSigned(t, "mail.internal")
	port := lineServer(t, cert, true)
	s := prober.TCP("127.0.0.1", port)
	s.Send = []byte("STARTTLS\r\n")
	s.Expect = `(?m)^220 go ahead`
	s.StartTLS = true
	s.TLS = &prober.TLSOptions{CAFile: ca, ServerName: "mail.internal"}
	o, err := prober.Check(context.Background(), s)
	if err != nil || o.Result != prober.Success {
		t.Fatalf("STARTTLS: %+v %v", o, err)
	}
	s.Send = []byte("HELO\r\n")
	if o, err := prober.Check(context.Background(), s); err != nil || o.Result != prober.Failure {
		t.Fatalf("no go-ahead: %+v %v", o, err)
	}
}
