//! ICMP echo probes through the engine (issue 36): a worker pinging 127.0.0.1 and ::1 reports
//! Success each period; the one-shot `check` too; the allow-list refuses an address it does
//! not admit before any packet is sent. Raw sockets need root (CI runs as root), unprivileged
//! ones a `net.ipv4.ping_group_range` that admits us: whichever the host allows is used, and
//! a host that allows neither fails these tests with the message saying so.

mod common;

use std::sync::Arc;

use common::*;
use prober_core::{AddressFilter, ProbeResult, ProbeSpec, Reason, Role};
use prober_engine::{Event, check};

fn ping(host: &str) -> ProbeSpec {
    ProbeSpec::icmp(host).unwrap().with_timeout(ms(2000)).unwrap()
}

#[test]
fn workers_ping_both_loopbacks_every_period() {
    let mut e = engine();
    let v4 = e.add_target();
    e.set_probe(v4, Role::Readiness, ping("127.0.0.1"), schedule(50, 1, 1)).unwrap();
    let v6 = e.add_target();
    e.set_probe(v6, Role::Readiness, ping("::1"), schedule(50, 1, 1)).unwrap();
    let mut events = Vec::new();
    run_until(&mut e, &mut events, |ev| {
        runs(ev, v4, Role::Readiness) >= 3 && runs(ev, v6, Role::Readiness) >= 3
    });
    for ev in &events {
        if let Event::Run { outcome, .. } = ev {
            assert_eq!(outcome.result, ProbeResult::Success, "{outcome:?}");
            assert!(outcome.timings.first_byte.is_some(), "the round trip: {outcome:?}");
            let facts = outcome.icmp.as_deref().expect("an ICMP run's facts");
            assert_eq!((facts.stats.sent, facts.stats.received), (1, 1), "{facts:?}");
            assert!(facts.stats.first_rtt.is_some() && facts.stats.reply_hop_limit.is_some());
        }
    }
}

#[test]
fn check_pings_and_the_allow_list_refuses_before_sending() {
    let o = check(&ping("127.0.0.1"));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    let mut spec = ping("::1");
    let filter = AddressFilter::parse(&[] as &[&str], &["127.0.0.0/8"], &[] as &[&str]).unwrap();
    spec.set_address_filter(Some(Arc::new(filter))).unwrap();
    let o = check(&spec);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Denied), "{o:?}");
    assert!(o.message.contains("::1 is not in an allowed network"), "{o:?}");
    // Port ranges do not apply: an echo has no port.
    let mut spec = ping("127.0.0.1");
    let filter = AddressFilter::parse(&[] as &[&str], &["127.0.0.0/8"], &["80"]).unwrap();
    spec.set_address_filter(Some(Arc::new(filter))).unwrap();
    assert_eq!(check(&spec).result, ProbeResult::Success);
}
