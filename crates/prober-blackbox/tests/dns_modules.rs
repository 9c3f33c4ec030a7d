//! `prober: dns` modules (issue 36) against a real DNS server: Debian's NSD on a loopback port
//! with the zone prober-dns's tests write (their support module, shared), each probe through
//! the exporter's `/probe` and judged by the lines a scrape reads.

use std::path::Path;

use prober_blackbox::{Exporter, Modules, Request, Response};

mod common;
use common::blackbox_module_dir;

#[path = "../../prober-dns/tests/support/mod.rs"]
mod support;

use support::Nsd;

/// One NSD at a time: the support module names its directory after the process and a port
/// that was free, which two servers started at once in one process can share (and the first
/// to stop removes the other's files).
static ONE_NSD: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn nsd() -> (std::sync::MutexGuard<'static, ()>, Nsd) {
    let guard = ONE_NSD.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    (guard, Nsd::start())
}

fn nsd_tls(cert: &prober_testkit::tls::Issued) -> (std::sync::MutexGuard<'static, ()>, Nsd) {
    let guard = ONE_NSD.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    (guard, Nsd::start_tls(cert))
}

fn exporter(yaml: &str) -> Exporter {
    let modules = Modules::parse(yaml, Path::new(".")).unwrap_or_else(|e| panic!("refused: {e}"));
    Exporter::start(modules).unwrap()
}

fn get(e: &Exporter, query: &str) -> Response {
    e.handle(&Request { path: "/probe", query, headers: &[] })
}

/// The value of the sample `name` (with its labels, as written) in an exposition.
fn sample(body: &str, name: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')).map(str::to_string))
}

/// The metric names of an exposition, in order.
fn names(body: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for l in body.lines().filter(|l| !l.starts_with('#')) {
        let name = l.split(['{', ' ']).next().unwrap_or_default();
        if out.last() != Some(&name) {
            out.push(name);
        }
    }
    out
}

const FILE: &str = r#"
modules:
  soa:
    prober: dns
    dns:
      query_name: probe.test
      query_type: SOA
      preferred_ip_protocol: ip4
  a_tcp:
    prober: dns
    dns:
      transport_protocol: tcp
      preferred_ip_protocol: ip4
      query_name: a.probe.test
      query_type: A
      validate_answer_rrs:
        fail_if_not_matches_regexp: ["a.probe.test.\t3600\tIN\tA\t192.0.2.1"]
  any_default:
    prober: dns
    dns:
      query_name: a.probe.test
  mx_wrong:
    prober: dns
    dns:
      preferred_ip_protocol: ip4
      query_name: probe.test
      query_type: MX
      validate_answer_rrs:
        fail_if_none_matches_regexp: ["elsewhere"]
  nxdomain_ok:
    prober: dns
    dns:
      preferred_ip_protocol: ip4
      query_name: missing.probe.test
      query_type: A
      valid_rcodes: [NXDOMAIN]
      validate_authority_rrs:
        fail_if_none_matches_regexp: ["IN\tSOA"]
  servfail:
    prober: dns
    dns:
      preferred_ip_protocol: ip4
      query_name: broken.test
      query_type: A
  unknown_rcode:
    prober: dns
    dns:
      preferred_ip_protocol: ip4
      query_name: a.probe.test
      query_type: A
      valid_rcodes: [NOERROR, NOT_A_VALID_RCODE]
"#;

