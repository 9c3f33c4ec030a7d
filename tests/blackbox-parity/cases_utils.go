package main

// The cases of blackbox_exporter's prober/utils_test.go.

import (
	"math/big"
	"net"
	"time"
)

func init() {
	// TestChooseProtocol resolves ipv6.google.com (a name with IPv6 addresses only) with ip4
	// preferred: with the fallback it answers, without it fails. Here the target is the IPv6
	// loopback literal, so that nothing leaves the machine.
	for _, r := range []struct{ name, fallback string }{{"with-fallback", "true"}, {"without-fallback", "false"}} {
		add(tcase{
			name:   "utils/TestChooseProtocol/" + r.name,
			module: tcpModule("preferred_ip_protocol: ip4\nip_protocol_fallback: " + r.fallback),
			setup: func(env *caseEnv) string {
				ln, err := net.Listen("tcp", "[::1]:0")
				if err != nil {
					panic("an IPv6 loopback is needed: " + err.Error())
				}
				env.onClose(func() { ln.Close() })
				go acceptLoop(ln, func(c net.Conn) {})
				return ln.Addr().String()
			},
			metrics: []string{"probe_ip_protocol"},
		})
	}

	// TestGetSerialNumber: the serialnumber label of probe_ssl_last_chain_info, lower-case hex
	// with its leading zero, from a server certificate with that serial number.
	for _, r := range []struct{ name, serial string }{
		{"serial-number-with-leading-zeros", "0BFFBC11F1907D02AF719AFCD64FB253"},
		{"serial-number-without-leading-zeros", "BBFFBC11F1907D02AF719AFCD64FB253"},
	} {
		serial := r.serial
		add(tcase{
			name:   "utils/TestGetSerialNumber/" + r.name,
			module: tcpModule("tls: true\nip_protocol_fallback: true\ntls_config:\n  ca_file: {{DIR}}/ca.pem"),
			setup: func(env *caseEnv) string {
				tmpl := certTemplate(time.Now().AddDate(0, 0, 1), true)
				tmpl.IsCA = true
				tmpl.SerialNumber, _ = new(big.Int).SetString(serial, 16)
				key := newKey()
				_, certPEM := signCert(tmpl, nil, &key.PublicKey, key)
				writeFile(env.dir+"/ca.pem", certPEM)
				return "127.0.0.1:" + serveTCP(env, tlsHello(keyPair(certPEM, key)))
			},
			metrics: []string{"probe_ssl_last_chain_info{serialnumber}"},
		})
	}
}
