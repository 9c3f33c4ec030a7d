package main

// DNS cases beyond dns_test.go's handlers: both exporters query a real authoritative server,
// Debian's NSD (the one prober-dns's tests and ci/dns-server.sh run), on a loopback port with a
// zone written here, through modules as blackbox_exporter's example.yml writes them.

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

const nsdZone = `$ORIGIN probe.test.
$TTL 3600
@ IN SOA ns1.probe.test. hostmaster.probe.test. 2026112901 7200 3600 1209600 300
@ IN NS ns1
ns1 IN A 127.0.0.1
a IN A 192.0.2.1
a IN AAAA 2001:db8::1
alias IN CNAME a
@ IN MX 10 mail
mail IN A 192.0.2.25
txt IN TXT "v=spf1 -all"
`

func nsdBinary() string {
	if p, err := exec.LookPath("nsd"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nsd"); err == nil {
		return "/usr/sbin/nsd"
	}
	panic("nsd is not installed (ci/blackbox-parity.sh installs Debian's nsd package)")
}

// startNSD runs NSD on a free loopback port (UDP and TCP) serving probe.test. and broken.test.
// (configured, its file missing: SERVFAIL) and returns "127.0.0.1:PORT" once it answers.
func startNSD(env *caseEnv) string { return startNSDWith(env, false) }

// startNSDTLS is startNSD with a DNS-over-TLS port, its certificate (for localhost, 127.0.0.1
// and ::1) signed by a CA written to {{DIR}}/ca.pem; it returns "127.0.0.1:TLSPORT".
func startNSDTLS(env *caseEnv) string { return startNSDWith(env, true) }

// nsdCerts writes a CA (ca.pem, in the case's directory) and a server certificate and key it
// signed (for NSD) and returns the latter two's paths.
func nsdCerts(env *caseEnv) (string, string) {
	rootTmpl := certTemplate(time.Now().AddDate(0, 0, 1), false)
	rootTmpl.IsCA = true
	rootKey := newKey()
	root, rootPEM := signCert(rootTmpl, nil, &rootKey.PublicKey, rootKey)
	serverTmpl := certTemplate(time.Now().AddDate(0, 0, 1), true)
	serverTmpl.SerialNumber.SetInt64(2)
	serverTmpl.SubjectKeyId = []byte{2}
	serverTmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	serverKey := newKey()
	_, serverPEM := signCert(serverTmpl, root, &serverKey.PublicKey, rootKey)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(serverKey)})
	certPath, keyPath := filepath.Join(env.dir, "nsd-tls.pem"), filepath.Join(env.dir, "nsd-tls.key")
	for path, data := range map[string][]byte{filepath.Join(env.dir, "ca.pem"): rootPEM, certPath: serverPEM, keyPath: keyPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			panic(err)
		}
	}
	return certPath, keyPath
}

func freeLoopbackPort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func startNSDWith(env *caseEnv, withTLS bool) string {
	dir := filepath.Join(env.dir, "nsd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe.test.zone"), []byte(nsdZone), 0o600); err != nil {
		panic(err)
	}
	tlsConf, tlsPort := "", ""
	if withTLS {
		cert, key := nsdCerts(env)
		tlsPort = freeLoopbackPort()
		tlsConf = fmt.Sprintf("  ip-address: 127.0.0.1@%[1]s\n  tls-port: %[1]s\n  tls-service-pem: %[2]q\n  tls-service-key: %[3]q\n",
			tlsPort, cert, key)
	}
	for try := 0; try < 5; try++ {
		port := freeLoopbackPort()
		conf := fmt.Sprintf("server:\n  ip-address: 127.0.0.1@%[1]s\n%[3]s  port: %[1]s\n  username: \"\"\n  chroot: \"\"\n"+
			"  zonesdir: %[2]q\n  database: \"\"\n  pidfile: \"%[2]s/nsd.pid\"\n  xfrdfile: \"%[2]s/xfrd.state\"\n"+
			"  zonelistfile: \"%[2]s/zone.list\"\n  xfrdir: %[2]q\n  logfile: \"%[2]s/nsd.log\"\n  server-count: 1\n"+
			"  do-ip6: no\n  verbosity: 1\nremote-control:\n  control-enable: no\n"+
			"zone:\n  name: probe.test\n  zonefile: \"probe.test.zone\"\nzone:\n  name: broken.test\n  zonefile: \"missing.zone\"\n",
			port, dir, tlsConf)
		confPath := filepath.Join(dir, "nsd.conf")
		if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
			panic(err)
		}
		cmd := exec.Command(nsdBinary(), "-d", "-c", confPath)
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		stop := func() {
			// SIGTERM: NSD's main process stops its children with it.
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
		}
		addr := net.JoinHostPort("127.0.0.1", port)
		if nsdAnswers(addr, exited) {
			env.onClose(stop)
			if withTLS {
				return net.JoinHostPort("127.0.0.1", tlsPort)
			}
			return addr
		}
		stop()
	}
	log, _ := os.ReadFile(filepath.Join(dir, "nsd.log"))
	panic("nsd did not answer on a loopback port after 5 tries; its log:\n" + string(log))
}