/// blackbox_exporter's dns metrics, named and ordered as its registry writes them, with the
/// values NSD's answers give: an SOA query's serial, section counts, TCP, validation, rcodes.
#[test]
fn dns_modules_probe_a_real_server() {
    let (_one, nsd) = nsd();
    let e = exporter(FILE);
    let target = nsd.addr.to_string();

    let r = get(&e, &format!("module=soa&target={target}"));
    assert_eq!(r.status, 200);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_serial").as_deref(), Some("2026112901"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_answer_rrs").as_deref(), Some("1"));
    assert_eq!(sample(&r.body, "probe_dns_query_succeeded").as_deref(), Some("1"));
    assert_eq!(sample(&r.body, "probe_ip_protocol").as_deref(), Some("4"));
    // ipHash of 127.0.0.1, as blackbox_exporter computes it.
    assert_eq!(sample(&r.body, "probe_ip_addr_hash").as_deref(), Some("3668918509"));
    assert_eq!(
        names(&r.body),
        [
            "probe_dns_additional_rrs",
            "probe_dns_answer_rrs",
            "probe_dns_authority_rrs",
            "probe_dns_duration_seconds",
            "probe_dns_lookup_time_seconds",
            "probe_dns_query_succeeded",
            "probe_dns_serial",
            "probe_duration_seconds",
            "probe_ip_addr_hash",
            "probe_ip_protocol",
            "probe_success",
        ],
        "{}",
        r.body
    );
    let phases: Vec<&str> =
        r.body.lines().filter(|l| l.starts_with("probe_dns_duration_seconds{")).collect();
    assert_eq!(phases.len(), 3, "{}", r.body);
    for (line, phase) in phases.iter().zip(["connect", "request", "resolve"]) {
        assert!(line.starts_with(&format!("probe_dns_duration_seconds{{phase=\"{phase}\"}} ")));
    }

    // Over TCP, an answer that matches the record as miekg/dns prints it.
    let r = get(&e, &format!("module=a_tcp&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_answer_rrs").as_deref(), Some("1"));
    assert_eq!(sample(&r.body, "probe_dns_serial"), None, "only for SOA queries");

    // The default type is ANY (blackbox_exporter's), and the default family ip6 falls back to
    // the server's IPv4 address. NSD answers ANY with one of the name's record sets (RFC 8482).
    let r = get(&e, &format!("module=any_default&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_answer_rrs").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_ip_protocol").as_deref(), Some("4"));

    // A validation that fails: the query succeeded, the probe did not.
    let r = get(&e, &format!("module=mx_wrong&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_query_succeeded").as_deref(), Some("1"));
    assert_eq!(sample(&r.body, "probe_dns_answer_rrs").as_deref(), Some("1"));

    // NXDOMAIN passes when listed, the authority's SOA checked.
    let r = get(&e, &format!("module=nxdomain_ok&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_answer_rrs").as_deref(), Some("0"));
    assert_eq!(sample(&r.body, "probe_dns_authority_rrs").as_deref(), Some("1"));

    // SERVFAIL (a zone whose file is missing) fails on the default NOERROR.
    let r = get(&e, &format!("module=servfail&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_query_succeeded").as_deref(), Some("1"));

    // A name miekg/dns does not know among valid_rcodes fails each answered probe, as
    // blackbox_exporter's validRcode does; the answer's gauges stand.
    let r = get(&e, &format!("module=unknown_rcode&target={target}&debug=true"));
    assert!(r.body.contains("Invalid rcode \"NOT_A_VALID_RCODE\""), "{}", r.body);
    let r = get(&e, &format!("module=unknown_rcode&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_answer_rrs").as_deref(), Some("1"));
}

/// A server that does not answer: the query fails, its gauges are registered at 0, the
/// resolver's are set (the address was chosen). A target without a port is the server on 53.
#[test]
fn an_unanswered_query_fails_with_blackbox_exporters_gauges() {
    let e = exporter(
        "modules:\n  a:\n    prober: dns\n    timeout: 1s\n    dns: {query_name: a.probe.test, preferred_ip_protocol: ip4}\n",
    );
    // A UDP port with nothing behind it: ICMP port unreachable, or silence until the timeout.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let target = silent.local_addr().unwrap().to_string();
    let r = get(&e, &format!("module=a&target={target}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_query_succeeded").as_deref(), Some("0"));
    assert_eq!(sample(&r.body, "probe_dns_answer_rrs").as_deref(), Some("0"));
    assert_eq!(sample(&r.body, "probe_ip_protocol").as_deref(), Some("4"));
    // A port that is no number: given up before any query.
    let r = get(&e, "module=a&target=127.0.0.1:dns");
    assert_eq!(r.status, 200);
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_query_succeeded").as_deref(), Some("0"), "{}", r.body);
}

/// What a dns module cannot be is refused at start, naming the module and the field.
#[test]
fn bad_dns_modules_are_refused_at_start() {
    for (dns, why) in [
        ("{}", "dns.query_name: query name must be set for DNS module"),
        ("{query_name: x, query_type: NOT_A_TYPE}", "query type 'NOT_A_TYPE' is not valid"),
        ("{query_name: x, query_class: XX}", "query class 'XX' is not valid"),
        ("{query_name: x, transport_protocol: sctp}", "dns.transport_protocol: \"sctp\""),
        ("{query_name: x, dns_over_tls: true}", "dns.dns_over_tls: needs transport_protocol: tcp"),
        (
            "{query_name: x, dns_over_tls: true, transport_protocol: tcp, tls_config: {cert_file: c}}",
            "dns.tls_config.key_file: missing (cert_file is set)",
        ),
        (
            "{query_name: x, validate_answer_rrs: {fail_if_matches_regexp: ['(']}}",
            "dns.validate_answer_rrs.fail_if_matches_regexp",
        ),
        ("{query_name: x, preferred_ip_protocol: ipv4}", "dns.preferred_ip_protocol"),
        ("{query_name: x, no_such_field: 1}", "unknown field `no_such_field`"),
    ] {
        let file = format!("modules:\n  d:\n    prober: dns\n    dns: {dns}\n");
        let err = Modules::parse(&file, Path::new(".")).unwrap_err();
        assert!(err.contains(why), "{dns}: {err}");
    }
    // `tls_config` is read (blackbox_exporter's field) and, without DNS over TLS, unused.
    let ok = "modules:\n  d:\n    prober: dns\n    dns: {query_name: x, dns_over_tls: false, tls_config: {insecure_skip_verify: true}}\n";
    assert!(Modules::parse(ok, Path::new(".")).is_ok());
}

