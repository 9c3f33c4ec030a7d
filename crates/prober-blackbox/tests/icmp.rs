//! `prober: icmp` modules (blackbox_exporter v0.28.0's icmp prober) answering `/probe` with
//! real echoes: to 127.0.0.1 and ::1, and across a router in network namespaces the test makes
//! (a TTL that expires, a prohibited destination, don't-fragment over a smaller MTU). Needs
//! root and iproute2 for the namespaces, as CI has; without them the test fails, saying so.

use std::path::Path;

use prober_blackbox::{Exporter, Modules, Request, Response};
use prober_testkit::netns::TestNetns;

mod common;
use common::blackbox_module_dir;

const MODULES: &str = "modules:
  icmp:
    prober: icmp
    timeout: 5s
  icmp_ttl5:
    prober: icmp
    timeout: 5s
    icmp:
      ttl: 5
  icmp_ttl1:
    prober: icmp
    timeout: 5s
    icmp:
      ttl: 1
  icmp4_big_df:
    prober: icmp
    timeout: 5s
    icmp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
      payload_size: 1600
      dont_fragment: true
  icmp4_big:
    prober: icmp
    timeout: 5s
    icmp:
      preferred_ip_protocol: ip4
      payload_size: 1600
  icmp_source:
    prober: icmp
    timeout: 5s
    icmp:
      source_ip_address: 127.0.0.1
";

