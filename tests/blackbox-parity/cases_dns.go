package main

// The cases of blackbox_exporter's prober/dns_test.go (v0.28.0): its handlers, run as real
// DNS servers (miekg/dns, the library blackbox_exporter's own tests serve them with) on
// loopback, UDP and TCP, each table row once per protocol. The upstream tables are Go struct
// literals, so a field they leave out is Go's zero value, not the YAML default: `recursion_desired`
// and `ip_protocol_fallback` are written out as each row has them.

import (
	"fmt"
	"net"
	"strings"

	"github.com/miekg/dns"
)

// dnsProbe is one upstream row's config.DNSProbe.
type dnsProbe struct {
	ipProtocol string // "" leaves it out
	fallback   bool
	recursion  bool
	transport  string // "" leaves it out
	queryClass string
	queryType  string
	rcodes     []string
	answer     rrValidator
	authority  rrValidator
	additional rrValidator
}

type rrValidator struct {
	matches, allMatch, notMatches, noneMatches []string
}

func yamlFlowList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func (v rrValidator) yaml(field string) string {
	var parts []string
	for _, p := range []struct {
		name string
		l    []string
	}{
		{"fail_if_matches_regexp", v.matches},
		{"fail_if_all_match_regexp", v.allMatch},
		{"fail_if_not_matches_regexp", v.notMatches},
		{"fail_if_none_matches_regexp", v.noneMatches},
	} {
		if len(p.l) > 0 {
			parts = append(parts, p.name+": "+yamlFlowList(p.l))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "  " + field + ": {" + strings.Join(parts, ", ") + "}\n"
}

func (p dnsProbe) module() string {
	m := "prober: dns\ntimeout: 2s\ndns:\n  query_name: example.com\n"
	if p.ipProtocol != "" {
		m += "  preferred_ip_protocol: " + p.ipProtocol + "\n"
	}
	m += fmt.Sprintf("  ip_protocol_fallback: %v\n  recursion_desired: %v\n", p.fallback, p.recursion)
	if p.transport != "" {
		m += "  transport_protocol: " + p.transport + "\n"
	}
	if p.queryClass != "" {
		m += "  query_class: " + p.queryClass + "\n"
	}
	if p.queryType != "" {
		m += "  query_type: " + p.queryType + "\n"
	}
	if len(p.rcodes) > 0 {
		m += "  valid_rcodes: " + yamlFlowList(p.rcodes) + "\n"
	}
	return m + p.answer.yaml("validate_answer_rrs") + p.authority.yaml("validate_authority_rrs") +
		p.additional.yaml("validate_additional_rrs")
}

// serveDNS starts the handler on host:port ("0": a free one) over protocol and returns the
// port; the server stops with the case.
func serveDNS(env *caseEnv, protocol, host, port string, handler dns.HandlerFunc) string {
	mux := dns.NewServeMux()
	mux.HandleFunc(".", handler)
	server := &dns.Server{Net: protocol, Handler: mux}
	addr := net.JoinHostPort(host, port)
	if protocol == "udp" {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			panic(err)
		}
		server.PacketConn = pc
	} else {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			panic(err)
		}
		server.Listener = ln
	}
	started := make(chan struct{})
	server.NotifyStartedFunc = func() { close(started) }
	go server.ActivateAndServe()
	<-started
	env.onClose(func() { server.Shutdown() })
	var a net.Addr
	if protocol == "udp" {
		a = server.PacketConn.LocalAddr()
	} else {
		a = server.Listener.Addr()
	}
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// serveDNSBoth serves the handler on 127.0.0.1 and ::1 on one port (upstream listens on
// ":0", which localhost reaches over both families), returning "localhost:PORT".
func serveDNSBoth(env *caseEnv, protocol string, handler dns.HandlerFunc) string {
	for try := 0; ; try++ {
		port := serveDNS(env, protocol, "127.0.0.1", "0", handler)
		if err := tryServeDNS(env, protocol, "::1", port, handler); err == nil {
			return net.JoinHostPort("localhost", port)
		} else if try == 9 {
			panic(err)
		}
	}
}

func tryServeDNS(env *caseEnv, protocol, host, port string, handler dns.HandlerFunc) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	serveDNS(env, protocol, host, port, handler)
	return nil
}

func newRR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return rr
}

func recursiveDNSHandler(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	if !r.RecursionDesired {
		m.Rcode = dns.RcodeRefused
	} else {
		m.Answer = append(m.Answer, newRR("example.com. 3600 IN A 127.0.0.1"), newRR("example.com. 3600 IN A 127.0.0.2"))
	}
	w.WriteMsg(m)
}

func authoritativeDNSHandler(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	if r.Question[0].Qtype == dns.TypeSOA {
		m.Answer = append(m.Answer, newRR("example.com. 3600 IN SOA ns.example.com. noc.example.com. 1000 7200 3600 1209600 3600"))
	} else if r.Question[0].Qclass == dns.ClassCHAOS && r.Question[0].Qtype == dns.TypeTXT {
		m.Answer = append(m.Answer, newRR("example.com. 3600 CH TXT \"goCHAOS\""))
	} else {
		m.Answer = append(m.Answer, newRR("example.com. 3600 IN A 127.0.0.1"))
	}
	m.Ns = append(m.Ns, newRR("example.com. 7200 IN NS ns1.isp.net."), newRR("example.com. 7200 IN NS ns2.isp.net."))
	m.Extra = append(m.Extra, newRR("ns1.isp.net. 7200 IN A 127.0.0.1"), newRR("ns1.isp.net. 7200 IN AAAA ::1"),
		newRR("ns2.isp.net. 7200 IN A 127.0.0.2"))
	w.WriteMsg(m)
}