/// blackbox_exporter v0.28.0's own module files (from the Go module cache, as tests/serve.rs
/// reads v0.25.0's): the dns modules of its `example.yml` and of its `config/testdata/
/// blackbox-good.yml` load and probe a real server. Their names are not NSD's zone, so the
/// server's answer is REFUSED: the query succeeded, the probe failed on the rcode.
#[test]
fn blackbox_exporters_own_dns_modules_load_and_probe() {
    let (_one, nsd) = nsd();
    let data = blackbox_module_dir("v0.28.0");
    let mut probed = Vec::new();
    for file in ["example.yml", "config/testdata/blackbox-good.yml"] {
        let text = std::fs::read_to_string(data.join(file)).unwrap();
        let doc: serde_norway::Value = serde_norway::from_str(&text).unwrap();
        let mut dns = serde_norway::Mapping::new();
        for (name, module) in doc["modules"].as_mapping().unwrap() {
            if module["prober"].as_str() == Some("dns") {
                dns.insert(name.clone(), module.clone());
            }
        }
        let mut only = serde_norway::Mapping::new();
        only.insert("modules".into(), dns.clone().into());
        let e = exporter(&serde_norway::to_string(&only).unwrap());
        for name in dns.keys() {
            let name = name.as_str().unwrap();
            let r = get(&e, &format!("module={name}&target={}", nsd.addr));
            assert_eq!(
                sample(&r.body, "probe_dns_query_succeeded").as_deref(),
                Some("1"),
                "{file} {name}: {}",
                r.body
            );
            assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{name}");
            probed.push(name.to_string());
        }
    }
    probed.sort();
    assert_eq!(probed, ["dns_soa", "dns_tcp_example", "dns_test", "dns_udp_example"]);
}

/// A dns module's `allow:` list is checked on the server the target names (its name, its
/// port, its address), before any query: a refused server is a 403 and gets no packet.
#[test]
fn the_allow_list_applies_to_the_dns_server() {
    let e = exporter(
        "modules:
  lan:
    prober: dns
    dns: {query_name: a.probe.test, preferred_ip_protocol: ip4}
    allow: {networks: ['10.0.0.0/8']}
  loopback:
    prober: dns
    dns: {query_name: a.probe.test, preferred_ip_protocol: ip4}
    allow: {networks: ['127.0.0.0/8'], ports: ['53']}
",
    );
    let server = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    server.set_nonblocking(true).unwrap();
    let target = server.local_addr().unwrap().to_string();
    let r = get(&e, &format!("module=lan&target={target}"));
    assert_eq!(r.status, 403, "{}", r.body);
    // The port is outside the list too.
    let r = get(&e, &format!("module=loopback&target={target}"));
    assert_eq!(r.status, 403, "{}", r.body);
    // A name that resolves to a refused address is refused once resolved, before the query.
    let r =
        get(&e, &format!("module=lan&target=localhost:{}", server.local_addr().unwrap().port()));
    assert_eq!(r.status, 403, "{}", r.body);
    let mut buf = [0u8; 512];
    assert!(server.recv_from(&mut buf).is_err(), "a refused server got a query");
}

/// `dns_over_tls: true` (with `transport_protocol: tcp`, as blackbox_exporter requires) queries
/// NSD's DNS-over-TLS port, the chain verified with `tls_config.ca_file` and the name with
/// `tls_config.server_name`; a CA that did not sign the server's certificate fails the probe
/// before any query.
#[test]
fn dns_over_tls_modules_verify_the_server() {
    let ca = prober_testkit::tls::TestCa::new("bbdns DoT CA");
    let (_one, nsd) = nsd_tls(&ca.issue(&["ns1.probe.test"]));
    let tls_addr = nsd.tls_addr.expect("NSD's TLS port");
    let dir = std::env::temp_dir().join(format!("prober-blackbox-dot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ca_file, _) = ca.cert().write_files(&dir, "ca");
    let other = prober_testkit::tls::TestCa::new("another CA");
    let (other_file, _) = other.cert().write_files(&dir, "other");
    let module = |name: &str, ca: &Path| {
        format!(
            "  {name}:\n    prober: dns\n    dns:\n      query_name: probe.test\n      \
             query_type: SOA\n      transport_protocol: tcp\n      dns_over_tls: true\n      \
             preferred_ip_protocol: ip4\n      \
             tls_config: {{ca_file: {:?}, server_name: ns1.probe.test}}\n",
            ca.display()
        )
    };
    let e = exporter(&format!(
        "modules:\n{}{}",
        module("dot", &ca_file),
        module("dot_other_ca", &other_file)
    ));
    let r = get(&e, &format!("module=dot&target={tls_addr}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_serial").as_deref(), Some("2026112901"));
    let r = get(&e, &format!("module=dot_other_ca&target={tls_addr}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_dns_query_succeeded").as_deref(), Some("0"));
    let _ = std::fs::remove_dir_all(&dir);
}
