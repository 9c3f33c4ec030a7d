//! The probe against a real authoritative server: NSD (Debian's `nsd`, installed by
//! ci/dns-server.sh) serving zones this file writes, on a loopback port.

mod support;

use std::time::Duration;

use prober_core::{ProbeResult, Reason};
use prober_dns::validate::patterns;
use prober_dns::{DnsSpec, Transport};
use support::{BIG_TXT_RECORDS, Nsd, run};

const TIMEOUT: Duration = Duration::from_secs(5);

fn spec(nsd: &Nsd, name: &str, qtype: &str) -> DnsSpec {
    DnsSpec::new(nsd.addr, name).unwrap().with_type_name(qtype).unwrap()
}

/// `spec` with the answer required to hold a record whose whole text is `line`.
fn expecting(mut s: DnsSpec, line: &str) -> DnsSpec {
    let re = format!("^{}$", regex_escape(line));
    s.validate_answer.fail_if_none_matches = patterns(&[re]).unwrap();
    s
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[test]
fn each_record_type_answers_noerror_with_miekg_text() {
    let nsd = Nsd::start();
    let cases = [
        ("a.probe.test", "A", "a.probe.test.\t3600\tIN\tA\t192.0.2.1"),
        ("a.probe.test", "AAAA", "a.probe.test.\t3600\tIN\tAAAA\t2001:db8::1"),
        ("alias.probe.test", "CNAME", "alias.probe.test.\t3600\tIN\tCNAME\ta.probe.test."),
        ("probe.test", "MX", "probe.test.\t3600\tIN\tMX\t10 mail.probe.test."),
        ("probe.test", "NS", "probe.test.\t3600\tIN\tNS\tns1.probe.test."),
        ("ptr.probe.test", "PTR", "ptr.probe.test.\t3600\tIN\tPTR\ta.probe.test."),
        (
            "probe.test",
            "SOA",
            "probe.test.\t3600\tIN\tSOA\tns1.probe.test. hostmaster.probe.test. 2026112901 7200 3600 1209600 300",
        ),
        (
            "_dns._udp.probe.test",
            "SRV",
            "_dns._udp.probe.test.\t3600\tIN\tSRV\t0 5 53 ns1.probe.test.",
        ),
        (
            "txt.probe.test",
            "TXT",
            "txt.probe.test.\t3600\tIN\tTXT\t\"v=spf1 -all\" \"say \\\"hi\\\"\"",
        ),
        ("probe.test", "CAA", "probe.test.\t3600\tIN\tCAA\t0 issue \"ca.example.net\""),
    ];
    for (name, qtype, line) in cases {
        let (o, facts) = run(expecting(spec(&nsd, name, qtype), line), TIMEOUT);
        assert_eq!(o.result, ProbeResult::Success, "{name} {qtype}: {}", o.message);
        assert!(facts.query_succeeded && facts.answer_rrs >= 1, "{name} {qtype}: {facts:?}");
        // The answer section is the outcome's output, one record a line, as the checks saw it.
        let output = o.output_lossy();
        assert_eq!(output.lines().count(), facts.answer_rrs as usize, "{output}");
        assert!(output.lines().any(|l| l == line) && output.ends_with('\n'), "{output:?}");
        assert_eq!((facts.rcode, facts.truncated, facts.ignored), (Some(0), false, 0));
        if qtype == "SOA" {
            assert_eq!(facts.serial, Some(2026112901));
        } else {
            assert_eq!(facts.serial, None);
        }
    }
    // ANY: whatever NSD answers with, the answer is NOERROR and holds the name's records.
    let (o, facts) = run(spec(&nsd, "a.probe.test", "ANY"), TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert!(facts.answer_rrs >= 1, "{facts:?}");
}

#[test]
fn a_record_that_matches_a_fail_regexp_fails_the_probe() {
    let nsd = Nsd::start();
    let mut s = spec(&nsd, "a.probe.test", "A");
    s.validate_answer.fail_if_matches = patterns(&[r"192\.0\.2\.1$"]).unwrap();
    let (o, facts) = run(s, TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body), "{}", o.message);
    assert!(o.message.contains("answer RRs: at least one RR matched"), "{}", o.message);
    assert!(facts.query_succeeded);
    // The authority section of an authoritative answer: NSD puts the NS set there.
    let mut s = spec(&nsd, "a.probe.test", "A");
    s.validate_authority.fail_if_not_matches = patterns(&["\tNS\t"]).unwrap();
    let (o, facts) = run(s, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{} {facts:?}", o.message);
}

#[test]
fn nxdomain_refused_and_servfail_are_failures_unless_valid() {
    let nsd = Nsd::start();
    for (name, rcode, code) in [
        ("nothing.probe.test", "NXDOMAIN", 3),
        ("elsewhere.example", "REFUSED", 5),
        ("broken.test", "SERVFAIL", 2),
    ] {
        let (o, facts) = run(spec(&nsd, name, "A"), TIMEOUT);
        assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status), "{name}");
        assert_eq!(o.message, format!("rcode {rcode} is not one of the valid rcodes [NOERROR]"));
        assert!(facts.query_succeeded, "an answer came: {facts:?}");
        assert_eq!(facts.rcode, Some(code));
        let s = spec(&nsd, name, "A").with_valid_rcodes(&[rcode]).unwrap();
        let (o, _) = run(s, TIMEOUT);
        assert_eq!(o.result, ProbeResult::Success, "{name}: {}", o.message);
    }
    // NXDOMAIN's authority section carries the zone's SOA.
    let mut s = spec(&nsd, "nothing.probe.test", "A").with_valid_rcodes(&["NXDOMAIN"]).unwrap();
    s.validate_authority.fail_if_none_matches =
        patterns(&["\tSOA\tns1\\.probe\\.test\\. "]).unwrap();
    let (o, facts) = run(s, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{} {facts:?}", o.message);
    assert_eq!((facts.answer_rrs, facts.authority_rrs), (0, 1));
}

#[test]
fn tcp_answers_as_udp_does() {
    let nsd = Nsd::start();
    let mut s = expecting(spec(&nsd, "a.probe.test", "A"), "a.probe.test.\t3600\tIN\tA\t192.0.2.1");
    s.transport = Transport::Tcp;
    let (o, facts) = run(s, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert!(o.timings.connect.is_some());
    assert_eq!(facts.answer_rrs, 1);
    // The whole TXT set, larger than 512 bytes, over TCP.
    let mut s = spec(&nsd, "big.probe.test", "TXT");
    s.transport = Transport::Tcp;
    let (o, facts) = run(s, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!((facts.answer_rrs as usize, facts.truncated), (BIG_TXT_RECORDS, false));
}

#[test]
fn a_truncated_udp_answer_is_reported_and_retried_over_tcp_on_request() {
    let nsd = Nsd::start();
    // No EDNS0: NSD truncates at 512 bytes and sets TC.
    let (o, facts) = run(spec(&nsd, "big.probe.test", "TXT"), TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert!(facts.truncated && !facts.retried_over_tcp, "{facts:?}");
    assert!((facts.answer_rrs as usize) < BIG_TXT_RECORDS, "{facts:?}");

    let mut s = spec(&nsd, "big.probe.test", "TXT");
    s.tcp_on_truncation = true;
    let (o, facts) = run(s, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert!(facts.truncated && facts.retried_over_tcp, "{facts:?}");
    assert_eq!(facts.answer_rrs as usize, BIG_TXT_RECORDS);

    // EDNS0 with a buffer large enough: no truncation at all. The additional section holds
    // the glue of the NS set in the authority section and the OPT record, both counted.
    let mut s = spec(&nsd, "big.probe.test", "TXT");
    s.edns_udp_size = Some(4096);
    s.validate_additional.fail_if_none_matches =
        patterns(&["^\n;; OPT PSEUDOSECTION:\n; EDNS: version 0; flags:; udp: "]).unwrap();
    let (o, facts) = run(s, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{} {facts:?}", o.message);
    assert!(!facts.truncated, "{facts:?}");
    assert_eq!((facts.answer_rrs as usize, facts.additional_rrs), (BIG_TXT_RECORDS, 2));
}

#[test]
fn a_server_by_name_is_resolved_and_the_allow_list_applies() {
    use prober_core::{AddressFilter, IpFamily};
    use std::sync::Arc;

    let nsd = Nsd::start();
    let port = nsd.addr.port();
    let mut s = DnsSpec::with_host("localhost", port, "a.probe.test").unwrap();
    s.ip_family = IpFamily::V4; // NSD listens on 127.0.0.1 only
    let (o, facts) = run(s.clone(), TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!(o.peer, Some(nsd.addr));
    assert!(o.timings.resolve.is_some(), "a lookup was made");
    assert_eq!(facts.answer_rrs, 1);

    // Admitted: loopback networks on this port.
    let allow = |nets: &[&str], ports: &[String]| {
        Some(Arc::new(AddressFilter::parse::<&str, _, _>(&["*"], nets, ports).unwrap()))
    };
    s.address_filter = allow(&["127.0.0.0/8"], &[port.to_string()]);
    let (o, _) = run(s.clone(), TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    // Refused by network, then by port: nothing is sent.
    for (nets, ports) in [(["10.0.0.0/8"], port.to_string()), (["127.0.0.0/8"], "53".to_string())] {
        s.address_filter = allow(&nets, &[ports]);
        let (o, facts) = run(s.clone(), TIMEOUT);
        assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Denied), "{}", o.message);
        assert!(o.message.contains("not allowed"), "{}", o.message);
        assert!(!facts.query_succeeded);
    }
    // An address literal of the other family than the one asked for.
    let mut s = spec(&nsd, "a.probe.test", "A");
    s.ip_family = IpFamily::V6;
    let (o, _) = run(s, TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Dns), "{}", o.message);
}