var dnsCounts = []string{"probe_dns_answer_rrs", "probe_dns_authority_rrs", "probe_dns_additional_rrs", "probe_dns_query_succeeded"}

// addDNSTable adds one case per row and protocol, as the upstream loop runs them.
func addDNSTable(test string, handler dns.HandlerFunc, rows []dnsProbe, metrics func(p dnsProbe) []string) {
	for _, protocol := range []string{"udp", "tcp"} {
		for i, row := range rows {
			row.transport = protocol
			protocol := protocol
			add(tcase{
				name:    fmt.Sprintf("dns/%s/%s/%d", test, protocol, i),
				module:  row.module(),
				metrics: metrics(row),
				setup: func(env *caseEnv) string {
					return net.JoinHostPort("127.0.0.1", serveDNS(env, protocol, "127.0.0.1", "0", handler))
				},
			})
		}
	}
}

func init() {
	ip4 := func(p dnsProbe) dnsProbe { p.ipProtocol, p.fallback = "ip4", true; return p }
	counts := func(dnsProbe) []string { return dnsCounts }

	addDNSTable("TestRecursiveDNSResponse", recursiveDNSHandler, []dnsProbe{
		ip4(dnsProbe{recursion: true}),
		ip4(dnsProbe{recursion: true, rcodes: []string{"SERVFAIL", "NXDOMAIN"}}),
		ip4(dnsProbe{recursion: true, answer: rrValidator{matches: []string{".*7200.*"}, notMatches: []string{".*3600.*"}}}),
		ip4(dnsProbe{recursion: true, authority: rrValidator{matches: []string{".*7200.*"}}}),
		ip4(dnsProbe{recursion: true, additional: rrValidator{notMatches: []string{".*3600.*"}}}),
		ip4(dnsProbe{recursion: false}),
	}, counts)

	addDNSTable("TestAuthoritativeDNSResponse", authoritativeDNSHandler, []dnsProbe{
		ip4(dnsProbe{}),
		ip4(dnsProbe{queryType: "SOA"}),
		ip4(dnsProbe{queryClass: "CH", queryType: "TXT", answer: rrValidator{matches: []string{".*IN.*"}, notMatches: []string{".*CH.*"}}}),
		ip4(dnsProbe{rcodes: []string{"SERVFAIL", "NXDOMAIN"}}),
		ip4(dnsProbe{answer: rrValidator{matches: []string{".*3600.*"}, notMatches: []string{".*3600.*"}}}),
		ip4(dnsProbe{answer: rrValidator{matches: []string{".*7200.*"}, notMatches: []string{".*7200.*"}}}),
		ip4(dnsProbe{authority: rrValidator{notMatches: []string{"ns.*.isp.net"}}}),
		ip4(dnsProbe{additional: rrValidator{notMatches: []string{"^ns.*.isp"}}}),
		ip4(dnsProbe{additional: rrValidator{matches: []string{"^ns.*.isp"}}}),
		ip4(dnsProbe{additional: rrValidator{allMatch: []string{".*127.0.0.*"}}}),
		ip4(dnsProbe{additional: rrValidator{noneMatches: []string{".*127.0.0.3.*"}}}),
	}, func(p dnsProbe) []string {
		if p.queryType == "SOA" {
			return append(append([]string{}, dnsCounts...), "probe_dns_serial")
		}
		return dnsCounts
	})

	// dns.HandleFailed answers SERVFAIL to everything. The invalid query type is refused when
	// blackbox_exporter reads the module file (upstream calls ProbeDNS directly, which fails
	// before the query).
	addDNSTable("TestServfailDNSResponse", dns.HandleFailed, []dnsProbe{
		ip4(dnsProbe{}),
		ip4(dnsProbe{rcodes: []string{"SERVFAIL", "NXDOMAIN"}}),
		ip4(dnsProbe{queryType: "NOT_A_VALID_QUERY_TYPE"}),
		ip4(dnsProbe{rcodes: []string{"NOT_A_VALID_RCODE"}}),
	}, counts)

	// TestDNSProtocol: the server on both families of localhost, the family each module
	// prefers (without the fallback: the struct literals leave it false) is the one queried.
	for _, protocol := range []string{"udp", "tcp"} {
		protocol := protocol
		for _, row := range []struct {
			name string
			p    dnsProbe
		}{
			{"ip6", dnsProbe{transport: protocol, ipProtocol: "ip6", recursion: true}},
			{"ip4", dnsProbe{transport: protocol, ipProtocol: "ip4", recursion: true}},
			{"none", dnsProbe{transport: protocol, recursion: true}},
			// No transport: UDP, so a TCP-only server fails it.
			{"no-protocol", dnsProbe{recursion: true}},
		} {
			add(tcase{
				name:    fmt.Sprintf("dns/TestDNSProtocol/%s/%s", protocol, row.name),
				module:  row.p.module(),
				metrics: []string{"probe_ip_protocol"},
				setup: func(env *caseEnv) string {
					return serveDNSBoth(env, protocol, recursiveDNSHandler)
				},
			})
		}
	}

	add(tcase{
		name:   "dns/TestDNSMetrics",
		module: dnsProbe{ipProtocol: "ip4", fallback: true, recursion: true}.module(),
		metrics: []string{"probe_dns_lookup_time_seconds{}", "probe_dns_duration_seconds{phase}", "probe_dns_answer_rrs{}",
			"probe_dns_authority_rrs{}", "probe_dns_additional_rrs{}", "probe_dns_query_succeeded{}"},
		setup: func(env *caseEnv) string {
			return serveDNSBoth(env, "udp", recursiveDNSHandler)
		},
	})
}