fn exporter() -> Exporter {
    let modules = Modules::parse(MODULES, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    Exporter::start(modules).unwrap()
}

fn get(e: &Exporter, module: &str, target: &str) -> Response {
    let query = format!("module={module}&target={target}");
    let r = e.handle(&Request { path: "/probe", query: &query, headers: &[] });
    assert_eq!(r.status, 200, "{module} {target}: {}", r.body);
    r
}

/// The value of the sample `name` (with its labels, as written).
fn sample(body: &str, name: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')).map(str::to_string))
}

fn phase(body: &str, phase: &str) -> f64 {
    let name = format!("probe_icmp_duration_seconds{{phase=\"{phase}\"}}");
    sample(body, &name).unwrap_or_else(|| panic!("no {name}: {body}")).parse().unwrap()
}

/// An answered echo: blackbox_exporter's gauges with its values (the reply's TTL or hop limit
/// 64, Linux's default; the address's hash as its `ipHash`).
#[test]
fn loopback_echoes_answer_with_blackbox_metrics() {
    let e = exporter();
    for (module, target, proto, hash) in [
        ("icmp", "127.0.0.1", "4", "3668918509"),
        ("icmp", "::1", "6", "1751717746"),
        ("icmp_ttl5", "127.0.0.1", "4", "3668918509"),
        ("icmp_ttl5", "::1", "6", "1751717746"),
        ("icmp4_big", "127.0.0.1", "4", "3668918509"),
        ("icmp4_big_df", "127.0.0.1", "4", "3668918509"),
        ("icmp_source", "127.0.0.1", "4", "3668918509"),
    ] {
        let r = get(&e, module, target);
        let b = &r.body;
        assert_eq!(sample(b, "probe_success").as_deref(), Some("1"), "{module} {target}: {b}");
        assert_eq!(sample(b, "probe_ip_protocol").as_deref(), Some(proto), "{b}");
        assert_eq!(sample(b, "probe_ip_addr_hash").as_deref(), Some(hash), "{b}");
        assert_eq!(sample(b, "probe_icmp_reply_hop_limit").as_deref(), Some("64"), "{b}");
        assert!(phase(b, "rtt") > 0.0 && phase(b, "setup") > 0.0, "{b}");
        assert!(b.contains("# TYPE probe_icmp_duration_seconds gauge\n"), "{b}");
        assert!(sample(b, "probe_dns_lookup_time_seconds").is_some(), "{b}");
    }
}

/// blackbox_exporter v0.28.0's own `blackbox.yml` and `example.yml` (from its Go module, as
/// `go mod download` fetches it): their icmp modules, as written there, load and probe
/// 127.0.0.1 and `localhost`.
#[test]
fn blackbox_exporters_own_icmp_modules_load_and_probe() {
    let dir = blackbox_module_dir("v0.28.0");
    let mut probed = Vec::new();
    for file in ["blackbox.yml", "example.yml"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let doc: serde_norway::Value = serde_norway::from_str(&text).unwrap();
        let mut icmp = serde_norway::Mapping::new();
        for (name, module) in doc["modules"].as_mapping().unwrap() {
            if module["prober"].as_str() == Some("icmp") {
                icmp.insert(name.clone(), module.clone());
            }
        }
        let mut only = serde_norway::Mapping::new();
        only.insert("modules".into(), icmp.clone().into());
        let yaml = serde_norway::to_string(&only).unwrap();
        let modules = Modules::parse(&yaml, &dir).unwrap_or_else(|e| panic!("{e}"));
        let e = Exporter::start(modules).unwrap();
        for name in icmp.keys() {
            let name = name.as_str().unwrap();
            for target in ["127.0.0.1", "localhost"] {
                let b = get(&e, name, target).body;
                assert_eq!(
                    sample(&b, "probe_success").as_deref(),
                    Some("1"),
                    "{name} {target}: {b}"
                );
            }
            probed.push(format!("{file}:{name}"));
        }
    }
    assert_eq!(probed, ["blackbox.yml:icmp", "blackbox.yml:icmp_ttl5", "example.yml:icmp_example"]);
}

/// A target blackbox_exporter's resolver finds nothing for (a bracketed address): a failed
/// probe, its gauges at 0, no hop limit.
#[test]
fn an_unresolvable_target_is_a_failed_probe() {
    let e = exporter();
    let b = get(&e, "icmp", "%5B::1%5D").body;
    assert_eq!(sample(&b, "probe_success").as_deref(), Some("0"), "{b}");
    assert_eq!(sample(&b, "probe_ip_protocol").as_deref(), Some("0"), "{b}");
    assert_eq!(phase(&b, "rtt"), 0.0, "{b}");
    assert_eq!(sample(&b, "probe_icmp_reply_hop_limit"), None, "{b}");
}

/// A source address of the other family than an IP-address target: a failed probe (200, its
/// gauges at 0) whose debug output says why, not an internal error.
#[test]
fn a_source_of_the_other_family_fails_the_probe() {
    let e = exporter();
    let b = get(&e, "icmp_source", "::1").body;
    assert_eq!(sample(&b, "probe_success").as_deref(), Some("0"), "{b}");
    assert_eq!(sample(&b, "probe_ip_protocol").as_deref(), Some("0"), "{b}");
    let debug = get(&e, "icmp_source&debug=true", "::1").body;
    assert!(
        debug.contains("source_ip_address 127.0.0.1 is of the other address family"),
        "{debug}"
    );
}

/// The prober's namespace and a router, joined by a veth pair of MTU 1500: the router answers
/// (`10.77.0.1`), routes `10.78.0.0/24` on (so TTL 1 expires there) and prohibits
/// `10.79.0.0/24`.
fn lab() -> (TestNetns, TestNetns) {
    let a = TestNetns::new("bb-icmp-a");
    let r = TestNetns::new("bb-icmp-r");
    a.ip(&["link", "add", "a0", "type", "veth", "peer", "name", "r0", "netns", r.name()]);
    a.ip(&["addr", "add", "10.77.0.2/24", "dev", "a0"]);
    a.ip(&["link", "set", "a0", "up"]);
    a.ip(&["route", "add", "default", "via", "10.77.0.1"]);
    r.ip(&["addr", "add", "10.77.0.1/24", "dev", "r0"]);
    r.ip(&["link", "set", "r0", "up"]);
    r.ip(&["route", "add", "10.78.0.0/24", "via", "10.77.0.3"]);
    r.ip(&["route", "add", "prohibit", "10.79.0.0/24"]);
    r.run_in(|| std::fs::write("/proc/sys/net/ipv4/ip_forward", "1").unwrap());
    (a, r)
}

/// The options reach the wire: TTL 1 expires at the router (a failure, no hop limit, no rtt)
/// where the default TTL is answered; a prohibited destination fails; 1600 bytes with
/// don't-fragment do not pass a 1500-byte link, and without it they do (fragmented).
#[test]
fn options_take_effect_across_a_router() {
    let (a, _router) = lab();
    let results = a.run_in(|| {
        let e = exporter();
        [
            ("icmp", "10.77.0.1"),
            ("icmp_ttl1", "10.77.0.1"),
            ("icmp_ttl1", "10.78.0.5"),
            ("icmp", "10.79.0.5"),
            ("icmp4_big", "10.77.0.1"),
            ("icmp4_big_df", "10.77.0.1"),
        ]
        .map(|(m, t)| (m, t, get(&e, m, t).body))
    });
    for (module, target, b) in &results {
        let success = sample(b, "probe_success").unwrap_or_else(|| panic!("{b}"));
        let want = match (*module, *target) {
            ("icmp_ttl1", "10.78.0.5") | ("icmp", "10.79.0.5") | ("icmp4_big_df", _) => "0",
            _ => "1",
        };
        assert_eq!(success, want, "{module} {target}: {b}");
        if want == "0" {
            assert_eq!(phase(b, "rtt"), 0.0, "{b}");
            assert_eq!(sample(b, "probe_icmp_reply_hop_limit"), None, "{b}");
            // It got as far as choosing the address.
            assert_eq!(sample(b, "probe_ip_protocol").as_deref(), Some("4"), "{b}");
        } else {
            assert_eq!(sample(b, "probe_icmp_reply_hop_limit").as_deref(), Some("64"), "{b}");
        }
    }
}

/// The allow-list: an address outside `allow.networks` is refused (403) before anything is
/// sent, whether the target names it or resolves to it; one inside is pinged.
#[test]
fn the_allow_list_applies_to_the_target_and_its_address() {
    let file = "modules:
  v4_only:
    prober: icmp
    timeout: 5s
    icmp: {preferred_ip_protocol: ip4}
    allow: {networks: ['127.0.0.0/8']}
  v6_only:
    prober: icmp
    timeout: 5s
    icmp: {preferred_ip_protocol: ip4}
    allow: {networks: ['::1/128']}
  named:
    prober: icmp
    timeout: 5s
    icmp: {preferred_ip_protocol: ip4}
    allow: {hosts: ['localhost']}
";
    let modules = Modules::parse(file, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    let e = Exporter::start(modules).unwrap();
    let probe = |module: &str, target: &str| {
        let query = format!("module={module}&target={target}");
        e.handle(&Request { path: "/probe", query: &query, headers: &[] })
    };
    for (module, target) in
        [("v4_only", "127.0.0.1"), ("v4_only", "localhost"), ("named", "localhost")]
    {
        let r = probe(module, target);
        assert_eq!(r.status, 200, "{module} {target}: {}", r.body);
        assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    }
    // By the target's text, then by the address it resolved to (IPv4 preferred: localhost is
    // 127.0.0.1).
    for (module, target) in [("v4_only", "::1"), ("named", "127.0.0.1"), ("v6_only", "localhost")] {
        let r = probe(module, target);
        assert_eq!(r.status, 403, "{module} {target}: {}", r.body);
    }
}
