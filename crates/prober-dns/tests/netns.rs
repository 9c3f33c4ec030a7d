//! DNS probes inside a network namespace (`DnsSpec::netns`, `ProbeSpec::set_netns`): NSD runs
//! on 127.0.0.1 inside a namespace the test makes, which this process's own loopback does not
//! reach; the probe's socket, made there, does, over UDP, TCP and TLS. Making namespaces needs
//! root and iproute2 (CI runs as root): without them the test fails, saying so.

mod support;

use std::time::Duration;

use prober_core::{NetNs, ProbeResult, Reason};
use prober_dns::{DnsSpec, Transport};
use prober_testkit::netns::TestNetns;
use support::{nsd_with_dot_in, run};

const TIMEOUT: Duration = Duration::from_secs(5);

#[test]
fn udp_tcp_and_tls_queries_reach_a_server_inside_the_namespace() {
    let dot = nsd_with_dot_in("dns");

    for transport in [Transport::Udp, Transport::Tcp, Transport::Tls] {
        let addr = if transport == Transport::Tls { dot.tls_addr } else { dot.nsd.addr };
        let mut spec = DnsSpec::new(addr, "probe.test").unwrap().with_type_name("SOA").unwrap();
        spec.transport = transport;
        spec.tls = (transport == Transport::Tls).then(|| dot.tls.clone());
        spec.netns = Some(dot.netns.clone());
        let (o, facts) = run(spec, TIMEOUT);
        assert_eq!(o.result, ProbeResult::Success, "{transport:?}: {}", o.message);
        assert_eq!(facts.serial, Some(2026112901), "{transport:?}: {facts:?}");
    }

    // The same query from this process's namespace finds nobody on that port.
    let spec = DnsSpec::new(dot.nsd.addr, "probe.test").unwrap().with_type_name("SOA").unwrap();
    let (o, facts) = run(spec, TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{}", o.message);
    assert!(!facts.query_succeeded);
}

#[test]
fn a_namespace_that_is_gone_is_unknown_naming_it() {
    let ns = TestNetns::new("dns-gone");
    let netns = NetNs::new(ns.path()).unwrap();
    drop(ns);
    for transport in [Transport::Udp, Transport::Tcp] {
        let mut spec = DnsSpec::new(([127, 0, 0, 1], 53).into(), "probe.test").unwrap();
        spec.transport = transport;
        spec.netns = Some(netns.clone());
        let (o, _) = run(spec, TIMEOUT);
        assert_eq!(
            (o.result, o.reason),
            (ProbeResult::Unknown, Reason::Namespace),
            "{}",
            o.message
        );
        assert!(o.message.contains("/run/netns/prober-dns-gone"), "{transport:?}: {}", o.message);
    }
}
