package main

// The cases of blackbox_exporter's prober/tcp_test.go.

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"
)

// serveTCP listens on 127.0.0.1 (an ephemeral port) and runs handle on each connection, with
// a 5 s deadline; it returns the listener's port.
func serveTCP(env *caseEnv, handle func(c net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	env.onClose(func() { ln.Close() })
	go acceptLoop(ln, handle)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func acceptLoop(ln net.Listener, handle func(c net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			handle(c)
		}()
	}
}

func tcpModule(extra ...string) string {
	m := "prober: tcp\ntimeout: 2s\ntcp:\n"
	if len(extra) == 0 {
		return m + "  ip_protocol_fallback: true\n"
	}
	for _, e := range extra {
		for _, line := range strings.Split(e, "\n") {
			m += "  " + line + "\n"
		}
	}
	return m
}

// tlsHello is upstream's TLS server of the TLS tests: TLS 1.2 only, "Hello World!" after the
// handshake.
func tlsHello(pair tls.Certificate) func(c net.Conn) {
	return func(c net.Conn) {
		tc := tls.Server(c, &tls.Config{ServerName: "localhost", Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12})
		if tc.Handshake() == nil {
			fmt.Fprintf(tc, "Hello World!\n")
		}
		tc.Close()
	}
}

var tlsMetrics = []string{"probe_tls_version_info{version}", "probe_ssl_earliest_cert_expiry", "probe_ssl_last_chain_info"}

func init() {
	add(tcase{
		name:   "tcp/TestTCPConnection",
		module: tcpModule(),
		setup:  func(env *caseEnv) string { return "127.0.0.1:" + serveTCP(env, func(c net.Conn) {}) },
	})
	add(tcase{
		name:   "tcp/TestTCPConnectionFails",
		module: "prober: tcp\ntimeout: 2s\n",
		setup:  func(env *caseEnv) string { return ":0" },
	})

	// TestTCPConnectionWithTLS: a CA certificate for the name localhost only, served by the
	// server itself; three probes.
	tlsCase := func(name, host, serverName string) {
		extra := "tls: true\npreferred_ip_protocol: ip4\nip_protocol_fallback: true\ntls_config:\n  ca_file: {{DIR}}/ca.pem\n  insecure_skip_verify: false"
		if serverName != "" {
			extra += "\n  server_name: " + serverName
		}
		add(tcase{
			name:   "tcp/TestTCPConnectionWithTLS/" + name,
			module: tcpModule(extra),
			setup: func(env *caseEnv) string {
				tmpl := certTemplate(time.Now().AddDate(0, 0, 1), false)
				tmpl.IsCA = true
				key := newKey()
				_, certPEM := signCert(tmpl, nil, &key.PublicKey, key)
				writeFile(env.dir+"/ca.pem", certPEM)
				return host + ":" + serveTCP(env, tlsHello(keyPair(certPEM, key)))
			},
			metrics: tlsMetrics,
		})
	}
	tlsCase("ip-target-fails", "127.0.0.1", "")
	tlsCase("localhost-target", "localhost", "")
	tlsCase("ip-target-server-name", "127.0.0.1", "localhost")

	add(tcase{
		name:   "tcp/TestTCPConnectionWithTLSAndVerifiedCertificateChain",
		module: tcpModule("tls: true\npreferred_ip_protocol: ip4\nip_protocol_fallback: true\ntls_config:\n  ca_file: {{DIR}}/ca.pem"),
		setup: func(env *caseEnv) string {
			rootKey := newKey()
			rootTmpl := certTemplate(time.Now().AddDate(0, 0, 3), false)
			rootTmpl.IsCA = true
			_, rootPEM := signCert(rootTmpl, nil, &rootKey.PublicKey, rootKey)
			olderTmpl := certTemplate(time.Now().AddDate(0, 0, 1), false)
			olderTmpl.IsCA = true
			older, olderPEM := signCert(olderTmpl, nil, &rootKey.PublicKey, rootKey)
			serverKey := newKey()
			serverTmpl := certTemplate(time.Now().AddDate(0, 0, 2), false)
			_, serverPEM := signCert(serverTmpl, older, &serverKey.PublicKey, rootKey)
			writeFile(env.dir+"/ca.pem", bytes.Join([][]byte{rootPEM, olderPEM}, []byte("\n")))
			return "localhost:" + serveTCP(env, tlsHello(keyPair(append(serverPEM, olderPEM...), serverKey)))
		},
		metrics: append(tlsMetrics, "probe_ssl_last_chain_expiry_timestamp_seconds"),
	})

	add(tcase{
		name: "tcp/TestTCPConnectionQueryResponseStartTLS",
		module: tcpModule(`ip_protocol_fallback: true
query_response:
  - expect: "^220.*ESMTP.*$"
  - send: "EHLO tls.prober"
  - expect: "^250-STARTTLS"
  - send: "STARTTLS"
  - expect: "^220"
  - starttls: true
  - send: "EHLO tls.prober"
  - expect: "^250-AUTH"
  - send: "QUIT"
tls_config:
  ca_file: {{DIR}}/ca.pem
  insecure_skip_verify: false`),
		setup: func(env *caseEnv) string {
			tmpl := certTemplate(time.Now().AddDate(0, 0, 1), true)
			tmpl.IsCA = true
			key := newKey()
			_, certPEM := signCert(tmpl, nil, &key.PublicKey, key)
			writeFile(env.dir+"/ca.pem", certPEM)
			pair := keyPair(certPEM, key)
			return "127.0.0.1:" + serveTCP(env, func(c net.Conn) {
				r := bufio.NewReader(c)
				fmt.Fprintf(c, "220 ESMTP StartTLS pseudo-server\n")
				if l, _ := r.ReadString('\n'); l != "EHLO tls.prober\n" {
					env.note("first line %q", l)
					return
				}
				fmt.Fprintf(c, "250-pseudo-server.example.net\n250-STARTTLS\n250 DSN\n")
				if l, _ := r.ReadString('\n'); l != "STARTTLS\n" {
					env.note("second line %q", l)
					return
				}
				fmt.Fprintf(c, "220 2.0.0 Ready to start TLS\n")
				tc := tls.Server(c, &tls.Config{ServerName: "localhost", Certificates: []tls.Certificate{pair}})
				if err := tc.Handshake(); err != nil {
					env.note("handshake failed")
					return
				}
				defer tc.Close()
				tr := bufio.NewReader(tc)
				if l, _ := tr.ReadString('\n'); !strings.HasPrefix(l, "EHLO") {
					env.note("no EHLO over TLS: %q", l)
					return
				}
				fmt.Fprintf(tc, "250-AUTH\n250 DSN\n")
			})
		},
		metrics: []string{"probe_ssl_earliest_cert_expiry"},
	})

	irc := func(name, answer string) {
		add(tcase{
			name:   "tcp/TestTCPConnectionQueryResponseIRC/" + name,
			module: tcpModule("ip_protocol_fallback: true\nquery_response:\n  - send: \"NICK prober\"\n  - send: \"USER prober prober prober :prober\"\n  - expect: \"^:[^ ]+ 001\""),
			setup: func(env *caseEnv) string {
				return "127.0.0.1:" + serveTCP(env, func(c net.Conn) {
					r := bufio.NewReader(c)
					fmt.Fprintf(c, ":ircd.localhost NOTICE AUTH :*** Looking up your hostname...\n")
					var nick string
					l, _ := r.ReadString('\n')
					fmt.Sscanf(l, "NICK %s", &nick)
					r.ReadString('\n')
					fmt.Fprintf(c, answer, nick)
				})
			},
			metrics: []string{"probe_failed_due_to_regex"},
		})
	}
	irc("welcome", ":ircd.localhost 001 %s :Welcome to IRC!\n")
	irc("blacklisted", "ERROR: Your IP address has been blacklisted.\n%.0s")

	ssh := func(name, labels string, metrics []string) {
		add(tcase{
			name:   "tcp/" + name,
			module: tcpModule("ip_protocol_fallback: true\nquery_response:\n  - expect: \"^SSH-2.0-([^ -]+)(?: (.*))?$\"\n    send: \"CONFIRM ${1}\"\n    labels:\n" + labels),
			setup: func(env *caseEnv) string {
				return "127.0.0.1:" + serveTCP(env, func(c net.Conn) {
					fmt.Fprintf(c, "SSH-2.0-OpenSSH_6.9p1 Debian-2\n")
					l, _ := bufio.NewReader(c).ReadString('\n')
					env.note("got %q", l)
				})
			},
			metrics: metrics,
			notes:   1,
		})
	}
	ssh("TestTCPConnectionQueryResponseMatching",
		"      - name: ssh_version\n        value: \"${1}\"\n      - name: ssh_comments\n        value: \"${2}\"",
		[]string{"probe_failed_due_to_regex", "probe_expect_info{ssh_version}", "probe_expect_info{ssh_comments}"})
	// TestProbeExpectInfo calls probeExpectInfo directly; here the same labels through a probe.
	ssh("TestProbeExpectInfo",
		"      - name: label1\n        value: \"got ${1} here\"\n      - name: label2\n        value: \"${1} on ${2}\"",
		[]string{"probe_expect_info{label1}", "probe_expect_info{label2}"})

	for _, r := range []struct{ name, sent string }{
		{"TestTCPConnectionQueryResponseByteMode", "not-a-line"},
		{"TestTCPConnectionQueryResponseByteModeFail", "something-else"},
	} {
		sent := r.sent
		add(tcase{
			name:   "tcp/" + r.name,
			module: tcpModule("ip_protocol_fallback: true\nquery_response:\n  - expect_bytes: \"not-a-line\""),
			setup: func(env *caseEnv) string {
				return "127.0.0.1:" + serveTCP(env, func(c net.Conn) { c.Write([]byte(sent)) })
			},
			metrics: []string{"probe_failed_due_to_regex", "probe_failed_due_to_bytes"},
		})
	}

	// TestTCPConnectionProtocol: one port on 127.0.0.1 and on ::1, target localhost, the
	// upstream modules' zero-value fallback (false). Where localhost has no ::1 (upstream
	// skips then) both exporters are compared all the same.
	for _, r := range []struct{ name, extra string }{
		{"prefer-ip4", "preferred_ip_protocol: ip4\nip_protocol_fallback: false"},
		{"prefer-ip6", "preferred_ip_protocol: ip6\nip_protocol_fallback: false"},
		{"default", "ip_protocol_fallback: false"},
	} {
		add(tcase{
			name:   "tcp/TestTCPConnectionProtocol/" + r.name,
			module: tcpModule(r.extra),
			setup: func(env *caseEnv) string {
				port := serveTCP(env, func(c net.Conn) {})
				if ln6, err := net.Listen("tcp", "[::1]:"+port); err == nil {
					env.onClose(func() { ln6.Close() })
					go acceptLoop(ln6, func(c net.Conn) {})
				}
				return "localhost:" + port
			},
			metrics: []string{"probe_ip_protocol"},
		})
	}

	add(tcase{
		name:    "tcp/TestPrometheusTimeoutTCP",
		module:  tcpModule("ip_protocol_fallback: true\nquery_response:\n  - expect: \"SSH-2.0-(OpenSSH_6.9p1) Debian-2\""),
		setup:   func(env *caseEnv) string { return "127.0.0.1:" + serveTCP(env, func(c net.Conn) {}) },
		metrics: []string{"probe_failed_due_to_regex"},
	})
}
