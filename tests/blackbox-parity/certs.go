package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// certTemplate is upstream's generateCertificateTemplate (prober/utils_test.go): CN Example,
// DNS name localhost, and with ipSAN the loopback addresses.
func certTemplate(expiry time.Time, ipSAN bool) *x509.Certificate {
	t := &x509.Certificate{
		BasicConstraintsValid: true,
		SubjectKeyId:          []byte{1},
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Example", Organization: []string{"Example Org"}},
		NotBefore:             time.Now(),
		NotAfter:              expiry,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		DNSNames:              []string{"localhost"},
	}
	if ipSAN {
		t.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	}
	return t
}

func newKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

// signCert signs tmpl for pub with parent and parentKey (self-signed when parent is nil) and
// returns the certificate and its PEM.
func signCert(tmpl, parent *x509.Certificate, pub *rsa.PublicKey, parentKey *rsa.PrivateKey) (*x509.Certificate, []byte) {
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		panic(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return c, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPair(chainPEM []byte, key *rsa.PrivateKey) tls.Certificate {
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pair, err := tls.X509KeyPair(chainPEM, keyPEM)
	if err != nil {
		panic(err)
	}
	return pair
}
