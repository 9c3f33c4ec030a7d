package main

// ICMP cases: blackbox_exporter v0.28.0 has no prober/icmp_test.go, so these are ours: echoes
// to the loopback addresses with each option of its icmp prober, and, in network namespaces
// the harness makes, a router that answers, lets a TTL of 1 expire, refuses (prohibit) and
// drops (blackhole). Compared: probe_success, the address gauges, the reply's hop limit and
// the phases present.

import "strings"

var icmpMetrics = []string{
	"probe_ip_protocol",
	"probe_ip_addr_hash",
	"probe_icmp_reply_hop_limit",
	"probe_icmp_duration_seconds{phase}",
}

func icmpModule(extra string) string {
	m := "prober: icmp\ntimeout: 2s\n"
	if extra != "" {
		m += "icmp:\n"
		for _, line := range strings.Split(extra, "\n") {
			m += "  " + line + "\n"
		}
	}
	return m
}

// icmpLab wires env.netns as the prober's side of a veth pair to a router namespace:
// 10.77.0.1 (the router) answers, 10.78.0.0/24 is routed on (a TTL of 1 expires at the
// router), 10.79.0.0/24 is prohibited (destination unreachable), 10.80.0.0/24 blackholed.
func icmpLab(env *caseEnv) {
	a := env.netns
	r := makeNetns(env, "router")
	ipCmd("-n", a, "link", "add", "a0", "type", "veth", "peer", "name", "r0", "netns", r)
	ipCmd("-n", a, "addr", "add", "10.77.0.2/24", "dev", "a0")
	ipCmd("-n", a, "link", "set", "a0", "up")
	ipCmd("-n", a, "route", "add", "default", "via", "10.77.0.1")
	ipCmd("-n", r, "addr", "add", "10.77.0.1/24", "dev", "r0")
	ipCmd("-n", r, "link", "set", "r0", "up")
	ipCmd("-n", r, "route", "add", "10.78.0.0/24", "via", "10.77.0.3")
	ipCmd("-n", r, "route", "add", "prohibit", "10.79.0.0/24")
	ipCmd("-n", r, "route", "add", "blackhole", "10.80.0.0/24")
	ipCmd("netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1")
}

func init() {
	loopback := []struct{ name, module, target string }{
		{"ping-127.0.0.1", "", "127.0.0.1"},
		{"ping-ipv6-loopback", "", "::1"},
		{"ping-localhost-ip4", "preferred_ip_protocol: ip4", "localhost"},
		{"ping-127.0.0.1-ip6-no-fallback", "ip_protocol_fallback: false", "127.0.0.1"},
		{"ttl-5", "ttl: 5", "127.0.0.1"},
		{"ttl-5-ipv6", "ttl: 5", "::1"},
		{"ttl-0-system-default", "ttl: 0", "127.0.0.1"},
		{"payload-size-1200", "payload_size: 1200", "127.0.0.1"},
		{"payload-size-1200-ipv6", "payload_size: 1200", "::1"},
		{"payload-size-60000", "payload_size: 60000", "127.0.0.1"},
		{"dont-fragment", "dont_fragment: true", "127.0.0.1"},
		{"dont-fragment-payload-9000", "dont_fragment: true\npayload_size: 9000", "127.0.0.1"},
		{"dont-fragment-ipv6", "dont_fragment: true", "::1"},
		{"source-ip-address", "preferred_ip_protocol: ip4\nsource_ip_address: 127.0.0.1", "127.0.0.1"},
		{"source-ip-address-ipv6", "source_ip_address: '::1'", "::1"},
		{"source-ip-address-other-family", "source_ip_address: 127.0.0.1", "::1"},
		{"source-ip-address-not-local", "preferred_ip_protocol: ip4\nsource_ip_address: 192.0.2.1", "127.0.0.1"},
		{"bracketed-target", "", "[::1]"},
		{"unknown-field-refused", "packets: 3", "127.0.0.1"},
		{"ttl-256-refused", "ttl: 256", "127.0.0.1"},
	}
	for _, r := range loopback {
		target := r.target
		add(tcase{
			name:    "icmp/" + r.name,
			module:  icmpModule(r.module),
			setup:   func(env *caseEnv) string { return target },
			metrics: icmpMetrics,
		})
	}
	// Without CAP_NET_RAW (setpriv drops it from the exporters' bounding set), only an
	// unprivileged socket can open, and only when ping_group_range admits the group (root's,
	// 0). blackbox_exporter's IPv4 dont_fragment needs a raw socket; ours does not.
	sockets := []struct {
		name, module, target string
		admitted             bool
	}{
		{"unprivileged-socket", "", "127.0.0.1", true},
		{"unprivileged-socket-ipv6", "", "::1", true},
		{"unprivileged-socket-ttl-payload", "ttl: 5\npayload_size: 1200", "127.0.0.1", true},
		{"unprivileged-socket-dont-fragment", "dont_fragment: true", "127.0.0.1", true},
		{"no-socket-allowed", "", "127.0.0.1", false},
		{"no-socket-allowed-ipv6", "", "::1", false},
	}
	for _, r := range sockets {
		target, admitted := r.target, r.admitted
		add(tcase{
			name:   "icmp/netns/" + r.name,
			module: icmpModule(r.module),
			netns:  true,
			setup: func(env *caseEnv) string {
				groups := "1 0"
				if admitted {
					groups = "0 2147483647"
				}
				ipCmd("netns", "exec", env.netns, "sysctl", "-qw", "net.ipv4.ping_group_range="+groups)
				env.wrap = []string{"setpriv", "--bounding-set=-net_raw", "--inh-caps=-net_raw", "--"}
				return target
			},
			metrics: icmpMetrics,
		})
	}
	routed := []struct{ name, module, target string }{
		{"router-answers", "", "10.77.0.1"},
		{"router-answers-ttl-1", "ttl: 1", "10.77.0.1"},
		{"ttl-1-expires", "ttl: 1", "10.78.0.5"},
		{"prohibited-unreachable", "", "10.79.0.5"},
		{"blackholed-times-out", "", "10.80.0.5"},
		{"payload-1600-fragmented", "payload_size: 1600", "10.77.0.1"},
		{"payload-1600-dont-fragment", "payload_size: 1600\ndont_fragment: true", "10.77.0.1"},
	}
	for _, r := range routed {
		target := r.target
		add(tcase{
			name:   "icmp/netns/" + r.name,
			module: icmpModule(r.module),
			netns:  true,
			setup: func(env *caseEnv) string {
				icmpLab(env)
				return target
			},
			metrics: icmpMetrics,
		})
	}
}