// nsdAnswers waits (20 s at most) until the server answers probe.test.'s SOA, or has exited.
func nsdAnswers(addr string, exited chan struct{}) bool {
	c := &dns.Client{Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion("probe.test.", dns.TypeSOA)
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		select {
		case <-exited:
			return false
		default:
		}
		if r, _, err := c.Exchange(m, addr); err == nil && len(r.Answer) > 0 {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func init() {
	withSerial := append(append([]string{}, dnsCounts...), "probe_dns_serial", "probe_ip_protocol")
	counts := append(append([]string{}, dnsCounts...), "probe_ip_protocol")
	srcModule := "dns:\n  query_name: a.probe.test\n  query_type: A\n  preferred_ip_protocol: ip4\n"
	for _, c := range []struct {
		name, module string
		metrics      []string
	}{
		// example.yml's dns_soa, asking for the zone it is given.
		{"soa", "dns:\n  query_name: probe.test\n  query_type: SOA\n", withSerial},
		// example.yml's dns_tcp_example.
		{"tcp", "dns:\n  transport_protocol: tcp\n  preferred_ip_protocol: ip4\n  query_name: a.probe.test\n", counts},
		// example.yml's dns_udp_example, with its validations, on this zone's record.
		{"udp-validated", "dns:\n  query_name: a.probe.test\n  query_type: A\n  valid_rcodes: [NOERROR]\n" +
			"  validate_answer_rrs:\n    fail_if_matches_regexp: [\".*127.0.0.1\"]\n    fail_if_all_match_regexp: [\".*127.0.0.1\"]\n" +
			"    fail_if_not_matches_regexp: [\"a.probe.test.\\t3600\\tIN\\tA\\t192.0.2.1\"]\n    fail_if_none_matches_regexp: [\"192.0.2.1\"]\n" +
			"  validate_authority_rrs:\n    fail_if_matches_regexp: [\".*127.0.0.1\"]\n" +
			"  validate_additional_rrs:\n    fail_if_matches_regexp: [\".*127.0.0.1\"]\n", counts},
		// The same module on a name outside the zone: REFUSED.
		{"refused", "dns:\n  query_name: www.prometheus.io\n  query_type: A\n  valid_rcodes: [NOERROR]\n", counts},
		{"nxdomain-valid", "dns:\n  query_name: missing.probe.test\n  query_type: A\n  valid_rcodes: [NXDOMAIN]\n" +
			"  validate_authority_rrs:\n    fail_if_none_matches_regexp: [\"IN\\tSOA\"]\n", counts},
		{"servfail", "dns:\n  query_name: broken.test\n  query_type: A\n", counts},
		{"any", "dns:\n  query_name: a.probe.test\n", counts},
		{"mx-none-matches", "dns:\n  query_name: probe.test\n  query_type: MX\n  validate_answer_rrs:\n    fail_if_none_matches_regexp: [elsewhere]\n", counts},
		{"cname-tcp", "dns:\n  transport_protocol: tcp\n  query_name: alias.probe.test\n  query_type: CNAME\n" +
			"  validate_answer_rrs:\n    fail_if_not_matches_regexp: [\"CNAME\\ta.probe.test.\"]\n", counts},
		{"no-recursion", "dns:\n  query_name: txt.probe.test\n  query_type: TXT\n  recursion_desired: false\n", counts},
		// source_ip_address (issue 36): the query sent from 127.0.0.2, from an address this host
		// does not have, and from one of the other family than the server's.
		{"source-ip-address", srcModule + "  source_ip_address: 127.0.0.2\n", counts},
		{"source-ip-address-tcp", srcModule + "  transport_protocol: tcp\n  source_ip_address: 127.0.0.2\n", counts},
		{"source-ip-address-not-local", srcModule + "  source_ip_address: 192.0.2.1\n", counts},
		{"source-ip-address-other-family", srcModule + "  source_ip_address: '::1'\n", counts},
	} {
		add(tcase{
			name:    "dns/nsd/" + c.name,
			module:  "prober: dns\ntimeout: 2s\n" + c.module,
			metrics: c.metrics,
			setup:   startNSD,
		})
	}
	// DNS over TLS to NSD's TLS port: verified by the CA (the name is the target's address),
	// a server name the certificate does not have, and no verification.
	dot := "dns:\n  query_name: probe.test\n  query_type: SOA\n  transport_protocol: tcp\n  dns_over_tls: true\n  tls_config:\n"
	for _, c := range []struct{ name, tls string }{
		{"dot-verified", "    ca_file: {{DIR}}/ca.pem\n"},
		{"dot-wrong-name", "    ca_file: {{DIR}}/ca.pem\n    server_name: other.example\n"},
		{"dot-insecure", "    insecure_skip_verify: true\n"},
	} {
		add(tcase{
			name:    "dns/nsd/" + c.name,
			module:  "prober: dns\ntimeout: 2s\n" + dot + c.tls,
			metrics: withSerial,
			setup:   startNSDTLS,
		})
	}
}
